# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: path_differs
short_description: Whether a write task would change a path, from its rdma.fabric.host_state record
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Takes one record of the M(rdma.fabric.host_state) module's C(paths) result and says whether a write task
    that makes the path a file with the given content, mode and owner, a folder, or absent would change it.
  - Only the fields given are compared. A missing path, a path of the wrong type and a path that could not be read
    all differ, so the write task runs and decides.
  - The roles use it to skip a write task on a host where nothing changed (one state read instead of one call
    per file); the write task still runs, and corrects the host, wherever the answer is true.
options:
  _input:
    description: One record of C(paths) from M(rdma.fabric.host_state).
    type: dict
    required: true
  state:
    description: What the write task makes.
    type: str
    default: file
    choices: [file, directory, absent]
  sha1:
    description: The SHA-1 of the wanted content (for example C(content | hash('sha1'))). Files only.
    type: str
  mode:
    description: The wanted permission bits, as an octal string such as V(0644).
    type: str
  owner:
    description: The wanted owner's name.
    type: str
  group:
    description: The wanted group's name.
    type: str
"""

EXAMPLES = r"""
- name: Write the unit only where it differs
  ansible.builtin.copy:
    content: "{{ unit_text }}"
    dest: /etc/systemd/system/example.service
    owner: root
    group: root
    mode: "0644"
  when: >-
    state.paths['/etc/systemd/system/example.service']
    | rdma.fabric.path_differs(sha1=unit_text | hash('sha1'), mode='0644', owner='root', group='root')

- name: Remove a file only where it is there
  ansible.builtin.file:
    path: /etc/example.conf
    state: absent
  when: state.paths['/etc/example.conf'] | rdma.fabric.path_differs(state='absent')
"""

RETURN = r"""
_value:
  description: True when the write task would change the path.
  type: bool
"""

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_text

from ansible_collections.rdma.fabric.plugins.module_utils.common.host_state import path_differs as _path_differs


def path_differs(record, state="file", sha1=None, mode=None, owner=None, group=None):
    """See DOCUMENTATION."""
    if not isinstance(record, dict):
        raise AnsibleFilterError("path_differs: the input must be one record of host_state's paths, got %r" % (record,))
    try:
        return _path_differs(
            record, state=state,
            sha1=to_text(sha1) if sha1 is not None else None,
            mode=to_text(mode) if mode is not None else None,
            owner=to_text(owner) if owner is not None else None,
            group=to_text(group) if group is not None else None,
        )
    except ValueError as e:
        raise AnsibleFilterError("path_differs: %s" % e)


class FilterModule(object):
    """rdma.fabric host state filter."""

    def filters(self):
        return {"path_differs": path_differs}
