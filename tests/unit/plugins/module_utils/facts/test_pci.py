# -*- coding: utf-8 -*-
"""Unit tests for module_utils/facts/pci.py: PCI topology from sysfs, config space.

Trees: the shared derived fixture ``derived_gpu_nic_topology`` (its
expected.json) and the DERIVED layouts of tests/unit/fixtures/pci (README.md).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import (
    PciTopology,
    ext_capabilities,
    find_ext_capability,
    is_pci_address,
    read_u16,
    split_device_path,
)
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (
    ACS_CTRL_LINUX_DEFAULT,
    CLASS_BRIDGE,
    build_switch_box,
    config_space,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "fixtures", "sysfs", "derived_gpu_nic_topology")


@pytest.fixture(name="box")
def fixture_box(tmp_path):
    builder = build_switch_box(tmp_path)
    return PciTopology(SysfsTree(builder.sys, builder.proc))


def test_pci_address_forms():
    assert is_pci_address("0000:3b:00.0")
    assert is_pci_address("10000:01:00.0")  # VMD domain
    assert not is_pci_address("pci0000:00")
    assert not is_pci_address("0000:3b:00.8")
    assert not is_pci_address(None)


def test_split_device_path_keeps_vmd_host_bridge():
    root = "/s/devices"
    assert split_device_path(root, "/s/devices/pci0000:00/0000:00:01.0/0000:01:00.0") == \
        ("pci0000:00", ("0000:00:01.0", "0000:01:00.0"))
    assert split_device_path(root, "/s/devices/pci0000:00/0000:00:0e.0/pci10000:00/10000:01:00.0") == \
        ("pci0000:00/0000:00:0e.0/pci10000:00", ("10000:01:00.0",))
    assert split_device_path(root, "/elsewhere/0000:01:00.0") == (None, ())
    assert split_device_path(root, None) == (None, ())


def test_shared_fixture_matrix_matches_expected_json():
    with open(os.path.join(SHARED, "expected.json")) as handle:
        expected = json.load(handle)
    topo = PciTopology(SysfsTree(os.path.join(SHARED, "sys")))
    names = dict(expected["gpus"], **expected["nics"])
    for left, row in expected["matrix"].items():
        for right, relation in row.items():
            assert topo.relation(names[left], names[right]) == relation, (left, right)
    # symmetric
    assert topo.relation(names["mlx5_3"], names["GPU0"]) == "PXB"


def test_shared_fixture_device_attributes():
    topo = PciTopology(SysfsTree(os.path.join(SHARED, "sys")))
    gpus = topo.find(vendor=0x10DE, base_class=0x03)
    assert [g.address for g in gpus] == ["0000:03:00.0", "0000:81:00.0"]
    gpu = topo.get("0000:03:00.0")
    assert gpu.host_bridge == "pci0000:00"
    assert gpu.chain == ("0000:00:01.0", "0000:01:00.0", "0000:02:00.0", "0000:03:00.0")
    assert gpu.driver == "nvidia"
    assert gpu.class_code == 0x030200
    assert gpu.as_dict()["device_id"] == "0x2330"
    assert topo.numa_node("0000:81:00.0") == 1
    assert topo.get("0000:01:00.0").is_bridge
    assert not gpu.is_bridge
    # the fixture has no config files: unreadable, not an error
    assert topo.read_config("0000:02:00.0") is None


def test_every_relation_in_the_switch_box(box):
    gpu0, gpu1, gpu2 = "0000:03:00.0", "0000:08:00.0", "0000:81:00.0"
    expected = {
        gpu0: {"0000:04:00.0": "PIX", "0000:04:00.2": "PIX", "0000:07:00.0": "PXB", "0000:09:00.0": "PHB", "0000:41:00.0": "NODE"},
        gpu1: {"0000:04:00.0": "PXB", "0000:04:00.2": "PXB", "0000:07:00.0": "PIX", "0000:09:00.0": "PHB", "0000:41:00.0": "NODE"},
        gpu2: {"0000:04:00.0": "SYS", "0000:04:00.2": "SYS", "0000:07:00.0": "SYS", "0000:09:00.0": "SYS", "0000:41:00.0": "SYS"},
    }
    for gpu, row in expected.items():
        for nic, relation in row.items():
            assert box.relation(gpu, nic) == relation, (gpu, nic)
            assert box.relation(nic, gpu) == relation, (nic, gpu)
    assert box.relation(gpu0, gpu1) == "PXB"
    assert box.relation(gpu0, gpu0) == "X"


def test_nccl_style_parent_walk(box):
    # GPU1 sits below switch B below switch A: two switch nodes, then the CPU
    assert box.switch_parents("0000:08:00.0") == [
        ("pci0000:00", ("0000:00:01.0", "0000:01:00.0", "0000:02:02.0", "0000:05:00.0")),
        ("pci0000:00", ("0000:00:01.0", "0000:01:00.0")),
        ("CPU", "pci0000:00"),
    ]
    # a NIC straight on a root port hangs off the CPU
    assert box.switch_parents("0000:09:00.0") == [("CPU", "pci0000:00")]


def test_path_bridges(box):
    # same switch: the GPU's downstream port, the upstream port once, the NIC's downstream port
    assert box.path_bridges("0000:03:00.0", "0000:04:00.0") == ["0000:02:00.0", "0000:01:00.0", "0000:02:01.0"]
    # nested switch
    assert box.path_bridges("0000:03:00.0", "0000:07:00.0") == \
        ["0000:02:00.0", "0000:01:00.0", "0000:02:02.0", "0000:05:00.0", "0000:06:00.0"]
    # through the host bridge: both root ports, no common bridge
    assert box.path_bridges("0000:03:00.0", "0000:09:00.0") == \
        ["0000:02:00.0", "0000:01:00.0", "0000:00:01.0", "0000:00:02.0"]
    # across host bridges
    assert box.path_bridges("0000:81:00.0", "0000:41:00.0") == ["0000:80:01.0", "0000:40:01.0"]


def test_sriov_links(box):
    pf, vf = box.get("0000:04:00.0"), box.get("0000:04:00.2")
    assert vf.is_vf and vf.physfn == "0000:04:00.0"
    assert not pf.is_vf
    assert pf.virtfns == ["0000:04:00.2"]
    assert pf.sriov_totalvfs == 8 and pf.sriov_numvfs == 1
    assert pf.as_dict()["sriov"] == {"totalvfs": 8, "numvfs": 1, "virtfns": ["0000:04:00.2"]}
    assert vf.as_dict()["sriov"] is None


def test_numa_falls_back_to_root_port(tmp_path):
    builder = build_switch_box(tmp_path)
    with open(os.path.join(builder.paths["0000:81:00.0"], "numa_node"), "w") as handle:
        handle.write("-1\n")
    topo = PciTopology(SysfsTree(builder.sys))
    assert topo.get("0000:81:00.0").numa_node is None
    assert topo.numa_node("0000:81:00.0") == 1


def test_unknown_numa_counts_as_same_node(tmp_path):
    builder = build_switch_box(tmp_path)
    for address in ("0000:81:00.0", "0000:80:01.0"):
        with open(os.path.join(builder.paths[address], "numa_node"), "w") as handle:
            handle.write("-1\n")
    topo = PciTopology(SysfsTree(builder.sys))
    assert topo.relation("0000:81:00.0", "0000:41:00.0") == "NODE"


def test_ext_capability_walk():
    config = config_space(0x1000, 0xC030, CLASS_BRIDGE, acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    assert ext_capabilities(config) == [(0x0001, 2, 0x100), (0x000D, 1, 0x148)]
    assert find_ext_capability(config, 0x000D) == 0x148
    assert read_u16(config, 0x148 + 6) == ACS_CTRL_LINUX_DEFAULT
    assert find_ext_capability(config_space(0x1000, 0xC030, CLASS_BRIDGE), 0x000D) is None
    # conventional configuration space and truncated (non-root) reads have no list
    assert ext_capabilities(config_space(0x1000, 0xC030, CLASS_BRIDGE, size=256)) == []
    assert ext_capabilities(config[:64]) == []
    assert read_u16(config[:64], 0x14E) is None


def test_ext_capability_loop_is_cut():
    config = bytearray(4096)
    config[0x100:0x104] = (0x0001 | (1 << 16) | (0x100 << 20)).to_bytes(4, "little")  # points at itself
    assert ext_capabilities(bytes(config)) == [(0x0001, 1, 0x100)]


def test_config_read_through_sysfs(box):
    data = box.read_config("0000:02:00.0")
    assert len(data) == 4096
    assert read_u16(data, 0) == 0x1000
    assert len(box.read_config("0000:06:00.0")) == 64


def test_procfs_style_folders_are_still_devices(tmp_path):
    """procfs captures keep bus/pci/devices entries as folders, not links."""
    dev = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:00:1f.6"
    dev.mkdir(parents=True)
    (dev / "vendor").write_text("0x8086\n")
    (dev / "class").write_text("0x020000\n")
    (dev / "numa_node").write_text("-1\n")
    topo = PciTopology(SysfsTree(str(tmp_path / "sys")))
    got = topo.get("0000:00:1f.6")
    assert got.chain == ("0000:00:1f.6",) and got.host_bridge is None
    assert got.vendor == 0x8086 and got.numa_node is None


# --------------------------------------------------------------------------
# a REAL capture: the lab VM (tests/unit/fixtures/pci/README.md)
# --------------------------------------------------------------------------
LAB_CAPTURE = os.path.join(HERE, "..", "..", "..", "fixtures", "pci", "lab_debian12_q35.json")


def test_lab_capture_topology(tmp_path):
    from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import load_capture
    builder = load_capture(tmp_path, LAB_CAPTURE)
    topo = PciTopology(SysfsTree(builder.sys))
    assert sorted(topo.devices) == ["0000:00:00.0", "0000:00:01.0", "0000:00:02.0", "0000:00:03.0",
                                    "0000:00:1f.0", "0000:00:1f.2", "0000:00:1f.3"]
    nic = topo.get("0000:00:01.0")
    assert (nic.vendor, nic.device, nic.class_code, nic.driver) == (0x1AF4, 0x1000, 0x020000, "virtio-pci")
    assert nic.host_bridge == "pci0000:00" and nic.chain == ("0000:00:01.0",)
    assert nic.numa_node is None and topo.numa_node("0000:00:01.0") is None   # the VM reports -1
    assert nic.iommu_group is None
    assert topo.find(vendor=0x10DE) == []
    assert [d.address for d in topo.devices.values() if d.is_bridge] == []
    # two functions on the root bus of one host bridge: through the host bridge
    assert topo.relation("0000:00:01.0", "0000:00:02.0") == "PHB"
    assert topo.path_bridges("0000:00:01.0", "0000:00:02.0") == []
    config = topo.read_config("0000:00:01.0")
    assert len(config) == 256 and read_u16(config, 0) == 0x1AF4 and ext_capabilities(config) == []


def test_lab_capture_nonroot_config_is_64_bytes(tmp_path):
    from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import load_capture
    builder = load_capture(tmp_path, LAB_CAPTURE, as_root=False)
    topo = PciTopology(SysfsTree(builder.sys))
    assert set(len(topo.read_config(a)) for a in topo.devices) == {64}


def test_pci_addresses_full_match():
    """"$" matched before a trailing newline; a folder named "0000:3b:00.0\\n" is not a PCI function."""
    assert is_pci_address("0000:3b:00.0") and is_pci_address("10000:01:00.0")
    assert not is_pci_address("0000:3b:00.0\n") and not is_pci_address("x0000:3b:00.0") and not is_pci_address(None)
