# -*- coding: utf-8 -*-
"""rdma.fabric.roce_qos_ports: a host's per-port roce_qos settings, resolved and
validated on the controller (what lossless_ethernet and the report use).

Facts: the REAL facts of the VM lab's lab1 (rxe0 on eth1,
tests/unit/fixtures/fabric/lab_lab1_facts.json); the iWARP case adds a
Soft-iWARP device to a copy of them, shaped as rdma_device_facts reports siw.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible.errors import AnsibleFilterError
from ansible_collections.rdma.fabric.plugins.filter.roce_qos_ports import roce_qos_ports

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fabric", "lab_lab1_facts.json")
with open(FIXTURE) as _f:
    LAB1 = json.load(_f)["rdma"]

PROFILE = {"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6}, "cnp": {"dscp": 48, "priority": 6},
           "roce_tos": 106, "roce_mode": "v2", "mtu": None, "backend": "auto", "on_unsupported": "fail"}


def _with_siw(facts):
    facts = copy.deepcopy(facts)
    siw = copy.deepcopy(facts["devices"][0])
    siw.update(name="siw0", driver="siw", node_type="RNIC", parent_netdev="eth2")
    siw["ports"][0]["netdev"] = "eth2"
    facts["devices"].append(siw)
    return facts


def test_every_roce_port_of_the_facts_with_the_profile():
    assert roce_qos_ports(PROFILE, facts=LAB1) == [{
        "netdev": "eth1", "trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6}, "cnp": {"dscp": 48, "priority": 6},
        "roce_tos": 106, "roce_mode": "v2", "backend": "auto", "on_unsupported": "fail"}]


def test_iwarp_ports_are_not_roce_ports():
    assert [p["netdev"] for p in roce_qos_ports(PROFILE, facts=_with_siw(LAB1))] == ["eth1"]


def test_overrides_per_port_and_null_leaves_an_option_alone():
    out = roce_qos_ports(PROFILE, ports=["eth1", {"netdev": "dcbsim0", "pfc": "0,0,0,0,1,0,0,0", "tos": 96}],
                         port_settings={"eth1": {"cnp": None, "on_unsupported": "warn", "mtu": 4200},
                                        "dcbsim0": {"pfc": [5], "roce_tos": 104}})
    eth1, dcbsim0 = out
    assert "cnp" not in eth1 and eth1["on_unsupported"] == "warn" and eth1["mtu"] == 4200
    assert dcbsim0["pfc"] == "0,0,0,0,1,0,0,0"      # the port's own mapping wins, in the form given
    assert dcbsim0["tos"] == 96 and "roce_tos" not in dcbsim0      # tos replaces roce_tos of the layers below


@pytest.mark.parametrize("kwargs,needle", [
    ({"profile": dict(PROFILE, pfc=[0, 0, 0, 1])}, "lossless_ethernet_pfc: [0, 0, 0, 1] reads two ways"),
    ({"profile": dict(PROFILE, dscp2prio={26: 3, "26": 5})},
     "lossless_ethernet_dscp2prio: 26 and '26' are the same key (26) given twice"),
    ({"profile": dict(PROFILE, roce_mode="v3")}, "lossless_ethernet_roce_mode: 'v3' is not allowed"),
    ({"profile": dict(PROFILE, backend="lldptool")}, "lossless_ethernet_backend: 'lldptool' is not allowed"),
    ({"port_settings": {"eth1": {"pfc": [9]}}}, "lossless_ethernet_port_settings.eth1.pfc: port eth1: priority 9"),
    ({"ports": ["eth1", {"netdev": "eth2", "roce_mode": 3}]}, "lossless_ethernet_ports[1].roce_mode: port eth2: 3 is not"),
    ({"ports": [{"netdev": "eth2", "roce_tos": 106, "tos": 96}]}, "lossless_ethernet_ports[0].tos: port eth2: tos 96"),
    ({"profile": dict(PROFILE, trust="pcp", dscp2prio=None), "port_settings": {"eth1": {"dscp2prio": {26: 3}}}},
     "lossless_ethernet_port_settings.eth1.dscp2prio: port eth1: needs trust: dscp"),
    ({"ports": ["eth1", {"netdev": "eth1"}]}, "lossless_ethernet_ports: eth1 is listed twice"),
    ({"ports": [{"netdev": "eth1", "speed": 1}]}, "lossless_ethernet_ports[0]: unknown option(s) speed"),
    ({"ports": [{"mtu": 9000}]}, "lossless_ethernet_ports[0]: expected a netdev name or a mapping with netdev"),
    ({"ports": "eth1"}, "lossless_ethernet_ports: expected a list of netdev names"),
    ({"port_settings": {"eth1": [3]}}, "lossless_ethernet_port_settings.eth1: expected a mapping of options"),
    # the key is the port: an address inside would be dropped without a word
    ({"port_settings": {"eth1": {"device": "mlx5_1", "port": 2, "mtu": 9000}}},
     "lossless_ethernet_port_settings.eth1: unknown option(s) device, port; allowed: trust"),
    ({"facts": None}, "lossless_ethernet_ports: [] means every RoCE port of the host, which needs its RDMA facts"),
])
def test_errors_name_the_variable(kwargs, needle):
    args = dict(facts=LAB1)
    args.update(kwargs)
    profile = args.pop("profile", PROFILE)
    with pytest.raises(AnsibleFilterError) as exc:
        roce_qos_ports(profile, var_prefix="lossless_ethernet_", **args)
    assert needle in str(exc.value)


def test_settings_for_a_netdev_that_is_not_a_port_are_a_warning(monkeypatch):
    """A typo (ens16O for ens160), or group variables for hosts of another layout: said, naming the variable."""
    from ansible_collections.rdma.fabric.plugins.filter import roce_qos_ports as module
    shown = []
    monkeypatch.setattr(module.Display, "warning", lambda self, msg, *a, **kw: shown.append(msg))
    out = roce_qos_ports(PROFILE, port_settings={"eth1": {"mtu": 4200}, "ens16O": {"mtu": 9000}}, facts=LAB1,
                         var_prefix="lossless_ethernet_")
    assert [p["netdev"] for p in out] == ["eth1"] and out[0]["mtu"] == 4200
    assert shown == ["rdma.fabric.roce_qos_ports: lossless_ethernet_port_settings.ens16O: ens16O is not one of this "
                     "host's ports (eth1), so these settings apply to nothing here"]
