# -*- coding: utf-8 -*-
"""site.yml's staged rollout, run by ansible-playbook on this machine.

Three inventory hosts on a local connection carry the REAL lab facts of lab1 and lab2 and a copy
of lab2's with its own address (tests/unit/fixtures/fabric); a first play is a TEST DOUBLE for
the facts stage (it sets those facts; the run skips the `facts` tag and every host stage's tag,
so nothing on this machine is changed). What really runs is site.yml's own orchestration: the
settings check, the batches, each batch's user hook and health gate (rdma_validate with the real
rdma.fabric.perftest module on each side, a reference host's side by delegation), the record
(rollout.json), and the stop. This machine has no RDMA device and no rping: every pair test
fails with the module's own message, which is what makes a gate fail here. A gate that passes on
real traffic, and a batch that really changes hosts, are shown in the lab (molecule/site converges by a staged rollout).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

from ansible_collections.rdma.fabric.tests.unit.fixtures.fabric.lab_hosts import lab_facts
from ansible_collections.rdma.fabric.tests.unit.playbooks.site_double import FACTS_DOUBLE, REPO

SKIP = "facts,mofed,soft_roce,lossless_ethernet,gpudirect,k8s_rdma_stack,validate,report"


HOOK = """
- name: Leave a mark for the test (the user's hook, on the batch's host)
  ansible.builtin.copy:
    content: "{{ inventory_hostname }}"
    dest: "{{ marks }}/{{ inventory_hostname }}.pre"
    mode: "0644"

- name: Fail where the test asks (a host that breaks during its batch)
  ansible.builtin.fail:
    msg: broken by the test
  when: inventory_hostname == fail_host | default('')
