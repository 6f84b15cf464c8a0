#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: sriov_vfs
short_description: SR-IOV virtual functions of physical functions, and NVIDIA firmware SR-IOV settings
version_added: 0.2.0
description:
  - Makes the number of SR-IOV virtual functions (VFs) of each physical function (PF) match O(pfs), through the PF's
    C(sriov_numvfs) file in sysfs, and sets each VF's MAC address, trust, spoof checking and link state with
    C(ip link set PF vf N ...) where the driver allows it. A count that changes from one non-zero value to another
    goes through 0 (the kernel refuses anything else); the settings are applied again afterwards.
  - Reads the PFs from sysfs and the VF settings from C(ip -j link show PF) first, changes only what differs, and reads
    them back afterwards. Bad input, a PF that does not exist, is not SR-IOV capable or has fewer VFs than asked fail
    before anything is touched, naming the parameter and the allowed values.
  - If a command fails (or cannot start), the PFs do not read back as planned, or the module is asked to stop
    (SIGTERM, SIGHUP, SIGINT; the command under way finishes first), the changes this run made are undone in
    reverse order - VF counts, C(sriov_drivers_autoprobe), VF settings, firmware settings - and the task fails
    saying what failed, what was rolled back and what could not be. VFs that a rollback brings back (after the
    run had removed them) get the driver's defaults, as after any count change.
  - NVIDIA firmware (O(firmware)) - reads C(SRIOV_EN) and C(NUM_OF_VFS) with C(mlxconfig -e q) and plans what the next
    boot needs. The settings are written (C(mlxconfig -y set)) only with O(firmware_apply=true), and take effect after
    a reboot, which the caller does (the P(rdma.fabric.sriov#role) role reboots only when asked).
  - Persistence across reboots and driver reloads is the P(rdma.fabric.sriov#role) role's (a systemd unit per PF).
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - rdma.fabric.sysfs
attributes:
  check_mode:
    support: full
    details: Reads the PFs, the VF settings and the firmware settings, and reports what would change.
  diff_mode:
    support: full
    details: Each PF's VF count and VF settings before and after, and the firmware settings.
  platform:
    platforms: posix
    details: Linux with iproute2 (C(ip)); C(mlxconfig) (NVIDIA MFT) for O(firmware).
options:
  pfs:
    description: The physical functions and what they should have.
    type: list
    elements: dict
    default: []
    suboptions:
      netdev:
        description: The PF's netdev.
        type: str
        required: true
      numvfs:
        description: Number of VFs (0 to the PF's C(sriov_totalvfs)). Required when O(pfs[].state=present).
        type: int
      state:
        description: V(absent) removes every VF of the PF (C(numvfs) 0).
        type: str
        choices: [present, absent]
        default: present
      vfs:
        description:
          - Settings of single VFs; each key left out is left as the driver has it.
          - A list of mappings with the keys below. Anything else (text such as V(0), a single mapping, an entry that
            is not a mapping) is refused before anything runs, naming O(pfs[].vfs) and showing this form.
        type: raw
        default: []
        suboptions:
          index:
            description: VF number (0 to O(pfs[].numvfs) - 1); default its position in the list.
            type: int
          mac:
            description: Unicast MAC address.
            type: str
          trust:
            description: Trusted VF (may change its MAC, use promiscuous modes).
            type: bool
          spoofchk:
            description: Spoof checking of the VF's source MAC.
            type: bool
          link_state:
            description: The VF's link state.
            type: str
            choices: [auto, enable, disable]
  firmware:
    description:
      - NVIDIA devices whose firmware should give O(firmware[].num_vfs) VFs after the next boot (C(SRIOV_EN),
        C(NUM_OF_VFS)).
    type: list
    elements: dict
    default: []
    suboptions:
      device:
        description: PCI address (V(0000:3b:00.0)) or mst device (V(/dev/mst/mt4119_pciconf0)).
        type: str
        required: true
      num_vfs:
        description: VFs the firmware should offer; V(0) turns SR-IOV off.
        type: int
        required: true
  firmware_apply:
    description:
      - Write the planned firmware settings. Without it the plan is only reported (RV(firmware)); the settings need a
        reboot to take effect either way.
    type: bool
    default: false
  pf_link_timeout:
    description:
      - Seconds to wait, before the VFs held back for their settings are probed (bound to their driver), for the PF's
        link to be up - its C(carrier) 1 in sysfs (C(operstate) V(up) only where C(carrier) cannot be read, as
        C(operstate) lags behind a reset). Writing C(sriov_numvfs) resets some PFs (C(igb) - the link goes and comes
        back about two seconds later), and a VF driver that binds in that gap cannot reach the PF (C(igbvf) - "PF
        still in reset state", a random MAC address, no carrier).
      - At most V(3600) (an hour; the boot unit waits as long).
      - When the time runs out the VFs are probed all the same (they may still come up with the PF's link), with a
        warning naming the PF and the seconds waited, and RV(pf_link_waits) says so.
      - A PF that was administratively down before the change (no C(IFF_UP) in its C(flags)) is not waited for (its
        link cannot come up until it is brought up) - a warning says its VFs were probed without it.
      - Nothing is waited for when no VF is probed (VFs that exist and have their driver, check mode). V(0) does not
        wait. A negative or non-whole number is refused, naming this option.
    type: int
    default: 30
seealso:
  - module: rdma.fabric.rdma_device_facts
"""

EXAMPLES = r"""
- name: Two VFs on eth2, the first with a fixed MAC and trusted
  rdma.fabric.sriov_vfs:
    pfs:
      - netdev: eth2
        numvfs: 2
        vfs:
          - {index: 0, mac: "52:54:00:10:00:01", trust: true, spoofchk: false, link_state: auto}

- name: Plan NVIDIA firmware for 8 VFs (applied only with firmware_apply)
  rdma.fabric.sriov_vfs:
    firmware:
      - {device: "0000:3b:00.0", num_vfs: 8}
"""

RETURN = r"""
pfs:
  description: Each PF after the run (in check mode, as read before).
  returned: always
  type: list
  elements: dict
  contains:
    netdev: {description: The PF's netdev., type: str}
    pci_address: {description: The PF's PCI address., type: str}
    driver: {description: The PF's driver., type: str}
    totalvfs: {description: sriov_totalvfs., type: int}
    numvfs: {description: sriov_numvfs., type: int}
    autoprobe: {description: sriov_drivers_autoprobe (1 - VF drivers bind when the VFs appear)., type: int}
    vfs:
      description: The VFs, with their PCI address, driver and netdev (when the VF driver made one).
      type: list
      elements: dict
    settings:
      description: The VF settings C(ip link) shows, by VF number.
      type: dict
firmware:
  description: Per device, the settings read (C(current), the next boot's), the C(changes) planned, and whether they were C(applied).
  returned: always
  type: list
  elements: dict
reboot_required:
  description: Firmware settings were written; they take effect after a reboot.
  returned: always
  type: bool
commands:
  description:
    - The commands run (in check mode, that would run), as argument lists; sysfs writes as C([write, PATH, VALUE]).
    - When new VFs get settings, their drivers bind only afterwards (a VF driver such as C(igbvf) takes its MAC address
      when it binds) - C(sriov_drivers_autoprobe) is 0 meanwhile, and C([probe, DRIVERS_PROBE, PF]) binds the VFs,
      after the wait for the PF's link (O(pf_link_timeout)).
  returned: always
  type: list
  elements: list
rolled_back:
  description: The undo commands that ran, in the order they ran (reverse order of the changes).
  returned: failure, when a change failed
  type: list
  elements: str
rollback_failed:
  description: Undo commands that failed; what they would have restored was left as it was after the failure.
  returned: failure, when a change failed
  type: list
  elements: str
pf_link_waits:
  description: Per probe of a PF's VFs that had VFs without a driver, the wait for the PF's link before it (none in check mode).
  returned: always
  type: list
  elements: dict
  contains:
    netdev: {description: The PF., type: str}
    admin_up: {description: The PF was administratively up before the change (V(null) - its flags could not be read)., type: bool}
    timeout: {description: O(pf_link_timeout)., type: int}
    waited: {description: Seconds waited (V(0) - not waited for; the PF was down or O(pf_link_timeout=0))., type: float}
    link_up: {description: The PF's link was up when its VFs were probed., type: bool}
"""

import json
import time

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.list_options import ListOptionError, list_of_dicts
from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import (
    Changes,
    ReadBackError,
    Step,
    StepFailed,
    StopSignals,
    read_back_step,
    signal_name,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common import sriov as sriov_rules
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import check_sysfs_root
from ansible_collections.rdma.fabric.plugins.module_utils.sriov import pf as sr


def _ip_links(module, ip, netdev):
    rc, out, err = module.run_command([ip, "-j", "-d", "link", "show", "dev", netdev])
    if rc != 0:
        return {}
    try:
        return sr.vf_settings(json.loads(out), netdev)
    except ValueError:
        module.warn("ip -j link show %s printed no JSON: VF settings unknown" % netdev)
        return {}


# pfs[].vfs: a list of mappings with these keys (declared raw, checked by list_of_dicts: a refusal names the option).
VF_OPTIONS = dict(index=dict(type="int"), mac=dict(type="str"), trust=dict(type="bool"),
                  spoofchk=dict(type="bool"), link_state=dict(type="str", choices=list(sriov_rules.LINK_STATES)))
VFS_FORM = "[{index: 0, mac: '52:54:00:10:00:01', trust: true}, {index: 1, link_state: enable}]"

# The module's arguments (also what the rdma.fabric.sriov_pfs filter's output is checked against in its tests,
# with pfs[].vfs through list_of_dicts and VF_OPTIONS as main() checks it).
ARGUMENT_SPEC = dict(
    pfs=dict(type="list", elements="dict", default=[], options=dict(
        netdev=dict(type="str", required=True),
        numvfs=dict(type="int"),
        state=dict(type="str", choices=list(sriov_rules.STATES), default="present"),
        vfs=dict(type="raw", default=[]),
    )),
    firmware=dict(type="list", elements="dict", default=[], options=dict(
        device=dict(type="str", required=True),
        num_vfs=dict(type="int", required=True),
    )),
    firmware_apply=dict(type="bool", default=False),
    pf_link_timeout=dict(type="int", default=30),
    sysfs_path=SYSFS_PATH,
)

# The clock and the sleep of the wait for a PF's link (the unit tests put TEST DOUBLES here: no test sleeps).
CLOCK = time.monotonic
SLEEP = time.sleep


def _write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
        return 0, ""
    except (IOError, OSError) as e:
        return 1, str(e)


def _wait_for_pf(module, sysfs, netdev, admin_up, timeout):
    """Before the VFs of ``netdev`` are probed: the wait for the PF's link (see pf_link_timeout), as a record."""
    record = dict(netdev=netdev, admin_up=admin_up, timeout=timeout, waited=0.0, link_up=None)
    if admin_up is False:
        module.warn("pfs (%s): the PF was administratively down (no IFF_UP in its flags): its VFs were probed without "
                    "waiting for its link; a VF driver such as igbvf needs the PF up (it takes a random MAC address "
                    "otherwise) - bring the PF up in the network configuration" % netdev)
    elif timeout:
        up, waited = sr.wait_for_link(sysfs, netdev, timeout, clock=CLOCK, sleep=SLEEP)
        record.update(waited=round(waited, 1), link_up=up)
        if not up:
            module.warn("pfs (%s): the PF's link was not up after %.1f s (pf_link_timeout %d) since its VF count "
                        "changed; its VFs were probed anyway (they may still come up with the PF's link)"
                        % (netdev, waited, timeout))
        return record
    record["link_up"] = sr.link_is_up(sr.read_link(sysfs, netdev))
    return record


def _run(module, sysfs, argv, before_probe=None):
    """``(rc, error)`` of one command of :func:`sr.pf_commands` (or ``mlxconfig``); ``before_probe(pf)`` runs before
    the VFs of a ``probe`` are bound, when some have no driver."""
    if argv[0] == "write":
        return _write(argv[1], argv[2])
    if argv[0] == "probe":
        unbound = [vf for vf in sr.read_pf(sysfs, argv[2])["vfs"] if vf["driver"] is None]
        if unbound and before_probe:
            before_probe(argv[2])
        for vf in unbound:
            rc, err = _write(argv[1], vf["pci_address"])
            if rc != 0:
                return rc, "%s: %s" % (vf["pci_address"], err)
        return 0, ""
    rc, dummy, err = module.run_command(argv)
    return rc, err


class CommandFailed(Exception):
    """A command of the plan (or of its undo) failed: the message says which and why."""


def _failure_text(failed):
    """The message of a run that failed and was rolled back: what failed, what was undone, what could not be."""
    if failed.interrupted:
        text = "stopped by %s %s" % (signal_name(failed.cause.signum), "after the step under way finished"
                                     if failed.restored or failed.left else "before any change")
    else:
        text = str(failed.cause)
    if failed.restored:
        text += "; rolled back, in reverse order: %s" % "; ".join(s.undo_description for s in failed.restored)
    elif not failed.left:
        text += "; nothing had been changed before it, so nothing was rolled back"
    if failed.left:
        text += "; COULD NOT roll back (left as they are now): %s" % "; ".join(
            "%s: %s" % (s.undo_description, e) for s, e in failed.left)
    if failed.signals:
        text += "; %s arrived during the rollback, which ran to its end" % ", ".join(failed.signals)
    return text


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    p = module.params
    sysfs = p["sysfs_path"]
    try:
        check_sysfs_root(sysfs)
        # AnsibleModule fills left-out suboptions with None: drop them, so the defaults of the checks apply.
        raw = [dict((k, v) for k, v in pf.items() if v is not None and k != "vfs") for pf in p["pfs"]]
        for i, (pf, given) in enumerate(zip(raw, p["pfs"])):
            vfs = list_of_dicts("pfs[%d].vfs" % i, given["vfs"], VF_OPTIONS, VFS_FORM) or []
            pf["vfs"] = [dict((k, v) for k, v in vf.items() if v is not None) for vf in vfs]
            if pf.get("state") == "present" and "numvfs" not in pf:
                raise sriov_rules.SriovError("Invalid pfs (%s): numvfs is required when state is present" % pf["netdev"])
        wanted = sriov_rules.normalise_pfs(raw)
        firmware = sr.check_firmware(p["firmware"])
        link_timeout = sr.check_link_timeout(p["pf_link_timeout"])
    except (sriov_rules.SriovError, ListOptionError, PathError) as e:
        module.fail_json(msg=str(e))

    ip = module.get_bin_path("ip", required=bool(wanted))
    have = dict((w["netdev"], sr.read_pf(sysfs, w["netdev"])) for w in wanted)
    problems = [msg for w in wanted for msg in sr.check_pf(w, have[w["netdev"]])]
    if problems:
        module.fail_json(msg="; ".join(problems))
    settings = dict((w["netdev"], _ip_links(module, ip, w["netdev"])) for w in wanted)

    # Firmware: read the next boot's values (read-only, also in check mode).
    fw_results = []
    mlxconfig = module.get_bin_path("mlxconfig", required=True) if firmware else None
    for entry in firmware:
        rc, out, err = module.run_command([mlxconfig, "-d", entry["device"], "-e", "q"] + list(sr.FW_KEYS))
        if rc != 0:
            module.fail_json(msg="firmware (%s): mlxconfig query failed (rc %d): %s" % (entry["device"], rc, (err or out).strip()))
        current = sr.parse_mlxconfig_query(out)
        if "SRIOV_EN" not in current:
            module.fail_json(msg="firmware (%s): mlxconfig shows no SRIOV_EN (not an NVIDIA device with SR-IOV?)" % entry["device"])
        fw_results.append(dict(device=entry["device"], current=current, changes=sr.firmware_plan(current, entry["num_vfs"]),
                               applied=False))

    plans = []
    commands, undos = [], []
    for w in wanted:
        steps, changes = sr.plan_pf(w, have[w["netdev"]], settings[w["netdev"]])
        plans.append((w, steps, changes))
        pf_commands = sr.pf_commands(sysfs, w, have[w["netdev"]], steps, changes, ip)
        commands += pf_commands
        undos += sr.undo_commands(w, have[w["netdev"]], settings[w["netdev"]], pf_commands, ip)
    pf_command_count = len(commands)
    for fw in fw_results:
        if fw["changes"] and p["firmware_apply"]:
            commands.append(sr.firmware_set_argv(mlxconfig, fw["device"], fw["changes"]))
            before = dict((k, fw["current"][k]) for k in fw["changes"] if k in fw["current"])
            undos.append(sr.firmware_set_argv(mlxconfig, fw["device"], before))
    changed = bool(commands)
    warnings = ["firmware (%s): the next boot would need %s; not written (firmware_apply is false)"
                % (fw["device"], ", ".join("%s=%d" % kv for kv in sorted(fw["changes"].items())))
                for fw in fw_results if fw["changes"] and not p["firmware_apply"]]
    for text in warnings:
        module.warn(text)

    before = dict((w["netdev"], sr.state_view(have[w["netdev"]], settings[w["netdev"]])) for w in wanted)
    link_waits = []
    if changed and not module.check_mode:
        # Whether each PF was administratively up, read before the changes (a PF that was down is not waited for).
        admin_up = dict((w["netdev"], sr.read_link(sysfs, w["netdev"])["admin_up"]) for w in wanted)

        def before_probe(netdev):
            link_waits.append(_wait_for_pf(module, sysfs, netdev, admin_up.get(netdev), link_timeout))

        def command_step(argv, undo):
            def run(command):
                rc, err = _run(module, sysfs, command, before_probe)
                if rc != 0:
                    raise CommandFailed("%s failed: %s" % (" ".join(command), err.strip()))
            return Step("pfs", " ".join(argv), lambda: run(argv), (lambda: run(undo)) if undo else None,
                        " ".join(undo) if undo else None)

        read = {}

        def read_back():
            """None when every PF reads back as planned (its VF count, the settings asked), else what differs."""
            read["have"] = dict((w["netdev"], sr.read_pf(sysfs, w["netdev"])) for w in wanted)
            read["settings"] = dict((w["netdev"], _ip_links(module, ip, w["netdev"])) for w in wanted)
            wrong = []
            for w, dummy, dummy in plans:
                if read["have"][w["netdev"]]["numvfs"] != w["numvfs"]:
                    wrong.append("%s has %s VFs, not %d" % (w["netdev"], read["have"][w["netdev"]]["numvfs"], w["numvfs"]))
                left = sr.plan_pf(w, read["have"][w["netdev"]], read["settings"][w["netdev"]])[1]
                wrong += ["%s vf %d: %s not as asked (the driver may not allow it)" % (w["netdev"], i, sorted(c))
                          for i, c in left]
            return "SR-IOV not as wanted after the changes: %s" % "; ".join(wrong) if wrong else None

        steps = [command_step(argv, undo) for argv, undo in zip(commands, undos)]
        steps.insert(pf_command_count, read_back_step("pfs", "read the PFs back", read_back))
        try:
            Changes(StopSignals(), errors=(CommandFailed, ReadBackError)).run_all(steps)
        except StepFailed as failed:
            module.fail_json(msg=_failure_text(failed), commands=commands, pf_link_waits=link_waits,
                             rolled_back=[s.undo_description for s in failed.restored],
                             rollback_failed=["%s: %s" % (s.undo_description, e) for s, e in failed.left])
        for fw in fw_results:
            fw["applied"] = bool(fw["changes"] and p["firmware_apply"])
        have, settings = read["have"], read["settings"]
    after = dict((w["netdev"], sr.state_view(have[w["netdev"]], settings[w["netdev"]])) for w in wanted)
    if changed and module.check_mode:
        for w, steps, changes in plans:
            view = after[w["netdev"]] = dict(after[w["netdev"]], vfs=dict(after[w["netdev"]]["vfs"]))
            if steps:
                view["numvfs"] = steps[-1]
            for index, change in changes:
                view["vfs"][str(index)] = dict(view["vfs"].get(str(index), {}), **change)

    result = dict(changed=changed, commands=commands, firmware=fw_results, pf_link_waits=link_waits,
                  reboot_required=any(fw["applied"] for fw in fw_results),
                  pfs=[dict(have[w["netdev"]], settings=dict((str(k), v) for k, v in settings[w["netdev"]].items()))
                       for w in wanted])
    if module._diff:
        result["diff"] = {"before": {"pfs": before, "firmware": dict((fw["device"], fw["current"]) for fw in fw_results)},
                          "after": {"pfs": after, "firmware": dict(
                              (fw["device"], dict(fw["current"], **fw["changes"]) if p["firmware_apply"] else fw["current"])
                              for fw in fw_results)}}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
