# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric report's renderings: JSON, Markdown, a text summary, and HTML from templates (controller side).

What the report says is plugins/plugin_utils/report_model.py (``build_report`` and the views and words every
rendering shares; re-exported here, the report's one entry point). Each rendering is a pure function of that data:

* :func:`render_json`: the data itself (every host, also above ``DETAIL_HOSTS``);
* :func:`render_markdown` and :func:`summary_lines`: text;
* :func:`render_html`: one self-contained page (inline CSS and SVG, no scripts or external resources) from the
  Jinja2 templates in plugins/plugin_utils/templates/report/, autoescaped; its charts are report_svg.py's.

What the HTML draws: the host-pair matrix of the tests (pass/fail) and, from the
same blocks of hosts (:func:`pair_matrix`), heatmaps of the bandwidth and the
latency measured per pair (each cell its worst pair); with the rdma_validate
workload's results a "Workload" section (allreduce bus bandwidth against message
size, one line per run, MPI's and NCCL's; the figures per size; ucx_perftest's
figures), which the Markdown has as tables; and each GPU host's GPU-NIC matrix
coloured like ``nvidia-smi topo -m``. The renderings stay readable at a thousand
hosts: up to ``DETAIL_HOSTS`` hosts every host is shown in full; above, the HTML
and Markdown summarise (counts, node pools, every host in one table with failing
hosts first, the host-pair heatmaps, failed tests) and show details only for
hosts with problems (HTML: collapsed).

A fabric plan (plugins/plugin_utils/fabric_plan.py, the ``fabric_plan`` callback's check-mode run) is rendered
here too, in the report's look: :func:`render_plan_section` ("Planned changes", also a section of the
report when ``build_report`` is given the plan) and :func:`render_plan_html` (fabric-plan.html).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_plan
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_model
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_templates as templates
from ansible_collections.rdma.fabric.plugins.plugin_utils.report_model import (
    DETAIL_HOSTS,
    LISTED,
    PAIR_FIGURES,
    PERF_HEADERS,
    SIZE_HEADERS,
    devices_text,
    hosts_failing_first,
    is_large,
    matrix_columns,
    num_text,
    pair_text,
    perf_row,
    perftests_shown,
    qos_text,
    run_label,
    size_rows,
    threshold_text,
    verdict,
    workload_results,
)

# The report's entry points, from its data model: callers build and render through this module.
build_report = report_model.build_report
comparable = report_model.comparable
host_inputs = report_model.host_inputs
pair_matrix = report_model.pair_matrix


# --------------------------------------------------------------------------
# text summary
# --------------------------------------------------------------------------
def _port_line(d, p):
    return "%s/%s %s %s%s gid%s" % (
        d["name"], p["number"], p["state"] or "?", num_text(p["rate_gbps"], "%g"),
        "G" if p["rate_gbps"] is not None else "", "=" + str(p["roce_v2_ipv4_gid_index"])
        if p["roce_v2_ipv4_gid_index"] is not None else ":none")


def _host_line(name, h):
    ports = [_port_line(d, p) for d in h["devices"] for p in d["ports"]]
    gd = h["gpudirect"]
    gds = "no GPU" if not gd or not gd["gpu_count"] else "GPUDirect %s" % ("ready" if gd["ready"] else "NOT ready")
    return "  %-12s %-11s %s; %s" % (name, h["status"], ", ".join(ports) or "no ports", gds)


def _test_line(r):
    figure = ""
    if r.get("bandwidth_gbps") is not None:
        figure = "%s Gb/s" % num_text(r["bandwidth_gbps"])
    elif r.get("latency_us") is not None:
        figure = "%s us" % num_text(r["latency_us"], "%.2f")
    line = "  %-8s %-12s %-24s %s" % (verdict(r.get("passed")), r.get("test"), pair_text(r), figure)
    if r.get("passed") is not True:
        line += "  " + str(r.get("message") or "")
    return line.rstrip()


