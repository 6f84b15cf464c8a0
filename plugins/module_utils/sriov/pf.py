# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SR-IOV virtual functions on a host: read a PF from sysfs, plan and build the commands (``sriov_vfs``).

The requests are checked by ``common.sriov`` (:func:`~..common.sriov.normalise_pfs`), which the controller's
``rdma.fabric.sriov_pfs`` filter (the ``sriov`` role) uses too.

The kernel refuses to change a non-zero VF count to another non-zero one:
the plan goes through 0 (the VFs are recreated; their settings are applied
again afterwards).

NVIDIA firmware (``mlxconfig``): ``SRIOV_EN`` and ``NUM_OF_VFS`` of a device
are read from ``mlxconfig -d DEV -e q SRIOV_EN NUM_OF_VFS`` (the ``Next
Boot`` column), planned, and set with ``mlxconfig -y -d DEV set ...``; the new
values take effect after a reboot.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import time

from ansible_collections.rdma.fabric.plugins.module_utils.common.numbers import parse_int
from ansible_collections.rdma.fabric.plugins.module_utils.common.sriov import SriovError, vf_argv

# An mlxconfig device: a PCI address or an mst device path.
# An mst device name does not start with '.': "/dev/mst/.." would be /dev itself.
FW_DEVICE_RE = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|/dev/mst/[A-Za-z0-9_][A-Za-z0-9_.]{0,63}")
FW_KEYS = ("SRIOV_EN", "NUM_OF_VFS")
_FW_LINE_RE = re.compile(r"\s*\*?\s*(SRIOV_EN|NUM_OF_VFS)\s+(.*?)\s*")
_FW_VALUE_RE = re.compile(r"(?:True|False)?\(?(\d+)\)?")
IFF_UP = 0x1  # the netdev's flags (sysfs ``flags``, hex): administratively up
LINK_POLL_SECONDS = 0.2


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError):
        return None


def read_pf(sysfs, netdev):
    """What sysfs says about a PF: ``{netdev, exists, pci_address, driver, totalvfs, numvfs, vfs: [...]}``.

    Each VF: ``{index, pci_address, driver, netdev, vendor_id, device_id,
    rdma_devices}`` (``rdma_devices``: RDMA devices on the VF's own PCI
    function, as an mlx5 VF has; none for a VF whose netdev carries only rxe).

    A missing or unreadable value reads as None (``exists`` False when the netdev is not there).
    """
    dev = os.path.join(sysfs, "class", "net", netdev, "device")
    pf = {"netdev": netdev, "exists": os.path.isdir(os.path.join(sysfs, "class", "net", netdev)),
          "pci_address": None, "driver": None, "totalvfs": None, "numvfs": None, "autoprobe": None, "vfs": []}
    if not os.path.isdir(dev):
        return pf
    pf["pci_address"] = os.path.basename(os.path.realpath(dev))
    driver = os.path.join(dev, "driver")
    pf["driver"] = os.path.basename(os.path.realpath(driver)) if os.path.islink(driver) else None
    for key in ("totalvfs", "numvfs", "drivers_autoprobe"):
        text = _read(os.path.join(dev, "sriov_" + key))
        key = "autoprobe" if key == "drivers_autoprobe" else key
        pf[key] = parse_int(text)
    try:
        entries = os.listdir(dev)
    except OSError:
        entries = []
    for entry in sorted((e for e in entries if e.startswith("virtfn") and e[6:].isdigit()), key=lambda e: int(e[6:])):
        vf_dir = os.path.join(dev, entry)
        vf_driver = os.path.join(vf_dir, "driver")
        try:
            nets = sorted(os.listdir(os.path.join(vf_dir, "net")))
        except OSError:
            nets = []
        try:
            rdma = sorted(os.listdir(os.path.join(vf_dir, "infiniband")))
        except OSError:
            rdma = []
        pf["vfs"].append({"index": int(entry[6:]), "pci_address": os.path.basename(os.path.realpath(vf_dir)),
                          "driver": os.path.basename(os.path.realpath(vf_driver)) if os.path.islink(vf_driver) else None,
                          "netdev": nets[0] if nets else None, "vendor_id": _read(os.path.join(vf_dir, "vendor")),
                          "device_id": _read(os.path.join(vf_dir, "device")), "rdma_devices": rdma,
                          "sriov": {"totalvfs": None, "numvfs": None, "is_vf": True,
                                    "physfn": os.path.basename(os.path.realpath(os.path.join(vf_dir, "physfn")))
                                    if os.path.islink(os.path.join(vf_dir, "physfn")) else None}})
    # The facts schema's `sriov` object (rdma_device_facts reports it for RDMA devices on a PCI function).
    pf["sriov"] = ({"totalvfs": pf["totalvfs"], "numvfs": pf["numvfs"], "is_vf": False, "physfn": None}
                   if pf["totalvfs"] is not None else None)
    return pf


