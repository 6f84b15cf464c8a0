# -*- coding: utf-8 -*-
"""The change engine (module_utils/change): steps with undo, rollback in reverse order, undo failures
reported, read-back as a step, REAL stop signals (sent to this process, as Ansible's task timeout does)
both between steps and inside one, and the one atomic file write."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import signal
import stat

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import (
    Changes,
    Interrupted,
    ReadBackError,
    Step,
    StepFailed,
    StopSignals,
    read_back_step,
    setter_step,
)
from ansible_collections.rdma.fabric.plugins.module_utils.change.files import write_atomic
from ansible_collections.rdma.fabric.plugins.module_utils.common.numbers import parse_int


class Box(object):
    """A value the steps change, with a log of every write."""

    def __init__(self, value):
        self.value = value
        self.log = []

    def set(self, value):
        self.log.append(value)
        self.value = value


def boom(message="refused"):
    raise RuntimeError(message)


def test_steps_run_in_order_and_a_failure_undoes_the_done_ones_in_reverse():
    a, b = Box(1), Box("x")
    steps = [setter_step("a", a.set, 2, 1, lambda v: "a=%s" % v), setter_step("b", b.set, "y", "x", lambda v: "b=%s" % v),
             Step("c", "c fails", boom)]
    with pytest.raises(StepFailed) as err:
        Changes().run_all(steps)
    assert (a.value, b.value) == (1, "x") and a.log == [2, 1] and b.log == ["y", "x"]
    assert err.value.step is steps[2] and str(err.value) == "refused" and not err.value.interrupted
    assert [s.undo_description for s in err.value.restored] == ["b=x", "a=1"] and err.value.left == []


def test_an_undo_that_fails_is_reported_and_the_others_still_run():
    a = Box(1)
    steps = [setter_step("a", a.set, 2, 1, str), Step("b", "b", lambda: None, lambda: boom("undo refused")),
             Step("c", "c", boom)]
    with pytest.raises(StepFailed) as err:
        Changes().run_all(steps)
    assert a.value == 1
    assert [(s.key, str(e)) for s, e in err.value.left] == [("b", "undo refused")]
    assert [s.key for s in err.value.restored] == ["a"]


def test_undo_after_failure_and_steps_without_undo():
    table = Box("old")

    def part_way():
        table.set("half")
        boom()

    steps = [Step("read", "read", lambda: None),                 # no undo of its own
             Step("t", "t", part_way, lambda: table.set("old"), undo_after_failure=True)]
    with pytest.raises(StepFailed):
        Changes().run_all(steps)
    assert table.value == "old" and table.log == ["half", "old"]


def test_errors_not_listed_pass_through_without_rollback():
    a = Box(1)
    changes = Changes(errors=(ValueError,))
    with pytest.raises(RuntimeError):
        changes.run_all([setter_step("a", a.set, 2, 1, str), Step("c", "c", boom)])
    assert a.value == 2   # a programming error is not a failed change


def test_a_read_back_that_differs_fails_the_run():
    a = Box(1)

    def check():
        return None if a.value == 3 else "a reads %s, not 3" % a.value

    steps = [setter_step("a", a.set, 2, 1, str), read_back_step("a", "read a back", check)]
    with pytest.raises(StepFailed) as err:
        Changes().run_all(steps)
    assert isinstance(err.value.cause, ReadBackError) and str(err.value) == "a reads 2, not 3" and a.value == 1


def test_a_real_sigterm_between_steps_lets_the_step_finish_then_rolls_back():
    a, b = Box(1), Box(1)
    previous = signal.getsignal(signal.SIGTERM)

    def set_and_get_killed(v):
        a.set(v)
        os.kill(os.getpid(), signal.SIGTERM)

    steps = [setter_step("a", set_and_get_killed, 2, 1, str), setter_step("b", b.set, 2, 1, str)]
    with pytest.raises(StepFailed) as err:
        Changes(StopSignals()).run_all(steps)
    assert err.value.interrupted and str(err.value) == "interrupted by SIGTERM"
    assert a.log == [2, 1] and b.log == []          # a finished, b never started, a undone
    assert signal.getsignal(signal.SIGTERM) is previous


def test_a_real_sigterm_inside_a_step_interrupts_it_and_its_undo_runs_and_the_rollback_holds_signals():
    a, b = Box(1), Box(1)

    def killed_midway(v):
        os.kill(os.getpid(), signal.SIGTERM)
        a.set(v)    # never reached: the signal raised inside the step

    def undo_b(v):
        os.kill(os.getpid(), signal.SIGTERM)        # held during the rollback
        b.set(v)

    steps = [setter_step("b", b.set, 2, 1, str), Step("a", "a", lambda: killed_midway(2), lambda: a.set(1))]
    steps[0].undo = lambda: undo_b(1)
    with pytest.raises(StepFailed) as err:
        Changes(StopSignals(interrupt=True)).run_all(steps)
    assert err.value.interrupted and err.value.step is steps[1] and isinstance(err.value.cause, Interrupted)
    assert a.log == [1] and b.value == 1            # the interrupted step's undo ran, then b's
    assert err.value.signals == ["SIGTERM"]


def test_write_atomic_text_bytes_mode_and_no_leftover(tmp_path):
    path = str(tmp_path / "sub" / "f.conf")
    write_atomic(path, "one\n", mode=0o600, make_dirs=True)
    assert open(path).read() == "one\n" and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    write_atomic(path, b"two\n")
    assert open(path, "rb").read() == b"two\n" and stat.S_IMODE(os.stat(path).st_mode) == 0o644
    moved = []
    write_atomic(path, "three\n", move=lambda src, dst: (moved.append(dst), os.replace(src, dst)))
    assert moved == [path] and open(path).read() == "three\n"
    with pytest.raises(OSError):    # the move fails (its target folder is gone): the old file stays, no temporary left
        write_atomic(path, "four\n", move=lambda src, dst: os.rename(src, str(tmp_path / "no" / "x")))
    assert open(path).read() == "three\n" and os.listdir(str(tmp_path / "sub")) == ["f.conf"]


@pytest.mark.parametrize("text, base, value", [
    ("100 (4X EDR)", 10, 100), ("4: ACTIVE", 10, None), ("  9000\n", 10, 9000), ("0x15b3", 16, 0x15B3), ("0x1003", 0, 0x1003), ("-1", 10, -1),
    (None, 10, None), ("", 10, None), ("  ", 10, None), ("abc", 10, None), ("12abc", 10, None), ("0x1g", 16, None)])
def test_parse_int(text, base, value):
    assert parse_int(text, base) == value
