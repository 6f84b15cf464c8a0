# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SR-IOV virtual functions: validate a request, read a PF from sysfs, plan and build the commands.

Standard library only (runs on hosts). Used by the ``sriov_vfs`` module and,
through the ``rdma.fabric.sriov_pfs`` filter, by the ``sriov`` role.

A PF request is ``{netdev, numvfs, vfs, state}``:

* ``netdev``: the physical function's netdev (the facts' ``netdev`` of a
  device whose ``sriov.totalvfs`` is set, or any SR-IOV capable NIC);
* ``numvfs``: how many VFs (0 .. ``sriov_totalvfs``); ``state: absent`` means 0;
* ``vfs``: per-VF settings by index, each optional: ``mac``, ``trust``
  (bool), ``spoofchk`` (bool), ``link_state`` (``auto``/``enable``/``disable``),
  applied with ``ip link set PF vf N ...`` where the driver allows it.

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

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_link import NETDEV_RE
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import RdmaFactsError

STATES = ("present", "absent")
LINK_STATES = ("auto", "enable", "disable")
PF_KEYS = ("netdev", "numvfs", "vfs", "state")
VF_KEYS = ("index", "mac", "trust", "spoofchk", "link_state")
MAC_RE = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")
# An mlxconfig device: a PCI address or an mst device path.
FW_DEVICE_RE = re.compile(r"(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]|/dev/mst/[A-Za-z0-9_.]+")
FW_KEYS = ("SRIOV_EN", "NUM_OF_VFS")
_FW_LINE_RE = re.compile(r"\s*\*?\s*(SRIOV_EN|NUM_OF_VFS)\s+(.*?)\s*")
_FW_VALUE_RE = re.compile(r"(?:True|False)?\(?(\d+)\)?")
IFF_UP = 0x1  # the netdev's flags (sysfs ``flags``, hex): administratively up
LINK_POLL_SECONDS = 0.2


class SriovError(RdmaFactsError):
    """Bad input, or a PF that cannot do what is asked; the message names the parameter."""


def _bool(where, key, value):
    if value is None or isinstance(value, bool):
        return value
    raise SriovError("%s: %s must be true or false, got %r" % (where, key, value))


def normalise_pfs(pfs, default_state="present", param="pfs"):
    """Checked copies of ``pfs`` as ``[{netdev, numvfs, vfs: [{index, mac, trust, spoofchk, link_state}], state}]``."""
    if default_state not in STATES:
        raise SriovError("Invalid %s: default state %r; allowed: %s" % (param, default_state, ", ".join(STATES)))
    if not isinstance(pfs, (list, tuple)):
        raise SriovError("Invalid %s: must be a list of PFs ({netdev, numvfs, vfs, state}), got %s"
                         % (param, type(pfs).__name__))
    out = []
    for i, pf in enumerate(pfs):
        where = "Invalid %s[%d]" % (param, i)
        if not isinstance(pf, dict):
            raise SriovError("%s: must be a dict with %s, got %r" % (where, ", ".join(PF_KEYS), pf))
        unknown = sorted(str(k) for k in pf if k not in PF_KEYS)
        if unknown:
            raise SriovError("%s: unknown key(s) %s; allowed: %s" % (where, ", ".join(unknown), ", ".join(PF_KEYS)))
        netdev = "" if pf.get("netdev") is None else str(pf["netdev"])
        if not NETDEV_RE.fullmatch(netdev):
            raise SriovError("%s: netdev %r is not an interface name (letters, digits, _ . : -; up to 15)" % (where, netdev))
        state = pf.get("state") or default_state
        if state not in STATES:
            raise SriovError("%s (%s): state %r; allowed: %s" % (where, netdev, state, ", ".join(STATES)))
        numvfs = pf.get("numvfs", 0 if state == "absent" else None)
        if isinstance(numvfs, bool) or not isinstance(numvfs, int) or numvfs < 0 or numvfs > 65535:
            raise SriovError("%s (%s): numvfs must be a whole number 0-65535 (at most the PF's sriov_totalvfs), got %r"
                             % (where, netdev, numvfs))
        if state == "absent":
            numvfs = 0
        vfs = []
        for j, vf in enumerate(pf.get("vfs") or []):
            vwhere = "%s (%s) vfs[%d]" % (where, netdev, j)
            if not isinstance(vf, dict):
                raise SriovError("%s: must be a dict with %s, got %r" % (vwhere, ", ".join(VF_KEYS), vf))
            unknown = sorted(str(k) for k in vf if k not in VF_KEYS)
            if unknown:
                raise SriovError("%s: unknown key(s) %s; allowed: %s" % (vwhere, ", ".join(unknown), ", ".join(VF_KEYS)))
            index = vf.get("index", j)
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < numvfs:
                raise SriovError("%s: index %r is not a VF of this PF (0-%d)" % (vwhere, index, numvfs - 1))
            mac = vf.get("mac")
            if mac is not None:
                mac = str(mac).lower()
                if not MAC_RE.fullmatch(mac) or int(mac[:2], 16) & 1:
                    raise SriovError("%s: mac %r is not a unicast MAC address (six hex pairs joined by ':')" % (vwhere, mac))
            link_state = vf.get("link_state")
            if link_state is not None and link_state not in LINK_STATES:
                raise SriovError("%s: link_state %r; allowed: %s" % (vwhere, link_state, ", ".join(LINK_STATES)))
            vfs.append({"index": index, "mac": mac, "trust": _bool(vwhere, "trust", vf.get("trust")),
                        "spoofchk": _bool(vwhere, "spoofchk", vf.get("spoofchk")), "link_state": link_state})
        indices = [vf["index"] for vf in vfs]
        if len(set(indices)) != len(indices):
            raise SriovError("%s (%s): a VF index is given twice: %s" % (where, netdev, indices))
        out.append({"netdev": netdev, "numvfs": numvfs, "vfs": vfs, "state": state})
    netdevs = [pf["netdev"] for pf in out]
    dup = sorted(set(n for n in netdevs if netdevs.count(n) > 1))
    if dup:
        raise SriovError("Invalid %s: PF netdev(s) given twice: %s" % (param, ", ".join(dup)))
    return out


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
        pf[key] = int(text) if text is not None and text.isdigit() else None
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


