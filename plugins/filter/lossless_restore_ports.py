# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter lossless_restore_ports: the roce_qos ports that take a host back to before the lossless profile.

Thin wrapper over plugins/plugin_utils/qos_restore.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: lossless_restore_ports
short_description: The rdma.fabric.roce_qos ports that take RoCE ports back to their values before the lossless profile
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Used by the C(rdma.fabric.lossless_ethernet) role with C(lossless_ethernet_state=absent).
  - A port with a snapshot (what M(rdma.fabric.roce_qos) read before the role's first change) gets those values back;
    values that were unknown then are left alone, and with trust V(dscp) a DSCP entry that did not exist before stays.
  - A port the role configures that has no snapshot gets the driver defaults of the options it manages that have one
    everywhere (trust V(pcp), no PFC, every priority on traffic class 0, rdma_cm ToS 0 and RoCE v2, MTU 1500); ETS, ECN,
    CNP, pause and single DSCP entries are left as they are.
  - Every port's entry has C(on_unsupported=warn) (O(rdma.fabric.roce_qos#module:on_unsupported)) and the role's backend when it set one.
options:
  _input:
    description: The snapshots, each C({netdev, before}).
    type: list
    elements: dict
    required: true
  ports:
    description: The ports the role resolves (C(lossless_ethernet_resolved_ports)).
    type: list
    elements: dict
"""

EXAMPLES = r"""
- name: The ports to put back
  ansible.builtin.debug:
    msg: "{{ [{'netdev': 'eth1', 'before': {'trust': 'pcp', 'pfc': []}}] | rdma.fabric.lossless_restore_ports([]) }}"
"""

RETURN = r"""
_value:
  description: C(ports) (the roce_qos port entries, snapshot ports first) and C(notes) (what is left as it is).
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils import qos_restore as restore

RUN_ONLY = ("netdev", "device", "port", "backend", "on_unsupported")


def lossless_restore_ports(snapshots, ports=None):
    out, notes, seen = [], [], set()
    backends = dict((p.get("netdev"), p.get("backend")) for p in ports or [] if isinstance(p, dict))
    for snap in snapshots or []:
        if not isinstance(snap, dict) or not isinstance(snap.get("netdev"), str) or not isinstance(snap.get("before"), dict):
            raise AnsibleFilterError("lossless_restore_ports: a snapshot must be {netdev: NAME, before: {...}}, got %r"
                                     % (snap,))
        entry, why = restore.restore_entry(snap["netdev"], snap["before"])
        seen.add(snap["netdev"])
        out.append((entry, why))
    for port in ports or []:
        if not isinstance(port, dict) or port.get("netdev") in seen:
            continue
        entry, why = restore.default_entry(port.get("netdev"), [k for k in port if k not in RUN_ONLY])
        out.append((entry, why))
    result = []
    for entry, why in out:
        notes.extend(why)
        if not [k for k in entry if k not in RUN_ONLY]:
            continue
        if backends.get(entry["netdev"]) not in (None, "auto"):
            entry["backend"] = backends[entry["netdev"]]
        result.append(entry)
    return {"ports": result, "notes": notes}


class FilterModule(object):
    def filters(self):
        return {"lossless_restore_ports": lossless_restore_ports}
