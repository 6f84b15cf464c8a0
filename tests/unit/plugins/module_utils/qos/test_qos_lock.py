# -*- coding: utf-8 -*-
"""The host's QoS lock (module_utils/qos/lock.py), for real: a second process holds it.

No test double: the holder is a real process (a fork of this one) taking the
real flock on a lock file under tmp_path, the way rdma-fabric qos-apply holds
it at boot while roce_qos waits.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import time

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import lock


@pytest.fixture
def holder(tmp_path):
    """A child process holding the lock as "rdma-fabric qos-apply" until killed."""
    path = str(tmp_path / "run" / "qos.lock")
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:    # pragma: no cover - the child
        try:
            with lock.held("rdma-fabric qos-apply", 5, path=path):
                os.write(ready_w, b"x")
                time.sleep(60)
        finally:
            os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    yield path, pid
    try:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass        # the test ended it already


def test_waiting_gives_up_naming_the_holder(holder):
    path, pid = holder
    start = time.time()
    with pytest.raises(lock.LockError) as exc:
        with lock.held("roce_qos (Ansible)", 1, path=path):
            pytest.fail("the lock was taken while another process held it")
    assert time.time() - start >= 1
    msg = str(exc.value)
    assert ("another QoS run holds the lock %s: pid %d (rdma-fabric qos-apply, since " % (path, pid)) in msg
    assert "Gave up after 1 s; nothing was changed" in msg and "lock_timeout" in msg


def test_the_lock_is_free_again_when_the_holder_dies(holder):
    path, pid = holder
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    with lock.held("roce_qos (Ansible)", 5, path=path) as taken:
        assert taken == path
        with open(path) as f:
            assert '"by": "roce_qos (Ansible)"' in f.read()
    with open(path) as f:
        assert f.read() == ""       # released: no holder written


def test_a_holder_killed_mid_run_leaves_a_record_the_next_run_says_is_gone(holder):
    """SIGKILL gives the holder no chance to empty the file: the kernel frees the flock, the record stays; the
    next holder warns, naming the dead holder, and writes its own record."""
    path, pid = holder
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    with open(path) as f:
        assert '"pid": %d' % pid in f.read()
    warnings = []
    with lock.held("roce_qos (Ansible)", 5, path=path, warn=warnings.append):
        with open(path) as f:
            assert '"pid": %d' % os.getpid() in f.read()
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("the QoS lock %s held the record of pid %d (rdma-fabric qos-apply, since " % (path, pid))
    assert "which is gone without releasing it (killed or crashed mid-run)" in warnings[0]
    # released cleanly: the next run finds nothing to say
    with lock.held("roce_qos (Ansible)", 5, path=path, warn=warnings.append):
        pass
    assert len(warnings) == 1


def test_a_lock_that_cannot_be_created(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    path = str(blocker / "qos.lock")
    with pytest.raises(lock.LockError) as exc:
        with lock.held("roce_qos (Ansible)", 1, path=path):
            pass
    assert "cannot create the QoS lock %s" % path in str(exc.value)
    warnings = []
    with lock.held("roce_qos (Ansible)", 1, path=path, required=False, warn=warnings.append) as taken:
        assert taken is None
    assert len(warnings) == 1 and warnings[0].startswith("running without the QoS lock")
