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
import xml.etree.ElementTree as ET

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_plan as fp
from ansible_collections.rdma.fabric.plugins.plugin_utils import report as rpt
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs
from ansible_collections.rdma.fabric.plugins.plugin_utils import workload as wl
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils.test_fabric_plan import fleet_plan
from ansible_collections.rdma.fabric.tests.unit.plugins.plugin_utils.test_workload import REPORT, UCX_INFO_13, _reads, _run, lab_plan

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


# TEST DOUBLE (no GPU here): nccl-tests all_reduce_perf rows written in its column layout, not captured output; the
# column widths and number formats those of nccl-tests 2.19.6's writeResultHeader / writeBenchmarkLine* (src/util.cu).
NCCL_ROWS_TEST_DOUBLE = (
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
    "           8             2     float     sum      -1    30.12    0.00    0.00       0    29.80    0.00    0.00       0\n"
    "        1024           256     float     sum      -1    35.40    0.03    0.03       0    35.10    0.03    0.03       0\n"
    "       65536         16384     float     sum      -1    61.70    1.06    1.06       0    61.20    1.07    1.07       0\n"
    "     4194304       1048576     float     sum      -1   412.50   10.17   10.17       0   410.10   10.23   10.23       0\n")
# TEST DOUBLE: ucx_perftest -f final rows written by hand (the figures of the lab's soft-RoCE runs), with the
# ep_cfg line UCX logs at UCX_LOG_LEVEL=info.
UCX_EP_CFG = "[1732640000.123456] [lab2:4242:0]     ucp_worker.c:1888 UCX  INFO  ep_cfg[1]: tag(rc_verbs/rxe0:1)\n"
UCX_ROWS_TEST_DOUBLE = {"ucx_tag_lat": "Final:  100  21996.000  22091.175  22091.175  0.00  0.00  45.27  45.27\n",
                        "ucx_tag_bw": "Final:  100  5500.000  5600.000  5600.000  11.05  11.07  177.00  177.00\n"}


def workload_validation():
    """The workload stage's entries as rdma_validate records them: the MPI allreduce from the lab-shaped mpirun
    output of test_workload.py, NCCL's and ucx_perftest's from the test doubles above."""
    p = lab_plan()
    before = _reads(lab1={"sent_pkts": 1, "rcvd_pkts": 1}, lab2={"sent_pkts": 5, "rcvd_pkts": 5})
    after = _reads(lab1={"sent_pkts": 900, "rcvd_pkts": 950}, lab2={"sent_pkts": 955, "rcvd_pkts": 905})
    entries = [wl.allreduce_result(p, _run(UCX_INFO_13 + REPORT), before=before, after=after),
               wl.nccl_result(p, _run(NCCL_ROWS_TEST_DOUBLE))]
    for run in p["perftests"]:
        client = _run(UCX_EP_CFG + UCX_ROWS_TEST_DOUBLE[run["test"]])
        entries.append(wl.perftest_result(run, client=client, server={"finished": 1, "rc": 0}))
    assert [(e["test"], e["passed"]) for e in entries] == [
        ("mpi_allreduce", True), ("nccl_allreduce", True), ("ucx_tag_lat", True), ("ucx_tag_bw", True)], entries
    return entries


def report_hosts():
    """lab1 (REAL facts and roce_qos result), lab2 unreachable (its cached facts), gpu1: the DERIVED GPU host."""
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


@pytest.fixture(name="hosts")
def fixture_hosts():
    return report_hosts()


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


def test_an_iwarp_port_without_a_roce_gid_is_no_problem(hosts):
    """iWARP (siw: node type RNIC, link layer Ethernet) has no RoCE v2 GID and needs none (rdma_cm connects to the
    data IP): the port kind comes from rdma_schema's rule, so only the RoCE port gets the "no RoCE v2 GID" problem."""
    siw = copy.deepcopy(hosts["lab1"])
    dev = siw["rdma"]["devices"][0]
    dev.update(name="siw0", node_type="RNIC", driver="siw")
    dev["ports"][0]["roce_v2_ipv4_gid_index"] = None
    siw["qos"] = None
    roce = copy.deepcopy(siw)
    roce["rdma"]["devices"][0].update(name="rxe0", node_type="CA", driver="rdma_rxe")
    report = rpt.build_report({"siw": siw, "roce": roce}, [])
    assert report["hosts"]["siw"]["problems"] == []
    assert report["hosts"]["siw"]["devices"][0]["ports"][0]["kind"] == "iwarp"
    assert report["hosts"]["roce"]["problems"] == ["rxe0 port 1 (eth1) has no RoCE v2 IPv4 GID (no IPv4 address on eth1?)"]
    html = rpt.render_html(report)
    siw_section = html[html.index('id="host-siw"'):]
    assert 'class="bad"' not in siw_section[:siw_section.index("</table>")]


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


