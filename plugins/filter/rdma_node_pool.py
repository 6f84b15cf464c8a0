# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_node_pool
short_description: The node pool (NIC layout) name of one host's RDMA facts
version_added: 0.2.0
author: rdma.fabric developers
description:
  - The name of the node pool a host belongs to, from its C(ansible_facts.rdma) alone, the same name
    M(rdma.fabric.node_pools) gives, the port count per kind (C(ib2), C(roce1), C(soft1), C(none)) and 8 hex digits of
    a hash of the NIC layout (devices and ports compared by what the controller-side derivations read; GUIDs, GIDs,
    addresses, PCI addresses, MTU and rate left out). Hosts with the same layout get the same name, in any run.
  - Made for inventories (a C(constructed) source's C(keyed_groups) or C(compose)), for example one group per pool.
options:
  _input:
    description: One host's C(ansible_facts.rdma) (or its whole C(ansible_facts)).
    type: raw
    required: true
"""

EXAMPLES = r"""
# inventories/example/02-constructed.yml
keyed_groups:
  - prefix: rdma_pool
    key: rdma | rdma.fabric.rdma_node_pool
"""

RETURN = r"""
_value:
  description: The pool name.
  type: str
  sample: roce1-4c1d2f0a
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError, host_facts_list
from ansible_collections.rdma.fabric.plugins.plugin_utils.node_pools import pool_name


def rdma_node_pool(data):
    """The node pool name of one host's RDMA facts (see DOCUMENTATION)."""
    try:
        hosts = host_facts_list(data)
        if len(hosts) != 1:
            raise RdmaFactsError("give one host's facts (ansible_facts.rdma), got %d hosts" % len(hosts))
        return pool_name(hosts[0][1])
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_node_pool: %s" % e)


class FilterModule(object):
    """rdma.fabric node pool filter."""

    def filters(self):
        return {"rdma_node_pool": rdma_node_pool}
