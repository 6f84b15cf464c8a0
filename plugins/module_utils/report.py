# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric report: data model and its JSON, Markdown and HTML renderings.

``build_report(hosts, validation)`` turns per-host inputs::

    {host: {"reachable": bool, "failed_earlier": bool, "message": str,
            "facts_source": "live"|"cache"|None, "rdma": ansible_facts.rdma or None, "gpudirect": ansible_facts.gpudirect or None,
            "qos": {netdev: {setting: value}} or None}}

and the validation results (rdma_validate role, one entry per test per pair)
into the report data (a host's ``status``: ``ok``, ``problems``, ``failed`` -
a task failed on it earlier in the run, so its later stages did not run -
or ``unreachable``): top-level ``hosts`` keyed by host, ``validation`` (the
list), ``summary`` and ``problems``. Problems are plain sentences naming the
host and port. The renderers are pure functions of that data; the HTML is a
single file with inline CSS and no scripts or external resources.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

try:
    from html import escape as _html_escape
except ImportError:  # pragma: no cover - Python 2 has no html module
    from cgi import escape as _html_escape

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import SCHEMA_VERSION
RELATIONS = ("X", "PIX", "PXB", "PHB", "NODE", "SYS")


# --------------------------------------------------------------------------
# data
# --------------------------------------------------------------------------
def _qos_view(entry):
    """Normalise one port's QoS input.

    Accepts a rdma.fabric.roce_qos result (run in check mode against the
    lossless profile: ``before`` is the current state, ``changes`` the drift,
    ``unsupported`` what the driver cannot do) or a plain dict of settings.
    """
    if not isinstance(entry, dict):
        return None
    if entry.get("failed"):
        msg = entry.get("msg") or "unknown error"
        return {"state": {}, "backend": None, "drift": [], "unsupported": [], "error": msg,
                "problems": ["state unreadable: %s" % msg]}
    if "before" in entry or "changes" in entry:
        drift = sorted(k for k, v in (entry.get("changes") or {}).items() if v)
        unsupported = []
        listed = entry.get("unsupported") if isinstance(entry.get("unsupported"), list) else []
        for item in listed:
            if isinstance(item, dict) and item.get("option"):
                unsupported.append(item["option"])
        view = {"state": dict(entry.get("before") or {}), "backend": entry.get("backend"), "drift": drift,
                "unsupported": unsupported, "error": None, "problems": []}
        if drift:
            view["problems"].append("differs from the lossless profile: %s" % ", ".join(drift))
        return view
    return {"state": dict((k, v) for k, v in entry.items() if k != "problems"), "backend": None, "drift": [],
            "unsupported": [], "error": None, "problems": [str(p) for p in entry.get("problems") or []]}


def _port_view(dev, port, qos):
    gid_index = port.get("roce_v2_ipv4_gid_index")
    roce_ip = None
    for gid in port.get("gids") or []:
        if isinstance(gid, dict) and gid.get("index") == gid_index:
            roce_ip = gid.get("ip")
    netdev = port.get("netdev")
    view = {
        "number": port.get("number"),
        "state": port.get("state"),
        "phys_state": port.get("phys_state"),
        "link_layer": port.get("link_layer"),
        "rate": port.get("rate"),
        "rate_gbps": port.get("rate_gbps"),
        "netdev": netdev,
        "mtu": port.get("mtu"),
        "roce_v2_ipv4_gid_index": gid_index,
        "roce_v2_ip": roce_ip,
        "gid_count": len(port.get("gids") or []),
        "roce": port.get("roce"),
        "qos": _qos_view((qos or {}).get(netdev)) if netdev and isinstance(qos, dict) else None,
        "problems": [],
    }
    where = "%s port %s%s" % (dev.get("name"), view["number"], " (%s)" % netdev if netdev else "")
    if view["state"] != "ACTIVE":
        view["problems"].append("%s is %s, not ACTIVE" % (where, view["state"] or "in an unknown state"))
    elif view["phys_state"] not in (None, "LinkUp"):
        view["problems"].append("%s physical state is %s" % (where, view["phys_state"]))
    if view["link_layer"] == "Ethernet" and gid_index is None:
        view["problems"].append("%s has no RoCE v2 IPv4 GID (no IPv4 address on %s?)" % (where, netdev or "its netdev"))
    if view["qos"]:
        for item in view["qos"]["problems"]:
            view["problems"].append("%s QoS %s" % (where, item))
    return view