"""


def run(tmp_path, extra=(), group_vars=None, path_first=None):
    facts = lab_facts()
    tmp_path.mkdir(parents=True, exist_ok=True)
    marks = tmp_path / "marks"
    marks.mkdir()
    hosts = {}
    for name in ("lab1", "lab2", "lab3"):
        path = tmp_path / ("%s.json" % name)
        path.write_text(json.dumps(facts[name]))
        hosts[name] = {"facts_file": str(path)}
    inventory = {"all": {"vars": dict(group_vars or {}), "children": {"rdma_nodes": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text("---" + FACTS_DOUBLE)
    (tmp_path / "hook.yml").write_text("---" + HOOK)
    # ansible-test (the tarball test) makes an unmatched host pattern an error; site.yml's GPU and
    # Kubernetes plays match nothing here, which a real run reports as a warning.
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_HOST_PATTERN_MISMATCH="warning",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    if path_first:
        env["PATH"] = str(path_first) + os.pathsep + env.get("PATH", "")
    reports = tmp_path / "reports"
    args = ["-i", str(tmp_path / "inventory.yml"), "--skip-tags", SKIP,
            "-e", json.dumps({"marks": str(marks), "rdma_report_dir": str(reports),
                              "rdma_fabric_batch_pre_tasks": str(tmp_path / "hook.yml"),
                              "rdma_validate_tests": ["rping"], "rdma_validate_install_tools": False,
                              "rdma_validate_refresh_facts": False, "rdma_validate_timeout": 5,
                              "rdma_validate_connect_retries": 1})]
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + args + list(extra)
                          + [str(tmp_path / "play.yml")], env=env, cwd=str(tmp_path), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=False, timeout=600)
    record = reports / "rollout.json"
    return proc, json.loads(record.read_text()) if record.exists() else None, sorted(os.listdir(str(marks)))


def test_a_failing_gate_stops_the_rollout_before_the_next_batch(tmp_path):
    """serial 1 from group_vars: batch 1 (lab1, no pair: endpoint check) passes, batch 2 (lab2 tested
    against lab1, lab1's side by delegation) fails its gate, batch 3 (lab3) never starts."""
    proc, record, marks = run(tmp_path, group_vars={"rdma_fabric_serial": 1})
    out = proc.stdout
    assert proc.returncode == 2, out[-5000:]
    assert "Batch 1 of 3: lab1" in out and "Batch 2 of 3: lab2, tested against lab1" in out
    assert "batch 1 of 3 (lab1) passed its health gate" in out
    assert "Rollout stopped at batch 2 of 3 (lab2): the health gate failed for lab2: rping: rping not found" in out
    assert "Batch 3 of 3" not in out
    # the user's hook ran on batch 1 and 2 only: lab3 untouched
    assert marks == ["lab1.pre", "lab2.pre"]
    assert record["serial"] == [1]
    assert record["batches"] == [["lab1"], ["lab2"], ["lab3"]]
    first, second = record["gates"]
    assert first["ok"] is True and first["hosts"] == ["lab1"]
    assert second["ok"] is False and second["reference"] == "lab1" and list(second["failed"]) == ["lab2"]
    # both sides of the pair with the reference host ran (no "did not run"): each side's own message
    (reason,) = second["failed"]["lab2"]
    assert reason.startswith("rping: rping not found on this host") and "(server: rping not found" in reason
    # the stage plays of the all-at-once path have no hosts; nothing after the rollout ran
    assert "PLAY [Lossless Ethernet on the RoCE ports]" not in out.split("PLAY RECAP")[0].split("Batch 2 of 3")[1]
    assert "PLAY [Report" not in out


def test_two_host_batch_pairs_inside_the_batch(tmp_path):
    proc, record, marks = run(tmp_path, extra=["-e", '{"rdma_fabric_serial": [2, "100%"]}'])
    assert proc.returncode == 2, proc.stdout[-5000:]
    assert record["batches"] == [["lab1", "lab2"], ["lab3"]]
    (gate,) = record["gates"]
    assert gate["reference"] is None and sorted(gate["failed"]) == ["lab1", "lab2"]
    assert marks == ["lab1.pre", "lab2.pre"]


def test_max_fail_percentage_lets_the_rollout_go_on(tmp_path):
    """rdma_fabric_max_fail_percentage 50: lab2 breaks in batch 1 (its hook fails), lab1 goes on (its pair
    with lab2 counts against lab2 alone), batch 2 (lab3) runs and is tested against lab1."""
    proc, record, marks = run(tmp_path, extra=["-e", '{"rdma_fabric_serial": [2, 1], "rdma_fabric_max_fail_percentage": 50,'
                                                     ' "fail_host": "lab2"}'])
    out = proc.stdout
    assert "Batch 2 of 2: lab3, tested against lab1" in out, out[-5000:]
    assert marks == ["lab1.pre", "lab2.pre", "lab3.pre"]
    first, second = record["gates"]
    assert first["passed"] == ["lab1"] and first["failed"] == {"lab2": ["failed or unreachable during the batch"]}
    assert second["passed"] == [] and list(second["failed"]) == ["lab3"]


def test_default_max_fail_percentage_stops_at_one_failed_host(tmp_path):
    proc, record, marks = run(tmp_path, extra=["-e", '{"rdma_fabric_serial": [2, 1], "fail_host": "lab2"}'])
    assert proc.returncode == 2
    assert marks == ["lab1.pre", "lab2.pre"] and record is None
    assert "Batch 2 of 2" not in proc.stdout


def test_bad_serial_stops_before_any_host_is_touched(tmp_path):
    for value, text in ((0, "rdma_fabric_serial: value 0 is not accepted (Ansible would take it as all hosts at once)"),
                        ("abc", "rdma_fabric_serial: value 'abc' is not accepted"),
                        ("[1,5]", "rdma_fabric_serial: got the text '[1,5]', not a list")):
        proc, record, marks = run(tmp_path / str(value).strip("[]").replace(",", "_"),
                                  extra=["-e", "rdma_fabric_serial=%s" % value])
        assert proc.returncode == 2, proc.stdout[-3000:]
        assert text in proc.stdout
        assert '[1, 5, "25%"]' in proc.stdout.replace('\\"', '"')  # ansible-core 2.17 prints the quotes escaped
        assert record is None and marks == []
        assert "PLAY [Gather RDMA and GPUDirect facts]" not in proc.stdout
    proc, record, marks = run(tmp_path / "mfp",
                              group_vars={"rdma_fabric_serial": "25%", "rdma_fabric_max_fail_percentage": 150})
    assert proc.returncode == 2
    assert "rdma_fabric_max_fail_percentage: 150 is out of range" in proc.stdout and marks == []


def test_bad_batch_reboot_stops_before_any_host_is_touched(tmp_path):
    # rdma_fabric_batch_reboot: true would reboot the test's local hosts (this machine): only refusals are tested
    # here; the lab's site scenario reboots each batch for real.
    for name, settings, text in (
            ("text", {"rdma_fabric_batch_reboot": "perhaps"},
             "rdma_fabric_batch_reboot: 'perhaps' is not accepted; accepted: true or false"),
            ("number", {"rdma_fabric_batch_reboot": 1}, "rdma_fabric_batch_reboot: 1 is not accepted; accepted: true or false"),
            ("timeout", {"rdma_fabric_batch_reboot_timeout": "10m"},
             "rdma_fabric_batch_reboot_timeout: '10m' is not accepted; accepted: a whole number of seconds from 60"),
            ("short", {"rdma_fabric_batch_reboot_timeout": 5},
             "rdma_fabric_batch_reboot_timeout: 5 is too short")):
        proc, record, marks = run(tmp_path / name, group_vars=dict(settings, rdma_fabric_serial=1))
        assert proc.returncode == 2, proc.stdout[-3000:]
        assert text in " ".join(proc.stdout.split()), proc.stdout[-3000:]
        assert record is None and marks == []
        assert "PLAY [Gather RDMA and GPUDirect facts]" not in proc.stdout
    # from the command line (text), and without rdma_fabric_serial: still checked before anything runs
    proc, record, marks = run(tmp_path / "cli", extra=["-e", "rdma_fabric_batch_reboot=perhaps"])
    assert proc.returncode == 2, proc.stdout[-3000:]
    assert "rdma_fabric_batch_reboot: 'perhaps' is not accepted" in proc.stdout
    assert marks == [] and "PLAY [Gather RDMA and GPUDirect facts]" not in proc.stdout


def test_drain_timeout_and_a_single_batch_stop_before_any_host_is_touched(tmp_path):
    """A drain timeout Kubernetes cannot take failed at batch 1's drain, after the user's hook ran; a serial that
    puts every host in one batch is what the staged rollout exists to prevent."""
    for name, settings, text in (
            ("drain", {"rdma_fabric_serial": 1, "rdma_fabric_k8s_drain": True, "rdma_fabric_k8s_drain_timeout": "abc"},
             "rdma_fabric_k8s_drain_timeout: 'abc' is not accepted; accepted: a whole number of seconds from 1 to 86400"),
            ("single", {"rdma_fabric_serial": "100%"},
             "rdma_fabric_serial: '100%' puts all 3 hosts in one batch")):
        proc, record, marks = run(tmp_path / name, group_vars=settings)
        assert proc.returncode == 2, proc.stdout[-3000:]
        assert text in " ".join(proc.stdout.split()), proc.stdout[-3000:]
        assert record is None and marks == []
        assert "PLAY [Gather RDMA and GPUDirect facts]" not in proc.stdout


def test_unset_serial_keeps_the_all_at_once_path(tmp_path):
    proc, record, marks = run(tmp_path)
    out = proc.stdout
    assert proc.returncode == 0, out[-5000:]
    staged = out.split("PLAY [Staged rollout, batch by batch (rdma_fabric_serial)]")[1].split("PLAY [")[0]
    assert "skipping: no hosts matched" in staged
    assert "PLAY [Lossless Ethernet on the RoCE ports]" in out and record is None and marks == []
    # the warnings are the test's (its facts double makes no GPU group, its inventory has no Kubernetes
    # group), as before the rollout existed
    assert [line for line in out.splitlines() if "[WARNING]" in line] == [
        "[WARNING]: Could not match supplied host pattern, ignoring: rdma_fabric_gpu_hosts",
        "[WARNING]: Could not match supplied host pattern, ignoring: k8s_rdma_controller"]


def fake_scontrol(tmp_path):
    """A TEST DOUBLE for Slurm's scontrol (first on PATH): it appends its arguments to scontrol.log."""
    folder = tmp_path / "bin"
    folder.mkdir(parents=True)
    script = folder / "scontrol"
    script.write_text('#!/bin/sh\necho "$*" >> %s\n' % (tmp_path / "scontrol.log"))
    script.chmod(0o755)
    return folder


def test_drains_cover_only_the_hosts_the_plan_shows_changing(tmp_path):
    """serial 1, Slurm drain with a plan: lab1 has nothing to change (never drained nor resumed), lab2 has
    changes (drained; its gate fails here, so it stays drained and the rollout stops), lab3 is not reached."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    plan = tmp_path / "fabric-plan.json"
    plan.write_text(json.dumps({"check_mode": True, "failed": {}, "unreachable": [], "hosts": {
        "lab1": {"changes": 0, "stages": {}},
        "lab2": {"changes": 2, "stages": {"Lossless Ethernet on the RoCE ports": [{"task": "x"}, {"task": "y"}]}}}}))
    proc, record, marks = run(tmp_path, path_first=fake_scontrol(tmp_path), extra=["-e", json.dumps({
        "rdma_fabric_serial": 1, "rdma_fabric_slurm_drain": True, "rdma_fabric_drain_plan": str(plan)})])
    out = proc.stdout
    assert proc.returncode == 2, out[-5000:]
    assert "Not drained (the plan shows nothing to change): lab1" in out
    assert (tmp_path / "scontrol.log").read_text().splitlines() == [
        "update nodename=lab2 state=drain reason=rdma.fabric rollout"]
    assert marks == ["lab1.pre", "lab2.pre"]


def test_without_a_plan_every_host_of_a_batch_is_drained_and_resumed(tmp_path):
    proc, record, marks = run(tmp_path, path_first=fake_scontrol(tmp_path), extra=["-e", json.dumps({
        "rdma_fabric_serial": 1, "rdma_fabric_slurm_drain": True})])
    assert proc.returncode == 2
    assert (tmp_path / "scontrol.log").read_text().splitlines() == [
        "update nodename=lab1 state=drain reason=rdma.fabric rollout", "update nodename=lab1 state=resume",
        "update nodename=lab2 state=drain reason=rdma.fabric rollout"]


def test_a_bad_plan_stops_before_any_host_is_touched(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "not-check.json").write_text(json.dumps({"check_mode": False, "hosts": {}}))
    for name, text in (("missing.json", "rdma_fabric_drain_plan: cannot read %s as a fabric plan" % (tmp_path / "missing.json")),
                       ("not-check.json", "rdma_fabric_drain_plan: %s is not the plan of a check-mode run" % (tmp_path / "not-check.json"))):
        proc, record, marks = run(tmp_path / name.split(".", maxsplit=1)[0], extra=["-e", json.dumps({
            "rdma_fabric_serial": 1, "rdma_fabric_k8s_drain": True, "rdma_fabric_drain_plan": str(tmp_path / name)})])
        assert proc.returncode == 2, proc.stdout[-3000:]
        assert text in " ".join(proc.stdout.split()), proc.stdout[-3000:]
        assert marks == [] and record is None