def vf_settings(ip_link_json, netdev):
    """``{index: {mac, trust, spoofchk, link_state}}`` from ``ip -j -d link show NETDEV`` output (``vfinfo_list``)."""
    out = {}
    for link in ip_link_json or []:
        if link.get("ifname") != netdev:
            continue
        for i, vf in enumerate(link.get("vfinfo_list") or []):
            index = vf.get("vf", i)
            state = vf.get("link_state")
            out[index] = {"mac": (vf.get("address") or vf.get("mac") or "").lower() or None,
                          "trust": vf.get("trust"), "spoofchk": vf.get("spoofchk"),
                          "link_state": state.lower() if isinstance(state, str) else None}
    return out


def check_pf(want, have):
    """Problems that make ``want`` impossible on ``have`` (read_pf), as messages naming the parameter."""
    where = "pfs (%s)" % want["netdev"]
    if not have["exists"]:
        return ["%s: no such netdev on this host" % where]
    if want["numvfs"] == 0 and not have["totalvfs"]:
        return []
    if have["totalvfs"] is None:
        return ["%s: not SR-IOV capable (no sriov_totalvfs under its PCI device %s)" % (where, have["pci_address"])]
    if want["numvfs"] > have["totalvfs"]:
        return ["%s: numvfs %d is more than the PF's sriov_totalvfs %d; allowed: 0-%d"
                % (where, want["numvfs"], have["totalvfs"], have["totalvfs"])]
    return []


def plan_pf(want, have, settings):
    """``(numvfs_steps, vf_changes)``: VF counts to write in order, and ``[(index, {key: value})]`` to set.

    ``settings``: :func:`vf_settings` of the PF now. When the count changes,
    every wanted setting is applied again (new VFs start from the driver's
    defaults).
    """
    steps = []
    if have["numvfs"] != want["numvfs"]:
        if have["numvfs"] and want["numvfs"]:
            steps.append(0)
        steps.append(want["numvfs"])
    changes = []
    for vf in want["vfs"]:
        now = {} if steps else settings.get(vf["index"], {})
        diff = dict((k, vf[k]) for k in ("mac", "trust", "spoofchk", "link_state")
                    if vf[k] is not None and now.get(k) != vf[k])
        if diff:
            changes.append((vf["index"], diff))
    return steps, changes


def pf_commands(sysfs, want, have, steps, changes, ip):
    """The commands that make a PF as wanted, in order: ``["write", path, text]``, ``ip link set`` argv lists, and
    ``["probe", drivers_probe path, PF netdev]`` (bind the PF's VFs that have no driver).

    When new VFs get settings, their drivers bind only after the settings: a VF driver takes its MAC address from
    the PF when it binds (``igbvf`` only then; the PF says "Reload the VF driver" otherwise). The PF's
    ``sriov_drivers_autoprobe`` is 0 while the VFs are made and set, then 1 again, and the VFs are probed (the runner
    first waits for the PF's link, which the count write may have reset: :func:`wait_for_link`).
    """
    dev = os.path.join(sysfs, "class", "net", want["netdev"], "device")
    hold = bool(steps and steps[-1] and changes and have.get("autoprobe") == 1)
    autoprobe = os.path.join(dev, "sriov_drivers_autoprobe")
    commands = [["write", autoprobe, "0"]] if hold else []
    commands += [["write", os.path.join(dev, "sriov_numvfs"), str(n)] for n in steps]
    commands += [vf_argv(ip, want["netdev"], index, change) for index, change in changes]
    if hold:
        commands += [["write", autoprobe, "1"], ["probe", os.path.join(sysfs, "bus", "pci", "drivers_probe"), want["netdev"]]]
    return commands


