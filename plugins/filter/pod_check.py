# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: pod_check
short_description: Whether the rendered device plugins advertise every extended resource a workload asks for
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Takes a Pod, a Deployment (or any object with C(spec.template)) or a KubeRay RayCluster (head and every worker
    group), the device-plugin configurations the C(rdma.fabric.k8s_rdma_stack) role rendered (its ConfigMaps or
    NicClusterPolicy, or the config dicts), and the RDMA facts of each node pool, and says per pool whether every
    extended resource the containers request or limit is advertised there, and why not.
  - A resource is advertised on a node when a config entry has its name (C(<resourcePrefix>/<resourceName>), prefix
    C(rdma) for the RDMA shared device plugin and C(intel.com) for the SR-IOV one unless set) and one of the node's
    ACTIVE devices matches every selector the entry gives (the plugins' AND between selectors, OR inside one).
    Soft devices (rxe, siw) never match the shared device plugin, which finds devices through their PCI function.
  - A device is in at most one resource of the RDMA shared device plugin (the C(rdma.fabric.k8s_rdma_stack) role
    refuses overlapping selectors), so when a pool has fewer ACTIVE devices the plugin can hand out (PCI functions,
    not soft devices) than the RDMA shared resources a pod asks for, the reason of each missing one says so, naming
    the pool, its devices and the soft devices it has. A pool with one RDMA port, for example, gives
    C(rdma_shared_device_a) only with the role's default.
  - C(nvidia.com/gpu*) resources come from the NVIDIA GPU Operator's device plugin, which the role does not render;
    they are reported as C(not_checked), never as missing.
  - Logic in C(plugins/plugin_utils/pod_check.py); the playbook C(playbooks/check_pod.yml) runs it on a spec file and
    a rendered output folder.
  - Input of the wrong shape (C(containers) that is not a list, a number as a resource name, a worker group that is not
    a mapping) fails naming the document and the field; YAML text that does not parse fails naming its file.
options:
  _input:
    description:
      - The workload object, or a list of objects (the documents of a YAML file), or the YAML text of the file (then
        O(workload_file) names it in errors).
    type: raw
    required: true
  configs:
    description:
      - Rendered objects (ConfigMaps, NicClusterPolicy; other kinds are ignored) or config dicts, or a mapping of file
        names to their YAML text (every value a string), parsed here so that a file that is not YAML is named.
    type: raw
    required: true
  pools:
    description: Node pool name -> the RDMA facts of one of its hosts (or a list of its hosts' facts).
    type: dict
    required: true
  workload_file:
    description: The name of the workload's file, for the errors (with YAML text as input).
    type: str
"""

EXAMPLES = r"""
- name: Check a RayCluster against the rendered manifests, one pool per host
  ansible.builtin.debug:
    msg: "{{ lookup('ansible.builtin.file', 'raycluster.yaml') | from_yaml_all | list
             | rdma.fabric.pod_check(rendered_docs, dict(groups.rdma_nodes | zip(groups.rdma_nodes
                 | map('extract', hostvars, ['ansible_facts', 'rdma'])))) }}"
"""

RETURN = r"""
_value:
  description: The verdict.
  type: dict
  contains:
    ok: {description: Every pool advertises every checked resource., type: bool}
    requests: {description: "Every extended resource asked for: template, container, resource, count.", type: list}
    advertised: {description: The resources the rendered configs advertise., type: list}
    pools:
      description: "Per pool: ok and resources, each resource with status (ok, missing, not_checked), reason, devices."
      type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.pod_check import check


def pod_check(workload, configs, pools, workload_file=None):
    """See DOCUMENTATION."""
    try:
        return check(workload, configs, pools, workload_file=workload_file)
    except RdmaFactsError as e:
        raise AnsibleFilterError("rdma.fabric.pod_check: %s" % e)


class FilterModule(object):
    """rdma.fabric pod check filter."""

    def filters(self):
        return {"pod_check": pod_check}