def _gpudirect_view(gd):
    if not isinstance(gd, dict):
        return None
    gpus = list(gd.get("gpus") or [])
    topo = gd.get("topology") if isinstance(gd.get("topology"), dict) else {}
    matrix = topo.get("matrix") if isinstance(topo.get("matrix"), dict) else {}
    nearest = {}
    for gpu, nic in (topo.get("nearest_nic") or {}).items():
        if isinstance(nic, dict):
            nearest[gpu] = "%s (%s)" % (nic.get("name"), nic.get("relation")) if nic.get("relation") else nic.get("name")
        elif nic is not None:
            nearest[gpu] = str(nic)
    driver = gd.get("driver") if isinstance(gd.get("driver"), dict) else {}
    if driver.get("loaded") is False:
        driver_text = "not loaded"
    elif driver.get("version"):
        driver_text = "%s%s" % (driver["version"], " (%s)" % driver["flavour"] if driver.get("flavour") else "")
    else:
        driver_text = None
    dmabuf = gd.get("dmabuf") if isinstance(gd.get("dmabuf"), dict) else {}
    peermem = gd.get("peermem") if isinstance(gd.get("peermem"), dict) else {}
    iommu = gd.get("iommu") if isinstance(gd.get("iommu"), dict) else {}
    return {
        "ready": gd.get("ready"),
        "reasons": [str(r) for r in (gd.get("reasons") or [])],
        "warnings": [str(r) for r in (gd.get("warnings") or [])],
        "gpus": gpus,
        "gpu_count": len(gpus),
        "nics": [n.get("name") for n in gd.get("nics") or [] if isinstance(n, dict)],
        "driver": driver_text,
        "dmabuf": dmabuf.get("possible"),
        "peermem": list(peermem.get("loaded") or []),
        "iommu": iommu.get("mode"),
        "matrix": matrix,
        "nearest_nic": nearest,
    }


def _host_view(name, data, validation):
    data = data if isinstance(data, dict) else {}
    reachable = data.get("reachable", True) is not False
    rdma = data.get("rdma") if isinstance(data.get("rdma"), dict) else None
    view = {
        "reachable": reachable,
        "status": "ok",
        "message": data.get("message"),
        "facts_source": data.get("facts_source") or ("live" if rdma and reachable else None),
        "stack": (rdma or {}).get("stack"),
        "modules": (rdma or {}).get("modules"),
        "devices": [],
        "qos": data.get("qos"),
        "gpudirect": _gpudirect_view(data.get("gpudirect")),
        "validation": {"passed": 0, "failed": 0},
        "problems": [],
    }
    problems = view["problems"]
    failed_earlier = reachable and data.get("failed_earlier") is True
    if not reachable:
        problems.append("unreachable%s" % (": " + data["message"] if data.get("message") else ""))
    elif failed_earlier:
        problems.append("failed earlier in this run: its later stages did not run there (the run's output says "
                        "which task failed); what follows was read after the failure")
    if rdma is None:
        if reachable:
            problems.append("no RDMA facts")
    else:
        for dev in rdma.get("devices") or []:
            if not isinstance(dev, dict):
                continue
            dview = {k: dev.get(k) for k in (
                "name", "driver", "soft", "node_type", "fw_ver", "board_id", "hca_type", "pci_address",
                "vendor_id", "device_id", "numa_node", "parent_netdev", "node_guid")}
            dview["ports"] = [_port_view(dev, p, data.get("qos")) for p in dev.get("ports") or [] if isinstance(p, dict)]
            for p in dview["ports"]:
                problems.extend(p["problems"])
            view["devices"].append(dview)
        if not view["devices"]:
            problems.append("no RDMA devices")
    gd = view["gpudirect"]
    if gd and gd["gpu_count"] and gd["ready"] is not True:
        reasons = gd["reasons"]
        more = " (and %d more reasons)" % (len(reasons) - 1) if len(reasons) > 1 else ""
        problems.append("GPUDirect RDMA not ready: %s%s" % (reasons[0] if reasons else "no reason given", more))
    for r in validation or []:
        if not isinstance(r, dict) or name not in (r.get("hosts") or []):
            continue
        if r.get("passed") is True:
            view["validation"]["passed"] += 1
        elif r.get("passed") is False:
            view["validation"]["failed"] += 1
            if r.get("test") != "precheck" and not str(r.get("message", "")).startswith("not run"):
                problems.append("%s %s -> %s failed: %s" % (
                    r.get("test"), r.get("server"), r.get("client"), r.get("message")))
            elif r.get("test") == "precheck":
                problems.append("pre-check %s -> %s failed" % (r.get("server"), r.get("client")))
    if not reachable:
        view["status"] = "unreachable"
    elif failed_earlier:
        view["status"] = "failed"
    elif problems:
        view["status"] = "problems"
    return view


