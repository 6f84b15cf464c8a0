# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host's one QoS lock: ``roce_qos`` and ``rdma-fabric qos-apply`` (the boot
and udev re-apply) both hold it while they read and change ports, so they
never change the same port at the same time.

An ``flock`` on :data:`LOCK_PATH` (``/run``: gone at reboot, and the kernel
releases it when the holder dies, so a crashed run never leaves it taken).
The holder writes who it is into the file (pid, what, since when) and empties
it when it is done; a run that waits longer than its timeout fails with an
error naming that holder. A run that takes the lock and finds a record there
found the trace of a holder that ended without letting go (SIGKILL, a crash,
power loss mid-apply): it says so (``warn``), naming that holder and that it
is gone, and writes its own record over it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import errno
import fcntl
import json
import os
import time

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError

LOCK_PATH = paths.QOS_LOCK
POLL_SECONDS = 0.2
# flock's answers while another process holds the lock
BUSY = (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK)


class LockError(QosError):
    """The lock could not be taken (held too long by someone else, or not creatable)."""


def _record(fd):
    """What the last holder wrote (``{}`` when nothing, or nothing readable)."""
    try:
        data = os.pread(fd, 4096, 0).decode("utf-8", "replace")
        info = json.loads(data) if data.strip() else {}
    except (OSError, ValueError):
        info = {"unreadable": True}
    return info if isinstance(info, dict) else {"unreadable": True}


def _holder(fd):
    """Who holds the lock, as text, from what the holder wrote."""
    info = _record(fd)
    pid = info.get("pid")
    if not isinstance(pid, int):
        return "a process that did not say who it is"
    alive = os.path.exists("/proc/%d" % pid)
    return "pid %d (%s, since %s%s)" % (pid, info.get("by") or "unknown", info.get("since") or "unknown",
                                        "" if alive else "; that pid is gone, a child it started may hold the lock")


def _open(path):
    folder = os.path.dirname(path)
    if folder and not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    return os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)


def _take(fd, operation, timeout):
    """``flock`` ``fd`` (``LOCK_EX`` or ``LOCK_SH``), trying every :data:`POLL_SECONDS` for ``timeout`` seconds:
    True when taken, False while another holds it; OSError for any other error."""
    deadline = time.time() + max(0, timeout)
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except OSError as e:
            if e.errno not in BUSY:
                raise
        if time.time() >= deadline:
            return False
        time.sleep(POLL_SECONDS)


def shared(path=None, wait=0.0):
    """The lock held shared, for a reader that changes nothing (the metrics collector's drift read).

    Returns the descriptor (close it to let go), None when the lock file is not there (no QoS run ever
    took it) or cannot be opened, False while a run holds it after ``wait`` seconds.
    """
    try:
        fd = os.open(path or LOCK_PATH, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        taken = _take(fd, fcntl.LOCK_SH, wait)
    except OSError:
        taken = False
    if not taken:
        os.close(fd)
        return False
    return fd


@contextlib.contextmanager
def held(by, timeout, path=None, required=True, warn=None):
    """Hold the QoS lock for the ``with`` block; ``by`` says who holds it (shown to whoever waits).

    ``timeout``: seconds to wait for it. ``required=False`` (check mode, which
    changes nothing) goes on without the lock when it cannot be created (no
    write access to ``/run``), with a warning through ``warn``.
    """
    path = path or LOCK_PATH
    try:
        fd = _open(path)
    except OSError as e:
        if required:
            raise LockError("cannot create the QoS lock %s: %s (the lock keeps roce_qos and the boot-time "
                            "re-apply off the same port; run as root)" % (path, e.strerror or e))
        if warn is not None:
            warn("running without the QoS lock (%s: %s); a concurrent change could make this read inconsistent"
                 % (path, e.strerror or e))
        yield None
        return
    try:
        try:
            taken = _take(fd, fcntl.LOCK_EX, timeout)
        except OSError as e:
            raise LockError("cannot take the QoS lock %s: %s" % (path, e.strerror or e))
        if not taken:
            raise LockError(
                "another QoS run holds the lock %s: %s. Gave up after %s s; nothing was changed. Wait for "
                "it to end (the boot-time re-apply logs to journalctl -u rdma-fabric-lossless) or give "
                "a longer lock_timeout" % (path, _holder(fd), timeout))
        stale = _record(fd)
        if stale and warn is not None:
            pid = stale.get("pid")
            warn("the QoS lock %s held the record of %s, which is gone without releasing it (killed or crashed "
                 "mid-run): a port it was changing may be half done; this run reads every port again and applies "
                 "what differs" % (path, "pid %d (%s, since %s)" % (pid, stale.get("by") or "unknown",
                                                                     stale.get("since") or "unknown")
                                   if isinstance(pid, int) else "an unreadable holder"))
        info = json.dumps({"pid": os.getpid(), "by": by,
                           "since": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.encode() + b"\n", 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)
