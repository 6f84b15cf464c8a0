# -*- coding: utf-8 -*-
"""Render-mode tests of the rdma.fabric.k8s_rdma_stack role.

Each scenario runs the real role with ansible-playbook (render only:
k8s_rdma_stack_apply=false, output under tmp_path) against an inventory of
fixture hosts. The first play of render.yml is a TEST DOUBLE for
rdma.fabric.rdma_device_facts: it loads each host's ansible_facts.rdma from a
derived fixture JSON file (tests/unit/fixtures/k8s/facts, see the README
there), because the fixture hosts do not exist.

No Kubernetes API server can run here, so every rendered file is validated
offline instead:

* built-in kinds with kubernetes-validate --strict (upstream OpenAPI schemas);
* the k8s-rdma-shared-dev-plugin and sriov-network-device-plugin config.json
  against the upstream JSON schemas (tests/unit/fixtures/k8s/schemas);
* NetworkAttachmentDefinition and NicClusterPolicy against the
  openAPIV3Schema of their upstream CRDs, and the CNI JSON of each NAD parses.

And every scenario's files are compared with what the role rendered for the same
inputs before it wrote all files in one task (tests/unit/fixtures/k8s/rendered,
captured at commit 9b5fd48): the same content, byte for byte, under the new names
(the position prefix NNN- is gone: files are named by object identity).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import shutil
import subprocess
import sys

import jsonschema
import kubernetes_validate
import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "k8s")
PLAYBOOK = os.path.join(HERE, "render.yml")
K8S_VERSION = "1.33.0"
BUILTIN_API_VERSIONS = ("v1", "apps/v1", "rbac.authorization.k8s.io/v1", "apiextensions.k8s.io/v1")


def _collection_root():
    """The ansible_collections parent folder (the tests run from .../ansible_collections/rdma/fabric)."""
    import ansible_collections.rdma.fabric.plugins.plugin_utils.nccl as mod

    path = os.path.dirname(mod.__file__)
    for dummy in range(5):
        path = os.path.dirname(path)
    return path


def _repo_root():
    import ansible_collections.rdma.fabric.plugins.plugin_utils.nccl as mod

    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(mod.__file__))))


def run_role(workdir, hosts, role_vars, expect_rc=0, extra_args=()):
    """Run render.yml with the fixture hosts; returns (CompletedProcess, output dir)."""
    workdir = str(workdir)
    if not os.path.isdir(workdir):
        os.makedirs(workdir)
    out = os.path.join(workdir, "out")
    paths = {}
    for name, fixture in hosts.items():
        if isinstance(fixture, dict):  # facts derived by the test itself, written next to the inventory
            paths[name] = os.path.join(workdir, "facts-%s.json" % name)
            with open(paths[name], "w") as f:
                json.dump(fixture, f)
        else:
            paths[name] = os.path.join(FIXTURES, "facts", fixture + ".json")
    inventory = {"all": {
        "hosts": {"localhost": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}},
        "children": {"rdma_nodes": {"hosts": dict((name, {"rdma_fixture": path}) for name, path in paths.items())}},
    }}
    with open(os.path.join(workdir, "inventory.yml"), "w") as f:
        yaml.safe_dump(inventory, f)
    all_vars = {"k8s_rdma_stack_apply": False, "k8s_rdma_stack_output_dir": out}
    all_vars.update(role_vars)
    with open(os.path.join(workdir, "vars.json"), "w") as f:
        json.dump(all_vars, f)
    env = dict(os.environ)
    env.update({
        "ANSIBLE_CONFIG": os.path.join(_repo_root(), "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": _collection_root(),
        "ANSIBLE_CACHE_PLUGIN": "memory",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCAL_TEMP": os.path.join(workdir, "tmp"),
        "ANSIBLE_RETRY_FILES_ENABLED": "0",
    })
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run(
        [ansible_playbook, "-i", os.path.join(workdir, "inventory.yml"), "-e", "@" + os.path.join(workdir, "vars.json")]
        + list(extra_args) + [PLAYBOOK],
        env=env, cwd=workdir, check=False, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, timeout=600)
    assert proc.returncode == expect_rc, proc.stdout[-6000:]
    return proc, out


def _load(path):
    with open(path) as f:
        return yaml.safe_load(f)


def _schema(name):
    path = os.path.join(FIXTURES, "schemas", name)
    with open(path) as f:
        return json.load(f) if name.endswith(".json") else yaml.safe_load(f)


def _crd_schema(name):
    crd = _schema(name)
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def validate_shared_dp_config(text):
    doc = json.loads(text)
    jsonschema.validate(doc, _schema("rdma_shared_device_plugin.json"))
    return doc


def validate_sriov_dp_config(text):
    doc = json.loads(text)
    jsonschema.validate(doc, _schema("sriov_network_device_plugin.json"))
    per_type = {"netDevice": "net_device.json", "auxNetDevice": "aux_net_device.json", "accelerator": "accelerator_selector.json"}
    for res in doc["resourceList"]:
        jsonschema.validate(res, _schema(per_type[res.get("deviceType", "netDevice")]))
    return doc


def validate_object(obj):
    """Validate one rendered object the way its kind allows; returns what was checked."""
    api, kind = obj["apiVersion"], obj["kind"]
    if api in BUILTIN_API_VERSIONS:
        kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        checked = ["kubernetes-validate --strict"]
        if kind == "ConfigMap" and obj["metadata"]["name"] == "rdma-devices":
            validate_shared_dp_config(obj["data"]["config.json"])
            checked.append("rdma_shared_device_plugin.json")
        if kind == "ConfigMap" and obj["metadata"]["name"] == "sriovdp-config":
            validate_sriov_dp_config(obj["data"]["config.json"])
            checked.append("sriov_network_device_plugin.json")
        return checked
    if kind == "NetworkAttachmentDefinition":
        assert api == "k8s.cni.cncf.io/v1"
        jsonschema.Draft7Validator(_crd_schema("k8s.cni.cncf.io_networkattachmentdefinitions_crd.json")).validate(obj)
        cni = json.loads(obj["spec"]["config"])
        assert cni["name"] == obj["metadata"]["name"]
        if "plugins" in cni:  # a conflist (CNI spec): the network's plugin, then rdma-cni (exclusive netns mode)
            assert set(cni) == {"cniVersion", "name", "plugins"} and cni["plugins"][1:] == [{"type": "rdma"}]
            cni = cni["plugins"][0]
        assert cni["type"] in ("macvlan", "host-device", "ipoib")
        assert cni["ipam"]["type"]
        return ["NAD CRD openAPIV3Schema", "CNI JSON"]
    if kind == "IPPool":
        assert api == "nv-ipam.nvidia.com/v1alpha1"
        jsonschema.Draft7Validator(_crd_schema("nv-ipam.nvidia.com_ippools.json")).validate(obj)
        return ["IPPool CRD openAPIV3Schema"]
    if kind == "NodeFeatureRule":
        assert api == "nfd.k8s-sigs.io/v1alpha1"
        jsonschema.Draft7Validator(_crd_schema("nfd.k8s-sigs.io_nodefeaturerules.json")).validate(obj)
        return ["NodeFeatureRule CRD openAPIV3Schema"]
    if kind == "NicClusterPolicy":
        assert api == "mellanox.com/v1alpha1"
        jsonschema.Draft7Validator(_crd_schema("mellanox.com_nicclusterpolicies.json")).validate(obj)
        validate_shared_dp_config(obj["spec"]["rdmaSharedDevicePlugin"]["config"])
        if "sriovDevicePlugin" in obj["spec"]:
            validate_sriov_dp_config(obj["spec"]["sriovDevicePlugin"]["config"])
        return ["NicClusterPolicy CRD openAPIV3Schema"]
    raise AssertionError("no validation known for %s %s" % (api, kind))


def validate_output(out):
    """Validate every rendered object file; returns {(kind, namespace, name): object} and the file list."""
    objects = {}
    files = []
    for sub in ("", "node-labels"):
        folder = os.path.join(out, sub)
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if os.path.isdir(path) or name in ("kustomization.yaml", "network-operator-values.yaml",
                                               "gpu-operator-values.yaml"):
                continue
            files.append(os.path.join(sub, name) if sub else name)
            obj = _load(path)
            assert validate_object(obj), path
            key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
            assert key not in objects, "duplicate object %s" % (key,)
            objects[key] = obj
    kustomization = _load(os.path.join(out, "kustomization.yaml"))
    # in apply order, every object file but the node patches
    assert sorted(kustomization["resources"]) == [f for f in files if not f.startswith("node-labels/")]
    return objects, files


def _old_to_new(name):
    """What the role names a file now that it named NNN-<kind>-... before."""
    return re.sub(r"(^|/)[0-9]{3}-", r"\1", name)


# Issue 19 changed the NCCL ConfigMaps (one per node pool, named <name>-<pool id>, pod-side settings) and added the
# <prefix>/nccl-pool node label; the scenarios assert those themselves. Everything else is compared with the capture.
_NCCL_FILE = re.compile(r"configmap-[a-z0-9-]+-rdma-nccl-env(-[a-z0-9-]+)?\.yaml")
_NCCL_POOL_LABEL = re.compile(r"(?m)^    rdma\.fabric/nccl-pool: [a-z0-9-]+\n")


def _without_nccl(name, text):
    """None for an NCCL ConfigMap file; else the text without NCCL ConfigMap entries and nccl-pool labels."""
    if _NCCL_FILE.fullmatch(os.path.basename(name)):
        return None
    if name == "kustomization.yaml":
        text = "".join(line for line in text.splitlines(True) if not _NCCL_FILE.fullmatch(line[2:].rstrip("\n")))
    return _NCCL_POOL_LABEL.sub("", text)


def _without_link_types(config_text):
    doc = json.loads(config_text)
    for entry in (doc.get("configList") or []) + (doc.get("resourceList") or []):
        (entry.get("selectors") or {}).pop("linkTypes", None)
    return doc


def _issue33_view(text):
    """A rendered object with what issue 33 added on purpose taken out, for the comparison with the capture: the
    linkTypes of the device plugins' selectors (each checked by the scenarios), the checksum annotation of each
    config on its plugin's DaemonSet, and Multus's --cleanup-config-on-exit (test_multus_only_when_asked)."""
    obj = yaml.safe_load(text)
    if not isinstance(obj, dict):
        return obj
    kind, name = obj.get("kind"), (obj.get("metadata") or {}).get("name")
    if kind == "ConfigMap" and name in ("rdma-devices", "sriovdp-config"):
        obj["data"]["config.json"] = _without_link_types(obj["data"]["config.json"])
    elif kind == "DaemonSet" and name in ("rdma-shared-dp-ds", "kube-sriov-device-plugin"):
        obj["spec"]["template"]["metadata"]["annotations"].pop("rdma.fabric/config-sha256")
    elif kind == "NicClusterPolicy":
        for plugin in ("rdmaSharedDevicePlugin", "sriovDevicePlugin"):
            if plugin in obj["spec"]:
                obj["spec"][plugin]["config"] = _without_link_types(obj["spec"][plugin]["config"])
    elif kind == "DaemonSet" and name == "kube-multus-ds":
        args = obj["spec"]["template"]["spec"]["containers"][0]["args"]
        obj["spec"]["template"]["spec"]["containers"][0]["args"] = [a for a in args if a != "--cleanup-config-on-exit=true"]
    return obj


ISSUE33_FILES = re.compile(r"(configmap-kube-system-(rdma-devices|sriovdp-config)|daemonset-kube-system-(rdma-shared-dp-ds"
                           r"|kube-sriov-device-plugin|kube-multus-ds)|nicclusterpolicy-nic-cluster-policy)\.yaml")


def assert_unchanged_except_names(out, scenario):
    """The rendered folder holds what the role rendered before for the same inputs, under the new names (NCCL aside):
    byte for byte, except the files issue 33 changed on purpose, which are equal once its additions are taken out."""
    with open(os.path.join(FIXTURES, "rendered", scenario + ".json")) as f:
        before = json.load(f)["files"]
    expected = {}
    for name, text in before.items():
        if name == "kustomization.yaml":
            text = re.sub(r"(?m)^- [0-9]{3}-", "- ", text)
        name = _old_to_new(name)
        text = _without_nccl(name, text)
        if text is not None:
            expected[name] = text
    now = {}
    for root, _dirs, names in os.walk(out):
        for name in names:
            path = os.path.join(root, name)
            with open(path) as f:
                text = _without_nccl(os.path.relpath(path, out), f.read())
            if text is not None:
                now[os.path.relpath(path, out)] = text
    assert sorted(now) == sorted(expected)
    for name in sorted(expected):
        if ISSUE33_FILES.fullmatch(name):
            assert _issue33_view(now[name]) == _issue33_view(expected[name]), name
        else:
            assert now[name] == expected[name], name


def nccl_maps(objects, namespace="default"):
    """{pool id: data} of the NCCL ConfigMaps of a namespace; no other ConfigMap name starts with rdma-nccl-env."""
    out = {}
    for (kind, ns, name), obj in objects.items():
        if kind == "ConfigMap" and ns == namespace and name.startswith("rdma-nccl-env"):
            assert name.startswith("rdma-nccl-env-"), name  # the union ConfigMap is gone (issue 19)
            pool = name[len("rdma-nccl-env-"):]
            assert obj["metadata"]["labels"]["rdma.fabric/nccl-pool"] == pool
            out[pool] = obj["data"]
    return out


def nccl_pools(objects):
    """{node name: its rdma.fabric/nccl-pool label}."""
    return dict((key[2], obj["metadata"]["labels"].get("rdma.fabric/nccl-pool"))
                for key, obj in objects.items() if key[0] == "Node")


# Pool ids (node_pools' pool names) of the fixture layouts: stable as long as the layouts are.
ROCE_A, ROCE_B, IB, NO_RDMA = "roce1-16721fd0", "roce2-7d4579c1", "ib1-28170814", "none-4f53cda1"
GID3, PORTDOWN = "roce2-48d0ccaf", "roce2-cbe794e8"


def daemonset_images(objects):
    return dict(
        (key[2], [c["image"] for c in obj["spec"]["template"]["spec"].get("initContainers", []) + obj["spec"]["template"]["spec"]["containers"]])
        for key, obj in objects.items() if key[0] == "DaemonSet")


# --- scenarios ------------------------------------------------------------------

ROCE_NETWORKS = [{"name": "rdma-net-a", "namespace": "training", "type": "macvlan", "master": "ens1f0", "mtu": 9000,
                  "resource_name": "rdma/rdma_shared_device_a",
                  "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"]}}]


def _render_roce_only(work):
    # Multus asked for: the capture had it (the default before issue 33)
    role_vars = {"k8s_rdma_stack_sriov_device_plugin_enabled": True, "k8s_rdma_stack_networks": ROCE_NETWORKS,
                 "k8s_rdma_stack_multus_enabled": True}
    hosts = {"roce-a": "roce-a", "roce-b": "roce-b"}
    first, out = run_role(work, hosts, role_vars)
    objects, files = validate_output(out)
    second, _out = run_role(work, hosts, role_vars)
    return {"work": work, "out": out, "objects": objects, "files": files, "first": first, "second": second,
            "hosts": hosts, "vars": role_vars}


@pytest.fixture(name="roce_only")
def fixture_roce_only(shared):
    """The two runs of the RoCE-only scenario, made once for the tests that read them (shared: conftest.py)."""
    return shared.once("k8s_rdma_stack_roce_only", _render_roce_only)


def test_roce_only_objects_and_schemas(roce_only):
    objects = roce_only["objects"]
    kinds = sorted(set(k[0] for k in objects))
    assert kinds == ["ClusterRole", "ClusterRoleBinding", "ConfigMap", "CustomResourceDefinition", "DaemonSet",
                     "NetworkAttachmentDefinition", "Node", "ServiceAccount"]
    assert set(daemonset_images(objects)) == {"kube-multus-ds", "whereabouts", "rdma-shared-dp-ds", "kube-sriov-device-plugin"}
    assert daemonset_images(objects)["rdma-shared-dp-ds"] == ["ghcr.io/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3"]
    assert daemonset_images(objects)["kube-multus-ds"] == ["ghcr.io/k8snetworkplumbingwg/multus-cni:v4.2.4"] * 2
    assert daemonset_images(objects)["whereabouts"] == ["ghcr.io/k8snetworkplumbingwg/whereabouts:v0.9.3"]
    assert daemonset_images(objects)["kube-sriov-device-plugin"] == ["ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin:v3.9.0"]
    for name in ("network-attachment-definitions.k8s.cni.cncf.io", "ippools.whereabouts.cni.cncf.io",
                 "overlappingrangeipreservations.whereabouts.cni.cncf.io"):
        assert ("CustomResourceDefinition", None, name) in objects
    assert ("ServiceAccount", "kube-system", "rdma-shared-dev-plugin") in objects
    assert not any(k[0] == "NicClusterPolicy" for k in objects)


def test_roce_only_selectors_from_facts(roce_only):
    cm = roce_only["objects"][("ConfigMap", "kube-system", "rdma-devices")]
    config = json.loads(cm["data"]["config.json"])
    assert config == {"periodicUpdateInterval": 300, "configList": [{
        "resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63,
        "selectors": {"vendors": ["15b3"], "deviceIDs": ["101d"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0"], "linkTypes": ["ether"]}}]}
    sriov = json.loads(roce_only["objects"][("ConfigMap", "kube-system", "sriovdp-config")]["data"]["config.json"])
    assert sriov["resourceList"] == [{"resourceName": "sriov_rdma_vf", "resourcePrefix": "nvidia.com", "selectors": {
        "vendors": ["15b3"], "devices": ["101e"], "drivers": ["mlx5_core"], "pfNames": ["ens1f0"], "linkTypes": ["ether"],
        "isRdma": True}}]
    ds = roce_only["objects"][("DaemonSet", "kube-system", "rdma-shared-dp-ds")]
    assert ds["spec"]["template"]["spec"]["nodeSelector"] == {"rdma.fabric/capable": "true", "kubernetes.io/os": "linux"}
    assert ds["spec"]["template"]["spec"]["volumes"][2]["configMap"]["name"] == "rdma-devices"


def test_roce_only_nccl_labels_and_network(roce_only):
    objects = roce_only["objects"]
    roce = {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5", "NCCL_IB_TC": "106",
            "NCCL_SOCKET_IFNAME": "=eth0"}
    # roce-b's second port is DOWN: another layout, another pool, the same settings
    assert nccl_maps(objects) == {ROCE_A: roce, ROCE_B: roce}
    for node, pool in (("roce-a", ROCE_A), ("roce-b", ROCE_B)):
        assert objects[("Node", None, node)]["metadata"] == {"name": node, "labels": {
            "rdma.fabric/capable": "true", "rdma.fabric/link-layer": "Ethernet", "rdma.fabric/roce-v2-gid-index": "5",
            "rdma.fabric/nccl-pool": pool}}
    nad = objects[("NetworkAttachmentDefinition", "training", "rdma-net-a")]
    assert nad["metadata"]["annotations"] == {"k8s.v1.cni.cncf.io/resourceName": "rdma/rdma_shared_device_a"}
    assert json.loads(nad["spec"]["config"]) == {
        "cniVersion": "0.3.1", "name": "rdma-net-a", "type": "macvlan", "master": "ens1f0", "mode": "bridge", "mtu": 9000,
        "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"]}}
    assert [f for f in roce_only["files"] if f.startswith("node-labels/")] == [
        "node-labels/node-roce-a.yaml", "node-labels/node-roce-b.yaml"]


def test_roce_only_unchanged_except_names(roce_only):
    assert_unchanged_except_names(roce_only["out"], "roce_only")


def test_roce_only_second_run_changes_nothing(roce_only):
    recap = roce_only["second"].stdout.split("PLAY RECAP")[1]
    assert "localhost                  : ok=" in recap
    localhost_line = [line for line in recap.splitlines() if line.startswith("localhost")][0]
    assert "changed=0" in localhost_line, localhost_line


def test_roce_only_state_absent_removes_rendered_files(roce_only, tmp_path):
    work = str(tmp_path / "work")
    shutil.copytree(roce_only["work"], work, symlinks=True)  # the shared render stays as it is for the other tests
    run_role(work, roce_only["hosts"], dict(roce_only["vars"], k8s_rdma_stack_state="absent"))
    out = os.path.join(work, "out")
    assert sorted(os.listdir(out)) == ["node-labels"]
    assert os.listdir(os.path.join(out, "node-labels")) == []


def test_check_mode_writes_nothing(tmp_path):
    proc, out = run_role(tmp_path, {"roce-a": "roce-a"}, {"k8s_rdma_stack_networks": ROCE_NETWORKS},
                         extra_args=["--check", "--diff"])
    assert not os.path.exists(out)
    assert "+++ after" in proc.stdout and "rdma_shared_device_a" in proc.stdout


def test_mixed_gid_indices_network_operator(tmp_path):
    # Multus asked for and whereabouts kept, as in the capture (before issue 33, which made NV-IPAM the operator's
    # default: test_network_operator_nv_ipam)
    role_vars = {"k8s_rdma_stack_method": "network_operator", "k8s_rdma_stack_networks": ROCE_NETWORKS,
                 "k8s_rdma_stack_multus_enabled": True, "k8s_rdma_stack_ipam": "whereabouts",
                 "k8s_rdma_stack_nccl_namespaces": ["default", "training"],
                 "k8s_rdma_stack_shared_devices": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63,
                                                    "rdma_devices": ["mlx5_0"]},
                                                   {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 8,
                                                    "rdma_devices": ["mlx5_1"]}]}
    _proc, out = run_role(tmp_path, {"roce-a": "roce-a", "gpu-7": "roce-gid3"}, role_vars)
    objects, _files = validate_output(out)
    assert_unchanged_except_names(out, "network_operator")
    # per pool, each with its own GID index (the union had none: the pools disagree)
    for ns in ("default", "training"):
        assert nccl_maps(objects, ns) == {
            ROCE_A: {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5", "NCCL_IB_TC": "106",
                     "NCCL_SOCKET_IFNAME": "=eth0"},
            GID3: {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1,mlx5_1:1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "106",
                   "NCCL_SOCKET_IFNAME": "=eth0"}}
    assert nccl_pools(objects) == {"roce-a": ROCE_A, "gpu-7": GID3}
    ncp = objects[("NicClusterPolicy", None, "nic-cluster-policy")]
    spec = ncp["spec"]
    assert spec["rdmaSharedDevicePlugin"]["repository"] == "nvcr.io/nvidia/mellanox"
    assert spec["rdmaSharedDevicePlugin"]["version"] == "network-operator-v26.1.0"
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])
    # a: mlx5_0 of both pools (ens1f0); until issue 19 a had every port, so mlx5_1 (ens1f1) was in a and b
    assert config["configList"][0]["selectors"] == {"vendors": ["15b3"], "deviceIDs": ["101d", "1021"],
                                                    "drivers": ["mlx5_core"], "ifNames": ["ens1f0"], "linkTypes": ["ether"]}
    assert config["configList"][1] == {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 8, "selectors": {
        "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f1"], "linkTypes": ["ether"]}}
    assert sorted(spec["secondaryNetwork"]) == ["cniPlugins", "multus"]
    assert spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "rdma.fabric/capable", "operator": "In", "values": ["true"]}]}]
    # no plain device plugin / Multus manifests with the operator; whereabouts is still ours
    assert set(daemonset_images(objects)) == {"whereabouts"}
    assert objects[("Node", None, "gpu-7")]["metadata"]["labels"]["rdma.fabric/roce-v2-gid-index"] == "3"
    assert objects[("Node", None, "roce-a")]["metadata"]["labels"]["rdma.fabric/roce-v2-gid-index"] == "5"
    kustomization = _load(os.path.join(out, "kustomization.yaml"))
    assert kustomization["helmCharts"] == [{
        "name": "network-operator", "repo": "https://helm.ngc.nvidia.com/nvidia", "version": "v26.1.0",
        "releaseName": "network-operator", "namespace": "nvidia-network-operator",
        "valuesFile": "network-operator-values.yaml", "includeCRDs": True}]
    assert _load(os.path.join(out, "network-operator-values.yaml")) == {"nfd": {"enabled": True}}


def test_infiniband_only_with_mirror(tmp_path):
    role_vars = {"k8s_rdma_stack_registry_mirror": "registry.example.internal:5000",
                 "k8s_rdma_stack_image_pull_secrets": ["mirror-pull"], "k8s_rdma_stack_multus_enabled": True,
                 "k8s_rdma_stack_networks": [{"name": "ib-net", "type": "ipoib", "master": "ib0",
                                              "resource_name": "rdma/rdma_shared_device_a",
                                              "ipam": {"type": "host-local", "subnet": "10.56.217.0/24",
                                                       "rangeStart": "10.56.217.10", "rangeEnd": "10.56.217.200"}}]}
    _proc, out = run_role(tmp_path, {"ib-a": "ib-a", "ib-b": "ib-b"}, role_vars)
    objects, _files = validate_output(out)
    assert_unchanged_except_names(out, "infiniband_mirror")
    images = daemonset_images(objects)
    assert set(images) == {"kube-multus-ds", "kube-ipoib-cni-ds", "rdma-shared-dp-ds"}  # host-local: no whereabouts
    assert images["rdma-shared-dp-ds"] == ["registry.example.internal:5000/mellanox/k8s-rdma-shared-dev-plugin:v1.5.3"]
    assert images["kube-ipoib-cni-ds"] == ["registry.example.internal:5000/mellanox/ipoib-cni:v1.2.0"]
    ds = objects[("DaemonSet", "kube-system", "rdma-shared-dp-ds")]
    assert ds["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": "mirror-pull"}]
    assert nccl_maps(objects) == {IB: {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_SOCKET_IFNAME": "=eth0"}}
    config = json.loads(objects[("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert config["configList"][0]["selectors"] == {"vendors": ["15b3"], "deviceIDs": ["1013"], "drivers": ["mlx5_core"],
                                                    "ifNames": ["ib0"], "linkTypes": ["infiniband"]}
    assert objects[("Node", None, "ib-b")]["metadata"]["labels"] == {"rdma.fabric/capable": "true",
                                                                     "rdma.fabric/link-layer": "InfiniBand",
                                                                     "rdma.fabric/nccl-pool": IB}
    cni = json.loads(objects[("NetworkAttachmentDefinition", "default", "ib-net")]["spec"]["config"])
    assert cni == {"cniVersion": "0.3.1", "name": "ib-net", "type": "ipoib", "master": "ib0", "ipam": {
        "type": "host-local", "subnet": "10.56.217.0/24", "rangeStart": "10.56.217.10", "rangeEnd": "10.56.217.200"}}


def test_port_down_and_node_without_rdma(tmp_path):
    role_vars = {"k8s_rdma_stack_multus_enabled": False,
                 "k8s_rdma_stack_networks": [{"name": "vf-net", "type": "host-device", "device": "ens1f0",
                                              "ipam": {"type": "whereabouts", "range": "10.20.0.0/24"}}]}
    proc, out = run_role(tmp_path, {"gpu-11": "roce-portdown", "cpu-1": "no-rdma"}, role_vars)
    assert "[WARNING]: k8s_rdma_stack: node(s) cpu-1 have no ACTIVE RDMA port" in _text(proc)
    objects, _files = validate_output(out)
    assert_unchanged_except_names(out, "port_down_no_rdma")
    config = json.loads(objects[("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert config["configList"][0]["selectors"]["ifNames"] == ["ens1f0"]  # ens1f1 is DOWN
    assert nccl_maps(objects) == {
        PORTDOWN: {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3", "NCCL_IB_TC": "106",
                   "NCCL_SOCKET_IFNAME": "=eth0"},
        NO_RDMA: {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": "", "NCCL_SOCKET_IFNAME": "=eth0"}}
    assert objects[("Node", None, "cpu-1")]["metadata"]["labels"] == {"rdma.fabric/capable": "false",
                                                                      "rdma.fabric/nccl-pool": NO_RDMA}
    assert objects[("Node", None, "gpu-11")]["metadata"]["labels"]["rdma.fabric/capable"] == "true"
    assert "kube-multus-ds" not in daemonset_images(objects)
    assert ("CustomResourceDefinition", None, "network-attachment-definitions.k8s.cni.cncf.io") not in objects
    assert json.loads(objects[("NetworkAttachmentDefinition", "default", "vf-net")]["spec"]["config"])["device"] == "ens1f0"


def test_no_rdma_fails_with_clear_message(tmp_path):
    # cpu-1 has no RDMA device; lab1 has only Soft-RoCE, which counts only when opted in
    proc, out = run_role(tmp_path / "strict", {"cpu-1": "no-rdma", "lab1": "lab1"}, {}, expect_rc=2)
    assert "k8s_rdma_stack: none of the 2 node(s) of group 'rdma_nodes' has an ACTIVE RDMA port" in proc.stdout
    assert "cpu-1: no RDMA devices; lab1: rxe0:1 ACTIVE (soft)" in proc.stdout
    assert "soft devices count only with k8s_rdma_stack_include_soft_devices: true" in proc.stdout
    assert not os.path.exists(out)


def test_a_plan_of_hosts_without_ports_yet_says_so_and_goes_on(tmp_path):
    # site.yml --check on bare hosts: the earlier stages only planned the RDMA ports, so the facts have none.
    # The plan must not stop there (the lab's plan in the site scenario did); a real run still stops (test above).
    proc, out = run_role(tmp_path / "plan", {"cpu-1": "no-rdma", "cpu-2": "no-rdma"}, {},
                         extra_args=["--check", "--diff"])
    text = " ".join(proc.stdout.split())  # the output callback folds long lines
    assert "WARNING k8s_rdma_stack: none of the 2 node(s) of group" in text
    assert "has an ACTIVE RDMA port usable by the Kubernetes RDMA stack" in text
    assert "Check mode: the Kubernetes objects are not planned; plan again once the host stages have made the RDMA ports" in text
    assert re.search(r"Stop with the reason\] \**\s*skipping: \[localhost\]", text)
    assert "rdma_shared_device_a" not in proc.stdout
    assert not os.path.exists(out)


def test_soft_roce_lab_with_opt_in(tmp_path):
    lab_vars = {"k8s_rdma_stack_include_soft_devices": True, "k8s_rdma_stack_multus_enabled": True}
    proc, out = run_role(tmp_path / "lab", {"lab1": "lab1", "lab2": "lab2"}, lab_vars)
    assert "[WARNING]: k8s_rdma_stack: the selected RDMA devices include soft devices" in _text(proc)
    objects, _files = validate_output(out)
    assert_unchanged_except_names(out, "soft_roce_lab")
    config = json.loads(objects[("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert config["configList"][0]["selectors"] == {"ifNames": ["eth1"], "linkTypes": ["ether"]}
    pools = nccl_pools(objects)
    assert pools["lab1"] == pools["lab2"] and re.fullmatch(r"soft1-[0-9a-f]{8}", pools["lab1"])
    assert nccl_maps(objects) == {pools["lab1"]: {
        "NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=rxe0:1", "NCCL_IB_GID_INDEX": "1", "NCCL_SOCKET_IFNAME": "=eth0"}}
    assert objects[("Node", None, "lab2")]["metadata"]["labels"] == {
        "rdma.fabric/capable": "true", "rdma.fabric/link-layer": "Ethernet", "rdma.fabric/roce-v2-gid-index": "1",
        "rdma.fabric/nccl-pool": pools["lab1"]}


def test_default_two_resources_per_pool_and_single_port_pools(tmp_path):
    """Issue 19's default: each pool's ports in (NUMA node, PCI address) order cut in halves. gpu-7 (roce-gid3,
    two ports): ens1f0 -> a, ens1f1 -> b; roce-a (one port): ens1f0 -> a, no b."""
    proc, out = run_role(tmp_path / "two", {"gpu-7": "roce-gid3", "roce-a": "roce-a"}, {})
    objects, _files = validate_output(out)
    config = json.loads(objects[("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert config["configList"] == [
        {"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["101d", "1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f0"], "linkTypes": ["ether"]}},
        {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["ens1f1"], "linkTypes": ["ether"]}}]
    assert "shared device resources rdma_shared_device_a, rdma_shared_device_b" in " ".join(proc.stdout.split())
    # an Ansible warning names the one-port pool and why; gpu-7's pool gives b a port
    text = " ".join(proc.stdout.split())
    gap = ("[WARNING]: k8s_rdma_stack: the node pool of %s gives no ACTIVE RDMA port to rdma/rdma_shared_device_b: "
           "it has 1 RDMA port(s) to share out (%s) and part 2 of 2 is empty: a device is in at most one resource; "
           "pods asking for rdma/rdma_shared_device_b do not run on its nodes (they stay Pending).")
    assert gap % ("roce-a", "mlx5_0:1") in text, text[-3000:]
    assert "the node pool of gpu-7" not in text and "left out of the config" not in text
    # single-port pools only: b is left out, with a warning per pool and one for the resource
    proc, out = run_role(tmp_path / "one", {"roce-a": "roce-a", "ib-a": "ib-a"}, {})
    config = json.loads(validate_output(out)[0][("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert [e["resourceName"] for e in config["configList"]] == ["rdma_shared_device_a"]
    text = " ".join(proc.stdout.split())
    assert gap % ("roce-a", "mlx5_0:1") in text and gap % ("ib-a", "mlx5_0:1") in text, text[-3000:]
    assert ("[WARNING]: k8s_rdma_stack: rdma_shared_device_b is left out of the config: no node pool gives it an "
            "ACTIVE RDMA port") in text
    assert re.search(r"\(ib1-[0-9a-f]{8} = ib-a; roce1-[0-9a-f]{8} = roce-a\)", text)


def test_overlapping_resources_stop_the_role_naming_nodes_and_devices(tmp_path):
    role_vars = {"k8s_rdma_stack_shared_devices": [{"resourceName": "rdma_shared_device_a"},
                                                   {"resourceName": "rdma_shared_device_b", "rdma_devices": ["mlx5_1"]}]}
    proc, out = run_role(tmp_path, {"gpu-7": "roce-gid3", "gpu-8": "roce-gid3", "roce-a": "roce-a"}, role_vars, expect_rc=2)
    assert ("the shared device plugin resources overlap (a device may be in one resource only; give them disjoint "
            "link_layers, rdma_devices or split parts, or per node pool lists): on node(s) gpu-7 and 1 more, device "
            "mlx5_1:1 (ens1f1) is selected by rdma_shared_device_a and rdma_shared_device_b") in " ".join(proc.stdout.split())
    assert not os.path.exists(out)


def test_per_pool_resource_list(tmp_path):
    """roce-portdown (mlx5_1 DOWN) is a pool of its own; its list gives mlx5_0 to b. Merged with gpu-7's default
    halves, ens1f0 would be in a (gpu-7) and b (gpu-11): the role refuses, naming both; with gpu-7's own list
    agreeing (mlx5_0 -> b, mlx5_1 -> a) it renders."""
    # the pool names are computed (port counts and a hash of the layout); read them from the role's own output
    proc, _out = run_role(tmp_path / "names", {"gpu-11": "roce-portdown", "gpu-7": "roce-gid3"}, {})
    text = " ".join(proc.stdout.split())
    name = re.search(r"(roce2-[0-9a-f]{8}) = gpu-11", text).group(1)
    gpu7 = re.search(r"(roce2-[0-9a-f]{8}) = gpu-7", text).group(1)
    assert name != gpu7
    swapped = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "rdma_devices": ["mlx5_1"]},
               {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 63, "rdma_devices": ["mlx5_0"]}]
    proc, out = run_role(tmp_path / "bad", {"gpu-7": "roce-gid3", "gpu-11": "roce-portdown"},
                         {"k8s_rdma_stack_shared_devices_pools": {name: swapped}}, expect_rc=2)
    text = " ".join(proc.stdout.split())
    assert "on node(s) gpu-7, device mlx5_0:1 (ens1f0) is selected by rdma_shared_device_a and rdma_shared_device_b" in text
    proc, out = run_role(tmp_path / "good", {"gpu-7": "roce-gid3", "gpu-11": "roce-portdown"},
                         {"k8s_rdma_stack_shared_devices_pools": {name: swapped, gpu7: swapped}})
    config = json.loads(validate_output(out)[0][("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert [(e["resourceName"], e["selectors"]["ifNames"]) for e in config["configList"]] == [
        ("rdma_shared_device_a", ["ens1f1"]), ("rdma_shared_device_b", ["ens1f0"])]


def test_bad_variables_stop_the_role_before_it_reads_or_writes(tmp_path):
    # a rule of the role's check (plugin_utils k8s_rdma.check_role_vars): every bad value named at once
    proc, out = run_role(tmp_path / "check", {"roce-a": "roce-a"},
                         {"k8s_rdma_stack_namespace": "Kube System", "k8s_rdma_stack_nccl_tc": 300}, expect_rc=2)
    assert "k8s_rdma_stack_namespace: 'Kube System' is not allowed; allowed: a Kubernetes namespace name" in proc.stdout
    assert "k8s_rdma_stack_nccl_tc: tc must be an integer 0-255" in proc.stdout
    assert "Read the nodes' RDMA facts" not in proc.stdout  # stopped before the first read
    assert not os.path.exists(out)
    # a choice of meta/argument_specs.yml, checked by Ansible before the role's first task
    proc, out = run_role(tmp_path / "spec", {"roce-a": "roce-a"}, {"k8s_rdma_stack_method": "helm"}, expect_rc=2)
    assert "k8s_rdma_stack_method must be one of: manifests, network_operator, got: helm" in proc.stdout
    assert not os.path.exists(out)


# --- issue 19: NCCL settings per node pool ----------------------------------------------------------------

THREE_POOLS = {"roce-a": "roce-a", "ib-a": "ib-a", "ib-b": "ib-b", "cpu-1": "no-rdma"}
ROCE_ENV = {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "5", "NCCL_IB_TC": "106"}
IB_ENV = {"NCCL_IB_DISABLE": "0", "NCCL_IB_HCA": "=mlx5_0:1"}
NO_RDMA_ENV = {"NCCL_IB_DISABLE": "1", "NCCL_IB_HCA": ""}


def test_nccl_configmap_per_node_pool_and_namespace(tmp_path):
    """RoCE, InfiniBand (two nodes, one pool) and a node without RDMA: three pools, a ConfigMap each in each
    namespace, each pool's nodes labelled with its id; a second run changes nothing (the ids are stable)."""
    role_vars = {"k8s_rdma_stack_nccl_namespaces": ["default", "training"]}
    # the union ConfigMap an earlier version rendered there goes (the role finds its own files by their first line)
    with open(os.path.join(FIXTURES, "rendered", "roce_only.json")) as f:
        old = json.load(f)["files"]["021-configmap-default-rdma-nccl-env.yaml"]
    os.makedirs(str(tmp_path / "out"))
    with open(str(tmp_path / "out" / "configmap-default-rdma-nccl-env.yaml"), "w") as f:
        f.write(old)
    first, out = run_role(tmp_path, THREE_POOLS, role_vars)
    assert not os.path.exists(os.path.join(out, "configmap-default-rdma-nccl-env.yaml"))
    objects, files = validate_output(out)  # every ConfigMap and Node patch: kubernetes-validate --strict
    for ns in ("default", "training"):
        assert nccl_maps(objects, ns) == {ROCE_A: dict(ROCE_ENV, NCCL_SOCKET_IFNAME="=eth0"),
                                          IB: dict(IB_ENV, NCCL_SOCKET_IFNAME="=eth0"),
                                          NO_RDMA: dict(NO_RDMA_ENV, NCCL_SOCKET_IFNAME="=eth0")}
        assert ("ConfigMap", ns, "rdma-nccl-env") not in objects
    assert sorted(f for f in files if "nccl" in f) == [
        "configmap-default-rdma-nccl-env-%s.yaml" % p for p in sorted((ROCE_A, IB, NO_RDMA))] + [
        "configmap-training-rdma-nccl-env-%s.yaml" % p for p in sorted((ROCE_A, IB, NO_RDMA))]
    assert nccl_pools(objects) == {"roce-a": ROCE_A, "ib-a": IB, "ib-b": IB, "cpu-1": NO_RDMA}
    assert objects[("Node", None, "cpu-1")]["metadata"]["labels"] == {"rdma.fabric/capable": "false",
                                                                      "rdma.fabric/nccl-pool": NO_RDMA}
    assert "NCCL ConfigMaps rdma-nccl-env-<pool id> (pods select nodes by rdma.fabric/nccl-pool=<pool id>)" in " ".join(
        first.stdout.split())
    before = dict((f, open(os.path.join(out, f)).read()) for f in files)
    second, _out = run_role(tmp_path, THREE_POOLS, role_vars)
    localhost_line = [line for line in second.stdout.split("PLAY RECAP")[1].splitlines() if line.startswith("localhost")][0]
    assert "changed=0" in localhost_line, localhost_line
    assert dict((f, open(os.path.join(out, f)).read()) for f in files) == before
    # removal finds the pools' ConfigMaps (and the node labels, nccl-pool included) again
    run_role(tmp_path, THREE_POOLS, dict(role_vars, k8s_rdma_stack_state="absent"))
    assert sorted(os.listdir(out)) == ["node-labels"]


