# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.gpudirect module (main(), check/diff mode, idempotence).

The hosts are DERIVED PCI trees (tests/unit/fixtures/pci, README.md there) and
the shared derived fixture ``derived_gpu_nic_topology``. ``FakeKernel`` is a
test double for ``modprobe`` and ``setpci``: both need root and real hardware
(a GPU, a PCIe switch) that no test machine has, so it edits the fixture tree
the way the kernel would (module folders, the ``memory_peers`` client, the ACS
control word in the configuration space) and the module reads the result back
through the same sysfs code as on a host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import struct

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils import gpudirect as gd
from ansible_collections.rdma.fabric.plugins.module_utils.pci import find_ext_capability
from ansible_collections.rdma.fabric.plugins.modules import gpudirect as module_under_test
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (
    ACS_CTRL_LINUX_DEFAULT,
    PciTreeBuilder,
    build_ready_host,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "fixtures", "sysfs", "derived_gpu_nic_topology")


class FakeKernel(object):
    """Test double for modprobe and setpci (see the module docstring)."""

    def __init__(self, builder, fail_on=None):
        self.builder = builder
        self.commands = []
        self.fail_on = fail_on

    def run_command(self, argv):
        argv = list(argv)
        self.commands.append(argv)
        if self.fail_on and self.fail_on in argv:
            return 1, "", "%s: simulated failure" % os.path.basename(argv[0])
        tool = os.path.basename(argv[0])
        if tool == "modprobe":
            if argv[1] == "-r":
                self.builder.remove_module(argv[2])
                if not [m for m in gd.PEERMEM_MODULES if os.path.isdir(os.path.join(self.builder.sys, "module", m))]:
                    self.builder.remove_memory_peer("nv_mem")
            else:
                self.builder.module(argv[1])
                self.builder.memory_peer("nv_mem")
            return 0, "", ""
        if tool == "setpci":
            address, op = argv[2], argv[3]
            assert op.startswith("ECAP_ACS+0x6.w=")
            value, _sep, mask = op.split("=", 1)[1].partition(":")
            value, mask = int(value, 16), int(mask or "ffff", 16)
            config = bytearray(self.builder.read_config(address))
            offset = find_ext_capability(bytes(config), 0x000D) + 6
            old = struct.unpack_from("<H", config, offset)[0]
            struct.pack_into("<H", config, offset, (old & ~mask) | (value & mask))
            self.builder.write_config(address, bytes(config))
            return 0, "", ""
        raise AssertionError("unexpected command %r" % argv)


@pytest.fixture(name="run")
def fixture_run(monkeypatch, tmp_path, run_main):
    """run(builder, **args) -> (result, FakeKernel); raises on nothing, returns failures too."""
    load_file = str(tmp_path / "etc" / "modules-load.d" / "rdma-fabric-gpudirect.conf")
    monkeypatch.setattr(gd, "MODULES_LOAD_FILE", load_file)

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/sbin/" + name)

    def run(builder, fail_on=None, **args):
        kernel = FakeKernel(builder, fail_on)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: kernel.run_command(argv))
        params = dict(sysfs_path=builder.sys, procfs_path=builder.proc)
        params.update(args)
        return run_main(module_under_test.main, params)[1], kernel

    run.load_file = load_file
    return run


def acs_controls(builder, *addresses):
    out = []
    for address in addresses:
        config = builder.read_config(address)
        out.append(struct.unpack_from("<H", config, find_ext_capability(config, 0x000D) + 6)[0])
    return out


