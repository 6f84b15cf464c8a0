# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes objects as files for GitOps: names from identity, one pass, atomic, own files only.

Used by the ``rdma.fabric.k8s_manifests`` action (and through it by the k8s_rdma_stack role):

* :func:`object_file`: ``<kind>-[<namespace>-]<name>.yaml`` (kind in lower case), Node label
  patches as ``node-labels/node-<name>.yaml``. Derived from what the object is, never from
  where it is in the list, so adding a node or an object renames no other file.
* :func:`wanted_files`: every file's text, in one pass over the objects and nodes.
* :func:`sync`: writes only files whose content differs (temporary file in the same folder,
  then an atomic rename), and removes the files that carry the marker line but are no longer
  wanted. A file is "ours" only when its first line starts with the marker: files the role
  never wrote are never touched (and those earlier versions wrote, ``NNN-<kind>-...yaml``,
  carry the same marker, so they are replaced, not left behind).

Every input is checked before a file is written or removed, each error naming the option: names that
make file names (kind, metadata.name and namespace, node names, the extra files) are plain names, label
keys and values follow Kubernetes' rules, the marker is one comment line of some length (an empty one
would make every file "ours"), and the mode has no special, execute or others-write bit.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import stat

from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import (
    check_file_mode,
    check_file_name,
    check_folder,
    read_bytes,
    write_atomic,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import _label_key, _label_value

NODE_DIR = "node-labels"
KUSTOMIZATION = "kustomization.yaml"
# A kind, name or namespace that goes into a file name (Kubernetes names are DNS subdomains; kinds CamelCase).
PLAIN_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
MARKER_RE = re.compile(r"#[^\x00-\x1f\x7f]{7,}")


class ManifestError(ValueError):
    """Bad input; the message names the object or option."""


def _plain(part, what, obj_name):
    if not isinstance(part, str) or not PLAIN_NAME_RE.fullmatch(part):
        raise ManifestError("%s of object %s is %r: not usable in a file name; allowed: letters, digits and . _ - "
                            "(not starting with . or -), at most 253" % (what, obj_name, part))
    return part


def object_file(obj):
    """Relative file name of one object (see the module docstring)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        raise ManifestError("objects: every object needs apiVersion, kind and metadata.name, got %r" % (obj,))
    meta = obj["metadata"]
    ident = "%s/%s" % (obj.get("kind"), meta.get("name"))
    kind = _plain(obj.get("kind"), "kind", ident).lower()
    name = _plain(meta.get("name"), "metadata.name", ident)
    if kind == "node":
        return "%s/node-%s.yaml" % (NODE_DIR, name)
    namespace = meta.get("namespace")
    if namespace:
        return "%s-%s-%s.yaml" % (kind, _plain(namespace, "metadata.namespace", ident), name)
    return "%s-%s.yaml" % (kind, name)


def node_object(name, labels):
    """A Node label patch (only metadata.labels), as the role applies it with a merge patch."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def wanted_files(objects, node_labels, dump, header, kustomization_header, kustomization_extra=None, files=None):
    """``[(relative path, text)]``: objects in order, node patches, kustomization, the extra files.

    ``dump(obj, width)`` returns the YAML text of one document (the role uses Ansible's
    ``to_nice_yaml(indent=2)``).
    """
    out = []
    seen = {}
    resources = []

    def add(path, what, text):
        if path in seen:
            raise ManifestError("%s and %s would both be written to %s" % (seen[path], what, path))
        seen[path] = what
        out.append((path, text))

    for obj in objects or []:
        path = object_file(obj)
        add(path, "%s/%s" % (obj.get("kind"), obj["metadata"].get("name")), header + "\n" + dump(obj, 1000))
        if not path.startswith(NODE_DIR + "/"):
            resources.append(path)
    for name in node_labels or {}:
        check_node_labels(name, node_labels[name])
        obj = node_object(name, node_labels[name])
        add(object_file(obj), "Node/%s" % name, header + "\n" + dump(obj, 1000))
    kustomization = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": resources}
    kustomization.update(kustomization_extra or {})
    add(KUSTOMIZATION, "the kustomization", kustomization_header + "\n" + dump(kustomization, 80))
    for name in sorted(files or {}, key=str):
        try:
            check_file_name(name, "files")
        except ValueError as e:
            raise ManifestError(str(e))
        if not isinstance(files[name], str):
            raise ManifestError("files[%s]: the text of the file must be a string, got %s" % (name, type(files[name]).__name__))
        add(name, "file %s" % name, files[name])
    return out


def check_node_labels(node, labels):
    """A node's labels: Kubernetes label keys to label values (or null, which removes the label)."""
    where = "node_labels[%s]" % (node,)
    if not isinstance(labels, dict):
        raise ManifestError("%s: must be a mapping of label keys to values, got %r" % (where, labels))
    for key in sorted(labels, key=str):
        if not _label_key(key):
            raise ManifestError("%s: the label key %r is not allowed; allowed: [prefix/]name, the name 1-63 of "
                                "letters, digits and - _ . (starting and ending with a letter or digit)" % (where, key))
        if labels[key] is not None and not _label_value(labels[key]):
            raise ManifestError("%s[%s]: %r is not allowed; allowed: a label value (at most 63 of letters, digits and "
                                "- _ ., starting and ending with a letter or digit) or null" % (where, key, labels[key]))


def check_marker(marker, header, kustomization_header):
    """The marker that makes a file "ours" (one comment line of at least 8 characters) and the headers start with it."""
    if not isinstance(marker, str) or not MARKER_RE.fullmatch(marker):
        raise ManifestError("marker: %r is not allowed; allowed: one comment line of at least 8 characters starting "
                            "with '#' (the files it starts are the ones this module may replace and remove)" % (marker,))
    for name, text in (("header", header), ("kustomization_header", kustomization_header)):
        if not isinstance(text, str) or not text.startswith(marker):
            raise ManifestError("%s: must begin with the marker %r" % (name, marker))


def _first_line(path, limit):
    try:
        with open(path, "rb") as f:
            return f.read(limit)
    except (IOError, OSError):
        return b""


def _own_files(dest, marker):
    """Relative paths of the regular files in dest and dest/node-labels whose first line starts with marker."""
    want = marker.encode("utf-8")
    found = []
    for sub in ("", NODE_DIR):
        folder = os.path.join(dest, sub) if sub else dest
        try:
            names = sorted(os.listdir(folder))
        except (IOError, OSError):
            continue
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if _first_line(path, len(want)) == want:
                found.append("%s/%s" % (sub, name) if sub else name)
    return found


def parse_mode(mode):
    """The file mode of the manifests (:func:`.controller.check_file_mode`)."""
    try:
        return check_file_mode(mode)
    except ValueError as e:
        raise ManifestError(str(e))


def sync(dest, wanted, marker, mode=0o644, check_mode=False, diff=False):
    """Make dest hold exactly ``wanted`` (``[(path, text)]``, or None to remove every own file).

    Returns ``{"files", "written", "removed", "unchanged", "diff"}``; in check mode nothing is
    touched and the lists say what would be.
    """
    wanted = list(wanted or [])
    try:
        check_folder(dest, "dest")
    except ValueError as e:
        raise ManifestError(str(e))
    for path, text in wanted:
        if not text.startswith(marker):
            raise ManifestError("%s: its text does not begin with the marker %r" % (path, marker))
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise ManifestError("dest: %s exists and is not a folder" % dest)
    result = {"files": [p for p, _t in wanted], "written": [], "removed": [], "unchanged": 0, "diff": []}
    keep = set(result["files"])
    plan = []
    for path, text in wanted:
        data = text.encode("utf-8")
        full = os.path.join(dest, path)
        old = read_bytes(full) if os.path.isfile(full) and not os.path.islink(full) else None
        same_mode = old is not None and stat.S_IMODE(os.stat(full).st_mode) == mode
        if old == data and same_mode:
            result["unchanged"] += 1
            continue
        plan.append((path, full, data))
        result["written"].append(path)
        if diff and old != data:
            result["diff"].append({"before_header": full, "after_header": full,
                                   "before": old.decode("utf-8", "replace") if old is not None else "", "after": text})
    stale = [p for p in _own_files(dest, marker) if p not in keep]
    for path in stale:
        result["removed"].append(path)
        if diff:
            full = os.path.join(dest, path)
            old = read_bytes(full) or b""
            result["diff"].append({"before_header": full, "after_header": full,
                                   "before": old.decode("utf-8", "replace"), "after": ""})
    if check_mode:
        return result
    if wanted:
        for folder in (dest, os.path.join(dest, NODE_DIR)):
            if not os.path.isdir(folder):
                os.makedirs(folder, 0o755)
    for path, full, data in plan:
        write_atomic(full, data, mode)
    for path in stale:
        os.unlink(os.path.join(dest, path))
    return result
