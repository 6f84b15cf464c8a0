# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.gpudirect module (main(), check/diff mode, idempotence).

The hosts are DERIVED PCI trees (tests/unit/fixtures/pci, README.md there) and
the shared derived fixture ``derived_gpu_nic_topology``, run in the module's
container mode (``host_root`` = the tree's root: reads and writes both go
there). ``FakeKernel`` is a test double for ``modprobe``: it needs root and a
kernel with the NVIDIA modules that no test machine has, so it edits the
fixture tree the way the kernel would (module folders, the ``memory_peers``
client). ACS control words are written for real, into the tree's ``config``
files, by the module's own code, and read back through the same sysfs code as
on a host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import stat
import struct

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import plan as gd_plan
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import find_ext_capability
from ansible_collections.rdma.fabric.plugins.modules import gpudirect as module_under_test
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (
    ACS_CTRL_LINUX_DEFAULT,
    PciTreeBuilder,
    build_ready_host,
    set_acs_control,
)

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "fixtures", "sysfs", "derived_gpu_nic_topology")


class FakeKernel(object):
    """Test double for modprobe (see the module docstring)."""

    def __init__(self, builder, fail_on=None, during=None):
        self.builder = builder
        self.commands = []
        self.fail_on = fail_on
        self.during = during  # called with the argv in the middle of each command

    def run_command(self, argv, handle_exceptions=True):
        assert handle_exceptions is False  # a command that cannot start must raise into the rollback
        argv = list(argv)
        self.commands.append(argv)
        if self.fail_on and self.fail_on in argv:
            return 1, "", "%s: simulated failure" % os.path.basename(argv[0])
        tool = os.path.basename(argv[0])
        assert tool == "modprobe", "unexpected command %r" % argv
        args = argv[1:]
        assert args[:2] == ["-d", self.builder.root]  # the host's module files: the tree's root
        args = args[2:]
        if args[0] == "-r":
            # kmod's modprobe -r of a module that is not loaded does nothing and exits 0
            if os.path.isdir(os.path.join(self.builder.sys, "module", args[1])):
                self.builder.remove_module(args[1])
            if not [m for m in gd_probes.PEERMEM_MODULES if os.path.isdir(os.path.join(self.builder.sys, "module", m))] \
                    and os.path.isdir(os.path.join(self.builder.sys, "kernel", "mm", "memory_peers", "nv_mem")):
                self.builder.remove_memory_peer("nv_mem")
        else:
            self.builder.module(args[0])
            self.builder.memory_peer("nv_mem")
        if self.during:
            self.during(argv)
        return 0, "", ""


@pytest.fixture(name="run")
def fixture_run(monkeypatch, tmp_path, run_main):
    """run(builder, **args) -> (result, FakeKernel) in container mode (host_root = the tree); failures too."""
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/sbin/" + name)

    def run(builder, fail_on=None, during=None, **args):
        kernel = FakeKernel(builder, fail_on, during)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: kernel.run_command(argv, **kw))
        params = dict(host_root=builder.root) if hasattr(builder, "root") else {}
        params.update(args)
        run.load_file = os.path.join(getattr(builder, "root", "/"), "etc", "modules-load.d", "rdma-fabric-gpudirect.conf")
        return run_main(module_under_test.main, params)[1], kernel

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
                                       "modules_load_file": gd_plan.MODULES_LOAD_HEADER + "nvidia_peermem\n",
                                       "acs_control": {"0000:17:00.0": "0x0011", "0000:17:01.0": "0x0011"}}
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["ready"] is False
    assert "ACS request-redirect and completion-redirect are on at 0000:17:00.0 between GPU 0000:18:00.0 and mlx5_0" \
        in facts["reasons"]


def test_apply_then_idempotent(run, tmp_path):
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    result, kernel = run(builder, acs="disable", _ansible_diff=True)
    assert result["changed"] is True and not result.get("failed")
    assert kernel.commands == [["/usr/sbin/modprobe", "-d", builder.root, "nvidia_peermem"]]
    assert [a["command"] for a in result["actions"]][2:] == [
        "write 0x0011 to the ACS control register of %s (config offset 0x14e, was 0x001d)" % address
        for address in ("0000:17:00.0", "0000:17:01.0")]
    # source validation and upstream forwarding stay on, only the redirect bits go
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x0011, 0x0011]
    with open(run.load_file) as handle:
        assert handle.read() == gd_plan.MODULES_LOAD_HEADER + "nvidia_peermem\n"
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
    assert kernel.commands == [["/usr/sbin/modprobe", "-d", builder.root, "-r", "nvidia_peermem"]]
    assert not os.path.exists(run.load_file)
    facts = result["ansible_facts"]["gpudirect"]
    assert facts["peermem"]["loaded"] == [] and facts["ready"] is False
    assert run(builder, peermem="absent")[0]["changed"] is False