def test_comparable_takes_out_only_the_time_stamp_and_the_measurements(hosts):
    """Two runs over the same fabric: other time, other figures -> the same comparable report; anything
    else that differs (a test's verdict, a host's state, a threshold) still shows."""
    first = rpt.build_report(hosts, validation(), generated_at="2026-11-27T10:00:00Z")
    second_validation = validation()
    second_validation[1].update(bandwidth_gbps=0.0512, elapsed_s=3.4, message="ib_write_bw client ok: 0.051 Gb/s")
    second_validation[2].update(latency_us=25000.1, message="ib_send_lat client failed: latency 25000.10 us above "
                                                            "the threshold 10.00 us (after 2 connection attempts)")
    second = rpt.build_report(hosts, second_validation, generated_at="2026-11-27T11:30:00Z")
    assert first != second
    assert rpt.comparable(first) == rpt.comparable(second)
    comparable = rpt.comparable(json.loads(rpt.render_json(first)))
    assert "generated_at" not in comparable and first["generated_at"] == "2026-11-27T10:00:00Z"  # a copy
    bw, lat = comparable["validation"][1], comparable["validation"][2]
    assert (bw["bandwidth_gbps"], bw["message"]) == (None, "ib_write_bw client ok: <measured> Gb/s")
    assert bw["min_bandwidth_gbps"] == 0.0025 and lat["max_latency_us"] == 10.0
    assert lat["message"] == "ib_send_lat client failed: latency <measured> us above the threshold 10.00 us"
    assert comparable["summary"] == first["summary"]
    assert all(dict(comparable["hosts"][n], problems=None) == dict(h, problems=None) for n, h in first["hosts"].items())
    assert comparable["hosts"]["lab2"]["problems"][-1] == (
        "ib_send_lat lab1 -> lab2 failed: ib_send_lat client failed: latency <measured> us above the threshold 10.00 us")
    assert comparable["problems"][-1] == "lab2: " + comparable["hosts"]["lab2"]["problems"][-1]
    for change in ({"passed": False}, {"min_bandwidth_gbps": 1.0},
                   {"message": "ib_write_bw client ok: 0.048 Gb/s below the threshold 1.000 Gb/s"}):
        other = validation()
        other[1].update(change)
        assert rpt.comparable(rpt.build_report(hosts, other)) != rpt.comparable(first), change
    down = copy.deepcopy(hosts)
    down["lab2"]["rdma"]["devices"][0]["ports"][0]["state"] = "DOWN"
    assert rpt.comparable(rpt.build_report(down, validation())) != rpt.comparable(first)


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
    # the GPU host's GPU-NIC matrix is drawn (coloured like nvidia-smi topo -m), not a table
    assert '<div class="matrix topology"><svg' in html and "<title>gpu1: GPU to NIC (nvidia-smi topo -m)</title>" in html
    assert 'fill="%s" stroke="#ffffff" stroke-width="2"><title>0000:03:00.0 / mlx5_0: PIX</title>' % dict(
        (rel, c) for rel, c, dummy in rs.TOPO_RELATIONS)["PIX"] in html
    assert html.count("<section") == 4


def test_an_html_special_host_name_is_escaped_everywhere_the_templates_write_it(hosts):
    """A host named with every HTML-special character: escaped as text, in attributes (the section's id, the hosts
    table's link) and in the SVG labels and tooltips of the host-pair matrix; the page and each SVG still parse."""
    name = 'gpu"<em>&\'x'
    odd = copy.deepcopy(hosts)
    odd[name] = odd.pop("gpu1")
    results = [dict(r, hosts=[name if h == "gpu1" else h for h in r["hosts"]],
                    client=name if r.get("client") == "gpu1" else r.get("client")) for r in validation()]
    html = rpt.render_html(rpt.build_report(odd, results))
    escaped = "gpu&#34;&lt;em&gt;&amp;&#39;x"
    assert name not in html and "<em>" not in html
    assert '" id="host-%s"><h2>%s <span class="badge ' % (escaped, escaped) in html
    assert '<a href="#host-%s">%s</a>' % (escaped, escaped) in html
    trees = svgs(html)
    assert trees and any(t.text == name for svg in trees for t in svg.iter(NS + "text"))
    assert any(t.text and name in t.text for svg in trees for t in svg.iter(NS + "title"))


