# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Shared plumbing of the QoS backends: the command runner and the step helpers every backend builds its
steps with (commands, sysfs/configfs attribute writes). The steps are the change engine's
(:mod:`...change.engine`)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import setter_step
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import CommandError, QosError


def quote_argv(argv):
    """Readable one-line form of an argv list (for messages and results only)."""
    out = []
    for a in argv:
        a = str(a)
        out.append("'%s'" % a if (" " in a or a == "") else a)
    return " ".join(out)


class CommandRunner(object):
    """Runs argv lists (never a shell) through a module-like ``host``.

    ``host`` has ``run_command(argv, environ_update=..., handle_exceptions=False)``
    and ``get_bin_path(name, required=False)``: an ``AnsibleModule`` in the
    module, :class:`..host_cli.HostProcess` in the host runtime.

    Output of every command is parsed in the C locale. A command counts as
    failed on a non-zero exit status, when its output contains one of the
    ``error_patterns`` (tools that print an error and still exit 0), and when
    it cannot be started at all (the binary vanished, exec refused): that is
    a :class:`CommandError` too, so a run rolls back what it changed.
    """

    def __init__(self, module):
        self.module = module

    def which(self, name, required=False):
        path = self.module.get_bin_path(name, required=False)
        if required and not path:
            raise QosError("the %s command is not installed (not found in PATH, /sbin, /usr/sbin, /usr/local/sbin)" % name)
        return path

    def run(self, argv, error_patterns=(), check=True):
        argv = [str(a) for a in argv]
        try:
            rc, out, err = self.module.run_command(argv, environ_update={"LC_ALL": "C", "LANG": "C"},
                                                   handle_exceptions=False)
        except (IOError, OSError) as e:
            raise CommandError(quote_argv(argv), detail="it could not be started: %s" % (
                getattr(e, "strerror", None) or e))
        if check:
            text = (out or "") + "\n" + (err or "")
            if rc != 0 or any(p in text for p in error_patterns):
                raise CommandError(quote_argv(argv), rc, out, err)
        return rc, out or "", err or ""


def command_step(runner, key, argv, undo_argv, error_patterns=()):
    """A step that runs ``argv``, undone by running ``undo_argv``."""
    return setter_step(key, lambda a: runner.run(a, error_patterns=error_patterns), argv, undo_argv, quote_argv)


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


def write_step(key, path, new, old, write=write_attr, quote=str):
    """A step that writes ``new`` to the attribute ``path``, undone by writing ``old``."""
    return setter_step(key, lambda v: write(path, v), new, old, lambda v: "write %s > %s" % (quote(v), path))
