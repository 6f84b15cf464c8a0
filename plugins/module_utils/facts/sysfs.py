# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Safe, rooted reads of sysfs / procfs / configfs trees.

Every reader in this collection (RDMA facts, GPUDirect probes, QoS backends)
goes through :class:`SysfsTree`, so that:

* the tree can be rooted anywhere (``/`` on a host, a container's bind mount of
  the host's ``/sys``, or a fixture tree in unit tests);
* no read error ever escapes as an exception: a read the kernel refuses in the
  ordinary way (EINVAL on empty GID slots, EACCES on root-only files,
  EOPNOTSUPP, EIO, ENOENT races: :data:`ABSENT_ERRNOS`) reads as ``None``
  ("unknown") silently; any other error (ETIMEDOUT, EBUSY, EAGAIN, ENOMEM, ...)
  also reads as ``None``, and adds a warning naming the file and the error to
  :attr:`SysfsTree.warnings`, which the modules pass on to the user;
* a FIFO or a device file where an attribute should be cannot hang or flood a
  module: files are opened non-blocking and read up to :data:`MAX_READ` bytes.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os

from ansible_collections.rdma.fabric.plugins.module_utils.common.numbers import parse_int
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError, check_path

# Errors that mean "this attribute has no value here" on a live kernel: None, no warning.
ABSENT_ERRNOS = frozenset(
    e for e in (
        errno.EINVAL, errno.ENOENT, errno.EACCES, errno.EPERM, errno.EOPNOTSUPP,
        getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.EIO, errno.ENODEV,
        errno.ENOTDIR, errno.ENXIO, errno.EISDIR,
    )
)

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# Never block on a FIFO (or a device) found where an attribute should be; sysfs ignores the flag.
_O_READ = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# One read() returns a whole sysfs attribute (PAGE_SIZE at most; larger files loop).
_ATTR_READ_SIZE = 4096
# The most one file may give (/proc/kallsyms is a few MiB); more is cut with a warning.
MAX_READ = 64 << 20
# The most warnings one tree keeps (a failing disk would otherwise give one per file).
MAX_WARNINGS = 50


SYSFS_ROOT_FOLDERS = ("class", "devices", "module")


def check_sysfs_root(value, param="sysfs_path"):
    """``value`` when it can be the host's sysfs root: a path (:func:`~..common.paths.check_path`, relative
    allowed) of an existing folder with a ``class``, ``devices`` or ``module`` sub-folder; else
    :class:`~..common.paths.PathError` naming ``param``. The one rule of every module's ``sysfs_path``
    (doc fragment ``rdma.fabric.sysfs``), checked before anything is read."""
    if not isinstance(value, str) or not value:
        raise PathError("%s: must be a path to the host's sysfs root such as /sys (got %r)" % (param, value))
    check_path(param, value, absolute=False)
    if not os.path.isdir(value):
        raise PathError("%s: %r is not a directory; expected the host's sysfs root (e.g. /sys, or /host/sys in a "
                        "container)" % (param, value))
    if not any(os.path.isdir(os.path.join(value, d)) for d in SYSFS_ROOT_FOLDERS):
        raise PathError("%s: %r does not look like a sysfs root (it has no class/, devices/ or module/ folder); "
                        "expected e.g. /sys, not /sys/class/infiniband" % (param, value))
    return value


def describe_error(exc):
    """``"Connection timed out (ETIMEDOUT)"`` for an OSError."""
    code = getattr(exc, "errno", None)
    if code is None:
        return str(exc)
    return "%s (%s)" % (os.strerror(code), errno.errorcode.get(code, "errno %d" % code))


class SysfsTree(object):
    """A filesystem root holding ``sys/`` (and optionally ``proc/``) trees.

    ``sysfs_path`` is the directory that plays the role of ``/sys``.
    ``procfs_path`` plays ``/proc``. Paths given to the read helpers are
    relative to those roots (e.g. ``class/infiniband``).

    :attr:`warnings` lists, once each, the reads that failed in an
    unexpected way (see the module docstring).
    """

    def __init__(self, sysfs_path="/sys", procfs_path="/proc"):
        self.sysfs = os.path.abspath(sysfs_path)
        self.procfs = os.path.abspath(procfs_path)
        self.warnings = []
        self._dropped = 0
        self._dir_paths = {}  # descriptor from open_dir -> its path (for warnings)

    # -- path helpers ---------------------------------------------------
    def sys(self, *parts):
        """Absolute path under the sysfs root."""
        return os.path.join(self.sysfs, *parts)

    def proc(self, *parts):
        """Absolute path under the procfs root."""
        return os.path.join(self.procfs, *parts)

    # -- errors -----------------------------------------------------------
    def warn(self, message):
        """Add a warning (kept once; at most :data:`MAX_WARNINGS`, then counted)."""
        if message in self.warnings:
            return
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append(message)
        else:
            self._dropped += 1

    def all_warnings(self):
        """:attr:`warnings`, with a last line saying how many more were left out."""
        if not self._dropped:
            return list(self.warnings)
        return self.warnings + ["%d more read errors like the above were not listed" % self._dropped]

    def failed(self, path, exc):
        """What a failed read gives: None, with a warning unless the error is one of :data:`ABSENT_ERRNOS`."""
        if getattr(exc, "errno", None) not in ABSENT_ERRNOS:
            self.warn("could not read %s: %s; reported as unknown" % (path, describe_error(exc)))
        return None

    # -- reads (absolute paths) -----------------------------------------
    def _read_fd(self, fd, path, length=None):
        """Bytes of an open file: up to ``length``, else to its end (at most :data:`MAX_READ`)."""
        want = MAX_READ if length is None else min(length, MAX_READ)
        data = os.read(fd, min(_ATTR_READ_SIZE, want))
        if len(data) < _ATTR_READ_SIZE or len(data) >= want:  # a sysfs attribute: one read
            return data
        chunks, size = [data], len(data)
        while size < want:
            data = os.read(fd, min(1 << 16, want - size))
            if not data:
                break
            chunks.append(data)
            size += len(data)
        if length is None and size >= MAX_READ and os.read(fd, 1):
            self.warn("%s is larger than %d bytes; only the first %d were read" % (path, MAX_READ, MAX_READ))
        return b"".join(chunks)

    def read_bytes(self, path, length=None):
        """Binary content (e.g. PCI config space, at most ``length`` bytes); None when unreadable."""
        try:
            fd = os.open(path, _O_READ)
        except (IOError, OSError) as e:
            return self.failed(path, e)
        try:
            return self._read_fd(fd, path, length)
        except (IOError, OSError) as e:
            return self.failed(path, e)
        finally:
            os.close(fd)

    def read(self, path, strip=True):
        """Text content of ``path`` or ``None`` when absent/unreadable."""
        data = self.read_bytes(path)
        if data is None:
            return None
        text = data.decode("utf-8", "replace")
        return text.strip() if strip else text

    def read_int(self, path, base=0):
        """Integer content of ``path`` (``base=0`` accepts 0x..), else None."""
        return parse_int(self.read(path), base)

    def open_dir(self, path):
        """Descriptor of the directory ``path`` for :meth:`read_at` (close it with :meth:`close_dir`), None when absent/unreadable."""
        try:
            fd = os.open(path, os.O_RDONLY | _O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        except (IOError, OSError) as e:
            return self.failed(path, e)
        self._dir_paths[fd] = path
        return fd

    def close_dir(self, dfd):
        self._dir_paths.pop(dfd, None)
        os.close(dfd)

    def read_at(self, dfd, names, strip=True, until_missing=False):
        """Texts (or None) of the files ``names``, opened relative to the directory descriptor ``dfd``.

        The kernel walks the (long) sysfs path once, for ``dfd``, instead of
        once per file: a GID table has up to hundreds of slots per port (1024
        on rxe), and the facts gatherer reads all of them. ``names`` may hold
        sub-paths (``gid_attrs/types/3``). Same error handling as
        :meth:`read`. With ``until_missing`` the list ends at the first name
        that cannot be opened (see :meth:`read_series`); otherwise it has one
        entry per name.
        """
        values = []
        append = values.append
        # Looked up per call, not at import: tests wrap os.open/os.read.
        os_open, os_close = os.open, os.close
        for name in names:
            try:
                fd = os_open(name, _O_READ, dir_fd=dfd)
            except (IOError, OSError) as e:
                # The series ends (ENOENT), or none of it can be opened (EACCES on the folder:
                # every further open would fail too; so would one that fails unexpectedly).
                # The kernel refuses an empty slot at read(), not at open().
                append(self.failed(self._at(dfd, name), e))
                if until_missing:
                    values.pop()
                    break
                continue
            try:
                data = self._read_fd(fd, name)
            except (IOError, OSError) as e:
                append(self.failed(self._at(dfd, name), e))
                continue
            finally:
                os_close(fd)
            text = data.decode("utf-8", "replace")
            append(text.strip() if strip else text)
        return values

    def _at(self, dfd, name):
        return os.path.join(self._dir_paths.get(dfd, "<directory descriptor %d>" % dfd), name)

    def read_series(self, dfd, prefix, limit=65536):
        """Texts (or None) of ``<prefix>0``, ``<prefix>1``, ... relative to ``dfd``, up to the first that cannot be opened.

        For tables the kernel numbers without gaps (``gids/<i>``: one file per
        slot of the port's GID table, empty slots included): one failed open
        ends the table, where listing the folder would cost an opendir and
        getdents calls and a sort.
        """
        return self.read_at(dfd, (prefix + str(i) for i in range(limit)), until_missing=True)

    def read_attrs(self, dirpath, names, strip=True):
        """Read several attributes of one directory: ``{name: text or None}``.

        Each file is opened relative to one directory descriptor
        (:meth:`read_at`). A missing or unreadable directory gives None for
        every name.
        """
        dfd = self.open_dir(dirpath)
        if dfd is None:
            return dict.fromkeys(names)
        try:
            return dict(zip(names, self.read_at(dfd, names, strip)))
        finally:
            self.close_dir(dfd)

    def readlink(self, path):
        """Absolute path a symlink points to, computed lexically, or None.

        Relative targets (what sysfs uses: ``../../devices/...``) are joined to
        the link's folder and normalised without resolving each component (one
        syscall instead of :meth:`realpath`'s one per component). None when
        ``path`` is absent or not a symlink.
        """
        try:
            target = os.readlink(path)
        except (IOError, OSError) as e:
            return self.failed(path, e)
        return os.path.normpath(os.path.join(os.path.dirname(path), target))

    def listdir(self, path):
        """Sorted entries of a directory; [] when absent/unreadable."""
        try:
            return sorted(os.listdir(path))
        except (IOError, OSError) as e:
            self.failed(path, e)
            return []

    def link_basename(self, path):
        """Basename of a symlink's target (e.g. ``device/driver``), else None."""
        try:
            return os.path.basename(os.readlink(path))
        except (IOError, OSError) as e:
            return self.failed(path, e)

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
