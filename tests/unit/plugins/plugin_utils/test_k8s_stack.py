# -*- coding: utf-8 -*-
"""Issue 33 rules of plugin_utils/k8s_rdma.py and their joins in plugin_utils/k8s_stack.py, on the derived fixture
hosts of tests/unit/fixtures/k8s/facts (see the README there): NV-IPAM pools from whereabouts ranges, rdma-cni
chaining, the NFD rule, what to do about an installed Multus, the GPU Operator's values, nodes without the
user-space RDMA modules. The role's own render tests are tests/unit/roles/k8s_rdma_stack/test_render.py."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import jsonschema
import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError, missing_user_space_modules
from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_stack import stack_settings
from ansible_collections.rdma.fabric.plugins.plugin_utils.node_pools import node_pools, pool_name
from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import role_yaml

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "k8s")


def facts(name):
    with open(os.path.join(FIXTURES, "facts", name + ".json")) as f:
        return json.load(f)


def crd_schema(name):
    with open(os.path.join(FIXTURES, "schemas", name)) as f:
        return json.load(f)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def others(warnings):
    """The warnings but the one of roce-a's one-port pool, which gives rdma_shared_device_b no port (its own test:
    test_render.py, test_default_two_resources_per_pool_and_single_port_pools)."""
    gap = [w for w in warnings if w.startswith("the node pool of roce-a gives no ACTIVE RDMA port to rdma/rdma_shared_device_b")]
    assert len(gap) == 1, warnings
    return [w for w in warnings if w not in gap]


def settings(**overrides):
    values = role_yaml("k8s_rdma_stack", "defaults", "main.yml")
    values.update(("k8s_rdma_stack_" + k, v) for k, v in overrides.items())
    return values


def pools_of(hosts):
    """The node_pools action's pools (name, hosts, label, facts) of ``{host: fixture}``."""
    data = dict((h, facts(f)) for h, f in hosts.items())
    pools = node_pools(data, list(hosts))
    out = {}
    for name, pool in pools.pools.items():
        members = pool["hosts"]
        out[name] = {"name": name, "hosts": members, "facts": pool["facts"],
                     "label": members[0] if len(members) == 1 else "%s and %d more" % (members[0], len(members) - 1)}
    return out, dict((h, h) for h in hosts), dict((h, data[h]["stack"]["flavor"]) for h in hosts)


def without(name, *modules):
    data = facts(name)
    for module in modules:
        data["modules"][module] = False
    return data


NET = {"name": "rdma-net-a", "namespace": "training", "type": "macvlan", "master": "ens1f0",
       "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"],
                "range_start": "192.168.100.10", "gateway": "192.168.100.1"}}


# --- NV-IPAM ----------------------------------------------------------------------------------------------------

def test_nv_ipam_pool_from_the_whereabouts_range():
    name, spec = k8s_rdma.nv_ipam_pool(NET, nodes=3)
    # .1-.254 usable; .1-.9 before range_start and .254 excluded: 244 left, 81 per node -> 64
    assert name == "rdma-net-a"
    assert spec == {"subnet": "192.168.100.0/24", "perNodeBlockSize": 64, "gateway": "192.168.100.1", "exclusions": [
        {"startIP": "192.168.100.1", "endIP": "192.168.100.9"},
        {"startIP": "192.168.100.254", "endIP": "192.168.100.254"}]}
    pool = {"apiVersion": "nv-ipam.nvidia.com/v1alpha1", "kind": "IPPool",
            "metadata": {"name": name, "namespace": "nvidia-network-operator"}, "spec": spec}
    jsonschema.Draft7Validator(crd_schema("nv-ipam.nvidia.com_ippools.json")).validate(pool)
    net = dict(NET, ip_pool="shared.pool_1", per_node_block_size=16,
               ipam={"type": "whereabouts", "range": "10.0.0.0/30", "range_end": "10.0.0.1"})
    assert k8s_rdma.nv_ipam_pool(net, nodes=1000) == ("shared.pool_1", {
        "subnet": "10.0.0.0/30", "perNodeBlockSize": 16, "exclusions": [{"startIP": "10.0.0.2", "endIP": "10.0.0.2"}]})
    assert k8s_rdma.nv_ipam_pool(dict(NET, ipam={"type": "host-local", "subnet": "10.0.0.0/24"}), 2) == (None, None)
    with pytest.raises(RdmaFactsError, match=r"network rdma-net-a: range 10.0.0.0/30 has 2 usable address\(es\) for "
                                             r"3 node\(s\); give a larger range or per_node_block_size"):
        k8s_rdma.nv_ipam_pool(dict(NET, ipam={"type": "whereabouts", "range": "10.0.0.0/30"}), 3)
    with pytest.raises(RdmaFactsError, match="ip_pool must be an NV-IPAM pool name"):
        k8s_rdma.nv_ipam_pool(dict(NET, ip_pool="a pool"), 1)