def test_nccl_over_a_multus_network_and_overrides(tmp_path):
    """k8s_rdma_stack_nccl_network: the RDMA pools use the network's pod interface (net1 unless its pod_interface
    says otherwise); the pool without RDMA keeps the primary interface. k8s_rdma_stack_nccl_socket_ifname overrides
    every pool; k8s_rdma_stack_nccl_host_network gives the host netdevs."""
    nets = [dict(ROCE_NETWORKS[0], namespace="default")]
    _proc, out = run_role(tmp_path / "net1", THREE_POOLS, {"k8s_rdma_stack_networks": nets,
                                                           "k8s_rdma_stack_nccl_network": "rdma-net-a"})
    objects, _files = validate_output(out)
    assert nccl_maps(objects) == {ROCE_A: dict(ROCE_ENV, NCCL_SOCKET_IFNAME="=net1"),
                                  IB: dict(IB_ENV, NCCL_SOCKET_IFNAME="=net1"),
                                  NO_RDMA: dict(NO_RDMA_ENV, NCCL_SOCKET_IFNAME="=eth0")}
    _proc, out = run_role(tmp_path / "named", THREE_POOLS, {
        "k8s_rdma_stack_networks": [dict(nets[0], pod_interface="rdma0")], "k8s_rdma_stack_nccl_network": "rdma-net-a",
        "k8s_rdma_stack_nccl_pod_interface": "enp0s1"})
    assert nccl_maps(validate_output(out)[0]) == {ROCE_A: dict(ROCE_ENV, NCCL_SOCKET_IFNAME="=rdma0"),
                                                  IB: dict(IB_ENV, NCCL_SOCKET_IFNAME="=rdma0"),
                                                  NO_RDMA: dict(NO_RDMA_ENV, NCCL_SOCKET_IFNAME="=enp0s1")}
    _proc, out = run_role(tmp_path / "override", THREE_POOLS, {
        "k8s_rdma_stack_networks": nets, "k8s_rdma_stack_nccl_network": "rdma-net-a",
        "k8s_rdma_stack_nccl_socket_ifname": "=net2"})
    assert nccl_maps(validate_output(out)[0]) == {ROCE_A: dict(ROCE_ENV, NCCL_SOCKET_IFNAME="=net2"),
                                                  IB: dict(IB_ENV, NCCL_SOCKET_IFNAME="=net2"),
                                                  NO_RDMA: dict(NO_RDMA_ENV, NCCL_SOCKET_IFNAME="=net2")}
    _proc, out = run_role(tmp_path / "hostnet", THREE_POOLS, {"k8s_rdma_stack_nccl_host_network": True})
    assert nccl_maps(validate_output(out)[0]) == {ROCE_A: dict(ROCE_ENV, NCCL_SOCKET_IFNAME="=ens1f0"),
                                                  IB: dict(IB_ENV, NCCL_SOCKET_IFNAME="=ib0"),
                                                  NO_RDMA: NO_RDMA_ENV}
    # NCCL off: no ConfigMap and no nccl-pool label
    _proc, out = run_role(tmp_path / "off", THREE_POOLS, {"k8s_rdma_stack_nccl_enabled": False})
    objects = validate_output(out)[0]
    assert nccl_maps(objects) == {} and set(nccl_pools(objects).values()) == {None}


