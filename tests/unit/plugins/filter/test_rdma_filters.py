# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric filter plugins (nccl_env, nccl_pod_env, ucx_env, rdma_selectors,
rdma_node_labels, rdma_cni_config, rdma_shared_dev_plugin_config).

The logic lives in module_utils (tested in tests/unit/plugins/module_utils);
these tests check the filter layer: registration under the documented names,
argument passing and errors surfacing as AnsibleFilterError with the filter
name. The role tests (tests/unit/roles/k8s_rdma_stack) run them inside real
ansible-playbook templating.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import json
import os

import pytest
import yaml

from ansible.errors import AnsibleFilterError
from ansible.utils.plugin_docs import merge_fragment

from ansible_collections.rdma.fabric.plugins.doc_fragments import port_selection
from ansible_collections.rdma.fabric.plugins.filter import (
    nccl_env,
    nccl_pod_env,
    rdma_cni_config,
    rdma_node_labels,
    rdma_ports,
    rdma_selectors,
    rdma_shared_dev_plugin_config,
    ucx_env,
)

FACTS_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s", "facts")


def facts(name):
    with open(os.path.join(FACTS_DIR, name + ".json")) as f:
        return json.load(f)


@pytest.mark.parametrize("module, name", [
    (nccl_env, "nccl_env"),
    (nccl_pod_env, "nccl_pod_env"),
    (rdma_selectors, "rdma_selectors"),
    (rdma_node_labels, "rdma_node_labels"),
    (rdma_cni_config, "rdma_cni_config"),
    (rdma_shared_dev_plugin_config, "rdma_shared_dev_plugin_config"),
    (ucx_env, "ucx_env"),
])
def test_registered_under_documented_name(module, name):
    filters = module.FilterModule().filters()
    assert list(filters) == [name]
    assert callable(filters[name])
    assert "name: %s\n" % name in module.DOCUMENTATION


def documented_options(module):
    """The options ansible-doc shows: the filter's own merged over its rdma.fabric.port_selection fragments
    with ansible's own merge (a filter's partial entry, such as a different default, wins key by key)."""
    doc = yaml.safe_load(module.DOCUMENTATION)
    options = doc["options"]
    for slug in doc.get("extends_documentation_fragment", []):
        assert slug == "rdma.fabric.port_selection" or slug.startswith("rdma.fabric.port_selection."), slug
        var = slug[len("rdma.fabric.port_selection."):] or "documentation"
        merge_fragment(options, yaml.safe_load(getattr(port_selection.ModuleDocFragment, var.upper()))["options"])
    return options


@pytest.mark.parametrize("module, name", [
    (nccl_env, "nccl_env"),
    (nccl_pod_env, "nccl_pod_env"),
    (ucx_env, "ucx_env"),
    (rdma_selectors, "rdma_selectors"),
    (rdma_node_labels, "rdma_node_labels"),
    (rdma_ports, "rdma_ports"),
])
def test_documented_options_are_the_filters_arguments(module, name):
    """The shared option texts come from doc fragments: each filter documents exactly its own arguments, every one
    complete, with the filter's defaults (None standing for an empty list or dict)."""
    options = documented_options(module)
    params = inspect.signature(module.FilterModule().filters()[name]).parameters
    assert sorted(options) == sorted(["_input"] + list(params)[1:])
    for option, spec in options.items():
        assert spec.get("description") and spec.get("type"), (name, option)
        if option != "_input":
            default = params[option].default
            assert spec.get("default") == default or default is None and spec.get("default") in ([], {}), (name, option)


def test_nccl_env_filter():
    f = nccl_env.FilterModule().filters()["nccl_env"]
    assert f({"a": facts("roce-a"), "b": facts("roce-gid3")}, link_layers=["Ethernet"]) == {
        "NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_ROCE_VERSION_NUM": "2",
        "NCCL_IB_ADDR_FAMILY": "AF_INET", "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=ens1f0,ens1f1"}
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.nccl_env: no ACTIVE RDMA port selected"):
        f(facts("no-rdma"))


def test_nccl_pod_env_filter():
    """Issue 19: the pod side of the seed's two NIC types and of a node without RDMA, and the Multus network rule."""
    f = nccl_pod_env.FilterModule().filters()["nccl_pod_env"]
    assert f(facts("roce-a")) == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5",
                                  "NCCL_IB_TC": "106", "NCCL_SOCKET_IFNAME": "=eth0"}
    nets = [{"name": "ib-net", "type": "ipoib", "master": "ib0", "ipam": {"type": "whereabouts", "range": "10.1.0.0/16"}}]
    assert f(facts("ib-a"), network="ib-net", networks=nets) == {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1",
                                                                 "NCCL_SOCKET_IFNAME": "=net1"}
    assert f(facts("no-rdma"), network="ib-net", networks=nets) == {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "",
                                                                    "NCCL_SOCKET_IFNAME": "=eth0"}
    assert f(facts("ib-a"), socket_ifname="")["NCCL_SOCKET_IFNAME"] == "=eth0"  # the role's empty default
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.nccl_pod_env: 'ib-net2' is not the name of a network"):
        f(facts("ib-a"), network="ib-net2", networks=nets)
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.nccl_pod_env: pod_interface must be a network interface"):
        f(facts("ib-a"), pod_interface="eth0,eth1")


