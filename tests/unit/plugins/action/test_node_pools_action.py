# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.node_pools action.

``pool_result`` (the action's return values) on the derived fixture hosts of
tests/unit/fixtures/k8s/facts, and the action itself run by ansible-playbook over an
inventory of those hosts, reading their hostvars. The first play is a TEST DOUBLE for
rdma.fabric.rdma_device_facts: it loads each fixture host's ansible_facts.rdma from its JSON
file, because the fixture hosts do not exist.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.action.node_pools import pool_result
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import role_yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FACTS = os.path.join(HERE, "..", "..", "fixtures", "k8s", "facts")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))


def facts(name):
    with open(os.path.join(FACTS, name + ".json")) as f:
        return json.load(f)


def test_pool_result_labels_ports_and_nccl_per_pool():
    hosts = ["ib-a", "ib-b", "roce-a", "cpu-1"]
    data = {"ib-a": facts("ib-a"), "ib-b": facts("ib-b"), "roce-a": facts("roce-a"), "cpu-1": facts("no-rdma")}
    res = pool_result(hosts, data, nccl={})
    assert res["changed"] is False and res["missing"] == []
    pools = list(res["pools"].values())
    assert [p["hosts"] for p in pools] == [["ib-a", "ib-b"], ["roce-a"], ["cpu-1"]]
    assert [p["label"] for p in pools] == ["ib-a and 1 more", "roce-a", "cpu-1"]
    assert pools[0]["ports"] == ["mlx5_0/1 InfiniBand ACTIVE"]
    assert pools[0]["nccl_env"] == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=ib0"}
    assert pools[1]["nccl_env"]["NCCL_IB_GID_INDEX"] == "5" and pools[1]["nccl_env"]["NCCL_IB_TC"] == "106"
    # a pool without RDMA gets NCCL over sockets, not an error
    assert pools[2]["nccl_env"] == {"NCCL_IB_DISABLE": "1"}
    assert res["host_pool"]["ib-b"] == pools[0]["name"]


def test_pool_result_errors_name_the_option_and_pool():
    data = {"cpu-1": facts("no-rdma")}
    with pytest.raises(RdmaFactsError, match="nccl: unknown option.s. colour; allowed: link_layers"):
        pool_result(["cpu-1"], data, nccl={"colour": 1})
    with pytest.raises(RdmaFactsError, match="nccl: pool none-[0-9a-f]{8} .cpu-1.: no ACTIVE RDMA port selected"):
        pool_result(["cpu-1"], data, nccl={"on_no_rdma": "fail"})


@pytest.mark.parametrize("nccl, words", [
    # a key that is no environment name would add a line to nccl.conf or a ConfigMap's env
    ({"extra": {"NCCL_X\nLD_PRELOAD": "/tmp/x.so"}}, "nccl: extra: the key 'NCCL_X\\nLD_PRELOAD' is not allowed"),
    ({"extra": {"X=$(reboot)": 1}}, "nccl: extra: the key 'X=$(reboot)' is not allowed"),
    ({"extra": {"NCCL_DEBUG": "INFO\nLD_PRELOAD=/tmp/x.so"}}, "nccl: extra[NCCL_DEBUG]: "),
    ({"socket_ifname": "eth0\nX=1"}, "nccl: socket_ifname must be NCCL_SOCKET_IFNAME text"),
    ({"tc": 300}, "nccl: tc must be an integer 0-255"),
    ({"on_no_rdma": "ignore"}, "nccl.on_no_rdma: 'ignore' is not allowed; allowed: fail, disable"),
])
def test_pool_result_checks_every_nccl_option_before_any_pool(nccl, words):
    """Checked even when no host has facts (no pool to derive settings for)."""
    with pytest.raises(RdmaFactsError) as e:
        pool_result(["cpu-1"], {"cpu-1": None}, nccl=nccl)
    assert str(e.value).startswith(words), str(e.value)


PLAYBOOK = """
- name: Load the fixture RDMA facts (TEST DOUBLE for rdma_device_facts)
  hosts: nodes
  gather_facts: false
  tasks:
    - name: Set ansible_facts.rdma from the fixture file
      ansible.builtin.set_fact:
        rdma: "{{ lookup('ansible.builtin.file', rdma_fixture) | from_json }}"
        cacheable: true
      when: rdma_fixture is defined

- name: Pools
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Group the nodes
      rdma.fabric.node_pools:
        hosts: "{{ groups['nodes'] }}"
        node_name_var: node_name
        nccl: {gid_index: omit}
      register: pools
    - name: Keep the result
      ansible.builtin.copy:
        content: "{{ pools | to_json }}"
        dest: "{{ out }}"
        mode: "0644"
"""


