# -*- coding: utf-8 -*-
"""Unit tests for module_utils/common/rdma_schema.py, the owner of the facts schema.

(The rdma_ports filter's tests are in tests/unit/plugins/filter/test_rdma_ports.py: ansible-test runs module_utils
tests where controller code cannot be imported.)

Facts are the fixture hosts of tests/unit/fixtures/k8s/facts (provenance in the README there). The lab has no
iWARP capture yet, so the iWARP host is a clearly named derived double: lab1's rxe0 facts with the node type and
driver a Soft-iWARP device reports (``4: RNIC``, ``siw``), the only fields the port rule reads.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import rdma_schema
from ansible_collections.rdma.fabric.plugins.module_utils.facts import rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    ib_ports,
    iwarp_ports,
    natural_key,
    pci_nics,
    port_kind,
    ports,
    roce_ports,
    select_ports,
)

FACTS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FACTS_DIR, name + ".json")) as f:
        return json.load(f)


def derived_siw_host():
    """Test double: lab1's facts with rxe0 turned into a Soft-iWARP device (node type RNIC, driver siw)."""
    data = copy.deepcopy(facts("lab1"))
    dev = data["devices"][0]
    dev.update(name="siw0", node_type="RNIC", driver="siw")
    return data


def names(pairs):
    return [(dev["name"], port["number"]) for dev, port in pairs]


def test_one_owner_for_schema_names():
    # The gatherer and every reader share the same objects, not copies with other bases.
    assert rdma_facts.SCHEMA_VERSION is rdma_schema.SCHEMA_VERSION
    assert rdma_facts.RdmaFactsError is rdma_schema.RdmaFactsError
    assert issubclass(RdmaFactsError, ValueError)
    assert sorted(["mlx5_10", "mlx5_2", None, "mlx5_1"], key=natural_key) == [None, "mlx5_1", "mlx5_2", "mlx5_10"]


@pytest.mark.parametrize("name,expected", [
    ("roce-a", [("mlx5_0", 1, "roce")]),
    ("ib-a", [("mlx5_0", 1, "infiniband")]),
    ("lab1", [("rxe0", 1, "roce")]),
])
def test_port_kind_on_fixture_hosts(name, expected):
    data = facts(name)
    assert [(d["name"], p["number"], port_kind(d, p)) for d, p in ports(data)] == expected


def test_iwarp_reads_ethernet_but_is_not_roce():
    data = derived_siw_host()
    dev, port = data["devices"][0], data["devices"][0]["ports"][0]
    assert port["link_layer"] == "Ethernet"
    assert port_kind(dev, port) == "iwarp"
    assert roce_ports(data) == []
    assert names(iwarp_ports(data)) == [("siw0", 1)]
    assert ib_ports(data) == []


def test_unknown_link_layer_has_no_kind():
    data = copy.deepcopy(facts("roce-a"))
    data["devices"][0]["ports"][0]["link_layer"] = "Unknown"
    assert port_kind(data["devices"][0], data["devices"][0]["ports"][0]) is None
    assert roce_ports(data) == [] and len(ports(data)) == 1


def test_ports_keeps_down_ports_unless_active_only():
    data = facts("roce-portdown")
    assert names(roce_ports(data)) == [("mlx5_0", 1), ("mlx5_1", 1)]
    assert names(roce_ports(data, active_only=True)) == [("mlx5_0", 1)]
    # select_ports (what counts for NCCL and the device plugins) is ACTIVE only, built on the same rule.
    assert names(select_ports(data)) == [("mlx5_0", 1)]


def test_soft_and_vf_switches():
    lab = facts("lab1")
    assert names(roce_ports(lab)) == [("rxe0", 1)]
    assert roce_ports(lab, include_soft=False) == []
    assert pci_nics(lab) == []
    assert [d["name"] for d in pci_nics(facts("roce-portdown"))] == ["mlx5_0", "mlx5_1"]


def test_bad_kind_names_parameter_and_allowed_values():
    with pytest.raises(RdmaFactsError, match=r"kinds: unknown port kind\(s\) ethernet; allowed: roce, infiniband, iwarp"):
        ports(facts("roce-a"), kinds=["ethernet"])