def validation_summary(results):
    summary = {"total": 0, "passed": 0, "failed": 0, "not_run": 0}
    for r in results or []:
        if not isinstance(r, dict):
            continue
        summary["total"] += 1
        if r.get("passed") is True:
            summary["passed"] += 1
        elif r.get("passed") is None:
            summary["not_run"] += 1
        else:
            summary["failed"] += 1
    return summary


def build_report(hosts, validation=None, generated_at=None, title="RDMA fabric report"):
    """Report data (see module docstring). Pure and deterministic for its inputs."""
    validation = [dict(r) for r in (validation or []) if isinstance(r, dict)]
    host_views = {}
    for name in sorted(hosts or {}):
        host_views[name] = _host_view(name, (hosts or {})[name], validation)
    ports = [p for h in host_views.values() for d in h["devices"] for p in d["ports"]]
    gd_hosts = [h for h in host_views.values() if h["gpudirect"] and h["gpudirect"]["gpu_count"]]
    vsum = validation_summary(validation)
    problems = []
    for name, view in host_views.items():
        problems.extend("%s: %s" % (name, p) for p in view["problems"])
    summary = {
        "hosts": len(host_views),
        "reachable": sum(1 for h in host_views.values() if h["reachable"]),
        "unreachable": sorted(n for n, h in host_views.items() if not h["reachable"]),
        "failed": sorted(n for n, h in host_views.items() if h["status"] == "failed"),
        "hosts_with_problems": sorted(n for n, h in host_views.items() if h["problems"]),
        "devices": sum(len(h["devices"]) for h in host_views.values()),
        "ports": len(ports),
        "ports_active": sum(1 for p in ports if p["state"] == "ACTIVE"),
        "gpu_hosts": len(gd_hosts),
        "gpudirect_ready": sum(1 for h in gd_hosts if h["gpudirect"]["ready"] is True),
        "validation": vsum,
    }
    summary["ok"] = not problems and vsum["failed"] == 0
    return {
        "schema_version": SCHEMA_VERSION,
        "title": title,
        "generated_at": generated_at,
        "summary": summary,
        "problems": problems,
        "hosts": host_views,
        "validation": validation,
    }


# --------------------------------------------------------------------------
# helpers for the renderings
# --------------------------------------------------------------------------
def _num(value, fmt="%.3f"):
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt % value
    return str(value)


def _pair(r):
    return "%s -> %s" % (r.get("server"), r.get("client"))


def _devices_text(r):
    devs = r.get("devices") or []
    ports = r.get("ports") or []
    gids = r.get("gid_indices") or []
    parts = []
    for i in range(len(devs)):
        text = "%s/%s" % (devs[i] if devs[i] is not None else "?", ports[i] if i < len(ports) and ports[i] is not None else "?")
        if i < len(gids) and gids[i] is not None:
            text += " gid %s" % gids[i]
        parts.append(text)
    return " <-> ".join(parts) or "-"


def _threshold_text(r):
    if r.get("min_bandwidth_gbps") is not None:
        return ">= %s Gb/s" % _num(r["min_bandwidth_gbps"])
    if r.get("max_latency_us") is not None:
        return "<= %s us" % _num(r["max_latency_us"], "%.1f")
    return "-"


def _verdict(passed):
    return "PASS" if passed is True else ("NOT RUN" if passed is None else "FAIL")


