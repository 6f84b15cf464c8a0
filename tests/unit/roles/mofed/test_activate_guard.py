# -*- coding: utf-8 -*-
"""The mofed role's activation step (tasks/activate.yml), run by ansible-playbook on this machine.

A local host gets a TEST DOUBLE of its facts: the constructed network and RDMA facts of
tests/unit/fixtures/network/constructed_mlx5_bond_facts.json (a management VLAN on a bond of
two ConnectX ports, a virtio NIC on the default route, an IPoIB netdev; no NVIDIA NIC exists
here), and what verify_modules.yml would have read: mlx5_core loaded with another srcversion
than the installed file (a new stack waiting to be activated). The role's real tasks decide;
everything runs in check mode, so no service is restarted and nothing reboots.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))
FACTS = os.path.join(REPO, "tests", "unit", "fixtures", "network", "constructed_mlx5_bond_facts.json")

PLAY = """
- name: The activation step of rdma.fabric.mofed
  hosts: node
  gather_facts: false
  tasks:
    - name: Set the facts (TEST DOUBLE for setup and rdma_device_facts)
      fixture_facts:
        path: "{{ facts_file }}"

    - name: Activate
      ansible.builtin.include_role:
        name: rdma.fabric.mofed
        tasks_from: activate.yml
"""


# A TEST DOUBLE module (set_fact refuses a VLAN's name such as bond0.100 as a variable name; setup
# returns it as a fact): it returns the fixture as ansible_facts, as setup does.
FIXTURE_FACTS_MODULE = """#!/usr/bin/python
import json
from ansible.module_utils.basic import AnsibleModule
module = AnsibleModule(argument_spec=dict(path=dict(type="path", required=True)), supports_check_mode=True)
with open(module.params["path"]) as f:
    facts = json.load(f)
facts.pop("_comment", None)
module.exit_json(changed=False, ansible_facts=facts)
"""


def run(tmp_path, address, **values):
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "fixture_facts.py").write_text(FIXTURE_FACTS_MODULE)
    inventory = {"all": {"hosts": {"node": {"ansible_host": address, "ansible_connection": "local",
                                            "ansible_python_interpreter": sys.executable}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text("---" + PLAY)
    extra = dict({"facts_file": FACTS, "mofed_flavor": "doca", "__mofed_loaded_src": {"mlx5_core": "0A1B"},
                  "__mofed_modinfo_by_name": {"mlx5_core": {"srcversion": "9F8E"}}}, **values)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    return subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "--check",
                           "-i", str(tmp_path / "inventory.yml"), "-e", json.dumps(extra), str(tmp_path / "play.yml")],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)


@pytest.mark.parametrize("values,verb", [
    ({"mofed_openibd_restart": "always"}, "restart openibd"),
    ({"mofed_allow_reboot": True}, "reboot"),
    ({"mofed_openibd_restart": "safe", "mofed_allow_reboot": True}, "reboot"),
])
def test_management_on_the_reloaded_driver_is_refused(tmp_path, values, verb):
    proc = run(tmp_path, "10.20.0.5", **values)
    out = proc.stdout
    assert proc.returncode == 2, out[-4000:]
    assert ("mofed: refusing to %s on node to activate the new modules (mlx5_core): the management connection "
            "(10.20.0.5, found by address) runs over bond0.100 > bond0 > ens1f0 > ens1f1 (drivers mlx5_core), "
            "which that reloads. Set mofed_allow_management_restart: true" % verb) in " ".join(out.split())
    assert "Restart openibd" not in out and "TASK [rdma.fabric.mofed : Reboot" not in out


def test_opt_in_lets_the_restart_go_ahead(tmp_path):
    proc = run(tmp_path, "10.20.0.5", mofed_openibd_restart="always", mofed_allow_management_restart=True)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "TASK [rdma.fabric.mofed : Restart openibd in the background]" in proc.stdout


def test_management_elsewhere_is_not_refused(tmp_path):
    """SSH over the virtio NIC: the restart is allowed without opting in (skipped here in check mode)."""
    proc = run(tmp_path, "198.51.100.7", mofed_openibd_restart="always")
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "refusing" not in proc.stdout


def test_safe_mode_keeps_its_meaning(tmp_path):
    """safe: no restart when the management connection is on the driver, and only a report (no reboot asked)."""
    proc = run(tmp_path, "10.30.0.5", mofed_openibd_restart="safe")
    out = " ".join(proc.stdout.split())
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert "management interface on ib_ipoib" in out
    assert re.search(r"Restart openibd \(the management interface is not on a driver it reloads\)\] \**"
                     r" skipping: \[node\] TASK \[rdma.fabric.mofed : Restart openibd in the background\] \**"
                     r" skipping: \[node\]", out)
