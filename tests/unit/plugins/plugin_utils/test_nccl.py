# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/nccl.py: NCCL environment from RDMA facts.

Facts are the derived fixture hosts in tests/unit/fixtures/k8s/facts (see the
README there for what each one is derived from).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import nccl_conf, nccl_env, roce_gid_and_tos
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

FACTS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FACTS_DIR, name + ".json")) as f:
        return json.load(f)


def test_single_roce_host_agreeing_gid_index_and_tos():
    env = nccl_env(facts("roce-a"))
    assert env == {
        "NCCL_IB_DISABLE": "0",
        "NCCL_IB_HCA": "=mlx5_0:1",
        "NCCL_IB_GID_INDEX": "5",
        "NCCL_IB_TC": "106",
        "NCCL_SOCKET_IFNAME": "=ens1f0",
    }


def test_two_ports_same_index_listed_exactly_and_in_order():
    env = nccl_env(facts("roce-gid3"))
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    assert env["NCCL_IB_GID_INDEX"] == "3"
    assert env["NCCL_SOCKET_IFNAME"] == "=ens1f0,ens1f1"
    assert "NCCL_IB_ROCE_VERSION_NUM" not in env and "NCCL_IB_ADDR_FAMILY" not in env


def test_mixed_gid_indices_let_nccl_pick_per_port():
    env = nccl_env([facts("roce-a"), facts("roce-gid3")])
    assert "NCCL_IB_GID_INDEX" not in env
    assert env["NCCL_IB_ROCE_VERSION_NUM"] == "2"
    assert env["NCCL_IB_ADDR_FAMILY"] == "AF_INET"
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1"
    assert env["NCCL_IB_TC"] == "106"


def test_port_down_is_left_out():
    data = facts("roce-portdown")
    assert data["devices"][1]["ports"][0]["state"] == "DOWN"
    env = nccl_env(data)
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1"
    assert env["NCCL_SOCKET_IFNAME"] == "=ens1f0"
    # the DOWN port has no IPv4 GID, but it is not selected, so the index still agrees
    assert env["NCCL_IB_GID_INDEX"] == "3"


def test_infiniband_has_no_roce_settings():
    env = nccl_env({"ib-a": facts("ib-a"), "ib-b": facts("ib-b")})
    assert env == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=ib0"}


def test_vfs_and_soft_devices_need_opt_in():
    assert nccl_env(facts("roce-b"))["NCCL_IB_HCA"] == "=mlx5_0:1"
    env = nccl_env(facts("roce-b"), include_vfs=True)
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_2:1"
    # PF IPv4 RoCE v2 at 5, VF at 3: no common index
    assert "NCCL_IB_GID_INDEX" not in env and env["NCCL_IB_ADDR_FAMILY"] == "AF_INET"
    with pytest.raises(RdmaFactsError, match="rxe0:1 ACTIVE \\(soft\\)"):
        nccl_env(facts("lab1"))
    lab = nccl_env([facts("lab1"), facts("lab2")], include_soft=True)
    assert lab == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=rxe0:1", "NCCL_IB_GID_INDEX": "1",
                   "NCCL_SOCKET_IFNAME": "=eth1"}


def test_natural_order_and_exact_prefix():
    data = facts("roce-gid3")
    ten = copy.deepcopy(data["devices"][1])
    ten["name"] = "mlx5_10"
    ten["ports"][0]["netdev"] = "ens10f1"
    data["devices"].insert(0, ten)
    env = nccl_env(data)
    assert env["NCCL_IB_HCA"] == "=mlx5_0:1,mlx5_1:1,mlx5_10:1"
    assert env["NCCL_SOCKET_IFNAME"] == "=ens1f0,ens1f1,ens10f1"


def test_tos_disagreement_or_zero_omits_tc():
    data = facts("roce-gid3")
    data["devices"][1]["ports"][0]["roce"]["default_tos"] = 0
    assert "NCCL_IB_TC" not in nccl_env(data)
    data["devices"][1]["ports"][0]["roce"] = None
    assert "NCCL_IB_TC" not in nccl_env(data)
    assert nccl_env(data, tc=96)["NCCL_IB_TC"] == "96"


def _port(gid, tos):
    return {"roce_v2_ipv4_gid_index": gid, "roce": {"default_tos": tos} if tos is not None else None}