def summary_lines(report, path=None):
    """A one-screen text summary (every host and test up to DETAIL_HOSTS hosts, else the failing ones)."""
    s = report["summary"]
    v = s["validation"]
    lines = []
    if path:
        lines.append("RDMA fabric report: %s" % path)
    lines.append("overall: %s" % ("OK" if s["ok"] else "PROBLEMS"))
    lines.append("hosts: %d (%d reachable%s%s); ports ACTIVE: %d of %d; GPUDirect ready: %d of %d GPU hosts" % (
        s["hosts"], s["reachable"], ", unreachable: " + ", ".join(s["unreachable"][:LISTED]) if s["unreachable"] else "",
        ", failed earlier: " + ", ".join(s["failed"][:LISTED]) if s.get("failed") else "",
        s["ports_active"], s["ports"], s["gpudirect_ready"], s["gpu_hosts"]))
    if report.get("pools"):
        lines.append("node pools: %d (%s)" % (len(report["pools"]), ", ".join(
            "%s: %d hosts" % (p["name"], p["hosts"]) for p in report["pools"][:10])
            + (", ..." if len(report["pools"]) > 10 else "")))
    large = is_large(report)
    shown = 0
    for name in (hosts_failing_first(report) if large else sorted(report["hosts"])):
        h = report["hosts"][name]
        if large and (h["status"] == "ok" or shown >= 20):
            continue
        lines.append(_host_line(name, h))
        shown += 1
    if large:
        rest = s["hosts"] - shown
        lines.append("  ... %d more host(s)%s: see the report" % (rest, "" if shown else ", all ok"))
    lines.append("validation: %d passed, %d failed, %d not run" % (v["passed"], v["failed"], v["not_run"]))
    listed = 0
    for r in report["validation"]:
        if r.get("test") == "precheck" and r.get("passed"):
            continue
        if large and r.get("passed") is True:
            continue
        if listed >= 20 and large:
            lines.append("  ... more in the report")
            break
        lines.append(_test_line(r))
        listed += 1
    if report["problems"]:
        lines.append("problems (%d):" % len(report["problems"]))
        for p in report["problems"][:10]:
            lines.append("  - " + p)
        if len(report["problems"]) > 10:
            lines.append("  ... %d more in the report" % (len(report["problems"]) - 10))
    return lines


# --------------------------------------------------------------------------
# JSON
# --------------------------------------------------------------------------
def render_json(report):
    return json.dumps(report, indent=2, sort_keys=True, default=str) + "\n"


# --------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------
def _md(value):
    text = "-" if value is None else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for row in rows:
        out.append("| " + " | ".join(_md(c) for c in row) + " |")
    return out