def test_check_mode_changes_nothing_and_predicts(run, tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    result, kernel = run(builder, acs="disable", _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True
    assert kernel.commands == []
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert not os.path.exists(run.load_file)
    assert [(a["action"], a["target"], a["done"]) for a in result["actions"]] == [
        ("load_module", "nvidia_peermem", False),
        ("write_file", run.load_file, False),
        ("acs_disable", "0000:17:00.0", False),
        ("acs_disable", "0000:17:01.0", False),
    ]
    assert result["diff"]["before"] == {"peermem_loaded": [], "modules_load_file": None,
                                        "acs_control": {"0000:17:00.0": "0x001d", "0000:17:01.0": "0x001d"}}
    assert result["diff"]["after"] == {"peermem_loaded": ["nvidia_peermem"],
                                       "modules_load_file": gd.MODULES_LOAD_HEADER + "nvidia_peermem\n",
                                       "acs_control": {"0000:17:00.0": "0x0011", "0000:17:01.0": "0x0011"}}
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["ready"] is False
    assert "ACS request-redirect and completion-redirect are on at 0000:17:00.0 between GPU 0000:18:00.0 and mlx5_0" \
        in facts["reasons"]


def test_apply_then_idempotent(run, tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    result, kernel = run(builder, acs="disable", _ansible_diff=True)
    assert result["changed"] is True and not result.get("failed")
    assert kernel.commands == [
        ["/usr/sbin/modprobe", "nvidia_peermem"],
        ["/usr/sbin/setpci", "-s", "0000:17:00.0", "ECAP_ACS+0x6.w=0000:002c"],
        ["/usr/sbin/setpci", "-s", "0000:17:01.0", "ECAP_ACS+0x6.w=0000:002c"],
    ]
    # source validation and upstream forwarding stay on, only the redirect bits go
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x0011, 0x0011]
    with open(run.load_file) as handle:
        assert handle.read() == gd.MODULES_LOAD_HEADER + "nvidia_peermem\n"
    assert stat.S_IMODE(os.stat(run.load_file).st_mode) == 0o644
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["ready"] is True, facts["reasons"]
    assert facts["peermem"]["loaded"] == ["nvidia_peermem"]
    assert result["diff"]["after"]["acs_control"] == {"0000:17:00.0": "0x0011", "0000:17:01.0": "0x0011"}

    again, kernel = run(builder, acs="disable")
    assert again["changed"] is False and again["actions"] == []
    assert kernel.commands == []
    assert again["ansible_facts"]["gpudirect"]["ready"] is True


def test_dmabuf_host_needs_nothing(run, tmp_path):
    result, kernel = run(build_ready_host(tmp_path))
    assert result["changed"] is False and kernel.commands == []
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["ready"] is True and facts["dmabuf"]["possible"] is True
    assert facts["topology"]["matrix"] == {"0000:18:00.0": {"mlx5_0": "PIX"}}


def test_absent_unloads_and_removes_file(run, tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary")
    run(builder)                                  # loads and persists
    assert os.path.exists(run.load_file)
    result, kernel = run(builder, peermem="absent")
    assert result["changed"] is True
    assert kernel.commands == [["/usr/sbin/modprobe", "-r", "nvidia_peermem"]]
    assert not os.path.exists(run.load_file)
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["peermem"]["loaded"] == [] and facts["ready"] is False
    assert run(builder, peermem="absent")[0]["changed"] is False


def test_host_without_gpu_reports_and_changes_nothing(run, tmp_path):
    builder = PciTreeBuilder(tmp_path)
    builder.device(builder.host_bridge("pci0000:00"), "0000:00:04.0", 0x1AF4, 0x1041, 0x020000, driver="virtio-pci")
    builder.soft_ibdev("rxe0")
    builder.kernel("6.1.0-18-amd64")
    for peermem in ("auto", "present"):
        result, kernel = run(builder, peermem=peermem, acs="disable")
        assert result["changed"] is False and kernel.commands == [] and not result.get("failed")
        facts = result["ansible_facts"]["gpudirect"]
        assert facts["ready"] is False
        assert facts["reasons"][0].startswith("no NVIDIA GPU (PCI vendor 0x10de, class 0x03xx) under ")
    assert not os.path.exists(run.load_file)


@pytest.mark.parametrize("args,words", [
    ({"peermem": "maybe"}, ["peermem", "auto", "present", "absent"]),
    ({"acs": "off"}, ["acs", "audit", "disable", "ignore"]),
    ({"persist": "sometimes"}, ["persist"]),
])
def test_bad_input_rejected_before_anything(run, tmp_path, args, words):
    result, kernel = run(build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT), **args)
    assert result["failed"] is True and kernel.commands == []
    for word in words:
        assert word in result["msg"]


def test_missing_sysfs_path_is_named(run, tmp_path):
    builder = build_ready_host(tmp_path)
    result, _kernel = run(builder, sysfs_path=str(tmp_path / "nope"))
    assert result["failed"] is True
    assert result["msg"] == "sysfs_path: %s is not a directory" % (tmp_path / "nope")


def test_present_on_inbox_stack_fails_before_changes(run, tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary", peer_memory_api=False,
                               acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    result, kernel = run(builder, peermem="present", acs="disable")
    assert result["failed"] is True and kernel.commands == []
    assert "ib_core has no peer-memory API" in result["msg"]
    assert acs_controls(builder, "0000:17:00.0") == [0x001D]


def test_failure_part_way_is_rolled_back(run, tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    result, kernel = run(builder, acs="disable", fail_on="0000:17:01.0")
    assert result["failed"] is True
    assert kernel.commands[-1] == ["/usr/sbin/setpci", "-s", "0000:17:00.0", "ECAP_ACS+0x6.w=001d"]
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert "restored: setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000:002c" in result["msg"]
    assert [a["done"] for a in result["actions"]] == [False, False]


def test_shared_fixture_through_the_module(run, tmp_path):
    class Shared(object):
        sys = os.path.join(SHARED, "sys")
        proc = str(tmp_path)  # the fixture has no proc/
    result, kernel = run(Shared(), persist=False)
    assert kernel.commands == [] and result["changed"] is False
    topology = result["ansible_facts"]["gpudirect"]["topology"]
    assert topology["matrix"]["0000:03:00.0"] == {"mlx5_0": "PIX", "mlx5_1": "PHB", "mlx5_2": "NODE", "mlx5_3": "PXB"}
