# -*- coding: utf-8 -*-
"""The fabric plan (plugins/plugin_utils/plan.py) and its callback, rdma.fabric.fabric_plan, through a real
ansible-playbook run in check mode on localhost (files in a temporary folder)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

from ansible_collections.rdma.fabric.plugins.plugin_utils import plan as fp
from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import collections_path

ROCE_QOS_RESULT = {"changed": True, "ports": {
    "eth1": {"changed": True, "before": {"pfc": [], "roce_tos": 0}, "after": {"pfc": [3], "roce_tos": 106},
             "changes": {"pfc": True, "roce_tos": True}, "commands": ["dcb pfc set"]},
    "eth2": {"changed": False, "before": {"pfc": [3]}, "after": {"pfc": [3]}, "changes": {"pfc": False}}}}


def test_plan_keeps_changes_per_host_and_stage():
    p = fp.Plan()
    p.check_mode = True
    p.add("n1", "Lossless", "Configure lossless RoCE on every port (one call)", ROCE_QOS_RESULT)
    p.add("n1", "Lossless", "Read", {"changed": False})
    p.add("n2", "Install", "Install packages", {"changed": False})
    p.add("n1", "Install", "Write files", {"changed": True, "results": [
        {"changed": True, "item": "a", "diff": [{"after_header": "/etc/a", "before": "", "after": "x" * 3000}]},
        {"changed": False, "item": "b"}]})
    data = p.as_dict()
    assert data["summary"] == {"hosts": 2, "hosts_changing": 1, "changes": 2}
    assert data["hosts"]["n2"] == {"changes": 0, "stages": {}}
    (qos,) = data["hosts"]["n1"]["stages"]["Lossless"]
    assert list(qos["ports"]) == ["eth1"] and qos["ports"]["eth1"]["after"] == {"pfc": [3], "roce_tos": 106}
    (files,) = data["hosts"]["n1"]["stages"]["Install"]
    assert files["item"] == "a" and files["diff"][0]["after"].endswith("... (cut)")
    md = fp.markdown(data)
    assert "Check mode: nothing was changed. 2 hosts, 1 would change (2 changes)." in md
    assert "  - eth1 pfc: [] -> [3]" in md and "  - eth1 roce_tos: 0 -> 106" in md and "  - /etc/a" in md
    assert "## n2: nothing to change" in md
    assert data["disruption"] == {"drain": ["n1"], "drain_why": {"n1": "2 changes planned"}, "reboot": [],
                                  "driver_restart": []}


def test_plan_names_the_hosts_that_would_be_drained_rebooted_or_restarted():
    p = fp.Plan()
    p.check_mode = True
    p.add("n1", "mofed", "Reboot to activate the new modules", {"changed": True, "rebooted": True},
          action="ansible.builtin.reboot", args={"reboot_timeout": 900})
    p.add("n2", "mofed", "Restart openibd", {"changed": True, "invocation": {"module_args": {"name": "openibd", "state": "restarted"}}},
          action="ansible.builtin.systemd_service")
    p.add("n3", "mofed", "Restart chronyd", {"changed": True}, action="ansible.builtin.systemd_service",
          args={"name": "chronyd", "state": "restarted"})
    p.add("n4", "mofed", "Reboot", {"changed": False}, action="ansible.builtin.reboot")   # nothing to do: no reboot
    p.fail("n5", "mofed", "Read", "boom")
    data = p.as_dict()
    assert data["disruption"] == {
        "drain": ["n1", "n2", "n3", "n5"],
        "drain_why": {"n1": "1 changes planned", "n2": "1 changes planned", "n3": "1 changes planned",
                      "n5": "failed in the plan"},
        "reboot": ["n1"], "driver_restart": ["n2"]}
    md = fp.markdown(data)
    assert "- Would reboot: n1\n" in md and "- Would restart the RDMA driver stack (openibd): n2\n" in md
    assert "rdma_fabric_drain_plan): n1 (1 changes planned), n2 (1 changes planned), n3 (1 changes planned), n5 (failed in the plan)" in md


PLAYBOOK = """
- name: Stage one
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write a file
      ansible.builtin.copy:
        content: "hello\\n"
        dest: "{{ target }}"
        mode: "0644"
    - name: Read it
      ansible.builtin.stat:
        path: "{{ target }}"
"""


def test_callback_writes_the_plan_of_a_check_mode_run(tmp_path):
    (tmp_path / "p.yml").write_text(PLAYBOOK)
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(), ANSIBLE_CALLBACKS_ENABLED="rdma.fabric.fabric_plan",
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    target = tmp_path / "file"
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", "--check", "--diff", "-e",
                           json.dumps({"target": str(target), "rdma_report_dir": str(tmp_path / "reports")}),
                           str(tmp_path / "p.yml")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout
    assert not target.exists()
    data = json.loads((tmp_path / "reports" / "fabric-plan.json").read_text())
    assert data["check_mode"] is True and data["summary"] == {"hosts": 1, "hosts_changing": 1, "changes": 1}
    (change,) = data["hosts"]["localhost"]["stages"]["Stage one"]
    assert change["task"] == "Write a file" and change["diff"][0]["after"] == "hello\n"
    assert "fabric plan: 1 of 1 hosts would change (1 changes)" in proc.stdout
    assert (tmp_path / "reports" / "fabric-plan.md").read_text().startswith("# Fabric plan")


def test_plan_playbook_refuses_a_run_that_would_change_hosts(tmp_path):
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(), ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1")
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
                           "-c", "local", os.path.join(repo, "playbooks", "plan.yml")], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False,
                          timeout=300)
    assert proc.returncode == 2
    assert "plan.yml only plans: run it with --check --diff and ANSIBLE_CALLBACKS_ENABLED=rdma.fabric.fabric_plan" in \
        " ".join(proc.stdout.split())
    assert "PLAY [Gather RDMA and GPUDirect facts]" not in proc.stdout