def _md_host(name, h):
    """One host in full: devices and ports, GPUDirect, problems."""
    out = ["### %s - %s" % (_md(name), h["status"].upper()), ""]
    if h.get("message"):
        out += [_md(h["message"]), ""]
    stack = h.get("stack") or {}
    if stack:
        version = " " + _md(stack.get("version")) if stack.get("version") else ""
        out += ["Driver stack: %s%s; facts: %s" % (_md(stack.get("flavor")), version, _md(h.get("facts_source"))), ""]
    rows = []
    for d in h["devices"]:
        for p in d["ports"]:
            state = p["state"] if not p["problems"] else "**%s**" % (p["state"] or "unknown")
            rows.append([d["name"], d.get("driver"), p["number"], state, p["link_layer"], p["rate"],
                         p["netdev"], p["mtu"],
                         p["roce_v2_ipv4_gid_index"] if p["roce_v2_ipv4_gid_index"] is not None else "**none**",
                         p["roce_v2_ip"], qos_text(p)])
    if rows:
        out += _md_table(["Device", "Driver", "Port", "State", "Link layer", "Rate", "Netdev", "MTU",
                          "GID v2 idx", "RoCE v2 IP", "QoS"], rows)
        out.append("")
    gd = h["gpudirect"]
    if gd is None:
        out += ["GPUDirect: no data", ""]
    elif not gd["gpu_count"]:
        out += ["GPUDirect: no GPU%s" % (" (" + "; ".join(_md(r) for r in gd["reasons"]) + ")" if gd["reasons"] else ""), ""]
    else:
        out += ["GPUDirect RDMA: **%s** (%d GPUs; driver %s; DMA-BUF %s; peer memory %s; IOMMU %s)" % (
            "ready" if gd["ready"] else "NOT READY", gd["gpu_count"], _md(gd["driver"] or "unknown"),
            "possible" if gd["dmabuf"] else "not possible" if gd["dmabuf"] is False else "unknown",
            _md(", ".join(gd["peermem"]) or "none loaded"), _md(gd["iommu"] or "unknown")), ""]
        out += ["- **%s**" % _md(r) for r in gd["reasons"]]
        out += ["- warning: %s" % _md(r) for r in gd["warnings"]]
        if gd["reasons"] or gd["warnings"]:
            out.append("")
        if gd["matrix"]:
            cols = matrix_columns(gd["matrix"])
            rows = [[gpu] + [gd["matrix"][gpu].get(c, "-") if isinstance(gd["matrix"][gpu], dict) else "-" for c in cols]
                    + [gd["nearest_nic"].get(gpu)] for gpu in sorted(gd["matrix"])]
            out += ["GPU-NIC topology (PIX same PCIe switch, PXB several switches, PHB host bridge, NODE same NUMA node, "
                    "SYS across NUMA nodes):", ""] + _md_table(["GPU"] + cols + ["Nearest NIC"], rows) + [""]
    if h["problems"]:
        out += ["Problems on %s:" % _md(name), ""] + ["- %s" % _md(p) for p in h["problems"]] + [""]
    return out


def _md_test_row(r):
    word = verdict(r.get("passed"))
    return [r.get("test"), pair_text(r), devices_text(r), num_text(r.get("bandwidth_gbps")),
            num_text(r.get("latency_us"), "%.2f"), threshold_text(r),
            word if word == "PASS" else "**%s**" % word, r.get("message")]


_MD_TEST_HEADERS = ["Test", "Server -> client", "Devices", "Bandwidth Gb/s", "Latency us", "Threshold", "Result", "Message"]