def test_nccl_variables_are_checked(tmp_path):
    proc, out = run_role(tmp_path, THREE_POOLS, {"k8s_rdma_stack_nccl_network": "rdma-net-x",
                                                 "k8s_rdma_stack_nccl_pod_interface": "eth 0"}, expect_rc=2)
    text = " ".join(proc.stdout.split())
    assert ("k8s_rdma_stack_nccl_network: 'rdma-net-x' is not the name of a network in k8s_rdma_stack_networks "
            "(networks: none)") in text
    assert "k8s_rdma_stack_nccl_pod_interface: 'eth 0' is not allowed; allowed: a network interface name inside the pod" in text
    assert not os.path.exists(out)


# --- issue 33: as NVIDIA's users run it ----------------------------------------------------------------------

def _fixture(name):
    with open(os.path.join(FIXTURES, "facts", name + ".json")) as f:
        return json.load(f)


def _text(proc):
    """The output as one line (the callback folds long lines and doubles quotes in single-quoted scalars)."""
    return " ".join(proc.stdout.split()).replace("''", "'")


NV_NETWORKS = [{"name": "rdma-net-a", "namespace": "training", "type": "macvlan", "master": "ens1f0", "mtu": 9000,
                "resource_name": "rdma/rdma_shared_device_a",
                "ipam": {"type": "whereabouts", "range": "192.168.100.0/24", "exclude": ["192.168.100.254/32"],
                         "gateway": "192.168.100.1"}}]


