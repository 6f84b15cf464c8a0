# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rules of the ``host_state`` record (pure, standard library only): does a path differ from what a
write task would make (:func:`path_differs`, used by the ``host_state`` module's callers through the
``rdma.fabric.path_differs`` filter), and what a systemd unit name is. The record is read on the host by
``facts.host_state.read_path``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re


# A systemd unit name (systemd.unit(5)): used with re.fullmatch ("$" would let a trailing newline through).
_UNIT_NAME_RE = re.compile(
    r"[A-Za-z0-9:_.@\\-]+\.(?:service|socket|target|timer|mount|automount|path|slice|scope|device|swap)")
UNIT_NAME_RULE = ("NAME.TYPE, NAME of letters, digits and : _ . @ - \\ (not starting with -), at most 255 characters, "
                  "TYPE one of service, socket, target, timer, mount, automount, path, slice, scope, device, swap")


def is_unit_name(name):
    """True for a systemd unit name (see :data:`UNIT_NAME_RULE`)."""
    return (isinstance(name, str) and len(name) <= 255 and not name.startswith("-")
            and _UNIT_NAME_RE.fullmatch(name) is not None)


def _octal(mode):
    try:
        return int(str(mode), 8)
    except ValueError:
        raise ValueError("mode must be an octal string such as 0644; got %r" % (mode,))


def path_differs(rec, state="file", sha1=None, mode=None, owner=None, group=None):
    """True when a write task that makes ``state`` (file, directory, absent) would change ``rec``.

    Only the fields given are compared; a record that could not be read
    always differs (the write task then decides). ``mode`` is compared as
    an octal string (``"0644"`` and ``"644"`` are the same). Raises
    ValueError, naming the argument, for a state or mode it cannot use.
    """
    if state == "absent":
        return bool(rec.get("exists"))
    if state not in ("file", "directory"):
        raise ValueError("state must be one of file, directory, absent; got %r" % (state,))
    if not rec.get("exists") or not rec.get("readable", True):
        return True
    if rec.get("type") != state:
        return True
    if sha1 is not None and state == "file" and rec.get("sha1") != sha1.lower():
        return True
    if mode is not None and _octal(mode) != _octal(rec.get("mode", "-1")):
        return True
    if owner is not None and rec.get("owner") != owner:
        return True
    if group is not None and rec.get("group") != group:
        return True
    return False
