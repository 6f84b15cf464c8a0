# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The files ``roce_qos`` keeps for each port in the same call (its ``keep`` option), for ``lossless_ethernet``.

* ``before``: ``LOSSLESS_BEFORE_DIR/<netdev>.json``, ``{"netdev", "before"}``: what the port had before the
  first call that kept it (its result's ``before``, read before any change). Written before the first change
  of the call, never replaced: ``lossless_ethernet_state: absent`` puts it back, then removes the folder.
* ``saved``: ``LOSSLESS_SAVED_DIR/<netdev>.json``, the port's entry of ``ports``: what ``rdma-fabric
  qos-apply`` re-applies at boot (:mod:`.reapply`). Written once every port is configured; replaced when its
  content, mode or owner differs.

Folders 0755 and files 0644, owned by root (uid and gid 0), each file written atomically
(:func:`~..change.files.write_atomic`). The folders are the collection's (:mod:`..common.paths`), never a
parameter, and must be real folders (a symlink in their place is refused); a file name is a validated netdev
name. Check mode writes nothing and reports what a run would write. The text is what the role wrote with
``to_nice_json`` before the module kept the files (4-space indent, keys sorted as text, a final newline), so a
host the role set up before keeps its files unchanged. (ansible-core 2.17 and 2.18 sorted a ``dscp2prio``
given with numbers as keys by number: where that order differs, 8 before 26, the saved file is rewritten once,
with the same settings.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import stat

from ansible_collections.rdma.fabric.plugins.module_utils.change.files import write_atomic
from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, ValidationError

KINDS = ("before", "saved")
DIR_MODE = 0o755
FILE_MODE = 0o644
FOLDERS = {"before": paths.LOSSLESS_BEFORE_DIR, "saved": paths.LOSSLESS_SAVED_DIR}


def text(doc):
    """A kept file's text: ``doc`` as JSON carries it (mapping keys as text), 4-space indent, keys sorted."""
    return json.dumps(json.loads(json.dumps(doc)), indent=4, sort_keys=True, separators=(",", ": ")) + "\n"


def check_keep(keep, entries):
    """Validate the ``keep`` option: a list of :data:`KINDS`, only in the list form, ``saved`` with every port
    named by ``netdev``. Returns the kinds as a tuple."""
    keep = tuple(keep or ())
    bad = [k for k in keep if k not in KINDS]
    if bad:
        raise ValidationError("keep", "unknown kind(s) %s; allowed: %s" % (", ".join(map(str, bad)), ", ".join(KINDS)))
    if keep and entries is None:
        raise ValidationError("keep", "needs the list form (ports): the files are kept per port")
    if "saved" in keep:
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not entry.get("netdev"):
                raise ValidationError("keep", "saved needs every port named by netdev (ports[%d] has none)" % i)
    return keep


class Kept(object):
    """The files of one call: planned from the results, written (unless check mode), reported per port."""

    def __init__(self, keep, check_mode, folders=None, owner=(0, 0)):
        """``folders`` and ``owner`` (uid, gid) are the collection's folders and root except in tests."""
        self.keep = keep
        self.check_mode = check_mode
        self.folders = folders or FOLDERS
        self.owner = tuple(owner)
        self.files = []     # {"kind", "netdev", "path", "changed", "before": old text, "after": new text}

    # -- reading -------------------------------------------------------------
    def _folder(self, kind):
        folder = self.folders[kind]
        try:
            st = os.lstat(folder)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return folder, None
            raise QosError("cannot read %s: %s" % (folder, e.strerror))
        if not stat.S_ISDIR(st.st_mode):
            raise QosError("%s is not a folder (a %s is in its place); nothing was changed"
                           % (folder, "symlink" if stat.S_ISLNK(st.st_mode) else "file"))
        return folder, st

    @staticmethod
    def _read(path):
        """``(text, lstat)`` of a file, ``(None, None)`` when there is none."""
        try:
            st = os.lstat(path)
        except OSError as e:
            if e.errno == errno.ENOENT:
                return None, None
            raise QosError("cannot read %s: %s" % (path, e.strerror))
        if not stat.S_ISREG(st.st_mode):
            return "", st
        try:
            with open(path, "rb") as f:
                return f.read().decode("utf-8", "replace"), st
        except (IOError, OSError) as e:
            raise QosError("cannot read %s: %s" % (path, e.strerror))

    # -- planning and writing --------------------------------------------------
    def _put(self, kind, netdev, text, replace):
        folder, dir_st = self._folder(kind)
        path = os.path.join(folder, netdev + ".json")
        old, st = self._read(path) if dir_st is not None else (None, None)
        if old is not None and not replace:
            return
        same = (old == text and stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == FILE_MODE
                and (st.st_uid, st.st_gid) == self.owner) if st is not None else False
        folder_ok = dir_st is not None and stat.S_IMODE(dir_st.st_mode) == DIR_MODE and \
            (dir_st.st_uid, dir_st.st_gid) == self.owner
        self.files.append({"kind": kind, "netdev": netdev, "path": path, "changed": not (same and folder_ok),
                           "before": old or "", "after": text})
        if (same and folder_ok) or self.check_mode:
            return
        try:
            self._make_folder(folder, dir_st)
            if not same:
                write_atomic(path, text.encode("utf-8"), mode=FILE_MODE)
                os.chown(path, *self.owner)
        except (IOError, OSError) as e:
            raise QosError("cannot write %s: %s" % (path, e.strerror or e))

    def _make_folder(self, folder, st):
        if st is None:
            os.makedirs(folder, DIR_MODE)
            os.chmod(folder, DIR_MODE)
            os.chown(folder, *self.owner)
            return
        if stat.S_IMODE(st.st_mode) != DIR_MODE:
            os.chmod(folder, DIR_MODE)
        if (st.st_uid, st.st_gid) != self.owner:
            os.chown(folder, *self.owner)

    def before(self, results):
        """Keep each port's ``before`` (``{netdev: result}``, read before any change) where it has none yet."""
        if "before" in self.keep:
            for netdev, result in sorted(results.items()):
                if result and "before" in result:
                    self._put("before", netdev, text({"netdev": netdev, "before": result["before"]}), replace=False)

    def saved(self, entries):
        """Save each port's entry of ``ports`` (after every port is configured)."""
        if "saved" in self.keep:
            for entry in entries:
                self._put("saved", entry["netdev"], text(entry), replace=True)

    # -- reporting --------------------------------------------------------------
    @property
    def changed(self):
        return any(f["changed"] for f in self.files)

    def report(self, ports):
        """Add ``kept`` to each port's result: ``{kind: {"path", "changed"}}``."""
        for f in self.files:
            port = ports.get(f["netdev"])
            if isinstance(port, dict):
                port.setdefault("kept", {})[f["kind"]] = {"path": f["path"], "changed": f["changed"]}

    def diff(self):
        return [{"before_header": f["path"], "after_header": f["path"], "before": f["before"], "after": f["after"]}
                for f in self.files if f["changed"] and f["before"] != f["after"]]