def test_network_operator_nv_ipam_nfd_gpu_values_and_a_node_without_rdma_ucm(tmp_path):
    """The operator method's defaults give NV-IPAM (nvIpam, one IPPool per network from its whereabouts range, the
    CNI IPAM nv-ipam; no whereabouts); NFD selection renders the NodeFeatureRule into the kustomization and every
    selector uses NFD's label; the GPU Operator's values file; gpu-8 (gpu-7 without rdma_ucm) is not advertised."""
    gpu8 = _fixture("roce-gid3")
    gpu8["modules"]["rdma_ucm"] = False
    role_vars = {"k8s_rdma_stack_method": "network_operator", "k8s_rdma_stack_networks": NV_NETWORKS,
                 "k8s_rdma_stack_node_selection": "nfd", "k8s_rdma_stack_gpu_operator_values_enabled": True}
    proc, out = run_role(tmp_path, {"gpu-7": "roce-gid3", "gpu-8": gpu8, "roce-a": "roce-a"}, role_vars)
    objects, files = validate_output(out)  # IPPool and NodeFeatureRule against their upstream CRDs
    assert ("[WARNING]: k8s_rdma_stack: node(s) gpu-8 lack the user-space RDMA module(s) rdma_ucm (the facts' "
            "modules), so the RDMA device plugin could give pods no device there") in _text(proc)
    assert objects[("Node", None, "gpu-8")]["metadata"]["labels"]["rdma.fabric/capable"] == "false"
    spec = objects[("NicClusterPolicy", None, "nic-cluster-policy")]["spec"]
    assert spec["nvIpam"] == {"image": "nvidia-k8s-ipam", "repository": "nvcr.io/nvidia/mellanox",
                              "version": "network-operator-v26.1.0", "imagePullSecrets": [], "enableWebhook": False}
    assert spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "feature.node.kubernetes.io/rdma.available", "operator": "In", "values": ["true"]}]}]
    assert sorted(spec["secondaryNetwork"]) == ["cniPlugins"]  # Multus not asked for; the CNI plugins still needed
    # gpu-8's ports are in no selector: the device IDs are roce-a's and gpu-7's, the same as without gpu-8
    config = json.loads(spec["rdmaSharedDevicePlugin"]["config"])
    assert config["configList"][0]["selectors"]["ifNames"] == ["ens1f0"]
    pool = objects[("IPPool", "nvidia-network-operator", "rdma-net-a")]
    assert pool["spec"] == {"subnet": "192.168.100.0/24", "gateway": "192.168.100.1", "perNodeBlockSize": 64,
                            "exclusions": [{"startIP": "192.168.100.254", "endIP": "192.168.100.254"}],
                            "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{
                                "key": "feature.node.kubernetes.io/rdma.available", "operator": "In", "values": ["true"]}]}]}}
    cni = json.loads(objects[("NetworkAttachmentDefinition", "training", "rdma-net-a")]["spec"]["config"])
    assert cni["ipam"] == {"type": "nv-ipam", "poolName": "rdma-net-a"}
    assert not any(k[0] == "DaemonSet" or k[2].endswith("whereabouts.cni.cncf.io") for k in objects)
    rule = objects[("NodeFeatureRule", None, "rdma-fabric-rdma-available")]["spec"]["rules"][0]
    assert rule["labels"] == {"rdma.available": "true"}
    assert rule["matchFeatures"] == [
        {"feature": "kernel.loadedmodule", "matchExpressions": {"ib_uverbs": {"op": "Exists"}, "rdma_ucm": {"op": "Exists"}}},
        {"feature": "pci.device", "matchExpressions": {"vendor": {"op": "In", "value": ["15b3"]},
                                                       "device": {"op": "In", "value": ["101d", "1021"]}}}]
    kustomization = _load(os.path.join(out, "kustomization.yaml"))
    assert "nodefeaturerule-rdma-fabric-rdma-available.yaml" in kustomization["resources"]
    assert "ippool-nvidia-network-operator-rdma-net-a.yaml" in kustomization["resources"]
    assert _load(os.path.join(out, "network-operator-values.yaml")) == {"nfd": {"enabled": True}}
    assert _load(os.path.join(out, "gpu-operator-values.yaml")) == {"driver": {"rdma": {"enabled": True, "useHostMofed": True}}}
    assert "gpu-operator-values.yaml" not in kustomization["resources"]
    assert "render only: the device plugin DaemonSets select" not in _text(proc)  # NFD: nothing outside the kustomization


