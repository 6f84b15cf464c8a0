# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Taking a RoCE port back to what it was before the lossless profile (lossless_ethernet_state: absent).

The lossless_ethernet role keeps, per port, what ``roce_qos`` read before the role's first change
(the ``before`` of a check-mode run: :func:`model.render` of the port's state, restricted to the
options the role manages). :func:`restore_entry` turns it into a ``roce_qos`` port entry that puts
those values back; :func:`default_entry` is the entry for a port with no snapshot: the driver
defaults of the options that have one everywhere. Both say what they cannot put back. Pure
functions, standard library only.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy

# The values a port has when no tool has changed it (the kernel's and every RoCE driver's defaults):
# trust by PCP (no DSCP APP entries), no PFC, every priority on traffic class 0, rdma_cm's ToS 0 and
# RoCE v2, the Ethernet MTU. ETS, ECN, CNP, pause and single DSCP entries differ by driver and
# firmware: they have no default that is right everywhere and are left as they are.
DRIVER_DEFAULTS = {
    "trust": "pcp",
    "pfc": [],
    "prio_tc": [0] * 8,
    "roce_tos": 0,
    "roce_mode": "v2",
    "mtu": 1500,
}
NO_DEFAULT = ("dscp2prio", "ets", "ecn", "cnp", "pause")


def restore_entry(netdev, before):
    """``(entry, notes)``: the roce_qos port entry that puts ``before`` back, and what it cannot.

    A value that was unknown (null: unreadable or unsupported on the port) is left alone. Trust
    ``pcp`` clears every DSCP entry (so the DSCP map needs no entry); with trust ``dscp`` the
    DSCP entries that existed are put back, and one that did not exist before stays.
    """
    before = before if isinstance(before, dict) else {}
    entry = {"netdev": netdev, "on_unsupported": "warn"}
    notes = []
    for key, value in sorted(before.items()):
        if value is None:
            continue
        if key == "dscp2prio":
            if before.get("trust") == "pcp":
                continue
            kept = {}
            for dscp, prio in sorted(value.items(), key=lambda kv: int(kv[0])):
                if prio is None:
                    notes.append("%s: DSCP %s had no entry before; the entry added stays" % (netdev, dscp))
                elif isinstance(prio, list):
                    notes.append("%s: DSCP %s had several priorities %s before; left as it is" % (netdev, dscp, prio))
                else:
                    kept[str(dscp)] = prio
            if kept:
                entry[key] = kept
        elif key in ("ecn", "cnp"):
            part = dict((k, copy.deepcopy(v)) for k, v in value.items() if v is not None)
            if part:
                entry[key] = part
        else:
            entry[key] = copy.deepcopy(value)
    return entry, notes


def default_entry(netdev, keys):
    """``(entry, notes)``: the driver defaults of the options in ``keys`` for a port with no snapshot."""
    entry = {"netdev": netdev, "on_unsupported": "warn"}
    notes = []
    for key in sorted(set(keys or ())):
        if key in DRIVER_DEFAULTS:
            entry[key] = copy.deepcopy(DRIVER_DEFAULTS[key])
        elif key in NO_DEFAULT:
            notes.append("%s: no value saved before the first apply and no driver default for %s; left as it is"
                         % (netdev, key))
    if "trust" in entry:
        entry.pop("dscp2prio", None)
    return entry, notes
