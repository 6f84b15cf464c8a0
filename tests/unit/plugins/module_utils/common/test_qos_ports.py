# -*- coding: utf-8 -*-
"""One resolver of roce_qos's ports (module_utils/common/qos_ports.py) for both sides: the same host's facts go
to the controller's rdma.fabric.roce_qos_ports filter (as the lossless_ethernet role calls it) and to the host's
qos.port.resolve_ports (as roce_qos and qos-apply call it), and for every netdev the two accept the same ports and
refuse the others with the same message. The host is a fixture sysfs tree: rxe0 on ens160 and rxe9 on dcbsim0
(the lab's set-up), a VLAN netdev that only a GID table lists, an iWARP siw port, a netdev without RDMA."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.roce_qos_ports import roce_qos_ports
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, port_request
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import read_facts, resolve_ports
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    add_netdev,
    add_rxe,
    make_tree,
    write,
)


@pytest.fixture(name="host")
def fixture_host(tmp_path):
    sysfs = make_tree(tmp_path, "derived_rxe")
    add_netdev(sysfs, "dcbsim0")
    add_rxe(sysfs, "rxe9", "dcbsim0")
    add_netdev(sysfs, "eth9")           # no RDMA device on it
    add_netdev(sysfs, "vlan100")        # only in rxe9's GID table (a VLAN on top of a RoCE port)
    dev = os.path.join(sysfs, "class", "infiniband", "rxe9")
    write(os.path.join(dev, "ports", "1", "gids", "0"), "0000:0000:0000:0000:0000:ffff:c000:0263\n")
    write(os.path.join(dev, "ports", "1", "gids", "1"), "0000:0000:0000:0000:0000:ffff:c000:0264\n")
    write(os.path.join(dev, "ports", "1", "gid_attrs", "types", "1"), "RoCE v2\n")
    write(os.path.join(dev, "ports", "1", "gid_attrs", "ndevs", "1"), "vlan100\n")
    add_netdev(sysfs, "eth5")           # an iWARP port: siw0 on eth5 (node type RNIC, link layer Ethernet)
    siw = os.path.join(sysfs, "devices", "virtual", "infiniband", "siw0")
    write(os.path.join(siw, "node_type"), "4: RNIC\n")
    write(os.path.join(siw, "parent"), "eth5\n")
    write(os.path.join(siw, "ports", "1", "link_layer"), "Ethernet\n")
    write(os.path.join(siw, "ports", "1", "state"), "4: ACTIVE\n")
    os.symlink("../../devices/virtual/infiniband/siw0", os.path.join(sysfs, "class", "infiniband", "siw0"))
    tree = SysfsTree(sysfs)
    return tree, read_facts(tree)


def on_the_host(tree, facts, entry):
    """What roce_qos decides on the host: ``(netdev, device, port)`` or ``(param, message)`` of the refusal."""
    try:
        ref = resolve_ports(tree, [port_request(entry, "ports[0]")], facts=facts)[0]
        return ("ok", ref.netdev, ref.device, ref.port)
    except ValidationError as e:
        return ("refused", e.param.replace("ports[0].", ""), e.detail.replace("under %s" % tree.sys("class", "infiniband"),
                                                                              "in the RDMA facts"))


def on_the_controller(facts, entry):
    """What the role's filter decides on the same facts."""
    try:
        out = roce_qos_ports({}, ports=[entry], facts=facts, var_prefix="lossless_ethernet_")
        return ("ok",) + tuple(out[0].get(k) for k in ("netdev",))
    except AnsibleFilterError as e:
        param, _sep, message = str(e).partition(": ")
        return ("refused", param.replace("lossless_ethernet_ports[0].", ""), message)


@pytest.mark.parametrize("entry", [
    {"netdev": "ens160"}, {"netdev": "dcbsim0"}, {"netdev": "vlan100"}, {"netdev": "eth5"}, {"netdev": "eth9"},
    {"netdev": "dcbsim0", "device": "rxe0"}, {"netdev": "ens160", "port": 2}, {"netdev": "vlan100", "device": "rxe9"},
], ids=lambda e: "-".join(str(v) for v in e.values()))
def test_the_filter_and_the_host_resolve_a_netdev_alike(host, entry):
    tree, facts = host
    here, there = on_the_host(tree, facts, entry), on_the_controller(facts, entry)
    assert here[0] == there[0], (here, there)
    if here[0] == "ok":
        assert here[1] == there[1] == entry["netdev"]
    else:
        assert here[1:] == there[1:]


def test_what_each_side_says(host):
    tree, facts = host
    assert on_the_host(tree, facts, {"netdev": "vlan100"})[1:] == ("vlan100", "rxe9", 1)
    assert on_the_controller(facts, {"netdev": "eth5"}) == (
        "refused", "netdev", "siw0 port 1 (eth5) has link layer Ethernet: an iWARP port (node type RNIC); "
                             "roce_qos configures RoCE ports only")
    refused = on_the_controller(facts, {"netdev": "eth9"})
    assert refused[:2] == ("refused", "netdev") and "is not an RDMA port" in refused[2]


def test_every_roce_port_is_what_the_host_accepts(host):
    """ports: [] (every RoCE port of the facts) gives exactly the netdevs the host resolves as RoCE ports."""
    tree, facts = host
    netdevs = [p["netdev"] for p in roce_qos_ports({}, ports=[], facts=facts)]
    assert netdevs == ["ens160", "dcbsim0"]
    assert all(on_the_host(tree, facts, {"netdev": n})[0] == "ok" for n in netdevs)


def test_without_facts_the_filter_leaves_the_check_to_the_host():
    assert roce_qos_ports({}, ports=["eth42"]) == [{"netdev": "eth42"}]
