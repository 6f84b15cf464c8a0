# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: role_var_errors
short_description: What is wrong with the variables of a role of this collection
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Checks a role's variables for what their types cannot say (the role's C(meta/argument_specs.yml) checks types
    and choices before the role's first task) and returns one sentence per problem, each naming the variable and
    what is allowed (and the item of a list or mapping); an empty list when every value is usable. Each role runs it
    first, before it reads or changes anything.
  - A setting that is valid but risky is no error; it is shown as a warning naming the variable and the risk.
  - C(mofed) - URLs must have an allowed scheme and no blank or control character (a newline in a repository URL
    would add fields to the deb822 source); a signing key fetched over plain http needs a pinned fingerprint or
    C(mofed_repo_key_trust_unpinned_http=true); package, module and kernel names, suites, components, paths,
    timeouts and the credentials are checked too. Credentials are never shown in the sentences.
  - C(gpudirect) - C(gpudirect_sysfs_path) and C(gpudirect_procfs_path) must be paths without NUL or control
    characters; outside check mode they must be C(/sys) and C(/proc), since the role's changes hit the host it
    runs on.
  - "C(host_tools) - C(host_tools_python) is an absolute path of letters, digits and C(_ @ + , . : = -) without C(.)
    or C(..) parts (it goes into the wrapper and the units' C(ExecStart=) unquoted)."
  - C(job_env) - the files' paths are absolute, without C(.) or C(..) parts, blanks or quotes, each used once; the
    ToS byte, GID index, device globs, C(NCCL_SOCKET_IFNAME) and Open MPI parameter names have their forms; the keys
    of C(job_env_nccl_extra) and C(job_env_ucx_extra) are environment variable names (C([A-Z_][A-Z0-9_]*)) and every
    value is one word a shell and an environment file read alike.
  - C(rdma_metrics) - the textfile folder (written into the collector's unit, C(ReadWritePaths=)) is a safe path
    below C(/var/lib), C(/var/spool), C(/var/cache), C(/run), C(/srv) or C(/opt); the other folders are safe paths;
    the interval is 10 to 86400 s (above 300 s a warning, since the collector-stale alert fires between runs); each
    C(expected_ports) entry has a device glob C(match) (optionally C(/PORT)) and a C(rate_gbps) above 0 or null.
  - C(k8s_rdma_stack) - namespaces, names and label keys follow the Kubernetes name rules; images, tags, registry
    mirror and chart URL their reference forms; NCCL GID index, traffic class and extra variables the
    P(rdma.fabric.nccl_env#filter) rules; shared device resources, SR-IOV resources and networks the rules of the
    filters that render them.
positional: _input, role
options:
  _input:
    description: Variable names mapped to their values (names that are not the role's are ignored).
    type: dict
    required: true
  role:
    description: The role whose variables these are.
    type: str
    required: true
    choices: [gpudirect, host_tools, job_env, k8s_rdma_stack, mofed, rdma_metrics]
  check_mode:
    description:
      - Whether the play runs in check mode.
      - Only C(gpudirect) has a rule that depends on it (other read roots are allowed in check mode, to report on a
        copy of a host's tree).
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
      {{ dict(query('ansible.builtin.varnames', '^mofed_')
              | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^mofed_'))))
         | rdma.fabric.role_var_errors('mofed') }}

- name: Check the gpudirect variables (other read roots are allowed in check mode)
  ansible.builtin.assert:
    that: errors | length == 0
    fail_msg: "{{ errors | join('; ') }}"
  vars:
    errors: >-
      {{ dict(query('ansible.builtin.varnames', '^gpudirect_(?!_)')
              | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^gpudirect_(?!_)'))))
         | rdma.fabric.role_var_errors('gpudirect', check_mode=ansible_check_mode) }}
"""

RETURN = r"""
_value:
  description: One sentence per problem, naming the variable and the allowed values.
  type: list
  elements: str
  sample: ["mofed_kernel_modules[1]: 'rdma_ucm\\nib_umad' is not allowed; allowed: kernel module names (letters, digits, _ and -, at most 55)"]
"""

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.plugin_utils import role_vars


def role_var_errors(values, role, check_mode=False):
    """Problems in a role's variables (see DOCUMENTATION); risky settings shown as warnings."""
    warnings = []
    try:
        errors = role_vars.role_var_errors(values, role, check_mode=check_mode, warnings=warnings)
    except role_vars.RoleVarsError as e:
        raise AnsibleFilterError("rdma.fabric.role_var_errors: %s" % e)
    for text in warnings:
        Display().warning("rdma.fabric.%s: %s" % (role, text))
    return errors


class FilterModule(object):
    """rdma.fabric role variable checks."""

    def filters(self):
        return {"role_var_errors": role_var_errors}
