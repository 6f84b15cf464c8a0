# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Lossless-RoCE QoS for RoCE ports: the logic behind ``rdma.fabric.roce_qos``
and the host runtime's ``rdma-fabric qos-apply``.

The option model (validation and normalisation, once for every caller, the
ports of a call, merge of desired into current state, diff, the exceptions)
is ``common.qos_model``: the controller's ``roce_qos_ports`` filter and the
``roce_qos`` action use it too.

Layout:

* :mod:`.backend`   - the one backend interface (probe, read, target, plan),
                      the selector, the slot for per-driver DSCP remap rules.
* :mod:`.commands`  - the command runner and the step helpers (the steps are ``change.engine``'s).
* :mod:`.dcb`       - iproute2 ``dcb`` backend (upstream DCB netlink).
* :mod:`.mlnx_qos`  - NVIDIA ``mlnx_qos`` backend.
* :mod:`.sysfs_ecn` - NVIDIA-driver ECN/CNP files under ``/sys/class/net/<if>/ecn``.
* :mod:`.configfs`  - rdma_cm configfs ``default_roce_tos`` / ``default_roce_mode``.
* :mod:`.netdev`    - MTU (sysfs + ``ip link``) and global pause (``ethtool``).
* :mod:`.port`      - the ports of a call from one read of the RDMA facts.
* :mod:`.engine`    - the option groups, plan, apply with rollback, read back.
* :mod:`.lock`      - the host's one QoS lock (module and boot re-apply).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
