# -*- coding: utf-8 -*-
"""The example inventory and the playbooks, with real ansible-inventory / ansible-playbook runs.

* inventories/example parses into the documented groups, with every role's
  group_vars applied;
* the `constructed` source groups hosts by RDMA facts read from a jsonfile
  fact cache. The cache is filled the way facts.yml fills it, by Ansible
  itself: a play stores REAL lab facts (tests/unit/fixtures/fabric) as
  cacheable facts of two example hosts (set_fact contacts no host);
* the playbooks pass `ansible-playbook --syntax-check`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
COLLECTIONS_PATH = os.path.abspath(os.path.join(COLLECTION, "..", "..", ".."))
EXAMPLE = os.path.join(COLLECTION, "inventories", "example")
BIN = os.path.dirname(sys.executable)
FABRIC = os.path.join(HERE, "..", "fixtures", "fabric")


def run(tool, args, cache_dir, **extra_env):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH, ANSIBLE_CONFIG=os.path.join(COLLECTION, "ansible.cfg"),
               ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache_dir),
               ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_LOCALHOST_WARNING="false", ANSIBLE_NOCOLOR="1")
    env.update(extra_env)
    proc = subprocess.run([os.path.join(BIN, tool)] + args, cwd=COLLECTION, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def groups_of(listing):
    data = json.loads(listing)
    out = {}

    def walk(group):
        members = set(data.get(group, {}).get("hosts", []))
        for child in data.get(group, {}).get("children", []):
            members |= walk(child)
        out[group] = members
        return members

    walk("all")
    return out, data["_meta"]["hostvars"]


def test_example_layout_and_group_vars(tmp_path):
    groups, hostvars = groups_of(run("ansible-inventory", ["-i", EXAMPLE, "--list"], tmp_path))
    assert groups["gpu_nodes"] == {"gpu-a01", "gpu-a02", "gpu-a03", "gpu-a04"}
    assert groups["storage_nodes"] == {"stor-01", "stor-02"}
    assert groups["rdma_nodes"] == groups["gpu_nodes"] | groups["storage_nodes"]
    assert groups["k8s_workers"] == groups["gpu_nodes"]
    assert groups["k8s_cluster"] == groups["gpu_nodes"] | {"cp-01", "cp-02", "cp-03"}
    assert groups["k8s_rdma_controller"] == {"localhost"}
    # every role's main settings reach the hosts
    gpu = hostvars["gpu-a01"]
    assert gpu["mofed_flavor"] == "doca" and gpu["lossless_ethernet_pfc"] == [3]
    assert gpu["gpudirect_acs"] == "disable" and gpu["rdma_validate_device"] == "mlx5_0"
    assert gpu["rdma_validate_min_bw_fraction"] == 0.6
    assert hostvars["stor-01"]["lossless_ethernet_ports"][0] == {"netdev": "ens2f0np0", "mtu": 4200}
    assert hostvars["stor-02"]["rdma_validate_device"] == "mlx5_1"
    assert hostvars["localhost"]["k8s_rdma_stack_node_group"] == "gpu_nodes"
    assert hostvars["dev-01"]["soft_roce_links"] == [{"name": "rxe0", "netdev": "ens4", "type": "rxe"}]
    # no facts cached yet: no fact-based groups
    assert not groups.get("roce_v2_ready") and not groups.get("gpudirect_ready")


def test_constructed_groups_from_the_fact_cache(tmp_path):
    with open(os.path.join(FABRIC, "lab_lab1_facts.json")) as f:
        lab1 = json.load(f)
    ready = copy.deepcopy(lab1["gpudirect"])
    ready.update(ready=True, reasons=[])
    down = copy.deepcopy(lab1["rdma"])
    down["devices"][0]["ports"][0].update(state="DOWN", roce_v2_ipv4_gid_index=None)
    facts = {"gpu-a01": {"rdma": lab1["rdma"], "gpudirect": ready},
             "stor-01": {"rdma": down, "gpudirect": lab1["gpudirect"]}}
    (tmp_path / "facts.json").write_text(json.dumps(facts))
    playbook = tmp_path / "cache.yml"
    playbook.write_text(u"""---
- name: Store facts in the cache the way facts.yml does
  hosts: gpu-a01,stor-01
  gather_facts: false
  tasks:
    - name: Cacheable facts (set_fact contacts no host)
      ansible.builtin.set_fact:
        rdma: "{{ (lookup('ansible.builtin.file', facts_file) | from_json)[inventory_hostname].rdma }}"
        gpudirect: "{{ (lookup('ansible.builtin.file', facts_file) | from_json)[inventory_hostname].gpudirect }}"
        cacheable: true
""")
    cache = tmp_path / "cache"
    run("ansible-playbook", ["-i", EXAMPLE, str(playbook), "-e", "facts_file=%s" % (tmp_path / "facts.json")], cache)
    assert sorted(os.listdir(str(cache)))
    groups, hostvars = groups_of(run("ansible-inventory", ["-i", EXAMPLE, "--list"], cache))
    assert groups["rdma_link_layer_ethernet"] == {"gpu-a01", "stor-01"}
    assert groups["roce_v2_ready"] == {"gpu-a01"}
    assert groups["gpudirect_ready"] == {"gpu-a01"}
    assert groups["rdma_soft_only"] == {"gpu-a01", "stor-01"}
    assert groups["rdma_stack_inbox"] == {"gpu-a01", "stor-01"}
    assert not groups.get("rdma_link_layer_infiniband")
    assert hostvars["gpu-a01"]["rdma_roce_v2_gid_indexes"] == [1]
    assert hostvars["stor-01"]["rdma_roce_v2_gid_indexes"] == []
    # one group per node pool: the port down puts stor-01 in another pool than gpu-a01
    # (ansible-inventory --list writes a string made from facts as {"__ansible_unsafe": text})
    pools = dict((h, hostvars[h]["rdma_node_pool"].get("__ansible_unsafe") if isinstance(hostvars[h]["rdma_node_pool"], dict)
                  else hostvars[h]["rdma_node_pool"]) for h in ("gpu-a01", "stor-01"))
    assert pools["gpu-a01"].startswith("soft1-") and pools["stor-01"].startswith("soft1-")
    assert pools["gpu-a01"] != pools["stor-01"]
    for host, pool in pools.items():
        assert groups["rdma_pool_" + pool.replace("-", "_")] == {host}


@pytest.mark.parametrize("playbook", ["site.yml", "facts.yml", "validate.yml", "report.yml"])
def test_playbooks_syntax(tmp_path, playbook):
    # site.yml has a play for a group that group_by makes at run time (rdma_fabric_gpu_hosts): no such group
    # at syntax-check time, which ansible-test's environment (ANSIBLE_HOST_PATTERN_MISMATCH=error) would fail.
    out = run("ansible-playbook", ["-i", EXAMPLE, "--syntax-check", os.path.join(COLLECTION, "playbooks", playbook)],
              tmp_path, ANSIBLE_HOST_PATTERN_MISMATCH="warning")
    assert "playbook: " in out