def test_cni_config_with_an_nv_ipam_pool_and_rdma_cni_chained():
    assert k8s_rdma.cni_config(NET, ip_pool="rdma-net-a")["ipam"] == {"type": "nv-ipam", "poolName": "rdma-net-a"}
    dev = {"name": "vf-net", "type": "host-device", "device": "ens1f0v0", "ipam": {"type": "whereabouts", "range": "10.2.0.0/24"}}
    assert k8s_rdma.cni_config(dev, rdma_cni=True) == {"cniVersion": "0.3.1", "name": "vf-net", "plugins": [
        {"type": "host-device", "device": "ens1f0v0", "ipam": {"type": "whereabouts", "range": "10.2.0.0/24"}},
        {"type": "rdma"}]}


# --- NFD, Multus, the GPU Operator -----------------------------------------------------------------------------

def test_nfd_rule_validates_and_matches_the_pools_nics_and_modules():
    spec = k8s_rdma.nfd_rule({"vendors": ["15b3"], "deviceIDs": ["101d", "1021"], "ifNames": ["ens1f0"]})
    assert spec == {"rules": [{"name": "rdma.fabric RDMA available", "labels": {"rdma.available": "true"},
                               "matchFeatures": [
                                   {"feature": "kernel.loadedmodule", "matchExpressions": {
                                       "ib_uverbs": {"op": "Exists"}, "rdma_ucm": {"op": "Exists"}}},
                                   {"feature": "pci.device", "matchExpressions": {
                                       "vendor": {"op": "In", "value": ["15b3"]},
                                       "device": {"op": "In", "value": ["101d", "1021"]}}}]}]}
    rule = {"apiVersion": "nfd.k8s-sigs.io/v1alpha1", "kind": "NodeFeatureRule", "metadata": {"name": "r"}, "spec": spec}
    jsonschema.Draft7Validator(crd_schema("nfd.k8s-sigs.io_nodefeaturerules.json")).validate(rule)
    # soft devices only (no PCI IDs): the modules alone
    assert [m["feature"] for m in k8s_rdma.nfd_rule({"ifNames": ["eth1"]})["rules"][0]["matchFeatures"]] == [
        "kernel.loadedmodule"]


def daemonset(namespace, name, image, labels=None, owner=None):
    """A DaemonSet as kubernetes.core.k8s_info returns it (the fields multus_status reads)."""
    meta = {"namespace": namespace, "name": name, "labels": labels or {}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": "nic-cluster-policy"}]
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta, "spec": {"template": {"spec": {
        "initContainers": [{"name": "install", "image": image}], "containers": [{"name": "main", "image": image}]}}}}


OURS = "rdma.fabric.k8s_rdma_stack"
STOCK = daemonset("kube-system", "kube-multus-ds", "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick")
OTHER = [daemonset("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.33.0"),
         daemonset("kube-system", "whereabouts", "ghcr.io/k8snetworkplumbingwg/whereabouts:v0.9.3")]


def test_an_installed_multus_is_found_and_never_replaced():
    status = k8s_rdma.multus_status(OTHER + [STOCK], True, True, 1, OURS)
    assert status["render"] is False and status["fail"] is False
    assert status["installs"] == [{"namespace": "kube-system", "name": "kube-multus-ds", "ours": False,
                                   "image": "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.1.0-thick"}]
    assert status["message"] == ("Multus is installed (kube-system/kube-multus-ds (ghcr.io/k8snetworkplumbingwg/"
                                 "multus-cni:v4.1.0-thick)); the networks use it, and the role does not apply its own "
                                 "(k8s_rdma_stack_multus_enabled asks for it): it would replace the installed one.")
    assert k8s_rdma.multus_status(OTHER + [STOCK], False, True, 1, OURS)["message"].endswith("the networks use it.")


