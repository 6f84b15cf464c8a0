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
import subprocess
import sys

import pytest
import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
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
    (saved / "ens1f0.json").write_text(json.dumps({"netdev": "ens1f0", "mtu": 9000}))
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
    (saved_rxe / "eth1.json").write_text(json.dumps({
        "netdev": "eth1", "mtu": 1500, "ecn": {"np": [3]}, "on_unsupported": "warn"}))
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


# --------------------------------------------------------------------------
# the real role in check mode on this machine (it has no RDMA device and no
# host runtime; nothing is written): what it would write, from the diff
# --------------------------------------------------------------------------
PLAYBOOK = os.path.join(HERE, "check_mode.yml")
# Check mode writes nothing; a folder this machine does not have (the role confines the folder to /var/lib and the
# like: it goes into the collector unit's ReadWritePaths=).
TEXTFILE_DIR = "/var/lib/rdma-fabric-test/textfile"


def run_role(tmp_path, extra_vars):
    import ansible_collections.rdma.fabric as pkg
    env = dict(os.environ)
    env.update({
        "ANSIBLE_COLLECTIONS_PATH": os.path.abspath(os.path.join(list(pkg.__path__)[0], "..", "..", "..")),
        "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.json", "ANSIBLE_LOCAL_TEMP": str(tmp_path / "tmp"),
        "ANSIBLE_CACHE_PLUGIN": "memory", "ANSIBLE_PYTHON_INTERPRETER": sys.executable, "ANSIBLE_NOCOLOR": "1",
    })
    env.pop("ANSIBLE_CONFIG", None)
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    proc = subprocess.run([ansible_playbook, "-i", "localhost,", "--check", "--diff", "-e", json.dumps(extra_vars), PLAYBOOK],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=600, check=False)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise AssertionError("no JSON from ansible-playbook (rc=%d): %s %s" % (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:]))
    tasks = {}
    for play in out["plays"]:
        for task in play["tasks"]:
            result = task["hosts"].get("localhost", {})
            tasks.setdefault(task["task"]["name"].split(" : ", 1)[-1], []).append(result)
    return proc.returncode, tasks


def _afters(result):
    """Each item's or the task's diff 'after' text, keyed by the file written."""
    out = {}
    for item in result.get("results") or [result]:
        diffs = item.get("diff") or []
        for d in diffs if isinstance(diffs, list) else [diffs]:
            if d and "after" in d:
                out[d.get("after_header") or item.get("dest") or item.get("item", {}).get("dest")] = d["after"]
    return out


def test_check_mode_writes_nothing_and_shows_every_file(tmp_path):
    rc, tasks = run_role(tmp_path, {"rdma_metrics_expected_ports": [{"match": "mlx5_*", "rate_gbps": 400}, {"match": "rxe0/1"}],
                                    "rdma_metrics_interval": 30, "rdma_metrics_health_slurm_drain": True,
                                    "rdma_metrics_textfile_dir": TEXTFILE_DIR})
    assert rc == 0, tasks
    config = list(_afters(tasks["Write the collector's configuration"][0]).values())
    assert len(config) == 1
    text = config[0]
    cfg = metrics.check_config(json.loads(text))  # what the role writes, the collector accepts
    assert cfg["expected_ports"] == [{"match": "mlx5_*", "rate_gbps": 400.0}, {"match": "rxe0/1", "rate_gbps": None}]
    assert cfg["textfile"] == TEXTFILE_DIR + "/rdma_fabric.prom"
    # The version the role reads: MANIFEST.json in an installed collection, galaxy.yml in a source tree.
    top = os.path.join(ROLE, "..", "..")
    if os.path.exists(os.path.join(top, "MANIFEST.json")):
        with open(os.path.join(top, "MANIFEST.json")) as f:
            version = json.load(f)["collection_info"]["version"]
    else:
        with open(os.path.join(top, "galaxy.yml")) as f:
            version = yaml.safe_load(f)["version"]
    assert cfg["collection_version"] == version
    files = _afters(tasks["Install the collector's service and timer, and the health check"][0])
    unit = files["/etc/systemd/system/rdma-fabric-metrics.service"]
    assert ("ExecStart=/usr/bin/python3 -E -s /usr/lib/rdma-fabric/rdma-fabric.pyz metrics --config /etc/rdma-fabric/metrics.json\n"
            in unit)
    assert "ReadWritePaths=%s -/sys/kernel/config\n" % TEXTFILE_DIR in unit
    assert "OnUnitActiveSec=30s\n" in files["/etc/systemd/system/rdma-fabric-metrics.timer"]
    assert files["/usr/local/sbin/rdma-fabric-health-check"].endswith(
        "exec /usr/bin/python3 -E -s /usr/lib/rdma-fabric/rdma-fabric.pyz health-check --config /etc/rdma-fabric/metrics.json "
        "--slurm-drain \"$@\"\n")
    dropin = _afters(tasks["Hook the collector to every successful lossless re-apply (drop-in)"][0])
    assert list(dropin) == ["/etc/systemd/system/rdma-fabric-lossless.service.d/50-rdma-fabric-metrics.conf"]
    assert ("[Service]\nExecStartPost=-/usr/bin/python3 -E -s /usr/lib/rdma-fabric/rdma-fabric.pyz metrics "
            "--config /etc/rdma-fabric/metrics.json --record-apply\n") in list(dropin.values())[0]


def test_auto_expected_ports_on_a_host_without_rdma(tmp_path):
    rc, tasks = run_role(tmp_path, {"rdma_metrics_textfile_dir": TEXTFILE_DIR})
    assert rc == 0, tasks
    config = list(_afters(tasks["Write the collector's configuration"][0]).values())
    assert len(config) == 1 and json.loads(config[0])["expected_ports"] == []


@pytest.mark.parametrize("variables, needle", [
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0/x"}]}, "rdma_metrics_expected_ports[0].match: 'mlx5_0/x'"),
    ({"rdma_metrics_expected_ports": [{"match": "mlx5_0/1", "rate_gbps": -100}]},
     "rdma_metrics_expected_ports[0].rate_gbps: -100"),
    # a line break in a path would end the line of the unit file it is written into (ReadWritePaths=)
    ({"rdma_metrics_textfile_dir": "/var/lib/node-exporter\nExecStartPre=/bin/sh"}, "rdma_metrics_textfile_dir: "),
    # a blank would add another writable folder to ReadWritePaths=; / or /etc make the system writable
    ({"rdma_metrics_textfile_dir": "/var/lib/prometheus/node-exporter /etc"}, "rdma_metrics_textfile_dir: "),
    ({"rdma_metrics_textfile_dir": "/etc"}, "allowed: a folder below /var/lib"),
    ({"rdma_metrics_textfile_dir": "/var/lib/x/../../../etc"}, "without '.' or '..' parts"),
])
def test_bad_variables_are_refused_before_anything(tmp_path, variables, needle):
    rc, tasks = run_role(tmp_path, variables)
    assert rc != 0
    failed = tasks["Check the role's variables"][0]
    assert failed["failed"] is True and needle in failed["msg"]
    assert "Read the collector's files, folders and timer (one call)" not in tasks
