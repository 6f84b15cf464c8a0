# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: gpudirect_var_errors
short_description: What is wrong with the variables of the gpudirect role
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Checks the C(gpudirect_*) variables for what their types cannot say (the role's C(meta/argument_specs.yml)
    checks types and choices) and returns one sentence per problem, each naming the variable and what is allowed.
  - C(gpudirect_sysfs_path) and C(gpudirect_procfs_path) must be paths without NUL or control characters; outside
    check mode they must be C(/sys) and C(/proc), since the role's changes hit the host it runs on.
options:
  _input:
    description: Variable names mapped to their values (names that are not the role's are ignored).
    type: dict
    required: true
  check_mode:
    description: Whether the play runs in check mode (then other read roots are allowed, to report on a copy).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Check the role's variables
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: >-
      {{ dict(query('ansible.builtin.varnames', '^gpudirect_(?!_)')
              | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^gpudirect_(?!_)'))))
         | rdma.fabric.gpudirect_var_errors(check_mode=ansible_check_mode) }}
"""

RETURN = r"""
_value:
  description: One sentence per problem, naming the variable and the allowed values.
  type: list
  elements: str
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.role_vars import gpudirect_var_errors as _errors


def gpudirect_var_errors(values, check_mode=False):
    """Problems in the gpudirect variables (see DOCUMENTATION)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError("rdma.fabric.gpudirect_var_errors: the input must be a dict of variables, got %s"
                                 % type(values).__name__)
    return _errors(dict(values), check_mode=bool(check_mode))


class FilterModule(object):
    """rdma.fabric gpudirect variable checks."""

    def filters(self):
        return {"gpudirect_var_errors": gpudirect_var_errors}