def test_disable_keeps_the_words_and_enable_puts_them_back(run, tmp_path):
    """Container mode (the tree is the host's root): the record lands under it, real ACS writes in the tree."""
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    saved = "/var/lib/rdma-fabric/gpudirect-acs-before.json"
    result, kernel = run(builder, acs="disable", acs_saved=saved)
    assert [a["action"] for a in result["actions"]] == ["load_module", "write_file", "save_file", "acs_disable", "acs_disable"]
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x0011, 0x0011]
    record = os.path.join(builder.root, saved.lstrip("/"))
    assert os.path.exists(record)
    checked, kernel = run(builder, peermem="absent", acs="enable", acs_saved=saved, _ansible_check_mode=True, _ansible_diff=True)
    assert checked["changed"] is True and kernel.commands == [] and os.path.exists(record)
    assert checked["diff"]["after"]["acs_control"] == {"0000:17:00.0": "0x001d", "0000:17:01.0": "0x001d"}
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x0011, 0x0011]
    result, kernel = run(builder, peermem="absent", acs="enable", acs_saved=saved)
    assert [a["action"] for a in result["actions"]] == ["unload_module", "remove_file", "acs_enable", "acs_enable", "remove_saved"]
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert not os.path.exists(record) and not os.path.exists(run.load_file)
    again, kernel = run(builder, peermem="absent", acs="enable", acs_saved=saved)
    assert again["changed"] is False and again["actions"] == [] and kernel.commands == []


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
    assert result["msg"] == ("sysfs_path: '%s' is not a directory; expected the host's sysfs root (e.g. /sys, or /host/sys "
                             "in a container)" % (tmp_path / "nope"))


def test_present_on_inbox_stack_fails_before_changes(run, tmp_path):
    builder = build_ready_host(tmp_path, driver_flavour="proprietary", peer_memory_api=False,
                               acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    result, kernel = run(builder, peermem="present", acs="disable")
    assert result["failed"] is True and kernel.commands == []
    assert "ib_core has no peer-memory API" in result["msg"]
    assert acs_controls(builder, "0000:17:00.0") == [0x001D]


def test_failure_part_way_is_rolled_back(run, tmp_path):
    """Someone else sets the second bridge's ACS word while the module works (the double does it during the
    modprobe): the module does not overwrite it, and undoes its own changes."""
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")

    def meanwhile(argv):
        builder.write_config("0000:17:01.0", set_acs_control(builder.read_config("0000:17:01.0"), 0x0005))

    result, kernel = run(builder, acs="disable", during=meanwhile)
    assert result["failed"] is True and result["interrupted"] is False
    assert kernel.commands == [["/usr/sbin/modprobe", "-d", builder.root, "nvidia_peermem"],
                               ["/usr/sbin/modprobe", "-d", builder.root, "-r", "nvidia_peermem"]]
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x0005]
    assert not os.path.exists(run.load_file)
    assert "reads 0x0005, not 0x001d: changed by someone else" in result["msg"]
    assert result["msg"].startswith("GPUDirect change failed: write 0x0011 to the ACS control register of 0000:17:01.0")
    assert "restored: write 0x0011 to the ACS control register of 0000:17:00.0" in result["msg"]
    assert [a["done"] for a in result["actions"]] == [False, False, False, False]


def test_shared_fixture_through_the_module(run, tmp_path):
    """Read-only use of a tree elsewhere (sysfs_path/procfs_path): reports, and would refuse to change."""
    class Shared(object):
        sys = os.path.join(SHARED, "sys")
        proc = str(tmp_path)  # the fixture has no proc/
    result, kernel = run(Shared(), persist=False, sysfs_path=Shared.sys, procfs_path=Shared.proc)
    assert kernel.commands == [] and result["changed"] is False
    topology = result["ansible_facts"]["gpudirect"]["topology"]
    assert topology["matrix"]["0000:03:00.0"] == {"mlx5_0": "PIX", "mlx5_1": "PHB", "mlx5_2": "NODE", "mlx5_3": "PXB"}


