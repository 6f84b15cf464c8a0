# -*- coding: utf-8 -*-
"""Unit tests for the rdma_ports filter (the port rule of module_utils/common/rdma_schema.py for YAML).

Facts and the derived Soft-iWARP double are those of the schema's tests
(tests/unit/plugins/module_utils/common/test_rdma_schema.py, provenance there).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.rdma_ports import rdma_ports
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.common.test_rdma_schema import derived_siw_host, facts


def test_filter_returns_flat_records():
    out = rdma_ports(facts("lab1"), kinds=["roce"])
    assert out == [{
        "device": "rxe0", "port": 1, "kind": "roce", "netdev": "eth1", "carrier_netdev": "eth1",
        "link_layer": "Ethernet", "state": "ACTIVE", "rate_gbps": 2.5, "soft": True, "is_vf": False, "driver": "rdma_rxe",
        "pci_address": None, "roce_v2_ipv4_gid_index": 1,
    }]
    assert rdma_ports({"rdma": derived_siw_host()}, kinds=["roce"]) == []
    assert [p["kind"] for p in rdma_ports(derived_siw_host())] == ["iwarp"]


def test_filter_rejects_bad_input_naming_it():
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.rdma_ports: .*kinds"):
        rdma_ports(facts("lab1"), kinds="tcp")
    with pytest.raises(AnsibleFilterError, match="give one host's facts"):
        rdma_ports({"a": facts("lab1"), "b": facts("lab2")})
    with pytest.raises(AnsibleFilterError, match="not RDMA facts"):
        rdma_ports({"devices": None})