def test_json_is_the_data_and_the_pages_come_from_the_shipped_templates(hosts):
    """The JSON rendering is the report data itself (sorted keys, 2-space indent, one final newline), whatever the
    templates do; the HTML and SVG templates are files of the collection, beside plugin_utils."""
    report = rpt.build_report(hosts, validation(), generated_at="2026-11-21T01:00:00+00:00")
    assert rpt.render_json(report) == json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"
    folder = os.path.join(os.path.dirname(rpt.__file__), "templates", "report")
    assert sorted(os.listdir(folder)) == ["category_matrix.svg.j2", "fabric_plan.html.j2", "host_grid.svg.j2",
                                          "line_chart.svg.j2", "macros.html.j2", "page.html.j2", "report.css",
                                          "report.html.j2"]


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
    assert section == rpt.render_plan_section(plan)
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


# ---------------------------------------------------------------- figures per host pair and the workload
NS = "{http://www.w3.org/2000/svg}"


def svgs(html):
    """Every inline SVG of a page, parsed (they are XML)."""
    return [ET.fromstring(m) for m in re.findall(r"<svg .*?</svg>", html, re.S)]


def svg_cells(root):
    return dict((r.find(NS + "title").text, r.get("fill")) for r in root.iter(NS + "rect") if r.find(NS + "title") is not None)


def test_pair_matrix_keeps_the_worst_figure_of_each_pair(hosts):
    report = rpt.build_report(hosts, validation() + workload_validation())
    m = rpt.pair_matrix(report)
    assert m["hosts"] == ["gpu1", "lab1", "lab2"] and m["block"] == 1
    cell = m["cells"][(1, 2)]  # lab1 -> lab2
    assert (cell["passed"], cell["failed"], cell["not_run"]) == (6, 1, 0)
    # ib_write_bw 0.0481 and ucx_tag_bw 0.0929: the least bandwidth; ib_send_lat 27080.55 and ucx_tag_lat
    # 22091.175: the most latency; the allreduce runs (0.0224 Gb/s bus, 900.5 us) are not a pair's figures
    assert cell["figures"] == {
        "bandwidth_gbps": {"value": 0.0481, "test": "ib_write_bw", "server": "lab1", "client": "lab2", "count": 2},
        "latency_us": {"value": 27080.55, "test": "ib_send_lat", "server": "lab1", "client": "lab2", "count": 2}}
    assert rpt.pair_matrix(rpt.build_report(hosts, validation()[:1]))["cells"][(1, 2)]["figures"] == {}


def test_html_heatmaps_of_bandwidth_and_latency(hosts):
    extra = [dict(validation()[1], server="gpu1", client="lab1", hosts=["gpu1", "lab1"], bandwidth_gbps=0.012),
             dict(validation()[2], server="gpu1", client="lab1", hosts=["gpu1", "lab1"], latency_us=9.5, passed=True)]
    html = rpt.render_html(rpt.build_report(hosts, validation() + extra))
    validation_section = html[html.index("<section><h2>Validation</h2>"):]
    assert validation_section.index("<h3>Bandwidth per host pair (Gb/s)</h3>") < validation_section.index(
        "<h3>Latency per host pair (us)</h3>") < validation_section.index("<table>")
    passfail, bandwidth, latency = svgs(validation_section)[:3]
    assert svg_cells(passfail) == {"lab1 -> lab2: 2 passed, 1 failed, 0 not run": "#d62828",
                                   "gpu1 -> lab1: 2 passed, 0 failed, 0 not run": "#2a9d8f"}
    assert svg_cells(bandwidth) == {"lab1 -> lab2: 0.0481 Gb/s (ib_write_bw lab1 -> lab2)": rs.GRADIENT[-1],
                                    "gpu1 -> lab1: 0.012 Gb/s (ib_write_bw gpu1 -> lab1)": rs.gradient_colour(0.012 / 0.0481)}
    assert svg_cells(latency) == {"lab1 -> lab2: 27081 us (ib_send_lat lab1 -> lab2)": rs.gradient_colour(9.5 / 27080.55),
                                  "gpu1 -> lab1: 9.5 us (ib_send_lat gpu1 -> lab1)": rs.GRADIENT[-1]}
    assert "us, a cell's worst pair: best 9.5, worst 27081; ticks: the best, 2 and 4 times it" in [
        t.text for t in latency.iter(NS + "text")]
    # nothing measured: no heatmap of figures
    plain = rpt.render_html(rpt.build_report(hosts, validation()[:1]))
    assert "per host pair" not in plain and len(svgs(plain)) == 2  # the pass/fail matrix and gpu1's GPU-NIC chart


