# -*- coding: utf-8 -*-
"""Unit tests for the validation filters (plugins/filter/rdma_validate.py).

Inputs: REAL perftest captures and REAL lab facts (see the fixtures' README files).
The filters are also run through Ansible's own templating, the way the
rdma_validate role calls them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import rdma_validate as flt

HERE = os.path.dirname(os.path.abspath(__file__))
PERFTEST = os.path.join(HERE, "..", "..", "fixtures", "perftest")
FABRIC = os.path.join(HERE, "..", "..", "fixtures", "fabric")


def capture(name):
    with open(os.path.join(PERFTEST, name)) as f:
        return f.read()


def facts(host):
    with open(os.path.join(FABRIC, "lab_%s_facts.json" % host)) as f:
        return json.load(f)["rdma"]


def test_filter_names():
    assert sorted(flt.FilterModule().filters()) == [
        "perftest_parse", "validate_endpoint", "validate_plan", "validate_result", "validate_summary",
        "validate_wave_sides"]


def test_validate_wave_sides_on_the_lab_plan():
    """lab2 outside the play (a reference host): lab1 runs both sides of their one run."""
    plan = flt.validate_plan(dict((h, flt.validate_endpoint(facts(h), h)) for h in ("lab1", "lab2")), ["lab1", "lab2"])
    sides = flt.validate_wave_sides(plan, 0, "lab1", ["lab2"])
    assert sides == {"server": {"run": 0, "host": "lab1"}, "client": {"run": 0, "host": "lab2"}, "peer_start": "lab1"}
    with pytest.raises(AnsibleFilterError, match="validate_wave_sides: not a wave of this plan"):
        flt.validate_wave_sides(plan, 5, "lab1")


def test_perftest_parse_text_and_registered_result():
    parsed = flt.perftest_parse(capture("ib_write_bw_client_gbits.txt"), "ib_write_bw", min_bandwidth_gbps=0.04)
    assert parsed["bandwidth_gbps"] == 0.0481 and parsed["passed"] is True
    registered = {"rc": 1, "stdout": "", "stderr": capture("ib_send_lat_noserver.txt")}
    parsed = flt.perftest_parse(registered, "ib_send_lat")
    assert parsed["passed"] is False
    assert parsed["message"].startswith("ib_send_lat client failed: exited with rc 1")
    assert flt.perftest_parse(capture("rping_client.txt"), "rping", count=10)["pings"] == 10
    with pytest.raises(AnsibleFilterError, match="perftest_parse: test: unknown test 'iperf3'"):
        flt.perftest_parse("", "iperf3")


def test_endpoint_plan_result_summary_chain():
    eps = {
        "lab1": flt.validate_endpoint(facts("lab1"), host="lab1", device="", port="0", data_ip=""),
        "lab2": flt.validate_endpoint(facts("lab2"), host="lab2", port=None),
    }
    assert eps["lab1"]["ip"] == "192.0.2.11" and eps["lab2"]["gid_index"] == 1
    plan = flt.validate_plan(eps, ["lab1", "lab2"], tests=["ib_write_bw"], base_port="19000", lat_iterations="50")
    (run,) = plan["runs"]
    assert run["tests"][0]["tcp_port"] == 19000
    client = {"results": [{"test": "ib_write_bw", "passed": True, "bandwidth_gbps": 0.0481,
                           "message": "ib_write_bw client ok: 0.048 Gb/s"}]}
    entries = flt.validate_result(run, client=client, server_start={"ansible_job_id": "9"}, server={"finished": 1})
    assert [(e["test"], e["passed"], e["bandwidth_gbps"]) for e in entries] == [("ib_write_bw", True, 0.0481)]
    summary = flt.validate_summary(plan["results"] + entries)
    assert summary["passed"] == 2 and summary["ok"] is True


def test_filter_errors_name_the_parameter():
    with pytest.raises(AnsibleFilterError, match="validate_plan: topology: unknown 'star'; allowed: ring, all_pairs"):
        flt.validate_plan({}, ["a", "b"], topology="star")
    with pytest.raises(AnsibleFilterError, match="validate_plan: invalid literal"):
        flt.validate_plan({}, ["a", "b"], base_port="eighty")
    with pytest.raises(AnsibleFilterError, match="the input must be a run from validate_plan"):
        flt.validate_result({"test": "rping"})


def test_filters_through_ansible_templating(tmp_path):
    """The role's expressions, evaluated by a real `ansible` run on localhost (no remote host involved)."""
    collection = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
    collections_path = os.path.abspath(os.path.join(collection, "..", "..", ".."))
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps({"rdma": facts("lab1"), "peer": facts("lab2")}))
    out = tmp_path / "plan.json"
    expr = ("{{ {'lab1': rdma | rdma.fabric.validate_endpoint(host='lab1'),"
            "    'lab2': peer | rdma.fabric.validate_endpoint(host='lab2')}"
            "   | rdma.fabric.validate_plan(['lab1', 'lab2'], tests=['rping']) | to_json }}")
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path, ANSIBLE_LOCALHOST_WARNING="false",
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    ansible = os.path.join(os.path.dirname(sys.executable), "ansible")
    proc = subprocess.run(
        [ansible, "localhost", "-c", "local", "-e", "@%s" % variables, "-e", "ansible_python_interpreter=%s" % sys.executable,
         "-m", "ansible.builtin.copy", "-a", json.dumps({"content": expr, "dest": str(out), "mode": "0644"})],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stdout
    plan = json.loads(out.read_text())
    assert plan["results"][0]["passed"] is True
    assert plan["runs"][0]["tests"] == [{"test": "rping", "tcp_port": 18515, "size": None, "iterations": None,
                                         "duration": None, "count": 10, "min_bandwidth_gbps": None,
                                         "max_latency_us": None}]


DEPRECATED = ("perftest_parse", "validate_plan", "validate_result", "validate_summary")


def test_deprecated_filters_are_routed_with_a_removal_version_and_documented_so():
    """meta/runtime.yml deprecates exactly the four filters nothing in the collection uses; their docs agree."""
    import yaml
    top = os.path.join(HERE, "..", "..", "..", "..")
    with open(os.path.join(top, "meta", "runtime.yml")) as f:
        routing = yaml.safe_load(f)["plugin_routing"]["filter"]
    assert sorted(routing) == sorted(DEPRECATED)
    for name in DEPRECATED:
        entry = routing[name]["deprecation"]
        assert entry["removal_version"] == "1.0.0" and entry["warning_text"].startswith(("Use", "Run")), name
        with open(os.path.join(top, "plugins", "filter", name + ".yml")) as f:
            doc = yaml.safe_load(f)["DOCUMENTATION"]
        assert doc["deprecated"]["removed_in"] == entry["removal_version"] and doc["deprecated"]["alternative"], name
        assert name in flt.FilterModule().filters()   # still there until 1.0.0


def test_deprecated_filters_still_work_through_ansible_and_warn(tmp_path):
    """The whole 0.1.0 chain in a real playbook: the same values as before, one deprecation warning per deprecated
    filter (ansible-core prints it from meta/runtime.yml's plugin_routing), none for validate_endpoint."""
    collection = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
    variables = tmp_path / "vars.json"
    variables.write_text(json.dumps({"rdma": facts("lab1"), "peer": facts("lab2"),
                                     "bw_text": capture("ib_write_bw_client_gbits.txt")}))
    out = tmp_path / "out.json"
    playbook = tmp_path / "old.yml"
    playbook.write_text(u"""---
- name: The validation filters of 0.1.0
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Chain them
      ansible.builtin.copy:
        content: "{{ {'plan': plan, 'entries': entries, 'summary': (plan.results + entries) | rdma.fabric.validate_summary,
                      'parsed': bw_text | rdma.fabric.perftest_parse('ib_write_bw', min_bandwidth_gbps=0.04)} | to_json }}"
        dest: %s
        mode: "0644"
      vars:
        plan: >-
          {{ {'lab1': rdma | rdma.fabric.validate_endpoint(host='lab1'),
              'lab2': peer | rdma.fabric.validate_endpoint(host='lab2')}
             | rdma.fabric.validate_plan(['lab1', 'lab2'], tests=['ib_write_bw']) }}
        entries: >-
          {{ plan.runs[0] | rdma.fabric.validate_result(client={'results': [{'test': 'ib_write_bw', 'passed': true,
             'bandwidth_gbps': 0.0481, 'message': 'ok'}]}, server_start={'ansible_job_id': '9'}, server={'finished': 1}) }}
""" % json.dumps(str(out)))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(collection, "..", "..", "..")),
               ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_NOCOLOR="1",
               ANSIBLE_DEPRECATION_WARNINGS="true", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"))
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,", "-c", "local",
         "-e", "@%s" % variables, "-e", "ansible_python_interpreter=%s" % sys.executable, str(playbook)],
        env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
        check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:]
    got = json.loads(out.read_text())
    assert [(e["test"], e["passed"], e["bandwidth_gbps"]) for e in got["entries"]] == [("ib_write_bw", True, 0.0481)]
    assert got["summary"]["passed"] == 2 and got["summary"]["ok"] is True
    assert got["parsed"]["bandwidth_gbps"] == 0.0481 and got["parsed"]["passed"] is True
    text = " ".join(proc.stdout.split())   # ansible-core wraps long warnings at the terminal width
    warnings = text.split("[DEPRECATION WARNING]: ")[1:]
    for name in DEPRECATED:
        assert any("rdma.fabric.%s" % name in w and "has been deprecated" in w and "1.0.0" in w for w in warnings), (
            name, proc.stdout[-4000:])
    assert not any("validate_endpoint" in w.split(" has been deprecated")[0] for w in warnings)
