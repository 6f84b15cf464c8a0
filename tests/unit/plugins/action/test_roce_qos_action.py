# -*- coding: utf-8 -*-
"""rdma.fabric.roce_qos's action plugin, run by a real ansible-playbook on localhost.

The input that triggered the defect (issue 16): ``dscp2prio: {26: 3, "26": 5}``
- two keys that both mean DSCP 26. Ansible's JSON transport keeps only one of
them, so without the controller-side check the module would silently take
``26: 5``. The second task proves the plugin hands a clean call on to the
module (which fails on its own, on purpose, before touching the host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import collections_path, run

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Duplicate DSCP key
      rdma.fabric.roce_qos:
        netdev: eth1
        dscp2prio: {26: 3, "26": 5}
      ignore_errors: true

    - name: Duplicate key in a port of the list form
      rdma.fabric.roce_qos:
        ports:
          - {netdev: eth1, pfc: [3]}
          - {netdev: eth2, prio_tc: {3: 3, "03": 4}}
      ignore_errors: true

    - name: A key written twice in key=value arguments
      rdma.fabric.roce_qos: netdev=eth1 mtu=9000 mtu=1500
      ignore_errors: true

    - name: A key written twice, another host module
      rdma.fabric.rdma_link: name=rxe9 netdev=eth1 netdev=eth2 sysfs_path=/nonexistent-sysfs
      ignore_errors: true

    - name: Clean call reaches the module
      rdma.fabric.roce_qos:
        netdev: eth1
        dscp2prio: {26: 3, 48: 6}
        sysfs_path: /nonexistent-sysfs
      ignore_errors: true
"""


def test_duplicate_keys_are_rejected_on_the_controller(tmp_path):
    rc, tasks, text = run(tmp_path, PLAYBOOK)
    assert rc == 0, text
    r = tasks["Duplicate DSCP key"]["localhost"]
    assert r["failed"] is True and r["param"] == "dscp2prio"
    assert "26 and '26' are the same key (26) given twice, with the values 3 and 5" in r["msg"]
    assert "invocation" not in r            # the module never ran
    r = tasks["Duplicate key in a port of the list form"]["localhost"]
    assert r["failed"] is True and r["param"] == "ports[1].prio_tc" and "given twice" in r["msg"]
    r = tasks["A key written twice in key=value arguments"]["localhost"]
    assert r["failed"] is True and r["param"] == "mtu" and "invocation" not in r
    assert r["msg"] == ("mtu: is given more than once in the task's arguments (Ansible would keep only the last value); "
                        "give each key once")
    r = tasks["A key written twice, another host module"]["localhost"]
    assert r["failed"] is True and r["param"] == "netdev" and "invocation" not in r
    r = tasks["Clean call reaches the module"]["localhost"]
    assert r["failed"] is True and r["param"] == "sysfs_path"
    assert "is not a directory; expected the host's sysfs root" in r["msg"] and r["invocation"]["module_args"]["netdev"] == "eth1"


def test_a_key_given_twice_in_an_ad_hoc_call_is_refused(tmp_path):
    """ansible -m rdma.fabric.roce_qos -a "netdev=eth1 mtu=9000 mtu=1500": Ansible's parser keeps the last mtu; the
    action refuses the call before the module is sent. The same call with each key once reaches the module."""
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(), ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, ANSIBLE_NOCOLOR="1", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.json")
    env.pop("ANSIBLE_CONFIG", None)
    ansible = os.path.join(os.path.dirname(sys.executable), "ansible")

    def adhoc(module, args):
        proc = subprocess.run([ansible, "localhost", "-i", "localhost,", "-c", "local", "-m", module, "-a", args],
                              env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=300, check=False)
        data = json.loads(proc.stdout[proc.stdout.index("{"):])
        return data["plays"][0]["tasks"][0]["hosts"]["localhost"]

    r = adhoc("rdma.fabric.roce_qos", "netdev=eth1 mtu=9000 mtu=1500 sysfs_path=/nonexistent-sysfs")
    assert r["failed"] is True and r["param"] == "mtu" and "invocation" not in r
    r = adhoc("rdma.fabric.roce_qos", '{"netdev": "eth1", "mtu": 9000, "mtu": 1500}')
    assert r["failed"] is True and r["param"] == "mtu" and "invocation" not in r
    r = adhoc("rdma.fabric.roce_qos", "netdev=eth1 mtu=9000 sysfs_path=/nonexistent-sysfs")
    assert r["failed"] is True and r["param"] == "sysfs_path" and r["invocation"]["module_args"]["mtu"] == 9000
