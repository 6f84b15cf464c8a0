# -*- coding: utf-8 -*-
"""Tests of the rdma.fabric.gpudirect role.

* meta/argument_specs.yml mirrors defaults/main.yml.
* The real role runs with ansible-playbook in CHECK MODE (nothing is written,
  loaded or set) on this machine, but reads a DERIVED GPU host tree built by
  tests/unit/fixtures/pci/pci_tree.py through gpudirect_sysfs_path and
  gpudirect_procfs_path: no GPU machine is at hand, and the VM lab has no GPU,
  so this is where the GPU path of the role (the ACS oneshot with one
  ExecStart per bridge, the openibd drop-in, the modules-load.d plan, the
  readiness assertion) is exercised. The rendered files come from the
  template tasks' diff.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import assert_specs_mirror_defaults, collections_path
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (
    ACS_CTRL_LINUX_DEFAULT,
    build_ready_host,
)

HERE = os.path.dirname(os.path.abspath(__file__))
PLAYBOOK = os.path.join(HERE, "check_mode.yml")


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults("gpudirect")


def run_role(tmp_path, builder, extra_vars, check=True):
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": collections_path(),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json",
        "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_CACHE_PLUGIN": "memory",
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_NOCOLOR": "1",
    })
    env.pop("ANSIBLE_CONFIG", None)
    variables = dict(gpudirect_sysfs_path=builder.sys, gpudirect_procfs_path=builder.proc)
    variables.update(extra_vars)
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(
        [ansible_playbook, "-i", "localhost,"] + (["--check"] if check else []) + ["--diff", "-e", json.dumps(variables), PLAYBOOK],
        env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=600,
        check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("no JSON from ansible-playbook (rc=%d): %s %s" % (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    tasks = {}
    for task in out["plays"][0]["tasks"]:
        name = task["task"]["name"].split(" : ", 1)[-1]   # drop the "rdma.fabric.gpudirect : " prefix
        tasks[name] = task["hosts"].get("localhost", {})
    return proc.returncode, tasks


def _after(result):
    diff = result.get("diff")
    diffs = diff if isinstance(diff, list) else [diff]
    return "".join(d.get("after", "") for d in diffs if d)


@pytest.mark.skipif(not os.path.exists("/usr/bin/systemctl") and not os.path.exists("/bin/systemctl"),
                    reason="the role's systemd tasks need systemctl to be installed (check mode runs nothing)")
def test_gpu_host_in_check_mode(tmp_path):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary",
                               driver_version="535.104.05")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_acs": "disable", "gpudirect_openibd": "always"})
    assert rc == 0, tasks
    planned = tasks["Make GPUDirect RDMA ready"]
    assert planned["changed"] is True
    assert [(a["action"], a["target"], a["done"]) for a in planned["actions"]] == [
        ("load_module", "nvidia_peermem", False),
        ("write_file", "/etc/modules-load.d/rdma-fabric-gpudirect.conf", False),
        ("save_file", "/var/lib/rdma-fabric/gpudirect-acs-before.json", False),   # kept for gpudirect_state: absent
        ("acs_disable", "0000:17:00.0", False),
        ("acs_disable", "0000:17:01.0", False),
    ]
    unit = _after(tasks["Write the ACS oneshot unit"])
    assert ("ExecStart=/usr/bin/python3 -E -s /usr/lib/rdma-fabric/rdma-fabric.pyz gpudirect-acs "
            "--config /etc/rdma-fabric/gpudirect-acs.json\n") in unit
    assert "Type=oneshot\nRemainAfterExit=yes\n" in unit and "WantedBy=multi-user.target" in unit
    assert "0000:" not in unit  # no bus address: the boot path finds the devices by identity
    record = json.loads(_after(tasks["Write the ACS boot record"]))
    assert record == planned["ansible_facts"]["gpudirect"]["acs"]["boot_config"]
    assert [(p["gpu"]["serial"], p["nic"]["serial"], p["nic_name"]) for p in record["pairs"]] == [
        ("48-2d-b0-ff-fe-1a-2b-3c", "b8-59-9f-03-00-d3-6f-12", "mlx5_0")]
    assert "0000:" not in json.dumps(record)
    dropin = _after(tasks["Load the peer-memory module again after openibd.service starts"])
    assert "[Service]\nExecStartPost=-/usr/sbin/modprobe nvidia_peermem\n" in dropin
    # check mode reports the host as it is; with changes pending the assertion waits for a real run
    assert tasks["Assert that GPUDirect RDMA is ready"].get("skipped") is True
    assert tasks["Enable the ACS oneshot at boot and run it now"].get("skipped") is True


def test_ready_dmabuf_host_still_gets_the_boot_unit_and_is_asserted(tmp_path):
    """ACS is off now on both bridges, but the kernel turns it on at boot: the unit is still wanted."""
    builder = build_ready_host(tmp_path / "host")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_acs": "disable", "gpudirect_openibd": "always"})
    assert rc == 0, tasks
    assert tasks["Make GPUDirect RDMA ready"]["changed"] is False
    assert tasks["Make GPUDirect RDMA ready"]["actions"] == []
    unit = _after(tasks["Write the ACS oneshot unit"])
    assert unit.count("ExecStart=") == 1
    assert len(json.loads(_after(tasks["Write the ACS boot record"]))["pairs"]) == 1
    # DMA-BUF serves: no peer-memory module, so no openibd drop-in
    assert tasks["Load the peer-memory module again after openibd.service starts"].get("skipped") is True
    assert tasks["Assert that GPUDirect RDMA is ready"]["msg"] == "GPUDirect RDMA is ready on localhost"


def test_audit_only_leaves_no_unit(tmp_path):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_assert_ready": False})
    assert rc == 0, tasks
    assert tasks["Make GPUDirect RDMA ready"]["actions"] == []
    assert tasks["Write the ACS oneshot unit"].get("skipped") is True
    assert tasks["Remove the ACS oneshot unit and its record"].get("skipped") is not True
    assert tasks["Assert that GPUDirect RDMA is ready"].get("skipped") is True


def test_not_ready_host_fails_the_assertion_with_reasons(tmp_path):
    builder = build_ready_host(tmp_path / "host", iommu="DMA-FQ")
    rc, tasks = run_role(tmp_path, builder, {})
    assert rc != 0
    failed = tasks["Assert that GPUDirect RDMA is ready"]
    assert failed["failed"] is True
    assert "GPUDirect RDMA is not ready on localhost: the IOMMU translates DMA for GPU 0000:18:00.0" in failed["msg"]


def test_identical_gpus_without_serial_or_slot_fail_before_any_change(tmp_path):
    """ACS persistence that could not find the devices again after a renumbering is refused up front."""
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT, gpu_serial=None)
    builder.gpu(builder.bridge(builder.host_bridge("pci0000:80"), "0000:80:01.0"), "0000:81:00.0")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_acs": "disable"})
    assert rc != 0
    failed = tasks["Refuse ACS persistence that could not find the devices again after a reboot"]
    assert failed["failed"] is True and "2 devices with vendor 0x10de device 0x2330" in failed["msg"]
    assert "gpudirect_persist: false" in failed["msg"]
    assert "Make GPUDirect RDMA ready" not in tasks


@pytest.mark.parametrize("variables,check,words", [
    # a copy of a host's tree outside check mode: the changes would hit this machine
    ({}, False, ["gpudirect_sysfs_path: ", "redirects what the role reads", "allowed: /sys"]),
    # a newline (where injected text would hide) and a relative path, both named in one failure
    ({"gpudirect_sysfs_path": "/sys\n", "gpudirect_procfs_path": "proc"}, True,
     ["gpudirect_sysfs_path: '/sys\\n' is not allowed", "without NUL or other control characters",
      "gpudirect_procfs_path: 'proc' is not allowed", "absolute path"]),
])
def test_bad_variables_fail_before_anything_runs(tmp_path, variables, check, words):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    rc, tasks = run_role(tmp_path, builder, variables, check=check)
    assert rc != 0
    failed = [t for t in tasks.values() if t.get("failed")]
    assert len(failed) == 1
    for word in words:
        assert word in failed[0]["msg"], failed[0]["msg"]
    assert "Read the GPUDirect state of the host (changes nothing)" not in tasks


REMOVE = "Unload the peer-memory module, remove its modules-load.d file and put ACS back"


def test_absent_plans_the_unload_and_acs_back_in_check_mode(tmp_path):
    """No record kept on this machine: the kernel's boot bits (request + completion redirect) come back."""
    builder = build_ready_host(tmp_path / "host", driver_flavour="proprietary", driver_version="535.104.05")
    builder.module("nvidia_peermem")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_state": "absent"})
    assert rc == 0, tasks
    removal = tasks[REMOVE]
    assert removal["changed"] is True
    assert [(a["action"], a["target"], a["command"]) for a in removal["actions"]] == [
        ("unload_module", "nvidia_peermem", "modprobe -r nvidia_peermem"),
        ("acs_enable", "0000:17:00.0", "write 0x000c to the ACS control register of 0000:17:00.0 (config offset 0x14e, was 0x0000)"),
        ("acs_enable", "0000:17:01.0", "write 0x000c to the ACS control register of 0000:17:01.0 (config offset 0x14e, was 0x0000)"),
    ]
    assert removal["diff"]["before"]["acs_control"] == {"0000:17:00.0": "0x0000", "0000:17:01.0": "0x0000"}
    assert removal["diff"]["after"]["acs_control"] == {"0000:17:00.0": "0x000c", "0000:17:01.0": "0x000c"}
    assert removal["diff"]["after"]["peermem_loaded"] == []
    # this machine has none of the role's files: nothing to disable or remove
    assert tasks["Disable the ACS oneshot"].get("skipped") is True
    assert all(r.get("skipped") for r in tasks["Remove the ACS oneshot, its record and the openibd drop-in"]["results"])
    assert "Make GPUDirect RDMA ready" not in tasks and "Assert that GPUDirect RDMA is ready" not in tasks


