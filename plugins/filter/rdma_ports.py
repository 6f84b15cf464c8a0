# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_ports
short_description: The ports of one host's RDMA facts, by kind (RoCE, InfiniBand, iWARP)
version_added: 0.2.0
author: rdma.fabric developers
extends_documentation_fragment:
  - rdma.fabric.port_selection.soft_and_vfs
description:
  - The one rule of the collection for what kind of RDMA port a port is, exposed to roles and playbooks so that
    YAML never restates it (the rule lives in C(plugins/module_utils/common/rdma_schema.py)).
  - C(iwarp) when the device's node type is C(RNIC) (iWARP NICs, Soft-iWARP C(siw)); C(infiniband) when the port's
    link layer is C(InfiniBand); C(roce) when it is C(Ethernet) on any other node type (RoCE NICs, Soft-RoCE C(rxe)).
    iWARP ports read link layer C(Ethernet) too, but they take no PFC or RoCE ToS.
  - Returns one flat record per port, in facts order. By default ports that are down, soft devices and SR-IOV
    virtual functions are included, so it answers "what is there", for example which netdevs to configure.
options:
  _input:
    description: One host's C(ansible_facts.rdma) (or its whole C(ansible_facts)).
    type: dict
    required: true
  kinds:
    description: Only ports of these kinds. Empty means every kind (ports whose link layer is unknown included).
    type: list
    elements: str
    choices: [roce, infiniband, iwarp]
    default: []
  active_only:
    description: Only ports whose state is C(ACTIVE).
    type: bool
    default: false
  # rdma.fabric.port_selection.soft_and_vfs's, on by default (what is there)
  include_soft:
    default: true
  include_vfs:
    default: true
"""

EXAMPLES = r"""
- name: The netdevs of the RoCE ports (what lossless_ethernet configures)
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma | rdma.fabric.rdma_ports(kinds=['roce']) | map(attribute='netdev') | select | unique }}"

- name: ACTIVE InfiniBand ports of physical NICs
  ansible.builtin.debug:
    msg: "{{ ansible_facts.rdma | rdma.fabric.rdma_ports(kinds=['infiniband'], active_only=true, include_soft=false) }}"
"""

RETURN = r"""
_value:
  description: One record per port.
  type: list
  elements: dict
  contains:
    device: {description: RDMA device name., type: str}
    port: {description: Port number., type: int}
    kind: {description: "C(roce), C(infiniband), C(iwarp), or null when the link layer is unknown.", type: str}
    netdev: {description: "The port's own netdev, or null.", type: str}
    carrier_netdev: {description: "The netdev carrying the port (its own, else the rxe/siw parent).", type: str}
    link_layer: {description: As in the facts., type: str}
    state: {description: As in the facts., type: str}
    rate_gbps: {description: "The port rate in Gb/s, as in the facts (null when unreadable).", type: float}
    soft: {description: True for rxe/siw., type: bool}
    is_vf: {description: True for an SR-IOV virtual function., type: bool}
    driver: {description: The device's driver., type: str}
    pci_address: {description: "PCI address, null for soft devices.", type: str}
    roce_v2_ipv4_gid_index: {description: As in the facts., type: int}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    host_facts_list,
    port_view,
    ports,
)


def rdma_ports(data, kinds=None, active_only=False, include_soft=True, include_vfs=True):
    """Flat port records of one host's facts (see DOCUMENTATION)."""
    try:
        hosts = host_facts_list(data)
        if len(hosts) != 1:
            raise RdmaFactsError("give one host's facts (ansible_facts.rdma), got %d hosts" % len(hosts))
        facts = hosts[0][1]
        return [port_view(dev, port) for dev, port in
                ports(facts, kinds=kinds, active_only=active_only, include_soft=include_soft, include_vfs=include_vfs)]
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.rdma_ports: %s" % e)


class FilterModule(object):
    """rdma.fabric port-kind filter."""

    def filters(self):
        return {"rdma_ports": rdma_ports}
