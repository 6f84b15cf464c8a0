# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filter management_netdevs: the netdevs, drivers and RDMA devices under a host's management connection.

Thin wrapper over plugins/plugin_utils/management.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: management_netdevs
short_description: The netdevs, drivers and RDMA devices that carry a host's management connection
version_added: 0.1.0
author: rdma.fabric developers
description:
  - From facts only - Ansible's network facts (C(setup) with the C(network) subset) and the RDMA facts - finds the
    interface that holds the management address (the host's C(ansible_host)), or, where no interface holds it (a
    host name, a loopback address, NAT or a port forward), the interfaces of the default routes.
  - Follows bonds (C(slaves)), bridges (C(interfaces)) and VLANs (C(parent.vid) names) down to the netdevs whose
    drivers carry the traffic, and adds the driver of each RDMA device with a port on one of them (soft devices
    such as rxe add nothing).
  - The C(rdma.fabric.mofed) role refuses to reload a driver this names unless C(mofed_allow_management_restart).
options:
  _input:
    description: The host's C(ansible_facts).
    type: dict
    required: true
  address:
    description: The management address (C(ansible_host)); a name or a loopback address falls back to the default
      routes.
    type: str
  rdma:
    description: The RDMA facts (C(ansible_facts.rdma)); without them only the netdevs' own drivers count.
    type: dict
"""

EXAMPLES = r"""
- name: Where the management connection runs
  ansible.builtin.debug:
    msg: "{{ ansible_facts | rdma.fabric.management_netdevs(ansible_host | default(inventory_hostname), ansible_facts.rdma | default({})) }}"
"""

RETURN = r"""
_value:
  description: The management connection's netdevs and what drives them.
  type: dict
  contains:
    address:
      description: The address asked about.
      type: str
    source:
      description: C(address) (an interface holds it), C(default_route) (the default routes stand in) or C(unknown).
      type: str
    netdevs:
      description: The netdevs, top first (a bond or VLAN, then the netdevs under it).
      type: list
      elements: str
    drivers:
      description: Their kernel modules and the drivers of the RDMA devices with a port on one of them.
      type: list
      elements: str
    rdma_devices:
      description: The (hardware) RDMA devices with a port on one of the netdevs.
      type: list
      elements: str
"""

from ansible_collections.rdma.fabric.plugins.plugin_utils.management import management_netdevs


class FilterModule(object):
    def filters(self):
        return {"management_netdevs": management_netdevs}
