# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""rdma_cm defaults through configfs: ``default_roce_tos`` and ``default_roce_mode``.

``/sys/kernel/config/rdma_cm/<dev>/ports/<N>/default_roce_{tos,mode}`` exist
only while the group ``/sys/kernel/config/rdma_cm/<dev>`` exists, and the group
exists only after ``mkdir``. The values live in the kernel's rdma_cm device,
not in the group, so - like NVIDIA's ``cma_roce_tos`` - this code creates the
group when it is missing, reads or writes, and removes the group again if it
created it. The values survive the ``rmdir`` but not a driver reload or a
reboot (the lossless_ethernet role persists them).

``default_roce_mode`` reads and takes ``IB/RoCE v1`` or ``RoCE v2``
(kernel ``ib_cache_gid_parse_type_str``); the module's ``v1`` / ``v2``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import os

from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import QosBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import write_attr, write_step
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import CONFIGFS_KEYS, ROCE_MODE_FORMS, CommandError, QosError

ROCE_MODE_TEXT = {"v1": "IB/RoCE v1", "v2": "RoCE v2"}

# Indirection so unit tests can put a configfs emulation in place of the
# plain-directory mkdir/rmdir of a fixture tree.
_mkdir = os.mkdir
_rmdir = os.rmdir


def parse_mode(text):
    """The kernel's ``default_roce_mode`` text as ``v1`` / ``v2`` (None when unknown)."""
    return ROCE_MODE_FORMS.get((text or "").strip())


class RdmaCmConfigfs(QosBackend):
    name = "configfs"
    keys = CONFIGFS_KEYS

    def __init__(self, ctx, probe=None):
        super(RdmaCmConfigfs, self).__init__(ctx, probe)
        self.device = ctx.port.device
        self.port = ctx.port.port
        self.root = self.tree.sys("kernel", "config", "rdma_cm")
        self.dev_dir = os.path.join(self.root, self.device)
        self.port_dir = os.path.join(self.dev_dir, "ports", str(self.port))
        self.created_groups = 0

    @contextlib.contextmanager
    def group(self):
        """The device group, created (and removed afterwards) when missing."""
        created = False
        if not os.path.isdir(self.dev_dir):
            if not os.path.isdir(self.root):
                raise QosError(
                    "rdma_cm configfs not found at %s: load the rdma_cm module (modprobe rdma_cm) and mount "
                    "configfs (mount -t configfs none /sys/kernel/config)" % self.root)
            try:
                _mkdir(self.dev_dir)
            except (IOError, OSError) as e:
                raise CommandError("mkdir %s" % self.dev_dir, detail=getattr(e, "strerror", None) or str(e))
            created = True
            self.created_groups += 1
        try:
            if not os.path.isdir(self.port_dir):
                raise QosError("%s has no port %s in rdma_cm configfs (%s is absent)" % (self.device, self.port, self.port_dir))
            yield
        finally:
            if created:
                try:
                    _rmdir(self.dev_dir)
                except (IOError, OSError):
                    # A leftover empty group is harmless (cma_roce_mode never removes it).
                    pass

    def _path(self, key):
        return os.path.join(self.port_dir, "default_" + key)

    def read(self, desired):
        state = {}
        with self.group():
            if "roce_tos" in desired:
                state["roce_tos"] = self.tree.read_int(self._path("roce_tos"))
                if state["roce_tos"] is None:
                    raise QosError("cannot read %s" % self._path("roce_tos"))
            if "roce_mode" in desired:
                raw = self.tree.read(self._path("roce_mode"))
                state["roce_mode"] = parse_mode(raw)
                if state["roce_mode"] is None:
                    raise QosError("cannot read %s (got %r)" % (self._path("roce_mode"), raw))
        return state

    def _write(self, path, text):
        with self.group():
            write_attr(path, text)

    def _step(self, key, new_text, old_text):
        return write_step(key, self._path(key), new_text, old_text, write=self._write, quote=repr)

    def plan(self, current, desired):
        steps = []
        if "roce_tos" in desired and current["roce_tos"] != desired["roce_tos"]:
            steps.append(self._step("roce_tos", str(desired["roce_tos"]), str(current["roce_tos"])))
        if "roce_mode" in desired and current["roce_mode"] != desired["roce_mode"]:
            steps.append(self._step("roce_mode", ROCE_MODE_TEXT[desired["roce_mode"]], ROCE_MODE_TEXT[current["roce_mode"]]))
        return steps
