# -*- coding: utf-8 -*-
"""The lossless_ethernet role's `resolve` entry point, run by a real ansible-playbook on localhost.

It changes nothing and reads nothing from the host: it works out each port's
roce_qos settings from the role's variables (the controller-side filter
rdma.fabric.roce_qos_ports, which uses roce_qos's own rules) and sets
lossless_ethernet_resolved_ports. The fabric report includes it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Resolve
      ansible.builtin.include_role:
        name: rdma.fabric.lossless_ethernet
        tasks_from: resolve

    - name: Show
      ansible.builtin.debug:
        var: lossless_ethernet_resolved_ports
"""


def test_resolve_merges_profile_port_settings_and_port_entries(tmp_path):
    rc, tasks, text = run(tmp_path, PLAYBOOK, {
        "lossless_ethernet_ports": ["dcbsim0", {"netdev": "eth1", "mtu": 4200, "roce_mode": 2}],
        "lossless_ethernet_port_settings": {"eth1": {"on_unsupported": "warn", "cnp": None},
                                            "dcbsim0": {"pfc": "0,0,0,1,0,0,0,0"}},
        "lossless_ethernet_mtu": 9000})
    assert rc == 0, text
    ports = tasks["Show"]["localhost"]["lossless_ethernet_resolved_ports"]
    assert ports == [
        {"netdev": "dcbsim0", "trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "dscp2prio": {"26": 3, "48": 6},
         "cnp": {"dscp": 48, "priority": 6}, "roce_tos": 106, "roce_mode": "v2", "mtu": 9000, "backend": "auto",
         "on_unsupported": "fail"},
        {"netdev": "eth1", "trust": "dscp", "pfc": [3], "dscp2prio": {"26": 3, "48": 6}, "roce_tos": 106,
         "roce_mode": 2, "mtu": 4200, "backend": "auto", "on_unsupported": "warn"}]


def test_a_bad_value_fails_naming_the_variable(tmp_path):
    rc, tasks, text = run(tmp_path, PLAYBOOK, {
        "lossless_ethernet_ports": ["eth1"], "lossless_ethernet_pfc": [0, 0, 0, 1]})
    assert rc != 0
    assert "lossless_ethernet_pfc: [0, 0, 0, 1] reads two ways" in text
    rc, tasks, text = run(tmp_path, PLAYBOOK, {
        "lossless_ethernet_ports": ["eth1"], "lossless_ethernet_port_settings": {"eth1": {"roce_tos": 106, "tos": 96}}})
    assert rc != 0 and "lossless_ethernet_port_settings.eth1.tos: port eth1: tos 96 and roce_tos 106 differ" in text


def test_every_role_variable_type_is_checked_by_the_argument_spec(tmp_path):
    rc, tasks, text = run(tmp_path, PLAYBOOK, {"lossless_ethernet_ports": ["eth1"], "lossless_ethernet_persist": "maybe"})
    assert rc != 0 and "lossless_ethernet_persist" in text
