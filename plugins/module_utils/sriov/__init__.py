# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""SR-IOV virtual functions on a host (host side only); the request rules are ``common.sriov``.

* :mod:`.pf` - read a PF from sysfs, plan and build its commands, wait for its link, NVIDIA firmware (mlxconfig).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
