# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/k8s_rdma.py: device-plugin selectors, node labels, CNI configs.

Facts are the derived fixture hosts in tests/unit/fixtures/k8s/facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import jsonschema
import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "k8s")


def facts(name):
    with open(os.path.join(FIXTURES, "facts", name + ".json")) as f:
        return json.load(f)


def schema(name):
    with open(os.path.join(FIXTURES, "schemas", name)) as f:
        return json.load(f)


def test_shared_selectors_union_over_hosts():
    sel = k8s_rdma.shared_dev_selectors([facts("roce-a"), facts("roce-gid3"), facts("ib-a")])
    assert sel == {
        "vendors": ["15b3"],
        "deviceIDs": ["1013", "101d", "1021"],
        "drivers": ["mlx5_core"],
        "ifNames": ["ens1f0", "ens1f1", "ib0"],
        "linkTypes": ["ether", "infiniband"],  # issue 33: the netdevs' encapsulation, as the plugin reads it
    }


def test_shared_selectors_skip_down_ports_vfs_and_filter_link_layers():
    assert k8s_rdma.shared_dev_selectors(facts("roce-portdown"))["ifNames"] == ["ens1f0"]
    # roce-b has an ACTIVE VF (mlx5_2, 101e, ens1f0v0): it belongs to the SR-IOV plugin
    sel = k8s_rdma.shared_dev_selectors(facts("roce-b"))
    assert sel["deviceIDs"] == ["101d"] and sel["ifNames"] == ["ens1f0"]
    ib_only = k8s_rdma.shared_dev_selectors([facts("roce-a"), facts("ib-a")], link_layers=["InfiniBand"])
    assert ib_only == {"vendors": ["15b3"], "deviceIDs": ["1013"], "drivers": ["mlx5_core"], "ifNames": ["ib0"],
                       "linkTypes": ["infiniband"]}


def test_shared_selectors_soft_devices_only_give_ifnames():
    with pytest.raises(RdmaFactsError, match="lab1: rxe0:1 ACTIVE \\(soft\\)"):
        k8s_rdma.shared_dev_selectors({"lab1": facts("lab1")})
    assert k8s_rdma.shared_dev_selectors([facts("lab1"), facts("lab2")], include_soft=True) == {"ifNames": ["eth1"],
                                                                                                "linkTypes": ["ether"]}


def test_no_rdma_message_names_each_host():
    with pytest.raises(RdmaFactsError) as err:
        k8s_rdma.shared_dev_selectors({"node9": facts("no-rdma"), "node8": facts("roce-portdown")}, link_layers=["InfiniBand"])
    msg = str(err.value)
    assert "node9: no RDMA devices" in msg
    assert "node8: mlx5_0:1 ACTIVE, mlx5_1:1 DOWN" in msg


def test_sriov_selectors_from_vfs():
    sel = k8s_rdma.sriov_vf_selectors([facts("roce-a"), facts("roce-b")])
    assert sel == {"vendors": ["15b3"], "devices": ["101e"], "drivers": ["mlx5_core"], "pfNames": ["ens1f0"],
                   "linkTypes": ["ether"], "isRdma": True}
    with pytest.raises(RdmaFactsError, match="no ACTIVE RDMA SR-IOV virtual function"):
        k8s_rdma.sriov_vf_selectors(facts("roce-a"))


