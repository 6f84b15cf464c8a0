# -*- coding: utf-8 -*-
"""The example manifests in docs/examples request what the k8s_rdma_stack role
provides, and validate offline (no Kubernetes API here): the Pod with
kubernetes-validate --strict; the RayCluster (a CRD without a schema here) by
validating each of its pod templates as a Pod, strictly."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

import kubernetes_validate
import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")


def _yaml(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return yaml.safe_load(f)


DEFAULTS = _yaml("roles", "k8s_rdma_stack", "defaults", "main.yml")
RESOURCE = "rdma/" + DEFAULTS["k8s_rdma_stack_shared_devices"][0]["resourceName"]
CAPABLE = DEFAULTS["k8s_rdma_stack_node_label_prefix"] + "/capable"
NCCL_POOL = DEFAULTS["k8s_rdma_stack_node_label_prefix"] + "/nccl-pool"


def _check_nccl(spec):
    """Issue 19: the pod selects one node pool by its label and reads that pool's NCCL ConfigMap."""
    pool = spec["nodeSelector"][NCCL_POOL]
    assert re.fullmatch(r"(ib|roce|iwarp|soft|other)[0-9]+(-[a-z]+[0-9]+)*-[0-9a-f]{8}", pool)  # a node_pools pool name
    container = spec["containers"][0]
    assert container["envFrom"] == [{"configMapRef": {"name": DEFAULTS["k8s_rdma_stack_nccl_configmap_name"] + "-" + pool}}]


def _check_pod_spec(spec, resources):
    container = spec["containers"][0]
    for name in resources:
        assert container["resources"]["limits"][name] == 1
        assert container["resources"]["requests"][name] == 1
    _check_nccl(spec)
    assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
    assert spec["nodeSelector"][CAPABLE] == "true"


def test_example_pod():
    pod = _yaml("docs", "examples", "rdma-pod.yaml")
    assert RESOURCE == "rdma/rdma_shared_device_a"
    kubernetes_validate.validate(pod, "1.33.0", strict=True)
    _check_pod_spec(pod["spec"], [RESOURCE])


def test_example_raycluster():
    """The one RayCluster example: every pod template (head and workers) validates as a Pod, asks for one device of
    each default shared resource and eight GPUs, locks memory, and reads its node pool's NCCL ConfigMap."""
    ray = _yaml("docs", "examples", "raycluster-rdma.yaml")
    assert ray["apiVersion"] == "ray.io/v1" and ray["kind"] == "RayCluster"
    templates = [ray["spec"]["headGroupSpec"]["template"]] + [g["template"] for g in ray["spec"]["workerGroupSpecs"]]
    for i, template in enumerate(templates):
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "template-%d" % i}, "spec": template["spec"]}
        kubernetes_validate.validate(pod, "1.33.0", strict=True)
        container = template["spec"]["containers"][0]
        for name in (RESOURCE, "rdma/rdma_shared_device_b"):
            assert container["resources"]["limits"][name] == container["resources"]["requests"][name] == 1
        assert container["resources"]["limits"]["nvidia.com/gpu-h800"] == 8
        assert "IPC_LOCK" in container["securityContext"]["capabilities"]["add"]
        _check_nccl(template["spec"])


def test_default_resources_are_what_the_examples_request():
    """Issue 19: the default k8s_rdma_stack_shared_devices gives every rdma/ resource the examples request (which
    nodes can give both is pod_check's question: tests/unit/plugins/plugin_utils/test_pod_check.py)."""
    names = ["rdma/" + r["resourceName"] for r in DEFAULTS["k8s_rdma_stack_shared_devices"]]
    assert names == ["rdma/rdma_shared_device_a", "rdma/rdma_shared_device_b"]
    splits = [r["split"] for r in DEFAULTS["k8s_rdma_stack_shared_devices"]]
    assert splits == [{"part": 1, "parts": 2}, {"part": 2, "parts": 2}]
    for example in ("raycluster-rdma.yaml", "rdma-pod.yaml"):
        with open(os.path.join(ROOT, "docs", "examples", example)) as f:
            for doc in yaml.safe_load_all(f):
                text = yaml.safe_dump(doc)
                for word in text.split():
                    if word.startswith("rdma/rdma_shared"):
                        assert word.rstrip(":") in names, (example, word)
