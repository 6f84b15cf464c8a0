# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: ucx_env
short_description: UCX (and so MPI) environment variables derived from one host's RDMA facts
version_added: 0.2.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection
  - rdma.fabric.port_selection.soft_and_vfs
  - rdma.fabric.port_selection.env
description:
  - Turns one host's C(ansible_facts.rdma) (from M(rdma.fabric.rdma_device_facts)) into the C(UCX_*) variables that
    make UCX, and the MPI libraries and frameworks on top of it (Open MPI C(pml=ucx), mpi4py, Horovod, UCC), use
    the host's RDMA ports. The result is a dict of strings, for C(/etc/ucx/ucx.conf), an environment file, or
    C(mpirun -x).
  - C(UCX_NET_DEVICES) lists every ACTIVE RoCE and InfiniBand port as C(device:port), for example
    C(mlx5_0:1,mlx5_1:1) (the port kinds of P(rdma.fabric.rdma_ports#filter)).
  - iWARP ports are never listed as C(device:port) - UCX's verbs transports refuse iWARP devices. A host whose only
    RDMA ports are iWARP gets the TCP settings below on those ports' netdevs.
  - C(UCX_TLS) is C(rc,ud,sm,self) with RDMA ports (C(cuda) added with O(cuda)); C(tcp) is left out so that a job
    fails instead of silently running over TCP. Without RDMA ports it is C(tcp,sm,self) and C(UCX_NET_DEVICES)
    names O(tcp_netdevs) (or the iWARP netdevs), or is left out.
  - C(UCX_IB_GID_INDEX) is the RoCE v2 IPv4 GID index when every selected RoCE port has the same one, else left
    out (UCX then picks the RoCE v2 GID on each port).
  - C(UCX_IB_TRAFFIC_CLASS) is the full ToS byte of the RoCE traffic (the QoS profile's RoCE ToS, as
    C(NCCL_IB_TC)) - O(tc), else the C(roce.default_tos) all RoCE ports agree on when non-zero.
  - Rules and their sources are in C(plugins/plugin_utils/ucx.py) and C(roles/job_env/README.md).
options:
  _input:
    description: C(ansible_facts.rdma) of one host (or its whole C(ansible_facts)).
    type: dict
    required: true
  transports:
    description: C(auto) or the C(UCX_TLS) list (UCX transport names and aliases; a leading C(^) excludes).
    type: raw
    default: auto
  include_soft:
    # rdma.fabric.port_selection.soft_and_vfs's, on by default (a host-level setting, no device plugin involved)
    default: true
  cuda:
    description: The host has GPUs; adds UCX's C(cuda) transports (C(cuda_copy), C(cuda_ipc), C(gdr_copy)).
    type: bool
    default: false
  tcp_netdevs:
    description: Netdevs for UCX's TCP transport on a host without RDMA ports.
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
- name: UCX settings of this host
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma | rdma.fabric.ucx_env(tc=106) }}"
  # {"UCX_NET_DEVICES": "mlx5_0:1", "UCX_TLS": "rc,ud,sm,self", "UCX_IB_GID_INDEX": "3",
  #  "UCX_IB_TRAFFIC_CLASS": "106"}
"""

RETURN = r"""
_value:
  description: Environment variable names mapped to string values.
  type: dict
  sample:
    UCX_NET_DEVICES: "mlx5_0:1,mlx5_1:1"
    UCX_TLS: "rc,ud,sm,self"
    UCX_IB_GID_INDEX: "3"
    UCX_IB_TRAFFIC_CLASS: "106"
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.ucx import ucx_env as _ucx_env


def ucx_env(data, tc=None, gid_index="auto", transports="auto", devices=None, include_soft=True,
            include_vfs=False, cuda=False, tcp_netdevs=None, extra=None):
    """See DOCUMENTATION."""
    try:
        return _ucx_env(data, tc=tc, gid_index=gid_index, transports=transports, devices=devices,
                        include_soft=include_soft, include_vfs=include_vfs, cuda=cuda,
                        tcp_netdevs=tcp_netdevs, extra=extra)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.ucx_env: %s" % e)


class FilterModule(object):
    """rdma.fabric UCX environment filter."""

    def filters(self):
        return {"ucx_env": ucx_env}