def big_fleet(n=300, slow=(100, 101)):
    """n hosts (no facts needed here), a ring of ib_write_bw (90 Gb/s) and ib_write_lat (2 us) results; the
    pair ``slow`` measures 30 Gb/s and 40 us."""
    names = ["node%04d" % i for i in range(n)]
    validation_ = []
    for i, server in enumerate(names):
        client = names[(i + 1) % n]
        worse = (i, (i + 1) % n) == slow
        common = dict(hosts=[server, client], server=server, client=client, passed=True)
        validation_.append(dict(common, test="ib_write_bw", bandwidth_gbps=30.0 if worse else 90.0))
        validation_.append(dict(common, test="ib_write_lat", latency_us=40.0 if worse else 2.0))
    return rpt.build_report(dict((name, {"rdma": {"devices": []}}) for name in names), validation_)


def test_heatmaps_of_300_hosts_stay_readable_and_bounded():
    report = big_fleet()
    html = rpt.render_html(report)
    pairs = html[html.index("<h2>Host pairs</h2>"):html.index("<h2>Hosts (300)")]
    passfail, bandwidth, latency = svgs(pairs)
    for root in (passfail, bandwidth, latency):
        # 300 hosts in blocks of 3 (pair_matrix's rule): 100 rows of 7 pixels; the ring's pairs fall in 200
        # blocks (two pairs inside a block, one into the next)
        assert int(root.get("height")) < 900 and len(svg_cells(root)) == 200
        assert len([t for t in root.iter(NS + "text") if t.get("font-size") == "10" and t.text.startswith("node")]) == 24
    assert len(pairs) < 3 * 200 * 230  # about 200 bytes a cell (rect and tooltip), whatever the number of hosts
    # the slow pair's block (node0099 .. node0101 -> node0099 .. node0101) is the worst of its three pairs
    bw = svg_cells(bandwidth)
    slow = "servers node0099 .. node0101 -> clients node0099 .. node0101: 30 Gb/s (ib_write_bw node0100 -> node0101; the worst of 2)"
    assert bw[slow] == rs.gradient_colour(30.0 / 90.0)
    assert sum(1 for fill in bw.values() if fill == rs.GRADIENT[-1]) == 199
    lat = svg_cells(latency)
    assert lat[slow.replace("30 Gb/s (ib_write_bw", "40 us (ib_write_lat")] == rs.gradient_colour(2.0 / 40.0)
    assert "<script" not in pairs and "href" not in pairs
    # a thousand hosts: blocks of 9, at most 112 rows and columns, the same size of picture
    html = rpt.render_html(big_fleet(1000, slow=(500, 501)))
    pairs = html[html.index("<h2>Host pairs</h2>"):html.index("<h2>Hosts (1000)")]
    assert [len(svg_cells(root)) for root in svgs(pairs)] == [223, 223, 223]  # the last block holds one host
    assert max(int(root.get("height")) for root in svgs(pairs)) < 900 and len(pairs) < 3 * 224 * 230