def test_shared_dev_plugin_config_validates_against_upstream_schema():
    doc = k8s_rdma.shared_dev_plugin_config(
        [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "link_layers": ["Ethernet"]},
         {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 10, "selectors": {"ifNames": ["ens9"]}},
         {"resourceName": "rdma_shared_device_c", "link_layers": ["InfiniBand"]}],
        [facts("roce-a"), facts("ib-a")], periodic_update_interval=300)
    jsonschema.validate(doc, schema("rdma_shared_device_plugin.json"))
    assert doc["periodicUpdateInterval"] == 300
    a, b, c = doc["configList"]
    assert a == {"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63,
                 "selectors": {"vendors": ["15b3"], "deviceIDs": ["101d"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0"],
                               "linkTypes": ["ether"]}}
    assert b == {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 10, "selectors": {"ifNames": ["ens9"]}}
    assert c == {"resourceName": "rdma_shared_device_c", "rdmaHcaMax": 63,
                 "selectors": {"vendors": ["15b3"], "deviceIDs": ["1013"], "drivers": ["mlx5_core"], "ifNames": ["ib0"],
                               "linkTypes": ["infiniband"]}}


def test_overlapping_resources_fail_naming_the_nodes_and_devices():
    # what this test's config was before issue 19: every port in a, ib0 again in b (explicit) and c (derived)
    with pytest.raises(RdmaFactsError) as err:
        k8s_rdma.shared_dev_plugin_config(
            [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63},
             {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 10, "selectors": {"ifNames": ["ib0"]}},
             {"resourceName": "rdma_shared_device_c", "link_layers": ["InfiniBand"]}],
            {"roce-a": facts("roce-a"), "ib-a and 7 more": facts("ib-a")})
    assert str(err.value) == (
        "the shared device plugin resources overlap (a device may be in one resource only; give them disjoint "
        "link_layers, rdma_devices or split parts, or per node pool lists): on node(s) ib-a and 7 more, device "
        "mlx5_0:1 (ib0) is selected by rdma_shared_device_a and rdma_shared_device_b and rdma_shared_device_c")


@pytest.mark.parametrize("resources, message", [
    ([], "non-empty list"),
    ([{"resourceName": "rdma/a"}], "resourceName must match"),
    ([{"resourceName": "a"}, {"resourceName": "a"}], "used twice"),
    ([{"resourceName": "a", "rdmaHcaMax": -1}], "rdmaHcaMax must be an integer >= 0"),
])
def test_shared_dev_plugin_config_rejects_bad_resources(resources, message):
    with pytest.raises(RdmaFactsError, match=message):
        k8s_rdma.shared_dev_plugin_config(resources, facts("roce-a"))


def test_sriov_dp_config_validates_against_upstream_schemas():
    doc = k8s_rdma.sriov_dp_config([], facts("roce-b"))
    jsonschema.validate(doc, schema("sriov_network_device_plugin.json"))
    for res in doc["resourceList"]:
        jsonschema.validate(res, schema("net_device.json"))
    assert doc["resourceList"][0]["resourceName"] == "sriov_rdma_vf"
    assert doc["resourceList"][0]["selectors"]["isRdma"] is True


def test_node_labels():
    p = "rdma.fabric"
    assert k8s_rdma.node_labels(facts("roce-gid3")) == {
        p + "/capable": "true", p + "/link-layer": "Ethernet", p + "/roce-v2-gid-index": "3"}
    assert k8s_rdma.node_labels(facts("ib-a"), prefix="example.com") == {
        "example.com/capable": "true", "example.com/link-layer": "InfiniBand"}
    assert k8s_rdma.node_labels(facts("no-rdma")) == {p + "/capable": "false"}
    assert k8s_rdma.node_labels(facts("lab1")) == {p + "/capable": "false"}
    assert k8s_rdma.node_labels(facts("lab1"), include_soft=True)[p + "/roce-v2-gid-index"] == "1"
    mixed = facts("roce-a")
    mixed["devices"] += facts("ib-a")["devices"]
    labels = k8s_rdma.node_labels(mixed)
    assert labels[p + "/link-layer"] == "Mixed" and labels[p + "/roce-v2-gid-index"] == "5"
    # two RoCE ports with different indices: no index label
    gid = facts("roce-gid3")
    gid["devices"][1]["ports"][0]["roce_v2_ipv4_gid_index"] = 7
    assert p + "/roce-v2-gid-index" not in k8s_rdma.node_labels(gid)
    with pytest.raises(RdmaFactsError, match="DNS subdomain"):
        k8s_rdma.node_labels(facts("ib-a"), prefix="RDMA_fabric")
    with pytest.raises(RdmaFactsError, match="per node"):
        k8s_rdma.node_labels([facts("ib-a"), facts("ib-b")])
    assert k8s_rdma.node_label_keys("rdma.fabric") == [
        "rdma.fabric/capable", "rdma.fabric/link-layer", "rdma.fabric/roce-v2-gid-index", "rdma.fabric/nccl-pool"]
    # the pool id label (issue 19), also on nodes without RDMA
    assert k8s_rdma.node_labels(facts("no-rdma"), nccl_pool="none-4f53cda1") == {
        "rdma.fabric/capable": "false", "rdma.fabric/nccl-pool": "none-4f53cda1"}
    assert k8s_rdma.node_labels(facts("ib-a"), nccl_pool="ib1-28170814")["rdma.fabric/nccl-pool"] == "ib1-28170814"
    with pytest.raises(RdmaFactsError, match="nccl_pool must be a node pool id"):
        k8s_rdma.node_labels(facts("ib-a"), nccl_pool="Pool_1")


