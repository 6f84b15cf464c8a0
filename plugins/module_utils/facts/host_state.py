# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The state a role manages, read in one call, and the test of whether it is as wanted.

Why: every remote module call costs an interpreter start and an AnsiballZ
import on the host (seconds on a slow or emulated host). A role that ensures
ten files, folders and units makes ten such calls on every run even when
nothing changed. The roles instead read all of it once with the
``host_state`` module and run a write task (copy, file, systemd_service) only
where ``path_differs`` / the unit state says it is not as wanted: the no-change
path costs one call, and drift is still corrected by the same write tasks.

``read_path`` is what ``ansible.builtin.stat`` reports for the fields the
roles compare (type, mode, owner, group, SHA-1 of a file's content, the
entries of a folder); ``common.host_state.path_differs`` compares such a
record with what a write task would make (the filter of the same name), so
the decision is made by one piece of code.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import grp
import hashlib
import os
import pwd
import stat

# What a path's type is called (the names ansible.builtin.file uses in `state`).
_TYPES = (
    (stat.S_ISREG, "file"),
    (stat.S_ISDIR, "directory"),
    (stat.S_ISLNK, "link"),
)


def _name(lookup, ident):
    try:
        return lookup(ident)[0]
    except KeyError:
        return str(ident)


def read_path(path, checksum=True, chunk=65536):
    """The record of one path: exists, type, mode, owner, group, sha1 (file), entries (folder).

    A link is reported as a link (not followed): the roles never manage a
    path through a link, and a link where a file is wanted must count as a
    difference. A path that cannot be read (no permission) reports
    ``readable: false`` so that the caller's write task decides.
    """
    try:
        st = os.lstat(path)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return {"exists": False}
        return {"exists": True, "readable": False, "error": os.strerror(e.errno)}
    kind = "other"
    for test, name in _TYPES:
        if test(st.st_mode):
            kind = name
            break
    rec = {
        "exists": True,
        "readable": True,
        "type": kind,
        "mode": "%04o" % stat.S_IMODE(st.st_mode),
        "owner": _name(pwd.getpwuid, st.st_uid),
        "group": _name(grp.getgrgid, st.st_gid),
    }
    try:
        if kind == "file" and checksum:
            digest = hashlib.sha1()
            with open(path, "rb") as f:
                block = f.read(chunk)
                while block:
                    digest.update(block)
                    block = f.read(chunk)
            rec["sha1"] = digest.hexdigest()
        elif kind == "directory":
            rec["entries"] = sorted(os.listdir(path))
        elif kind == "link":
            rec["target"] = os.readlink(path)
    except (IOError, OSError) as e:
        rec["readable"] = False
        rec["error"] = os.strerror(e.errno) if e.errno else str(e)
    return rec


def unit_states(run_command, systemctl, units):
    """``{unit: state}`` from one ``systemctl is-enabled`` run over all units.

    systemctl prints one line per unit, in order, and exits non-zero when
    any is not enabled; a unit it does not know reads ``not-found``. When
    the lines do not match the units (an old systemctl that stops at the
    first unknown unit), each unit is asked on its own.
    """
    if not units:
        return {}
    rc, out, err = run_command([systemctl, "is-enabled"] + list(units))
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    if len(lines) == len(units):
        return dict(zip(units, lines))
    states = {}
    for unit in units:
        rc, out, err = run_command([systemctl, "is-enabled", unit])
        first = out.strip().splitlines()[0].strip() if out.strip() else ""
        states[unit] = first or ("not-found" if "No such file" in err or "not found" in err else "unknown")
    return states
