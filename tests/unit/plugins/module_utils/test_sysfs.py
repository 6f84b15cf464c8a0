# -*- coding: utf-8 -*-
"""Unit tests for module_utils/sysfs.py: rooted, absent-tolerant reads."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import SysfsTree


def test_reads_text_int_and_links(tmp_path):
    (tmp_path / "sys" / "a").mkdir(parents=True)
    (tmp_path / "sys" / "a" / "num").write_text("0x15b3\n")
    (tmp_path / "sys" / "a" / "txt").write_text("  4: ACTIVE \n")
    os.symlink("../../bus/pci/drivers/mlx5_core", str(tmp_path / "sys" / "a" / "driver"))
    tree = SysfsTree(str(tmp_path / "sys"))
    assert tree.read(tree.sys("a", "txt")) == "4: ACTIVE"
    assert tree.read_int(tree.sys("a", "num")) == 0x15B3
    assert tree.link_basename(tree.sys("a", "driver")) == "mlx5_core"
    assert tree.listdir(tree.sys("a")) == ["driver", "num", "txt"]


def test_absent_and_malformed_read_as_none(tmp_path):
    tree = SysfsTree(str(tmp_path))
    assert tree.read(tree.sys("missing")) is None
    assert tree.listdir(tree.sys("missing")) == []
    assert tree.link_basename(tree.sys("missing")) is None
    (tmp_path / "bad").write_text("not-a-number")
    assert tree.read_int(tree.sys("bad")) is None


@pytest.mark.parametrize("err", [errno.EINVAL, errno.EACCES, errno.EOPNOTSUPP, errno.EIO, errno.ENOENT])
def test_kernel_refusals_read_as_none(tmp_path, monkeypatch, err):
    """Simulates what the kernel does on empty GID slots (EINVAL) and friends."""
    target = tmp_path / "gid"
    target.write_text("x")
    real_open = open

    def refusing_open(path, *args, **kwargs):
        if str(path) == str(target):
            raise OSError(err, os.strerror(err))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    assert SysfsTree.read(str(target)) is None


def test_unexpected_errors_still_raise(tmp_path, monkeypatch):
    target = tmp_path / "f"
    target.write_text("x")

    def failing_open(path, *args, **kwargs):
        raise OSError(errno.ENOMEM, "out of memory")

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError):
        SysfsTree.read(str(target))
