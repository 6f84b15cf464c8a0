# -*- coding: utf-8 -*-
"""The pod-side NCCL rule (plugin_utils nccl.pod_nccl_env, issue 19): one node pool's facts -> the NCCL_* of its pods,
and the Multus network interface rule (k8s_rdma.nccl_network_interface) the role and the nccl_pod_env filter use."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import nccl_network_interface
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import nccl_env, pod_nccl_env

FACTS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FACTS_DIR, name + ".json")) as f:
        return json.load(f)


def test_roce_pool_gets_hca_gid_tc_and_the_pod_interface():
    assert pod_nccl_env(facts("roce-a")) == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5",
                                             "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=eth0"}
    # the host rule names the host netdev, which does not exist in a pod; the rest is the same
    host = nccl_env(facts("roce-a"))
    assert host["NCCL_SOCKET_IFNAME"] == "=ens1f0"
    assert dict(host, NCCL_SOCKET_IFNAME="=eth0") == pod_nccl_env(facts("roce-a"))


def test_infiniband_pool_has_no_roce_settings():
    assert pod_nccl_env(facts("ib-a")) == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=eth0"}


def test_pool_without_rdma_disables_ib_with_an_empty_hca():
    expected = {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "", "NCCL_SOCKET_IFNAME": "=eth0"}
    assert pod_nccl_env(facts("no-rdma")) == expected
    # soft devices only count when opted in; a Multus interface is for pools with RDMA only
    assert pod_nccl_env(facts("lab1"), rdma_pod_interface="net1") == expected
    assert pod_nccl_env(facts("lab1"), include_soft=True, rdma_pod_interface="net1") == {
        "NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=rxe0:1", "NCCL_IB_GID_INDEX": "1", "NCCL_SOCKET_IFNAME": "=net1"}


def test_pool_gid_index_is_omitted_when_its_ports_disagree():
    gid = facts("roce-gid3")
    assert pod_nccl_env(gid)["NCCL_IB_GID_INDEX"] == "3"
    gid["devices"][1]["ports"][0]["roce_v2_ipv4_gid_index"] = 7
    env = pod_nccl_env(gid)
    assert "NCCL_IB_GID_INDEX" not in env
    assert env["NCCL_IB_ROCE_VERSION_NUM"] == "2" and env["NCCL_IB_ADDR_FAMILY"] == "AF_INET"


def test_multus_interface_override_and_extra():
    assert pod_nccl_env(facts("roce-gid3"), rdma_pod_interface="net1")["NCCL_SOCKET_IFNAME"] == "=net1"
    assert pod_nccl_env(facts("roce-gid3"), pod_interface="ens3", rdma_pod_interface=None)["NCCL_SOCKET_IFNAME"] == "=ens3"
    # socket_ifname wins over both, on pools with and without RDMA, verbatim
    assert pod_nccl_env(facts("roce-gid3"), rdma_pod_interface="net1", socket_ifname="^lo")["NCCL_SOCKET_IFNAME"] == "^lo"
    assert pod_nccl_env(facts("no-rdma"), socket_ifname="=net2")["NCCL_SOCKET_IFNAME"] == "=net2"
    env = pod_nccl_env(facts("roce-a"), gid_index="omit", tc=0, extra={"NCCL_DEBUG": "INFO", "NCCL_IB_TC": None})
    assert env == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_ROCE_VERSION_NUM": "2",
                   "NCCL_IB_ADDR_FAMILY": "AF_INET", "NCCL_SOCKET_IFNAME": "=eth0", "NCCL_DEBUG": "INFO"}


def test_host_network_pods_use_the_host_netdevs():
    assert pod_nccl_env(facts("roce-gid3"), host_network=True) == nccl_env(facts("roce-gid3"))
    assert pod_nccl_env(facts("roce-gid3"), host_network=True)["NCCL_SOCKET_IFNAME"] == "=ens1f0,ens1f1"
    assert pod_nccl_env(facts("no-rdma"), host_network=True) == {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": ""}
    assert pod_nccl_env(facts("no-rdma"), host_network=True, socket_ifname="=bond0")["NCCL_SOCKET_IFNAME"] == "=bond0"


@pytest.mark.parametrize("kwargs, message", [
    ({"pod_interface": ""}, "pod_interface must be a network interface name inside the pod"),
    ({"pod_interface": "a-very-long-ifname"}, "pod_interface must be a network interface name"),
    ({"rdma_pod_interface": "net 1"}, "rdma_pod_interface must be a network interface name"),
    ({"extra": ["NCCL_DEBUG"]}, "extra must be a dict"),
    ({"gid_index": -1}, "gid_index must be one of auto, omit"),
])
def test_bad_options_are_rejected(kwargs, message):
    with pytest.raises(RdmaFactsError, match=message):
        pod_nccl_env(facts("roce-a"), **kwargs)


def test_one_pool_at_a_time():
    with pytest.raises(RdmaFactsError, match="per node pool: give one host's facts, got 2"):
        pod_nccl_env([facts("roce-a"), facts("ib-a")])


NETS = [{"name": "rdma-net-a", "namespace": "training", "type": "macvlan", "master": "ens1f0", "ipam": {"type": "whereabouts"}},
        {"name": "rdma-net-b", "type": "macvlan", "master": "ens1f1", "pod_interface": "rdma1", "ipam": {"type": "whereabouts"}}]


def test_network_interface_rule():
    assert nccl_network_interface(NETS, "") is None
    assert nccl_network_interface(NETS, None) is None
    assert nccl_network_interface(NETS, "rdma-net-a") == "net1"  # Multus' name of the first attachment
    assert nccl_network_interface(NETS, "rdma-net-b") == "rdma1"
    with pytest.raises(RdmaFactsError, match=r"'rdma-net-c' is not the name of a network in k8s_rdma_stack_networks "
                                             r"\(networks: rdma-net-a, rdma-net-b\)"):
        nccl_network_interface(NETS, "rdma-net-c")
    twice = NETS + [dict(NETS[0], namespace="default", pod_interface="net2")]
    with pytest.raises(RdmaFactsError, match="the networks named 'rdma-net-a' give different pod_interface values"):
        nccl_network_interface(twice, "rdma-net-a")
