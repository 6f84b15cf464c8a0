# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: mofed_var_errors
short_description: What is wrong with the variables of the mofed role
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Checks the C(mofed_*) variables for what their types cannot say (the role's C(meta/argument_specs.yml) checks
    types and choices) and returns one sentence per problem, each naming the variable and what is allowed; an
    empty list when every value is usable.
  - URLs must have an allowed scheme and no blank or control character (a newline in a repository URL would add
    fields to the deb822 source); a signing key fetched over plain http needs a pinned fingerprint or
    C(mofed_repo_key_trust_unpinned_http=true); package, module and kernel names, suites, components, paths,
    timeouts and the credentials are checked too. Credentials are never shown in the sentences.
  - The mofed role runs it first, before it reads or changes anything on the host.
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
      {{ dict(query('ansible.builtin.varnames', '^mofed_')
              | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^mofed_'))))
         | rdma.fabric.mofed_var_errors }}
"""

RETURN = r"""
_value:
  description: One sentence per problem, naming the variable and the allowed values.
  type: list
  elements: str
  sample: ["mofed_kernel_modules[1]: 'rdma_ucm\\nib_umad' is not allowed; allowed: kernel module names (letters, digits, _ and -, at most 55)"]
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.role_vars import mofed_var_errors as _errors


def mofed_var_errors(values):
    """Problems in the mofed variables (see DOCUMENTATION)."""
    if not isinstance(values, dict):
        raise AnsibleFilterError("rdma.fabric.mofed_var_errors: the input must be a dict of variables, got %s"
                                 % type(values).__name__)
    return _errors(dict(values))


class FilterModule(object):
    """rdma.fabric mofed variable checks."""

    def filters(self):
        return {"mofed_var_errors": mofed_var_errors}
