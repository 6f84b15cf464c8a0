# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """Membership of the module_defaults groups of meta/runtime.yml (action_groups)."""

    # The modules with the sysfs_path option: rdma_device_facts, roce_qos, gpudirect.
    SYSFS_GROUP = r"""
attributes:
  action_group:
    description: Use C(group/rdma.fabric.sysfs) in C(module_defaults) to set O(sysfs_path) for this module and the others that read sysfs.
    support: full
    membership:
      - rdma.fabric.sysfs
"""
