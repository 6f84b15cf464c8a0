# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/pod_check.py and playbooks/check_pod.yml.

Facts: the fixture hosts of tests/unit/fixtures/k8s/facts (roce-gid3: two RoCE mlx5 NICs; ib-a; roce-a; lab1:
Soft-RoCE, a REAL capture of the lab) and the big GPU host: the four mlx5 NICs that the collection's facts gatherer
reads from the DERIVED sysfs tree derived_gpu_nic_topology (two GPUs, four NICs), which has no ports; the TEST DOUBLE
gpu_host_double() gives each NIC one ACTIVE RoCE port shaped like roce-gid3's (see its docstring). The device-plugin
config is what the k8s_rdma_stack role renders with its DEFAULT k8s_rdma_stack_shared_devices (read from
roles/k8s_rdma_stack/defaults/main.yml, built by the same function the role's filter calls).
docs/examples/raycluster-rdma.yaml is the two-resource RayCluster of issue 19: it passes with the defaults on every
pool with two or more RDMA ports; a pool with one port (or only soft devices, as the lab) fails for
rdma_shared_device_b, and the check says so naming the pool and why.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils import pod_check as pc
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import shared_dev_plugin_config
from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
FACTS = os.path.join(ROOT, "tests", "unit", "fixtures", "k8s", "facts")
RAY = os.path.join(ROOT, "docs", "examples", "raycluster-rdma.yaml")
GPU_TREE = os.path.join(ROOT, "tests", "unit", "fixtures", "sysfs", "derived_gpu_nic_topology", "sys")


def facts(name):
    with open(os.path.join(FACTS, name + ".json")) as f:
        return json.load(f)


def _yaml(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f)


def ray():
    with open(RAY) as f:
        return list(yaml.safe_load_all(f))


def gpu_host_double():
    """TEST DOUBLE of the big GPU host: the RDMA facts the collection's gatherer reads from the derived
    derived_gpu_nic_topology tree (mlx5_0..3 at 04:00.0, 05:00.0, 18:00.0, 08:00.0, all on NUMA node 0, no ports in
    the tree), each device given one ACTIVE RoCE port copied from roce-gid3's first port, its netdev named the way
    systemd names a PCI function's (enp<bus>s0np0) and its GIDs left out."""
    data = gather_rdma_facts(GPU_TREE)
    template = facts("roce-gid3")["devices"][0]["ports"][0]
    for dev in data["devices"]:
        port = dict(template, gids=[], netdev="enp%ds0np0" % int(dev["pci_address"].split(":")[1], 16))
        dev["ports"] = [port]
    return data


def default_configmap(pool_facts, include_soft=False):
    """The shared-device-plugin ConfigMap as the role renders it with its default resources."""
    defaults = _yaml("roles", "k8s_rdma_stack", "defaults", "main.yml")
    doc = shared_dev_plugin_config(defaults["k8s_rdma_stack_shared_devices"], pool_facts, include_soft=include_soft,
                                   periodic_update_interval=defaults["k8s_rdma_stack_shared_dev_plugin_periodic_update_interval"])
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rdma-devices", "namespace": "kube-system"},
            "data": {"config.json": json.dumps(doc)}}


def test_requests_of_the_raycluster():
    asked = pc.requests(ray())
    assert sorted(set((r["template"], r["resource"], r["count"]) for r in asked)) == [
        ("RayCluster/rdma-ray head", "nvidia.com/gpu-h800", 8),
        ("RayCluster/rdma-ray head", "rdma/rdma_shared_device_a", 1),
        ("RayCluster/rdma-ray head", "rdma/rdma_shared_device_b", 1),
        ("RayCluster/rdma-ray worker group gpu-rdma", "nvidia.com/gpu-h800", 8),
        ("RayCluster/rdma-ray worker group gpu-rdma", "rdma/rdma_shared_device_a", 1),
        ("RayCluster/rdma-ray worker group gpu-rdma", "rdma/rdma_shared_device_b", 1),
    ]


