# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: sriov_dp_selectors
short_description: sriov-network-device-plugin netDevice selectors for the VFs the sriov role made
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Selectors (C(vendors), C(devices), C(drivers), C(pfNames) with C(#first-last) VF ranges, and C(isRdma) when every
    VF has an RDMA device of its own) for a sriov-network-device-plugin resource, from the C(sriov_pfs_current) the
    P(rdma.fabric.sriov#role) role sets on each host (live sysfs, read by M(rdma.fabric.sriov_vfs)).
options:
  _input:
    description: "C({host: sriov_pfs_current}) for several hosts, or one host's C(sriov_pfs_current)."
    type: raw
    required: true
"""

EXAMPLES = r"""
- name: One resource for the VFs of the nodes
  ansible.builtin.set_fact:
    sriov_resource:
      resourceName: sriov_vf
      selectors: "{{ dict(groups.nodes | zip(groups.nodes | map('extract', hostvars, 'sriov_pfs_current'))) | rdma.fabric.sriov_dp_selectors }}"
"""

RETURN = r"""
_value:
  description: The netDevice selectors.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import sriov_pf_vf_selectors


def sriov_dp_selectors(data):
    """Selectors (see DOCUMENTATION)."""
    try:
        return sriov_pf_vf_selectors(data)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.sriov_dp_selectors: %s" % e)


class FilterModule(object):
    """rdma.fabric SR-IOV device plugin selectors."""

    def filters(self):
        return {"sriov_dp_selectors": sriov_dp_selectors}