def test_cni_configs():
    mac = k8s_rdma.cni_config({"name": "rdma-net-a", "type": "macvlan", "master": "ens1f0", "mtu": 9000,
                               "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"]}})
    assert mac == {"cniVersion": "0.3.1", "name": "rdma-net-a", "type": "macvlan", "master": "ens1f0", "mode": "bridge",
                   "mtu": 9000, "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"]}}
    hd = k8s_rdma.cni_config({"name": "vf", "type": "host-device", "device": "ens1f0v0",
                              "ipam": {"type": "host-local", "subnet": "10.10.0.0/24", "rangeStart": "10.10.0.10",
                                       "rangeEnd": "10.10.0.50", "gateway": None}})
    assert hd["device"] == "ens1f0v0"
    assert hd["ipam"] == {"type": "host-local", "subnet": "10.10.0.0/24", "rangeStart": "10.10.0.10", "rangeEnd": "10.10.0.50"}
    ipoib = json.loads(k8s_rdma.cni_config_json({"name": "ib", "type": "ipoib", "master": "ib0",
                                                 "ipam": {"type": "nv-ipam", "poolName": "pool"}}))
    assert ipoib == {"cniVersion": "0.3.1", "name": "ib", "type": "ipoib", "master": "ib0",
                     "ipam": {"type": "nv-ipam", "poolName": "pool"}}


@pytest.mark.parametrize("network, message", [
    ({"name": "Bad_Name", "type": "macvlan"}, "DNS-1123 label"),
    ({"name": "n", "type": "sriov"}, "'type' must be one of macvlan, host-device, ipoib"),
    ({"name": "n", "type": "macvlan", "ipam": {"type": "whereabouts", "range": "1.2.3.0/24"}}, "'master' is required"),
    ({"name": "n", "type": "macvlan", "master": "e", "mode": "l2", "ipam": {"type": "whereabouts"}}, "'mode' must be one of bridge"),
    ({"name": "n", "type": "host-device", "ipam": {"type": "host-local"}}, "needs 'device'"),
    ({"name": "n", "type": "ipoib", "master": "ib0", "mtu": 10, "ipam": {}}, "'mtu' must be an integer"),
    ({"name": "n", "type": "ipoib", "master": "ib0"}, "must be a dict with a 'type'"),
    ({"name": "n", "type": "ipoib", "master": "ib0", "ipam": {"type": "whereabouts", "range": "300.1.1.0/24"}}, "'range' must be a CIDR"),
    ({"name": "n", "type": "ipoib", "master": "ib0",
      "ipam": {"type": "host-local", "subnet": "10.0.0.0/24", "gateway": "10.0.1.1"}}, "outside subnet"),
])
def test_cni_config_rejects_bad_networks(network, message):
    with pytest.raises(RdmaFactsError, match=message):
        k8s_rdma.cni_config(network)


