# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Carrying out a GPUDirect plan: rollback on failure, on a command that cannot start, and on
SIGTERM/SIGINT/SIGHUP."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import describe_error
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import set_acs_control


STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


class Interrupted(Exception):
    """A stop signal arrived while changes were being made."""

    def __init__(self, signum):
        self.signum = signum
        super(Interrupted, self).__init__("interrupted by %s" % signal_name(signum))


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


class _StopSignals(object):
    """While active, a stop signal raises :class:`Interrupted` (``defer=False``) or is only remembered
    (``defer=True``: a rollback runs to its end). The previous handlers come back on exit."""

    def __init__(self, defer=False):
        self.defer = defer
        self.received = []
        self._old = {}

    def _handler(self, signum, frame):
        self.received.append(signum)
        if not self.defer:
            raise Interrupted(signum)

    def __enter__(self):
        for signum in STOP_SIGNALS:
            try:
                self._old[signum] = signal.signal(signum, self._handler)
            except (ValueError, OSError):  # not the main thread: nothing to catch with
                pass
        return self

    def __exit__(self, *exc):
        for signum, old in self._old.items():
            signal.signal(signum, old)
        return False


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

    def _argv(self, argv):
        return [self._bin(argv[0])] + list(argv[1:])

    def _command(self, argv):
        # handle_exceptions=False: a command that cannot start (gone, not executable) raises here, inside the
        # rollback's reach, instead of ending the module in run_command with the changes left in place.
        rc, out, err = self.module.run_command(self._argv(argv), handle_exceptions=False)
        if rc != 0:
            raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), rc, (err or out).strip()))

    def _write(self, path, content):
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        fd, tmp = tempfile.mkstemp(prefix=".rdma-fabric-", dir=directory)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(content)
            os.chmod(tmp, 0o644)
            self.module.atomic_move(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _do(self, action):
        if action.argv:
            self._command(action.argv)
        elif action.kind in ("acs_disable", "acs_enable"):
            set_acs_control(action.acs, action.acs["old"], action.acs["new"])
        elif action.kind in ("write_file", "save_file"):
            self._write(action.path, action.content)
        elif action.kind in ("remove_file", "remove_saved"):
            os.unlink(action.path)

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
        with _StopSignals():
            for index, action in enumerate(actions):
                try:
                    self._do(action)
                    action.done = True
                except BaseException as exc:  # pylint: disable=broad-except
                    undo = actions[:index + 1] if isinstance(exc, Interrupted) else actions[:index]
                    with _StopSignals(defer=True) as later:
                        restored, left = self._rollback(undo, current=action if isinstance(exc, Interrupted) else None)
                    raise ChangeFailed(action, exc, restored, left, [signal_name(s) for s in later.received])

    def _rollback(self, actions, current=None):
        restored, left = [], []
        for done in reversed(actions):
            try:
                self._undo(done)
                done.done = False
                restored.append(done.describe())
            except Exception as undo_exc:  # pylint: disable=broad-except
                if done is current:
                    left.append("%s (interrupted: may or may not have taken effect; undo failed: %s)"
                                % (done.describe(), undo_exc))
                else:
                    left.append("%s (undo failed: %s)" % (done.describe(), undo_exc))
        return restored, left


class ChangeFailed(Exception):
    def __init__(self, action, cause, restored, left, signals_during_rollback=()):
        self.action = action
        self.cause = cause
        self.restored = restored
        self.left = left
        self.interrupted = isinstance(cause, Interrupted)
        reason = describe_error(cause) if isinstance(cause, OSError) else str(cause) or type(cause).__name__
        if isinstance(cause, OSError):
            reason = "cannot run: %s" % reason if action.argv else reason
        message = "%s: %s" % (action.describe(), reason)
        if restored:
            message += "; restored: %s" % ", ".join(restored)
        if left:
            message += "; left changed: %s" % ", ".join(left)
        if signals_during_rollback:
            message += "; %s arrived during the rollback, which ran to its end" % ", ".join(signals_during_rollback)
        super(ChangeFailed, self).__init__(message)
