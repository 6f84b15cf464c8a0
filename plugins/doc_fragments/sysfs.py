# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    """The C(sysfs_path) option, shared by every module that reads sysfs."""

    DOCUMENTATION = r"""
options:
  sysfs_path:
    description:
      - The folder that plays the role of the host's C(/sys) (sysfs, with configfs under C(kernel/config)).
      - Set it when the host's sysfs is mounted elsewhere, for example C(/host/sys) in a container that
        bind-mounts the host's root at C(/host), or to read a captured sysfs tree.
      - Files that live outside sysfs (such as C(usr/bin/ofed_info)) are read under the parent folder of
        this path (C(/) for C(/sys), C(/host) for C(/host/sys)).
      - Must be an existing folder with a C(class), C(devices) or C(module) sub-folder; anything else is
        rejected before anything is read.
    type: path
    default: /sys
"""
