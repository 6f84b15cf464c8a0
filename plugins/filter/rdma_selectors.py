# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_selectors
short_description: Kubernetes RDMA device-plugin selectors derived from the RDMA facts of many hosts
version_added: 0.1.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection
  - rdma.fabric.port_selection.link_layers
description:
  - Collects, over the B(ACTIVE) RoCE/InfiniBand ports of all given hosts, the values the Kubernetes device
    plugins select devices by, so that selectors are derived from the facts instead of typed by hand.
  - O(plugin=shared) gives C(selectors) for the k8s-rdma-shared-dev-plugin C(configList) entries, C(vendors) and
    C(deviceIDs) (lower-case hex without C(0x), as the plugin reads them from PCI), C(drivers) (the PCI driver,
    for example C(mlx5_core)), C(ifNames) (the ports' netdevs) and C(linkTypes) (C(ether) for Ethernet ports,
    C(infiniband) for InfiniBand ones, the encapsulation of the netdev the plugin compares). SR-IOV virtual
    functions are not selected.
  - O(plugin=sriov) gives C(netDevice) selectors for the sriov-network-device-plugin, C(vendors), C(devices),
    C(drivers), C(pfNames) and C(linkTypes) of the ACTIVE RDMA virtual functions, with C(isRdma=true).
  - The plugins match a device when it matches B(every) selector (logical AND between selectors, OR inside one).
    The lists are unions over all hosts, so on a host whose NICs differ from the others a device of another
    model with a listed interface name could also match; restrict with O(link_layers) or O(devices) and use one
    resource per NIC model when that matters.
  - Soft devices (Soft-RoCE C(rxe), C(siw)) are left out unless O(include_soft=true); they have no PCI
    identity and contribute only C(ifNames) and C(linkTypes). The shared device plugin discovers RDMA devices through their PCI
    device, so it cannot hand Soft-RoCE devices to pods even when selected.
  - Fails when no ACTIVE port is selected, naming each host and the state of its ports.
options:
  _input:
    description: A list of C(ansible_facts.rdma) dicts, a mapping host -> facts, or one host's facts.
    type: raw
    required: true
  plugin:
    description: Which device plugin the selectors are for.
    type: str
    choices: [shared, sriov]
    default: shared
  include_soft:
    description: Also use soft devices (shared plugin only).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Selectors for the shared device plugin from every node's facts
  ansible.builtin.debug:
    msg: "{{ groups['rdma_nodes'] | map('extract', hostvars, ['ansible_facts', 'rdma']) | list | rdma.fabric.rdma_selectors }}"
  # {"vendors": ["15b3"], "deviceIDs": ["101d"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0", "ens1f1"],
  #  "linkTypes": ["ether"]}

- name: Only the InfiniBand ports
  ansible.builtin.set_fact:
    ib_selectors: "{{ node_facts | rdma.fabric.rdma_selectors(link_layers=['InfiniBand']) }}"

- name: SR-IOV virtual functions for the sriov-network-device-plugin
  ansible.builtin.set_fact:
    vf_selectors: "{{ node_facts | rdma.fabric.rdma_selectors(plugin='sriov') }}"
"""

RETURN = r"""
_value:
  description: The selectors object of one device-plugin resource; empty lists are left out.
  type: dict
  sample:
    vendors: ["15b3"]
    deviceIDs: ["101d"]
    drivers: ["mlx5_core"]
    ifNames: ["ens1f0"]
    linkTypes: ["ether"]
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import shared_dev_selectors, sriov_vf_selectors
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

PLUGINS = ("shared", "sriov")


def rdma_selectors(data, plugin="shared", link_layers=None, devices=None, include_soft=False):
    """Device plugin selectors derived from RDMA facts (see DOCUMENTATION)."""
    try:
        if plugin == "shared":
            return shared_dev_selectors(data, link_layers=link_layers, devices=devices, include_soft=include_soft)
        if plugin == "sriov":
            return sriov_vf_selectors(data, link_layers=link_layers, devices=devices)
        raise RdmaFactsError("plugin must be one of %s, got %r" % (", ".join(PLUGINS), plugin))
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_selectors: %s" % e)


class FilterModule(object):
    """rdma.fabric device plugin selector filters."""

    def filters(self):
        return {"rdma_selectors": rdma_selectors}
