# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every controller-side action of the collection shares: the action's frame, the rules of the paths and file
names it writes, and atomic file writes.

:class:`ControllerAction` is the base of the fleet-wide actions (node_pools, k8s_manifests,
validation_plan, validation_results, fabric_report): no connection to the task's host, the
arguments checked against the module file's ``ARGUMENT_SPEC``, and every error of bad input
(the collection's errors are ``ValueError`` subclasses) or of the file system turned into a
task failure whose message starts with the action's name, never a traceback.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase


# A file name an action writes into its folder (no '/', no blank or control character, not hidden, not '..').
FILE_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]{0,254}")
FILE_NAME_RULE = "a file name of letters, digits and _ . @ + - (not starting with '.' or '-', at most 255)"


def check_file_name(name, what):
    """``name`` when it is a plain file name (:data:`FILE_NAME_RE`); ValueError naming ``what`` otherwise."""
    if not isinstance(name, str) or not FILE_NAME_RE.fullmatch(name):
        raise ValueError("%s: %r is not allowed; allowed: %s" % (what, name, FILE_NAME_RULE))
    return name


# The name of an Ansible variable an action reads from the hosts.
VAR_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_var_name(name, what):
    """``name`` when it can name a host variable; ValueError naming ``what`` otherwise."""
    if not isinstance(name, str) or not VAR_NAME_RE.fullmatch(name):
        raise ValueError("%s: %r is not allowed; allowed: the name of a host variable (letters, digits and _, not "
                         "starting with a digit)" % (what, name))
    return name


def check_folder(path, what, empty_ok=False):
    """``path`` when it is a folder path an action may write into: no control character, no '..' part (which
    leaves the folder meant), at most 4095 characters; ValueError naming ``what`` otherwise."""
    if empty_ok and path == "":
        return path
    if not isinstance(path, str) or not path or len(path) > 4095 or any(ord(c) < 32 or ord(c) == 127 for c in path) \
            or ".." in path.split("/"):
        raise ValueError("%s: %r is not allowed; allowed: %sa folder path without control characters or '..' parts "
                         "(at most 4095 characters)" % (what, path, "empty, or " if empty_ok else ""))
    return path


# Bits a file the collection renders (manifests, reports) never needs: setuid, setgid, sticky, execute,
# write for others.
FORBIDDEN_MODE_BITS = 0o7000 | 0o111 | 0o002


def check_file_mode(mode, what="mode"):
    """The mode of a rendered file: octal text ('0644') or a whole number, without :data:`FORBIDDEN_MODE_BITS`."""
    number = None
    if isinstance(mode, int) and not isinstance(mode, bool) and 0 <= mode <= 0o7777:
        number = mode
    elif isinstance(mode, str) and re.fullmatch(r"[0-7]{3,4}", mode):
        number = int(mode, 8)
    if number is None or number & FORBIDDEN_MODE_BITS:
        raise ValueError("%s: %r is not allowed; allowed: an octal file mode without setuid, setgid, sticky, execute "
                         "or others-write bits, such as '0644' or '0640'" % (what, mode))
    return number


def read_bytes(path):
    """The file's bytes, or None when it cannot be read (missing, a folder, no permission)."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except (IOError, OSError):
        return None


def write_atomic(path, data, mode):
    """Write bytes to path through a temporary file in the same folder, then rename it into place."""
    fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class ControllerAction(ActionBase):
    """Base of the collection's controller-only actions; subclasses set NAME, ARGUMENT_SPEC and run_on_controller."""

    TRANSFERS_FILES = False
    _requires_connection = False
    NAME = None
    ARGUMENT_SPEC = {}

    def run_on_controller(self, args, task_vars):
        """Return the task's result (a dict) for the checked ``args``."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super(ControllerAction, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=self.ARGUMENT_SPEC)
        try:
            result.update(self.run_on_controller(args, task_vars or {}))
        except (ValueError, IOError, OSError) as e:
            raise AnsibleActionFail("rdma.fabric.%s: %s" % (self.NAME, e))
        return result
