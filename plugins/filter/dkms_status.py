# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: dkms_status
short_description: Parse C(dkms status) and say what is wrong for one kernel
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Parses the output of C(dkms status) (dkms 2.x and 3.x line formats) into entries.
  - With O(kernel), also lists the problems for that kernel, as sentences for a failure message,
    namely a module built but not installed, installed with a C(WARNING!) note, only added (never built),
    or without any build for the kernel; every name in O(required) must have an installed build.
options:
  _input:
    description: The standard output of C(dkms status).
    type: str
    required: true
  kernel:
    description: The kernel release to judge the entries for (usually C(ansible_facts.kernel)).
    type: str
  required:
    description: DKMS module names that must be installed for O(kernel).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read the DKMS state
  ansible.builtin.command:
    argv: [dkms, status]
  register: dkms
  changed_when: false

- name: Fail when a DKMS module is not installed for the running kernel
  ansible.builtin.assert:
    that: report.problems | length == 0
    fail_msg: "{{ report.problems | join('; ') }}"
  vars:
    report: "{{ dkms.stdout | rdma.fabric.dkms_status(kernel=ansible_facts.kernel, required=['mlnx-ofed-kernel']) }}"
"""

RETURN = r"""
_value:
  description: The parsed state.
  type: dict
  contains:
    entries:
      description: One entry per status line, with C(module), C(version), C(kernel) and C(arch) (null for C(added)),
        C(state) (added, built, installed, installed-weak), C(notes) (the parenthesised remarks),
        C(warnings) (the notes that start with WARNING) and C(weak_from).
      type: list
      elements: dict
    unparsed:
      description: Non-empty lines that are not status entries (dkms error or deprecation messages).
      type: list
      elements: str
    problems:
      description: What is wrong for O(kernel); empty when all is well or when O(kernel) is not given.
      type: list
      elements: str
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text
from ansible.module_utils.six import string_types

from ansible_collections.rdma.fabric.plugins.plugin_utils.dkms import parse_status, problems_for_kernel


def dkms_status(output, kernel=None, required=None):
    """See DOCUMENTATION."""
    if required is None:
        required = []
    if isinstance(required, string_types) or not all(isinstance(r, string_types) for r in required):
        raise AnsibleFilterError("dkms_status: required must be a list of module names, got %r" % (required,))
    entries, unparsed = parse_status(to_text(output or ""))
    problems = problems_for_kernel(entries, to_text(kernel), list(required)) if kernel else []
    return {"entries": entries, "unparsed": unparsed, "problems": problems}


class FilterModule(object):
    """rdma.fabric DKMS status filter."""

    def filters(self):
        return {"dkms_status": dkms_status}
