#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: node_pools
short_description: Group hosts into node pools by NIC layout, with per-pool NCCL settings, in one controller task
version_added: 0.2.0
description:
  - Reads the RDMA facts (C(ansible_facts.rdma), from M(rdma.fabric.rdma_device_facts) or the fact cache) of every
    host in O(hosts) once, on the controller, and groups the hosts into node pools. Fleet-wide stages use the pools
    to compute what depends on the NIC layout once per pool instead of once per host.
  - "Pool rule: hosts are in one pool when their RDMA devices agree in name, driver, node type, soft/VF, PCI vendor
    and device ID, NUMA node and parent netdev, and their ports in number, state, link layer, netdev, RoCE v2 IPv4
    GID index and rdma_cm defaults, and (only when one is reported not loaded) in the user-space RDMA modules
    (C(ib_uverbs), C(rdma_ucm)) they lack. GUIDs, GIDs, addresses, PCI addresses, MTU and rate are not compared. A pool's
    name is the port count per kind (C(ib2), C(roce1), C(soft1), C(none)) and 8 hex digits of a hash of the layout,
    stable across runs."
  - With O(nccl) each pool also gets its NCCL environment (the P(rdma.fabric.nccl_env#filter) rules applied to the
    pool's layout); a pool without an ACTIVE RDMA port gets C(NCCL_IB_DISABLE=1) unless the O(nccl) option C(on_no_rdma) is C(fail).
  - With O(k8s) (the P(rdma.fabric.k8s_rdma_stack#role) role's settings) each pool also gets what that role renders
    for it (its nodes' labels, its shared device plugin resources and selectors, its pods' NCCL settings), and
    RV(k8s) joins them with the nodes, so the YAML of the role only renders.
  - This is an action plugin that runs on the controller only; it changes nothing.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  hosts:
    description: Inventory host names, in the order pools are listed (a pool is listed where its first host is).
    type: list
    elements: str
    required: true
  node_name_var:
    description:
      - A host variable that holds the host's name elsewhere (for example its Kubernetes node name). When given,
        C(node_names) maps each host to that variable, else its C(ansible_facts.nodename), else the inventory name.
    type: str
  nccl:
    description:
      - Options of the P(rdma.fabric.nccl_env#filter) filter (C(link_layers), C(devices), C(include_soft),
        C(include_vfs), C(socket_ifname), C(gid_index), C(tc), C(on_no_rdma), C(extra)); each pool gets
        C(nccl_env). C(on_no_rdma) defaults to C(disable) here.
    type: dict
  k8s:
    description:
      - The settings of the P(rdma.fabric.k8s_rdma_stack#role) role, its variables by their full names
        (C(k8s_rdma_stack_shared_devices) and so on), every one the role's defaults define, checked by the role's
        own rules first (an error names the variable and what is allowed). The role passes them; see
        C(docs/k8s_rdma_stack.md) for what each does.
      - Each pool then gets C(labels), C(resources) and C(nccl_pod_env), and the result RV(k8s).
    type: dict
notes:
  - Hosts without C(ansible_facts.rdma) are in no pool; they are listed in RV(missing).
seealso:
  - module: rdma.fabric.rdma_device_facts
  - plugin: rdma.fabric.nccl_env
    plugin_type: filter
"""

EXAMPLES = r"""
- name: Node pools of the RDMA nodes and their NCCL settings
  rdma.fabric.node_pools:
    hosts: "{{ groups['rdma_nodes'] }}"
    nccl: {gid_index: auto}
  register: pools
  run_once: true
  delegate_to: localhost

- name: Write /etc/nccl.conf on every node from its pool's settings
  ansible.builtin.copy:
    dest: /etc/nccl.conf
    mode: "0644"
    content: "{{ pools.pools[pools.host_pool[inventory_hostname]].nccl_env | dict2items
                 | map('join', '=') | join('\n') }}\n"
"""

RETURN = r"""
pools:
  description:
    - The pools by name, in order of their first host. Each has C(name), C(hosts) (the inventory names), C(count),
      C(label) (the first host, with C(and N more) when the pool has several; for messages), C(ports) (one line per
      port of the layout) and C(facts) (the RDMA facts of the pool's first host, for per-pool derivations), and
      C(nccl_env) with O(nccl).
    - With O(k8s) (and C(k8s_rdma_stack_state=present)), also C(labels) (the Kubernetes labels of the pool's
      nodes), C(resources) (the selectors of each shared device plugin resource the pool's ACTIVE
      ports are in) and, with NCCL settings enabled, C(nccl_pod_env) (the NCCL environment of the pool's pods).
  returned: always
  type: dict
  sample: {roce1-4c1d2f0a: {name: roce1-4c1d2f0a, hosts: [gpu-a01, gpu-a02], count: 2, label: gpu-a01 and 1 more,
           ports: [mlx5_0/1 Ethernet ACTIVE], nccl_env: {NCCL_IB_DISABLE: "0", NCCL_IB_HCA: "=mlx5_0:1"}}}
host_pool:
  description: The pool name of every host that has RDMA facts.
  returned: always
  type: dict
  sample: {gpu-a01: roce1-4c1d2f0a, gpu-a02: roce1-4c1d2f0a}
missing:
  description: Hosts without RDMA facts (no pool).
  returned: always
  type: list
  elements: str
node_names:
  description: Each host's name from O(node_name_var), else C(ansible_facts.nodename), else its inventory name.
  returned: when O(node_name_var) is given
  type: dict
k8s:
  description:
    - What the P(rdma.fabric.k8s_rdma_stack#role) role renders, joined over the pools and nodes.
    - C(no_port) says why no node can be given an RDMA device (empty when one can; the rest is then empty);
      C(labels) the labels of each node by its node name (values C(null) to remove them with C(state=absent),
      empty with node labels off); C(shared_dp_config) and C(sriov_dp_config) the device plugins' C(config.json);
      C(nccl_env) the NCCL environment per pool; C(cni_configs) the CNI JSON of each network, in order;
      C(warnings) what the facts cannot give, in sentences (also the task's Ansible warnings); C(pools_text) the
      pools as messages name them.
  returned: when O(k8s) is given
  type: dict
  sample: {no_port: "", labels: {gpu-a01: {rdma.fabric/capable: "true"}}, shared_dp_config: {configList: []},
           sriov_dp_config: {}, nccl_env: {roce1-4c1d2f0a: {NCCL_IB_DISABLE: "0"}}, cni_configs: [], warnings: [],
           pools_text: roce1-4c1d2f0a = gpu-a01 and 1 more}
"""

from ansible.module_utils.basic import AnsibleModule

ARGUMENT_SPEC = dict(
    hosts=dict(type="list", elements="str", required=True),
    node_name_var=dict(type="str"),
    nccl=dict(type="dict"),
    k8s=dict(type="dict"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.node_pools runs on the controller (an action plugin); it cannot run as a module")


if __name__ == "__main__":
    main()
