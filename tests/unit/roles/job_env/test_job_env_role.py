# -*- coding: utf-8 -*-
"""Tests of the rdma.fabric.job_env role.

* meta/argument_specs.yml mirrors defaults/main.yml.
* The real role runs with ansible-playbook on this machine, its four files under tmp_path, after the real
  facts gatherer (rdma.fabric.rdma_device_facts) read a fixture sysfs tree: the seed's RoCE mlx5 host
  (derived_roce_mlx5_ofed), its InfiniBand host (derived_ib_mlx5_ipoib) and the lab's Soft-RoCE VM
  (lab_rxe_lab1, captured on the lab). Checked: the files' content, a second run that changes nothing and
  reads the host once (one host_state call, no write task runs), check mode that writes nothing, diff mode,
  a drifted file rewritten, bad variables rejected before anything is written, state=absent.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import assert_specs_mirror_defaults, collections_path

HERE = os.path.dirname(os.path.abspath(__file__))
ROLE = os.path.join(HERE, "..", "..", "..", "..", "roles", "job_env")
PLAYBOOK = os.path.join(HERE, "apply.yml")
SYSFS = os.path.join(HERE, "..", "..", "fixtures", "sysfs")
TYPES = {"str": str, "bool": bool, "list": list, "dict": dict, "raw": (str, int)}
FILES = ("nccl.conf", "ucx/ucx.conf", "rdma-fabric/job.env", "profile.d/rdma-fabric-job.sh")


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults("job_env")


def run_role(tmp_path, tree, extra_vars=None, args=()):
    """Run the role; returns (rc, {task name: result}, {relative file: text or None})."""
    etc = tmp_path / "etc"
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
    variables = {
        "job_env_test_sysfs": os.path.join(SYSFS, tree, "sys"),
        "job_env_nccl_conf_path": str(etc / "nccl.conf"),
        "job_env_ucx_conf_path": str(etc / "ucx" / "ucx.conf"),
        "job_env_env_file_path": str(etc / "rdma-fabric" / "job.env"),
        "job_env_profile_path": str(etc / "profile.d" / "rdma-fabric-job.sh"),
    }
    variables.update(extra_vars or {})
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(
        [ansible_playbook, "-i", "localhost,", "-e", json.dumps(variables)] + list(args) + [PLAYBOOK],
        env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
        timeout=600, check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("no JSON from ansible-playbook (rc=%d): %s %s" % (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    tasks = {}
    for task in out["plays"][0]["tasks"]:
        name = task["task"]["name"].split(" : ", 1)[-1]
        tasks[name] = task["hosts"].get("localhost", {})
    files = {}
    for rel in FILES:
        path = etc / rel
        files[rel] = path.read_text() if path.exists() else None
    return proc.returncode, tasks, files, out["stats"]["localhost"]


def _lines(text):
    return [ln for ln in text.splitlines() if ln and not ln.startswith("#")]


def test_roce_host_files_then_nothing_to_do(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "derived_roce_mlx5_ofed")
    assert rc == 0, tasks
    nccl = _lines(files["nccl.conf"])
    assert "NCCL_IB_DISABLE=0" in nccl and "NCCL_IB_HCA==mlx5_0:1" in nccl
    ucx = _lines(files["ucx/ucx.conf"])
    assert "UCX_NET_DEVICES=mlx5_0:1" in ucx and "UCX_TLS=rc,ud,sm,self" in ucx
    assert [ln for ln in ucx if ln.startswith("UCX_IB_GID_INDEX=")] == \
        [ln.replace("NCCL_", "UCX_") for ln in nccl if ln.startswith("NCCL_IB_GID_INDEX=")]
    env = _lines(files["rdma-fabric/job.env"])
    assert sorted(env) == sorted(nccl + ucx + ["OMPI_MCA_osc=ucx", "OMPI_MCA_pml=ucx"])
    assert _lines(files["profile.d/rdma-fabric-job.sh"]) == ["export OMPI_MCA_osc=ucx", "export OMPI_MCA_pml=ucx"]
    assert (tmp_path / "etc" / "nccl.conf").stat().st_mode & 0o777 == 0o644
    assert tasks["Write the settings files"]["changed"] is True

    rc, tasks, again, stats = run_role(tmp_path, "derived_roce_mlx5_ofed")
    assert rc == 0 and again == files
    assert stats["changed"] == 0
    # One host read (the facts gatherer is the test's own pre-task), every write task skipped.
    assert tasks["Read the files and their folders (one call)"]["changed"] is False
    assert all(r.get("skipped") for r in tasks["Write the settings files"]["results"])
    assert all(r.get("skipped") for r in tasks["Create the missing folders"]["results"])


def test_infiniband_host(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "derived_ib_mlx5_ipoib")
    assert rc == 0, tasks
    ucx = _lines(files["ucx/ucx.conf"])
    assert not [ln for ln in ucx if ln.startswith(("UCX_IB_GID_INDEX", "UCX_IB_TRAFFIC_CLASS"))]
    assert [ln for ln in ucx if ln.startswith("UCX_NET_DEVICES=")]
    assert not [ln for ln in _lines(files["nccl.conf"]) if ln.startswith(("NCCL_IB_GID_INDEX", "NCCL_IB_TC"))]


def test_lab_rxe_host_with_the_qos_tos(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", {"job_env_tc": 106})
    assert rc == 0, tasks
    assert _lines(files["ucx/ucx.conf"]) == [
        "UCX_IB_GID_INDEX=1", "UCX_IB_TRAFFIC_CLASS=106", "UCX_NET_DEVICES=rxe0:1", "UCX_TLS=rc,ud,sm,self",
        "UCX_UD_ETH_DGID_CHECK=n"]
    assert "NCCL_IB_TC=106" in _lines(files["nccl.conf"])
    assert "NCCL_IB_HCA==rxe0:1" in _lines(files["nccl.conf"])


def test_check_mode_writes_nothing_and_diff_shows_the_files(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", args=["--check", "--diff"])
    assert rc == 0, tasks
    assert files == dict((rel, None) for rel in FILES)
    results = tasks["Write the settings files"]["results"]
    assert all(r["changed"] for r in results)
    after = "".join(r["diff"][0]["after"] for r in results)
    assert "UCX_NET_DEVICES=rxe0:1\n" in after and "NCCL_IB_HCA==rxe0:1\n" in after


def test_drifted_file_is_rewritten(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1")
    assert rc == 0
    # an edit by hand that keeps the role's header (its marker line)
    ucx = tmp_path / "etc" / "ucx" / "ucx.conf"
    ucx.write_text("".join(ucx.read_text().splitlines(True)[:2]) + "UCX_TLS=tcp\n")
    rc, tasks, again, stats = run_role(tmp_path, "lab_rxe_lab1")
    assert rc == 0 and again == files
    assert [r["__job_env_file"]["path"].endswith("ucx.conf") for r in tasks["Write the settings files"]["results"]
            if r.get("changed")] == [True]


@pytest.mark.parametrize("bad, words", [
    ({"job_env_tc": 300}, "job_env_tc: 300 is not allowed; allowed: a whole number from 0 to 255"),
    ({"job_env_ucx_conf_path": "etc/ucx.conf"}, "job_env_ucx_conf_path: 'etc/ucx.conf' is not allowed"),
    ({"job_env_ucx_transports": ["verbs"]}, "unknown UCX transport 'verbs'"),
    ({"job_env_ucx_extra": {"UCX_TLS": "rc $(reboot)"}}, "job_env_ucx_extra[UCX_TLS]: 'rc $(reboot)'"),
    # a key that is no environment name would add a line to nccl.conf and job.env
    ({"job_env_nccl_extra": {"NCCL_X\nLD_PRELOAD": "/tmp/x.so"}}, "job_env_nccl_extra: the key 'NCCL_X\\nLD_PRELOAD'"),
    # a glob no device name can match would leave NCCL without RDMA (NCCL_IB_DISABLE=1), silently
    ({"job_env_devices": ["rxe9;x"]}, "job_env_devices[0]: 'rxe9;x' is not allowed"),
    ({"job_env_nccl_conf_path": "/etc/nccl.conf", "job_env_profile_path": "/etc/nccl.conf"},
     "job_env_profile_path: '/etc/nccl.conf' is also job_env_nccl_conf_path"),
])
def test_bad_variables_fail_before_anything_is_written(tmp_path, bad, words):
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", bad)
    assert rc != 0
    assert files == dict((rel, None) for rel in FILES)
    failed = [r for r in tasks.values() if r.get("failed")]
    assert failed and words in failed[0]["msg"], failed


def test_absent_removes_the_files(tmp_path):
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1")
    assert rc == 0 and all(files.values())
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", {"job_env_state": "absent"})
    assert rc == 0
    assert files == dict((rel, None) for rel in FILES)
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", {"job_env_state": "absent"})
    assert rc == 0 and stats["changed"] == 0


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_file_the_role_did_not_write_is_neither_replaced_nor_removed(tmp_path, state):
    """/etc/nccl.conf of another tool (or job_env_nccl_conf_path pointed at /etc/shadow): no marker line, so the role
    refuses before any change, naming the variable, and the file is as it was."""
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "nccl.conf").write_text("NCCL_DEBUG=WARN\n")
    rc, tasks, files, stats = run_role(tmp_path, "lab_rxe_lab1", {"job_env_state": state})
    assert rc != 0
    expected = dict((rel, None) for rel in FILES)
    expected["nccl.conf"] = "NCCL_DEBUG=WARN\n"
    assert files == expected
    failed = [r for r in tasks.values() if r.get("failed")]
    assert failed and failed[0]["msg"].startswith(
        "rdma.fabric.job_env: nothing was changed: job_env_nccl_conf_path: %s exists and is not a file "
        "rdma.fabric.job_env wrote (no line '# Written by rdma.fabric.job_env')" % (etc / "nccl.conf")), failed
