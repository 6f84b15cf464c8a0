# -*- coding: utf-8 -*-
"""Unit tests for module_utils/facts/sysfs.py: rooted reads where no read error escapes.

Real errors where a test machine can make them: a FIFO with a writer and no
data (EAGAIN, the file is opened non-blocking), a FIFO without writer (no
hang), ``/proc/self/mem`` (EIO at offset 0), a directory (EISDIR), a file
the test cannot open (EACCES, unless root), ``/dev/zero`` behind a link (never
ends). Errors no file can give on demand (ETIMEDOUT, EBUSY, ENOMEM) come from
``KernelRefusals``, the fault-injection double of the read call
(tests/unit/fixtures/read_faults.py).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import sysfs
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.fixtures.read_faults import KernelRefusals


def test_reads_text_int_and_links(tmp_path):
    (tmp_path / "sys" / "a").mkdir(parents=True)
    (tmp_path / "sys" / "a" / "num").write_text("0x15b3\n")
    (tmp_path / "sys" / "a" / "txt").write_text("  4: ACTIVE \n")
    (tmp_path / "sys" / "a" / "big").write_text("y" * 70000)
    os.symlink("../../bus/pci/drivers/mlx5_core", str(tmp_path / "sys" / "a" / "driver"))
    tree = SysfsTree(str(tmp_path / "sys"))
    assert tree.read(tree.sys("a", "txt")) == "4: ACTIVE"
    assert tree.read_int(tree.sys("a", "num")) == 0x15B3
    assert tree.read(tree.sys("a", "big")) == "y" * 70000
    assert tree.read_bytes(tree.sys("a", "big"), 5000) == b"y" * 5000
    assert tree.link_basename(tree.sys("a", "driver")) == "mlx5_core"
    assert tree.listdir(tree.sys("a")) == ["big", "driver", "num", "txt"]
    assert tree.warnings == []


def test_absent_and_malformed_read_as_none(tmp_path):
    tree = SysfsTree(str(tmp_path))
    assert tree.read(tree.sys("missing")) is None
    assert tree.listdir(tree.sys("missing")) == []
    assert tree.link_basename(tree.sys("missing")) is None
    (tmp_path / "bad").write_text("not-a-number")
    assert tree.read_int(tree.sys("bad")) is None
    assert tree.warnings == []  # absent is a fact, not a problem


@pytest.mark.parametrize("err", [errno.EINVAL, errno.EACCES, errno.EOPNOTSUPP, errno.EIO, errno.ENOENT])
def test_kernel_refusals_read_as_none_quietly(tmp_path, monkeypatch, err):
    """What the kernel does on empty GID slots (EINVAL) and friends: unknown, no warning."""
    target = tmp_path / "gid"
    target.write_text("x")
    KernelRefusals(monkeypatch, [str(target)], err)
    tree = SysfsTree(str(tmp_path))
    assert tree.read(str(target)) is None
    assert tree.read_attrs(str(tmp_path), ["gid"]) == {"gid": None}
    assert tree.warnings == []


@pytest.mark.parametrize("err", [errno.ETIMEDOUT, errno.EBUSY, errno.EAGAIN, errno.ENOMEM, errno.EREMOTEIO])
def test_unexpected_errors_read_as_none_with_a_warning(tmp_path, monkeypatch, err):
    """Errors outside the quiet list (they used to raise): unknown, and a warning naming the file and the error."""
    (tmp_path / "port").mkdir()
    target = tmp_path / "port" / "rate"
    target.write_text("100 Gb/sec (4X EDR)\n")
    (tmp_path / "port" / "state").write_text("4: ACTIVE\n")
    KernelRefusals(monkeypatch, [str(target)], err)
    tree = SysfsTree(str(tmp_path))
    assert tree.read(str(target)) is None
    assert tree.read_attrs(str(tmp_path / "port"), ["state", "rate"]) == {"state": "4: ACTIVE", "rate": None}
    expected = "could not read %s: %s (%s); reported as unknown" % (target, os.strerror(err), errno.errorcode[err])
    assert tree.warnings == [expected]  # twice read, once said


def test_fifo_with_a_silent_writer_gives_a_real_eagain(tmp_path):
    """A FIFO where an attribute should be: opened non-blocking, its read fails with EAGAIN (a real one)."""
    fifo = str(tmp_path / "state")
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer that never writes
    try:
        tree = SysfsTree(str(tmp_path))
        assert tree.read(fifo) is None
        assert tree.read_attrs(str(tmp_path), ["state"]) == {"state": None}
        assert tree.warnings == ["could not read %s: %s (EAGAIN); reported as unknown" % (fifo, os.strerror(errno.EAGAIN))]
    finally:
        os.close(writer)
    # Without a writer the same FIFO reads as empty at once (before: open() blocked for ever).
    assert SysfsTree(str(tmp_path)).read(fifo) == ""


def test_real_eio_eisdir_and_unending_files(tmp_path, monkeypatch):
    tree = SysfsTree(str(tmp_path))
    assert tree.read("/proc/self/mem") is None          # EIO at offset 0: quiet
    assert tree.read(str(tmp_path)) is None             # a folder: EISDIR, quiet
    assert tree.warnings == []
    os.symlink("/dev/zero", str(tmp_path / "zero"))
    monkeypatch.setattr(sysfs, "MAX_READ", 1 << 20)
    assert tree.read_bytes(str(tmp_path / "zero")) == b"\0" * (1 << 20)
    assert tree.warnings == ["%s is larger than %d bytes; only the first %d were read" % (tmp_path / "zero", 1 << 20, 1 << 20)]


def test_series_stops_at_an_unexpected_open_error(tmp_path, monkeypatch):
    """A GID table whose open fails unexpectedly ends there, once, with a warning (not 65536 of them)."""
    (tmp_path / "gids").mkdir()
    for i in range(3):
        (tmp_path / "gids" / str(i)).write_text("fe80:0000:0000:0000:0000:0000:0000:000%d\n" % i)
    real_open = os.open

    def busy_open(path, flags, mode=0o777, *, dir_fd=None):
        if path == "gids/1":
            raise OSError(errno.EBUSY, os.strerror(errno.EBUSY))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    tree = SysfsTree(str(tmp_path))
    dfd = tree.open_dir(str(tmp_path))
    monkeypatch.setattr(os, "open", busy_open)
    try:
        assert tree.read_series(dfd, "gids/") == ["fe80:0000:0000:0000:0000:0000:0000:0000"]
    finally:
        tree.close_dir(dfd)
    assert tree.warnings == ["could not read %s: %s (EBUSY); reported as unknown" % (tmp_path / "gids" / "1", os.strerror(errno.EBUSY))]


def test_listing_and_links_degrade_too(tmp_path, monkeypatch):
    real_listdir, real_readlink = os.listdir, os.readlink

    def failing(real):
        def call(path):
            if str(path).endswith("flaky"):
                raise OSError(errno.ETIMEDOUT, os.strerror(errno.ETIMEDOUT))
            return real(path)
        return call

    monkeypatch.setattr(os, "listdir", failing(real_listdir))
    monkeypatch.setattr(os, "readlink", failing(real_readlink))
    tree = SysfsTree(str(tmp_path))
    assert tree.listdir(str(tmp_path / "flaky")) == []
    assert tree.readlink(str(tmp_path / "flaky")) is None
    assert tree.link_basename(str(tmp_path / "flaky")) is None
    assert tree.warnings == ["could not read %s: %s (ETIMEDOUT); reported as unknown" % (tmp_path / "flaky", os.strerror(errno.ETIMEDOUT))]


def test_warnings_are_capped(tmp_path, monkeypatch):
    paths = []
    for i in range(sysfs.MAX_WARNINGS + 7):
        path = tmp_path / ("f%d" % i)
        path.write_text("x")
        paths.append(str(path))
    KernelRefusals(monkeypatch, paths, errno.EBUSY)
    tree = SysfsTree(str(tmp_path))
    assert [tree.read(p) for p in paths] == [None] * len(paths)
    assert len(tree.warnings) == sysfs.MAX_WARNINGS
    assert tree.all_warnings()[-1] == "7 more read errors like the above were not listed"
