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

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

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
    r = tasks["Clean call reaches the module"]["localhost"]
    assert r["failed"] is True and r["param"] == "sysfs_path"
    assert "is not a directory; expected the host's sysfs root" in r["msg"] and r["invocation"]["module_args"]["netdev"] == "eth1"
