# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SR-IOV PF requests (pure rules, standard library only): the normaliser of ``sriov_vfs``'s ``pfs`` and of the
``rdma.fabric.sriov_pfs`` filter (the ``sriov`` role), the ``ip link set PF vf N`` argv of VF settings, and the
boot-time commands that re-apply them. The host side (sysfs reads, the plan, firmware) is ``sriov.pf``.

A PF request is ``{netdev, numvfs, vfs, state}``:

* ``netdev``: the physical function's netdev (the facts' ``netdev`` of a
  device whose ``sriov.totalvfs`` is set, or any SR-IOV capable NIC);
* ``numvfs``: how many VFs (0 .. ``sriov_totalvfs``); ``state: absent`` means 0;
* ``vfs``: per-VF settings by index, each optional: ``mac``, ``trust``
  (bool), ``spoofchk`` (bool), ``link_state`` (``auto``/``enable``/``disable``),
  applied with ``ip link set PF vf N ...`` where the driver allows it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_link import NETDEV_RE
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

STATES = ("present", "absent")
LINK_STATES = ("auto", "enable", "disable")
PF_KEYS = ("netdev", "numvfs", "vfs", "state")
VF_KEYS = ("index", "mac", "trust", "spoofchk", "link_state")
MAC_RE = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")


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


def boot_commands(pf, ip="ip"):
    """The ``ip link set PF vf N ...`` argv lists that re-apply ``pf``'s VF settings (a boot unit's lines)."""
    return [vf_argv(ip, pf["netdev"], vf["index"], dict((k, vf[k]) for k in ("mac", "trust", "spoofchk", "link_state")
                                                        if vf[k] is not None))
            for vf in pf["vfs"] if any(vf[k] is not None for k in ("mac", "trust", "spoofchk", "link_state"))]