LINK_TIMEOUT_MAX = 3600  # an hour: the boot unit waits this long for the link; longer would hold the boot


def check_link_timeout(value, param="pf_link_timeout"):
    """``value`` as whole seconds to wait for a PF's link before its VFs are probed (0: do not wait)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LINK_TIMEOUT_MAX:
        raise SriovError("Invalid %s: %r; allowed: a whole number of seconds from 0 (do not wait) to %d"
                         % (param, value, LINK_TIMEOUT_MAX))
    return value


def read_link(sysfs, netdev):
    """A netdev's link as sysfs shows it: ``{admin_up, carrier, operstate}``.

    ``admin_up``: IFF_UP in ``flags``; ``carrier``: ``carrier`` is 1 (the file cannot be read while the netdev is
    administratively down); ``operstate``: the ``operstate`` text. A value that cannot be read is None.
    """
    base = os.path.join(sysfs, "class", "net", netdev)
    flags, carrier = _read(os.path.join(base, "flags")), _read(os.path.join(base, "carrier"))
    flags = parse_int(flags, 16)
    admin_up = None if flags is None else bool(flags & IFF_UP)
    return {"admin_up": admin_up, "carrier": {"1": True, "0": False}.get(carrier),
            "operstate": _read(os.path.join(base, "operstate"))}


def link_is_up(link):
    """The PF has its link: ``carrier`` 1; ``operstate`` ``up`` only where ``carrier`` cannot be read.

    ``carrier`` is the driver's own state, read as it is now; ``operstate`` follows it later (the kernel's link
    watch may take a second), so right after a reset it can still say ``up``.
    """
    if link["carrier"] is not None:
        return link["carrier"]
    return link["operstate"] == "up"


def wait_for_link(sysfs, netdev, timeout, clock=None, sleep=None, interval=LINK_POLL_SECONDS):
    """Wait until ``netdev``'s link is up (:func:`link_is_up`), at most ``timeout`` seconds.

    Writing ``sriov_numvfs`` resets some PFs (``igb``: the link goes and comes back about 2 s later); a VF driver
    that binds in that gap cannot reach the PF (``igbvf``: "PF still in reset state", a random MAC address, no
    carrier). Returns ``(up, waited)``: whether the link is up, and the seconds waited.
    """
    clock = clock or time.monotonic
    sleep = sleep or time.sleep
    start = clock()
    while True:
        waited = clock() - start
        if link_is_up(read_link(sysfs, netdev)):
            return True, waited
        if waited >= timeout:
            return False, waited
        sleep(min(interval, timeout - waited))


def undo_commands(want, have, settings, commands, ip):
    """The undo of each of a PF's ``commands`` (:func:`pf_commands`), in the same order (None: nothing of its own
    to undo), from the PF read before (``have``, :func:`read_pf`; ``settings``, :func:`vf_settings`).

    A count write is undone by writing the count before it (the plan goes through 0, so the undos do too), an
    ``sriov_drivers_autoprobe`` write by the value before it, a VF setting by the VF's values before it; the
    settings of VFs the run creates are undone by the count's undo (it removes them), a probe binds drivers
    only (the count's undo removes the VFs it bound). A rollback that brings back VFs the run had removed
    gives them the driver's defaults, as any count change does.
    """
    count, autoprobe = have["numvfs"], have.get("autoprobe")
    recreated = any(c[0] == "write" and c[1].endswith("/sriov_numvfs") for c in commands)
    undos = []
    for command in commands:
        if command[0] == "write" and command[1].endswith("/sriov_numvfs"):
            undos.append(None if count is None else ["write", command[1], str(count)])
            count = int(command[2])
        elif command[0] == "write" and command[1].endswith("/sriov_drivers_autoprobe"):
            undos.append(None if autoprobe is None else ["write", command[1], str(autoprobe)])
            autoprobe = int(command[2])
        elif command[0] == ip and command[4:5] == ["vf"] and not recreated:
            old = settings.get(int(command[5]), {})
            keys = [k for k in ("mac", "trust", "spoofchk", "link_state") if k in _vf_argv_keys(command)]
            restore = dict((k, old.get(k)) for k in keys if old.get(k) is not None)
            undos.append(vf_argv(ip, want["netdev"], int(command[5]), restore) if restore else None)
        else:
            undos.append(None)
    return undos


def _vf_argv_keys(argv):
    """The settings an ``ip link set PF vf N ...`` argv (:func:`~..common.sriov.vf_argv`) sets."""
    names = {"mac": "mac", "trust": "trust", "spoofchk": "spoofchk", "state": "link_state"}
    return [names[word] for word in argv[6::2] if word in names]


def state_view(have, settings):
    """The before/after of a diff: VF count and the VFs' settings."""
    return {"numvfs": have["numvfs"], "vfs": dict((str(k), v) for k, v in sorted(settings.items()))}


# -- NVIDIA firmware (mlxconfig) ---------------------------------------------
def check_firmware(entries, param="firmware"):
    """Checked ``[{device, num_vfs}]``; ``num_vfs`` 0 means SR-IOV off (SRIOV_EN=0)."""
    if not isinstance(entries, (list, tuple)):
        raise SriovError("Invalid %s: must be a list of {device, num_vfs}" % param)
    out = []
    for i, entry in enumerate(entries):
        where = "Invalid %s[%d]" % (param, i)
        if not isinstance(entry, dict) or sorted(entry) != ["device", "num_vfs"]:
            raise SriovError("%s: must be a dict with exactly device and num_vfs, got %r" % (where, entry))
        device = str(entry["device"])
        if not FW_DEVICE_RE.fullmatch(device):
            raise SriovError("%s: device %r is not a PCI address (0000:3b:00.0) or an mst device (/dev/mst/...)"
                             % (where, device))
        num = entry["num_vfs"]
        if isinstance(num, bool) or not isinstance(num, int) or not 0 <= num <= 127:
            raise SriovError("%s (%s): num_vfs must be 0-127, got %r" % (where, device, num))
        if any(e["device"] == device for e in out):
            raise SriovError("%s: device %s is given twice; give each device once" % (where, device))
        out.append({"device": device, "num_vfs": num})
    return out


def parse_mlxconfig_query(text):
    """``{SRIOV_EN: int, NUM_OF_VFS: int}`` from ``mlxconfig -d DEV [-e] q SRIOV_EN NUM_OF_VFS``: the last column
    (``Next Boot``, what the firmware will use after a reboot). Keys it does not show are left out."""
    out = {}
    for line in (text or "").splitlines():
        m = _FW_LINE_RE.fullmatch(line)
        if not m:
            continue
        last = m.group(2).split()[-1] if m.group(2).split() else ""
        v = _FW_VALUE_RE.fullmatch(last)
        if v:
            out[m.group(1)] = int(v.group(1))
    return out


def firmware_wanted(num_vfs):
    """The firmware settings that give ``num_vfs`` VFs."""
    return {"SRIOV_EN": 1 if num_vfs else 0, "NUM_OF_VFS": num_vfs}


def firmware_plan(current, num_vfs):
    """``{key: value}`` to set so that the next boot gives ``num_vfs`` VFs (empty when it already will)."""
    wanted = firmware_wanted(num_vfs)
    if not num_vfs:
        wanted = {"SRIOV_EN": 0}  # NUM_OF_VFS is ignored with SR-IOV off: leave it
    return dict((k, v) for k, v in wanted.items() if current.get(k) != v)


def firmware_set_argv(mlxconfig, device, changes):
    """``mlxconfig -y -d DEV set KEY=VALUE ...`` (keys in a fixed order)."""
    return [mlxconfig, "-y", "-d", device, "set"] + ["%s=%d" % (k, changes[k]) for k in FW_KEYS if k in changes]