def test_multus_only_when_asked_and_its_removal_leaves_the_cni_configuration(tmp_path):
    """By default no Multus (most clusters have one); asked for, the thin plugin removes the 00-multus.conf it wrote
    when its pod stops, so deleting the DaemonSet leaves the nodes' CNI configuration as it found it. A folder that
    had the role's Multus says, when it goes, how to remove it safely."""
    hosts = {"gpu-7": "roce-gid3"}
    proc, out = run_role(tmp_path / "default", hosts, {"k8s_rdma_stack_networks": ROCE_NETWORKS})
    objects, _files = validate_output(out)
    assert not any(k[2] in ("kube-multus-ds", "multus", "network-attachment-definitions.k8s.cni.cncf.io") for k in objects)
    assert ("NetworkAttachmentDefinition", "training", "rdma-net-a") in objects
    _proc, out = run_role(tmp_path / "asked", hosts, {"k8s_rdma_stack_networks": ROCE_NETWORKS,
                                                      "k8s_rdma_stack_multus_enabled": True})
    objects, _files = validate_output(out)
    pod = objects[("DaemonSet", "kube-system", "kube-multus-ds")]["spec"]["template"]["spec"]
    args = pod["containers"][0]["args"]
    assert pod["containers"][0]["command"] == ["/thin_entrypoint"]
    # the entrypoint's cleanupMultusConf removes <cni-conf-dir>/00-multus.conf(list) on exit with the auto config;
    # the node's own config is never renamed; it writes nowhere but the two host folders below
    assert "--cleanup-config-on-exit=true" in args and "--multus-conf-file=auto" in args
    assert "--cni-conf-dir=/host/etc/cni/net.d" in args and not any(a.startswith("--rename-conf-file") for a in args)
    assert sorted(v["hostPath"]["path"] for v in pod["volumes"]) == ["/etc/cni/net.d", "/opt/cni/bin"]
    assert pod["terminationGracePeriodSeconds"] >= 10
    # the same folder without Multus: its files go, with a warning
    proc, _out = run_role(tmp_path / "asked", hosts, {"k8s_rdma_stack_networks": ROCE_NETWORKS})
    assert ("WARNING k8s_rdma_stack: %s/daemonset-kube-system-kube-multus-ds.yaml (the role's own Multus, rendered by an "
            "earlier run) is removed" % out) in _text(proc)
    assert not os.path.exists(os.path.join(out, "daemonset-kube-system-kube-multus-ds.yaml"))