def _value_text(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return ",".join("%s:%s" % (k, value[k]) for k in sorted(value, key=str)) or "none"
    return "-" if value is None else str(value)


def _qos_text(port):
    parts = []
    roce = port.get("roce")
    qos = port.get("qos") or {}
    state = qos.get("state") or {}
    if isinstance(roce, dict):
        if roce.get("default_mode") is not None and "roce_mode" not in state:
            parts.append("mode %s" % roce["default_mode"])
        if roce.get("default_tos") is not None and "roce_tos" not in state:
            parts.append("ToS %s" % roce["default_tos"])
    for key in sorted(state):
        parts.append("%s %s" % (key, _value_text(state[key])))
    if qos.get("unsupported"):
        parts.append("not supported by the driver: %s" % ", ".join(qos["unsupported"]))
    if qos.get("drift"):
        parts.append("DRIFT: %s" % ", ".join(qos["drift"]))
    if qos.get("error"):
        parts.append("error: %s" % qos["error"])
    return "; ".join(parts) or "-"


def _gpu_label(gpu):
    if isinstance(gpu, dict):
        addr = gpu.get("pci_address") or gpu.get("address") or "?"
        name = gpu.get("name") or gpu.get("model") or gpu.get("device_id")
        return "%s%s" % (addr, " (%s)" % name if name else "")
    return str(gpu)


def _matrix_columns(matrix):
    cols = []
    for row in matrix.values():
        if isinstance(row, dict):
            for key in row:
                if key not in cols:
                    cols.append(key)
    return sorted(cols)


def summary_lines(report, path=None):
    """A one-screen text summary."""
    s = report["summary"]
    v = s["validation"]
    lines = []
    if path:
        lines.append("RDMA fabric report: %s" % path)
    lines.append("overall: %s" % ("OK" if s["ok"] else "PROBLEMS"))
    lines.append("hosts: %d (%d reachable%s%s); ports ACTIVE: %d of %d; GPUDirect ready: %d of %d GPU hosts" % (
        s["hosts"], s["reachable"], ", unreachable: " + ", ".join(s["unreachable"]) if s["unreachable"] else "",
        ", failed earlier: " + ", ".join(s.get("failed") or []) if s.get("failed") else "",
        s["ports_active"], s["ports"], s["gpudirect_ready"], s["gpu_hosts"]))
    for name in sorted(report["hosts"]):
        h = report["hosts"][name]
        ports = []
        for d in h["devices"]:
            for p in d["ports"]:
                ports.append("%s/%s %s %s%s gid%s" % (
                    d["name"], p["number"], p["state"] or "?", _num(p["rate_gbps"], "%g"),
                    "G" if p["rate_gbps"] is not None else "", "=" + str(p["roce_v2_ipv4_gid_index"])
                    if p["roce_v2_ipv4_gid_index"] is not None else ":none"))
        gd = h["gpudirect"]
        if not gd or not gd["gpu_count"]:
            gds = "no GPU"
        else:
            gds = "GPUDirect %s" % ("ready" if gd["ready"] else "NOT ready")
        lines.append("  %-12s %-11s %s; %s" % (name, h["status"], ", ".join(ports) or "no ports", gds))
    lines.append("validation: %d passed, %d failed, %d not run" % (v["passed"], v["failed"], v["not_run"]))
    for r in report["validation"]:
        if r.get("test") == "precheck" and r.get("passed"):
            continue
        figure = ""
        if r.get("bandwidth_gbps") is not None:
            figure = "%s Gb/s" % _num(r["bandwidth_gbps"])
        elif r.get("latency_us") is not None:
            figure = "%s us" % _num(r["latency_us"], "%.2f")
        line = "  %-8s %-12s %-24s %s" % (_verdict(r.get("passed")), r.get("test"), _pair(r), figure)
        if r.get("passed") is not True:
            line += "  " + str(r.get("message") or "")
        lines.append(line.rstrip())
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


def render_markdown(report):
    s = report["summary"]
    v = s["validation"]
    out = ["# %s" % _md(report.get("title")), ""]
    if report.get("generated_at"):
        out += ["Generated: %s" % _md(report["generated_at"]), ""]
    out += ["**Overall: %s** - %d hosts (%d reachable), %d of %d ports ACTIVE, GPUDirect ready on %d of %d GPU hosts, "
            "validation %d passed / %d failed / %d not run." % (
                "OK" if s["ok"] else "PROBLEMS", s["hosts"], s["reachable"], s["ports_active"], s["ports"],
                s["gpudirect_ready"], s["gpu_hosts"], v["passed"], v["failed"], v["not_run"]), ""]
    if report["problems"]:
        out += ["## Problems", ""]
        out += ["- **%s**" % _md(p) for p in report["problems"]]
        out.append("")
    out += ["## Hosts", ""]
    for name in sorted(report["hosts"]):
        h = report["hosts"][name]
        out += ["### %s - %s" % (_md(name), h["status"].upper()), ""]
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
                             p["roce_v2_ip"], _qos_text(p)])
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
                cols = _matrix_columns(gd["matrix"])
                rows = [[gpu] + [gd["matrix"][gpu].get(c, "-") if isinstance(gd["matrix"][gpu], dict) else "-" for c in cols]
                        + [gd["nearest_nic"].get(gpu)] for gpu in sorted(gd["matrix"])]
                out += ["GPU-NIC topology (PIX same PCIe switch, PXB several switches, PHB host bridge, NODE same NUMA node, "
                        "SYS across NUMA nodes):", ""] + _md_table(["GPU"] + cols + ["Nearest NIC"], rows) + [""]
        if h["problems"]:
            out += ["Problems on %s:" % _md(name), ""] + ["- %s" % _md(p) for p in h["problems"]] + [""]
    out += ["## Validation", ""]
    if report["validation"]:
        rows = []
        for r in report["validation"]:
            verdict = _verdict(r.get("passed"))
            rows.append([r.get("test"), _pair(r), _devices_text(r), _num(r.get("bandwidth_gbps")),
                         _num(r.get("latency_us"), "%.2f"), _threshold_text(r),
                         verdict if verdict == "PASS" else "**%s**" % verdict, r.get("message")])
        out += _md_table(["Test", "Server -> client", "Devices", "Bandwidth Gb/s", "Latency us", "Threshold",
                          "Result", "Message"], rows)
    else:
        out.append("No validation results.")
    out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------