def run_playbook(tmp_path, hosts, playbook=PLAYBOOK):
    inventory = {"all": {"hosts": {"localhost": {"ansible_connection": "local",
                                                 "ansible_python_interpreter": sys.executable}},
                         "children": {"nodes": {"hosts": hosts, "vars": {"ansible_connection": "local"}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text("---" + playbook)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    out = tmp_path / "result.json"
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "inventory.yml"), "-e", "out=%s" % out, str(tmp_path / "play.yml")],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    return proc, (json.loads(out.read_text()) if out.exists() else None)


def test_action_reads_hostvars_once_per_host(tmp_path):
    hosts = {
        "gpu-1": {"rdma_fixture": os.path.join(FACTS, "roce-gid3.json"), "node_name": "gpu-1.k8s.example"},
        "gpu-2": {"rdma_fixture": os.path.join(FACTS, "roce-gid3.json"), "node_name": "{{ inventory_hostname }}.tmpl"},
        "ib-1": {"rdma_fixture": os.path.join(FACTS, "ib-a.json")},
        "bare": {},
    }
    proc, res = run_playbook(tmp_path, hosts)
    assert proc.returncode == 0, proc.stdout[-4000:]
    assert res["missing"] == ["bare"]
    assert res["node_names"] == {"gpu-1": "gpu-1.k8s.example", "gpu-2": "gpu-2.tmpl", "ib-1": "ib-1", "bare": "bare"}
    pools = list(res["pools"].values())
    assert [p["hosts"] for p in pools] == [["gpu-1", "gpu-2"], ["ib-1"]]
    assert pools[0]["nccl_env"] == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1",
                                    "NCCL_IB_ROCE_VERSION_NUM": "2", "NCCL_IB_ADDR_FAMILY": "AF_INET",
                                    "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=ens1f0,ens1f1"}


def test_action_rejects_hosts_not_in_the_inventory(tmp_path):
    proc, res = run_playbook(tmp_path, {"n1": {}}, PLAYBOOK.replace("hosts: \"{{ groups['nodes'] }}\"", "hosts: [n1, ghost]"))
    assert proc.returncode != 0 and res is None
    assert "hosts: not in the inventory: ghost" in proc.stdout, proc.stdout[-3000:]


# --- option k8s: what the k8s_rdma_stack role renders, joined in Python (issue 28) ----------------------------

def role_defaults(**overrides):
    """The k8s_rdma_stack role's settings as the role passes them: its defaults by full name, then overrides."""
    settings = role_yaml("k8s_rdma_stack", "defaults", "main.yml")
    settings.update(("k8s_rdma_stack_" + k, v) for k, v in overrides.items())
    return settings


def test_k8s_settings_per_pool_equal_the_per_node_filters():
    """Each pool's labels, resources and NCCL settings; each node gets its pool's labels, equal to what the
    filters give over that node's own facts (the rules the role used in Jinja before)."""
    from ansible_collections.rdma.fabric.plugins.filter.nccl_pod_env import nccl_pod_env
    from ansible_collections.rdma.fabric.plugins.filter.rdma_node_labels import rdma_node_labels

    hosts = ["gpu-7", "gpu-8", "roce-a", "cpu-1"]
    data = {"gpu-7": facts("roce-gid3"), "gpu-8": facts("roce-gid3"), "roce-a": facts("roce-a"), "cpu-1": facts("no-rdma")}
    names = {"gpu-7": "gpu-7.k8s", "gpu-8": "gpu-8.k8s", "roce-a": "roce-a", "cpu-1": "cpu-1"}
    res = pool_result(hosts, data, node_names=names, k8s=role_defaults())
    k8s = res["k8s"]
    assert k8s["no_port"] == ""
    for host in hosts:
        pool = res["pools"][res["host_pool"][host]]
        assert k8s["labels"][names[host]] == pool["labels"] == rdma_node_labels(data[host], nccl_pool=pool["name"])
        assert pool["nccl_pod_env"] == nccl_pod_env(data[host]) == k8s["nccl_env"][pool["name"]]
    gpu = res["pools"][res["host_pool"]["gpu-7"]]
    assert gpu["resources"] == {
        "rdma_shared_device_a": {"vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0"],
                                 "linkTypes": ["ether"]},
        "rdma_shared_device_b": {"vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f1"],
                                 "linkTypes": ["ether"]}}
    assert res["pools"][res["host_pool"]["cpu-1"]]["resources"] == {}
    names = [e["resourceName"] for e in k8s["shared_dp_config"]["configList"]]
    assert names == ["rdma_shared_device_a", "rdma_shared_device_b"]
    assert k8s["warnings"][0] == ("node(s) cpu-1 have no ACTIVE RDMA port; they are labelled rdma.fabric/capable=false "
                                  "and get no RDMA device plugin pod.")
    # roce-a's pool has one port: no rdma_shared_device_b there (cpu-1's pool, without ports, is not named again)
    assert len(k8s["warnings"]) == 2 and k8s["warnings"][1].startswith(
        "the node pool of roce-a gives no ACTIVE RDMA port to rdma/rdma_shared_device_b")
    assert res["warnings"] == ["k8s_rdma_stack: %s" % w for w in k8s["warnings"][:1]] + [
        "k8s_rdma_stack: %s." % k8s["warnings"][1]]
    assert k8s["pools_text"] == "; ".join("%s = %s" % (p["name"], p["label"]) for p in res["pools"].values())


def test_k8s_settings_absent_and_no_port_and_bad_settings():
    data = {"cpu-1": facts("no-rdma"), "roce-a": facts("roce-a")}
    res = pool_result(["cpu-1", "roce-a"], data, k8s=role_defaults(state="absent"))
    assert res["k8s"]["labels"]["cpu-1"] == {"rdma.fabric/capable": None, "rdma.fabric/link-layer": None,
                                             "rdma.fabric/roce-v2-gid-index": None, "rdma.fabric/nccl-pool": None}
    assert set(res["k8s"]["nccl_env"]) == set(res["pools"]) and res["k8s"]["shared_dp_config"] == {"configList": []}
    res = pool_result(["cpu-1"], {"cpu-1": facts("no-rdma")}, k8s=role_defaults())
    assert res["k8s"]["no_port"] == "no ACTIVE RDMA port to derive device plugin selectors from: cpu-1: no RDMA devices"
    assert res["k8s"]["labels"] == {}
    with pytest.raises(RdmaFactsError, match="k8s: k8s_rdma_stack_namespace: 'Kube System' is not allowed"):
        pool_result(["cpu-1"], data, k8s=role_defaults(namespace="Kube System"))
    settings = role_defaults()
    del settings["k8s_rdma_stack_shared_devices"]
    with pytest.raises(RdmaFactsError, match="k8s: missing k8s_rdma_stack_shared_devices "):
        pool_result(["cpu-1"], data, k8s=settings)