def test_exclusive_rdma_netns_chains_rdma_cni(tmp_path):
    nets = [{"name": "pf-net", "type": "host-device", "device": "ens1f1", "resource_name": "rdma/rdma_shared_device_b",
             "ipam": {"type": "whereabouts", "range": "10.20.0.0/24"}}]
    one = [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 1, "split": {"part": 1, "parts": 2}},
           {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 1, "split": {"part": 2, "parts": 2}}]
    proc, out = run_role(tmp_path / "ok", {"gpu-7": "roce-gid3"}, {"k8s_rdma_stack_rdma_netns": "exclusive",
                                                                   "k8s_rdma_stack_networks": nets,
                                                                   "k8s_rdma_stack_shared_devices": one})
    objects, _files = validate_output(out)
    assert "RDMA netns mode exclusive" not in _text(proc)  # one pod per device: rdmaHcaMax 1
    assert json.loads(objects[("NetworkAttachmentDefinition", "default", "pf-net")]["spec"]["config"]) == {
        "cniVersion": "0.3.1", "name": "pf-net", "plugins": [
            {"type": "host-device", "device": "ens1f1", "ipam": {"type": "whereabouts", "range": "10.20.0.0/24"}},
            {"type": "rdma"}]}
    assert daemonset_images(objects)["kube-rdma-cni-ds"] == ["ghcr.io/k8snetworkplumbingwg/rdma-cni:v1.5.0"]
    ds = objects[("DaemonSet", "kube-system", "kube-rdma-cni-ds")]["spec"]["template"]["spec"]
    assert ds["nodeSelector"] == {"rdma.fabric/capable": "true", "kubernetes.io/os": "linux"}
    # a macvlan interface has no RDMA device of its own to move: refused before anything is read
    proc, out = run_role(tmp_path / "bad", {"gpu-7": "roce-gid3"}, {"k8s_rdma_stack_rdma_netns": "exclusive",
                                                                    "k8s_rdma_stack_networks": ROCE_NETWORKS}, expect_rc=2)
    assert "k8s_rdma_stack_networks[0]: type macvlan cannot be used with k8s_rdma_stack_rdma_netns: exclusive" in _text(proc)
    assert not os.path.exists(out)