def test_default_passes_on_the_big_gpu_host_halves_in_pci_order():
    """Issue 19: the RayCluster passes with default settings on the 4-NIC GPU host. PCI order is not name order:
    mlx5_3 (08:00.0) comes before mlx5_2 (18:00.0)."""
    pools = {"gpu-a01": gpu_host_double()}
    cm = default_configmap(pools)
    config = json.loads(cm["data"]["config.json"])
    assert config["configList"] == [
        {"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["enp4s0np0", "enp5s0np0"],
            "linkTypes": ["ether"]}},
        {"resourceName": "rdma_shared_device_b", "rdmaHcaMax": 63, "selectors": {
            "vendors": ["15b3"], "deviceIDs": ["1021"], "drivers": ["mlx5_core"], "ifNames": ["enp8s0np0", "enp24s0np0"],
            "linkTypes": ["ether"]}}]
    result = pc.check(ray(), [cm], pools)
    assert result["ok"] is True, result
    assert result["advertised"] == ["rdma/rdma_shared_device_a", "rdma/rdma_shared_device_b"]
    res = result["pools"]["gpu-a01"]["resources"]
    assert res["rdma/rdma_shared_device_a"]["devices"] == [["mlx5_0:1", "mlx5_1:1"]]
    assert res["rdma/rdma_shared_device_b"]["devices"] == [["mlx5_2:1", "mlx5_3:1"]]
    assert res["nvidia.com/gpu-h800"]["status"] == "not_checked"
    assert "GPU Operator" in res["nvidia.com/gpu-h800"]["reason"]


def test_default_two_port_pool_passes_single_port_pool_says_why():
    pools = {"roce-gid3": facts("roce-gid3"), "ib-a": facts("ib-a")}
    result = pc.check(ray(), [default_configmap(pools)], pools)
    assert result["ok"] is False
    assert result["advertised"] == ["rdma/rdma_shared_device_a", "rdma/rdma_shared_device_b"]
    gid3 = result["pools"]["roce-gid3"]
    assert gid3["ok"] is True
    assert gid3["resources"]["rdma/rdma_shared_device_a"]["devices"] == [["mlx5_0:1"]]
    assert gid3["resources"]["rdma/rdma_shared_device_b"]["devices"] == [["mlx5_1:1"]]
    ib = result["pools"]["ib-a"]["resources"]
    assert ib["rdma/rdma_shared_device_a"]["status"] == "ok" and ib["rdma/rdma_shared_device_a"]["devices"] == [["mlx5_0:1"]]
    assert ib["rdma/rdma_shared_device_b"] == {
        "status": "missing", "devices": [[]],
        "reason": "the pool's nodes: no device matches the selectors of rdma/rdma_shared_device_b (mlx5_0:1: deviceIDs "
                  "1013 not in ['1021'], ifNames ib0 not in ['ens1f1'], linkTypes infiniband not in ['ether']); pool ib-a "
                  "has 1 device(s) the RDMA shared "
                  "device plugin can hand out (mlx5_0:1) and a device is in at most one resource, so it cannot give "
                  "the 2 RDMA shared resources the pod asks for (rdma/rdma_shared_device_a, rdma/rdma_shared_device_b)"}


def test_default_on_single_port_pools_only_leaves_b_out_and_says_why():
    pools = {"roce-a": facts("roce-a")}
    result = pc.check(ray(), [default_configmap(pools)], pools)
    assert result["advertised"] == ["rdma/rdma_shared_device_a"]
    assert result["pools"]["roce-a"]["resources"]["rdma/rdma_shared_device_b"]["reason"] == (
        "no rendered device-plugin config advertises rdma/rdma_shared_device_b (advertised: rdma/rdma_shared_device_a); "
        "pool roce-a has 1 device(s) the RDMA shared device plugin can hand out (mlx5_0:1) and a device is in at most "
        "one resource, so it cannot give the 2 RDMA shared resources the pod asks for (rdma/rdma_shared_device_a, "
        "rdma/rdma_shared_device_b)")