@pytest.mark.parametrize("host, nccl, ucx", [
    ("roce-a",
     {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5", "NCCL_IB_TC": "106",
      "NCCL_SOCKET_IFNAME": "=ens1f0"},
     {"UCX_NET_DEVICES": "mlx5_0:1", "UCX_TLS": "rc,ud,sm,self", "UCX_IB_GID_INDEX": "5", "UCX_IB_TRAFFIC_CLASS": "106"}),
    ("ib-a",
     {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=ib0"},
     {"UCX_NET_DEVICES": "mlx5_0:1", "UCX_TLS": "rc,ud,sm,self"}),
])
def test_nccl_and_ucx_filters_on_the_seed_nic_types(host, nccl, ucx):
    """Issue 19: the NCCL and UCX renderings of the seed's two NIC types (RoCE mlx5, InfiniBand mlx5), through
    the filters the roles call: the same settings, RoCE with the GID index and the ToS as traffic class, IB
    without either."""
    assert nccl_env.FilterModule().filters()["nccl_env"](facts(host)) == nccl
    assert ucx_env.FilterModule().filters()["ucx_env"](facts(host)) == ucx
    assert ucx_env.FilterModule().filters()["ucx_env"]({"rdma": facts(host)}) == ucx


def test_ucx_env_filter_errors_name_the_filter():
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.ucx_env: "):
        ucx_env.FilterModule().filters()["ucx_env"]({"a": facts("roce-a"), "b": facts("ib-a")})


def test_rdma_selectors_filter():
    f = rdma_selectors.FilterModule().filters()["rdma_selectors"]
    assert f([facts("roce-a"), facts("roce-b")]) == {
        "vendors": ["15b3"], "deviceIDs": ["101d"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0"], "linkTypes": ["ether"]}
    assert f([facts("roce-a"), facts("roce-b")], plugin="sriov")["devices"] == ["101e"]
    with pytest.raises(AnsibleFilterError, match="plugin must be one of shared, sriov"):
        f(facts("roce-a"), plugin="dra")
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.rdma_selectors: no ACTIVE RDMA port"):
        f([facts("no-rdma")])


def test_rdma_node_labels_filter():
    f = rdma_node_labels.FilterModule().filters()["rdma_node_labels"]
    assert f(facts("ib-a"), prefix="rdma.example.org") == {
        "rdma.example.org/capable": "true", "rdma.example.org/link-layer": "InfiniBand"}
    assert f(facts("ib-a"), remove=True) == {
        "rdma.fabric/capable": None, "rdma.fabric/link-layer": None, "rdma.fabric/roce-v2-gid-index": None,
        "rdma.fabric/nccl-pool": None}
    assert f(facts("ib-a"), nccl_pool="ib1-28170814")["rdma.fabric/nccl-pool"] == "ib1-28170814"
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.rdma_node_labels: nccl_pool must be a node pool id"):
        f(facts("ib-a"), nccl_pool="ib pool")
    with pytest.raises(AnsibleFilterError, match="label prefix must be a DNS subdomain"):
        f(facts("ib-a"), prefix="-bad-")


def test_rdma_cni_config_filter():
    f = rdma_cni_config.FilterModule().filters()["rdma_cni_config"]
    net = {"name": "ib-net", "type": "ipoib", "master": "ib0", "ipam": {"type": "whereabouts", "range": "10.1.0.0/16"}}
    text = f(net, as_json=True)
    assert json.loads(text) == f(net)
    with pytest.raises(AnsibleFilterError, match="rdma_cni_config: network ib-net: 'type' must be one of"):
        f(dict(net, type="bridge"))


def test_rdma_shared_dev_plugin_config_filter():
    f = rdma_shared_dev_plugin_config.FilterModule().filters()["rdma_shared_dev_plugin_config"]
    doc = f([{"resourceName": "rdma_shared_device_a"}], [facts("ib-a"), facts("ib-b")])
    assert doc == {"configList": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {
        "vendors": ["15b3"], "deviceIDs": ["1013"], "drivers": ["mlx5_core"], "ifNames": ["ib0"],
        "linkTypes": ["infiniband"]}}]}
    with pytest.raises(AnsibleFilterError, match="resourceName must match"):
        f([{"resourceName": "has-dash"}], facts("ib-a"))
    # split and per-pool lists (issue 19)
    halves = [{"resourceName": "a", "split": {"part": 1, "parts": 2}}, {"resourceName": "b", "split": {"part": 2, "parts": 2}}]
    doc = f(halves, {"gpu-7": facts("roce-gid3"), "roce-a": facts("roce-a")},
            pool_resources={"roce-a": [{"resourceName": "a", "link_layers": ["Ethernet"]}]})
    assert [(e["resourceName"], e["selectors"]["ifNames"]) for e in doc["configList"]] == [("a", ["ens1f0"]), ("b", ["ens1f1"])]
    with pytest.raises(AnsibleFilterError, match=r"split must be \{part: P, parts: N\}"):
        f([{"resourceName": "a", "split": {"part": 3, "parts": 2}}], facts("ib-a"))
    with pytest.raises(AnsibleFilterError, match="rdma.fabric.rdma_shared_dev_plugin_config: the shared device plugin "
                                                 "resources overlap .* on node\\(s\\) gpu-7, device mlx5_1:1"):
        f([{"resourceName": "a"}, {"resourceName": "b", "rdma_devices": ["mlx5_1"]}], {"gpu-7": facts("roce-gid3")})