def test_workload_section_in_html_and_markdown(hosts):
    report = rpt.build_report(hosts, validation() + workload_validation(), generated_at="2026-11-26T00:00:00+00:00")
    html = rpt.render_html(report)
    assert html.index("<section><h2>Validation</h2>") < html.index('<section id="workload"><h2>Workload</h2>') < html.index(
        'id="host-gpu1"')
    section = html[html.index('<section id="workload">'):]
    section = section[:section.index("</section>")]
    assert "<p>MPI allreduce, 2 hosts <span class=\"badge pass\">PASS</span></p>" in section
    (chart,) = svgs(section)
    assert chart.find(NS + "title").text == "Allreduce bus bandwidth"
    lines = chart.findall(NS + "polyline")
    assert [line.get("stroke") for line in lines] == list(rs.SERIES_COLOURS[:2])
    assert [len(line.get("points").split()) for line in lines] == [2, 4]  # MPI: 8 B and 4 MiB; NCCL: 4 sizes
    texts = [t.text for t in chart.iter(NS + "text")]
    assert "MPI allreduce, 2 hosts" in texts and "NCCL allreduce, 2 hosts" in texts and "4M" in texts
    assert ('<tr><td>MPI allreduce, 2 hosts</td><td class="num">4194304</td><td class="num">1500000.0</td>'
            '<td class="num">0.0224</td><td class="num">0.0224</td><td>yes</td></tr>') in section
    assert '<tr><td>NCCL allreduce, 2 hosts</td><td class="num">65536</td><td class="num">61.7</td>' in section
    assert ('<tr class=""><td>ucx_tag_lat</td><td>lab1 -&gt; lab2</td><td>rxe0/1 &lt;-&gt; rxe0/1</td>'
            '<td class="num">22091.17</td><td class="num">-</td><td><span class="badge pass">PASS</span></td></tr>') in section
    assert '<td class="num">0.09286</td>' in section
    md = rpt.render_markdown(report)
    workload = md[md.index("## Workload\n"):]
    assert workload.startswith("## Workload\n\n- MPI allreduce, 2 hosts: PASS\n- NCCL allreduce, 2 hosts: PASS\n\n")
    assert ("| Run | Bytes | Time us | Algorithm bandwidth Gb/s | Bus bandwidth Gb/s | Correct |\n|---|---|---|---|---|---|\n"
            "| MPI allreduce, 2 hosts | 8 | 900.5 | 7.1e-05 | 7.1e-05 | yes |\n"
            "| MPI allreduce, 2 hosts | 4194304 | 1500000.0 | 0.0224 | 0.0224 | yes |\n"
            "| NCCL allreduce, 2 hosts | 8 | 30.1 | 0 | 0 | yes |\n") in workload
    assert "| ucx_tag_bw | lab1 -> lab2 | rxe0/1 <-> rxe0/1 | - | 0.09286 | PASS |\n" in workload
    # no workload results: no such section
    plain = rpt.build_report(hosts, validation())
    assert "Workload" not in rpt.render_html(plain) + rpt.render_markdown(plain)


def test_a_failed_allreduce_says_why_without_a_chart(hosts):
    p = lab_plan()
    failed = wl.allreduce_result(p, _run("[1,0]<stderr>:No components were able to be opened in the pml framework.\n", rc=1))
    report = rpt.build_report(hosts, [failed])
    html = rpt.render_html(report)
    section = html[html.index('<section id="workload">'):]
    section = section[:section.index("</section>")]
    assert '<p>MPI allreduce, 2 hosts <span class="badge fail">FAIL</span> <span class="muted">mpi_allreduce failed: mpirun ' \
           "exited with rc 1" in section
    assert "<svg" not in section and "<table>" not in section
    assert "- MPI allreduce, 2 hosts: **FAIL** - mpi_allreduce failed: mpirun exited with rc 1" in rpt.render_markdown(report)


def test_missing_user_space_modules_are_a_problem_in_every_rendering(hosts):
    """Issue 33: a host whose facts report ib_uverbs or rdma_ucm not loaded; k8s_rdma_stack does not advertise it."""
    bare = copy.deepcopy(hosts["lab1"])
    bare["rdma"]["modules"].update(ib_uverbs=False, rdma_ucm=False)
    report = rpt.build_report({"lab1": bare}, [])
    problem = ("user-space RDMA module(s) ib_uverbs, rdma_ucm not loaded: no program can use the RDMA devices, and "
               "the Kubernetes RDMA stack does not advertise this node")
    assert problem in report["hosts"]["lab1"]["problems"] and "lab1: " + problem in report["problems"]
    assert report["hosts"]["lab1"]["status"] == "problems"
    assert "ib_uverbs, rdma_ucm not loaded" in rpt.render_markdown(report) and problem in rpt.render_html(report)
    assert "ib_uverbs, rdma_ucm not loaded" in " ".join(rpt.summary_lines(report))
    assert not any("not loaded" in p for p in rpt.build_report({"lab1": hosts["lab1"]}, [])["problems"])
