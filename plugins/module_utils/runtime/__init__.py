# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host runtime (host side only, no Ansible on the host): ``rdma-fabric SUBCOMMAND``.

* :mod:`.host_cli`      - the entry point and its ``SUBCOMMANDS`` table; the process helper for code without Ansible.
* :mod:`.metrics`       - the node_exporter textfile collector (``rdma-fabric metrics``).
* :mod:`.health_check`  - the Slurm/NHC health check (``rdma-fabric health-check``).
* :mod:`.netlink_stats` - PFC counters through DCB netlink and ethtool statistics (for the collector).

The QoS re-apply (``qos-apply``) and the ACS boot path (``gpudirect-acs``) live with their concern
(:mod:`..qos.reapply`, :mod:`..gpudirect.acs_boot`); ``host_cli.SUBCOMMANDS`` names them.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
