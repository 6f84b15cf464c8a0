# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nccl_env
short_description: NCCL environment variables derived from RDMA facts
version_added: 0.1.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection
  - rdma.fabric.port_selection.link_layers
  - rdma.fabric.port_selection.soft_and_vfs
  - rdma.fabric.port_selection.env
description:
  - Turns C(ansible_facts.rdma) (from M(rdma.fabric.rdma_device_facts)) of one host, or of many hosts,
    into the C(NCCL_*) variables that make NCCL use the RDMA fabric. The result is a dict of strings,
    ready for a Kubernetes ConfigMap (C(envFrom)), a container C(environment) or C(/etc/nccl.conf).
  - C(NCCL_IB_HCA) names only B(ACTIVE) ports, as C(=mlx5_0:1,mlx5_1:1). The leading C(=) makes NCCL match
    device names exactly (C(mlx5_1) does not also select C(mlx5_10)); ports in any other state are left out.
  - C(NCCL_IB_GID_INDEX) is set only when every selected RoCE port has the same C(roce_v2_ipv4_gid_index).
    When they differ (or one is unknown) it is left out and C(NCCL_IB_ROCE_VERSION_NUM=2) and
    C(NCCL_IB_ADDR_FAMILY=AF_INET) are set instead. With no fixed GID index NCCL (2.21 and later) searches each
    port's GID table for an entry of that RoCE version and address family, so every port gets its own index.
  - C(NCCL_IB_TC) (the traffic class NCCL writes into the GRH of its RoCE queue pairs) is set to the lossless
    ToS of the ports (C(roce.default_tos), for example 106 = DSCP 26 with ECN) when all selected RoCE ports agree
    on a non-zero value, or to O(tc). NCCL does not use rdma_cm, so the port's rdma_cm default ToS alone does not
    reach NCCL traffic.
  - C(NCCL_SOCKET_IFNAME) lists the netdevs of the selected ports with the exact-match C(=) prefix, unless
    O(socket_ifname) is given. C(NCCL_IB_DISABLE=0) is set whenever RDMA ports are selected.
  - With facts of many hosts the ports are the union over the hosts, and C(NCCL_IB_GID_INDEX) and C(NCCL_IB_TC)
    need all ports of all hosts to agree.
  - Sources, NCCL documentation U(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and
    NCCL C(src/transport/net_ib/connect.cc) (C(ncclIbGetGidIndex)); see C(docs/k8s_rdma_stack.md).
options:
  _input:
    description:
      - C(ansible_facts.rdma) of one host, a whole C(ansible_facts) dict, a list of either, or a mapping
        host name -> facts.
    type: raw
    required: true
  socket_ifname:
    description:
      - Value for C(NCCL_SOCKET_IFNAME) instead of the ports' netdevs, for example C(=net1) inside a pod that
        reaches the fabric through a secondary network.
    type: str
  on_no_rdma:
    description: C(fail) raises an error when no ACTIVE port is selected; C(disable) returns C(NCCL_IB_DISABLE=1).
    type: str
    choices: [fail, disable]
    default: fail
"""

EXAMPLES = r"""
- name: NCCL settings of this host
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma | rdma.fabric.nccl_env }}"
  # {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_GID_INDEX": "3",
  #  "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=ens1f0,ens1f1"}

- name: Write /etc/nccl.conf from the facts
  ansible.builtin.copy:
    dest: /etc/nccl.conf
    mode: "0644"
    content: |
      {% for key, value in (ansible_facts.rdma | rdma.fabric.nccl_env(link_layers=['Ethernet'])).items() | sort %}
      {{ key }}={{ value }}
      {% endfor %}

- name: One setting for a whole group (union of ports, common GID index only if all agree)
  ansible.builtin.set_fact:
    cluster_nccl_env: >-
      {{ groups['rdma_nodes'] | map('extract', hostvars, ['ansible_facts', 'rdma']) | list
         | rdma.fabric.nccl_env(socket_ifname='=net1', gid_index='omit') }}
"""

RETURN = r"""
_value:
  description: Environment variable names mapped to string values.
  type: dict
  sample:
    NCCL_IB_DISABLE: "0"
    NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1"
    NCCL_IB_ROCE_VERSION_NUM: "2"
    NCCL_IB_ADDR_FAMILY: AF_INET
    NCCL_IB_TC: "106"
    NCCL_SOCKET_IFNAME: "=ens1f0,ens1f1"
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import nccl_env as _nccl_env
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


def nccl_env(data, link_layers=None, devices=None, include_soft=False, include_vfs=False,
             socket_ifname=None, gid_index="auto", tc=None, on_no_rdma="fail", extra=None):
    """NCCL environment derived from RDMA facts (see DOCUMENTATION)."""
    try:
        return _nccl_env(data, link_layers=link_layers, devices=devices, include_soft=include_soft,
                         include_vfs=include_vfs, socket_ifname=socket_ifname, gid_index=gid_index,
                         tc=tc, on_no_rdma=on_no_rdma, extra=extra)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.nccl_env: %s" % e)


class FilterModule(object):
    """rdma.fabric NCCL filters."""

    def filters(self):
        return {"nccl_env": nccl_env}
