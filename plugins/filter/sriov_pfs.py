# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: sriov_pfs
short_description: Check and normalise SR-IOV physical function requests
version_added: 0.2.0
author: rdma.fabric developers
description:
  - The rules of M(rdma.fabric.sriov_vfs) for a PF request, exposed to roles so that YAML never restates them (they
    live in C(plugins/module_utils/common/sriov.py)). Fails, naming O(param), the entry and the allowed values, on bad input.
  - Each returned PF also carries C(boot_commands), the C(ip link set PF vf N ...) argument lists that re-apply its VF
    settings (what the P(rdma.fabric.sriov#role) role's boot unit runs).
options:
  _input:
    description: The PFs, each a dict with C(netdev), C(numvfs), C(vfs) and C(state).
    type: list
    elements: dict
    required: true
  default_state:
    description: State of the PFs that give none.
    type: str
    choices: [present, absent]
    default: present
  param:
    description: The variable's name, for the error message.
    type: str
    default: pfs
"""

EXAMPLES = r"""
- name: Checked PFs of the sriov role
  ansible.builtin.set_fact:
    wanted: "{{ sriov_pfs | rdma.fabric.sriov_pfs(default_state=sriov_state, param='sriov_pfs') }}"
"""

RETURN = r"""
_value:
  description: One record per PF with every key set (the VFs, each with only the settings it gives).
  type: list
  elements: dict
  contains:
    netdev: {description: The PF's netdev., type: str}
    numvfs: {description: Number of VFs (0 when absent)., type: int}
    vfs: {description: "Per-VF settings (index; those of mac, trust, spoofchk, link_state given; a key left out = leave).", type: list}
    state: {description: V(present) or V(absent)., type: str}
    boot_commands: {description: The C(ip link set) argument lists for the VF settings., type: list}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.sriov import SriovError, boot_commands, normalise_pfs


def sriov_pfs(pfs, default_state="present", param="pfs"):
    """Checked PFs (see DOCUMENTATION)."""
    try:
        # A VF keeps only the settings it gives: the module refuses an explicit null where it has choices (link_state).
        return [dict(pf, vfs=[dict((k, v) for k, v in vf.items() if v is not None) for vf in pf["vfs"]],
                     boot_commands=boot_commands(pf))
                for pf in normalise_pfs(pfs, default_state, param=param)]
    except SriovError as e:
        raise AnsibleFilterError(str(e))


class FilterModule(object):
    """rdma.fabric SR-IOV filter."""

    def filters(self):
        return {"sriov_pfs": sriov_pfs}
