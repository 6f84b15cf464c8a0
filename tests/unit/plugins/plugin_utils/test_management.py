# -*- coding: utf-8 -*-
"""management_netdevs: the management connection's netdevs, drivers and RDMA devices, from facts."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils.management import management_netdevs

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures")


def load(name):
    with open(os.path.join(FIX, "network", name)) as f:
        return json.load(f)


def lab_rdma():
    with open(os.path.join(FIX, "fabric", "lab_lab1_facts.json")) as f:
        return json.load(f)["rdma"]


def test_real_facts_address_on_an_interface():
    """Captured setup network facts of this machine (virtio NIC without a module name)."""
    facts = load("real_container_network_facts.json")
    got = management_netdevs(facts, "192.0.2.2")
    assert got == {"address": "192.0.2.2", "source": "address", "netdevs": ["eth0"], "drivers": [], "rdma_devices": []}
    assert management_netdevs(facts, "fd00::2")["netdevs"] == ["eth0"]


@pytest.mark.parametrize("address", ["127.0.0.1", "node1.example.com", "203.0.113.9", None, "::1"])
def test_real_facts_fall_back_to_the_default_routes(address):
    """The lab's SSH forward (127.0.0.1), a name, NAT: the default routes' interface stands in."""
    got = management_netdevs(load("real_container_network_facts.json"), address)
    assert (got["source"], got["netdevs"]) == ("default_route", ["eth0"])


def test_vlan_on_a_bond_of_mlx5_ports_is_at_risk():
    facts = load("constructed_mlx5_bond_facts.json")
    for address in ("10.20.0.5", "10.20.0.6", "fd20::5"):
        got = management_netdevs(facts, address, facts["rdma"])
        assert got["source"] == "address"
        assert got["netdevs"] == ["bond0.100", "bond0", "ens1f0", "ens1f1"]
        assert got["drivers"] == ["mlx5_core"] and got["rdma_devices"] == ["mlx5_0", "mlx5_1"]


def test_ipoib_and_the_virtio_default_route():
    facts = load("constructed_mlx5_bond_facts.json")
    assert management_netdevs(facts, "10.30.0.5", facts["rdma"])["drivers"] == ["ib_ipoib"]
    # a soft RDMA device (rxe on the virtio NIC) does not make the NIC's driver an RDMA one
    got = management_netdevs(facts, "198.51.100.7", facts["rdma"])
    assert got == {"address": "198.51.100.7", "source": "address", "netdevs": ["eth0"], "drivers": ["virtio_net"],
                   "rdma_devices": []}
    assert management_netdevs(facts, "lab1", facts["rdma"])["netdevs"] == ["eth0"]


def test_lab_rdma_facts_soft_device_only():
    facts = load("real_container_network_facts.json")
    rdma = lab_rdma()
    netdev = rdma["devices"][0]["ports"][0]["netdev"]
    facts = dict(facts, interfaces=facts["interfaces"] + [netdev], **{netdev: {"device": netdev, "module": "virtio_net"}})
    got = management_netdevs(facts, None, rdma)
    assert got["rdma_devices"] == [] and "rdma_rxe" not in got["drivers"]


@pytest.mark.parametrize("facts", [None, {}, {"interfaces": None}, {"interfaces": ["x"], "x": "junk"}, []])
def test_missing_or_odd_facts_read_unknown(facts):
    got = management_netdevs(facts, "10.0.0.1", {"netdevs": {"x": "junk"}, "devices": [None]})
    assert got["source"] == "unknown" and got["netdevs"] == [] and got["drivers"] == []
