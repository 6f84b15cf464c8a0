# -*- coding: utf-8 -*-
"""Unit tests for module_utils/runtime/health_check.py (the Slurm/NHC health check).

The host is read by the collector's reader from the sysfs fixtures (REAL
lab capture ``lab_rxe_lab1``; DERIVED GPU trees of tests/unit/fixtures/pci).
``scontrol`` is a clearly named test double, a script on PATH that records
its arguments and answers ``show node`` with REAL output of Slurm 22.05's
``scontrol show node`` (Debian's slurm-client, captured on the lab's real
Slurm: tests/unit/fixtures/slurm). The lab's slurm scenario runs the check
as slurmd's HealthCheckProgram against the real slurmctld.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import health_check
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import build_ready_host

HERE = os.path.dirname(os.path.abspath(__file__))
LAB = os.path.abspath(os.path.join(HERE, "..", "..", "..", "fixtures", "sysfs", "lab_rxe_lab1"))
SLURM = os.path.abspath(os.path.join(HERE, "..", "..", "..", "fixtures", "slurm"))


def lab_copy(tmp_path):
    dest = tmp_path / "lab"
    shutil.copytree(LAB, str(dest), symlinks=True)
    return str(dest)


def write_config(tmp_path, **raw):
    raw.setdefault("saved_dir", str(tmp_path / "saved"))
    raw.setdefault("textfile", str(tmp_path / "rdma_fabric.prom"))
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(raw))
    return str(path)


def port_attr(root, name):
    return os.path.join(root, "sys", "devices", "virtual", "infiniband", "rxe0", "ports", "1", name)


def test_healthy_node_prints_ok(tmp_path, capsys):
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"), expected_ports=[{"match": "rxe0/1", "rate_gbps": 2.5}])
    assert health_check.cli_main(["--config", cfg]) == 0
    out = capsys.readouterr().out
    assert out == "OK: 1 expected RDMA port up at rate, 0 lossless ports without drift\n"


def test_port_down_fails_in_one_line(tmp_path, capsys):
    root = lab_copy(tmp_path)
    with open(port_attr(root, "state"), "w") as f:
        f.write("1: DOWN\n")
    with open(port_attr(root, "phys_state"), "w") as f:
        f.write("3: Disabled\n")
    cfg = write_config(tmp_path, sysfs=os.path.join(root, "sys"), expected_ports=[{"match": "rxe*"}])
    assert health_check.cli_main(["--config", cfg]) == 1
    assert capsys.readouterr().out == "ERROR: RDMA port rxe0/1 (eth1) is DOWN (physical state Disabled)\n"


def test_rate_below_expected_and_missing_port(tmp_path, capsys):
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"),
                       expected_ports=[{"match": "rxe0", "rate_gbps": 10}, {"match": "mlx5_0/1"}])
    assert health_check.cli_main(["--config", cfg]) == 1
    assert capsys.readouterr().out == ("ERROR: RDMA port rxe0/1 (eth1) runs at 2.5 Gb/s, expected at least 10 Gb/s; "
                                       "expected RDMA port mlx5_0/1 is missing\n")


def test_ports_not_expected_are_not_judged(tmp_path, capsys):
    root = lab_copy(tmp_path)
    with open(port_attr(root, "state"), "w") as f:
        f.write("1: DOWN\n")
    cfg = write_config(tmp_path, sysfs=os.path.join(root, "sys"))
    assert health_check.cli_main(["--config", cfg]) == 0


def test_drift_and_a_port_that_is_gone(tmp_path, capsys):
    os.makedirs(str(tmp_path / "saved"))
    for netdev, args in (("eth1", {"mtu": 9000}), ("eth9", {"mtu": 9000})):
        with open(str(tmp_path / "saved" / (netdev + ".json")), "w") as f:
            json.dump(dict(args, netdev=netdev), f)
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"))
    assert health_check.cli_main(["--config", cfg]) == 1
    out = capsys.readouterr().out
    assert out.startswith("ERROR: eth1: mtu differs from the applied lossless profile; eth9: the lossless settings "
                          "could not be compared: eth9.netdev: interface 'eth9' does not exist")
    assert out.count("\n") == 1


def test_gpudirect_checked_where_there_are_gpus(tmp_path, capsys):
    ready = build_ready_host(str(tmp_path / "ready"))
    cfg = write_config(tmp_path, sysfs=ready.sys, procfs=ready.proc)
    assert health_check.cli_main(["--config", cfg]) == 0
    assert "GPUDirect RDMA ready" in capsys.readouterr().out
    broken = build_ready_host(str(tmp_path / "broken"), iommu="DMA")
    cfg = write_config(tmp_path, sysfs=broken.sys, procfs=broken.proc)
    assert health_check.cli_main(["--config", cfg]) == 1
    assert capsys.readouterr().out.startswith("ERROR: GPUDirect RDMA is not ready: the IOMMU translates DMA for")


def test_gpudirect_required_on_a_host_without_gpus(tmp_path, capsys):
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"), gpudirect="required")
    assert health_check.cli_main(["--config", cfg]) == 1
    assert capsys.readouterr().out.startswith("ERROR: GPUDirect RDMA is not ready: no NVIDIA GPU")
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"), gpudirect="ignore")
    assert health_check.cli_main(["--config", cfg]) == 0


def test_bad_configuration_exits_2(tmp_path, capsys):
    cfg = write_config(tmp_path, expected_ports=[{"match": ""}])
    assert health_check.cli_main(["--config", cfg]) == 2
    assert capsys.readouterr().out.startswith("ERROR: rdma-fabric health-check: configuration error: expected_ports")


# --------------------------------------------------------------------------
# Slurm, with a test double of scontrol
# --------------------------------------------------------------------------
FAKE_SCONTROL = """#!/bin/sh
# TEST DOUBLE of Slurm 22.05's scontrol: records its arguments, answers `show node` with the file $FAKE_NODE_SHOW
# (real output of `scontrol show node`, tests/unit/fixtures/slurm).
printf '%%s\\n' "$*" >> "%(log)s"
if [ "$1" = show ]; then
  cat "$FAKE_NODE_SHOW"
