# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Carrying out a GPUDirect plan with the change engine (:mod:`..change.engine`): each :class:`.plan.Action`
becomes a step with its undo; a failure, a command that cannot start, or SIGTERM/SIGINT/SIGHUP (at once, inside
the step) undoes what was done."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import Changes, Step, StepFailed, StopSignals
from ansible_collections.rdma.fabric.plugins.module_utils.change.files import write_atomic
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import describe_error
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import set_acs_control


class ChangeRunner(object):
    """Runs a plan; undoes what it did when a step fails, cannot start, or the run is told to stop.

    ``module`` needs ``get_bin_path``, ``run_command`` and ``atomic_move``
    (an AnsibleModule); ACS words are written through the configuration space
    file of the tree that was read, so no tool is involved.
    """

    def __init__(self, module):
        self.module = module
        self._bins = {}

    def _bin(self, name):
        if name not in self._bins:
            self._bins[name] = self.module.get_bin_path(name, required=True)
        return self._bins[name]

    def _command(self, argv):
        # handle_exceptions=False: a command that cannot start (gone, not executable) raises here, inside the
        # rollback's reach, instead of ending the module in run_command with the changes left in place.
        rc, out, err = self.module.run_command([self._bin(argv[0])] + list(argv[1:]), handle_exceptions=False)
        if rc != 0:
            raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), rc, (err or out).strip()))

    def _write(self, path, content):
        write_atomic(path, content, mode=0o644, make_dirs=True, move=self.module.atomic_move)

    def _do(self, action):
        if action.argv:
            self._command(action.argv)
        elif action.kind in ("acs_disable", "acs_enable"):
            set_acs_control(action.acs, action.acs["old"], action.acs["new"])
        elif action.kind in ("write_file", "save_file"):
            self._write(action.path, action.content)
        elif action.kind in ("remove_file", "remove_saved"):
            os.unlink(action.path)
        action.done = True

    def _undo(self, action):
        if action.undo_argv:
            self._command(action.undo_argv)
        elif action.kind in ("acs_disable", "acs_enable"):
            set_acs_control(action.acs, action.acs["new"], action.acs["old"])
        elif action.old_content is None:
            if os.path.exists(action.path):
                os.unlink(action.path)
        else:
            self._write(action.path, action.old_content)
        action.done = False

    def step(self, action):
        """The change engine's step of ``action``."""
        return Step(action.kind, action.describe(), lambda: self._do(action), lambda: self._undo(action), data=action)

    def run(self, actions):
        """Apply every action; on failure undo the done ones and raise :class:`ChangeFailed` with the story.

        Every tool is looked up first, so a missing one fails before any change.
        A stop signal (SIGTERM, SIGINT, SIGHUP) during the changes undoes them
        too, the step it interrupted included (its undo is harmless where the
        step had not taken effect); signals during the rollback wait for it.
        """
        for action in actions:
            for argv in (action.argv, action.undo_argv):
                if argv:
                    self._bin(argv[0])
        try:
            Changes(StopSignals(interrupt=True)).run_all([self.step(a) for a in actions])
        except StepFailed as failed:
            raise ChangeFailed(failed)


class ChangeFailed(Exception):
    """A GPUDirect change failed and was rolled back; the message says what failed, what was restored and what
    was left changed."""

    def __init__(self, failed):
        # (a stop signal raises inside an action, so there is always one under way)
        action, cause = failed.step.data, failed.cause
        self.action = action
        self.cause = cause
        self.interrupted = failed.interrupted
        self.restored = [step.data.describe() for step in failed.restored]
        self.left = []
        for step, exc in failed.left:
            if failed.interrupted and step is failed.step:
                self.left.append("%s (interrupted: may or may not have taken effect; undo failed: %s)"
                                 % (step.data.describe(), exc))
            else:
                self.left.append("%s (undo failed: %s)" % (step.data.describe(), exc))
        reason = describe_error(cause) if isinstance(cause, OSError) else str(cause) or type(cause).__name__
        if isinstance(cause, OSError):
            reason = "cannot run: %s" % reason if action.argv else reason
        message = "%s: %s" % (action.describe(), reason)
        if self.restored:
            message += "; restored: %s" % ", ".join(self.restored)
        if self.left:
            message += "; left changed: %s" % ", ".join(self.left)
        if failed.signals:
            message += "; %s arrived during the rollback, which ran to its end" % ", ".join(failed.signals)
        super(ChangeFailed, self).__init__(message)
