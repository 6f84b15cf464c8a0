# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lossless-RoCE QoS for one port: the logic behind ``rdma.fabric.roce_qos``.

Layout:

* :mod:`.model`     - option validation and normalisation, merge of desired
                      into current state, diff; the exceptions.
* :mod:`.port`      - netdev / RDMA device+port lookup in sysfs.
* :mod:`.dcb`       - iproute2 ``dcb`` backend (upstream DCB netlink).
* :mod:`.mlnx_qos`  - NVIDIA ``mlnx_qos`` backend.
* :mod:`.sysfs_ecn` - NVIDIA-driver ECN/CNP files under ``/sys/class/net/<if>/ecn``.
* :mod:`.configfs`  - rdma_cm configfs ``default_roce_tos`` / ``default_roce_mode``.
* :mod:`.netdev`    - MTU (sysfs + ``ip link``) and global pause (``ethtool``).
* :mod:`.engine`    - backend selection, plan, apply with rollback, verify.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