def test_redirected_reads_refuse_changes(run, tmp_path):
    """sysfs_path/procfs_path elsewhere than under host_root: what was read is not the host that modprobe and the
    writes would hit. The plan is shown; nothing runs, nothing is written."""
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    args = dict(acs="disable", sysfs_path=builder.sys, procfs_path=builder.proc)
    result, kernel = run(builder, host_root="/", **args)
    assert result["failed"] is True and kernel.commands == []
    assert result["msg"].startswith("sysfs_path=%s and procfs_path=%s are not the sysfs and procfs of host_root=/"
                                    % (builder.sys, builder.proc))
    assert [a["done"] for a in result["actions"]] == [False] * 4
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert not os.path.exists("/etc/modules-load.d/rdma-fabric-gpudirect.conf")
    checked, kernel = run(builder, host_root="/", _ansible_check_mode=True, **args)  # reporting is fine
    assert checked["changed"] is True and not checked.get("failed") and kernel.commands == []


@pytest.mark.parametrize("args,message", [
    ({"host_root": "/ho\0st"}, "host_root: '/ho\\x00st' contains a NUL byte"),
    ({"sysfs_path": "/sys\n"}, "sysfs_path: '/sys\\n' contains a control character"),
    ({"host_root": "host"}, "host_root: 'host' is relative; allowed: an absolute path"),
    ({"acs_saved": "/var/lib/x\0"}, "acs_saved: '/var/lib/x\\x00' contains a NUL byte"),
    ({"acs_saved": "var/lib/x.json"}, "acs_saved: 'var/lib/x.json' is relative; allowed: an absolute path"),
])
def test_bad_paths_are_named(run, tmp_path, args, message):
    result, kernel = run(build_ready_host(tmp_path), **args)
    assert result["failed"] is True and kernel.commands == [] and result["msg"].startswith(message)


def test_sigterm_while_changing_undoes_and_reports(run, tmp_path):
    """A REAL SIGTERM arrives while modprobe runs (as Ansible's task timeout sends it): the module loaded by the
    interrupted step is unloaded again, nothing else was started, and the failure says so."""
    builder = build_ready_host(tmp_path, acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    previous = signal.getsignal(signal.SIGTERM)

    def terminate(argv):
        if "-r" not in argv:
            os.kill(os.getpid(), signal.SIGTERM)

    result, kernel = run(builder, acs="disable", during=terminate)
    assert result["failed"] is True and result["interrupted"] is True
    assert kernel.commands == [["/usr/sbin/modprobe", "-d", builder.root, "nvidia_peermem"],
                               ["/usr/sbin/modprobe", "-d", builder.root, "-r", "nvidia_peermem"]]
    assert result["msg"] == ("GPUDirect change failed: modprobe -d %s nvidia_peermem: interrupted by SIGTERM; "
                             "restored: modprobe -d %s nvidia_peermem" % (builder.root, builder.root))
    assert result["ansible_facts"]["gpudirect"]["peermem"]["loaded"] == []
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert not os.path.exists(run.load_file)
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_modprobe_that_cannot_start_fails_by_name(run_main, monkeypatch, tmp_path):
    """REAL exec failure: modprobe is a file without the execute bit (EACCES from execve, also for root), run
    through AnsibleModule.run_command itself. It used to end the module inside run_command."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    modprobe = tmp_path / "modprobe"
    modprobe.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(str(modprobe), 0o644)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: str(modprobe))
    ok, result = run_main(module_under_test.main, dict(host_root=builder.root, acs="disable"))
    assert not ok and result["interrupted"] is False
    assert result["msg"] == ("GPUDirect change failed: modprobe -d %s nvidia_peermem: cannot run: Permission denied "
                             "(EACCES)" % builder.root)
    assert acs_controls(builder, "0000:17:00.0", "0000:17:01.0") == [0x001D, 0x001D]
    assert [a["done"] for a in result["actions"]] == [False] * 4


def test_a_sysfs_path_that_is_no_sysfs_is_named(run, tmp_path):
    """/etc is a folder but no sysfs root (no class/, devices/ or module/): refused, naming the option."""
    builder = build_ready_host(str(tmp_path / "host"))
    result, _kernel = run(builder, sysfs_path="/etc")
    assert result["failed"] and result["msg"].startswith("sysfs_path: '/etc' does not look like a sysfs root")
