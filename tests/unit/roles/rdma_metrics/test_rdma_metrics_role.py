# -*- coding: utf-8 -*-
"""rdma_metrics role: meta/argument_specs.yml mirrors defaults/main.yml, and the
shipped Prometheus rules use only metrics the collector writes (every
rdma_fabric_* name in the rule files appears in the collector's output on the
fixture hosts, every family at least once)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils import metrics
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import build_ready_host

from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import assert_specs_mirror_defaults, role_yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROLE = os.path.join(HERE, "..", "..", "..", "..", "roles", "rdma_metrics")
FIXTURES = os.path.join(HERE, "..", "..", "fixtures", "sysfs")


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults("rdma_metrics")


def _families(tmp_path):
    """Metric names the collector writes on fixture hosts with every part populated."""
    saved = tmp_path / "saved"
    saved.mkdir()
    (saved / "ens1f0.json").write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {"netdev": "ens1f0", "mtu": 9000}}))
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / metrics.APPLY_STAMP).write_text("1700000000\n")
    texts = []
    cfg = metrics.check_config({"sysfs": os.path.abspath(os.path.join(FIXTURES, "derived_roce_mlx5_ofed", "sys")),
                                "saved_dir": str(saved), "state_dir": str(tmp_path / "state"),
                                "apply_lock": str(tmp_path / "lock"),
                                "expected_ports": [{"match": "mlx5_0", "rate_gbps": 100}]})
    snap = metrics.collect(cfg)
    snap.pfc[("mlx5_0", 1)] = {"netdev": "ens1f0", "dcb": {"enabled": [3], "requests": [0] * 8, "indications": [0] * 8},
                               "ethtool": metrics.pfc_from_ethtool({"rx_prio3_pause_duration": 1})[0],
                               "storm": {"error": 0}}
    snap.drift_skipped = "test"
    texts.append(metrics.render(snap))
    texts.append(metrics.render(metrics.collect(metrics.check_config({
        "sysfs": os.path.abspath(os.path.join(FIXTURES, "procfs_mlx5_0", "sys")), "saved_dir": str(tmp_path / "none")}))))
    # rxe on virtio: no ECN files, so a saved ecn with on_unsupported warn is reported unsupported
    saved_rxe = tmp_path / "saved_rxe"
    saved_rxe.mkdir()
    (saved_rxe / "eth1.json").write_text(json.dumps({"ANSIBLE_MODULE_ARGS": {
        "netdev": "eth1", "mtu": 1500, "ecn": {"np": [3]}, "on_unsupported": "warn"}}))
    texts.append(metrics.render(metrics.collect(metrics.check_config({
        "sysfs": os.path.abspath(os.path.join(FIXTURES, "lab_rxe_lab1", "sys")), "saved_dir": str(saved_rxe),
        "apply_lock": str(tmp_path / "lock")}))))
    host = build_ready_host(str(tmp_path / "gpu"))
    texts.append(metrics.render(metrics.collect(metrics.check_config(
        {"sysfs": host.sys, "procfs": host.proc, "saved_dir": str(tmp_path / "none")}))))
    return set(re.findall(r"(?m)^# TYPE (\S+) ", "".join(texts)))


def test_rules_use_only_metrics_the_collector_writes(tmp_path):
    families = _families(tmp_path)
    used = set()
    for name in ("rdma_fabric_recording.rules.yml", "rdma_fabric_alerts.rules.yml"):
        for group in role_yaml("rdma_metrics", "files", "prometheus", name)["groups"]:
            for rule in group["rules"]:
                used.update(re.findall(r"\b(rdma_fabric_[a-z_]+)", rule["expr"]))
    assert used and used <= families, sorted(used - families)
    # and every family the README documents is one the collector writes, and the other way round
    with open(os.path.join(ROLE, "README.md")) as f:
        documented = set(re.findall(r"`(rdma_fabric_[a-z_]+)`", f.read()))
    assert families <= documented, sorted(families - documented)
    assert {d for d in documented if not d.endswith("_")} <= families, sorted(documented - families)
