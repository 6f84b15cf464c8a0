# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_shared_dev_plugin_config
short_description: k8s-rdma-shared-dev-plugin configuration from resources and RDMA facts
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Builds the C(config.json) document of the k8s-rdma-shared-dev-plugin (also the C(config) of a
    NicClusterPolicy C(rdmaSharedDevicePlugin)).
  - Each resource keeps its C(selectors) when given; otherwise they are derived from the ACTIVE ports in the
    facts with the same rules as P(rdma.fabric.rdma_selectors#filter), per node pool (each key of O(facts)),
    restricted by the resource's C(link_layers), C(rdma_devices) and C(split), and merged over the pools (the
    plugin reads one config for every node).
  - C(split) (the role's default) gives a resource one part of each pool's RDMA ports (SR-IOV virtual functions
    never; ports in any state, so the parts do not move when a link drops) in (NUMA node, PCI address) order cut
    into C(parts) consecutive parts, the first parts one port longer when they do not divide evenly. A split
    resource that no pool gives an ACTIVE port is left out (empty selectors would select every device).
  - A resource holds one link type. A derived resource whose ports on a pool's nodes are InfiniBand and Ethernet
    is given in that pool as two, C(<resourceName>_ib) and C(<resourceName>_eth) (each selector carries
    C(linkTypes)); a pool that splits it does not give the resource itself.
  - Warns (an Ansible warning) for each node pool that gives a split resource no ACTIVE port, naming the pool, the
    resource and why (a pool with one RDMA port has no second half, since a device is in at most one resource), as
    pods asking for that resource do not run on the pool's nodes; and for each split resource it leaves out.
  - Fails when the merged selectors select one device of a pool in two resources, or in a derived resource the
    pool did not give it to, naming the nodes and the devices.
options:
  _input:
    description: The resources (list of dicts).
    type: list
    elements: dict
    required: true
    suboptions:
      resourceName:
        description: Resource name; pods request C(rdma/<resourceName>).
        type: str
        required: true
      rdmaHcaMax:
        description: How many pods may share the selected devices.
        type: int
        default: 63
      resourcePrefix:
        description: Resource prefix instead of C(rdma).
        type: str
      selectors:
        description: Explicit selectors; empty means derive them from the facts.
        type: dict
      link_layers:
        description: Derive selectors only from ports of these link layers.
        type: list
        elements: str
      rdma_devices:
        description: Derive selectors only from RDMA devices matching these shell globs.
        type: list
        elements: str
      split:
        description: Only part C(part) of C(parts) of each node pool's ports (see the description).
        type: dict
        suboptions:
          part:
            description: Which part, 1 to C(parts).
            type: int
            required: true
          parts:
            description: Into how many parts the ports are cut.
            type: int
            required: true
  facts:
    description: RDMA facts of the node pools (mapping pool -> one host's facts, a list, or one host's facts).
    type: raw
    required: true
  pool_resources:
    description: Pool (a key of O(facts)) -> resources (as O(_input)) used for that pool instead of O(_input).
    type: dict
  include_soft:
    description: Also derive selectors from soft devices.
    type: bool
    default: false
  periodic_update_interval:
    description: C(periodicUpdateInterval) of the plugin (seconds); left out when not given.
    type: int
"""

EXAMPLES = r"""
- name: Plugin config for one resource from the facts of the nodes
  ansible.builtin.debug:
    msg: >-
      {{ [{'resourceName': 'rdma_shared_device_a', 'rdmaHcaMax': 63}]
         | rdma.fabric.rdma_shared_dev_plugin_config(node_facts) | to_nice_json }}

- name: Two resources, each node pool's ports cut in two halves in (NUMA node, PCI address) order
  ansible.builtin.debug:
    msg: >-
      {{ [{'resourceName': 'rdma_shared_device_a', 'split': {'part': 1, 'parts': 2}},
          {'resourceName': 'rdma_shared_device_b', 'split': {'part': 2, 'parts': 2}}]
         | rdma.fabric.rdma_shared_dev_plugin_config(pool_facts) | to_nice_json }}
"""

RETURN = r"""
_value:
  description: The plugin configuration document.
  type: dict
  sample:
    configList:
      - resourceName: rdma_shared_device_a
        rdmaHcaMax: 63
        selectors: {vendors: ["15b3"], deviceIDs: ["101d"], drivers: ["mlx5_core"], ifNames: ["ens1f0"],
                    linkTypes: ["ether"]}
"""

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import shared_dev_gaps, shared_dev_plugin_config
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


def rdma_shared_dev_plugin_config(resources, facts, include_soft=False, periodic_update_interval=None, pool_resources=None):
    """k8s-rdma-shared-dev-plugin configuration (see DOCUMENTATION)."""
    try:
        doc = shared_dev_plugin_config(resources, facts, include_soft=include_soft,
                                       periodic_update_interval=periodic_update_interval, pool_resources=pool_resources)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_shared_dev_plugin_config: %s" % e)
    for gap in shared_dev_gaps(resources, facts, include_soft=include_soft, pool_resources=pool_resources):
        Display().warning("rdma.fabric.rdma_shared_dev_plugin_config: %s." % gap)
    return doc


class FilterModule(object):
    """rdma.fabric device plugin configuration filters."""

    def filters(self):
        return {"rdma_shared_dev_plugin_config": rdma_shared_dev_plugin_config}