def render_markdown(report):
    """Every host in full up to DETAIL_HOSTS hosts; above, a host table (failing first) and details of failing hosts."""
    s = report["summary"]
    v = s["validation"]
    large = is_large(report)
    out = ["# %s" % _md(report.get("title")), ""]
    if report.get("generated_at"):
        out += ["Generated: %s" % _md(report["generated_at"]), ""]
    out += ["**Overall: %s** - %d hosts (%d reachable), %d of %d ports ACTIVE, GPUDirect ready on %d of %d GPU hosts, "
            "validation %d passed / %d failed / %d not run." % (
                "OK" if s["ok"] else "PROBLEMS", s["hosts"], s["reachable"], s["ports_active"], s["ports"],
                s["gpudirect_ready"], s["gpu_hosts"], v["passed"], v["failed"], v["not_run"]), ""]
    if report.get("rollout"):
        out += ["## Staged rollout: health gates", ""] + _md_table(["Batch", "Hosts", "Tested against", "Gate", "Why"], [
            ["%s of %s" % (g["batch"], g["of"]), ", ".join(g["hosts"]), g["reference"] or "-",
             "passed" if g["ok"] else "FAILED",
             "; ".join("%s: %s" % (h, " | ".join(r)) for h, r in g["failed"].items()) or g["message"]]
            for g in report["rollout"]["gates"]]) + [""]
    if report["problems"]:
        out += ["## Problems", ""]
        out += ["- **%s**" % _md(p) for p in report["problems"][:LISTED]]
        if len(report["problems"]) > LISTED:
            out.append("- ... %d more in fabric-report.json" % (len(report["problems"]) - LISTED))
        out.append("")
    if report.get("pools"):
        out += ["## Node pools", ""] + _md_table(["Pool", "Hosts", "Ports"], [
            [p["name"], p["hosts"], ", ".join(p.get("ports") or []) or "none"] for p in report["pools"]]) + [""]
    out += ["## Hosts", ""]
    if large:
        rows = []
        for name in hosts_failing_first(report):
            h = report["hosts"][name]
            ports = [p for d in h["devices"] for p in d["ports"]]
            rows.append([name, h["status"] if h["status"] == "ok" else "**%s**" % h["status"], h.get("pool"),
                         "%d / %d" % (sum(1 for p in ports if p["state"] == "ACTIVE"), len(ports)),
                         "%d / %d" % (h["validation"]["passed"], h["validation"]["failed"]),
                         h["problems"][0] if h["problems"] else ""])
        out += _md_table(["Host", "Status", "Pool", "Ports ACTIVE", "Tests passed / failed", "First problem"], rows)
        out += ["", "Details of the hosts with problems (every host in fabric-report.json):", ""]
        listed = 0
        for name in hosts_failing_first(report):
            if report["hosts"][name]["status"] == "ok" or listed >= LISTED:
                continue
            out += _md_host(name, report["hosts"][name])
            listed += 1
    else:
        for name in sorted(report["hosts"]):
            out += _md_host(name, report["hosts"][name])
    if report.get("plan"):
        out += fabric_plan.markdown(report["plan"], title="Planned changes", level=2).splitlines() + [""]
    out += ["## Validation", ""]
    if report["validation"]:
        if large:
            failing = [r for r in report["validation"] if r.get("passed") is not True]
            out += ["%d results; %d passed, %d failed, %d not run. The failed and not-run results (first %d; all "
                    "in fabric-report.json):" % (v["total"], v["passed"], v["failed"], v["not_run"], LISTED), ""]
            rows = [_md_test_row(r) for r in failing[:LISTED]]
        else:
            rows = [_md_test_row(r) for r in report["validation"]]
        if rows:
            out += _md_table(_MD_TEST_HEADERS, rows)
    else:
        out.append("No validation results.")
    out.append("")
    runs, perftests = workload_results(report["validation"])
    if runs or perftests:
        out += _md_workload(runs, perftests, large)
    return "\n".join(out)


def _md_workload(runs, perftests, large):
    """The workload's figures in text: each run's verdict, its figures per message size, ucx_perftest's."""
    out = ["## Workload", ""]
    for r in runs:
        out.append("- %s: %s%s" % (_md(run_label(r)), "PASS" if r.get("passed") is True else "**%s**" % verdict(r.get("passed")),
                                   "" if r.get("passed") is True else " - " + _md(r.get("message"))))
    if runs:
        out.append("")
    rows = size_rows(runs)
    if rows:
        out += ["Allreduce figures per message size:", ""] + _md_table(SIZE_HEADERS, rows) + [""]
    shown = perftests_shown(perftests, large)
    if shown:
        out += ["ucx_perftest%s:" % (" (the ones that did not pass; all in fabric-report.json)" if large else ""), ""]
        out += _md_table(PERF_HEADERS, [perf_row(r) for r in shown]) + [""]
    return out


# --------------------------------------------------------------------------
# HTML, from the templates in templates/report/ (autoescaped)
# --------------------------------------------------------------------------
# The fabric plan's host status as a badge class (the report's colours).
PLAN_BADGES = {"unreachable": "unreachable", "failed": "failed", "changes": "problems"}
# The pass/fail matrix's cell colours, the first count a cell has wins: a failed test makes it red.
CELL_COLOURS = (("failed", "#d62828"), ("not_run", "#adb5bd"), ("passed", "#2a9d8f"))