def test_the_roles_own_multus_and_none_at_all():
    ours = daemonset("kube-system", "kube-multus-ds", "ghcr.io/k8snetworkplumbingwg/multus-cni:v4.2.4",
                     labels={"app.kubernetes.io/managed-by": OURS})
    netop = daemonset("nvidia-network-operator", "kube-multus-ds", "nvcr.io/nvidia/mellanox/multus-cni:network-operator-v26.1.0",
                      owner="NicClusterPolicy")
    assert k8s_rdma.multus_status(OTHER + [ours], True, True, 1, OURS)["render"] is True
    assert k8s_rdma.multus_status([netop], True, True, 1, OURS)["render"] is True
    kept = k8s_rdma.multus_status([ours], False, True, 1, OURS)
    assert kept["render"] is False and "stays as it is" in kept["message"]
    assert k8s_rdma.multus_status(OTHER, True, False, 1, OURS)["render"] is True
    none = k8s_rdma.multus_status(OTHER, False, False, 2, OURS)
    assert none["fail"] is True and none["message"].startswith("the 2 network(s) need Multus, and the cluster has none")
    assert k8s_rdma.multus_status(OTHER, False, True, 2, OURS)["fail"] is False
    assert k8s_rdma.multus_status([], False, False, 0, OURS) == {"render": False, "fail": False, "installs": [],
                                                                 "message": "no networks: Multus is not needed."}


def test_gpu_operator_values_follow_the_hosts_stacks():
    assert k8s_rdma.gpu_operator_values({"a": "mlnx_ofed", "b": "doca"}) == (
        {"driver": {"rdma": {"enabled": True, "useHostMofed": True}}}, [])
    assert k8s_rdma.gpu_operator_values({"a": "inbox"}) == ({"driver": {"rdma": {"enabled": True, "useHostMofed": False}}}, [])
    assert k8s_rdma.gpu_operator_values({"a": "doca", "b": "inbox"})[1] == ["b"]


def test_role_variable_rules_of_issue_33():
    errors = k8s_rdma.check_role_vars({
        "k8s_rdma_stack_method": "manifests", "k8s_rdma_stack_ipam": "nv_ipam", "k8s_rdma_stack_rdma_netns": "exclusive",
        "k8s_rdma_stack_networks": [dict(NET, ip_pool="bad pool", per_node_block_size=0)],
        "k8s_rdma_stack_gpu_operator_values": [], "k8s_rdma_stack_rdma_cni_version": "v1 5"})
    assert errors == [
        "k8s_rdma_stack_rdma_cni_version: 'v1 5' is not allowed; allowed: an image tag such as v1.5.3",
        "k8s_rdma_stack_gpu_operator_values: [] is not allowed; allowed: a dict of Helm values",
        "k8s_rdma_stack_ipam: nv_ipam needs k8s_rdma_stack_method: network_operator (NV-IPAM is deployed by the NVIDIA "
        "Network Operator); allowed with k8s_rdma_stack_method manifests: auto, whereabouts",
        "k8s_rdma_stack_networks[0]: network rdma-net-a: ip_pool must be an NV-IPAM pool name (letters, digits, '.', "
        "'_', '-', at most 63), got 'bad pool'",
        "k8s_rdma_stack_networks[0]: network rdma-net-a: per_node_block_size must be an integer >= 1 (addresses per "
        "node), got 0",
        "k8s_rdma_stack_networks[0]: type macvlan cannot be used with k8s_rdma_stack_rdma_netns: exclusive (rdma-cni "
        "moves the RDMA device of the pod's interface into the pod, and a macvlan interface has none of its own); "
        "allowed: host-device (a physical or virtual function)"]


# --- the joins (k8s_stack) --------------------------------------------------------------------------------------

