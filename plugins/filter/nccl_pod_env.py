# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: nccl_pod_env
short_description: NCCL environment variables for the pods of one node pool
version_added: 0.2.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection
  - rdma.fabric.port_selection.link_layers
  - rdma.fabric.port_selection.soft_and_vfs
  - rdma.fabric.port_selection.env
description:
  - Turns the RDMA facts of ONE node pool (the C(facts) of a pool from M(rdma.fabric.node_pools), one host's
    C(ansible_facts.rdma)) into the C(NCCL_*) variables for the pods that run on that pool's nodes. The
    C(k8s_rdma_stack) role puts the result in the pool's ConfigMap.
  - C(NCCL_IB_HCA), C(NCCL_IB_GID_INDEX) (or C(NCCL_IB_ROCE_VERSION_NUM) with C(NCCL_IB_ADDR_FAMILY) when the
    pool's RoCE ports disagree) and C(NCCL_IB_TC) follow the P(rdma.fabric.nccl_env#filter) rules over the pool's ports.
  - C(NCCL_SOCKET_IFNAME) names an interface that exists inside the pod, with the exact-match C(=) prefix (the
    host netdevs of the ports do not). It is the interface of the Multus network O(network) when the pool has an
    ACTIVE RDMA port and O(network) is given, else O(pod_interface) (the pod's primary interface, C(eth0)).
    O(socket_ifname) replaces it verbatim.
  - The interface of the Multus network is its C(pod_interface) key in O(networks), else C(net1). Multus names a
    pod's attachments C(net1), C(net2) ... in the order of the pod's C(k8s.v1.cni.cncf.io/networks) annotation,
    unless the selection gives an C(interface); so list the network first, or give C(pod_interface) and ask for
    that C(interface) in the pod.
  - A pool without an ACTIVE RDMA port gets C(NCCL_IB_DISABLE=1), an empty C(NCCL_IB_HCA) and
    C(NCCL_SOCKET_IFNAME) O(pod_interface) (sockets over the pod's primary interface).
  - With O(host_network) (pods with C(hostNetwork=true), which see the host's netdevs) C(NCCL_SOCKET_IFNAME) is
    P(rdma.fabric.nccl_env#filter)'s, the host netdevs of the pool's RDMA ports, and is left out in a pool without
    RDMA (NCCL picks a host interface itself).
options:
  _input:
    description: One host's C(ansible_facts.rdma) (or whole C(ansible_facts)); the pool's facts.
    type: raw
    required: true
  pod_interface:
    description: The pod's primary interface.
    type: str
    default: eth0
  network:
    description: Name of the entry of O(networks) (a NetworkAttachmentDefinition) NCCL traffic uses. Empty means none.
    type: str
    default: ""
  networks:
    description: The networks (entries of C(k8s_rdma_stack_networks), with C(name) and optional C(pod_interface)).
    type: list
    elements: dict
    default: []
  host_network:
    description: Settings for pods with C(hostNetwork=true) (see above).
    type: bool
    default: false
  socket_ifname:
    description: Value for C(NCCL_SOCKET_IFNAME) instead of the pod interface, for example C(=net2) or C(^lo,docker).
    type: str
seealso:
  - plugin: rdma.fabric.nccl_env
    plugin_type: filter
  - module: rdma.fabric.node_pools
"""

EXAMPLES = r"""
- name: Node pools of the Kubernetes nodes
  rdma.fabric.node_pools:
    hosts: "{{ groups['rdma_nodes'] }}"
  register: pools

- name: NCCL settings of each pool's pods
  ansible.builtin.debug:
    msg: "{{ item.key }}: {{ item.value.facts | rdma.fabric.nccl_pod_env }}"
  loop: "{{ pools.pools | dict2items }}"
  # roce1-4c1d2f0a: {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3",
  #                  "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=eth0"}
  # none-1a2b3c4d: {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "", "NCCL_SOCKET_IFNAME": "=eth0"}
"""

RETURN = r"""
_value:
  description: Environment variable names mapped to string values.
  type: dict
  sample:
    NCCL_IB_DISABLE: "0"
    NCCL_IB_HCA: "=mlx5_0:1,mlx5_1:1"
    NCCL_IB_GID_INDEX: "3"
    NCCL_IB_TC: "106"
    NCCL_SOCKET_IFNAME: "=net1"
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import nccl_network_interface
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import pod_nccl_env


def nccl_pod_env(data, pod_interface="eth0", network="", networks=None, socket_ifname=None, link_layers=None,
                 devices=None, include_soft=False, include_vfs=False, gid_index="auto", tc=None, extra=None, host_network=False):
    """NCCL environment of one node pool's pods (see DOCUMENTATION)."""
    try:
        return pod_nccl_env(data, pod_interface=pod_interface,
                            rdma_pod_interface=nccl_network_interface(networks or [], network),
                            socket_ifname=socket_ifname or None, link_layers=link_layers, devices=devices,
                            include_soft=include_soft, include_vfs=include_vfs, gid_index=gid_index, tc=tc, extra=extra,
                            host_network=host_network)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.nccl_pod_env: %s" % e)


class FilterModule(object):
    """rdma.fabric NCCL pod filters."""

    def filters(self):
        return {"nccl_pod_env": nccl_pod_env}
