# -*- coding: utf-8 -*-
"""Unit tests for the rdma_device_facts module (argument handling, result shape).

The module runs in-process through AnsibleModule with patched arguments; its
input is the fixture sysfs trees under tests/unit/fixtures/sysfs.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest


from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
from ansible_collections.rdma.fabric.plugins.modules import rdma_device_facts

SYSFS_FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "sysfs"))


@pytest.fixture(name="run_module")
def fixture_run_module(run_main):
    """run_module(args) -> (ok, result), through the shared harness (conftest.py)."""
    return lambda args: run_main(rdma_device_facts.main, args)


def fixture_sys(name):
    return os.path.join(SYSFS_FIXTURES, name, "sys")


def test_returns_facts_unchanged(run_module):
    ok, result = run_module({"sysfs_path": fixture_sys("derived_roce_mlx5_ofed")})
    assert ok and result["changed"] is False
    rdma = result["ansible_facts"]["rdma"]
    assert rdma == gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"))
    assert rdma["schema_version"] == 1
    assert rdma["devices"][0]["ports"][0]["roce_v2_ipv4_gid_index"] == 5
    assert "counters" not in rdma["devices"][0]["ports"][0]
    json.dumps(result)  # serialisable as the module's output


def test_check_and_diff_mode(run_module):
    ok, result = run_module({"sysfs_path": fixture_sys("derived_rxe"), "_ansible_check_mode": True, "_ansible_diff": True})
    assert ok and result["changed"] is False
    assert result["diff"] == {"before": {}, "after": {}}
    assert result["ansible_facts"]["rdma"]["devices"][0]["name"] == "rxe0"


def test_devices_and_gather_subset(run_module):
    ok, result = run_module({"sysfs_path": fixture_sys("derived_roce_mlx5_ofed"), "devices": ["rxe*"]})
    assert ok and result["ansible_facts"]["rdma"]["devices"] == []
    assert result["ansible_facts"]["rdma"]["stack"]["flavor"] == "inbox"
    ok, result = run_module({"sysfs_path": fixture_sys("derived_roce_mlx5_ofed"), "devices": ["mlx5_*"], "gather_subset": ["counters"]})
    port = result["ansible_facts"]["rdma"]["devices"][0]["ports"][0]
    assert port["counters"]["port_xmit_data"] == 123456789 and port["hw_counters"]["rp_cnp_handled"] == 0


@pytest.mark.parametrize("args, message", [
    ({"sysfs_path": "/nonexistent/sys"}, "sysfs_path: '/nonexistent/sys' is not a directory"),
    ({"sysfs_path": SYSFS_FIXTURES}, "sysfs_path: '%s' does not look like a sysfs root" % SYSFS_FIXTURES),
    ({"devices": [""]}, "devices: every entry must be a non-empty device name glob"),
    ({"gather_subset": ["hardware"]}, "gather_subset"),
])
def test_bad_input_fails_naming_the_parameter(args, message, run_module):
    ok, result = run_module(args)
    assert not ok
    assert message in result["msg"]
    if "gather_subset" in args:
        assert "all, min, counters" in result["msg"]


def test_host_without_rdma_is_not_an_error(run_module):
    ok, result = run_module({"sysfs_path": fixture_sys("procfs_net_eth0_ecn")})
    assert ok and result["ansible_facts"]["rdma"]["devices"] == []
    assert result["ansible_facts"]["rdma"]["stack"] == {"flavor": "none", "version": None}


def test_documentation_matches_argument_spec():
    import yaml
    doc = yaml.safe_load(rdma_device_facts.DOCUMENTATION)
    assert doc["module"] == "rdma_device_facts"
    assert set(doc["options"]) == {"devices", "gather_subset"}  # sysfs_path comes from the rdma.fabric.sysfs fragment
    assert doc["options"]["gather_subset"]["choices"] == ["all", "min", "counters"]
    ret = yaml.safe_load(rdma_device_facts.RETURN)
    rdma = ret["ansible_facts"]["contains"]["rdma"]["contains"]
    facts = gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"), gather_subset=["counters"])
    assert set(rdma) == set(facts)
    device_doc = rdma["devices"]["contains"]
    assert set(device_doc) == set(facts["devices"][0])
    port_doc = device_doc["ports"]["contains"]
    assert set(port_doc) == set(facts["devices"][0]["ports"][0])
    assert set(port_doc["gids"]["contains"]) == set(facts["devices"][0]["ports"][0]["gids"][0])
    assert set(port_doc["roce"]["contains"]) == set(facts["devices"][0]["ports"][0]["roce"])
    assert set(device_doc["sriov"]["contains"]) == {"totalvfs", "numvfs", "is_vf", "physfn"}
    assert set(rdma["stack"]["contains"]) == set(facts["stack"])


def test_read_errors_become_warnings_not_tracebacks(run_module, tmp_path, monkeypatch):
    """ETIMEDOUT on a port attribute (fault-injection double of the read call): null value, a warning naming the file."""
    import errno
    import shutil
    from ansible.module_utils import basic
    from ansible_collections.rdma.fabric.tests.unit.fixtures.read_faults import KernelRefusals

    root = tmp_path / "derived_rxe"
    shutil.copytree(os.path.join(SYSFS_FIXTURES, "derived_rxe"), str(root), symlinks=True)
    rate = os.path.join(os.path.realpath(str(root / "sys" / "class" / "infiniband" / "rxe0")), "ports", "1", "rate")
    warned = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, text: warned.append(text))
    KernelRefusals(monkeypatch, [rate], errno.ETIMEDOUT)
    ok, result = run_module({"sysfs_path": str(root / "sys")})
    assert ok and result["ansible_facts"]["rdma"]["devices"][0]["ports"][0]["rate"] is None
    assert warned == ["could not read %s: %s (ETIMEDOUT); reported as unknown" % (rate, os.strerror(errno.ETIMEDOUT))]


@pytest.mark.parametrize("bad", ["/sys\0", "/sys/\n/x"])
def test_nul_or_newline_in_sysfs_path_is_named(run_module, bad):
    ok, result = run_module({"sysfs_path": bad})
    assert not ok and result["msg"].startswith("sysfs_path: ")
    assert "NUL byte" in result["msg"] or "control character" in result["msg"]
