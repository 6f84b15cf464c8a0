# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.validation_plan and validation_results actions' logic
(``make_plan``, ``collect``, ``write_json``), on the REAL lab facts of tests/unit/fixtures/fabric.
The actions' reading of hostvars is exercised by tests/unit/roles/rdma_validate."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.parsing.dataloader import DataLoader

from ansible_collections.rdma.fabric.plugins.action.validation_plan import make_plan
from ansible_collections.rdma.fabric.plugins.action.validation_results import collect, write_json
from ansible_collections.rdma.fabric.plugins.modules.validation_plan import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import limit_hosts

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fabric")


def lab(name):
    with open(os.path.join(FIXTURES, "lab_%s_facts.json" % name)) as f:
        return json.load(f)["rdma"]


def args(**kw):
    checked = ArgumentSpecValidator(ARGUMENT_SPEC).validate(dict({"hosts": ["lab1", "lab2"]}, **kw))
    assert not checked.error_messages, checked.error_messages
    return checked.validated_parameters


def values(**per_host):
    out = {"lab1": {"rdma": lab("lab1")}, "lab2": {"rdma": lab("lab2")}}
    for host, extra in per_host.items():
        out[host].update(extra)
    return out


def test_plan_of_the_lab_and_zero_means_no_limit():
    plan = make_plan(args(), values())["plan"]
    assert [(r["server"]["host"], r["client"]["host"]) for r in plan["runs"]] == [("lab1", "lab2")]
    assert plan["waves"] == [{"runs": [0], "servers": {"lab1": 0}, "clients": {"lab2": 0}}]
    assert plan["pairs"][0]["thresholds"]["max_latency_us"] is None  # max_latency_us 0: no limit
    assert make_plan(args(check_only=True), values()) == {"changed": False}


def test_pinned_device_data_ip_and_switch_come_from_each_host():
    plan = make_plan(args(), values(lab2={"data_ip": "198.51.100.2", "switch": "leaf2"},
                                    lab1={"switch": "leaf1", "device": "rxe0", "port": 1}))["plan"]
    assert plan["runs"][0]["client"]["ip"] == "198.51.100.2"
    assert len(plan["pairs"]) == 1  # two hosts on two switches: still one pair
    pinned = make_plan(args(), values(lab1={"device": "mlx5_9"}))["plan"]
    assert pinned["pairs"][0]["problems"][0].startswith("lab1: RDMA device mlx5_9 not found")


def test_dropped_hosts_fail_their_pre_check():
    plan = make_plan(args(live_hosts=["lab1"]), values())["plan"]
    assert plan["runs"] == [] and plan["waves"] == []
    assert plan["results"][0]["message"] == "pre-check failed: lab2: unreachable or failed before validation"


def test_a_slice_plans_only_the_hosts_it_can_reach():
    """--limit lab1,lab3 (slice 1 of a sliced job) with lab2 of the other slice named too, its facts at
    hand (the shared fact cache): lab2 is left out, its endpoint not even picked."""
    per_host = dict(values(), lab3={"rdma": lab("lab2"), "data_ip": "192.0.2.13"})
    plan = make_plan(args(hosts=["lab1", "lab2", "lab3"], reachable_hosts=["lab1", "lab3"]), per_host)["plan"]
    assert [(p["server"], p["client"], p["ok"]) for p in plan["pairs"]] == [("lab1", "lab3", True)]
    assert plan["left_out"] == ["lab2"] and sorted(plan["endpoints"]) == ["lab1", "lab3"]
    # no limit: every host, the ring across the slices
    whole = make_plan(args(hosts=["lab1", "lab2", "lab3"]), per_host)["plan"]
    assert whole["left_out"] == [] and len(whole["pairs"]) == 3


GROUPS = {"all": ["lab1", "lab2", "lab3", "lab4"], "ungrouped": [], "rdma_nodes": ["lab1", "lab2", "lab3", "lab4"],
          "slice1": ["lab1", "lab3"], "gpu": ["lab3", "lab4"]}