def test_lab_facts_fail_and_say_what_is_missing():
    """The lab (lab1/lab2: rxe0 only) renders only with k8s_rdma_stack_include_soft_devices (as molecule/site sets
    it); the RayCluster cannot pass there: a soft device is never handed out by the shared plugin, and one port
    cannot be in two resources."""
    pools = {"lab1 and 1 more": facts("lab1")}
    with pytest.raises(RdmaFactsError, match="no ACTIVE RDMA port"):
        default_configmap(pools)
    cm = default_configmap(pools, include_soft=True)
    assert json.loads(cm["data"]["config.json"])["configList"] == [
        {"resourceName": "rdma_shared_device_a", "rdmaHcaMax": 63, "selectors": {"ifNames": ["eth1"], "linkTypes": ["ether"]}}]
    result = pc.check(ray(), [cm], pools)
    res = result["pools"]["lab1 and 1 more"]["resources"]
    assert result["ok"] is False
    assert "rxe0:1 is a soft device" in res["rdma/rdma_shared_device_a"]["reason"]
    assert res["rdma/rdma_shared_device_b"]["reason"].endswith(
        "pool lab1 and 1 more has 0 device(s) the RDMA shared device plugin can hand out (none) and a device is in at "
        "most one resource, so it cannot give the 2 RDMA shared resources the pod asks for (rdma/rdma_shared_device_a, "
        "rdma/rdma_shared_device_b); rxe0:1: soft device(s), which the plugin cannot hand out (it finds devices "
        "through their PCI function)")


def test_two_resources_by_device_pass_and_a_selector_miss_says_why():
    pools = {"roce-gid3": facts("roce-gid3")}
    doc = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a", "rdma_devices": ["mlx5_0"]},
                                    {"resourceName": "rdma_shared_device_b", "rdma_devices": ["mlx5_1"]}],
                                   list(pools.values()))
    result = pc.check(ray(), [doc], pools)
    assert result["ok"] is True, result
    res = result["pools"]["roce-gid3"]["resources"]
    assert res["rdma/rdma_shared_device_a"]["devices"] == [["mlx5_0:1"]]
    assert res["rdma/rdma_shared_device_b"]["devices"] == [["mlx5_1:1"]]
    # The same config on an InfiniBand pool: ifNames select the RoCE hosts' netdevs only.
    result = pc.check(ray(), [doc], {"ib-a": facts("ib-a")})
    reason = result["pools"]["ib-a"]["resources"]["rdma/rdma_shared_device_b"]["reason"]
    assert reason.startswith("the pool's nodes: no device matches the selectors of rdma/rdma_shared_device_b (mlx5_0:1: ")
    assert "ifNames ib0 not in ['ens1f1']" in reason


def test_soft_devices_are_never_advertised_by_the_shared_plugin():
    doc = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a"}], [facts("lab1")], include_soft=True)
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"rdma/rdma_shared_device_a": 1}}}]}}
    result = pc.check(pod, [doc], {"lab": facts("lab1")})
    assert "rxe0:1 is a soft device" in result["pools"]["lab"]["resources"]["rdma/rdma_shared_device_a"]["reason"]


def test_deployment_and_bad_input():
    dep = {"kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [
        {"name": "c", "resources": {"requests": {"rdma/rdma_shared_device_a": 70}}}]}}}}
    doc = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a"}], [facts("roce-a")])
    result = pc.check(dep, [{"kind": "Namespace"}, doc], {"roce-a": facts("roce-a")})
    assert "the pod asks for 70 but rdmaHcaMax of rdma/rdma_shared_device_a is 63" in \
        result["pools"]["roce-a"]["resources"]["rdma/rdma_shared_device_a"]["reason"]
    with pytest.raises(RdmaFactsError, match="has no pod template"):
        pc.check({"kind": "Service", "metadata": {"name": "s"}, "spec": {}}, [doc], {"a": facts("roce-a")})
    with pytest.raises(RdmaFactsError, match="asks for no extended resource"):
        pc.check({"kind": "Pod", "spec": {"containers": [{"name": "c"}]}}, [doc], {"a": facts("roce-a")})