# HTML
# --------------------------------------------------------------------------
def _h(value):
    return _html_escape("-" if value is None else str(value), quote=True)


_CSS = """
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",Arial,sans-serif;color:#1d2433;background:#f4f6fa}
header{background:#1d3557;color:#fff;padding:18px 28px}
header h1{margin:0;font-size:22px;font-weight:600}
header .meta{opacity:.8;font-size:12px;margin-top:4px}
main{padding:20px 28px;max-width:1400px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}
.card{background:#fff;border-radius:8px;padding:12px 16px;min-width:170px;box-shadow:0 1px 3px rgba(0,0,0,.12);border-top:4px solid #2a9d8f}
.card.bad{border-top-color:#d62828}.card.warn{border-top-color:#f4a261}
.card .n{font-size:24px;font-weight:700}.card .l{font-size:12px;color:#5c677d;text-transform:uppercase;letter-spacing:.04em}
section{background:#fff;border-radius:8px;padding:14px 18px;margin-bottom:16px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
section.host.problems{border-left:5px solid #f4a261}section.host.unreachable,section.host.failed{border-left:5px solid #d62828}
section.host.ok{border-left:5px solid #2a9d8f}
h2{font-size:18px;margin:0 0 10px}h3{font-size:15px;margin:14px 0 6px}
.badge{display:inline-block;padding:1px 9px;border-radius:10px;font-size:12px;font-weight:700;vertical-align:middle;margin-left:8px}
.badge.ok,.badge.pass{background:#d8f3dc;color:#1b4332}.badge.problems{background:#ffe8cc;color:#7f4f24}
.badge.unreachable,.badge.failed,.badge.fail{background:#ffd6d6;color:#9d0208}.badge.notrun{background:#e9ecef;color:#495057}
table{border-collapse:collapse;width:100%;margin:6px 0 4px;font-size:13px}
th,td{border:1px solid #dde2ea;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f6;font-weight:600}
td.bad,tr.bad td{background:#ffe3e3}td.good{background:#e6f6ea}td.num{text-align:right;font-variant-numeric:tabular-nums}
.problems-box{background:#fff5f5;border:1px solid #f5c2c7;border-radius:8px;padding:10px 16px;margin-bottom:16px}
.problems-box h2{color:#9d0208}.problems-box li{margin:2px 0}
ul.reasons{margin:4px 0 8px 18px;padding:0}
.muted{color:#6c757d}
.rel-X{background:#e9ecef}.rel-PIX{background:#b7e4c7}.rel-PXB{background:#d8f3dc}
.rel-PHB{background:#fff3bf}.rel-NODE{background:#ffd8a8}.rel-SYS{background:#ffc9c9}
.legend span{display:inline-block;padding:0 6px;margin-right:4px;border-radius:3px;font-size:12px}
footer{color:#6c757d;font-size:12px;padding:0 28px 24px}
"""