def _failing(results):
    return [r for r in results if r.get("passed") is not True]


def _failing_hosts(report):
    return [n for n in hosts_failing_first(report) if report["hosts"][n]["status"] != "ok"]


def _chart_runs(runs):
    """The allreduce runs with figures per size, as report_svg.allreduce_chart takes them."""
    return [(run_label(r), r["sizes"]) for r in runs if r.get("sizes")]


def _gate_why(gate):
    return "; ".join("%s: %s" % (h, " | ".join(r)) for h, r in gate["failed"].items()) or gate["message"]


def pass_fail_grid(m):
    """The host-pair matrix's cells, ``{(row, col): (colour, tooltip)}``, from :func:`pair_matrix`'s result ``m``.

    Green: every test of the pair passed; red: a test (or the pre-check) failed; grey: not run. Above ~120
    hosts a cell is a block of consecutive hosts and shows the worst of its pairs; its tooltip names them.
    """
    names, block = m["hosts"], m["block"]
    return dict((key, (next(colour for count, colour in CELL_COLOURS if c[count]), "%s: %d passed, %d failed, %d not run" % (
        rs.pair_label(names, block, key[0], key[1]), c["passed"], c["failed"], c["not_run"])))
        for key, c in m["cells"].items())


def pair_figures(m):
    """The measured figures per host pair (:data:`PAIR_FIGURES`), one heatmap each that was measured:
    ``[(label, unit, more_is_better, {(row, col): (worst figure, tooltip detail)})]``."""
    out = []
    for name, what, unit, more_is_better in PAIR_FIGURES:
        values = {}
        for key, c in m["cells"].items():
            fig = c["figures"].get(name)
            if fig:
                values[key] = (fig["value"], " (%s %s -> %s%s)" % (
                    fig["test"], fig["server"], fig["client"],
                    "; the worst of %d" % fig["count"] if fig["count"] > 1 else ""))
        if values:
            out.append(("%s per host pair (%s)" % (what, unit), unit, more_is_better, values))
    return out


# What the report's templates call: the model's views and words, the charts, the plan's words.
templates.environment().globals.update(
    model=report_model, svg=rs, fabric_plan=fabric_plan, LISTED=LISTED, DETAIL_HOSTS=DETAIL_HOSTS,
    PLAN_BADGES=PLAN_BADGES, failing=_failing, failing_hosts=_failing_hosts, chart_runs=_chart_runs,
    gate_why=_gate_why, pass_fail_grid=pass_fail_grid, pair_figures=pair_figures)


def render_plan_section(plan, anchor="planned-changes"):
    """The "Planned changes" section of a fabric plan (``plan.check``'s shape), as HTML.

    Summary cards, the hosts that would be drained, rebooted or have their driver stack restarted, the hosts
    that failed or were unreachable in the plan (red), then each host that would change, per stage, with each
    change (task and item, port values before -> after, the files of its diffs). Every such host is open up to
    DETAIL_HOSTS hosts, collapsed above, and listed in detail up to LISTED (the rest by name); the hosts with
    nothing to change are one collapsed line, so the section stays readable at a thousand hosts.
    """
    return templates.macro("macros.html.j2", "plan_section", plan, anchor)


def render_plan_html(plan, generated_at=None):
    """The fabric plan as one self-contained page (the report's look): title "Fabric plan", its section."""
    return templates.page("fabric_plan.html.j2", plan=plan, title="Fabric plan",
                          generated_at=generated_at or plan.get("generated_at"))


def render_html(report):
    """One self-contained page: summary first; every host in full up to DETAIL_HOSTS hosts, else collapsed details."""
    return templates.page("report.html.j2", report=report, title=report.get("title"), generated_at=report.get("generated_at"))


def render(report, fmt):
    if fmt == "json":
        return render_json(report)
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    raise ValueError("formats: unknown format %r; allowed: json, md, html" % (fmt,))