fi
"""


def fake_scontrol(tmp_path, monkeypatch, show):
    """``show``: the fixture file ``scontrol show node`` answers with."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "scontrol.log"
    script = bindir / "scontrol"
    script.write_text(FAKE_SCONTROL % {"log": log})
    script.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bindir, os.environ["PATH"]))
    monkeypatch.setenv("FAKE_NODE_SHOW", os.path.join(SLURM, show) if not os.path.isabs(show) else show)
    return log


def test_real_scontrol_show_node_read():
    """The node's state and reason from Slurm 22.05's own output: idle (no Reason line at all), drained by this
    check (the reason without Slurm's "[user@time]" suffix)."""
    def read(name):
        with open(os.path.join(SLURM, name)) as f:
            return f.read()
    assert health_check.parse_node(read("scontrol_show_node_idle.txt")) == ("IDLE", "")
    assert health_check.parse_node(read("scontrol_show_node_drained_by_health_check.txt")) == (
        "IDLE+DRAIN", "rdma-fabric: RDMA port rxe1/1 (rdmad0) is DOWN (physical state Disabled)")
    # sinfo -R, at the same moment, shows the reason's first 20 characters: the check's prefix is what an operator
    # sees there, and what resume_if_ours looks for
    header, row = read("sinfo_R_drained_by_health_check.txt").splitlines()
    assert header.split() == ["REASON", "USER", "TIMESTAMP", "NODELIST"]
    assert row[:20] == "rdma-fabric: RDMA port rxe1/1 (rdmad0) is DOWN (physical state Disabled)"[:20]
    assert row[:20].startswith(health_check.REASON_PREFIX)


def test_slurm_drain_on_failure(tmp_path, monkeypatch, capsys):
    log = fake_scontrol(tmp_path, monkeypatch, "scontrol_show_node_idle.txt")
    expected = [{"match": "rxe0", "rate_gbps": 10}, {"match": "mlx5_0"}]
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"), expected_ports=expected)
    assert health_check.cli_main(["--config", cfg, "--slurm-drain", "--node", "n1"]) == 1
    assert capsys.readouterr().out.endswith("[drained n1]\n")
    assert log.read_text() == ("update NodeName=n1 State=DRAIN Reason=rdma-fabric: RDMA port rxe0/1 (eth1) runs at "
                               "2.5 Gb/s, expected at least 10 Gb/s (and 1 more)\n")


def test_slurm_resume_only_what_it_drained(tmp_path, monkeypatch, capsys):
    cfg = write_config(tmp_path, sysfs=os.path.join(LAB, "sys"))
    log = fake_scontrol(tmp_path, monkeypatch, "scontrol_show_node_drained_by_health_check.txt")
    assert health_check.cli_main(["--config", cfg, "--slurm-drain", "--node", "n1"]) == 0
    assert capsys.readouterr().out.endswith("[resumed n1]\n")
    assert log.read_text() == "show node n1\nupdate NodeName=n1 State=RESUME\n"
    log.unlink()
    # DERIVED from the real capture: the same node drained by someone else (another reason)
    other = tmp_path / "drained_by_admin.txt"
    with open(os.path.join(SLURM, "scontrol_show_node_drained_by_health_check.txt")) as f:
        other.write_text(f.read().replace("rdma-fabric: RDMA port rxe1/1 (rdmad0) is DOWN (physical state Disabled)",
                                          "disk full"))
    monkeypatch.setenv("FAKE_NODE_SHOW", str(other))
    assert health_check.cli_main(["--config", cfg, "--slurm-drain", "--node", "n1"]) == 0
    assert log.read_text() == "show node n1\n"  # drained by someone else: left alone
    log.unlink()
    # in service (no Reason line): nothing to resume
    monkeypatch.setenv("FAKE_NODE_SHOW", os.path.join(SLURM, "scontrol_show_node_idle.txt"))
    assert health_check.cli_main(["--config", cfg, "--slurm-drain", "--node", "n1"]) == 0
    assert log.read_text() == "show node n1\n"