def test_absent_with_nothing_to_take_back_reads_twice_and_changes_nothing(tmp_path):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_state": "absent"})
    assert rc == 0, tasks
    assert tasks[REMOVE]["changed"] is False and tasks[REMOVE]["actions"] == []
    ran = [name for name, result in tasks.items()
           if not result.get("skipped") and not all(r.get("skipped") for r in result.get("results", [{}]))]
    assert [name for name in ran if name.startswith(("Read", "Unload", "Disable", "Remove"))] == [
        "Read the ACS oneshot, its record and the openibd drop-in (one call)", REMOVE]
    assert not any(result.get("changed") for result in tasks.values())


def test_absent_with_acs_ignore_leaves_acs_alone(tmp_path):
    builder = build_ready_host(tmp_path / "host")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_state": "absent", "gpudirect_acs": "ignore"})
    assert rc == 0, tasks
    assert tasks[REMOVE]["actions"] == []


def test_a_bad_state_fails_before_anything_runs(tmp_path):
    builder = build_ready_host(tmp_path / "host")
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_state": "removed"})
    assert rc != 0
    failed = [t for t in tasks.values() if t.get("failed")]
    assert len(failed) == 1 and "gpudirect_state" in failed[0]["msg"] and "present, absent" in failed[0]["msg"]
    assert REMOVE not in tasks