def test_mixed_ib_ethernet_pool_gives_one_link_type_per_resource(tmp_path):
    """vpi-mixed: port 1 InfiniBand (ib0), port 2 Ethernet (ens1f1), same vendor, device and driver. The default
    halves are one link type each, the selectors say which; one resource over both ports is given as _ib and _eth.
    The seed's RayCluster (rdma_shared_device_a and _b) passes the pod check on the default render."""
    from ansible_collections.rdma.fabric.plugins.plugin_utils import pod_check

    _proc, out = run_role(tmp_path / "halves", {"vpi-1": "vpi-mixed"}, {})
    objects, _files = validate_output(out)
    config = json.loads(objects[("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert [(e["resourceName"], e["selectors"]["ifNames"], e["selectors"]["linkTypes"]) for e in config["configList"]] == [
        ("rdma_shared_device_a", ["ib0"], ["infiniband"]), ("rdma_shared_device_b", ["ens1f1"], ["ether"])]
    with open(os.path.join(_repo_root(), "docs", "examples", "raycluster-rdma.yaml")) as f:
        ray = list(yaml.safe_load_all(f))
    result = pod_check.check(ray, list(objects.values()), {"vpi-mixed": _fixture("vpi-mixed")})
    assert result["ok"] is True, result
    proc, out = run_role(tmp_path / "one", {"vpi-1": "vpi-mixed"}, {
        "k8s_rdma_stack_shared_devices": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63}]})
    config = json.loads(validate_output(out)[0][("ConfigMap", "kube-system", "rdma-devices")]["data"]["config.json"])
    assert [(e["resourceName"], e["selectors"]["linkTypes"]) for e in config["configList"]] == [
        ("rdma_shared_device_a_ib", ["infiniband"]), ("rdma_shared_device_a_eth", ["ether"])]
    assert re.search(r"\[WARNING\]: k8s_rdma_stack: node pool ib1-roce1-[0-9a-f]{8} \(vpi-1\) has InfiniBand and Ethernet ports "
                     r"in rdma_shared_device_a; a resource holds one link type, so they are given as "
                     r"rdma_shared_device_a_ib and rdma_shared_device_a_eth there", _text(proc))
    assert "no node pool gives an ACTIVE RDMA port to" not in _text(proc)