@pytest.mark.parametrize("fixture, tree", [
    ("roce-a", "derived_roce_mlx5_ofed"),
    ("ib-a", "derived_ib_mlx5_ipoib"),
])
def test_fixture_facts_are_what_rdma_device_facts_reads(fixture, tree):
    """The derived fixture facts used here are what the collection's own facts
    gatherer (module_utils/facts/rdma_facts.py, behind rdma_device_facts) returns for
    the derived sysfs trees they come from (the trees carry no kernel modules
    or driver-stack markers, so only devices and netdevs are compared)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts

    sysfs = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "sysfs", tree, "sys")
    real = gather_rdma_facts(sysfs_path=sysfs)
    mine = facts(fixture)
    assert real["schema_version"] == mine["schema_version"] == 1
    assert real["devices"] == mine["devices"]
    assert real["netdevs"] == mine["netdevs"]
    assert sorted(real["modules"]) == sorted(mine["modules"])


# --- the role's own variables (check_role_vars) -------------------------------------------------

def _defaults():
    import yaml

    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "roles", "k8s_rdma_stack", "defaults", "main.yml")
    with open(path) as f:
        return yaml.safe_load(f)


def test_role_defaults_pass_the_check():
    assert k8s_rdma.check_role_vars(_defaults()) == []


@pytest.mark.parametrize("name, value, allowed", [
    ("namespace", "Kube System", "a Kubernetes namespace name"),
    ("namespace", "kube-system\n", "a Kubernetes namespace name"),
    ("registry_mirror", "reg istry:5000", "empty, or a registry host[:port][/path]"),
    ("multus_image", "ghcr.io/Org/Multus", "an image reference without tag"),
    ("multus_version", "v4.2.4\nEVIL", "an image tag"),
    ("wait_timeout", 0, "a whole number of seconds from 1 to 86400"),
    ("wait_timeout", 10 ** 9, "a whole number of seconds from 1 to 86400"),
    ("field_manager", "rdma fabric", "1-128 printable characters"),
    ("nccl_configmap_name", "NCCL_env", "a ConfigMap name"),
    ("nccl_configmap_name", "x" * 190, "a ConfigMap name (DNS subdomain, at most 189 characters"),
    ("nccl_namespaces", [], "a non-empty list of namespace names"),
    ("nccl_pod_interface", "eth 0", "a network interface name inside the pod"),
    ("nccl_pod_interface", "", "a network interface name inside the pod"),
    ("nccl_network", "Rdma_Net", "empty, or the name of an entry of k8s_rdma_stack_networks"),
    ("nccl_extra_env", {"NCCL DEBUG": "INFO"}, "a dict of environment variable names"),
    ("node_selector", {"rdma/capable": True}, "a dict of label keys to label values"),
    ("network_operator_chart_repo_url", "helm.ngc.nvidia.com/nvidia", "an http(s):// or oci:// URL"),
    ("network_operator_release_name", "x" * 54, "a Helm release name"),
    ("image_pull_secrets", ["Bad_Secret"], "a list of Secret names"),
    ("output_dir", "out\x00put", "a path or name without NUL or line breaks"),
])
def test_role_var_errors_name_the_variable_and_the_allowed_values(name, value, allowed):
    values = _defaults()
    values["k8s_rdma_stack_" + name] = value
    errors = k8s_rdma.check_role_vars(values)
    assert len(errors) == 1, errors
    assert errors[0].startswith("k8s_rdma_stack_%s: %r is not allowed; allowed: %s" % (name, value, allowed))


@pytest.mark.parametrize("name, value, message", [
    ("nccl_tc", 300, "k8s_rdma_stack_nccl_tc: tc must be an integer 0-255"),
    ("nccl_gid_index", "sometimes", "k8s_rdma_stack_nccl_gid_index: gid_index must be one of auto, omit or an integer"),
    ("node_label_prefix", "RDMA_fabric", "k8s_rdma_stack_node_label_prefix: label prefix must be a DNS subdomain"),
    ("shared_devices", [{"resourceName": "a-b"}], "k8s_rdma_stack_shared_devices: shared device resource 0: resourceName must match"),
    ("shared_devices", [{"resourceName": "a", "selectors": {"colour": ["red"]}}],
     "k8s_rdma_stack_shared_devices: shared device resource a: unknown selector colour; allowed: vendors"),
    ("shared_devices", [{"resourceName": "a", "split": {"part": 2}}],
     "k8s_rdma_stack_shared_devices: shared device resource a: split must be {part: P, parts: N} with integers 1 <= P <= N"),
    ("shared_devices_pools", {"roce2-0123abcd": [{"resourceName": "a", "split": {"part": 0, "parts": 2}}]},
     "k8s_rdma_stack_shared_devices_pools: pool roce2-0123abcd: shared device resource a: split must be"),
    ("shared_devices_pools", [], "k8s_rdma_stack_shared_devices_pools: must be a dict of node pool name"),
    ("nccl_link_layers", ["Ethernet", "OmniPath"], "k8s_rdma_stack_nccl_link_layers: link_layers: unknown link layer(s) OmniPath"),
    ("networks", [{"name": "n", "type": "bridge", "ipam": {"type": "host-local", "subnet": "10.0.0.0/24"}}],
     "k8s_rdma_stack_networks[0]: network n: 'type' must be one of macvlan, host-device, ipoib"),
    ("networks", [{"name": "n", "type": "host-device", "device": "e", "namespace": "Team A",
                   "ipam": {"type": "host-local", "subnet": "10.0.0.0/24"}}],
     "k8s_rdma_stack_networks[0]: namespace 'Team A' is not a namespace name"),
    ("sriov_resources", [{"resourceName": "vf-x"}], "k8s_rdma_stack_sriov_resources: sriov resource 0: resourceName must match"),
    ("nccl_network", "rdma-net-a",
     "k8s_rdma_stack_nccl_network: 'rdma-net-a' is not the name of a network in k8s_rdma_stack_networks (networks: none)"),
    ("networks", [{"name": "n", "type": "host-device", "device": "e", "pod_interface": "net/1",
                   "ipam": {"type": "host-local", "subnet": "10.0.0.0/24"}}],
     "k8s_rdma_stack_networks[0]: pod_interface 'net/1' is not allowed; allowed: a network interface name inside the pod"),
])
def test_role_var_errors_from_the_rendering_rules(name, value, message):
    values = _defaults()
    values["k8s_rdma_stack_" + name] = value
    errors = k8s_rdma.check_role_vars(values)
    assert len(errors) == 1 and errors[0].startswith(message), errors


# --- issue 33: linkTypes, and one link type per resource ----------------------------------------------------

def test_mixed_pool_default_halves_each_carry_their_link_type():
    """vpi-mixed: a ConnectX-7 with port 1 InfiniBand (mlx5_0, ib0) and port 2 Ethernet (mlx5_1, ens1f1). The
    default halves give a = ib0, b = ens1f1, each selector with its link type, so the plugin cannot put an
    Ethernet port in a or an InfiniBand port in b even though vendor, device ID and driver are the same."""
    defaults = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "split": {"part": 1, "parts": 2}},
                {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 63, "split": {"part": 2, "parts": 2}}]
    layout = k8s_rdma.shared_dev_plugin_layout(defaults, {"vpi-1": facts("vpi-mixed")})
    jsonschema.validate(layout["config"], schema("rdma_shared_device_plugin.json"))
    assert [(e["resourceName"], e["selectors"]["ifNames"], e["selectors"]["linkTypes"])
            for e in layout["config"]["configList"]] == [
        ("rdma_shared_device_a", ["ib0"], ["infiniband"]), ("rdma_shared_device_b", ["ens1f1"], ["ether"])]
    assert layout["link_splits"] == {}


def test_mixed_pool_resource_is_split_by_link_type():
    """One resource over every port of a mixed pool would hold ib0 and ens1f1: it is given as
    rdma_shared_device_a_ib and rdma_shared_device_a_eth there (and the pool does not give rdma_shared_device_a)."""
    one = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63}]
    layout = k8s_rdma.shared_dev_plugin_layout(one, {"vpi-1 and 3 more": facts("vpi-mixed")}, periodic_update_interval=300)
    jsonschema.validate(layout["config"], schema("rdma_shared_device_plugin.json"))
    assert layout["config"]["configList"] == [
        {"resourceName": "rdma_shared_device_a_ib", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ib0"], "linkTypes": ["infiniband"]}},
        {"resourceName": "rdma_shared_device_a_eth", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f1"], "linkTypes": ["ether"]}}]
    assert layout["link_splits"] == {"vpi-1 and 3 more": {"rdma_shared_device_a": ["rdma_shared_device_a_ib",
                                                                                   "rdma_shared_device_a_eth"]}}
    assert sorted(layout["per_pool"]["vpi-1 and 3 more"]) == ["rdma_shared_device_a_eth", "rdma_shared_device_a_ib"]
    # the plugin's matching (pod_check) agrees: each device is in exactly the resource of its link type
    from ansible_collections.rdma.fabric.plugins.plugin_utils import pod_check
    entries = dict((e["resourceName"], e) for e in layout["config"]["configList"])
    assert pod_check.matches("shared", entries["rdma_shared_device_a_ib"], facts("vpi-mixed"))[0] == ["mlx5_0:1"]
    assert pod_check.matches("shared", entries["rdma_shared_device_a_eth"], facts("vpi-mixed"))[0] == ["mlx5_1:1"]


def test_mixed_pool_beside_an_ethernet_pool_overlaps_and_a_taken_name_is_refused():
    """With an all-Ethernet pool, rdma_shared_device_a's merged selectors (ens1f0, ens1f1, ether) also select the
    mixed nodes' ens1f1, which is in rdma_shared_device_a_eth there: the role refuses, naming it (per-pool lists
    resolve it)."""
    one = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63}]
    with pytest.raises(RdmaFactsError, match=r"on node\(s\) vpi-1, device mlx5_1:1 \(ens1f1\) is selected by "
                                             r"rdma_shared_device_a and rdma_shared_device_a_eth"):
        k8s_rdma.shared_dev_plugin_config(one, {"gpu-7": facts("roce-gid3"), "vpi-1": facts("vpi-mixed")})
    taken = one + [{"resourceName": "rdma_shared_device_a_ib", "rdmaHcaMax": 63, "rdma_devices": ["mlx9_*"]}]
    with pytest.raises(RdmaFactsError, match="shared device resource rdma_shared_device_a has InfiniBand and Ethernet "
                                             "ports on node.s. vpi-1; .* but rdma_shared_device_a_ib is already a "
                                             "resource: give the resources link_layers"):
        k8s_rdma.shared_dev_plugin_config(taken, {"vpi-1": facts("vpi-mixed")})


def test_shared_dev_gaps_name_the_pool_and_why():
    """The default split resources (pools in name order): a two-port pool gives both halves a port; a one-port pool
    has no second half; a pool whose second half is a DOWN port gives it no ACTIVE port; a resource no pool places is
    left out."""
    defaults = [{"resourceName": "rdma_shared_device_a", "split": {"part": 1, "parts": 2}},
                {"resourceName": "rdma_shared_device_b", "split": {"part": 2, "parts": 2}}]
    assert k8s_rdma.shared_dev_gaps(defaults, {"gpu-7": facts("roce-gid3")}) == []
    gaps = k8s_rdma.shared_dev_gaps(defaults, {"gpu-7": facts("roce-gid3"), "roce-a": facts("roce-a"),
                                               "gpu-9": facts("roce-portdown")})
    assert gaps == [
        "the node pool of gpu-9 gives no ACTIVE RDMA port to rdma/rdma_shared_device_b: its part 2 of 2 (mlx5_1:1 "
        "DOWN) has no ACTIVE port; pods asking for rdma/rdma_shared_device_b do not run on its nodes (they stay "
        "Pending)",
        "the node pool of roce-a gives no ACTIVE RDMA port to rdma/rdma_shared_device_b: it has 1 RDMA port(s) to "
        "share out (mlx5_0:1) and part 2 of 2 is empty: a device is in at most one resource; pods asking for "
        "rdma/rdma_shared_device_b do not run on its nodes (they stay Pending)"]
    gaps = k8s_rdma.shared_dev_gaps(defaults, {"roce-a": facts("roce-a")})
    assert gaps[-1].startswith("rdma_shared_device_b is left out of the config: no node pool gives it an ACTIVE")
    # explicit selectors are the user's: no gap is computed for them
    assert k8s_rdma.shared_dev_gaps([{"resourceName": "x", "selectors": {"vendors": ["15b3"]}}], facts("roce-a")) == []
