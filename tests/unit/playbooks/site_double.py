# -*- coding: utf-8 -*-
"""site.yml behind a TEST DOUBLE for its facts stage, shared by the playbook tests that run site.yml on this
machine (test_site_rollout.py, test_site_slices.py): the first play loads a host's rdma facts from ``facts_file``
(the lab's captured facts) instead of running rdma_device_facts, then site.yml runs as users run it."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
SITE = os.path.join(REPO, "playbooks", "site.yml")

FACTS_DOUBLE = """
- name: Load the lab facts (TEST DOUBLE for the facts stage)
  hosts: rdma_nodes
  gather_facts: false
  tags: [always]
  tasks:
    - name: Set ansible_facts.rdma
      ansible.builtin.set_fact:
        rdma: "{{ lookup('ansible.builtin.file', facts_file) | from_json }}"
        os_family: Debian
        cacheable: true

- name: The site playbook
  ansible.builtin.import_playbook: %s
""" % SITE