def test_operator_defaults_give_nv_ipam_pools_for_the_capable_nodes():
    pools, names, stacks = pools_of({"roce-a": "roce-a", "gpu-7": "roce-gid3", "cpu-1": "no-rdma"})
    out = stack_settings(pools, names, settings(method="network_operator", networks=[NET]), stacks)
    assert out["components"] == {"multus": False, "whereabouts": False, "nv_ipam": True, "ipoib": False,
                                 "rdma_cni": False, "nfd_rule": False}
    # two capable nodes: 244 usable addresses / 2 = 122 -> 64
    assert out["ip_pools"] == [{"name": "rdma-net-a", "namespace": "nvidia-network-operator", "spec": dict(
        k8s_rdma.nv_ipam_pool(NET, 2)[1], nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "rdma.fabric/capable", "operator": "In", "values": ["true"]}]}]})}]
    assert out["ip_pools"][0]["spec"]["perNodeBlockSize"] == 64
    assert json.loads(out["cni_configs"][0])["ipam"] == {"type": "nv-ipam", "poolName": "rdma-net-a"}
    # manifests keep whereabouts; the operator keeps it when asked
    for method, ipam in (("manifests", "auto"), ("network_operator", "whereabouts")):
        out = stack_settings(pools, names, settings(method=method, ipam=ipam, networks=[NET]), stacks)
        assert out["components"]["whereabouts"] is True and out["ip_pools"] == []
        assert json.loads(out["cni_configs"][0])["ipam"]["type"] == "whereabouts"
    # two networks naming one pool must agree
    other = dict(NET, name="rdma-net-b", ip_pool="rdma-net-a", ipam={"type": "whereabouts", "range": "10.9.0.0/24"})
    with pytest.raises(RdmaFactsError, match=r"k8s_rdma_stack_networks\[1\]: network rdma-net-b uses IP pool rdma-net-a, "
                                             "which another network defines with other settings"):
        stack_settings(pools, names, settings(method="network_operator", networks=[NET, other]), stacks)


def test_nfd_selection_and_the_render_only_warning():
    pools, names, stacks = pools_of({"roce-a": "roce-a", "gpu-7": "roce-gid3"})
    out = stack_settings(pools, names, settings(node_selection="nfd", node_selector={"pool": "gpu"}), stacks)
    assert out["selection"] == {"feature.node.kubernetes.io/rdma.available": "true"}
    assert out["ds_node_selector"] == {"feature.node.kubernetes.io/rdma.available": "true", "pool": "gpu"}
    assert out["nfd_rule"]["rules"][0]["matchFeatures"][1]["matchExpressions"]["device"]["value"] == ["101d", "1021"]
    assert others(out["warnings"]) == []
    out = stack_settings(pools, names, settings(apply=False, output_dir="/srv/gitops"), stacks)
    assert out["ds_node_selector"] == {"rdma.fabric/capable": "true"}
    assert others(out["warnings"]) == [
        "render only: the device plugin DaemonSets select rdma.fabric/capable=true, which the node label patches in "
        "node-labels/ set, outside the kustomization (a GitOps tool must not own Nodes): apply them (kubectl apply "
        "--server-side -f node-labels/) or the plugins run nowhere; k8s_rdma_stack_node_selection: nfd selects by a "
        "label NFD sets from a rule in the kustomization."]
    assert stack_settings(pools, names, settings(node_labels_enabled=False), stacks)["ds_node_selector"] == {}


def test_exclusive_netns_chains_rdma_cni_and_warns_about_shared_resources():
    pools, names, stacks = pools_of({"gpu-7": "roce-gid3"})
    dev = {"name": "pf-net", "type": "host-device", "device": "ens1f1", "ipam": {"type": "whereabouts", "range": "10.2.0.0/24"}}
    out = stack_settings(pools, names, settings(rdma_netns="exclusive", networks=[dev]), stacks)
    assert out["components"]["rdma_cni"] is True
    assert json.loads(out["cni_configs"][0])["plugins"][-1] == {"type": "rdma"}
    assert out["warnings"] == [
        "RDMA netns mode exclusive: an RDMA device is in one network namespace at a time (rdma-cni moves it into the "
        "pod that has its interface), yet rdma_shared_device_a, rdma_shared_device_b let up to rdmaHcaMax pods ask "
        "for each device; give them rdmaHcaMax: 1."]
    one = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 1, "split": {"part": 1, "parts": 2}},
           {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 1, "split": {"part": 2, "parts": 2}}]
    assert stack_settings(pools, names, settings(rdma_netns="exclusive", networks=[dev], shared_devices=one),
                          stacks)["warnings"] == []


