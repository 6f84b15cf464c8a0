# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.fabric_report action: files, idempotence, check and diff mode,
per-host input read from hostvars (live hosts, hosts that dropped out), validation sources, a
large fleet's summarised renderings, and playbooks/report.yml end to end without a lab.

Inputs are the REAL lab facts in tests/unit/fixtures/fabric (README.md there) and the derived
fixture hosts of tests/unit/fixtures/k8s/facts. The action writes into pytest's tmp_path, for real.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re
import stat
import subprocess
import sys

import pytest
import yaml

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.rdma.fabric.plugins.action.fabric_report import ReportError, run_report
from ansible_collections.rdma.fabric.plugins.modules.fabric_report import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils.test_fabric_plan import fleet_plan

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "fabric")
K8S_FACTS = os.path.join(HERE, "..", "..", "fixtures", "k8s", "facts")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def k8s_facts(name):
    with open(os.path.join(K8S_FACTS, name + ".json")) as f:
        return json.load(f)


@pytest.fixture(name="run")
def fixture_run():
    """The action's argument checks and run_report, as the action runs them (without a play around them)."""
    def run(host_values=None, validation_found=None, **args):
        check = args.pop("_ansible_check_mode", False)
        diff = args.pop("_ansible_diff", False)
        checked = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
        if checked.error_messages:
            return {"failed": True, "msg": "; ".join(checked.error_messages)}
        try:
            return run_report(checked.validated_parameters, host_values=host_values, validation=validation_found,
                              check_mode=check, diff=diff)
        except ReportError as e:
            return {"failed": True, "msg": str(e)}

    return run


def inputs():
    lab1, lab2 = load("lab_lab1_facts.json"), load("lab_lab2_facts.json")
    return {
        "lab1": {"reachable": True, "rdma": lab1["rdma"], "gpudirect": lab1["gpudirect"]},
        "lab2": {"reachable": True, "rdma": lab2["rdma"], "gpudirect": lab2["gpudirect"]},
    }


VALIDATION = [{"test": "ib_write_bw", "hosts": ["lab1", "lab2"], "server": "lab1", "client": "lab2",
               "devices": ["rxe0", "rxe0"], "ports": [1, 1], "gid_indices": [1, 1], "bandwidth_gbps": 0.0481,
               "latency_us": None, "min_bandwidth_gbps": 0.0025, "passed": True,
               "message": "ib_write_bw client ok: 0.048 Gb/s"}]
STAMP = "2026-11-21T01:00:00+00:00"


def test_writes_three_files_then_is_idempotent(run, tmp_path):
    dest = str(tmp_path / "reports")
    result = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    assert result["changed"] is True and result["changed_files"] == ["json", "md", "html"]
    assert result["paths"] == {"json": dest + "/fabric-report.json", "md": dest + "/fabric-report.md",
                               "html": dest + "/fabric-report.html"}
    for path in result["paths"].values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o755
    with open(result["paths"]["json"]) as f:
        data = json.load(f)
    assert sorted(data["hosts"]) == ["lab1", "lab2"]
    assert data["validation"] == VALIDATION
    assert data["summary"]["ok"] is True and data["generated_at"] == STAMP
    assert result["summary_lines"][0] == "RDMA fabric report: %s/fabric-report.html" % dest
    assert result["problems"] == []
    # same input, same files: nothing to write
    again = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    assert again["changed"] is False and again["changed_files"] == []
    assert not [n for n in os.listdir(dest) if n.startswith(".")]


def test_rollout_gates_reach_the_report(run, tmp_path):
    """This run's staged-rollout gates (what report.yml passes from site.yml) in the HTML report and the verdict."""
    gates = [{"batch": 1, "of": 2, "hosts": ["lab1"], "reference": None, "ok": True, "failed": {}, "passed": ["lab1"],
              "message": "batch 1 of 2 (lab1) passed its health gate"},
             {"batch": 2, "of": 2, "hosts": ["lab2"], "reference": "lab1", "ok": True, "failed": {}, "passed": ["lab2"],
              "message": "batch 2 of 2 (lab2) passed its health gate (tested against lab1)"}]
    result = run(dest=str(tmp_path), hosts=inputs(), validation=VALIDATION, generated_at=STAMP, rollout=gates)
    assert result["summary"]["ok"] is True
    with open(result["paths"]["html"]) as f:
        html = f.read()
    assert "Staged rollout: health gates (2)" in html and "batch 2 of 2 (lab2) passed its health gate (tested against lab1)" in html
    bad = run(dest=str(tmp_path / "x"), hosts=inputs(), rollout="batch 1")
    assert bad["failed"] is True and "rollout" in bad["msg"]


