# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Safe, rooted reads of sysfs / procfs / configfs trees.

Every reader in this collection (RDMA facts, GPUDirect probes, QoS backends)
goes through :class:`SysfsTree`, so that:

* the tree can be rooted anywhere (``/`` on a host, a container's bind mount of
  the host's ``/sys``, or a fixture tree in unit tests);
* attribute reads that the kernel refuses (EINVAL on empty GID slots, EACCES on
  root-only files, EOPNOTSUPP, EIO, ENOENT races) read as ``None`` instead of
  raising - a missing or unreadable attribute is a fact ("unknown"), not a crash.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

# Errors that mean "this attribute has no value here" on a live kernel.
ABSENT_ERRNOS = frozenset(
    e for e in (
        errno.EINVAL, errno.ENOENT, errno.EACCES, errno.EPERM, errno.EOPNOTSUPP,
        getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.EIO, errno.ENODEV,
        errno.ENOTDIR, errno.ENXIO, errno.EISDIR,
    )
)

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# One read() returns a whole sysfs attribute (PAGE_SIZE at most; larger files loop).
_ATTR_READ_SIZE = 4096


class SysfsTree(object):
    """A filesystem root holding ``sys/`` (and optionally ``proc/``) trees.

    ``sysfs_path`` is the directory that plays the role of ``/sys``.
    ``procfs_path`` plays ``/proc``. Paths given to the read helpers are
    relative to those roots (e.g. ``class/infiniband``).
    """

    def __init__(self, sysfs_path="/sys", procfs_path="/proc"):
        self.sysfs = os.path.abspath(sysfs_path)
        self.procfs = os.path.abspath(procfs_path)

    # -- path helpers ---------------------------------------------------
    def sys(self, *parts):
        """Absolute path under the sysfs root."""
        return os.path.join(self.sysfs, *parts)

    def proc(self, *parts):
        """Absolute path under the procfs root."""
        return os.path.join(self.procfs, *parts)

    # -- reads (absolute paths) -----------------------------------------
    @staticmethod
    def read(path, strip=True):
        """Text content of ``path`` or ``None`` when absent/unreadable."""
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return None
            raise
        text = data.decode("utf-8", "replace")
        return text.strip() if strip else text

    @classmethod
    def read_int(cls, path, base=0):
        """Integer content of ``path`` (``base=0`` accepts 0x..), else None."""
        text = cls.read(path)
        if text is None or text == "":
            return None
        try:
            return int(text.split()[0], base)
        except ValueError:
            return None

    @staticmethod
    def read_bytes(path, length=None):
        """Binary content (e.g. PCI config space); None when unreadable."""
        try:
            with open(path, "rb") as f:
                return f.read() if length is None else f.read(length)
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return None
            raise

    @staticmethod
    def open_dir(path):
        """Descriptor of the directory ``path`` for :meth:`read_at` (close it), None when absent/unreadable."""
        try:
            return os.open(path, os.O_RDONLY | _O_DIRECTORY)
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return None
            raise

    @staticmethod
    def read_at(dfd, names, strip=True, until_missing=False):
        """Texts (or None) of the files ``names``, opened relative to the directory descriptor ``dfd``.

        The kernel walks the (long) sysfs path once, for ``dfd``, instead of
        once per file: a GID table has up to hundreds of slots per port (1024
        on rxe), and the facts gatherer reads all of them. ``names`` may hold
        sub-paths (``gid_attrs/types/3``). Same absent-tolerance as
        :meth:`read`. With ``until_missing`` the list ends at the first name
        that cannot be opened (see :meth:`read_series`); otherwise it has one
        entry per name.
        """
        values = []
        append = values.append
        # Looked up per call, not at import: tests wrap os.open/os.read.
        os_open, os_read, os_close, rdonly = os.open, os.read, os.close, os.O_RDONLY
        for name in names:
            try:
                fd = os_open(name, rdonly, dir_fd=dfd)
            except (IOError, OSError) as e:
                if until_missing and e.errno in ABSENT_ERRNOS:
                    # The series ends (ENOENT), or none of it can be opened (EACCES on the
                    # folder: every further open would fail too). The kernel refuses an
                    # empty slot at read(), not at open().
                    break
                if e.errno in ABSENT_ERRNOS:
                    append(None)
                    continue
                raise
            try:
                data = os_read(fd, _ATTR_READ_SIZE)
                if len(data) == _ATTR_READ_SIZE:  # not a sysfs attribute (<= PAGE_SIZE): read the rest
                    chunks = [data]
                    while data:
                        data = os_read(fd, _ATTR_READ_SIZE)
                        chunks.append(data)
                    data = b"".join(chunks)
            except (IOError, OSError) as e:
                if e.errno not in ABSENT_ERRNOS:
                    raise
                append(None)
                continue
            finally:
                os_close(fd)
            text = data.decode("utf-8", "replace")
            append(text.strip() if strip else text)
        return values

    @classmethod
    def read_series(cls, dfd, prefix, limit=65536):
        """Texts (or None) of ``<prefix>0``, ``<prefix>1``, ... relative to ``dfd``, up to the first that cannot be opened.

        For tables the kernel numbers without gaps (``gids/<i>``: one file per
        slot of the port's GID table, empty slots included): one failed open
        ends the table, where listing the folder would cost an opendir and
        getdents calls and a sort.
        """
        return cls.read_at(dfd, (prefix + str(i) for i in range(limit)), until_missing=True)

    @classmethod
    def read_attrs(cls, dirpath, names, strip=True):
        """Read several attributes of one directory: ``{name: text or None}``.

        Each file is opened relative to one directory descriptor
        (:meth:`read_at`). A missing or unreadable directory gives None for
        every name.
        """
        dfd = cls.open_dir(dirpath)
        if dfd is None:
            return dict.fromkeys(names)
        try:
            return dict(zip(names, cls.read_at(dfd, names, strip)))
        finally:
            os.close(dfd)

    @staticmethod
    def readlink(path):
        """Absolute path a symlink points to, computed lexically, or None.

        Relative targets (what sysfs uses: ``../../devices/...``) are joined to
        the link's folder and normalised without resolving each component (one
        syscall instead of :meth:`realpath`'s one per component). None when
        ``path`` is absent or not a symlink.
        """
        try:
            target = os.readlink(path)
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return None
            raise
        return os.path.normpath(os.path.join(os.path.dirname(path), target))

    @staticmethod
    def listdir(path):
        """Sorted entries of a directory; [] when absent/unreadable."""
        try:
            return sorted(os.listdir(path))
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return []
            raise

    @staticmethod
    def link_basename(path):
        """Basename of a symlink's target (e.g. ``device/driver``), else None."""
        try:
            return os.path.basename(os.readlink(path))
        except (IOError, OSError) as e:
            if e.errno in ABSENT_ERRNOS:
                return None
            raise

    @staticmethod
    def realpath(path):
        """Resolved path (class symlinks -> devices/...), None if missing."""
        if not os.path.lexists(path):
            return None
        return os.path.realpath(path)

    @staticmethod
    def exists(path):
        return os.path.exists(path)

    @staticmethod
    def isdir(path):
        return os.path.isdir(path)