@pytest.mark.parametrize("ports, gid_index, tc, expected", [
    ([_port(3, 106), _port(3, 106)], "auto", None, (3, 106)),
    ([_port(0, 106)], "auto", None, (0, 106)),               # GID index 0 is an index
    ([_port(3, 106), _port(5, 106)], "auto", None, (None, 106)),
    ([_port(3, 106), _port(None, 106)], "auto", None, (None, 106)),
    ([_port(3, 106), _port(3, 96)], "auto", None, (3, None)),
    ([_port(3, 0), _port(3, 0)], "auto", None, (3, None)),   # ToS 0 is the kernel's default, not a setting
    ([_port(3, 106), _port(3, None)], "auto", None, (3, None)),
    ([_port(3, 106)], "omit", None, (None, 106)),
    ([_port(3, 106), _port(5, 96)], 7, 0, (7, 0)),           # given values win, 0 included
    ([], "auto", None, (None, None)),
    ([], "auto", 106, (None, 106)),
])
def test_roce_gid_and_tos_the_rule_nccl_and_ucx_share(ports, gid_index, tc, expected):
    assert roce_gid_and_tos(ports, gid_index, tc) == expected


def test_overrides():
    env = nccl_env(facts("roce-a"), socket_ifname="=net1", gid_index="omit",
                   extra={"NCCL_DEBUG": "WARN", "NCCL_IB_TC": None, "NCCL_NET_GDR_LEVEL": 2})
    assert env["NCCL_SOCKET_IFNAME"] == "=net1"
    assert "NCCL_IB_GID_INDEX" not in env and env["NCCL_IB_ROCE_VERSION_NUM"] == "2"
    assert "NCCL_IB_TC" not in env
    assert env["NCCL_DEBUG"] == "WARN" and env["NCCL_NET_GDR_LEVEL"] == "2"
    assert nccl_env(facts("roce-a"), gid_index=3)["NCCL_IB_GID_INDEX"] == "3"
    assert nccl_env(facts("roce-a"), gid_index="7")["NCCL_IB_GID_INDEX"] == "7"


def test_link_layer_and_device_filters():
    both = [facts("roce-a"), facts("ib-a")]
    assert nccl_env(both, link_layers=["InfiniBand"]) == {
        "NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=ib0"}
    assert nccl_env(facts("roce-gid3"), devices=["mlx5_1"])["NCCL_IB_HCA"] == "=mlx5_1:1"


def test_no_rdma_fails_clearly_or_disables():
    with pytest.raises(RdmaFactsError, match="no ACTIVE RDMA port selected.*no RDMA devices"):
        nccl_env(facts("no-rdma"))
    assert nccl_env(facts("no-rdma"), on_no_rdma="disable") == {"NCCL_IB_DISABLE": "1"}


@pytest.mark.parametrize("kwargs, message", [
    ({"gid_index": "sometimes"}, "gid_index must be one of auto, omit"),
    ({"gid_index": -1}, "gid_index must be one of auto, omit"),
    ({"tc": 300}, "tc must be an integer 0-255"),
    ({"on_no_rdma": "ignore"}, "on_no_rdma must be one of fail, disable"),
    ({"link_layers": ["RoCE"]}, "unknown link layer.*allowed: Ethernet, InfiniBand"),
    ({"extra": ["NCCL_DEBUG=INFO"]}, "extra must be a dict"),
])
def test_bad_options_are_rejected(kwargs, message):
    with pytest.raises(RdmaFactsError, match=message):
        nccl_env(facts("roce-a"), **kwargs)


def test_bad_facts_are_rejected():
    with pytest.raises(RdmaFactsError, match="schema_version 2"):
        nccl_env({"schema_version": 2, "devices": []})
    with pytest.raises(RdmaFactsError, match="not RDMA facts"):
        nccl_env({"roce-a": {"interfaces": []}})
    with pytest.raises(RdmaFactsError, match="empty list"):
        nccl_env([])


def test_accepts_whole_ansible_facts():
    assert nccl_env({"rdma": facts("ib-a"), "os_family": "Debian"})["NCCL_IB_HCA"] == "=mlx5_0:1"


def test_nccl_conf_text():
    assert nccl_conf({"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_DISABLE": "0"}) == "NCCL_IB_DISABLE=0\nNCCL_IB_HCA==mlx5_0:1\n"
