# -*- coding: utf-8 -*-
"""Static checks of the lossless_ethernet and host_tools roles: argument specs
mirror the defaults, the role's per-port keys are roce_qos's port options, one
roce_qos call for all ports, and the boot path runs the host runtime (no
ansible-core on the host)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model

ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles")
TYPES = {"str": str, "bool": bool, "int": int, "list": list, "dict": dict, "path": str}


def _yaml(role, *parts):
    with open(os.path.join(ROLES, role, *parts)) as f:
        return yaml.safe_load(f)


@pytest.mark.parametrize("role", ["lossless_ethernet", "host_tools"])
def test_argument_specs_mirror_defaults(role):
    defaults = _yaml(role, "defaults", "main.yml")
    specs = _yaml(role, "meta", "argument_specs.yml")["argument_specs"]
    for entry, spec in specs.items():
        options = spec["options"]
        assert sorted(options) == sorted(defaults), entry
        for name, opt in options.items():
            assert name.startswith(role + "_"), name
            assert opt.get("description"), name
            assert opt.get("default") == defaults[name], name
            if defaults[name] is not None and opt["type"] in TYPES:
                assert isinstance(defaults[name], TYPES[opt["type"]]), name
            if "choices" in opt:
                assert defaults[name] in opt["choices"], name
    tasks = set(os.listdir(os.path.join(ROLES, role, "tasks")))
    assert set(e + ".yml" for e in specs) <= tasks


def test_the_profile():
    defaults = _yaml("lossless_ethernet", "defaults", "main.yml")
    assert defaults["lossless_ethernet_pfc"] == [3]
    assert defaults["lossless_ethernet_dscp2prio"] == {26: 3, 48: 6}
    assert defaults["lossless_ethernet_cnp"] == {"dscp": 48, "priority": 6}
    assert defaults["lossless_ethernet_trust"] == "dscp"
    assert defaults["lossless_ethernet_roce_tos"] == 106 == (26 << 2) | 0b10
    assert defaults["lossless_ethernet_roce_mode"] == "v2"


def _tasks(task_list):
    """Every task of a task list, those inside blocks (block, rescue, always) included."""
    out = []
    for task in task_list:
        out.append(task)
        for section in ("block", "rescue", "always"):
            out.extend(_tasks(task.get(section) or []))
    return out


def test_role_passes_every_qos_option_the_module_has_in_one_call():
    """The role's per-port keys are exactly roce_qos's port options (less the other names and the addressing),
    and the role passes its whole port list in one call."""
    role_keys = _yaml("lossless_ethernet", "vars", "main.yml")["__lossless_ethernet_qos_keys"]
    assert set(role_keys) == set(model.ALL_KEYS + model.RUN_KEYS)
    defaults = _yaml("lossless_ethernet", "defaults", "main.yml")
    assert all("lossless_ethernet_" + k in defaults for k in role_keys)
    tasks = [t for t in _tasks(_yaml("lossless_ethernet", "tasks", "main.yml")) if "rdma.fabric.roce_qos" in t]
    # one call applies; one (check mode, only before the first apply to a port) reads what state absent puts back
    applying = [t for t in tasks if not t.get("check_mode")]
    assert len(applying) == 1 and "loop" not in applying[0]
    assert applying[0]["rdma.fabric.roce_qos"] == {"ports": "{{ lossless_ethernet_resolved_ports }}"}
    (reading,) = [t for t in tasks if t.get("check_mode")]
    assert reading["check_mode"] is True and "loop" not in reading


def test_the_boot_path_runs_the_host_runtime():
    with open(os.path.join(ROLES, "lossless_ethernet", "templates", "rdma-fabric-lossless.service.j2")) as f:
        unit = f.read()
    assert "ExecStart={{ host_tools_exec }} qos-apply --dir {{ __lossless_ethernet_saved_dir }}" in unit
    host_vars = _yaml("host_tools", "vars", "main.yml")
    assert host_vars["host_tools_pyz"] == "/usr/lib/rdma-fabric/rdma-fabric.pyz"
    assert host_vars["host_tools_exec"] == "{{ host_tools_python }} -E -s {{ host_tools_pyz }}"
    assert not os.path.exists(os.path.join(ROLES, "lossless_ethernet", "files"))


def test_the_paths_the_role_reads_are_what_ansible_templates(tmp_path):
    """The role's own path expressions run through a real ansible-playbook (vars/main.yml as the role loads it).

    Ansible doubles the backslashes of a template in a YAML block scalar, so a regex written there as '\\\\Z'
    matched a literal backslash and left every netdev unchanged: host_state then refused 'eth1' as a path
    (seen on the lab). Here the saved-settings paths must come out absolute, and the saved files back as netdevs.
    """
    from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run
    playbook = """
- hosts: localhost
  gather_facts: false
  vars_files:
    - %s
    - %s
    - %s
  tasks:
    - name: Paths
      ansible.builtin.debug:
        msg:
          persist: "{{ __lossless_ethernet_persist_paths }}"
          saved: "{{ __lossless_ethernet_saved_files }}"
""" % (os.path.join(ROLES, "lossless_ethernet", "defaults", "main.yml"),
       os.path.join(ROLES, "lossless_ethernet", "vars", "main.yml"),
       os.path.join(ROLES, "host_tools", "vars", "main.yml"))
    extra = {"lossless_ethernet_resolved_ports": [{"netdev": "eth1"}, {"netdev": "dcbsim0"}],
             "host_tools_python": "/usr/bin/python3",
             "__lossless_ethernet_state": {"paths": {"/etc/rdma-fabric/lossless": {
                 "entries": ["eth1.json", "dcbsim0.json", "notes.txt"]}}}}
    rc, tasks, text = run(tmp_path, playbook, extra)
    assert rc == 0, text
    msg = tasks["Paths"]["localhost"]["msg"]
    assert all(p.startswith("/") for p in msg["persist"]), msg["persist"]
    assert "/etc/rdma-fabric/lossless/eth1.json" in msg["persist"]
    assert "/etc/rdma-fabric/lossless/dcbsim0.json" in msg["persist"]
    assert msg["saved"] == ["eth1.json", "dcbsim0.json"]
