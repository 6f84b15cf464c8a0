#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: k8s_manifests
short_description: Write Kubernetes objects as YAML files for GitOps, in one controller task
version_added: 0.2.0
description:
  - Writes every object of O(objects) as one YAML file in O(dest), every node of O(node_labels) as a Node
    label patch in O(dest)C(/node-labels/), a C(kustomization.yaml) listing the objects (not the node patches; a
    GitOps tool must never own or prune Node objects) and the O(files) given as text. Used by the
    C(rdma.fabric.k8s_rdma_stack) role.
  - "File names come from the object's identity, not its position: C(<kind>-[<namespace>-]<name>.yaml) with the
    kind in lower case, C(node-labels/node-<name>.yaml) for nodes, so adding a node or an object renames nothing.
    Two objects that would share a file name are an error naming both."
  - Every file starts with O(header) (O(kustomization_header) for C(kustomization.yaml)), both beginning with
    O(marker). A file is written only when its content differs, atomically (a temporary file in the same folder,
    then renamed). Files in O(dest) and O(dest)C(/node-labels/) whose first line starts with O(marker) and that
    are not wanted any more are removed; no other file is touched.
  - With O(state=absent) every file carrying the marker is removed (the folders stay).
  - Runs on the controller (an action plugin); the files are written where C(ansible-playbook) runs.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
    details: One diff per written or removed file.
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  dest:
    description: Folder of the files; created (mode C(0755), with C(node-labels/)) when missing.
    type: path
    required: true
  objects:
    description: Kubernetes objects (each with C(apiVersion), C(kind), C(metadata.name)), in apply order.
    type: list
    elements: dict
    default: []
  node_labels:
    description: Node name mapped to its labels; each becomes a C(v1) Node object with only C(metadata.labels).
    type: dict
    default: {}
  files:
    description: Extra files of O(dest), file name mapped to the whole text (which must begin with O(marker)).
    type: dict
    default: {}
  kustomization:
    description: Keys merged into C(kustomization.yaml) after C(apiVersion), C(kind) and C(resources) (for example C(helmCharts)).
    type: dict
    default: {}
  header:
    description: First line of every object file (a YAML comment).
    type: str
    default: "# Rendered by rdma.fabric.k8s_rdma_stack. Do not edit."
  kustomization_header:
    description: The comment lines at the top of C(kustomization.yaml).
    type: str
    default: "# Rendered by rdma.fabric.k8s_rdma_stack."
  marker:
    description: The text every file of this task begins with; how files written earlier are found again for pruning.
    type: str
    default: "# Rendered by rdma.fabric.k8s_rdma_stack"
  state:
    description: C(present) writes the files and removes unwanted ones; C(absent) removes every file with the marker.
    type: str
    choices: [present, absent]
    default: present
  mode:
    description: File mode of the written files.
    type: str
    default: "0644"
seealso:
  - module: rdma.fabric.node_pools
"""

EXAMPLES = r"""
- name: Render the objects for Argo CD
  rdma.fabric.k8s_manifests:
    dest: /srv/gitops/clusters/prod/rdma
    objects: "{{ objects }}"
    node_labels: {gpu-a01: {rdma.fabric/capable: "true"}}
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
files:
  description: Every wanted file, relative to O(dest), objects in order, then node patches, then the others.
  returned: always
  type: list
  elements: str
  sample: [daemonset-kube-system-rdma-shared-dp-ds.yaml, node-labels/node-gpu-a01.yaml, kustomization.yaml]
written:
  description: Files written (or, in check mode, that would be), relative to O(dest).
  returned: always
  type: list
  elements: str
removed:
  description: Files removed (or, in check mode, that would be), relative to O(dest).
  returned: always
  type: list
  elements: str
unchanged:
  description: How many wanted files already had the right content.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

ARGUMENT_SPEC = dict(
    dest=dict(type="path", required=True),
    objects=dict(type="list", elements="dict", default=[]),
    node_labels=dict(type="dict", default={}),
    files=dict(type="dict", default={}),
    kustomization=dict(type="dict", default={}),
    header=dict(type="str", default="# Rendered by rdma.fabric.k8s_rdma_stack. Do not edit."),
    kustomization_header=dict(type="str", default="# Rendered by rdma.fabric.k8s_rdma_stack."),
    marker=dict(type="str", default="# Rendered by rdma.fabric.k8s_rdma_stack"),
    state=dict(type="str", choices=["present", "absent"], default="present"),
    mode=dict(type="str", default="0644"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.k8s_manifests runs on the controller (an action plugin); it cannot run as a module")


if __name__ == "__main__":
    main()
