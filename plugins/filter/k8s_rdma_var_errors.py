# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: k8s_rdma_var_errors
short_description: What is wrong with the variables of the k8s_rdma_stack role
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Checks the C(k8s_rdma_stack_*) variables for what their types cannot say (the role's
    C(meta/argument_specs.yml) checks types and choices before the role's first task) and returns one sentence
    per problem, each naming the variable and what is allowed; an empty list when every value is usable.
  - Namespaces, names and label keys follow the Kubernetes name rules; images, tags, registry mirror and chart URL
    their reference forms; NCCL GID index, traffic class and extra variables the P(rdma.fabric.nccl_env#filter)
    rules; shared device resources, SR-IOV resources and networks the rules of the filters that render them.
  - The k8s_rdma_stack role runs it first, before it reads a fact or writes a file.
options:
  _input:
    description: Variable names mapped to their values (names that are not the role's are ignored).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Check the role's variables
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: >-
      {{ dict(query('ansible.builtin.varnames', '^k8s_rdma_stack_')
              | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^k8s_rdma_stack_'))))
         | rdma.fabric.k8s_rdma_var_errors }}
"""

RETURN = r"""
_value:
  description: One sentence per problem, naming the variable and the allowed values.
  type: list
  elements: str
  sample: ["k8s_rdma_stack_namespace: 'Kube System' is not allowed; allowed: a Kubernetes namespace name (DNS label: a-z, 0-9, '-', at most 63)"]
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import check_role_vars


def k8s_rdma_var_errors(values):
    """Problems in the k8s_rdma_stack variables (see DOCUMENTATION)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError("rdma.fabric.k8s_rdma_var_errors: the input must be a dict of variables, got %s"
                                 % type(values).__name__)
    return check_role_vars(dict(values))


class FilterModule(object):
    """rdma.fabric k8s_rdma_stack variable checks."""

    def filters(self):
        return {"k8s_rdma_var_errors": k8s_rdma_var_errors}