def _badge(cls, text):
    return '<span class="badge %s">%s</span>' % (cls, _h(text))


def _card(value, label, cls=""):
    return '<div class="card %s"><div class="n">%s</div><div class="l">%s</div></div>' % (cls, _h(value), _h(label))


def _html_ports(h):
    rows = []
    for d in h["devices"]:
        for p in d["ports"]:
            bad_state = p["state"] != "ACTIVE" or p["phys_state"] not in (None, "LinkUp")
            no_gid = p["link_layer"] == "Ethernet" and p["roce_v2_ipv4_gid_index"] is None
            cls = ' class="bad"' if p["problems"] else ""
            rows.append(
                "<tr%s><td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"%s\">%s / %s</td><td>%s</td>"
                "<td>%s</td><td>%s</td><td class=\"num\">%s</td><td class=\"num %s\">%s</td><td>%s</td><td>%s</td></tr>" % (
                    cls, _h(d["name"]), _h(d.get("driver")), _h(p["number"]), "bad" if bad_state else "good",
                    _h(p["state"]), _h(p["phys_state"]), _h(p["link_layer"]), _h(p["rate"]), _h(p["netdev"]),
                    _h(p["mtu"]), "bad" if no_gid else "", _h(p["roce_v2_ipv4_gid_index"] if not no_gid else "none"),
                    _h(p["roce_v2_ip"]), _h(_qos_text(p))))
    if not rows:
        return '<p class="muted">No RDMA devices.</p>'
    return ("<table><tr><th>Device</th><th>Driver</th><th>Port</th><th>State / phys</th><th>Link layer</th>"
            "<th>Rate</th><th>Netdev</th><th>MTU</th><th>GID v2 idx</th><th>RoCE v2 IP</th><th>QoS</th></tr>%s</table>"
            % "".join(rows))


def _html_gpudirect(gd):
    if gd is None:
        return '<h3>GPUDirect RDMA</h3><p class="muted">No GPUDirect data.</p>'
    if not gd["gpu_count"]:
        reasons = "".join("<li>%s</li>" % _h(r) for r in gd["reasons"])
        return '<h3>GPUDirect RDMA</h3><p class="muted">No GPU on this host.</p>%s' % (
            '<ul class="reasons muted">%s</ul>' % reasons if reasons else "")
    out = ["<h3>GPUDirect RDMA %s</h3>" % (_badge("pass", "ready") if gd["ready"] else _badge("fail", "not ready"))]
    details = ["driver %s" % _h(gd["driver"] or "unknown"),
               "DMA-BUF %s" % ("possible" if gd["dmabuf"] else "not possible" if gd["dmabuf"] is False else "unknown"),
               "peer memory %s" % _h(", ".join(gd["peermem"]) or "none loaded"),
               "IOMMU %s" % _h(gd["iommu"] or "unknown")]
    out.append('<p class="muted">%s</p>' % "; ".join(details))
    out.append("<p>GPUs: %s</p>" % ", ".join(_h(_gpu_label(g)) for g in gd["gpus"]))
    if gd["reasons"]:
        out.append('<ul class="reasons">%s</ul>' % "".join("<li><b>%s</b></li>" % _h(r) for r in gd["reasons"]))
    if gd["warnings"]:
        out.append('<ul class="reasons muted">%s</ul>' % "".join("<li>warning: %s</li>" % _h(r) for r in gd["warnings"]))
    if gd["matrix"]:
        cols = _matrix_columns(gd["matrix"])
        rows = []
        for gpu in sorted(gd["matrix"]):
            rel = gd["matrix"][gpu] if isinstance(gd["matrix"][gpu], dict) else {}
            cells = "".join('<td class="rel-%s">%s</td>' % (_h(rel.get(c, "")), _h(rel.get(c))) for c in cols)
            near = gd["nearest_nic"].get(gpu) if gd["nearest_nic"] else None
            rows.append("<tr><th>%s</th>%s<td>%s</td></tr>" % (_h(gpu), cells, _h(near)))
        out.append("<table><tr><th>GPU \\ NIC</th>%s<th>Nearest NIC</th></tr>%s</table>" % (
            "".join("<th>%s</th>" % _h(c) for c in cols), "".join(rows)))
        legend = " ".join('<span class="rel-%s">%s</span>' % (r, r) for r in RELATIONS[1:])
        out.append('<p class="legend muted">%s - PIX: same PCIe switch, PXB: several switches, PHB: host bridge, '
                   'NODE: same NUMA node, SYS: across NUMA nodes</p>' % legend)
    return "".join(out)