@pytest.mark.parametrize("workload, words", [
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "abc"}},
     "workload document 1 (Pod/p): spec: containers is 'abc', not a list"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": ["abc"]}},
     "workload document 1 (Pod/p): spec.containers[0] is 'abc', not a container (a mapping)"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"resources": {"limits": {1: 2}}}]}},
     "workload document 1 (Pod/p): spec.containers[0].resources.limits: the key 1 is not a resource name"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"resources": "x"}]}},
     "workload document 1 (Pod/p): spec.containers[0]: resources is 'x', not a mapping"),
    ({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"resources": {"limits": [1]}}]}},
     "workload document 1 (Pod/p): spec.containers[0].resources: limits is [1], not a mapping"),
    ({"kind": "RayCluster", "metadata": {"name": "r"}, "spec": {"workerGroupSpecs": ["abc"]}},
     "workload document 1 (RayCluster/r): spec.workerGroupSpecs[0] is 'abc', not a mapping"),
    ({"kind": "RayCluster", "metadata": {"name": "r"}, "spec": {"workerGroupSpecs": "abc"}},
     "workload document 1 (RayCluster/r): spec: workerGroupSpecs is 'abc', not a list"),
    ({"kind": "RayCluster", "metadata": {"name": "r"}, "spec": {"headGroupSpec": {"template": [1]}}},
     "workload document 1 (RayCluster/r): spec.headGroupSpec: template is [1], not a mapping"),
    ({"kind": "Deployment", "metadata": {"name": "d"}, "spec": [1, 2]},
     "workload document 1 (Deployment/d): spec is [1, 2], not a mapping"),
    ({"kind": "Pod", "metadata": "p"}, "workload document 1: metadata is 'p', not a mapping"),
    (["abc"], "workload document 1: a workload must be a Kubernetes object (a mapping), got str"),
])
def test_malformed_workload_is_refused_naming_the_field(workload, words):
    doc = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a"}], [facts("roce-a")])
    with pytest.raises(RdmaFactsError) as e:
        pc.check(workload, [doc], {"a": facts("roce-a")})
    assert str(e.value) == words


def test_yaml_text_is_parsed_naming_its_file():
    doc = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a"}], [facts("roce-a")])
    with open(RAY) as f:
        text = f.read()
    result = pc.check(text, {"configmap.yaml": yaml.safe_dump({"kind": "ConfigMap", "data": {"c": json.dumps(doc)}})},
                      {"a": facts("roce-a")}, workload_file=RAY)
    assert result["advertised"] == ["rdma/rdma_shared_device_a"]
    with pytest.raises(RdmaFactsError, match="^rendered/configmap.yaml: not valid YAML: "):
        pc.check(text, {"rendered/configmap.yaml": "a: [1\n"}, {"a": facts("roce-a")})
    with pytest.raises(RdmaFactsError, match="^pod.yaml: not valid YAML: "):
        pc.check("spec: {\n", [doc], {"a": facts("roce-a")}, workload_file="pod.yaml")
    with pytest.raises(RdmaFactsError, match=r"^configs\[0\]: configList\[0\] is 'x', not a mapping"):
        pc.check(text, [{"configList": ["x"]}], {"a": facts("roce-a")})
    with pytest.raises(RdmaFactsError, match=r"^configs\[0\]: data is \[1\], not a mapping"):
        pc.check(text, [{"kind": "ConfigMap", "data": [1]}], {"a": facts("roce-a")})


CHECK_POD = """---
- name: The playbook under test
  ansible.builtin.import_playbook: %s
""" % os.path.abspath(os.path.join(ROOT, "playbooks", "check_pod.yml"))
VERDICT = "Every requested resource is advertised on every pool"


