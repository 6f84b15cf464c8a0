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
ROLE = os.path.join(HERE, "..", "..", "..", "..", "roles", "gpudirect")
PLAYBOOK = os.path.join(HERE, "check_mode.yml")
TYPES = {"str": str, "bool": bool, "path": str}


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults(ROLE, "gpudirect_", TYPES)


def run_role(tmp_path, builder, extra_vars):
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
    variables = dict(gpudirect_sysfs_path=builder.sys, gpudirect_procfs_path=builder.proc,
                     gpudirect_manage_packages=False)
    variables.update(extra_vars)
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(
        [ansible_playbook, "-i", "localhost,", "--check", "--diff", "-e", json.dumps(variables), PLAYBOOK],
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
        ("acs_disable", "0000:17:00.0", False),
        ("acs_disable", "0000:17:01.0", False),
    ]
    unit = _after(tasks["Write the ACS oneshot unit"])
    assert "ExecStart=/usr/bin/setpci -s 0000:17:00.0 ECAP_ACS+0x6.w=0000:002c\n" in unit
    assert "ExecStart=/usr/bin/setpci -s 0000:17:01.0 ECAP_ACS+0x6.w=0000:002c\n" in unit
    assert "Type=oneshot\nRemainAfterExit=yes\n" in unit and "WantedBy=multi-user.target" in unit
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
    assert unit.count("ExecStart=/usr/bin/setpci -s ") == 2
    # DMA-BUF serves: no peer-memory module, so no openibd drop-in
    assert tasks["Load the peer-memory module again after openibd.service starts"].get("skipped") is True
    assert tasks["Assert that GPUDirect RDMA is ready"]["msg"] == "GPUDirect RDMA is ready on localhost"


def test_audit_only_leaves_no_unit(tmp_path):
    builder = build_ready_host(tmp_path / "host", acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    rc, tasks = run_role(tmp_path, builder, {"gpudirect_assert_ready": False})
    assert rc == 0, tasks
    assert tasks["Make GPUDirect RDMA ready"]["actions"] == []
    assert tasks["Write the ACS oneshot unit"].get("skipped") is True
    assert tasks["Remove the ACS oneshot unit"].get("skipped") is not True
    assert tasks["Assert that GPUDirect RDMA is ready"].get("skipped") is True


def test_not_ready_host_fails_the_assertion_with_reasons(tmp_path):
    builder = build_ready_host(tmp_path / "host", iommu="DMA-FQ")
    rc, tasks = run_role(tmp_path, builder, {})
    assert rc != 0
    failed = tasks["Assert that GPUDirect RDMA is ready"]
    assert failed["failed"] is True
    assert "GPUDirect RDMA is not ready on localhost: the IOMMU translates DMA for GPU 0000:18:00.0" in failed["msg"]