@pytest.mark.parametrize("limit, hosts", [
    ("slice1", ["lab1", "lab3"]), ("lab1,lab2", ["lab1", "lab2"]), ("rdma_nodes:!slice1", ["lab2", "lab4"]),
    ("slice1:&gpu", ["lab3"]), ("rdma_nodes[1:2]", ["lab2", "lab3"]), ("~lab[12]", ["lab1", "lab2"]), ("nosuchhost", []),
])
def test_the_hosts_of_a_limit_as_ansible_playbook_resolves_it(limit, hosts):
    assert limit_hosts({"groups": GROUPS, "ansible_limit": limit}, DataLoader()) == hosts


def test_a_limit_from_a_file_and_no_limit(tmp_path):
    (tmp_path / "retry").write_text("lab4\nlab2\n")
    assert limit_hosts({"groups": GROUPS, "ansible_limit": "@%s" % (tmp_path / "retry")}, DataLoader()) == ["lab2", "lab4"]
    assert limit_hosts({"groups": GROUPS}, DataLoader()) is None
    assert limit_hosts({"groups": GROUPS, "ansible_limit": ""}, DataLoader()) is None


@pytest.mark.parametrize("kw, per_host, message", [
    ({"max_latency_us": float("nan")}, {}, "rdma_validate_max_latency_us: nan is not allowed"),
    ({"min_bw_gbps": float("inf")}, {}, "rdma_validate_min_bw_gbps: inf is not allowed"),
    ({"concurrency": -1}, {}, "rdma_validate_concurrency: -1 is out of range"),
    ({}, {"lab2": {"port": "one"}}, "rdma_validate_port of host lab2: 'one' is not allowed"),
    # a line break after an IPv6 scope id passes Python's ipaddress; not here
    ({}, {"lab1": {"data_ip": "fe80::1%eth1\n"}}, "rdma_validate_data_ip of host lab1"),
])
def test_errors_name_the_variable(kw, per_host, message):
    with pytest.raises(fv.ValidateError, match=message.replace("(", "\\(").replace(")", "\\)")):
        make_plan(args(var_prefix="rdma_validate_", check_only=True, **kw), values(**per_host))


def one_passed_run():
    """An ib_write_bw plan of the lab pair and the records of its one run, passed."""
    plan = make_plan(args(tests=["ib_write_bw"]), values())["plan"]
    run_id = plan["runs"][0]["id"]
    client = {"results": [{"test": "ib_write_bw", "passed": True, "bandwidth_gbps": 0.05, "message": "ok"}]}
    return plan, {"lab1": {run_id: {"server_start": {"ansible_job_id": "1"}, "server": {"finished": 1}}},
                  "lab2": {run_id: {"client": client}}}


def test_collect_and_write(tmp_path):
    plan, records = one_passed_run()
    results, summary = collect(plan, records)
    assert [r["test"] for r in results] == ["precheck", "ib_write_bw"] and summary["ok"] is True
    checked = collect(plan, {}, check_mode=True)[0]
    assert checked[1]["passed"] is None and checked[1]["message"] == "not run in check mode"
    path = write_json(str(tmp_path / "reports"), summary, results)
    data = json.loads((tmp_path / "reports" / "validation.json").read_text())
    assert path.endswith("reports/validation.json") and data["validation"] == results and data["summary"] == summary
    with pytest.raises(fv.ValidateError, match="plan: must be the plan returned by rdma.fabric.validation_plan"):
        collect({"runs": None}, {})


def test_extra_results_follow_the_pair_tests_in_the_summary_and_the_file(tmp_path):
    plan, records = one_passed_run()
    workload = [{"test": "mpi_allreduce", "passed": True, "message": "ok"},
                {"test": "ucx_tag_lat", "passed": False, "message": "ucx_tag_lat failed: no result row in the output"}]
    results, summary = collect(plan, records, extra=workload)
    assert [r["test"] for r in results] == ["precheck", "ib_write_bw", "mpi_allreduce", "ucx_tag_lat"]
    assert summary["failed"] == 1 and summary["ok"] is False and summary["by_test"]["mpi_allreduce"]["passed"] == 1
    write_json(str(tmp_path), summary, results)
    assert json.loads((tmp_path / "validation.json").read_text())["validation"][2:] == workload
    for bad in ([{"passed": True}], [{"test": "x", "passed": "yes"}], ["mpi_allreduce"]):
        with pytest.raises(fv.ValidateError, match=r"extra: entry 0 is not a result \(a dict with a 'test' name"):
            collect(plan, records, extra=bad)
