# -*- coding: utf-8 -*-
"""Unit tests for plugins/plugin_utils/report.py (data model and renderings).

Inputs: REAL facts and a REAL roce_qos check-mode result from the lab VMs,
gpudirect facts computed by the gpudirect module from the DERIVED
derived_gpu_nic_topology tree (tests/unit/fixtures/fabric/README.md), and
validation entries in the rdma_validate role's shape.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os
import re

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import plan as fp
from ansible_collections.rdma.fabric.plugins.plugin_utils import report as rpt
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils.test_plan import fleet_plan

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fabric")


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


def validation():
    common = dict(hosts=["lab1", "lab2"], server="lab1", client="lab2", devices=["rxe0", "rxe0"], ports=[1, 1],
                  gid_indices=[1, 1], server_ip="192.0.2.11", elapsed_s=None)
    return [
        dict(common, test="precheck", passed=True, bandwidth_gbps=None, latency_us=None, min_bandwidth_gbps=None,
             max_latency_us=None, tcp_port=None, message="pre-check ok: lab1 rxe0 port 1 and lab2 rxe0 port 1 ACTIVE"),
        dict(common, test="ib_write_bw", passed=True, bandwidth_gbps=0.0481, latency_us=None, min_bandwidth_gbps=0.0025,
             max_latency_us=None, tcp_port=18516, message="ib_write_bw client ok: 0.048 Gb/s"),
        dict(common, test="ib_send_lat", passed=False, bandwidth_gbps=None, latency_us=27080.55,
             min_bandwidth_gbps=None, max_latency_us=10.0, tcp_port=18517,
             message="ib_send_lat client failed: latency 27080.55 us above the threshold 10.00 us"),
    ]


@pytest.fixture(name="hosts")
def fixture_hosts():
    lab1 = load("lab_lab1_facts.json")
    lab2 = load("lab_lab2_facts.json")
    gpu = copy.deepcopy(lab1)
    gpu["gpudirect"] = load("derived_gpu_nic_topology_gpudirect.json")
    return {
        "lab1": {"reachable": True, "facts_source": "live", "rdma": lab1["rdma"], "gpudirect": lab1["gpudirect"],
                 "qos": {"eth1": load("lab_lab1_roce_qos_check.json")}},
        "lab2": {"reachable": False, "message": "Failed to connect to the host via ssh: Connection refused",
                 "facts_source": "cache", "rdma": lab2["rdma"], "gpudirect": None},
        "gpu1": {"reachable": True, "rdma": gpu["rdma"], "gpudirect": gpu["gpudirect"], "qos": None},
    }


def test_build_report_hosts_and_summary(hosts):
    report = rpt.build_report(hosts, validation(), generated_at="2026-11-21T01:00:00+00:00")
    assert report["schema_version"] == 1
    assert sorted(report["hosts"]) == ["gpu1", "lab1", "lab2"]
    assert report["summary"] == {
        "hosts": 3, "reachable": 2, "unreachable": ["lab2"], "failed": [], "hosts_with_problems": ["gpu1", "lab1", "lab2"],
        "devices": 3, "ports": 3, "ports_active": 3, "gpu_hosts": 1, "gpudirect_ready": 0, "pools": 0,
        "validation": {"total": 3, "passed": 2, "failed": 1, "not_run": 0}, "ok": False,
    }
    lab1 = report["hosts"]["lab1"]
    assert lab1["status"] == "problems" and lab1["reachable"] is True and lab1["facts_source"] == "live"
    assert lab1["stack"]["flavor"] == "inbox"
    (dev,) = lab1["devices"]
    assert (dev["name"], dev["driver"], dev["soft"], dev["parent_netdev"]) == ("rxe0", "rdma_rxe", True, "eth1")
    (p,) = dev["ports"]
    assert (p["number"], p["state"], p["phys_state"], p["link_layer"], p["rate"], p["rate_gbps"], p["netdev"],
            p["mtu"], p["roce_v2_ipv4_gid_index"], p["roce_v2_ip"], p["gid_count"]) == (
        1, "ACTIVE", "LinkUp", "Ethernet", "2.5 Gb/sec (1X SDR)", 2.5, "eth1", 1500, 1, "192.0.2.11", 3)
    # the real roce_qos check-mode result on virtio eth1 after lossless_ethernet ran: ToS and mode as the
    # profile wants, DCB not supported by the driver (a fact of virtio, not a drift)
    assert p["qos"] == {"state": {"roce_mode": "v2", "roce_tos": 106}, "backend": None, "drift": [],
                        "unsupported": ["trust", "dscp2prio", "pfc"], "error": None, "problems": []}
    assert lab1["problems"] == [
        "ib_send_lat lab1 -> lab2 failed: ib_send_lat client failed: latency 27080.55 us above the threshold 10.00 us",
    ]
    # no GPU is not a problem
    assert lab1["gpudirect"]["gpu_count"] == 0 and lab1["gpudirect"]["ready"] is False
    assert lab1["validation"] == {"passed": 2, "failed": 1}


def test_unreachable_host_is_marked_and_keeps_cached_facts(hosts):
    report = rpt.build_report(hosts, validation())
    lab2 = report["hosts"]["lab2"]
    assert lab2["status"] == "unreachable" and lab2["reachable"] is False and lab2["facts_source"] == "cache"
    assert lab2["problems"][0] == "unreachable: Failed to connect to the host via ssh: Connection refused"
    assert lab2["devices"][0]["ports"][0]["roce_v2_ip"] == "192.0.2.12"
    assert "lab2: unreachable: Failed to connect to the host via ssh: Connection refused" in report["problems"]
    nothing = rpt.build_report({"lab9": {"reachable": False, "message": "not reached"}}, [])
    assert nothing["hosts"]["lab9"]["problems"] == ["unreachable: not reached"]
    assert nothing["hosts"]["lab9"]["devices"] == []


def test_host_that_failed_earlier_is_marked_failed(hosts):
    """A host where a task failed earlier in the run (report.yml reads it again): status failed, not unreachable."""
    failed = copy.deepcopy(hosts["lab1"])
    failed.update(failed_earlier=True, qos=None)
    failed["rdma"]["devices"] = []  # e.g. the soft_roce stage stopped it before rxe0 existed
    report = rpt.build_report({"lab1": failed, "lab2": hosts["lab2"]}, [])
    lab1 = report["hosts"]["lab1"]
    assert lab1["status"] == "failed" and lab1["reachable"] is True
    assert lab1["problems"][0].startswith("failed earlier in this run: its later stages did not run there")
    assert lab1["problems"][1:] == ["no RDMA devices"]
    assert report["summary"]["failed"] == ["lab1"] and report["summary"]["unreachable"] == ["lab2"]
    assert report["summary"]["ok"] is False
    assert rpt.summary_lines(report)[:2] == [
        "overall: PROBLEMS", "hosts: 2 (1 reachable, unreachable: lab2, failed earlier: lab1); ports ACTIVE: 1 of 1; "
        "GPUDirect ready: 0 of 0 GPU hosts"]
    assert '<section class="host failed" id="host-lab1"><h2>lab1 <span class="badge failed">failed</span>' in rpt.render_html(report)
    # an unreachable host stays unreachable whatever failed_earlier says; false or absent changes nothing
    assert rpt.build_report({"lab2": dict(hosts["lab2"], failed_earlier=True)}, [])["hosts"]["lab2"]["status"] == "unreachable"
    plain = rpt.build_report({"lab1": hosts["lab1"]}, validation())["hosts"]["lab1"]
    assert plain == rpt.build_report({"lab1": dict(hosts["lab1"], failed_earlier=False)}, validation())["hosts"]["lab1"]


def test_gpudirect_view_from_derived_topology(hosts):
    gd = rpt.build_report(hosts, [])["hosts"]["gpu1"]["gpudirect"]
    assert gd["gpu_count"] == 2 and gd["ready"] is False
    assert gd["matrix"] == {"0000:03:00.0": {"mlx5_0": "PIX", "mlx5_1": "PHB", "mlx5_2": "NODE", "mlx5_3": "PXB"},
                            "0000:81:00.0": {"mlx5_0": "SYS", "mlx5_1": "SYS", "mlx5_2": "SYS", "mlx5_3": "SYS"}}
    assert gd["nearest_nic"] == {"0000:03:00.0": "mlx5_0 (PIX)", "0000:81:00.0": "mlx5_0 (SYS)"}
    assert gd["driver"] == "not loaded" and gd["dmabuf"] is False and gd["peermem"] == []
    problems = rpt.build_report(hosts, [])["hosts"]["gpu1"]["problems"]
    assert problems[0] == ("GPUDirect RDMA not ready: the NVIDIA kernel driver is not loaded (/sys/module/nvidia is missing) "
                           "(and 8 more reasons)")


def test_qos_drift_is_a_problem(hosts):
    drifted = copy.deepcopy(hosts["lab1"])
    result = drifted["qos"]["eth1"]
    result["before"]["roce_tos"] = 0
    result["changes"]["roce_tos"] = True
    view = rpt.build_report({"lab1": drifted}, [])["hosts"]["lab1"]
    assert view["devices"][0]["ports"][0]["qos"]["drift"] == ["roce_tos"]
    assert view["problems"] == ["rxe0 port 1 (eth1) QoS differs from the lossless profile: roce_tos"]
    md = rpt.render_markdown(rpt.build_report({"lab1": drifted}, []))
    assert "roce_mode v2; roce_tos 0; not supported by the driver: trust, dscp2prio, pfc; DRIFT: roce_tos" in md


def test_port_problems(hosts):
    down = copy.deepcopy(hosts["lab1"])
    down["rdma"]["devices"][0]["ports"][0].update(state="DOWN", phys_state="Disabled", roce_v2_ipv4_gid_index=None)
    down["qos"] = None
    view = rpt.build_report({"lab1": down}, [])["hosts"]["lab1"]
    assert view["problems"] == ["rxe0 port 1 (eth1) is DOWN, not ACTIVE",
                                "rxe0 port 1 (eth1) has no RoCE v2 IPv4 GID (no IPv4 address on eth1?)"]
    assert rpt.build_report({"h": {"rdma": {"devices": []}}}, [])["hosts"]["h"]["problems"] == ["no RDMA devices"]
    assert rpt.build_report({"h": {}}, [])["hosts"]["h"]["problems"] == ["no RDMA facts"]
    failed_qos = copy.deepcopy(hosts["lab1"])
    failed_qos["qos"] = {"eth1": {"failed": True, "msg": "netdev: eth1 is not an RDMA port"}}
    assert rpt.build_report({"lab1": failed_qos}, [])["hosts"]["lab1"]["problems"] == [
        "rxe0 port 1 (eth1) QoS state unreadable: netdev: eth1 is not an RDMA port"]


def test_json_rendering_round_trips(hosts):
    report = rpt.build_report(hosts, validation(), generated_at="2026-11-21T01:00:00+00:00")
    data = json.loads(rpt.render_json(report))
    assert set(data) == {"schema_version", "title", "generated_at", "summary", "problems", "hosts", "validation"}
    assert isinstance(data["hosts"], dict) and isinstance(data["validation"], list)
    assert data["validation"][1]["bandwidth_gbps"] == 0.0481
    assert rpt.render_json(report) == rpt.render_json(rpt.build_report(hosts, validation(),
                                                                       generated_at="2026-11-21T01:00:00+00:00"))


def test_markdown_rendering(hosts):
    md = rpt.render_markdown(rpt.build_report(hosts, validation(), generated_at="2026-11-21T01:00:00+00:00"))
    assert md.startswith("# RDMA fabric report\n")
    assert "**Overall: PROBLEMS** - 3 hosts (2 reachable), 3 of 3 ports ACTIVE" in md
    assert "### lab2 - UNREACHABLE" in md
    assert "| rxe0 | rdma_rxe | 1 | ACTIVE | Ethernet | 2.5 Gb/sec (1X SDR) | eth1 | 1500 | 1 | 192.0.2.11 |" in md
    assert "| ib_write_bw | lab1 -> lab2 | rxe0/1 gid 1 <-> rxe0/1 gid 1 | 0.048 | - | >= 0.003 Gb/s | PASS |" in md
    assert "| ib_send_lat | lab1 -> lab2 |" in md and "**FAIL**" in md
    assert "| 0000:03:00.0 | PIX | PHB | NODE | PXB | mlx5_0 (PIX) |" in md
    # table cells cannot be broken by a pipe in a message
    broken = validation()
    broken[1]["message"] = "a | b"
    assert "a \\| b" in rpt.render_markdown(rpt.build_report(hosts, broken))


def test_html_is_self_contained_and_escapes(hosts):
    evil = copy.deepcopy(hosts)
    evil["lab2"]["message"] = "<script>alert(1)</script>"
    html = rpt.render_html(rpt.build_report(evil, validation(), generated_at="2026-11-21T01:00:00+00:00"))
    assert html.startswith("<!DOCTYPE html>")
    assert "<style>" in html
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # no external resources of any kind
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "@import" not in html and "url(" not in html
    # problems are highlighted: the failed test row, the unreachable host, the problems box
    assert '<tr class="bad"><td>ib_send_lat</td>' in html
    assert '<section class="host unreachable" id="host-lab2"><h2>lab2 <span class="badge unreachable">unreachable</span>' in html
    assert '<div class="problems-box"><h2>Problems (' in html
    assert '<td class="rel-PIX">PIX</td>' in html
    assert html.count("<section") == 4


def test_summary_lines(hosts):
    lines = rpt.summary_lines(rpt.build_report(hosts, validation()), "reports/fabric-report.html")
    assert lines[0] == "RDMA fabric report: reports/fabric-report.html"
    assert lines[1] == "overall: PROBLEMS"
    assert lines[2] == ("hosts: 3 (2 reachable, unreachable: lab2); ports ACTIVE: 3 of 3; "
                        "GPUDirect ready: 0 of 1 GPU hosts")
    assert "  lab1         problems    rxe0/1 ACTIVE 2.5G gid=1; no GPU" in lines
    assert "validation: 2 passed, 1 failed, 0 not run" in lines
    assert any(line.startswith("  PASS     ib_write_bw  lab1 -> lab2") and "0.048 Gb/s" in line for line in lines)
    assert len(lines) < 40


def test_render_unknown_format(hosts):
    with pytest.raises(ValueError, match="formats: unknown format 'pdf'"):
        rpt.render(rpt.build_report(hosts, []), "pdf")


# The gates as site.yml's rollout_finish.yml records them (rollout.gate), one passed, one failed.
GATES = [
    {"batch": 1, "of": 3, "hosts": ["lab1"], "reference": None, "ok": True, "failed": {}, "passed": ["lab1"],
     "message": "batch 1 of 3 (lab1) passed its health gate"},
    {"batch": 2, "of": 3, "hosts": ["lab2"], "reference": "lab1", "ok": False, "passed": [],
     "failed": {"lab2": ["rping: rping not found on this host <script>"]},
     "message": "Rollout stopped at batch 2 of 3 (lab2): the health gate failed for lab2: rping: ..."},
]


def test_rollout_gates_in_every_format(hosts):
    plain = rpt.build_report(hosts, validation(), generated_at="2026-01-01T00:00:00+00:00")
    assert "rollout" not in plain and "Staged rollout" not in rpt.render_html(plain)
    report = rpt.build_report(hosts, validation(), generated_at="2026-01-01T00:00:00+00:00", rollout=GATES)
    assert report["rollout"]["ok"] is False and report["summary"]["ok"] is False
    assert [(g["batch"], g["ok"], g["reference"]) for g in report["rollout"]["gates"]] == [(1, True, None), (2, False, "lab1")]
    html = rpt.render_html(report)
    assert "<h2>Staged rollout: health gates (2) " in html and "STOPPED" in html
    assert "<td>lab2</td><td>lab1</td>" in html and "lab2: rping: rping not found on this host &lt;script&gt;" in html
    assert "<script>" not in html
    md = rpt.render_markdown(report)
    assert "| 2 of 3 | lab2 | lab1 | FAILED | lab2: rping: rping not found on this host <script> |" in md
    assert json.loads(rpt.render_json(report))["rollout"]["gates"][0]["message"] == "batch 1 of 3 (lab1) passed its health gate"
    passed = rpt.build_report(hosts, validation(), rollout=GATES[:1])
    assert passed["rollout"]["ok"] is True and passed["summary"]["ok"] == plain["summary"]["ok"]


def test_the_plan_in_every_format(hosts):
    """A fabric plan given to build_report: the JSON keeps it, the HTML and the Markdown show "Planned changes"."""
    plain = rpt.build_report(hosts, validation(), generated_at="2026-01-01T00:00:00+00:00")
    assert "plan" not in plain and "Planned changes" not in rpt.render_html(plain) + rpt.render_markdown(plain)
    plan = fleet_plan()
    report = rpt.build_report(hosts, validation(), generated_at="2026-01-01T00:00:00+00:00", plan=plan)
    assert report["summary"] == plain["summary"]  # the plan says what was planned; the verdict is the fabric's
    assert json.loads(rpt.render_json(report))["plan"] == json.loads(json.dumps(plan))
    html = rpt.render_html(report)
    section = html[html.index('<div class="summary" id="planned-changes">'):html.index("<section><h2>Validation</h2>")]
    assert section == rpt.render_plan_section(plan) + "\n"
    assert "<h2>Planned changes <span class=\"badge ok\">CHECK MODE</span></h2>" in section
    assert "<tr><td>eth1</td><td>roce_tos</td><td>0</td><td>106</td></tr>" in section
    assert '<details class="host failed" id="planned-changes-gpu-a4" open>' in section
    # the plan's hosts do not take the report's host anchors; the page has one header
    assert html.count('id="host-lab1"') == 1 and html.count("<header>") == 1 and html.count("<!DOCTYPE html>") == 1
    md = rpt.render_markdown(report)
    planned = md[md.index("## Planned changes\n"):md.index("## Validation\n")]
    assert planned.startswith("## Planned changes\n\nCheck mode: nothing was changed. 4 hosts, 3 would change (7 changes).")
    assert "### gpu-a10: 4 changes\n\n#### Lossless Ethernet / lossless_ethernet\n\n" in planned
    assert "  - eth1 pfc: [] -> [3]\n" in planned and "### Nothing to change (1 hosts)\n\ngpu-a3\n" in planned
    assert planned.replace("\n### ", "\n## ").replace("\n#### ", "\n### ").replace("## Planned changes", "# Fabric plan", 1) \
        .rstrip() == fp.markdown(plan).rstrip()
