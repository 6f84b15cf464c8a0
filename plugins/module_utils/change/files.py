# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side's one atomic file write: a reader sees the old file or the new one, never a part.

(Kernel attributes in sysfs/configfs are not files to replace: they are written in place, one write of the
whole value, by the QoS backends.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import tempfile


def write_atomic(path, data, mode=0o644, make_dirs=False, move=None):
    """Write ``data`` (text or bytes) to ``path`` through a temporary file in the same folder renamed over it.

    ``mode``: the new file's mode. ``make_dirs``: create the folder (0755) when it is missing. ``move``: how the
    temporary file is put in place, ``move(tmp, path)``; by default ``os.replace`` (a module passes its
    ``atomic_move``, which also keeps the SELinux context of the file it replaces). The temporary file is
    removed when anything fails.
    """
    folder = os.path.dirname(path) or "."
    if make_dirs and not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), mode)
        (move or os.replace)(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
