# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: applied_record
short_description: The record a role's last run left on a host, when the host is still as that run left it
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Takes the M(rdma.fabric.host_state) record of a file read with O(rdma.fabric.host_state#module:content), the
    record a role wrote at the end of a run (its settings, the host's kernel, what it read of the files it
    watches, and what it found installed).
  - Returns the record when it is a JSON object whose every key of O(expected) holds the same value (the same
    settings, kernel and watched files now as then), else V(null). A missing, unreadable, truncated or
    hand-edited record is V(null), never an error, so the role then does its whole work.
  - The C(rdma.fabric.mofed) role uses it for its no-change path (docs/DESIGN.md, "The no-change path"), one
    state read and then nothing on a host where nothing changed.
options:
  _input:
    description: One record of C(paths) from M(rdma.fabric.host_state), read with O(rdma.fabric.host_state#module:content).
    type: dict
    required: true
  expected:
    description: What the record must hold, key by key (compared as JSON values).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Decide whether the host is as the last run left it
  ansible.builtin.set_fact:
    applied: >-
      {{ state.paths['/var/lib/example/applied.json']
         | rdma.fabric.applied_record({'schema': 1, 'settings': settings_digest, 'kernel': ansible_facts.kernel}) }}
"""

RETURN = r"""
_value:
  description: The record (a dict) when it holds O(expected), else V(null).
  type: dict
"""

import json

from ansible.errors import AnsibleFilterError


def _plain(value):
    """``value`` as JSON would give it back (tuples as lists, Ansible's text types as str)."""
    return json.loads(json.dumps(value, sort_keys=True))


def applied_record(record, expected):
    """See DOCUMENTATION."""
    if not isinstance(record, dict):
        raise AnsibleFilterError("applied_record: the input must be one record of host_state's paths, got %r" % (record,))
    if not isinstance(expected, dict) or not expected:
        raise AnsibleFilterError("applied_record: expected must be a dictionary of what the record holds, got %r"
                                 % (expected,))
    try:
        data = json.loads(record.get("content"))
    except (TypeError, ValueError):
        return None
    if not isinstance(data, dict):
        return None
    want = _plain(expected)
    if any(key not in data or data[key] != value for key, value in want.items()):
        return None
    return data


class FilterModule(object):
    """rdma.fabric no-change record filter."""

    def filters(self):
        return {"applied_record": applied_record}
