# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host runtime's entry point: ``rdma-fabric SUBCOMMAND [ARGS...]``.

What must run on a host without Ansible (the boot-time QoS re-apply, the
metrics collector, the health check) runs from one zip application holding
this collection's ``plugins/module_utils`` and nothing else (no ansible-core:
a host's boot path never depends on the controller's Ansible version). It is
built on the controller by ``plugins/plugin_utils/host_runtime.py`` and
installed by the internal role ``rdma.fabric.host_tools`` as
``/usr/lib/rdma-fabric/rdma-fabric.pyz`` (run by ``/usr/sbin/rdma-fabric``).
Its ``__main__`` calls :func:`main`.

Subcommands are listed in :data:`SUBCOMMANDS`: name -> the module_utils module
(relative to ``plugins/module_utils``) whose ``cli_main(argv)`` runs it and returns the
exit status. Modules are imported only when their subcommand runs, so a
subcommand's imports cost nothing to the others. Adding one is one line here.

Standard library only, Python 3.8 or later (the collection's managed-host
minimum, tests/config.yml; tests/unit/plugins/module_utils/runtime/test_host_cli.py
checks that every module_utils file parses as 3.8 and imports without
``ansible``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib
import os
import subprocess
import sys

SUBCOMMANDS = {
    "qos-apply": "qos.reapply",
    "metrics": "runtime.metrics",
    "health-check": "runtime.health_check",
    "gpudirect-acs": "gpudirect.acs_boot",
}
# module_utils itself: SUBCOMMANDS are relative to it (this file is module_utils/runtime/host_cli.py).
PACKAGE = __name__.rsplit(".", 2)[0]
PROG = "rdma-fabric"


def say(text, stream=None):
    """One line of a subcommand's output (stdout, or ``stream``): what a host runtime prints with."""
    stream = stream or sys.stdout
    stream.write(text + "\n")


def usage(stream):
    say("usage: %s SUBCOMMAND [ARGS...]\n\nsubcommands (%s SUBCOMMAND --help for more):\n%s" % (
        PROG, PROG, "\n".join("  " + name for name in sorted(SUBCOMMANDS))), stream)


def main(argv=None):
    """Run ``argv`` (without the program name); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "help"):
        usage(sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    target = SUBCOMMANDS.get(argv[0])
    if target is None:
        say("%s: unknown subcommand %r; one of: %s" % (PROG, argv[0], ", ".join(sorted(SUBCOMMANDS))), sys.stderr)
        return 2
    module = importlib.import_module("%s.%s" % (PACKAGE, target))
    return module.cli_main(argv[1:])


class HostProcess(object):
    """What the QoS command runner (``qos.common.CommandRunner``) needs of an
    ``AnsibleModule``, for code that runs without Ansible: find a command,
    run an argv list (never a shell)."""

    SBIN = ("/sbin", "/usr/sbin", "/usr/local/sbin")

    def get_bin_path(self, name, required=False, opt_dirs=None):
        folders = os.environ.get("PATH", os.defpath).split(os.pathsep) + list(opt_dirs or []) + list(self.SBIN)
        for folder in folders:
            path = os.path.join(folder, name)
            if folder and os.path.isfile(path) and os.access(path, os.X_OK):
                return path
        if required:
            raise OSError(2, "the %s command is not installed" % name)
        return None

    def run_command(self, argv, environ_update=None, handle_exceptions=False, **kwargs):
        """``(rc, stdout, stderr)`` of ``argv``; OSError when it cannot be started."""
        env = dict(os.environ)
        env.update(environ_update or {})
        proc = subprocess.run([str(a) for a in argv], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, check=False)
        return (proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
