# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ECN / CNP settings of the NVIDIA driver stack (MLNX_OFED / DOCA-OFED mlx5).

Files under ``/sys/class/net/<if>/ecn/``::

    roce_np/enable/<prio>      1/0  notification point: answer CE-marked packets with CNPs
    roce_rp/enable/<prio>      1/0  reaction point: slow down on received CNPs (DCQCN)
    roce_np/cnp_dscp           DSCP of generated CNPs (0-63)
    roce_np/cnp_802p_prio      802.1p priority of generated CNPs (0-7)

Upstream kernels, rxe and virtio have no ``ecn/`` folder: that is reported as
unsupported (``on_unsupported`` decides between failing and warning).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import QosBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import write_step
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ECN_KEYS, PRIORITIES, UnsupportedError

CNP_FILES = {"dscp": "cnp_dscp", "priority": "cnp_802p_prio"}


class SysfsEcn(QosBackend):
    name = "sysfs_ecn"
    keys = ECN_KEYS

    def __init__(self, ctx, probe=None):
        super(SysfsEcn, self).__init__(ctx, probe)
        self.root = self.tree.sys("class", "net", self.netdev, "ecn")

    def _enable_path(self, point, prio):
        return self.tree.sys("class", "net", self.netdev, "ecn", "roce_" + point, "enable", str(prio))

    def _cnp_path(self, key):
        return self.tree.sys("class", "net", self.netdev, "ecn", "roce_np", CNP_FILES[key])

    def read(self, desired):
        """Current ``ecn`` / ``cnp`` for what ``desired`` asks; UnsupportedError when absent."""
        keys = [k for k in ECN_KEYS if k in desired]
        if not self.tree.isdir(self.root):
            raise UnsupportedError(keys, "%s has no ECN/CNP settings (%s is absent: only the NVIDIA "
                                         "MLNX_OFED/DOCA-OFED mlx5 driver provides it)" % (self.netdev, self.root))
        state = {}
        missing = []
        if "ecn" in desired:
            ecn = {}
            for point in sorted(desired["ecn"]):
                enabled = []
                for prio in PRIORITIES:
                    value = self.tree.read_int(self._enable_path(point, prio))
                    if value is None:
                        missing.append(self._enable_path(point, prio))
                    elif value:
                        enabled.append(prio)
                ecn[point] = enabled
            state["ecn"] = ecn
        if "cnp" in desired:
            cnp = {}
            for key in sorted(desired["cnp"]):
                value = self.tree.read_int(self._cnp_path(key))
                if value is None:
                    missing.append(self._cnp_path(key))
                cnp[key] = value
            state["cnp"] = cnp
        if missing:
            raise UnsupportedError(keys, "%s: ECN/CNP files missing or unreadable: %s" % (self.netdev, ", ".join(missing)))
        return state

    def plan(self, current, desired):
        steps = []
        for point in sorted(desired.get("ecn", {})):
            want = set(desired["ecn"][point])
            have = set(current["ecn"][point])
            for prio in PRIORITIES:
                if (prio in want) != (prio in have):
                    steps.append(write_step(
                        "ecn", self._enable_path(point, prio), int(prio in want), int(prio in have)))
        for key in sorted(desired.get("cnp", {})):
            if current["cnp"][key] != desired["cnp"][key]:
                steps.append(write_step("cnp", self._cnp_path(key), desired["cnp"][key], current["cnp"][key]))
        return steps

    def target(self, current, desired):
        """ECN/CNP parts not in ``desired`` keep their values."""
        out = {}
        for key in ECN_KEYS:
            if key in desired:
                out[key] = dict(current[key])
                out[key].update(desired[key])
        return out
