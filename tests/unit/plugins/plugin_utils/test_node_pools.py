# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/node_pools.py: the pool rule, names, per-pool reuse.

Facts are the derived fixture hosts in tests/unit/fixtures/k8s/facts (lab1/lab2 are real
lab captures); copies get other GUIDs, GIDs and addresses the way real twins differ.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma, nccl
from ansible_collections.rdma.fabric.plugins.plugin_utils.node_pools import layout, node_pools, pool_name

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FIXTURES, name + ".json")) as f:
        return json.load(f)


def twin(base, n):
    """The same model as ``base`` on another host: other GUIDs, GIDs, addresses, PCI address, MTU, rate."""
    other = copy.deepcopy(base)
    for dev in other["devices"]:
        dev["node_guid"] = dev["sys_image_guid"] = "0c42:a103:00%02x:0001" % n
        dev["pci_address"] = "0000:%02x:00.0" % (0x80 + n)
        for port in dev["ports"]:
            port["mtu"] = 4200
            port["rate_gbps"] = 200.0
            for gid in port["gids"]:
                gid["gid"] = gid["gid"][:-4] + "%04x" % n
                gid["ip"] = "10.0.0.%d" % n
    return other


def test_twins_share_a_pool_and_identity_does_not_count():
    a, b = facts("roce-a"), twin(facts("roce-a"), 7)
    assert layout(a) == layout(b)
    pools = node_pools({"n1": a, "n2": b, "n3": facts("ib-a")}, ["n1", "n2", "n3"])
    assert [p["hosts"] for p in pools.pools.values()] == [["n1", "n2"], ["n3"]]
    assert pools.host_pool["n1"] == pools.host_pool["n2"] != pools.host_pool["n3"]
    assert pools.missing == []


def test_a_port_down_gid_index_tos_or_vf_makes_another_pool():
    base = facts("roce-gid3")
    down = facts("roce-portdown")
    assert layout(base) != layout(down)
    other_gid = copy.deepcopy(base)
    other_gid["devices"][0]["ports"][0]["roce_v2_ipv4_gid_index"] = 1
    other_tos = copy.deepcopy(base)
    other_tos["devices"][0]["ports"][0]["roce"]["default_tos"] = 0
    pools = node_pools({"a": base, "b": down, "c": other_gid, "d": other_tos, "e": facts("roce-b")})
    assert len(pools.pools) == 5


def test_pool_names_say_the_ports_and_are_stable():
    names = dict((n, pool_name(facts(n))) for n in ("roce-a", "roce-gid3", "ib-a", "lab1", "no-rdma", "roce-b"))
    for name in names.values():
        assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}", name) and len(name) <= 63
    assert names["roce-a"].startswith("roce1-")
    assert names["roce-gid3"].startswith("roce2-")
    assert names["ib-a"].startswith("ib1-")
    assert names["lab1"].startswith("soft1-")
    assert names["no-rdma"].startswith("none-")
    assert names["roce-b"].startswith("roce2-")  # the PF port and the VF's port
    # the same layout always gets the same name, whatever the host
    assert pool_name(twin(facts("roce-a"), 3)) == names["roce-a"]


def test_hosts_without_facts_are_missing_and_order_is_kept():
    pools = node_pools({"z": facts("ib-a"), "a": None, "m": facts("roce-a"), "b": facts("ib-b")}, ["z", "a", "m", "b"])
    assert pools.missing == ["a"]
    assert list(pools.pools) == [pools.host_pool["z"], pools.host_pool["m"]]
    assert pools.pools[pools.host_pool["z"]]["hosts"] == ["z", "b"]
    assert pools.per_host({pools.host_pool["z"]: "IB", pools.host_pool["m"]: "RoCE"}) == {"z": "IB", "m": "RoCE", "b": "IB"}
    summary = pools.summary()
    assert summary[0]["hosts"] == 2 and summary[0]["ports"] == ["mlx5_0/1 InfiniBand ACTIVE"]


def test_per_pool_derivations_equal_per_host_ones():
    """Selectors, NCCL settings and node labels over one node per pool are those over every node."""
    hosts = {}
    for i in range(12):
        hosts["roce%02d" % i] = twin(facts("roce-gid3"), i)
        hosts["ib%02d" % i] = twin(facts("ib-a"), i)
    hosts["down"] = facts("roce-portdown")
    hosts["vf"] = facts("roce-b")
    pools = node_pools(hosts, sorted(hosts))
    reps = pools.representatives()
    assert len(reps) == 4
    assert k8s_rdma.shared_dev_selectors(reps) == k8s_rdma.shared_dev_selectors(hosts)
    assert k8s_rdma.sriov_vf_selectors(reps) == k8s_rdma.sriov_vf_selectors(hosts)
    for kw in ({}, {"gid_index": "omit"}, {"link_layers": ["Ethernet"]}):
        assert nccl.nccl_env(reps, **kw) == nccl.nccl_env(hosts, **kw)
    labels = pools.per_host(dict((name, k8s_rdma.node_labels(f)) for name, f in reps.items()))
    assert labels == dict((h, k8s_rdma.node_labels(f)) for h, f in hosts.items())


def test_bad_input_is_rejected():
    with pytest.raises(RdmaFactsError, match="mapping host -> ansible_facts.rdma"):
        node_pools([facts("roce-a")])
    with pytest.raises(RdmaFactsError, match="host x is not RDMA facts"):
        node_pools({"x": {"devices": "none"}})