def test_a_node_without_user_space_modules_is_not_advertised():
    """gpu-8 is gpu-7 without rdma_ucm: a pool of its own (gpu-7's pool keeps its name), labelled capable=false, out
    of the selectors and the NV-IPAM node count, NCCL over sockets, and a warning naming the node and the module."""
    data = {"gpu-7": facts("roce-gid3"), "gpu-8": without("roce-gid3", "rdma_ucm"), "roce-a": facts("roce-a")}
    assert missing_user_space_modules(data["gpu-8"]) == ["rdma_ucm"]
    assert missing_user_space_modules(facts("no-rdma")) == []  # no devices: nothing to give pods anyway
    # no ib_core in the facts' modules while devices exist: the module list was not readable (unknown, not missing)
    assert missing_user_space_modules(without("roce-gid3", "ib_core", "ib_uverbs", "rdma_ucm")) == []
    assert pool_name(data["gpu-7"]) == "roce2-48d0ccaf" != pool_name(data["gpu-8"])  # test_render's GID3
    pools = node_pools(data, ["gpu-7", "gpu-8", "roce-a"])
    view = dict((n, {"name": n, "hosts": p["hosts"], "facts": p["facts"], "label": p["hosts"][0]}) for n, p in pools.pools.items())
    out = stack_settings(view, dict((h, h) for h in data), settings(method="network_operator", networks=[NET]),
                         dict((h, "mlnx_ofed") for h in data))
    gpu8 = pools.host_pool["gpu-8"]
    assert out["labels"]["gpu-8"] == {"rdma.fabric/capable": "false", "rdma.fabric/nccl-pool": gpu8}
    assert out["labels"]["gpu-7"]["rdma.fabric/capable"] == "true"
    assert out["not_advertised"] == {"gpu-8": ["rdma_ucm"]}
    assert view[gpu8]["resources"] == {} and out["nccl_env"][gpu8]["NCCL_IB_DISABLE"] == "1"
    assert others(out["warnings"]) == [
        "node(s) gpu-8 lack the user-space RDMA module(s) rdma_ucm (the facts' modules), so the RDMA device plugin "
        "could give pods no device there (k8s-rdma-shared-dev-plugin #103, #192); they are not advertised (labelled "
        "rdma.fabric/capable=false, left out of the selectors). Load the modules (rdma.fabric.mofed, "
        "mofed_kernel_modules), gather the facts and run again."]
    assert out["ip_pools"][0]["spec"]["perNodeBlockSize"] == 64  # 244 / 2 capable nodes
    # advertised anyway when asked not to require them
    out = stack_settings(copy.deepcopy(view), dict((h, h) for h in data), settings(require_user_space_modules=False), {})
    assert out["labels"]["gpu-8"]["rdma.fabric/capable"] == "true" and out["not_advertised"] == {}


def test_no_node_with_the_modules_says_so():
    data = {"gpu-8": without("roce-gid3", "ib_uverbs", "rdma_ucm")}
    pools = node_pools(data)
    view = dict((n, {"name": n, "hosts": p["hosts"], "facts": p["facts"], "label": p["hosts"][0]}) for n, p in pools.pools.items())
    out = stack_settings(view, {"gpu-8": "gpu-8"}, settings(), {})
    assert out["no_port"] == ("no node pool has the user-space RDMA modules; gpu-8: user-space RDMA module(s) "
                              "ib_uverbs, rdma_ucm not loaded")


def test_gpu_operator_values_in_the_settings():
    pools, names, stacks = pools_of({"gpu-7": "roce-gid3", "lab1": "lab1"})
    out = stack_settings(pools, names, settings(include_soft_devices=True, gpu_operator_values_enabled=True,
                                                gpu_operator_values={"driver": {"version": "580.65.06"}}), stacks)
    assert out["gpu_operator_values"] == {"driver": {"rdma": {"enabled": True, "useHostMofed": False}, "version": "580.65.06"}}
    assert ("GPU Operator values: node(s) lab1 have the inbox RDMA stack, the others MLNX_OFED/DOCA-OFED on the host; "
            "driver.rdma.useHostMofed is one setting for the whole cluster, so it stays false.") in out["warnings"]
    pools, names, stacks = pools_of({"gpu-7": "roce-gid3", "cpu-1": "no-rdma"})
    out = stack_settings(pools, names, settings(gpu_operator_values_enabled=True), stacks)
    assert out["gpu_operator_values"] == {"driver": {"rdma": {"enabled": True, "useHostMofed": True}}}
    assert stack_settings(pools, names, settings(), stacks)["gpu_operator_values"] == {}