def run_check_pod(tmp_path, pools, rendered):
    """playbooks/check_pod.yml on localhost with the pools' facts given (check_pod_pools): ``(rc, verdict)``,
    the verdict task's message (none when the play stopped before it)."""
    rc, tasks, text = run(tmp_path, CHECK_POD, {"check_pod_spec": os.path.abspath(RAY),
                                                "check_pod_rendered": str(rendered), "check_pod_pools": pools})
    assert VERDICT in tasks, text[-4000:]
    return rc, tasks[VERDICT]["localhost"].get("msg", ""), text


def test_check_pod_playbook_on_a_rendered_folder(tmp_path):
    """playbooks/check_pod.yml on an output folder holding the default ConfigMap, with the pools' facts given
    (check_pod_pools): the fixture hosts do not exist, so none is contacted."""
    rendered = tmp_path / "rendered"
    rendered.mkdir()
    pools = {"node-a": facts("roce-gid3"), "node-b": facts("ib-a")}
    # named and listed as k8s_rdma_stack writes them (tests/docs runs the playbook on the role's real output)
    with open(str(rendered / "configmap-kube-system-rdma-devices.yaml"), "w") as f:
        yaml.safe_dump(default_configmap(pools), f)
    with open(str(rendered / "kustomization.yaml"), "w") as f:
        yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                        "resources": ["configmap-kube-system-rdma-devices.yaml"]}, f)
    rc, verdict, text = run_check_pod(tmp_path, pools, rendered)
    assert rc == 2, text[-4000:]
    assert "node-b: rdma/rdma_shared_device_b: the pool's nodes: no device matches" in verdict, text[-4000:]
    assert "pool node-b has 1 device(s) the RDMA shared device plugin can hand out (mlx5_0:1)" in verdict
    assert "node-a:" not in verdict and "rdma/rdma_shared_device_a:" not in verdict
    # node-a alone (two ports): the play passes
    rc, verdict, text = run_check_pod(tmp_path, {"node-a": pools["node-a"]}, rendered)
    assert rc == 0, text[-4000:]
    assert verdict == "All assertions passed"


def test_check_pod_playbook_names_the_file_that_is_not_yaml(tmp_path):
    """A rendered file with bad YAML fails the check naming that file (it was a parse error naming none)."""
    rendered = tmp_path / "rendered"
    rendered.mkdir()
    (rendered / "configmap-kube-system-rdma-devices.yaml").write_text("data: {config.json: [1\n")
    with open(str(rendered / "kustomization.yaml"), "w") as f:
        yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                        "resources": ["configmap-kube-system-rdma-devices.yaml"]}, f)
    rc, tasks, text = run(tmp_path, CHECK_POD, {"check_pod_spec": os.path.abspath(RAY), "check_pod_rendered": str(rendered),
                                                "check_pod_pools": {"node-a": facts("roce-gid3")}})
    failed = tasks["Check every extended resource per node pool"]["localhost"]
    assert rc == 2 and failed["failed"] is True
    assert "rdma.fabric.pod_check: %s: not valid YAML" % (rendered / "configmap-kube-system-rdma-devices.yaml") \
        in failed["msg"], failed["msg"]


def test_sriov_resource_matches_the_virtual_functions():
    """roce-b has an ACTIVE RDMA virtual function; the sriov config is what the role derives (sriov_vf_selectors)."""
    from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import sriov_dp_config

    doc = sriov_dp_config([], facts("roce-b"))
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"nvidia.com/sriov_rdma_vf": 1}}}]}}
    result = pc.check(pod, [doc], {"roce-b": facts("roce-b"), "roce-a": facts("roce-a")})
    assert result["pools"]["roce-b"]["resources"]["nvidia.com/sriov_rdma_vf"]["status"] == "ok"
    assert result["pools"]["roce-a"]["resources"]["nvidia.com/sriov_rdma_vf"]["reason"].endswith(
        "(no ACTIVE RDMA virtual function)")