def check_link_timeout(value, param="pf_link_timeout"):
    """``value`` as whole seconds to wait for a PF's link before its VFs are probed (0: do not wait)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SriovError("Invalid %s: %r; allowed: a whole number of seconds, 0 (do not wait) or more" % (param, value))
    return value


def read_link(sysfs, netdev):
    """A netdev's link as sysfs shows it: ``{admin_up, carrier, operstate}``.

    ``admin_up``: IFF_UP in ``flags``; ``carrier``: ``carrier`` is 1 (the file cannot be read while the netdev is
    administratively down); ``operstate``: the ``operstate`` text. A value that cannot be read is None.
    """
    base = os.path.join(sysfs, "class", "net", netdev)
    flags, carrier = _read(os.path.join(base, "flags")), _read(os.path.join(base, "carrier"))
    try:
        admin_up = bool(int(flags, 16) & IFF_UP) if flags else None
    except ValueError:
        admin_up = None
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


def release_commands(commands):
    """What must still run after ``commands`` stopped early: the ``sriov_drivers_autoprobe`` 1 writes and the probes."""
    return [c for c in commands if c[0] == "probe" or (c[0] == "write" and c[1].endswith("/sriov_drivers_autoprobe")
                                                       and c[2] == "1")]


def vf_argv(ip, pf, index, change):
    """``ip link set PF vf N [mac M] [trust on|off] [spoofchk on|off] [state auto|enable|disable]``."""
    argv = [ip, "link", "set", pf, "vf", str(index)]
    if change.get("mac") is not None:
        argv += ["mac", change["mac"]]
    for key in ("trust", "spoofchk"):
        if change.get(key) is not None:
            argv += [key, "on" if change[key] else "off"]
    if change.get("link_state") is not None:
        argv += ["state", change["link_state"]]
    return argv


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


def boot_commands(pf, ip="ip"):
    """The ``ip link set PF vf N ...`` argv lists that re-apply ``pf``'s VF settings (a boot unit's lines)."""
    return [vf_argv(ip, pf["netdev"], vf["index"], dict((k, vf[k]) for k in ("mac", "trust", "spoofchk", "link_state")
                                                        if vf[k] is not None))
            for vf in pf["vfs"] if any(vf[k] is not None for k in ("mac", "trust", "spoofchk", "link_state"))]
