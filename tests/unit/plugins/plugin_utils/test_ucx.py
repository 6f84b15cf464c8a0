# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/ucx.py: the UCX/MPI environment from one host's RDMA facts.

Facts are the fixture hosts in tests/unit/fixtures/k8s/facts: the seed's two NIC types (roce-a: RoCE mlx5,
ib-a: InfiniBand mlx5; derived trees, see the README there) and the lab's Soft-RoCE VMs (lab1/lab2, gathered
by rdma_device_facts on the lab). There is no iWARP capture: the iWARP host is a clearly named derived double
(lab1 with rxe0 turned into siw0, node type RNIC), as in test_rdma_schema.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import nccl_env
from ansible_collections.rdma.fabric.plugins.plugin_utils.ucx import ucx_env

FACTS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FACTS_DIR, name + ".json")) as f:
        return json.load(f)


def iwarp_double():
    """Test double: lab1's facts with rxe0 turned into a Soft-iWARP device (node type RNIC, driver siw)."""
    data = copy.deepcopy(facts("lab1"))
    data["devices"][0].update(name="siw0", node_type="RNIC", driver="siw")
    return data


def test_roce_mlx5_host():
    assert ucx_env(facts("roce-a")) == {
        "UCX_NET_DEVICES": "mlx5_0:1",
        "UCX_TLS": "rc,ud,sm,self",
        "UCX_IB_GID_INDEX": "5",
        "UCX_IB_TRAFFIC_CLASS": "106",
    }


def test_infiniband_host_has_no_roce_settings():
    assert ucx_env(facts("ib-a")) == {"UCX_NET_DEVICES": "mlx5_0:1", "UCX_TLS": "rc,ud,sm,self"}


def test_lab_rxe_host():
    # rxe0's facts: RoCE v2 IPv4 GID at index 1, rdma_cm default ToS 0 (no lossless profile on the lab's virtio).
    # Soft-RoCE: UCX's UD destination-GID check drops every packet rxe delivers (the lab's workload scenario)
    assert ucx_env(facts("lab1")) == {"UCX_NET_DEVICES": "rxe0:1", "UCX_TLS": "rc,ud,sm,self", "UCX_IB_GID_INDEX": "1",
                                      "UCX_UD_ETH_DGID_CHECK": "n"}


def test_the_qos_tos_wins_and_matches_nccl():
    env = ucx_env(facts("lab1"), tc=106)
    assert env["UCX_IB_TRAFFIC_CLASS"] == "106"
    assert nccl_env(facts("lab1"), include_soft=True, tc=106)["NCCL_IB_TC"] == env["UCX_IB_TRAFFIC_CLASS"]
    # The same ports and GID index as the NCCL settings of the same host.
    nccl = nccl_env(facts("roce-gid3"))
    ucx = ucx_env(facts("roce-gid3"))
    assert nccl["NCCL_IB_HCA"] == "=" + ucx["UCX_NET_DEVICES"] == "=mlx5_0:1,mlx5_1:1"
    assert nccl["NCCL_IB_GID_INDEX"] == ucx["UCX_IB_GID_INDEX"] == "3"


def test_gid_index_left_out_when_ports_disagree():
    data = facts("roce-gid3")
    data["devices"][1]["ports"][0]["roce_v2_ipv4_gid_index"] = 5
    env = ucx_env(data)
    assert "UCX_IB_GID_INDEX" not in env
    assert env["UCX_NET_DEVICES"] == "mlx5_0:1,mlx5_1:1"
    assert ucx_env(data, gid_index=3)["UCX_IB_GID_INDEX"] == "3"
    assert "UCX_IB_GID_INDEX" not in ucx_env(facts("roce-a"), gid_index="omit")


def test_port_down_left_out():
    data = facts("roce-portdown")
    downs = [(d["name"], p["number"]) for d in data["devices"] for p in d["ports"] if p["state"] != "ACTIVE"]
    assert downs
    listed = ucx_env(data)["UCX_NET_DEVICES"].split(",")
    assert all("%s:%d" % down not in listed for down in downs)


def test_no_rdma_is_tcp_only():
    assert ucx_env(facts("no-rdma")) == {"UCX_TLS": "tcp,sm,self"}
    assert ucx_env(facts("no-rdma"), tcp_netdevs=["eth0"]) == {"UCX_TLS": "tcp,sm,self", "UCX_NET_DEVICES": "eth0"}


def test_soft_devices_can_be_left_out():
    assert ucx_env(facts("lab1"), include_soft=False) == {"UCX_TLS": "tcp,sm,self"}


def test_iwarp_only_host_goes_over_tcp_on_its_netdev():
    assert ucx_env(iwarp_double()) == {"UCX_TLS": "tcp,sm,self", "UCX_NET_DEVICES": "eth1"}


def test_iwarp_port_never_listed_beside_roce():
    data = facts("roce-a")
    siw = copy.deepcopy(iwarp_double()["devices"][0])
    data["devices"].append(siw)
    assert ucx_env(data)["UCX_NET_DEVICES"] == "mlx5_0:1"


def test_gpu_host_gets_cuda_transports():
    assert ucx_env(facts("roce-a"), cuda=True)["UCX_TLS"] == "rc,ud,sm,self,cuda"
    assert ucx_env(facts("no-rdma"), cuda=True)["UCX_TLS"] == "tcp,sm,self,cuda"


def test_explicit_transports_and_extra():
    env = ucx_env(facts("roce-a"), transports=["rc_x", "sm", "self"], extra={"UCX_IB_GID_INDEX": None, "UCX_RNDV_THRESH": 8192})
    assert env["UCX_TLS"] == "rc_x,sm,self"
    assert "UCX_IB_GID_INDEX" not in env
    assert env["UCX_RNDV_THRESH"] == "8192"
    assert ucx_env(facts("roce-a"), transports="^tcp")["UCX_TLS"] == "^tcp"


@pytest.mark.parametrize("kwargs, words", [
    ({"tc": 300}, "tc must be an integer 0-255"),
    ({"gid_index": "first"}, "gid_index must be one of auto, omit"),
    ({"transports": ["rc", "verbs"]}, "unknown UCX transport 'verbs'; allowed: all, sm"),
    ({"transports": []}, "transports must be 'auto' or a list"),
    ({"tcp_netdevs": ["eth0;rm"]}, "tcp_netdevs: 'eth0;rm' is not a netdev name"),
    ({"extra": ["UCX_TLS=tcp"]}, "extra must be a dict"),
    ({"cuda": "yes"}, "cuda must be true or false"),
])
def test_bad_input_names_the_parameter(kwargs, words):
    with pytest.raises(RdmaFactsError) as err:
        ucx_env(facts("roce-a"), **kwargs)
    assert words in str(err.value)


def test_one_host_only():
    with pytest.raises(RdmaFactsError, match="one host's facts"):
        ucx_env({"a": facts("roce-a"), "b": facts("ib-a")})
