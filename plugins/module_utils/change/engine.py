# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one change engine of the host side: steps with undo, the stop signals, the rollback.

Every module that changes a host (``roce_qos`` through the QoS engine, ``gpudirect``, ``sriov_vfs``) and the
host runtime's ``qos-apply`` change it the same way:

* a plan is a list of :class:`Step` s, each with the undo of what it changes (made from the state read
  before anything changed);
* :class:`Changes` does them in order and remembers what it did; on a failure (a step that fails or cannot
  start, a read-back that differs, a stop signal) :meth:`Changes.rollback` undoes the done steps in reverse
  order, with the stop signals held until it ends, and says what it restored and what it could not;
* :class:`StopSignals` turns SIGTERM/SIGINT/SIGHUP (Ansible's task timeout, a service stop) into a stop:
  honoured between steps (``interrupt=False``: a command is never left half-run) or at once
  (``interrupt=True``: :class:`Interrupted` is raised inside the step, whose undo then runs too);
* a read-back is a step too (:func:`read_back_step`): it changes nothing and fails the run when the host
  does not read back as planned.

Atomic file writes: :mod:`.files`. Standard library only (the host runtime runs it without Ansible).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import signal
import threading

STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGINT")


def signal_name(signum):
    """``"SIGTERM"`` for a signal number (``"signal 64"`` for one without a name)."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


class Interrupted(Exception):
    """A stop signal ended the run (inside a step with ``interrupt=True``, else between two steps)."""

    def __init__(self, signum):
        self.signum = signum
        super(Interrupted, self).__init__("interrupted by %s" % signal_name(signum))


class ReadBackError(Exception):
    """The host does not read back as planned (:func:`read_back_step`)."""


class StopSignals(object):
    """While :meth:`watch` is active, a stop signal (SIGTERM, SIGHUP, SIGINT) is a request to stop.

    ``interrupt=False``: the signal is only remembered (:attr:`received`, the first one) and the run looks
    between steps (:meth:`Changes.check_stop`), so the step under way finishes. ``interrupt=True``: the
    handler raises :class:`Interrupted` at once, inside the step, except while :meth:`held` (a rollback).
    Outside the main thread signals cannot be caught and keep their default action. The handlers before
    :meth:`watch` come back after it.
    """

    def __init__(self, interrupt=False):
        self.interrupt = interrupt
        self.received = None        # the first stop signal (a number)
        self.all_received = []
        self._held = 0

    def _handler(self, signum, frame):
        self.all_received.append(signum)
        if self.received is None:
            self.received = signum
        if self.interrupt and not self._held:
            raise Interrupted(signum)

    @contextlib.contextmanager
    def watch(self):
        """Catch the stop signals for the ``with`` block."""
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        saved = {}
        for name in STOP_SIGNALS:
            num = getattr(signal, name, None)
            if num is not None:
                saved[num] = signal.signal(num, self._handler)
        try:
            yield self
        finally:
            for num, old in saved.items():
                signal.signal(num, old)

    @contextlib.contextmanager
    def held(self):
        """Inside the block a stop signal is only remembered, never raised (a rollback runs to its end)."""
        self._held += 1
        try:
            yield self
        finally:
            self._held -= 1

    @property
    def name(self):
        return signal_name(self.received) if self.received else None


class Step(object):
    """One change: ``do()`` applies it, ``undo()`` restores what it changed.

    ``key`` is what the step belongs to (an option, a PF), ``description`` what it runs (a command line or
    ``write VALUE > PATH``). ``undo`` None: nothing of its own to undo (a read-back, or a change that an
    earlier step's undo restores whole). ``undo_after_failure``: the undo also runs when ``do()`` fails (an
    undo that restores from what it reads, for a step that may fail part-way). ``data``: what the caller
    keeps with the step (the plan entry it came from).
    """

    def __init__(self, key, description, do, undo=None, undo_description=None, undo_after_failure=False, data=None):
        self.key = key
        self.description = description
        self.do = do
        self.undo = undo
        self.undo_description = undo_description or ("undo: " + description)
        self.undo_after_failure = undo_after_failure
        self.data = data


def setter_step(key, setter, new, old, describe, **kwargs):
    """``setter(new)``, undone by ``setter(old)``; ``describe(value)`` is what ``setter(value)`` runs."""
    return Step(key, describe(new), lambda: setter(new), lambda: setter(old), describe(old), **kwargs)


def read_back_step(key, description, check):
    """A step that changes nothing: ``check()`` returns None when the host reads back as planned, else what
    differs (:class:`ReadBackError`: the run fails and the steps before it are rolled back)."""
    def do():
        problem = check()
        if problem:
            raise ReadBackError(problem)
    return Step(key, description, do)


class StepFailed(Exception):
    """A run failed and was rolled back (:meth:`Changes.run_all`).

    ``step``: the step under way (None for a stop between steps); ``cause``: its exception (an
    :class:`Interrupted` for a stop); ``restored``: the steps undone, in the order undone; ``left``:
    ``[(step, exception)]`` whose undo failed; ``signals``: the names of the stop signals that arrived
    during the rollback.
    """

    def __init__(self, step, cause, restored, left, signals):
        self.step = step
        self.cause = cause
        self.restored = restored
        self.left = left
        self.signals = signals
        self.interrupted = isinstance(cause, Interrupted)
        super(StepFailed, self).__init__(str(cause) or type(cause).__name__)


class Changes(object):
    """Does steps one by one and remembers them; undoes them in reverse order on a failure.

    ``stop``: the :class:`StopSignals` the run honours (the caller may watch it itself, as the host runtime
    does; :meth:`run_all` watches it). ``errors``: the exceptions of a step or an undo that make a rollback
    (others, such as a programming error, pass through untouched; :class:`Interrupted` always counts).
    """

    def __init__(self, stop=None, errors=(Exception,)):
        self.stop = stop or StopSignals()
        self.errors = tuple(errors) + (Interrupted,)
        self.done = []

    def check_stop(self):
        """:class:`Interrupted` when a stop signal was received (called between steps)."""
        if self.stop.received is not None:
            raise Interrupted(self.stop.received)

    def do(self, step):
        """Do ``step`` and remember it. When it fails, it is remembered too where its undo must run anyway
        (``undo_after_failure``, or a stop signal cut it: it may have taken effect), and the error goes on."""
        try:
            step.do()
        except BaseException as exc:
            if isinstance(exc, Interrupted) or (step.undo_after_failure and isinstance(exc, self.errors)):
                self.done.append(step)
            raise
        self.done.append(step)

    def rollback(self):
        """Undo the done steps in reverse order, stop signals held: ``(restored, left, signals)``.

        ``restored``: the steps undone; ``left``: ``[(step, exception)]`` whose undo failed; ``signals``: the
        names of the stop signals that arrived during the rollback (it ran to its end all the same).
        """
        restored, left = [], []
        before = len(self.stop.all_received)
        with self.stop.held():
            for step in reversed(self.done):
                if step.undo is None:
                    continue
                try:
                    step.undo()
                    restored.append(step)
                except self.errors as exc:
                    left.append((step, exc))
        self.done = []
        return restored, left, [signal_name(s) for s in self.stop.all_received[before:]]

    def run_all(self, steps):
        """Every step in order, the stop signals watched; :class:`StepFailed` after the rollback."""
        with self.stop.watch():
            current = None
            try:
                for step in steps:
                    self.check_stop()
                    current = step
                    self.do(step)
                    current = None
                self.check_stop()
            except self.errors as exc:
                restored, left, signals = self.rollback()
                raise StepFailed(current, exc, restored, left, signals)
