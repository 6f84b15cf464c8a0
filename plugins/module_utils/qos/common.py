# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared plumbing of the QoS backends: command runner, change steps, sysfs writes."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import CommandError


def quote_argv(argv):
    """Readable one-line form of an argv list (for messages and results only)."""
    out = []
    for a in argv:
        a = str(a)
        out.append("'%s'" % a if (" " in a or a == "") else a)
    return " ".join(out)


class CommandRunner(object):
    """Runs argv lists through ``module.run_command`` (never a shell).

    Output of every command is parsed in the C locale. A command counts as
    failed on a non-zero exit status, or when its output contains one of the
    ``error_patterns`` (tools that print an error and still exit 0).
    """

    def __init__(self, module):
        self.module = module

    def which(self, name, required=False):
        return self.module.get_bin_path(name, required=required)

    def run(self, argv, error_patterns=(), check=True):
        rc, out, err = self.module.run_command(
            [str(a) for a in argv], environ_update={"LC_ALL": "C", "LANG": "C"})
        if check:
            text = (out or "") + "\n" + (err or "")
            if rc != 0 or any(p in text for p in error_patterns):
                raise CommandError(quote_argv(argv), rc, out, err)
        return rc, out or "", err or ""


class Step(object):
    """One change: ``do()`` applies it, ``undo()`` restores what it changed.

    ``key`` is the option the step belongs to, ``description`` what it runs
    (a command line or ``write VALUE > PATH``).
    """

    def __init__(self, key, description, do, undo, undo_description=None):
        self.key = key
        self.description = description
        self.do = do
        self.undo = undo
        self.undo_description = undo_description or ("undo: " + description)


def write_attr(path, value):
    """Write a sysfs/configfs attribute in place.

    Kernel attributes cannot be replaced by rename, so the atomic
    write-temp-and-rename used for regular files does not apply; a single
    write() of the whole value is what the kernel parses atomically.
    """
    data = str(value)
    if not data.endswith("\n"):
        data += "\n"
    try:
        with open(path, "w") as f:
            f.write(data)
    except (IOError, OSError) as e:
        raise CommandError("write %r to %s" % (str(value), path), detail=getattr(e, "strerror", None) or str(e))
