# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: rdma_links
short_description: Check and normalise a list of software RDMA links (rxe, siw)
version_added: 0.2.0
author: rdma.fabric developers
description:
  - The rules of M(rdma.fabric.rdma_link) for a link request, exposed to roles so that YAML never restates them
    (they live in C(plugins/module_utils/common/rdma_link.py)). Fails, naming O(param), the entry and the allowed values,
    on bad input.
options:
  _input:
    description: The links, each a dict with C(name), C(netdev), C(type) and C(state).
    type: list
    elements: dict
    required: true
  default_type:
    description: Type of the links that give none.
    type: str
    choices: [rxe, siw]
    default: rxe
  default_state:
    description: State of the links that give none.
    type: str
    choices: [present, absent]
    default: present
  param:
    description: The variable's name, for the error message.
    type: str
    default: links
"""

EXAMPLES = r"""
- name: Checked links of the soft_roce role
  ansible.builtin.set_fact:
    wanted: "{{ soft_roce_links | rdma.fabric.rdma_links(default_state=soft_roce_state, param='soft_roce_links') }}"
"""

RETURN = r"""
_value:
  description: One record per link, with every key set (C(netdev) null for an absent link that gives none).
  type: list
  elements: dict
  contains:
    name: {description: RDMA device name., type: str}
    type: {description: V(rxe) or V(siw)., type: str}
    netdev: {description: The network interface., type: str}
    state: {description: V(present) or V(absent)., type: str}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_link import normalise_links
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError


def rdma_links(links, default_type="rxe", default_state="present", param="links"):
    """Checked links (see DOCUMENTATION)."""
    try:
        return normalise_links(links, default_type, default_state, param=param)
    except RdmaFactsError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    """rdma.fabric software-link filter."""

    def filters(self):
        return {"rdma_links": rdma_links}