def test_a_plan_file_reaches_every_format(run, tmp_path):
    """plan_file (what report.yml passes from rdma_fabric_drain_plan): the report carries the planned changes."""
    plan = fleet_plan()
    (tmp_path / "fabric-plan.json").write_text(json.dumps(plan))
    dest = tmp_path / "reports"
    result = run(dest=str(dest), hosts=inputs(), validation=VALIDATION, generated_at=STAMP,
                 plan_file=str(tmp_path / "fabric-plan.json"))
    assert "warnings" not in result and result["changed_files"] == ["json", "md", "html"]
    assert json.loads((dest / "fabric-report.json").read_text())["plan"] == plan
    html = (dest / "fabric-report.html").read_text()
    assert '<h2>Planned changes <span class="badge ok">CHECK MODE</span></h2>' in html
    assert "<p>Check mode: nothing was changed. 4 hosts, 3 would change (7 changes).</p>" in html
    assert "<tr><th>Would reboot</th><td class=\"num\">1</td><td>gpu-a10</td></tr>" in html
    assert "### gpu-a2: 2 changes" in (dest / "fabric-report.md").read_text()
    # without the plan: the same report, no section
    plain = run(dest=str(dest), hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    assert "warnings" not in plain and plain["changed_files"] == ["json", "md", "html"]
    assert "plan" not in json.loads((dest / "fabric-report.json").read_text())
    assert "Planned changes" not in (dest / "fabric-report.html").read_text() + (dest / "fabric-report.md").read_text()


@pytest.mark.parametrize("name, content, why", [
    ("missing.json", None, "cannot be read as JSON ([Errno 2] No such file or directory"),
    ("truncated.json", '{"hosts": {', "cannot be read as JSON (Expecting"),
    ("binary.json", b"\xff\xfe", "cannot be read as JSON ("),
    ("deep.json", "[" * 100000 + "]" * 100000, "cannot be read as JSON ("),
    ("validation.json", json.dumps({"validation": VALIDATION}), "is not a fabric plan as the fabric_plan callback writes it "
                                                                "(hosts: not a dictionary keyed by host)"),
    ("bad-host.json", json.dumps(dict(fleet_plan(), hosts={"n1": {"changes": 1, "stages": {"s": [{"item": 1}]}}})),
     "(hosts.n1.stages.s[0]: not a change with a task name)"),
])
def test_a_plan_file_that_cannot_be_used_is_a_warning(run, tmp_path, name, content, why):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    dest = tmp_path / "reports"
    result = run(dest=str(dest), hosts=inputs(), validation=VALIDATION, generated_at=STAMP, plan_file=str(path))
    assert "failed" not in result and result["changed_files"] == ["json", "md", "html"]
    (warning,) = result["warnings"]
    assert warning.startswith("plan_file: %s " % path) and why in warning
    assert warning.endswith("; the report is written without its planned changes")
    assert "plan" not in json.loads((dest / "fabric-report.json").read_text())
    assert "Planned changes" not in (dest / "fabric-report.html").read_text()


def test_check_mode_writes_nothing_and_diff_shows_the_json(run, tmp_path):
    dest = str(tmp_path / "reports")
    result = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP,
                 _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True and not os.path.exists(dest)
    assert result["diff"]["before"] == ""
    assert json.loads(result["diff"]["after"])["summary"]["hosts"] == 2
    run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    changed = dict(VALIDATION[0], passed=False, message="ib_write_bw client failed: exited with rc 1")
    result = run(dest=dest, hosts=inputs(), validation=[changed], generated_at=STAMP, _ansible_check_mode=True,
                 _ansible_diff=True)
    assert result["changed"] is True
    assert '"passed": true' in result["diff"]["before"] and '"passed": false' in result["diff"]["after"]
    with open(os.path.join(dest, "fabric-report.json")) as f:
        assert json.load(f)["validation"][0]["passed"] is True


def test_formats_basename_and_mode(run, tmp_path):
    result = run(dest=str(tmp_path), hosts=inputs(), formats=["html"], basename="lab", mode="0600", generated_at=STAMP)
    assert os.listdir(str(tmp_path)) == ["lab.html"]
    assert stat.S_IMODE(os.stat(result["paths"]["html"]).st_mode) == 0o600


@pytest.mark.parametrize("args,message", [
    (dict(basename="../x"), "basename: '../x' is not allowed; allowed: a file name"),
    (dict(basename="fabric\nreport"), "basename: 'fabric\\nreport' is not allowed; allowed: a file name"),
    (dict(mode="rwx"), "mode: 'rwx' is not allowed; allowed: an octal file mode"),
    (dict(mode="4777"), "mode: '4777' is not allowed; allowed: an octal file mode without setuid"),
    (dict(formats=["pdf"]), "value of formats must be one or more of: json, md, html"),
    (dict(hosts={"lab1": "up"}), "hosts: the value for lab1 must be a dictionary"),
])
def test_bad_input_writes_nothing(run, tmp_path, args, message):
    params = dict(dest=str(tmp_path / "out"), hosts=inputs())
    params.update(args)
    result = run(**params)
    assert result["failed"] is True and message in result["msg"]
    assert not os.path.exists(str(tmp_path / "out"))


def test_dest_that_is_a_file(run, tmp_path):
    target = tmp_path / "file"
    target.write_text(u"x")
    result = run(dest=str(target), hosts=inputs())
    assert result["failed"] is True and result["msg"] == "dest: %s exists and is not a folder" % target


def test_host_list_reads_live_hosts_and_hosts_that_dropped_out(run, tmp_path):
    lab1, lab2 = load("lab_lab1_facts.json"), load("lab_lab2_facts.json")
    values = {
        "lab1": {"rdma": lab1["rdma"], "gpudirect": lab1["gpudirect"], "ping": {"skipped": True},
                 "qos": {"ports": {"eth1": load("lab_lab1_roce_qos_check.json")}}},
        "lab2": {"rdma": lab2["rdma"], "gpudirect": None, "ping": {"unreachable": True, "msg": "ssh: connection refused"}},
        "lab3": {"rdma": lab2["rdma"], "gpudirect": None},   # failed earlier; read again from the controller
        "lab4": {"rdma": None, "gpudirect": None},           # failed earlier; that read failed too
    }
    reads = [{"item": "lab3", "ansible_facts": {"rdma": {"devices": []}}},
             {"item": "lab4", "unreachable": True, "msg": "ssh: no route to host"}]
    result = run(dest=str(tmp_path), hosts=["lab1", "lab2", "lab3", "lab4"], live_hosts=["lab1", "lab2"], reads=reads,
                 host_values=values, validation_found=VALIDATION, generated_at=STAMP)
    data = json.loads((tmp_path / "fabric-report.json").read_text())
    hosts = data["hosts"]
    assert (hosts["lab1"]["status"], hosts["lab1"]["facts_source"]) == ("ok", "live")
    assert hosts["lab1"]["devices"][0]["ports"][0]["qos"]["state"]["roce_tos"] == 106
    assert (hosts["lab2"]["status"], hosts["lab2"]["facts_source"]) == ("unreachable", "cache")
    assert hosts["lab2"]["problems"][0] == "unreachable: ssh: connection refused"
    assert hosts["lab3"]["status"] == "failed" and hosts["lab3"]["devices"] == []
    assert hosts["lab4"]["status"] == "unreachable" and hosts["lab4"]["problems"][0] == "unreachable: ssh: no route to host"
    assert data["summary"]["unreachable"] == ["lab2", "lab4"] and data["summary"]["failed"] == ["lab3"]
    # the validation found in hostvars, node pools from the facts (lab1 and lab2 share one layout)
    assert data["validation"] == VALIDATION
    assert [p["hosts"] for p in data["pools"]] == [2, 1] and hosts["lab1"]["pool"] == hosts["lab2"]["pool"]
    assert result["summary"]["pools"] == 2 and result["problem_count"] == len(data["problems"])
    assert any(line.startswith("node pools: 2 (soft1-") for line in result["summary_lines"])


def test_validation_from_the_file_and_its_errors(run, tmp_path):
    (tmp_path / "validation.json").write_text(json.dumps({"summary": {}, "validation": VALIDATION}))
    run(dest=str(tmp_path / "r"), hosts=inputs(), validation_file=str(tmp_path / "validation.json"), generated_at=STAMP)
    assert json.loads((tmp_path / "r" / "fabric-report.json").read_text())["validation"] == VALIDATION
    run(dest=str(tmp_path / "none"), hosts=inputs(), validation_file=str(tmp_path / "missing.json"))
    assert json.loads((tmp_path / "none" / "fabric-report.json").read_text())["validation"] == []
    (tmp_path / "bad.json").write_text("{")
    result = run(dest=str(tmp_path / "bad"), hosts=inputs(), validation_file=str(tmp_path / "bad.json"))
    assert result["failed"] and result["msg"].startswith("validation_file: %s cannot be read as JSON" % (tmp_path / "bad.json"))
    assert run(dest=str(tmp_path / "x"), hosts="lab1")["msg"].startswith("hosts: must be a list of inventory host names")


def big_fleet(n=300):
    """n hosts of three derived shapes; every 25th RoCE host with its port down; a ring of test results."""
    shapes = [k8s_facts("roce-a"), k8s_facts("ib-a"), k8s_facts("roce-portdown")]
    names = ["node%04d" % i for i in range(n)]
    values = {}
    for i, name in enumerate(names):
        rdma = copy.deepcopy(shapes[0 if i % 25 else 2] if i % 3 != 1 else shapes[1])
        values[name] = {"rdma": rdma, "gpudirect": None, "ping": {"skipped": True}}
    validation = []
    for i, server in enumerate(names):
        client = names[(i + 1) % n]
        for test in ("precheck", "ib_write_bw"):
            ok = (i % 40) != 5
            validation.append({"test": test, "hosts": [server, client], "server": server, "client": client,
                               "passed": ok, "bandwidth_gbps": 90.0 if test != "precheck" else None,
                               "message": "ok" if ok else "test double: failed"})
    return names, values, validation


def test_a_large_fleet_is_summarised(run, tmp_path):
    names, values, validation = big_fleet()
    result = run(dest=str(tmp_path), hosts=names, host_values=values, validation_found=validation, generated_at=STAMP)
    html = (tmp_path / "fabric-report.html").read_text()
    data = json.loads((tmp_path / "fabric-report.json").read_text())
    # everything in the JSON, a summary in the HTML
    assert len(data["hosts"]) == 300 and len(data["validation"]) == 600
    assert len(html) < 400000
    assert html.count("<section class=\"host") == 0 and html.count("<details class=\"host") == len(
        [n for n in names if data["hosts"][n]["status"] != "ok"])
    # the host table lists failing hosts first
    rows = re.findall(r'<tr class="(bad|)"><td>(?:<a href="#host-)?(node[0-9]+)', html)
    assert len(rows) == 300 and rows[0][0] == "bad" and rows[-1][0] == ""
    first_ok = [i for i, r in enumerate(rows) if r[0] == ""][0]
    assert all(r[0] == "bad" for r in rows[:first_ok]) and all(r[0] == "" for r in rows[first_ok:])
    # a failing host's name links to its collapsed details; a healthy one has none
    assert '<a href="#host-%s">' % rows[0][1] in html and '<details class="host problems" id="host-%s">' % rows[0][1] in html
    assert '<a href="#host-%s">' % rows[-1][1] not in html
    # the heatmaps: pass/fail and the measured bandwidth (every pair 90 Gb/s: all green), blocks of 3 hosts
    # (300 / 120), a tooltip per cell, no script, no external reference
    assert html.count("<svg") == 2 and "3 hosts per row/column" in html
    assert "<title>servers node0000 .. node0002 -&gt; clients" in html
    assert "<title>servers node0000 .. node0002 -&gt; clients node0000 .. node0002: 90 Gb/s (ib_write_bw node0000 -&gt; " \
           "node0001; the worst of 2)</title>" in html
    assert "<script" not in html and not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    # failed tests listed, passing ones only counted
    assert html.count("<td>ib_write_bw</td>") == len([r for r in validation if r["test"] == "ib_write_bw" and not r["passed"]])
    lines = result["summary_lines"]
    assert len(lines) < 60 and any("more host(s)" in line for line in lines)
    md = (tmp_path / "fabric-report.md").read_text()
    assert "| Host | Status | Pool |" in md and len(md) < 400000


def test_the_module_file_is_documentation_only():
    from ansible_collections.rdma.fabric.plugins.modules import fabric_report as module_file
    assert module_file.ARGUMENT_SPEC is ARGUMENT_SPEC and "action plugin" in module_file.DOCUMENTATION


WRAPPER = """
- name: Load the fixture RDMA facts (TEST DOUBLE for rdma_device_facts)
  hosts: rdma_nodes
  gather_facts: false
  tasks:
    - name: Set ansible_facts.rdma from the fixture file
      ansible.builtin.set_fact:
        rdma: "{{ lookup('ansible.builtin.file', rdma_fixture) | from_json }}"
        cacheable: true
    - name: Fail one host, as a stage that failed earlier in a site.yml run would
      ansible.builtin.fail:
        msg: an earlier stage failed here
      when: inventory_hostname == 'stopped'

- name: The report
  ansible.builtin.import_playbook: {report}
"""


def test_report_playbook_end_to_end_without_a_lab(tmp_path):
    """playbooks/report.yml with the facts as read (as site.yml runs it): every host ends play 1 at once,
    play 2 reads the hostvars; 'stopped' failed earlier, so it is read again from the controller (a local
    connection here: it reads this machine's sysfs, whatever RDMA devices that has)."""
    hosts = {"roce-a": "roce-a", "roce-b": "roce-a", "ib-a": "ib-a", "stopped": "ib-b"}
    inventory = {"all": {"hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
                         "children": {"rdma_nodes": {"hosts": dict(
                             (h, {"rdma_fixture": os.path.join(K8S_FACTS, f + ".json"), "ansible_connection": "local",
                                  "ansible_python_interpreter": sys.executable}) for h, f in hosts.items())}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "site.yml").write_text("---" + WRAPPER.replace("{report}", os.path.join(REPO, "playbooks", "report.yml")))
    (tmp_path / "reports").mkdir()
    (tmp_path / "fabric-plan.json").write_text(json.dumps(fleet_plan()))
    (tmp_path / "reports" / "validation.json").write_text(json.dumps({"validation": [
        dict(VALIDATION[0], hosts=["roce-a", "roce-b"], server="roce-a", client="roce-b")]}))
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    argv = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
            "-e", "rdma_report_dir=%s" % (tmp_path / "reports"), "-e", "rdma_report_facts_current=true",
            "-e", "rdma_fabric_gpudirect_facts=false", "-e", "rdma_report_qos_state=false",
            "-e", "rdma_fabric_drain_plan=%s" % (tmp_path / "fabric-plan.json"), str(tmp_path / "site.yml")]
    proc = subprocess.run(argv, env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 2, proc.stdout[-4000:]  # the failed host fails the run, the report is still written
    data = json.loads((tmp_path / "reports" / "fabric-report.json").read_text())
    assert sorted(data["hosts"]) == ["ib-a", "roce-a", "roce-b", "stopped"]
    assert data["hosts"]["roce-a"]["status"] == "ok" and data["hosts"]["roce-a"]["facts_source"] == "live"
    assert data["hosts"]["roce-a"]["pool"] == data["hosts"]["roce-b"]["pool"] != data["hosts"]["ib-a"]["pool"]
    assert data["hosts"]["stopped"]["status"] == "failed" and data["summary"]["failed"] == ["stopped"]
    assert data["validation"][0]["server"] == "roce-a"
    # site.yml's drain plan, passed on by report.yml: the planned changes beside what the run found
    assert data["plan"]["summary"] == {"hosts": 4, "hosts_changing": 3, "changes": 7}
    assert '<details class="host changes" id="planned-changes-gpu-a10" open>' in (tmp_path / "reports" / "fabric-report.html").read_text()
    # play 1 ended at once (end_play): none of its reads ran
    assert "TASK [Check that the host answers]" not in proc.stdout
    assert "RDMA fabric report: %s" % (tmp_path / "reports" / "fabric-report.html") in proc.stdout
