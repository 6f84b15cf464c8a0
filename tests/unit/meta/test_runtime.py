# -*- coding: utf-8 -*-
"""meta/runtime.yml as ansible-core reads it: requires_ansible and the module_defaults groups.

* requires_ansible admits the ansible-core running the tests (make test runs
  them on 2.17, 2.18 and 2.19: tests/packaging/matrix);
* every module of an action group documents the group's options and its
  membership (ansible-doc), and no other module claims a membership;
* a real playbook run on this machine: ``module_defaults`` with
  ``group/rdma.fabric.sysfs`` sets ``sysfs_path`` for rdma_device_facts and
  gpudirect, which then read a fixture sysfs tree (tests/unit/fixtures/sysfs,
  derived_rxe: one Soft-RoCE device, no GPU) instead of this machine's /sys.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

from ansible.module_utils.compat.version import LooseVersion
from ansible.release import __version__ as ansible_core_version

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
COLLECTIONS_PATH = os.path.abspath(os.path.join(COLLECTION, "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
RXE_SYS = os.path.join(COLLECTION, "tests", "unit", "fixtures", "sysfs", "derived_rxe", "sys")
# the options each group sets (a group holds only modules that accept them all)
GROUP_OPTIONS = {"sysfs": ["sysfs_path"]}


def runtime():
    with open(os.path.join(COLLECTION, "meta", "runtime.yml")) as f:
        return yaml.safe_load(f)


def env(tmp_path):
    e = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
             ANSIBLE_NOCOLOR="1", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_INVENTORY_UNPARSED_WARNING="false")
    e.pop("ANSIBLE_CONFIG", None)
    return e


def test_requires_ansible_admits_this_core():
    spec = runtime()["requires_ansible"]
    assert spec.startswith(">=") and "," not in spec, spec
    assert LooseVersion(ansible_core_version) >= LooseVersion(spec[2:]), (ansible_core_version, spec)


def test_groups_hold_modules_that_take_their_options(tmp_path):
    groups = runtime()["action_groups"]
    assert sorted(groups) == sorted(GROUP_OPTIONS)
    modules = sorted(n[:-3] for n in os.listdir(os.path.join(COLLECTION, "plugins", "modules"))
                     if n.endswith(".py") and not n.startswith("_"))
    proc = subprocess.run([os.path.join(BIN, "ansible-doc"), "--json"] + ["rdma.fabric." + m for m in modules],
                          env=env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    docs = json.loads(proc.stdout)
    for name in modules:
        doc = docs["rdma.fabric." + name]["doc"]
        claimed = doc.get("attributes", {}).get("action_group", {}).get("membership", [])
        member_of = ["rdma.fabric." + g for g, members in groups.items() if name in members]
        assert claimed == member_of, (name, claimed, member_of)
        for group in member_of:
            for option in GROUP_OPTIONS[group.split(".")[-1]]:
                assert option in doc["options"], (name, option)


def test_module_defaults_group_sets_sysfs_path(tmp_path):
    assert os.path.isdir(os.path.join(RXE_SYS, "class", "infiniband")), "conftest rebuilds the fixture trees"
    out = tmp_path / "out.json"
    playbook = tmp_path / "group.yml"
    playbook.write_text(u"""---
- name: Modules of group/rdma.fabric.sysfs read the tree module_defaults names
  hosts: localhost
  gather_facts: false
  module_defaults:
    group/rdma.fabric.sysfs:
      sysfs_path: %s
  tasks:
    - name: RDMA facts (no sysfs_path given)
      rdma.fabric.rdma_device_facts:
      register: facts
    - name: GPUDirect state (no sysfs_path given; check mode reads only)
      rdma.fabric.gpudirect:
        acs: ignore
      check_mode: true
      register: gpu
    - name: Keep what they read
      ansible.builtin.copy:
        content: "{{ {'rdma': facts.ansible_facts.rdma, 'gpudirect': gpu.ansible_facts.gpudirect} | to_json }}"
        dest: %s
        mode: "0644"
""" % (json.dumps(RXE_SYS), json.dumps(str(out))))
    proc = subprocess.run([os.path.join(BIN, "ansible-playbook"), "-i", "localhost,", "-c", "local",
                           "-e", "ansible_python_interpreter=" + sys.executable, str(playbook)],
                          env=env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:]
    got = json.loads(out.read_text())
    # the fixture's one Soft-RoCE device, not this machine's (which has none)
    assert [d["name"] for d in got["rdma"]["devices"]] == ["rxe0"]
    assert got["rdma"]["devices"][0]["driver"] == "rdma_rxe"
    assert got["gpudirect"]["gpus"] == [] and got["gpudirect"]["ready"] is False
