#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: host_state
short_description: Read the files, folders and systemd units a role manages, in one call
version_added: 0.1.0
description:
  - Reads, for each path, what M(ansible.builtin.stat) would report for the fields a write task compares (type,
    mode, owner, group, the SHA-1 of a file's content, the entries of a folder, a link's target), and, for each
    systemd unit, its C(systemctl is-enabled) state.
  - The roles of this collection call it once and then run their write tasks (M(ansible.builtin.copy),
    M(ansible.builtin.file), M(ansible.builtin.systemd_service)) only where the
    P(rdma.fabric.path_differs#filter) filter or the unit state says the host is not as wanted. On a host where
    nothing changed the role then costs one module call instead of one per file and unit, and a file that drifted
    is still rewritten by the same write task as before.
  - Links are not followed. A path that cannot be read is reported with RV(paths.readable=false), which
    P(rdma.fabric.path_differs#filter) counts as a difference.
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode returns the same result.
  diff_mode:
    support: full
    details: The module changes nothing; in diff mode it returns an empty before/after diff.
  platform:
    platforms: posix
    details: Units need systemd (C(systemctl)); paths work on any POSIX host.
options:
  paths:
    description:
      - Absolute paths to read. Each appears as a key of RV(paths).
      - A path with a NUL byte or another control character (a newline) is refused, naming the path.
    type: list
    elements: path
    default: []
  checksum:
    description:
      - Compute the SHA-1 of each regular file's content (the checksum M(ansible.builtin.copy) compares).
    type: bool
    default: true
  content:
    description:
      - Paths, each also in O(paths), whose text to return too, in RV(paths.content). For a small record a role
        wrote on an earlier run, read in the same call as the rest.
      - Only a regular file of at most 65536 bytes that is UTF-8 text; for any other RV(paths.content_error) says
        why and RV(paths.content) is left out.
    type: list
    elements: path
    default: []
    version_added: 0.2.0
  marker:
    description:
      - The line that marks a file as written by the calling role (its ownership marker, such as
        V(# Written by rdma.fabric.job_env)). For every regular file in O(paths), RV(paths.marked) says whether one of
        its lines starts with it within the first 4096 bytes, so the role replaces or removes only its own files
        without the file's text leaving the host.
    type: str
    version_added: 0.2.0
  units:
    description:
      - systemd unit names (for example V(rdma-fabric-lossless.service) or an instance V(rdma-fabric-rxe@eth1.service))
        whose C(systemctl is-enabled) state to read, all in one C(systemctl) run.
      - "A name must full-match C(NAME.TYPE): letters, digits and C(: _ . @ - \\) (as systemd allows), at most 255
        characters, TYPE one of service, socket, target, timer, mount, automount, path, slice, scope, device, swap."
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: Read what the role manages (one call)
  rdma.fabric.host_state:
    paths:
      - /etc/rdma-fabric/lossless
      - /etc/systemd/system/rdma-fabric-lossless.service
    units: [rdma-fabric-lossless.service]
  register: state

- name: Install the unit only where it is not as wanted
  ansible.builtin.copy:
    content: "{{ unit_text }}"
    dest: /etc/systemd/system/rdma-fabric-lossless.service
    owner: root
    group: root
    mode: "0644"
  when: >-
    state.paths['/etc/systemd/system/rdma-fabric-lossless.service']
    | rdma.fabric.path_differs(sha1=unit_text | hash('sha1'), mode='0644', owner='root', group='root')

- name: Enable it only where it is not
  ansible.builtin.systemd_service:
    name: rdma-fabric-lossless.service
    enabled: true
  when: state.units['rdma-fabric-lossless.service'] != 'enabled'
"""

RETURN = r"""
paths:
  description: One record per path in O(paths), keyed by the path as given.
  returned: always
  type: dict
  contains:
    exists:
      description: Whether the path exists (a dangling link exists).
      type: bool
    readable:
      description: Whether the path could be examined. False with C(error) when permission was denied.
      type: bool
    error:
      description: Why the path could not be examined.
      type: str
      returned: when readable is false
    type:
      description: V(file), V(directory), V(link) or V(other).
      type: str
      returned: when the path exists and could be examined
    mode:
      description: The permission bits as a four-digit octal string, for example V(0644).
      type: str
      returned: when the path exists and could be examined
    owner:
      description: The owner's user name (the number when the host has no name for it).
      type: str
      returned: when the path exists and could be examined
    group:
      description: The group's name (the number when the host has no name for it).
      type: str
      returned: when the path exists and could be examined
    sha1:
      description: The SHA-1 of the content, as M(ansible.builtin.stat) C(checksum) gives it.
      type: str
      returned: for a regular file when O(checksum=true)
    entries:
      description: The names in the folder, sorted.
      type: list
      elements: str
      returned: for a folder
    target:
      description: Where the link points.
      type: str
      returned: for a link
    content:
      description: The file's text.
      type: str
      returned: for a path in O(content) that is a regular UTF-8 text file of at most 65536 bytes
      version_added: 0.2.0
    content_error:
      description: Why a path in O(content) has no RV(paths.content) (not a regular file, too large, not UTF-8,
        not readable).
      type: str
      returned: for a path in O(content) whose text could not be returned
      version_added: 0.2.0
    marked:
      description: Whether the file carries the O(marker) line (false for a file that cannot be read).
      type: bool
      returned: for a regular file, with O(marker)
      version_added: 0.2.0
  sample:
    /etc/rdma-fabric/lossless:
      exists: true
      readable: true
      type: directory
      mode: "0755"
      owner: root
      group: root
      entries: [eth1.json]
    /etc/udev/rules.d/90-rdma-fabric-lossless.rules:
      exists: false
units:
  description:
    - The C(systemctl is-enabled) state of each unit in O(units), for example V(enabled), V(disabled), V(static),
      V(masked) or V(not-found).
  returned: always
  type: dict
  sample:
    rdma-fabric-lossless.service: enabled
"""

import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.rdma.fabric.plugins.module_utils.common.host_state import UNIT_NAME_RULE, is_unit_name
from ansible_collections.rdma.fabric.plugins.module_utils.facts.host_state import read_path, unit_states
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError, check_path


# The largest file whose text O(content) returns: a role's own record, never a data file.
CONTENT_LIMIT = 65536
# How far into a file O(marker) is looked for (the marker sits in a file's first lines).
MARKER_WINDOW = 4096


def is_marked(path, marker):
    """Whether one of the first lines (MARKER_WINDOW bytes) of the file at ``path`` starts with ``marker``."""
    try:
        with open(path, "rb") as f:
            head = f.read(MARKER_WINDOW)
    except (IOError, OSError):
        return False
    want = marker.encode("utf-8")
    return any(line.startswith(want) for line in head.split(b"\n"))


def read_content(path, rec):
    """``{"content": text}`` of a regular UTF-8 file of at most CONTENT_LIMIT bytes, else ``{"content_error": why}``."""
    if not rec.get("exists"):
        return {"content_error": "does not exist"}
    if rec.get("type") != "file":
        return {"content_error": "not a regular file"}
    try:
        with open(path, "rb") as f:
            data = f.read(CONTENT_LIMIT + 1)
    except (IOError, OSError) as e:
        return {"content_error": os.strerror(e.errno) if e.errno else str(e)}
    if len(data) > CONTENT_LIMIT:
        return {"content_error": "larger than %d bytes" % CONTENT_LIMIT}
    try:
        return {"content": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"content_error": "not UTF-8 text"}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            paths=dict(type="list", elements="path", default=[]),
            checksum=dict(type="bool", default=True),
            units=dict(type="list", elements="str", default=[]),
            content=dict(type="list", elements="path", default=[]),
            marker=dict(type="str"),
        ),
        supports_check_mode=True,
    )
    relative = [p for p in module.params["paths"] if not os.path.isabs(p)]
    if relative:
        module.fail_json(msg="paths: every path must be absolute; got %s" % ", ".join(relative))
    for path in module.params["paths"]:
        try:
            check_path("paths", path)
        except PathError as e:
            module.fail_json(msg=str(e))
    bad_units = [u for u in module.params["units"] if not is_unit_name(u)]
    if bad_units:
        module.fail_json(msg="units: %r not allowed; allowed: %s" % (bad_units, UNIT_NAME_RULE))

    marker = module.params["marker"]
    if marker is not None and (not marker.strip() or "\n" in marker or any(ord(c) < 32 for c in marker)):
        module.fail_json(msg="marker: %r is not allowed; allowed: one line of text that is not blank" % (marker,))
    stray = [p for p in module.params["content"] if p not in module.params["paths"]]
    if stray:
        module.fail_json(msg="content: every path must also be in paths; not in paths: %s" % ", ".join(stray))

    paths = dict((p, read_path(p, checksum=module.params["checksum"])) for p in module.params["paths"])
    for path in module.params["content"]:
        paths[path].update(read_content(path, paths[path]))
    if marker is not None:
        for path, rec in paths.items():
            if rec.get("type") == "file":
                rec["marked"] = is_marked(path, marker)
    units = {}
    if module.params["units"]:
        systemctl = module.get_bin_path("systemctl", required=True)
        units = unit_states(module.run_command, systemctl, module.params["units"])
    result = dict(changed=False, paths=paths, units=units)
    if module._diff:
        result["diff"] = {"before": {}, "after": {}}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
