# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_cni_config
short_description: Validated CNI configuration for an RDMA NetworkAttachmentDefinition
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Builds the CNI JSON carried in C(spec.config) of a Multus NetworkAttachmentDefinition for a secondary network
    on an RDMA netdev, C(macvlan) (RoCE, the pod shares the port through the RDMA shared device plugin),
    C(host-device) (moves a netdev, for example a VF, into the pod) or C(ipoib) (an IPoIB child of C(ib0)).
  - The IPAM is C(whereabouts) (cluster-wide, needs C(ipam.range)) or C(host-local) (per node, needs
    C(ipam.subnet)); any other IPAM type is passed through unchecked.
  - Bad input fails with the offending key and the allowed values, before anything is rendered.
options:
  _input:
    description: The network definition.
    type: dict
    required: true
    suboptions:
      name:
        description: NAD and CNI network name (DNS-1123 label).
        type: str
        required: true
      type:
        description: CNI plugin.
        type: str
        choices: [macvlan, host-device, ipoib]
        required: true
      master:
        description: Parent netdev for C(macvlan) and C(ipoib).
        type: str
      mode:
        description: macvlan mode.
        type: str
        choices: [bridge, private, vepa, passthru]
        default: bridge
      device:
        description: Netdev moved into the pod by C(host-device).
        type: str
      pciBusID:
        description: PCI address moved into the pod by C(host-device) (instead of O(_input.device)).
        type: str
      mtu:
        description: Interface MTU.
        type: int
      cni_version:
        description: C(cniVersion) of the config.
        type: str
        default: 0.3.1
      ipam:
        description: IPAM configuration, a dict with C(type) and that plugin's keys.
        type: dict
        required: true
  as_json:
    description: Return the JSON text (as a NAD carries it) instead of a dict.
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: CNI config of a macvlan network on the RoCE port
  ansible.builtin.debug:
    msg: >-
      {{ {'name': 'rdma-net-a', 'type': 'macvlan', 'master': 'ens1f0', 'mtu': 9000,
          'ipam': {'type': 'whereabouts', 'range': '192.168.100.0/24'}} | rdma.fabric.rdma_cni_config(as_json=true) }}
"""

RETURN = r"""
_value:
  description: The CNI configuration (a dict, or its JSON text with O(as_json=true)).
  type: raw
  sample:
    cniVersion: 0.3.1
    name: rdma-net-a
    type: macvlan
    master: ens1f0
    mode: bridge
    mtu: 9000
    ipam: {type: whereabouts, range: 192.168.100.0/24}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import cni_config, cni_config_json
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


def rdma_cni_config(network, as_json=False):
    """CNI configuration for one network (see DOCUMENTATION)."""
    try:
        return cni_config_json(network) if as_json else cni_config(network)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_cni_config: %s" % e)


class FilterModule(object):
    """rdma.fabric CNI configuration filters."""

    def filters(self):
        return {"rdma_cni_config": rdma_cni_config}