def _html_validation(results):
    if not results:
        return '<p class="muted">No validation results.</p>'
    rows = []
    for r in results:
        verdict = _verdict(r.get("passed"))
        cls = {"PASS": "pass", "FAIL": "fail"}.get(verdict, "notrun")
        rows.append(
            '<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td>'
            "<td>%s</td><td>%s</td><td>%s</td></tr>" % (
                "bad" if verdict == "FAIL" else "", _h(r.get("test")), _h(_pair(r)), _h(_devices_text(r)),
                _h(_num(r.get("bandwidth_gbps"))), _h(_num(r.get("latency_us"), "%.2f")), _h(_threshold_text(r)),
                _badge(cls, verdict), _h(r.get("message"))))
    return ("<table><tr><th>Test</th><th>Server -&gt; client</th><th>Devices</th><th>Bandwidth Gb/s</th>"
            "<th>Latency us</th><th>Threshold</th><th>Result</th><th>Message</th></tr>%s</table>" % "".join(rows))


def render_html(report):
    s = report["summary"]
    v = s["validation"]
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>%s</title><style>%s</style></head><body>" % (_h(report.get("title")), _CSS),
        "<header><h1>%s %s</h1><div class=\"meta\">generated %s by rdma.fabric</div></header><main>" % (
            _h(report.get("title")), _badge("ok" if s["ok"] else "fail", "OK" if s["ok"] else "PROBLEMS"),
            _h(report.get("generated_at") or "-")),
        '<div class="cards">',
        _card("%d / %d" % (s["reachable"], s["hosts"]), "hosts reachable", "bad" if s["unreachable"] else ""),
        _card("%d / %d" % (s["ports_active"], s["ports"]), "ports active", "" if s["ports_active"] == s["ports"] and s["ports"] else "warn"),
        _card("%d / %d" % (s["gpudirect_ready"], s["gpu_hosts"]), "GPUDirect ready", "" if s["gpudirect_ready"] == s["gpu_hosts"] else "warn"),
        _card("%d" % v["passed"], "tests passed", "" if v["passed"] else "warn"),
        _card("%d" % v["failed"], "tests failed", "bad" if v["failed"] else ""),
        "</div>",
    ]
    if report["problems"]:
        parts.append('<div class="problems-box"><h2>Problems (%d)</h2><ul>%s</ul></div>' % (
            len(report["problems"]), "".join("<li>%s</li>" % _h(p) for p in report["problems"])))
    parts.append('<section><h2>Validation</h2>%s</section>' % _html_validation(report["validation"]))
    for name in sorted(report["hosts"]):
        h = report["hosts"][name]
        stack = h.get("stack") or {}
        meta = []
        if stack:
            meta.append("stack %s%s" % (_h(stack.get("flavor")), " " + _h(stack.get("version")) if stack.get("version") else ""))
        if h.get("facts_source"):
            meta.append("facts: %s" % _h(h["facts_source"]))
        if h.get("message"):
            meta.append(_h(h["message"]))
        parts.append('<section class="host %s"><h2>%s %s</h2>' % (h["status"], _h(name), _badge(h["status"], h["status"])))
        if meta:
            parts.append('<p class="muted">%s</p>' % "; ".join(meta))
        if h["problems"]:
            parts.append('<ul class="reasons">%s</ul>' % "".join('<li><b>%s</b></li>' % _h(p) for p in h["problems"]))
        parts.append("<h3>Devices and ports</h3>" + _html_ports(h))
        parts.append(_html_gpudirect(h["gpudirect"]))
        parts.append("</section>")
    parts.append("</main><footer>rdma.fabric fabric report, schema version %d.</footer></body></html>" % report["schema_version"])
    return "\n".join(parts) + "\n"


def render(report, fmt):
    if fmt == "json":
        return render_json(report)
    if fmt == "md":
        return render_markdown(report)
    if fmt == "html":
        return render_html(report)
    raise ValueError("formats: unknown format %r; allowed: json, md, html" % (fmt,))
