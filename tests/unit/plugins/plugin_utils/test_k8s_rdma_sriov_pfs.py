# -*- coding: utf-8 -*-
"""SR-IOV device plugin selectors from the VFs the sriov role reports (sriov_pfs_current), validated
against the upstream schemas kept in tests/unit/fixtures/k8s/schemas."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import jsonschema
import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma

SCHEMAS = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "schemas")


def schema(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


def igb_pf(netdev, indices, rdma=False):
    """A PF as sriov_vfs returns it for QEMU's igb (82576): VFs 8086:10ca bound to igbvf."""
    return {"netdev": netdev, "pci_address": "0000:00:06.0", "driver": "igb", "totalvfs": 7, "numvfs": len(indices),
            "vfs": [{"index": i, "pci_address": "0000:00:16.%d" % i, "driver": "igbvf", "netdev": "eth%d" % (3 + i),
                     "vendor_id": "0x8086", "device_id": "0x10ca", "rdma_devices": ["mlx5_%d" % i] if rdma else []}
                    for i in indices]}


def test_selectors_with_ranges_over_hosts_and_schema():
    sel = k8s_rdma.sriov_pf_vf_selectors({"lab1": [igb_pf("eth2", [0, 1])], "lab2": [igb_pf("eth2", [0, 1]), igb_pf("eth5", [0, 2, 3])]})
    assert sel == {"vendors": ["8086"], "devices": ["10ca"], "drivers": ["igbvf"], "pfNames": ["eth2#0-1", "eth5#0,2-3"]}
    doc = k8s_rdma.sriov_dp_config([{"resourceName": "sriov_vf", "resourcePrefix": "rdma.fabric", "selectors": sel}], None)
    jsonschema.validate(doc, schema("sriov_network_device_plugin.json"))
    jsonschema.validate(doc["resourceList"][0], schema("net_device.json"))


def test_is_rdma_only_when_every_vf_has_an_rdma_device():
    assert "isRdma" not in k8s_rdma.sriov_pf_vf_selectors([igb_pf("eth2", [0, 1])])
    assert k8s_rdma.sriov_pf_vf_selectors([igb_pf("eth2", [0, 1], rdma=True)])["isRdma"] is True


def test_no_vfs_is_an_error_naming_the_hosts():
    with pytest.raises(RdmaFactsError, match="no SR-IOV virtual function in lab1"):
        k8s_rdma.sriov_pf_vf_selectors({"lab1": [igb_pf("eth2", [])]})
    with pytest.raises(RdmaFactsError, match="must be a list"):
        k8s_rdma.sriov_pf_vf_selectors({"lab1": "eth2"})
