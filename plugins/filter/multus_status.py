# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: multus_status
short_description: Whether a cluster already runs Multus, and what the k8s_rdma_stack role does about it
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Finds the Multus installs among a cluster's DaemonSets (a container or init container of a multus-cni image) and
    decides what the P(rdma.fabric.k8s_rdma_stack#role) role does before it applies its objects. A Multus installed
    by someone else is never replaced; the role's own Multus is applied only when O(enabled) asks for it and no other
    is found; networks with no Multus and no NetworkAttachmentDefinition CRD in the cluster cannot be applied.
options:
  _input:
    description: The cluster's DaemonSets, as C(kubernetes.core.k8s_info) lists them (its C(resources)).
    type: list
    elements: dict
    required: true
  enabled:
    description: Whether the role is asked to install its own Multus (C(k8s_rdma_stack_multus_enabled)).
    type: bool
    default: false
  crd_exists:
    description: Whether the NetworkAttachmentDefinition CRD (C(network-attachment-definitions.k8s.cni.cncf.io)) exists.
    type: bool
    default: false
  networks:
    description: How many NetworkAttachmentDefinitions the role applies.
    type: int
    default: 0
  managed_by:
    description: The C(app.kubernetes.io/managed-by) label value of the objects the role applies.
    type: str
    default: rdma.fabric.k8s_rdma_stack
"""

EXAMPLES = r"""
- name: List the cluster's DaemonSets
  kubernetes.core.k8s_info:
    api_version: apps/v1
    kind: DaemonSet
  register: daemonsets

- name: Say which Multus the networks use
  ansible.builtin.debug:
    msg: "{{ (daemonsets.resources | rdma.fabric.multus_status(crd_exists=true, networks=1)).message }}"
"""

RETURN = r"""
_value:
  description:
    - C(render) (apply the role's own Multus), C(fail) (the networks cannot be applied), C(message) (what was found
      and what the role does) and C(installs) (each Multus DaemonSet found, with C(namespace), C(name), C(image) and
      C(ours), true when the role or its NicClusterPolicy installed it).
  type: dict
  sample: {render: false, fail: false, installs: [{namespace: kube-system, name: kube-multus-ds, ours: false,
           image: ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick}],
           message: "Multus is installed (kube-system/kube-multus-ds (ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick));
             the networks use it."}
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import multus_status as _multus_status


def multus_status(daemonsets, enabled=False, crd_exists=False, networks=0, managed_by="rdma.fabric.k8s_rdma_stack"):
    """What the role does about Multus (see DOCUMENTATION)."""
    if not isinstance(daemonsets, list):
        raise AnsibleFilterError("rdma.fabric.multus_status: the input must be a list of DaemonSets (k8s_info's "
                                 "resources), got %s" % type(daemonsets).__name__)
    return _multus_status(daemonsets, bool(enabled), bool(crd_exists), int(networks), managed_by)


class FilterModule(object):
    """rdma.fabric Multus filter."""

    def filters(self):
        return {"multus_status": multus_status}
