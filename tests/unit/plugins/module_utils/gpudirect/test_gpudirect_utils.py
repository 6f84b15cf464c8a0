# -*- coding: utf-8 -*-
"""Unit tests for module_utils/gpudirect/: probes, readiness, change plan.

Trees: the shared derived fixture ``derived_gpu_nic_topology`` and the DERIVED
layouts of tests/unit/fixtures/pci (see README.md there). No GPU machine was at
hand: nothing here is a capture of a GPU host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal
import stat
import struct

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import acs as gd_acs
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import acs_boot as gd_acs_boot
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import plan as gd_plan
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import runner as gd_runner
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import PciTopology
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (
    ACS_CTRL_LINUX_DEFAULT,
    CLASS_BRIDGE,
    PciTreeBuilder,
    build_ready_host,
    build_switch_box,
    config_space,
    set_acs_control,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "..", "fixtures", "sysfs", "derived_gpu_nic_topology")


def tree_of(builder):
    return SysfsTree(builder.sys, builder.proc)


def gather(builder, acs="audit"):
    return gd_probes.gather(tree_of(builder), acs)


def kinds(actions):
    return [(a.kind, a.target) for a in actions]


# --------------------------------------------------------------------------
# topology and facts
# --------------------------------------------------------------------------
def test_shared_fixture_facts_match_expected_json():
    with open(os.path.join(SHARED, "expected.json")) as handle:
        expected = json.load(handle)
    facts = gd_probes.gather(SysfsTree(os.path.join(SHARED, "sys"), os.path.join(SHARED, "proc")), "audit")
    assert [g["pci_address"] for g in facts["gpus"]] == sorted(expected["gpus"].values())
    assert dict((n["name"], n["pci_address"]) for n in facts["nics"]) == expected["nics"]
    for gpu_name, row in expected["matrix"].items():
        address = expected["gpus"][gpu_name]
        for other, relation in row.items():
            if other in expected["nics"]:
                assert facts["topology"]["matrix"][address][other] == relation
            else:
                assert facts["topology"]["gpu_matrix"][address][expected["gpus"][other]] == relation
    assert facts["topology"]["nearest_nic"]["0000:03:00.0"] == {"name": "mlx5_0", "pci_address": "0000:04:00.0", "relation": "PIX"}
    assert facts["topology"]["nearest_nic"]["0000:81:00.0"]["relation"] == "SYS"
    # the fixture carries no config files: every bridge on a shared-switch path is "unreadable"
    states = dict((b["pci_address"], b["state"]) for b in facts["acs"]["bridges"])
    assert states == dict.fromkeys(["0000:01:00.0", "0000:02:00.0", "0000:02:01.0", "0000:02:02.0",
                                    "0000:06:00.0", "0000:07:00.0"], "unreadable")
    assert facts["ready"] is False
    assert "GPU 0000:81:00.0 has no RDMA NIC under its PCIe root complex (nearest: mlx5_0, SYS): " \
           "GPUDirect RDMA needs both devices under the same root complex" in facts["reasons"]


def test_switch_box_facts(tmp_path):
    facts = gather(build_switch_box(tmp_path))
    assert [g["pci_address"] for g in facts["gpus"]] == ["0000:03:00.0", "0000:08:00.0", "0000:81:00.0"]
    assert facts["gpus"][0] == {"pci_address": "0000:03:00.0", "device_id": "0x2330", "class": "0x030200",
                                "driver": "nvidia", "numa_node": 0, "iommu_group": None, "is_vf": False, "physfn": None}
    # rxe0 has no PCI device: not a GPUDirect NIC
    assert [n["name"] for n in facts["nics"]] == ["mlx5_0", "mlx5_1", "mlx5_3", "mlx5_4", "mlx5_5"]
    vf = facts["nics"][-1]
    assert vf["is_vf"] and vf["physfn"] == "0000:04:00.0" and vf["driver"] == "mlx5_core"
    matrix = facts["topology"]["matrix"]
    assert matrix["0000:03:00.0"] == {"mlx5_0": "PIX", "mlx5_5": "PIX", "mlx5_1": "PXB", "mlx5_3": "PHB", "mlx5_4": "NODE"}
    assert matrix["0000:08:00.0"] == {"mlx5_0": "PXB", "mlx5_5": "PXB", "mlx5_1": "PIX", "mlx5_3": "PHB", "mlx5_4": "NODE"}
    assert set(matrix["0000:81:00.0"].values()) == {"SYS"}
    nearest = facts["topology"]["nearest_nic"]
    assert nearest["0000:03:00.0"]["name"] == "mlx5_0"     # the PF wins over its VF at the same distance
    assert nearest["0000:08:00.0"] == {"name": "mlx5_1", "pci_address": "0000:07:00.0", "relation": "PIX"}
    assert facts["topology"]["gpu_matrix"]["0000:03:00.0"] == {"0000:08:00.0": "PXB", "0000:81:00.0": "SYS"}


def test_switch_box_acs_states(tmp_path):
    facts = gather(build_switch_box(tmp_path))
    by = dict((b["pci_address"], b) for b in facts["acs"]["bridges"])
    assert sorted(by) == ["0000:01:00.0", "0000:02:00.0", "0000:02:01.0", "0000:02:02.0",
                          "0000:05:00.0", "0000:06:00.0", "0000:06:01.0"]
    enabled = by["0000:02:00.0"]
    assert enabled["state"] == "enabled"
    assert enabled["offset"] == "0x148" and enabled["capability"] == "0x005f" and enabled["control"] == "0x001d"
    assert enabled["flags"] == {"source_validation": True, "translation_blocking": False, "request_redirect": True,
                                "completion_redirect": True, "upstream_forwarding": True, "egress_control": False,
                                "direct_translated_p2p": False}
    assert by["0000:02:01.0"]["state"] == "disabled"
    assert by["0000:02:02.0"]["state"] == "disabled" and by["0000:02:02.0"]["control"] == "0x0011"
    assert by["0000:01:00.0"]["state"] == "absent"
    assert by["0000:01:00.0"]["detail"] == "0000:01:00.0 has no ACS extended capability"
    unreadable = by["0000:06:00.0"]
    assert unreadable["state"] == "unreadable"
    assert "only the first 64 bytes" in unreadable["detail"] and "need root" in unreadable["detail"]
    assert by["0000:06:01.0"]["control"] == "0x0004"
    pairs = [(p["gpu"], p["nic"], p["relation"]) for p in facts["acs"]["pairs"]]
    assert ("0000:08:00.0", "mlx5_1", "PIX") in pairs and ("0000:03:00.0", "mlx5_1", "PXB") in pairs
    assert not [p for p in pairs if p[2] not in ("PIX", "PXB")]


def test_switch_box_reasons_name_bridge_gpu_and_nics(tmp_path):
    reasons = gather(build_switch_box(tmp_path))["reasons"]
    assert "ACS request-redirect is on at 0000:06:01.0 between GPU 0000:08:00.0 and mlx5_0, mlx5_1, mlx5_5" in reasons
    assert "ACS request-redirect and completion-redirect are on at 0000:02:00.0 between GPU 0000:03:00.0 " \
           "and mlx5_0, mlx5_1, mlx5_5" in reasons
    unknown = [r for r in reasons if r.startswith("the ACS state at 0000:06:00.0 between GPU 0000:03:00.0 and mlx5_1 is unknown")]
    assert len(unknown) == 1
    # disabled or absent ACS is no reason; neither are root ports of PHB/NODE/SYS paths
    assert not [r for r in reasons if "0000:02:01.0" in r or "0000:00:01.0" in r or "0000:01:00.0" in r]


def test_acs_ignore_reads_no_config_space(tmp_path):
    facts = gather(build_switch_box(tmp_path), acs="ignore")
    assert facts["acs"]["bridges"] == []
    assert len(facts["acs"]["pairs"]) == 6  # GPU0 and GPU1, each with mlx5_0, mlx5_1, mlx5_5
    assert not [r for r in facts["reasons"] if "ACS" in r]


def test_acs_state_conventional_and_missing_config(tmp_path):
    builder = PciTreeBuilder(tmp_path)
    hb = builder.host_bridge("pci0000:00")
    builder.bridge(hb, "0000:00:1c.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, config_size=256)
    builder.device(hb, "0000:00:1d.0", 0x8086, 0x1234, CLASS_BRIDGE)
    topo = PciTopology(tree_of(builder))
    assert gd_acs.acs_state(topo, "0000:00:1c.0")["state"] == "absent"
    assert "no PCIe extended configuration space" in gd_acs.acs_state(topo, "0000:00:1c.0")["detail"]
    assert gd_acs.acs_state(topo, "0000:00:1d.0")["state"] == "unreadable"


# --------------------------------------------------------------------------
# driver, dma-buf, peer memory, IOMMU
# --------------------------------------------------------------------------
@pytest.mark.parametrize("flavour,version,arch,expect", [
    ("open", "550.54.15", "x86_64", ("open", "550.54.15", True)),
    ("open", "580.95.05", "aarch64", ("open", "580.95.05", True)),
    ("proprietary", "535.104.05", "x86_64", ("proprietary", "535.104.05", True)),
    ("proprietary", "460.91.03", "x86_64", ("proprietary", "460.91.03", False)),
    ("proprietary", "515.76", "x86_64", ("proprietary", "515.76", True)),
])
def test_nvidia_driver_version_file(tmp_path, flavour, version, arch, expect):
    builder = PciTreeBuilder(tmp_path)
    builder.nvidia_driver(version, flavour, arch)
    os.unlink(os.path.join(builder.sys, "module", "nvidia", "version"))  # only /proc/driver/nvidia/version
    driver = gd_probes.nvidia_driver(tree_of(builder))
    assert (driver["flavour"], driver["version"], driver["ships_nvidia_peermem"]) == expect
    assert driver["loaded"] is True


def test_nvidia_driver_absent(tmp_path):
    driver = gd_probes.nvidia_driver(tree_of(PciTreeBuilder(tmp_path)))
    assert driver == {"loaded": False, "version": None, "flavour": None, "ships_nvidia_peermem": None}


def test_ready_host_is_ready(tmp_path):
    facts = gather(build_ready_host(tmp_path))
    assert facts["ready"] is True, facts["reasons"]
    assert facts["reasons"] == [] and facts["warnings"] == []
    assert facts["dmabuf"] == {"possible": True, "kernel_release": "6.1.0-18-amd64", "kernel_ok": True, "driver_open": True,
                               "driver_ok": True, "rdma_core_version": "44", "libibverbs": "libibverbs.so.1.14.44.0",
                               "rdma_core_ok": True, "missing": []}
    assert facts["peermem"] == {"nvidia_peermem": False, "nv_peer_mem": False, "loaded": [], "memory_peers": None,
                                "module": "nvidia_peermem", "needed": False, "peer_memory_api": True}
    assert facts["iommu"]["mode"] == "passthrough"
    assert facts["iommu"]["cmdline"] == {"iommu": "pt"}
    assert facts["iommu"]["devices"] == {"0000:18:00.0": {"group": 20, "type": "identity"},
                                         "0000:19:00.0": {"group": 21, "type": "identity"}}
    assert facts["driver"]["flavour"] == "open"


@pytest.mark.parametrize("kwargs,missing", [
    ({"driver_flavour": "proprietary"}, "the NVIDIA driver is proprietary, DMA-BUF export needs the open kernel modules"),
    ({"driver_version": "515.43.03"}, "NVIDIA driver 515.43.03 is older than 515.43.04"),
    ({"kernel": "5.10.0-28-amd64"}, "Linux 5.10.0-28-amd64 is older than 5.12 (no ib_umem_dmabuf)"),
    ({"libibverbs": "libibverbs.so.1.11.33.2"}, "libibverbs libibverbs.so.1.11.33.2 has no ibv_reg_dmabuf_mr (needs rdma-core 34 or later)"),
    ({"libibverbs": None}, "libibverbs (rdma-core) was not found"),
    ({"driver_flavour": None}, "the NVIDIA driver is not loaded"),
])
def test_dmabuf_rule_names_each_unmet_condition(tmp_path, kwargs, missing):
    facts = gather(build_ready_host(tmp_path, **kwargs))
    assert facts["dmabuf"]["possible"] is False
    assert facts["dmabuf"]["missing"] == [missing]
    assert facts["peermem"]["needed"] is True
    assert facts["ready"] is False
    assert "GPU memory cannot be registered with the NIC: DMA-BUF is not possible (%s) and nvidia_peermem is not loaded" \
        % missing in facts["reasons"]


def test_rdma_core_found_in_lib64(tmp_path):
    builder = build_ready_host(tmp_path, libibverbs=None)
    builder.libibverbs("libibverbs.so.1.14.48.0", libdir=("usr", "lib64"))
    builder.libibverbs("libibverbs.so.1", libdir=("usr", "lib64"))  # the soname link name does not count
    assert gather(builder)["dmabuf"]["rdma_core_version"] == "48"


def test_peermem_loaded_and_registered_serves_without_dmabuf(tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary", driver_version="535.104.05")
    builder.module("nvidia_peermem")
    builder.memory_peer("nv_mem")
    facts = gather(builder)
    assert facts["ready"] is True, facts["reasons"]
    assert facts["peermem"]["loaded"] == ["nvidia_peermem"] and facts["peermem"]["memory_peers"] == ["nv_mem"]


def test_trap_peermem_loaded_but_not_registered(tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary")
    builder.module("nvidia_peermem")
    facts = gather(builder)
    assert facts["ready"] is False
    assert facts["reasons"][0] == ("nvidia_peermem is loaded but no peer-memory client is registered under %s: the NIC "
                                   "cannot pin GPU memory through it" % os.path.join(builder.sys, "kernel", "mm", "memory_peers"))
    assert facts["reasons"][-1] == "nvidia_peermem is loaded but GPUDirect RDMA is still unusable for the reasons above"


def test_trap_peermem_loaded_but_iommu_translates(tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary", iommu="DMA-FQ")
    builder.module("nvidia_peermem")
    builder.memory_peer()
    facts = gather(builder)
    assert facts["iommu"]["mode"] == "translated"
    assert facts["reasons"] == [
        "the IOMMU translates DMA for GPU 0000:18:00.0 (group 20, type DMA-FQ): GPUDirect RDMA needs the IOMMU off or in passthrough (iommu=pt)",
        "the IOMMU translates DMA for NIC 0000:19:00.0 (group 21, type DMA-FQ): GPUDirect RDMA needs the IOMMU off or in passthrough (iommu=pt)",
        "nvidia_peermem is loaded but GPUDirect RDMA is still unusable for the reasons above",
    ]


def test_trap_legacy_nv_peer_mem_on_a_driver_that_ships_nvidia_peermem(tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary", driver_version="535.104.05")
    builder.module("nv_peer_mem")
    builder.memory_peer("nv_mem")
    facts = gather(builder)
    assert "the legacy nv_peer_mem module is loaded although NVIDIA driver 535.104.05 ships nvidia_peermem (since R470): " \
           "unload nv_peer_mem, remove the nvidia-peer-memory package and use nvidia_peermem" in facts["reasons"]
    actions = gd_plan.plan(facts, "auto", True, "audit", None)
    assert kinds(actions) == [("unload_module", "nv_peer_mem"), ("load_module", "nvidia_peermem"),
                              ("write_file", gd_plan.MODULES_LOAD_FILE)]


def test_old_driver_uses_nv_peer_mem(tmp_path):
    facts = gather(build_ready_host(tmp_path, driver_flavour="proprietary", driver_version="460.91.03"))
    assert facts["peermem"]["module"] == "nv_peer_mem"
    assert kinds(gd_plan.plan(facts, "auto", False, "audit", None)) == [("load_module", "nv_peer_mem")]


def test_dmabuf_possible_with_peermem_loaded_warns(tmp_path):
    builder = build_ready_host(tmp_path)
    builder.module("nvidia_peermem")
    builder.memory_peer()
    facts = gather(builder)
    assert facts["ready"] is True
    assert facts["warnings"] == ["DMA-BUF can register GPU memory here; nvidia_peermem is not needed"]


def test_inbox_stack_without_peer_memory_api(tmp_path):
    facts = gather(build_ready_host(tmp_path, driver_flavour="proprietary", peer_memory_api=False))
    assert facts["peermem"]["peer_memory_api"] is False
    assert any("ib_core has no peer-memory API" in r and "nvidia_peermem cannot load" in r for r in facts["reasons"])
    # auto: nothing loaded, nothing persisted (a modules-load.d entry would fail at every boot)
    assert gd_plan.plan(facts, "auto", True, "audit", None) == []
    with pytest.raises(gd_plan.PlanError) as err:
        gd_plan.plan(facts, "present", True, "audit", None)
    assert "ib_core has no peer-memory API" in str(err.value)


def test_gpu_bound_to_another_driver(tmp_path):
    builder = build_ready_host(tmp_path)
    os.unlink(os.path.join(builder.paths["0000:18:00.0"], "driver"))
    os.symlink("../../../../../bus/pci/drivers/vfio-pci", os.path.join(builder.paths["0000:18:00.0"], "driver"))
    assert "GPU 0000:18:00.0 is bound to vfio-pci, not to the nvidia driver" in gather(builder)["reasons"]


def test_phb_nearest_is_a_warning(tmp_path):
    builder = build_ready_host(tmp_path)
    # a second GPU straight on another root port of the same host bridge: nearest NIC is PHB
    rp = builder.bridge(builder.sys + "/devices/pci0000:15", "0000:15:02.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    builder.gpu(rp, "0000:1a:00.0")
    facts = gather(builder)
    assert facts["ready"] is True
    assert facts["warnings"] == ["the nearest RDMA NIC of GPU 0000:1a:00.0 is mlx5_0 through the host bridge (PHB): "
                                 "GPUDirect RDMA works but slower than through a PCIe switch"]


def test_host_without_gpu(tmp_path):
    """What a lab VM looks like: a soft-RoCE device, no GPU."""
    builder = PciTreeBuilder(tmp_path)
    hb = builder.host_bridge("pci0000:00")
    builder.device(hb, "0000:00:03.0", 0x1AF4, 0x1000, 0x020000, driver="virtio-pci")
    builder.soft_ibdev("rxe0")
    builder.kernel("6.1.0-18-amd64")
    facts = gather(builder)
    assert facts["ready"] is False
    assert facts["gpus"] == [] and facts["nics"] == []
    assert facts["reasons"] == [
        "no NVIDIA GPU (PCI vendor 0x10de, class 0x03xx) under %s" % os.path.join(builder.sys, "bus", "pci", "devices"),
        "no RDMA NIC on a PCI device under %s (soft RDMA such as rxe or siw cannot reach GPU memory)"
        % os.path.join(builder.sys, "class", "infiniband"),
    ]
    assert facts["iommu"]["mode"] == "off"
    assert facts["peermem"]["needed"] is False
    assert gd_plan.plan(facts, "auto", True, "disable", None) == []
    assert gd_plan.plan(facts, "present", True, "disable", None) == []
    # absent still cleans up after itself
    assert kinds(gd_plan.plan(facts, "absent", True, "audit", "x\n")) == [("remove_file", gd_plan.MODULES_LOAD_FILE)]


# --------------------------------------------------------------------------
# plan
# --------------------------------------------------------------------------
def test_plan_acs_disable_clears_the_redirect_bits_and_remembers_old_value(tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    tree = tree_of(builder)
    topo = PciTopology(tree)
    facts = gd_probes.gather(tree, "audit", topo=topo)
    assert facts["reasons"] == [
        "ACS request-redirect and completion-redirect are on at 0000:17:00.0 between GPU 0000:18:00.0 and mlx5_0",
        "ACS request-redirect and completion-redirect are on at 0000:17:01.0 between GPU 0000:18:00.0 and mlx5_0",
    ]
    assert gd_plan.plan(facts, "auto", True, "audit", None, topo=topo) == []
    actions = gd_plan.plan(facts, "auto", True, "disable", None, topo=topo)
    assert [(a.kind, a.target, a.argv, a.acs) for a in actions] == [
        ("acs_disable", address, None, {"config": os.path.join(builder.paths[address], "config"), "offset": 0x14E,
                                        "old": 0x001D, "new": 0x0011, "ids": ["0x1000", "0xc030"]})
        for address in ("0000:17:00.0", "0000:17:01.0")
    ]
    assert actions[0].describe() == ("write 0x0011 to the ACS control register of 0000:17:00.0 "
                                     "(config offset 0x14e, was 0x001d)")
    before = gd_plan.state_view(facts, None)
    assert gd_plan.predicted_view(before, actions)["acs_control"] == {"0000:17:00.0": "0x0011", "0000:17:01.0": "0x0011"}


def test_plan_in_container_mode_roots_modprobe_and_the_file(tmp_path):
    facts = gather(build_ready_host(tmp_path, driver_flavour="proprietary"))
    actions = gd_plan.plan(facts, "auto", True, "audit", None, host_root="/host")
    assert [(a.kind, a.argv, a.undo_argv, a.path) for a in actions] == [
        ("load_module", ["modprobe", "-d", "/host", "nvidia_peermem"], ["modprobe", "-d", "/host", "-r", "nvidia_peermem"], None),
        ("write_file", None, None, "/host/etc/modules-load.d/rdma-fabric-gpudirect.conf"),
    ]


def test_plan_peermem_modes(tmp_path):
    facts = gather(build_ready_host(tmp_path, driver_flavour="proprietary"))
    content = gd_plan.MODULES_LOAD_HEADER + "nvidia_peermem\n"
    auto = gd_plan.plan(facts, "auto", True, "audit", None)
    assert [(a.kind, a.argv) for a in auto] == [("load_module", ["modprobe", "nvidia_peermem"]), ("write_file", None)]
    assert auto[1].content == content and auto[1].old_content is None
    assert kinds(gd_plan.plan(facts, "auto", False, "audit", None)) == [("load_module", "nvidia_peermem")]
    # file already right: only the runtime load
    assert kinds(gd_plan.plan(facts, "auto", True, "audit", content)) == [("load_module", "nvidia_peermem")]
    # dma-buf host: auto does not load, and takes its own file away
    ready = gather(build_ready_host(tmp_path / "other"))
    assert kinds(gd_plan.plan(ready, "auto", True, "audit", content)) == [("remove_file", gd_plan.MODULES_LOAD_FILE)]
    assert kinds(gd_plan.plan(ready, "present", True, "audit", content)) == [("load_module", "nvidia_peermem")]


def test_plan_absent_unloads_both(tmp_path):
    builder = build_ready_host(tmp_path)
    builder.module("nvidia_peermem")
    builder.module("nv_peer_mem")
    facts = gather(builder)
    actions = gd_plan.plan(facts, "absent", True, "audit", "old\n")
    assert [(a.kind, a.argv) for a in actions] == [
        ("unload_module", ["modprobe", "-r", "nv_peer_mem"]),
        ("unload_module", ["modprobe", "-r", "nvidia_peermem"]),
        ("remove_file", None),
    ]
    view = gd_plan.predicted_view(gd_plan.state_view(facts, "old\n"), actions)
    assert view["peermem_loaded"] == [] and view["modules_load_file"] is None


# --------------------------------------------------------------------------
# the runner
# --------------------------------------------------------------------------
class FakeModule(object):
    """Test double for AnsibleModule: records the argv lists it is asked to run
    and answers from a script, because modprobe needs root and a kernel that
    has the module. ``atomic_move`` is a plain rename, as the real one is on
    one filesystem. ``on_run(argv)`` runs in the middle of a command (to send
    a real signal to this process, as Ansible's timeout would)."""

    def __init__(self, failing=(), on_run=None):
        self.commands = []
        self.failing = failing
        self.on_run = on_run

    @staticmethod
    def get_bin_path(name, required=False):
        return "/usr/sbin/" + name

    def run_command(self, argv, handle_exceptions=True):
        assert handle_exceptions is False  # a command that cannot start must raise into the rollback
        self.commands.append(argv)
        if self.on_run:
            self.on_run(argv)
        if any(part in argv for part in self.failing):
            return 1, "", "modprobe: FATAL: Module %s not found" % argv[-1]
        return 0, "", ""

    @staticmethod
    def atomic_move(src, dest):
        os.rename(src, dest)


def test_runner_writes_file_atomically_with_mode(tmp_path, monkeypatch):
    path = str(tmp_path / "etc" / "modules-load.d" / "x.conf")
    actions = [gd_plan.Action("load_module", "nvidia_peermem", argv=["modprobe", "nvidia_peermem"],
                              undo_argv=["modprobe", "-r", "nvidia_peermem"]),
               gd_plan.Action("write_file", path, path=path, content="nvidia_peermem\n")]
    module = FakeModule()
    gd_runner.ChangeRunner(module).run(actions)
    assert module.commands == [["/usr/sbin/modprobe", "nvidia_peermem"]]
    with open(path) as handle:
        assert handle.read() == "nvidia_peermem\n"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert all(a.done for a in actions)
    assert os.listdir(os.path.dirname(path)) == ["x.conf"]


def acs_words_of(builder, *addresses):
    return [struct.unpack_from("<H", builder.read_config(a), 0x14E)[0] for a in addresses]


def planned(builder, acs="disable", peermem="auto", current_file=None, modules_load_file=None):
    tree = tree_of(builder)
    topo = PciTopology(tree)
    facts = gd_probes.gather(tree, "audit", topo=topo)
    return gd_plan.plan(facts, peermem, True, acs, current_file, modules_load_file=modules_load_file, topo=topo)


def test_runner_restores_what_it_did_when_a_step_fails(tmp_path):
    """Real ACS writes into the tree's config files; the second bridge disappears before its turn (ENOENT)."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    path = str(tmp_path / "x.conf")
    with open(path, "w") as handle:
        handle.write("old\n")
    actions = planned(builder, current_file="old\n", modules_load_file=path)
    assert kinds(actions) == [("load_module", "nvidia_peermem"), ("write_file", path),
                              ("acs_disable", "0000:17:00.0"), ("acs_disable", "0000:17:01.0")]
    os.unlink(os.path.join(builder.paths["0000:17:01.0"], "config"))  # hot-removed between plan and change
    module = FakeModule()
    with pytest.raises(gd_runner.ChangeFailed) as err:
        gd_runner.ChangeRunner(module).run(actions)
    assert module.commands == [["/usr/sbin/modprobe", "nvidia_peermem"], ["/usr/sbin/modprobe", "-r", "nvidia_peermem"]]
    with open(path) as handle:
        assert handle.read() == "old\n"
    assert acs_words_of(builder, "0000:17:00.0") == [ACS_CTRL_LINUX_DEFAULT]   # written, then written back
    message = str(err.value)
    assert message.startswith("write 0x0011 to the ACS control register of 0000:17:01.0 (config offset 0x14e, was 0x001d): "
                              "cannot read the configuration space ")
    assert message.endswith("; restored: write 0x0011 to the ACS control register of 0000:17:00.0 (config offset 0x14e, "
                            "was 0x001d), write %s, modprobe nvidia_peermem" % path)
    assert not any(a.done for a in actions) and not err.value.interrupted


def plan_with_saved(builder, acs, saved_file, peermem="auto"):
    tree = tree_of(builder)
    topo = PciTopology(tree)
    facts = gd_probes.gather(tree, "audit", topo=topo)
    content = gd_plan.read_text_file(saved_file, tree)
    return gd_plan.plan(facts, peermem, False, acs, None, topo=topo, saved_file=saved_file, saved_content=content)


def test_acs_words_kept_at_first_clear_come_back_on_enable(tmp_path):
    """disable keeps the words once (real writes into the tree's config files), enable puts them back exactly
    (egress control too, which the kernel's boot default would not set) and removes the record."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    builder.write_config("0000:17:01.0", set_acs_control(builder.read_config("0000:17:01.0"), 0x003D))
    saved = str(tmp_path / "var" / "lib" / "rdma-fabric" / "gpudirect-acs-before.json")
    actions = plan_with_saved(builder, "disable", saved)
    assert kinds(actions) == [("save_file", saved), ("acs_disable", "0000:17:00.0"), ("acs_disable", "0000:17:01.0")]
    gd_runner.ChangeRunner(FakeModule()).run(actions)
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [0x0011, 0x0011]
    with open(saved) as handle:
        record = json.load(handle)
    assert record == {"schema": 1, "bridges": {
        "0000:17:00.0": {"control": "0x001d", "ids": ["0x1000", "0xc030"]},
        "0000:17:01.0": {"control": "0x003d", "ids": ["0x1000", "0xc030"]}}}
    # a second clear (after a reboot turned ACS on again) keeps the first record
    builder.write_config("0000:17:00.0", set_acs_control(builder.read_config("0000:17:00.0"), ACS_CTRL_LINUX_DEFAULT))
    assert kinds(plan_with_saved(builder, "disable", saved)) == [("acs_disable", "0000:17:00.0")]
    builder.write_config("0000:17:00.0", set_acs_control(builder.read_config("0000:17:00.0"), 0x0011))
    actions = plan_with_saved(builder, "enable", saved, peermem="absent")
    assert [(a.kind, a.target, a.acs and (a.acs["old"], a.acs["new"])) for a in actions] == [
        ("acs_enable", "0000:17:00.0", (0x0011, 0x001D)),
        ("acs_enable", "0000:17:01.0", (0x0011, 0x003D)),
        ("remove_saved", saved, None)]
    assert actions[0].describe() == "write 0x001d to the ACS control register of 0000:17:00.0 (config offset 0x14e, was 0x0011)"
    gd_runner.ChangeRunner(FakeModule()).run(actions)
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x003D]
    assert not os.path.exists(saved)
    # nothing left to do: no action, so the module reports no change
    assert plan_with_saved(builder, "enable", saved, peermem="absent") == []


def test_enable_without_a_record_sets_the_kernels_boot_bits(tmp_path):
    """No record (the role's first clear predates it, or ACS was cleared by hand): request and completion
    redirect where the bridge has them, other bits kept; a bridge whose record names other ids gets the same."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=0x0011)
    saved = str(tmp_path / "before.json")
    actions = plan_with_saved(builder, "enable", saved)
    assert [(a.kind, a.target, a.acs["old"], a.acs["new"]) for a in actions] == [
        ("acs_enable", "0000:17:00.0", 0x0011, 0x001D), ("acs_enable", "0000:17:01.0", 0x0011, 0x001D)]
    with open(saved, "w") as handle:
        json.dump({"schema": 1, "bridges": {"0000:17:00.0": {"control": "0x0000", "ids": ["0x8086", "0x1234"]},
                                            "0000:17:01.0": {"control": "0x0011", "ids": ["0x1000", "0xc030"]}}}, handle)
    actions = plan_with_saved(builder, "enable", saved)
    # 17:00.0 was renumbered to another device: boot default; 17:01.0 had no redirect before the role: left off
    assert [(a.kind, a.target) for a in actions] == [("acs_enable", "0000:17:00.0"), ("remove_saved", saved)]
    assert actions[0].acs["new"] == 0x001D


@pytest.mark.parametrize("content", ["{", "[]", '{"schema": 2, "bridges": {}}', '{"schema": 1, "bridges": {"a": {"control": "zz"}}}'])
def test_an_unusable_record_fails_before_any_change_naming_the_file(tmp_path, content):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=0x0011)
    saved = str(tmp_path / "before.json")
    with open(saved, "w") as handle:
        handle.write(content)
    with pytest.raises(gd_plan.PlanError) as err:
        plan_with_saved(builder, "enable", saved)
    assert str(err.value).startswith("%s (the ACS words kept before the first clear) is not usable: " % saved)
    assert "Remove it to restore the kernel's boot default" in str(err.value)


def test_runner_refuses_an_acs_word_someone_else_changed(tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    actions = planned(builder)
    builder.write_config("0000:17:01.0", set_acs_control(builder.read_config("0000:17:01.0"), 0x0005))
    with pytest.raises(gd_runner.ChangeFailed) as err:
        gd_runner.ChangeRunner(FakeModule()).run(actions)
    assert "reads 0x0005, not 0x001d: changed by someone else" in str(err.value)
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT, 0x0005]


def test_sigterm_during_a_change_undoes_everything_done(tmp_path):
    """A REAL SIGTERM (sent to this process in the middle of a command, as Ansible's timeout does) rolls back
    the step it interrupted and every one before it; a second SIGTERM during the rollback waits for its end."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    path = str(tmp_path / "x.conf")
    actions = planned(builder, current_file=None, modules_load_file=path)[::-1]  # ACS words first, here
    actions.insert(2, gd_plan.Action("write_file", path, path=path, content="new\n", old_content=None))
    actions.append(gd_plan.Action("load_module", "nvidia_peermem", argv=["modprobe", "nvidia_peermem"],
                                  undo_argv=["modprobe", "-r", "nvidia_peermem"]))
    previous = signal.getsignal(signal.SIGTERM)

    def kill_me(argv):
        os.kill(os.getpid(), signal.SIGTERM)

    module = FakeModule(on_run=kill_me)
    with pytest.raises(gd_runner.ChangeFailed) as err:
        gd_runner.ChangeRunner(module).run(actions)
    assert err.value.interrupted
    # the interrupted modprobe was undone (the undo itself got a SIGTERM too: it was held until the end)
    assert module.commands == [["/usr/sbin/modprobe", "nvidia_peermem"], ["/usr/sbin/modprobe", "-r", "nvidia_peermem"]]
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT] * 2
    assert not os.path.exists(path)
    message = str(err.value)
    assert message.startswith("modprobe nvidia_peermem: interrupted by SIGTERM; restored: modprobe nvidia_peermem, ")
    assert message.endswith("; SIGTERM arrived during the rollback, which ran to its end")
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_command_that_cannot_start_is_rolled_back_like_a_failure(tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    actions = planned(builder) + [gd_plan.Action("load_module", "nvidia_peermem", argv=["modprobe", "nvidia_peermem"],
                                                 undo_argv=["modprobe", "-r", "nvidia_peermem"])]

    class Gone(FakeModule):
        def run_command(self, argv, handle_exceptions=True):
            raise FileNotFoundError(2, "No such file or directory", argv[0])  # what subprocess raises

    with pytest.raises(gd_runner.ChangeFailed) as err:
        gd_runner.ChangeRunner(Gone()).run(actions)
    assert str(err.value).startswith("modprobe nvidia_peermem: cannot run: No such file or directory (ENOENT); restored: ")
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT] * 2


def test_config_space_builder_matches_reader(tmp_path):
    """The builder's ACS image reads back through the real parser."""
    builder = PciTreeBuilder(tmp_path)
    builder.bridge(builder.host_bridge("pci0000:00"), "0000:00:01.0", acs_ctrl=0x0005)
    entry = gd_acs.acs_state(PciTopology(tree_of(builder)), "0000:00:01.0")
    assert entry["state"] == "enabled" and entry["control"] == "0x0005"
    assert gd_acs.acs_words(entry) == ["request-redirect"]
    assert config_space(0x1000, 0x1, CLASS_BRIDGE, size=64) == config_space(0x1000, 0x1, CLASS_BRIDGE)[:64]


def test_acs_on_the_lab_capture_as_root_and_not(tmp_path):
    """REAL configuration spaces of the lab VM: 256 bytes as root, 64 as nobody."""
    from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import load_capture
    capture = os.path.join(HERE, "..", "..", "..", "fixtures", "pci", "lab_debian12_q35.json")
    as_root = PciTopology(tree_of(load_capture(tmp_path / "root", capture)))
    entry = gd_acs.acs_state(as_root, "0000:00:1f.0")
    assert (entry["state"], entry["detail"]) == ("absent", "0000:00:1f.0 has no PCIe extended configuration space")
    as_nobody = PciTopology(tree_of(load_capture(tmp_path / "nobody", capture, as_root=False)))
    entry = gd_acs.acs_state(as_nobody, "0000:00:1f.0")
    assert entry["state"] == "unreadable"
    assert entry["detail"] == ("only the first 64 bytes of the configuration space of 0000:00:1f.0 are readable: "
                               "the extended capabilities (offset 0x100 and up) need root (CAP_SYS_ADMIN)")
    facts = gd_probes.gather(tree_of(load_capture(tmp_path / "facts", capture)), "audit")
    assert facts["gpus"] == [] and facts["ready"] is False
    assert facts["dmabuf"]["kernel_release"] == "6.1.0-56-amd64" and facts["dmabuf"]["kernel_ok"] is True


def test_nic_matrix_on_the_shared_fixture():
    """NIC-to-NIC: every network function against every other, by the GPU-to-NIC rule, symmetric."""
    tree = SysfsTree(os.path.join(SHARED, "sys"), os.path.join(SHARED, "proc"))
    facts = gd_probes.gather(tree, "ignore")
    topo = PciTopology(tree)
    nics = sorted(d.address for d in topo.find(base_class=0x02))
    matrix = facts["topology"]["nic_matrix"]
    assert sorted(matrix) == nics and len(nics) >= 4
    assert set(n["pci_address"] for n in facts["nics"]) <= set(nics)
    for a in nics:
        assert sorted(matrix[a]) == [b for b in nics if b != a]
        for b in matrix[a]:
            assert matrix[a][b] == matrix[b][a] == topo.relation(a, b)


def test_a_library_name_with_a_newline_is_not_libibverbs(tmp_path):
    """A file really named "libibverbs.so.1.99.99.0\\n" passed the "$"-anchored pattern and won as the newest."""
    builder = build_ready_host(tmp_path, libibverbs=None)
    builder.libibverbs("libibverbs.so.1.14.48.0", libdir=("usr", "lib64"))
    builder.libibverbs("libibverbs.so.1.99.99.0\n", libdir=("usr", "lib64"))
    facts = gather(builder)
    assert facts["dmabuf"]["rdma_core_version"] == "48" and facts["dmabuf"]["libibverbs"] == "libibverbs.so.1.14.48.0"


# --------------------------------------------------------------------------
# ACS at boot: the record names devices by identity, the path is recomputed
# --------------------------------------------------------------------------
def boot_record(builder, tmp_path, name="gpudirect-acs.json"):
    facts = gather(builder)
    path = str(tmp_path / name)
    with open(path, "w") as handle:
        json.dump(facts["acs"]["boot_config"], handle)
    return facts, path


def run_cli(*argv):
    import io
    out = io.StringIO()
    code = gd_acs_boot.cli_main(list(argv), out=out)
    return code, out.getvalue().splitlines()


def test_boot_record_names_endpoints_by_identity_and_the_path_by_shape(tmp_path):
    facts, dummy = boot_record(build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT), tmp_path)
    assert facts["acs"]["boot_problems"] == []
    assert facts["acs"]["boot_config"] == {"schema": 1, "pairs": [{
        "gpu": {"vendor_id": "0x10de", "device_id": "0x2330", "subsystem_vendor_id": "0x10de",
                "subsystem_device_id": "0x16c1", "serial": "48-2d-b0-ff-fe-1a-2b-3c", "slot": None},
        "nic": {"vendor_id": "0x15b3", "device_id": "0x101d", "subsystem_vendor_id": "0x15b3",
                "subsystem_device_id": "0x0016", "serial": "b8-59-9f-03-00-d3-6f-12", "slot": None},
        "nic_name": "mlx5_0",
        "bridges": ["0x1000:0xc030", "0x1000:0xc030", "0x1000:0xc030"],
    }]}
    assert "0000:17" not in json.dumps(facts["acs"]["boot_config"])  # no bus address in it


def test_boot_after_renumbering_clears_the_right_bridges_only(tmp_path):
    """Applied when the switch sat at bus 0x16-0x17; after a BIOS change it sits at 0x26-0x27, and another
    switch (with another GPU) now has the old addresses 0000:17:00.0/0000:17:01.0. A record of bus addresses
    would clear ACS there: the wrong bridges. The identity record finds the GPU and NIC at their new addresses."""
    dummy, record = boot_record(build_ready_host(tmp_path / "before", acs_ctrl=ACS_CTRL_LINUX_DEFAULT), tmp_path)
    after = build_ready_host(tmp_path / "after", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, bus=0x25)
    hb = after.host_bridge("pci0000:15")
    rp = after.bridge(hb, "0000:15:01.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    usp = after.bridge(rp, "0000:16:00.0")
    other0 = after.bridge(usp, "0000:17:00.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    after.bridge(usp, "0000:17:01.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    after.gpu(other0, "0000:18:00.0", serial=0x1111222233334444)  # another GPU of the same model
    code, lines = run_cli("--config", record, "--sysfs-path", after.sys)
    assert code == 0, lines
    assert lines == [
        "gpudirect-acs: GPU 0000:28:00.0 / NIC 0000:29:00.0: 0000:27:00.0 ACS 0x001d -> 0x0011",
        "gpudirect-acs: GPU 0000:28:00.0 / NIC 0000:29:00.0: 0000:26:00.0 ACS absent",
        "gpudirect-acs: GPU 0000:28:00.0 / NIC 0000:29:00.0: 0000:27:01.0 ACS 0x001d -> 0x0011",
    ]
    words = [struct.unpack_from("<H", after.read_config(a), 0x14E)[0]
             for a in ("0000:27:00.0", "0000:27:01.0", "0000:17:00.0", "0000:17:01.0")]
    assert words == [0x0011, 0x0011, ACS_CTRL_LINUX_DEFAULT, ACS_CTRL_LINUX_DEFAULT]
    assert run_cli("--config", record, "--sysfs-path", after.sys)[0] == 0  # again: already off, nothing written


def test_boot_check_mode_changes_nothing(tmp_path):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    dummy, record = boot_record(builder, tmp_path)
    code, lines = run_cli("--config", record, "--sysfs-path", builder.sys, "--check")
    assert code == 0 and lines[0].endswith("0000:17:00.0 ACS 0x001d would become 0x0011")
    assert acs_words_of(builder, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT] * 2


def test_boot_skips_a_pair_it_cannot_find_for_sure(tmp_path):
    """The GPU was swapped (another serial number): the pair is skipped, no bridge is touched, exit 1."""
    dummy, record = boot_record(build_ready_host(tmp_path / "before", acs_ctrl=ACS_CTRL_LINUX_DEFAULT), tmp_path)
    swapped = build_ready_host(tmp_path / "after", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, gpu_serial=0x99)
    code, lines = run_cli("--config", record, "--sysfs-path", swapped.sys)
    assert code == 1
    assert lines == ["gpudirect-acs: GPU 48-2d-b0-ff-fe-1a-2b-3c / NIC mlx5_0: skipped, the GPU is not found for sure: "
                     "no device with vendor 0x10de device 0x2330 subsystem 0x10de:0x16c1 serial number 48-2d-b0-ff-fe-1a-2b-3c"]
    assert acs_words_of(swapped, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT] * 2


def test_boot_skips_a_path_whose_shape_changed(tmp_path):
    dummy, record = boot_record(build_ready_host(tmp_path / "before", acs_ctrl=ACS_CTRL_LINUX_DEFAULT), tmp_path)
    with open(record) as handle:
        config = json.load(handle)
    config["pairs"][0]["bridges"][0] = "0x10b5:0x8747"  # as if another switch model had been between them
    with open(record, "w") as handle:
        json.dump(config, handle)
    same = build_ready_host(tmp_path / "after", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    code, lines = run_cli("--config", record, "--sysfs-path", same.sys)
    assert code == 1 and "skipped, the path between them changed" in lines[0]
    assert acs_words_of(same, "0000:17:00.0", "0000:17:01.0") == [ACS_CTRL_LINUX_DEFAULT] * 2


def test_slots_identify_endpoints_without_serial_numbers(tmp_path):
    dummy, record = boot_record(build_ready_host(tmp_path / "before", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, gpu_serial=None,
                                                 nic_serial=None, slots=True), tmp_path)
    with open(record) as handle:
        assert [p["gpu"]["slot"] for p in json.load(handle)["pairs"]] == ["1"]
    after = build_ready_host(tmp_path / "after", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, gpu_serial=None, nic_serial=None,
                             slots=True, bus=0x45)
    assert run_cli("--config", record, "--sysfs-path", after.sys)[0] == 0
    assert acs_words_of(after, "0000:47:00.0", "0000:47:01.0") == [0x0011, 0x0011]


def test_identical_endpoints_without_serial_or_slot_are_not_recorded(tmp_path):
    """Two GPUs of one model, no serial number, no slot: after a renumbering nothing tells them apart, so the
    pairs are left out of the record (boot_problems says why) rather than guessed."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, gpu_serial=None)
    hb = builder.host_bridge("pci0000:80")
    rp = builder.bridge(hb, "0000:80:01.0", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    builder.gpu(rp, "0000:81:00.0")
    facts = gather(builder)
    assert facts["acs"]["boot_config"]["pairs"] == []
    assert facts["acs"]["boot_problems"] == [
        "ACS between GPU 0000:18:00.0 and mlx5_0 cannot be kept across reboots: GPU 0000:18:00.0: 2 devices with "
        "vendor 0x10de device 0x2330 subsystem 0x10de:0x16c1 (0000:18:00.0, 0000:81:00.0): cannot tell which "
        "(no PCIe serial number or physical slot tells the devices apart)"]


@pytest.mark.parametrize("content,code,text", [
    ("not json", 2, "cannot read"),
    ('{"schema": 2, "pairs": []}', 2, "not an ACS boot record of schema 1"),
    ('{"schema": 1, "pairs": [{"gpu": {}, "nic": {}, "bridges": "x"}]}', 2, "pairs[0].gpu is not a device identity"),
    ('{"schema": 1, "pairs": []}', 0, None),
])
def test_boot_record_is_checked(tmp_path, content, code, text):
    path = tmp_path / "record.json"
    path.write_text(content)
    got, lines = run_cli("--config", str(path), "--sysfs-path", str(tmp_path))
    assert got == code
    assert (text is None and lines == []) or text in lines[0]
