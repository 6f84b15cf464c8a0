# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_node_labels
short_description: Kubernetes node labels derived from one node's RDMA facts
version_added: 0.1.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection
  - rdma.fabric.port_selection.link_layers
description:
  - Labels that let pods be scheduled on RDMA nodes, from the node's C(ansible_facts.rdma).
  - C(<prefix>/capable) is C(true) when the node has an ACTIVE RDMA port (SR-IOV VFs not counted), else C(false).
  - C(<prefix>/link-layer) is C(Ethernet) (RoCE), C(InfiniBand) or C(Mixed), from the ACTIVE ports.
  - C(<prefix>/roce-v2-gid-index) is the RoCE v2 IPv4 GID index when all ACTIVE RoCE ports of the node agree on it.
  - C(<prefix>/nccl-pool) is O(nccl_pool) when given, the node's pool id (the node pool name from
    M(rdma.fabric.node_pools)), which names the pool's NCCL ConfigMap of C(k8s_rdma_stack).
  - Labels that do not apply are left out. O(remove=true) returns every label key with a null value (a merge
    patch that deletes them).
options:
  _input:
    description: One node's C(ansible_facts.rdma) (or its whole C(ansible_facts)).
    type: raw
    required: true
  prefix:
    description: Label key prefix, a DNS subdomain.
    type: str
    default: rdma.fabric
  include_soft:
    description: Count soft devices (Soft-RoCE) as RDMA capable.
    type: bool
    default: false
  nccl_pool:
    description: The node's pool id, a DNS label such as C(roce1-4c1d2f0a); sets C(<prefix>/nccl-pool).
    type: str
    version_added: 0.2.0
  remove:
    description: Return all label keys mapped to null, to remove the labels.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Labels of this node
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma | rdma.fabric.rdma_node_labels }}"
  # {"rdma.fabric/capable": "true", "rdma.fabric/link-layer": "Ethernet", "rdma.fabric/roce-v2-gid-index": "3"}
"""

RETURN = r"""
_value:
  description: Label keys mapped to values (strings, or null with O(remove=true)).
  type: dict
  sample:
    rdma.fabric/capable: "true"
    rdma.fabric/link-layer: Ethernet
    rdma.fabric/roce-v2-gid-index: "3"
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import node_label_keys, node_labels
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


def rdma_node_labels(data, prefix="rdma.fabric", link_layers=None, devices=None, include_soft=False, remove=False, nccl_pool=None):
    """Node labels derived from one node's RDMA facts (see DOCUMENTATION)."""
    try:
        if remove:
            return dict((key, None) for key in node_label_keys(prefix))
        return node_labels(data, prefix=prefix, link_layers=link_layers, devices=devices, include_soft=include_soft,
                           nccl_pool=nccl_pool)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_node_labels: %s" % e)


class FilterModule(object):
    """rdma.fabric node label filters."""

    def filters(self):
        return {"rdma_node_labels": rdma_node_labels}
