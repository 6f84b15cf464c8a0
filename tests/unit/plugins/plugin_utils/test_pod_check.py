# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/pod_check.py and playbooks/check_pod.yml.

Facts: the fixture hosts of tests/unit/fixtures/k8s/facts (roce-gid3: two RoCE mlx5 NICs, the big host of those
fixtures; ib-a; lab1: Soft-RoCE). The device-plugin config is what the k8s_rdma_stack role renders with its
DEFAULT k8s_rdma_stack_shared_devices (read from roles/k8s_rdma_stack/defaults/main.yml, built by the same
function the role's filter calls). docs/examples/raycluster-rdma.yaml is the two-resource RayCluster of issue 19.

Today's default has only rdma_shared_device_a, so the RayCluster FAILS for rdma/rdma_shared_device_b: the test
pins that verdict and its reason. It flips when the two-resource default lands (issue 19, next phase).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils import pod_check as pc
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import shared_dev_plugin_config

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
FACTS = os.path.join(ROOT, "tests", "unit", "fixtures", "k8s", "facts")
RAY = os.path.join(ROOT, "docs", "examples", "raycluster-rdma.yaml")


def facts(name):
    with open(os.path.join(FACTS, name + ".json")) as f:
        return json.load(f)


def _yaml(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f)


def ray():
    with open(RAY) as f:
        return list(yaml.safe_load_all(f))


def default_configmap(pool_facts):
    """The shared-device-plugin ConfigMap as the role renders it with its default resources."""
    defaults = _yaml("roles", "k8s_rdma_stack", "defaults", "main.yml")
    doc = shared_dev_plugin_config(defaults["k8s_rdma_stack_shared_devices"], pool_facts,
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


def test_current_default_fails_for_device_b_with_the_reason():
    """FLIPS when issue 19's two-resource default lands: then both resources must be advertised."""
    pools = {"roce-gid3": facts("roce-gid3"), "ib-a": facts("ib-a")}
    result = pc.check(ray(), [default_configmap(list(pools.values()))], pools)
    assert result["ok"] is False
    assert result["advertised"] == ["rdma/rdma_shared_device_a"]
    for pool in pools:
        res = result["pools"][pool]["resources"]
        assert res["rdma/rdma_shared_device_a"]["status"] == "ok"
        assert res["rdma/rdma_shared_device_b"] == {
            "status": "missing", "devices": [],
            "reason": "no rendered device-plugin config advertises rdma/rdma_shared_device_b "
                      "(advertised: rdma/rdma_shared_device_a)"}
        assert res["nvidia.com/gpu-h800"]["status"] == "not_checked"
        assert "GPU Operator" in res["nvidia.com/gpu-h800"]["reason"]
    assert result["pools"]["roce-gid3"]["resources"]["rdma/rdma_shared_device_a"]["devices"] == [["mlx5_0:1", "mlx5_1:1"]]


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


def _collections_path():
    import ansible_collections.rdma.fabric as pkg
    return os.path.abspath(os.path.join(list(pkg.__path__)[0], "..", "..", ".."))


def test_check_pod_playbook_on_a_rendered_folder(tmp_path):
    """playbooks/check_pod.yml on an output folder holding the default ConfigMap, with the pools' facts given
    (check_pod_pools): the fixture hosts do not exist, so none is contacted."""
    rendered = tmp_path / "rendered"
    rendered.mkdir()
    pools = {"node-a": facts("roce-gid3"), "node-b": facts("ib-a")}
    with open(str(rendered / "005-configmap-kube-system-rdma-devices.yaml"), "w") as f:
        yaml.safe_dump(default_configmap(list(pools.values())), f)
    with open(str(tmp_path / "vars.json"), "w") as f:
        json.dump({"check_pod_spec": os.path.abspath(RAY), "check_pod_rendered": str(rendered), "check_pod_pools": pools}, f)
    env = dict(os.environ)
    env.update({"ANSIBLE_COLLECTIONS_PATH": _collections_path(), "ANSIBLE_NOCOLOR": "1",
                "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp")})
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", "localhost,",
         "-e", "@" + str(tmp_path / "vars.json"),
         os.path.join(ROOT, "playbooks", "check_pod.yml")],
        env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
        timeout=300, check=False)
    assert proc.returncode == 2, proc.stdout[-4000:]
    assert "node-a: rdma/rdma_shared_device_b: no rendered device-plugin config advertises rdma/rdma_shared_device_b" \
        in proc.stdout, proc.stdout[-4000:]
    assert "node-b: rdma/rdma_shared_device_b" in proc.stdout
    assert "rdma/rdma_shared_device_a:" not in proc.stdout.split("Every requested resource")[-1]


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
