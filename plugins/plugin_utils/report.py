# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric report: data model and its JSON, Markdown and HTML renderings (controller side).

``build_report(hosts, validation)`` turns per-host inputs::

    {host: {"reachable": bool, "failed_earlier": bool, "message": str,
            "facts_source": "live"|"cache"|None, "rdma": ansible_facts.rdma or None, "gpudirect": ansible_facts.gpudirect or None,
            "qos": {netdev: {setting: value}} or None}}

and the validation results (rdma_validate role, one entry per test per pair)
into the report data (a host's ``status``: ``ok``, ``problems``, ``failed`` -
a task failed on it earlier in the run, so its later stages did not run -
or ``unreachable``): top-level ``hosts`` keyed by host, ``validation`` (the
list), ``summary``, ``problems`` and, when node pools are given, ``pools``.
Problems are plain sentences naming the host and port. The renderers are pure
functions of that data; the HTML is a single file with inline CSS and SVG
(plugins/plugin_utils/report_svg.py) and no scripts or external resources.

What the HTML draws: the host-pair matrix of the tests (pass/fail) and, from the
same blocks of hosts (:func:`pair_matrix`), heatmaps of the bandwidth and the
latency measured per pair (each cell its worst pair); with the rdma_validate
workload's results a "Workload" section (allreduce bus bandwidth against message
size, one line per run, MPI's and NCCL's; the figures per size; ucx_perftest's
figures), which the Markdown has as tables; and each GPU host's GPU-NIC matrix
coloured like ``nvidia-smi topo -m``.

Built in one pass: the validation entries are indexed by host once, each host
view reads its own entries. The renderings stay readable at a thousand hosts:
up to ``DETAIL_HOSTS`` hosts every host is shown in full; above, the HTML and
Markdown summarise (counts, node pools, every host in one table with failing
hosts first, the host-pair heatmaps, failed tests) and show
details only for hosts with problems (HTML: collapsed), while the JSON keeps
everything. :func:`host_inputs` turns what the report playbook collected (each
host's facts, registered results, the controller-side reads of hosts that
dropped out) into the per-host inputs, also in one pass.

A fabric plan (plugins/plugin_utils/fabric_plan.py, the ``fabric_plan`` callback's check-mode run) is rendered
here too, in the report's look: :func:`render_plan_section` ("Planned changes", also a section of the
report when ``build_report`` is given the plan) and :func:`render_plan_html` (fabric-plan.html).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import math
import re

try:
    from html import escape as _html_escape
except ImportError:  # pragma: no cover - Python 2 has no html module
    from cgi import escape as _html_escape

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import SCHEMA_VERSION, natural_key
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_plan
from ansible_collections.rdma.fabric.plugins.plugin_utils import report_svg as rs
from ansible_collections.rdma.fabric.plugins.plugin_utils import workload as wl

# Up to this many hosts the renderings show every host in full; above, they summarise.
DETAIL_HOSTS = 40
# How many problems, failed tests and host lines the summarised renderings list.
LISTED = 100
# Status order: failing hosts first.
STATUS_ORDER = ("unreachable", "failed", "problems", "ok")
# The per-pair figures the host-pair heatmaps show: entry key, name, unit, whether more is better. A cell of
# several pairs (or tests) shows its worst figure: the least bandwidth, the most latency.
PAIR_FIGURES = (("bandwidth_gbps", "Bandwidth", "Gb/s", True), ("latency_us", "Latency", "us", False))
# The workload's allreduce runs as the report names them.
RUN_NAMES = {wl.MPI_ALLREDUCE: "MPI allreduce", wl.NCCL_ALLREDUCE: "NCCL allreduce"}


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


def _host_view(name, data, own_results, pool=None):
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
        "pool": pool,
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
    for r in own_results:
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


def results_by_host(validation):
    """``{host: [entries naming it]}`` in one pass over the validation entries."""
    out = {}
    for r in validation:
        for host in set(r.get("hosts") or []):
            out.setdefault(host, []).append(r)
    return out


def rollout_view(gates):
    """A staged rollout's health gates (rollout.json ``gates``, site.yml) as the report shows them; None without."""
    if not isinstance(gates, list) or not gates:
        return None
    rows = []
    for g in gates:
        if not isinstance(g, dict):
            continue
        failed = g.get("failed") if isinstance(g.get("failed"), dict) else {}
        rows.append({"batch": g.get("batch"), "of": g.get("of"), "hosts": list(g.get("hosts") or []),
                     "reference": g.get("reference"), "ok": g.get("ok") is True,
                     "failed": dict((h, list(r) if isinstance(r, list) else [str(r)]) for h, r in sorted(failed.items())),
                     "message": str(g.get("message") or "")})
    return {"gates": rows, "ok": all(r["ok"] for r in rows)}


def build_report(hosts, validation=None, generated_at=None, title="RDMA fabric report", pools=None, rollout=None,
                 plan=None):
    """Report data (see module docstring). Pure and deterministic for its inputs.

    ``pools``: optional node pools, ``{"pools": [{"name", "hosts" (a count), "ports"}], "host_pool": {host: name}}``
    (rdma.fabric.node_pools); each host view then names its pool and the report lists the pools.
    ``rollout``: the health gates of this run's staged rollout (site.yml), shown with their verdicts.
    ``plan``: a fabric plan (fabric-plan.json of a check-mode run, checked with ``plan.check``), kept under ``plan``
    and shown as the "Planned changes" section: what the run was planned to do, beside what it did.
    """
    validation = [dict(r) for r in (validation or []) if isinstance(r, dict)]
    by_host = results_by_host(validation)
    host_pool = (pools or {}).get("host_pool") or {}
    host_views = {}
    for name in sorted(hosts or {}):
        host_views[name] = _host_view(name, (hosts or {})[name], by_host.get(name, ()), host_pool.get(name))
    ports = [p for h in host_views.values() for d in h["devices"] for p in d["ports"]]
    gd_hosts = [h for h in host_views.values() if h["gpudirect"] and h["gpudirect"]["gpu_count"]]
    vsum = validation_summary(validation)
    problems = []
    for name, view in host_views.items():
        problems.extend("%s: %s" % (name, p) for p in view["problems"])
    pool_list = [dict(p) for p in (pools or {}).get("pools") or []]
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
        "pools": len(pool_list),
        "validation": vsum,
    }
    summary["ok"] = not problems and vsum["failed"] == 0
    report = {
        "schema_version": SCHEMA_VERSION,
        "title": title,
        "generated_at": generated_at,
        "summary": summary,
        "problems": problems,
        "hosts": host_views,
        "validation": validation,
    }
    if pools is not None:
        report["pools"] = pool_list
    if plan is not None:
        report["plan"] = plan
    view = rollout_view(rollout)
    if view is not None:
        report["rollout"] = view
        if not view["ok"]:
            summary["ok"] = False
    return report


# What differs between two reports of the same fabric in the same state: when each was made, and what
# the tests measured. ``comparable`` takes exactly these out, so that two runs' reports can be compared
# (a sliced job against an unsliced run, a run against the one before): the time stamp; in each
# validation entry the measured figures and those quoted in its message (and in the problems that
# quote a failed test's message), and how many connection attempts a client needed; the workload
# stage's per-size rows.
MEASURED = ("bandwidth_gbps", "latency_us", "elapsed_s", "sizes")
# a figure with its unit, not a threshold ("... below the threshold 0.003 Gb/s" keeps its 0.003)
_MEASURED_TEXT = re.compile(r"(?<!threshold )(?<![\w.])[0-9]+\.[0-9]+(?= (?:Gb/s|us)\b)")
# how often a client had to connect before its server listened (rdma.fabric.perftest's message): timing
_ATTEMPTS_TEXT = re.compile(r" \(after [0-9]+ connection attempts\)")


def comparable(report):
    """A copy of report data (``build_report``, fabric-report.json) without what differs between two runs
    over the same fabric: ``generated_at`` dropped, in every ``validation`` entry the measured figures
    (``MEASURED``) set to None, and each measured figure in a validation ``message`` or a ``problems``
    sentence (the report's and each host's: a failed test's message is quoted there) - "0.052 Gb/s",
    "812.40 us", not a threshold - written "<measured> Gb/s", and the note of how many connection attempts a
    client needed (" (after 2 connection attempts)", when its server was slow to listen) dropped. Everything
    else (hosts, their devices, ports, GIDs, QoS and GPUDirect state, pools, which tests passed, thresholds,
    the summary) is kept as it is."""
    def text(value):
        if not isinstance(value, str):
            return value
        return _MEASURED_TEXT.sub("<measured>", _ATTEMPTS_TEXT.sub("", value))

    out = copy.deepcopy(report)
    out.pop("generated_at", None)
    for entry in out.get("validation") or []:
        if not isinstance(entry, dict):
            continue
        for key in MEASURED:
            if key in entry:
                entry[key] = None
        entry["message"] = text(entry.get("message"))
    holders = [out] + [h for h in (out.get("hosts") or {}).values() if isinstance(h, dict)]
    for holder in holders:
        if isinstance(holder.get("problems"), list):
            holder["problems"] = [text(p) for p in holder["problems"]]
    return out


def _qos_input(registered):
    """A host's QoS input from its registered roce_qos result: ``ports`` (one call for all ports) or a loop."""
    if not isinstance(registered, dict) or registered.get("skipped"):
        return None
    if isinstance(registered.get("ports"), dict):
        return dict(registered["ports"])
    if isinstance(registered.get("results"), list):
        return dict((r.get("item"), r) for r in registered["results"] if isinstance(r, dict) and r.get("item"))
    return None


def host_inputs(hosts, values, live_hosts=None, reads=None):
    """Per-host report inputs from what the report playbook collected, in one pass.

    ``values``: ``{host: {"rdma", "gpudirect" (facts), "ping", "qos" (registered results)}}``;
    ``live_hosts``: the hosts the collecting play ran on (None: all); ``reads``: the registered
    loop results of the controller-side facts reads of the others (``item`` = host). A host of
    the collecting play is reported as read there (unreachable when its ping was); one that dropped
    out earlier in the run is reported from its read (``failed_earlier``) or, when that failed, as
    unreachable with its facts from the cache when it has them.
    """
    live = set(hosts if live_hosts is None else live_hosts)
    read_by_host = {}
    for r in reads or []:
        if isinstance(r, dict) and r.get("item") is not None and not r.get("skipped"):
            read_by_host.setdefault(r["item"], r)
    out = {}
    for host in hosts:
        v = values.get(host) or {}
        ping = v.get("ping") if isinstance(v.get("ping"), dict) else {}
        rdma, gd = v.get("rdma"), v.get("gpudirect")
        cached = {"facts_source": "cache" if rdma is not None else None, "rdma": rdma, "gpudirect": gd}
        if host in live:
            if ping.get("unreachable"):
                out[host] = dict(cached, reachable=False, message=ping.get("msg") or "unreachable")
            else:
                out[host] = {"reachable": True, "facts_source": "live", "rdma": rdma, "gpudirect": gd,
                             "qos": _qos_input(v.get("qos"))}
            continue
        read = read_by_host.get(host) or {}
        read_rdma = (read.get("ansible_facts") or {}).get("rdma") if isinstance(read.get("ansible_facts"), dict) else None
        if read_rdma is not None:
            out[host] = {"reachable": True, "failed_earlier": True, "facts_source": "live", "rdma": read_rdma,
                         "gpudirect": None}
        else:
            out[host] = dict(cached, reachable=False,
                             message=read.get("msg") or "did not answer earlier in this run")
    return out


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


def hosts_failing_first(report):
    """Host names, failing hosts first (unreachable, failed, problems, ok), then by name."""
    rank = dict((st, i) for i, st in enumerate(STATUS_ORDER))
    return sorted(report["hosts"], key=lambda n: (rank.get(report["hosts"][n]["status"], 0), natural_key(n)))


def _is_large(report):
    return len(report["hosts"]) > DETAIL_HOSTS


def _port_line(d, p):
    return "%s/%s %s %s%s gid%s" % (
        d["name"], p["number"], p["state"] or "?", _num(p["rate_gbps"], "%g"),
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
        figure = "%s Gb/s" % _num(r["bandwidth_gbps"])
    elif r.get("latency_us") is not None:
        figure = "%s us" % _num(r["latency_us"], "%.2f")
    line = "  %-8s %-12s %-24s %s" % (_verdict(r.get("passed")), r.get("test"), _pair(r), figure)
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
    large = _is_large(report)
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


def _figure(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def pair_matrix(report, max_cells=120):
    """The host-pair matrix of the validation, aggregated into blocks of consecutive hosts when large.

    Returns ``{"hosts": [...] (natural order), "block": hosts per block, "cells": {(row, col): cell}}``
    where a row is a server's block and a column a client's, and a cell is
    ``{"passed", "failed", "not_run", "figures": {key: {"value", "test", "server", "client", "count"}}}``:
    the counts of its tests (pre-checks count: a failed pre-check is a failed pair) and, per
    :data:`PAIR_FIGURES` key that its pair tests measured, the worst figure, the test and pair that gave it
    and how many were measured. The workload's allreduce runs span every host: their figures are not a pair's.
    """
    names = sorted(set(report["hosts"]) | set(h for r in report["validation"] for h in (r.get("hosts") or [])
                                              if h is not None), key=natural_key)
    index = dict((n, i) for i, n in enumerate(names))
    block = max(1, int(math.ceil(len(names) / float(max_cells))))
    cells = {}
    for r in report["validation"]:
        srv, cli = r.get("server"), r.get("client")
        if srv not in index or cli not in index:
            continue
        key = (index[srv] // block, index[cli] // block)
        cell = cells.setdefault(key, {"passed": 0, "failed": 0, "not_run": 0, "figures": {}})
        cell["passed" if r.get("passed") is True else "not_run" if r.get("passed") is None else "failed"] += 1
        if r.get("test") in wl.ALLREDUCE_TESTS:
            continue
        for name, dummy, dummy_unit, more_is_better in PAIR_FIGURES:
            value = _figure(r.get(name))
            if value is None:
                continue
            fig = cell["figures"].get(name)
            if fig is None or (value < fig["value"] if more_is_better else value > fig["value"]):
                cell["figures"][name] = {"value": value, "test": r.get("test"), "server": srv, "client": cli,
                                         "count": fig["count"] if fig else 0}
            cell["figures"][name]["count"] += 1
    return {"hosts": names, "block": block, "cells": cells}


def workload_results(validation):
    """The workload stage's entries: ``(runs, perftests)``, the allreduce runs (MPI, NCCL) and ucx_perftest's."""
    runs = [r for r in validation if r.get("test") in wl.ALLREDUCE_TESTS]
    return runs, [r for r in validation if r.get("test") in wl.PERFTEST_TESTS]


def run_label(r):
    """An allreduce run as the report names it: ``MPI allreduce, 2 hosts``."""
    return "%s, %d hosts" % (RUN_NAMES.get(r.get("test"), r.get("test")), len(r.get("hosts") or []))


def size_rows(runs):
    """The allreduce figures per run and message size: ``[label, bytes, time us, algbw, busbw, correct]`` (text)."""
    rows = []
    for r in runs:
        for row in r.get("sizes") or []:
            if isinstance(row, dict):
                rows.append([run_label(r), _num(row.get("bytes"), "%d"), _num(row.get("time_us"), "%.1f"),
                             _num(row.get("algbw_gbps"), "%.4g"), _num(row.get("busbw_gbps"), "%.4g"),
                             {True: "yes", False: "NO"}.get(row.get("correct"), "-")])
    return rows


_SIZE_HEADERS = ["Run", "Bytes", "Time us", "Algorithm bandwidth Gb/s", "Bus bandwidth Gb/s", "Correct"]
_PERF_HEADERS = ["Test", "Server -> client", "Devices", "Latency us", "Bandwidth Gb/s", "Result"]


def _perftests_shown(perftests, large):
    """ucx_perftest's entries to list: all, or above DETAIL_HOSTS hosts the ones that did not pass (first LISTED)."""
    return [r for r in perftests if not large or r.get("passed") is not True][:LISTED if large else None]


def _perf_row(r):
    return [r.get("test"), _pair(r), _devices_text(r), _num(r.get("latency_us"), "%.2f"),
            _num(r.get("bandwidth_gbps"), "%.4g"), _verdict(r.get("passed"))]


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
    return out


def _md_test_row(r):
    verdict = _verdict(r.get("passed"))
    return [r.get("test"), _pair(r), _devices_text(r), _num(r.get("bandwidth_gbps")),
            _num(r.get("latency_us"), "%.2f"), _threshold_text(r),
            verdict if verdict == "PASS" else "**%s**" % verdict, r.get("message")]


_MD_TEST_HEADERS = ["Test", "Server -> client", "Devices", "Bandwidth Gb/s", "Latency us", "Threshold", "Result", "Message"]


def render_markdown(report):
    """Every host in full up to DETAIL_HOSTS hosts; above, a host table (failing first) and details of failing hosts."""
    s = report["summary"]
    v = s["validation"]
    large = _is_large(report)
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
        out.append("- %s: %s%s" % (_md(run_label(r)), "PASS" if r.get("passed") is True else "**%s**" % _verdict(r.get("passed")),
                                   "" if r.get("passed") is True else " - " + _md(r.get("message"))))
    if runs:
        out.append("")
    rows = size_rows(runs)
    if rows:
        out += ["Allreduce figures per message size:", ""] + _md_table(_SIZE_HEADERS, rows) + [""]
    shown = _perftests_shown(perftests, large)
    if shown:
        out += ["ucx_perftest%s:" % (" (the ones that did not pass; all in fabric-report.json)" if large else ""), ""]
        out += _md_table(_PERF_HEADERS, [_perf_row(r) for r in shown]) + [""]
    return out


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
.legend span{display:inline-block;padding:0 6px;margin-right:4px;border-radius:3px;font-size:12px}
footer{color:#6c757d;font-size:12px;padding:0 28px 24px}
div.summary{background:#fff;border-radius:8px;padding:14px 18px;margin-bottom:16px;box-shadow:0 1px 3px rgba(0,0,0,.12)}
details.host{border:1px solid #dde2ea;border-left:5px solid #f4a261;border-radius:6px;padding:6px 12px;margin:8px 0}
details.host.unreachable,details.host.failed{border-left-color:#d62828}
details.host summary{cursor:pointer;font-weight:600}
.matrix{overflow:auto;max-width:100%}svg.heatmap text{fill:#1d2433;font-family:inherit}
ul.changes{margin:4px 0 8px 18px;padding:0}ul.changes li{margin:3px 0}ul.changes ul{margin:2px 0 2px 16px;padding:0}
ul.changes table{width:auto;margin:3px 0}details.unchanged summary{cursor:pointer}
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


def _html_gpudirect(name, gd):
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
        out.append('<div class="matrix topology">%s</div>' % rs.gpu_topology_chart(name, gd["matrix"], gd["nearest_nic"]))
    return "".join(out)


def _verdict_badge(verdict):
    return _badge({"PASS": "pass", "FAIL": "fail"}.get(verdict, "notrun"), verdict)


def _html_test_row(r):
    verdict = _verdict(r.get("passed"))
    return ('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td>'
            "<td>%s</td><td>%s</td><td>%s</td></tr>" % (
                "bad" if verdict == "FAIL" else "", _h(r.get("test")), _h(_pair(r)), _h(_devices_text(r)),
                _h(_num(r.get("bandwidth_gbps"))), _h(_num(r.get("latency_us"), "%.2f")), _h(_threshold_text(r)),
                _verdict_badge(verdict), _h(r.get("message"))))


def _html_validation(results, large=False):
    if not results:
        return '<p class="muted">No validation results.</p>'
    note = ""
    if large:
        failing = [r for r in results if r.get("passed") is not True]
        note = ('<p class="muted">%d results; the failed and not-run ones are listed (first %d); every result is in '
                "fabric-report.json.</p>" % (len(results), LISTED))
        results = failing[:LISTED]
        if not results:
            return note
    return (note + "<table><tr><th>Test</th><th>Server -&gt; client</th><th>Devices</th><th>Bandwidth Gb/s</th>"
            "<th>Latency us</th><th>Threshold</th><th>Result</th><th>Message</th></tr>%s</table>"
            % "".join(_html_test_row(r) for r in results))


def _html_workload(runs, perftests, large):
    """The Workload section: allreduce bus bandwidth against message size (one line per run), the figures per
    size, ucx_perftest's figures per pair."""
    parts = ['<section id="workload"><h2>Workload</h2>']
    for r in runs:
        verdict = _verdict(r.get("passed"))
        parts.append("<p>%s %s%s</p>" % (_h(run_label(r)), _verdict_badge(verdict),
                                         "" if verdict == "PASS" else ' <span class="muted">%s</span>' % _h(r.get("message"))))
    charted = [(run_label(r), r["sizes"]) for r in runs if r.get("sizes")]
    if charted:
        parts.append('<div class="matrix">%s</div>' % rs.allreduce_chart(charted))
    rows = size_rows(runs)
    if rows:
        parts.append("<table><tr>%s</tr>%s</table>" % ("".join("<th>%s</th>" % _h(c) for c in _SIZE_HEADERS), "".join(
            "<tr><td>%s</td>%s<td%s>%s</td></tr>" % (_h(row[0]), "".join('<td class="num">%s</td>' % _h(c) for c in row[1:5]),
                                                     ' class="bad"' if row[5] == "NO" else "", _h(row[5])) for row in rows)))
    shown = _perftests_shown(perftests, large)
    if shown:
        parts.append("<h3>ucx_perftest</h3>%s<table><tr>%s</tr>%s</table>" % (
            '<p class="muted">The ones that did not pass (first %d); every pair in fabric-report.json and in the '
            "host-pair heatmaps.</p>" % LISTED if large else "",
            "".join("<th>%s</th>" % _h(c) for c in _PERF_HEADERS), "".join(
                '<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td></tr>' % (
                    "bad" if row[5] == "FAIL" else "", _h(row[0]), _h(row[1]), _h(row[2]), _h(row[3]), _h(row[4]),
                    _verdict_badge(row[5]))
                for row in (_perf_row(r) for r in shown))))
    parts.append("</section>")
    return "".join(parts)


_CELL_COLOURS = (("failed", "#d62828"), ("not_run", "#adb5bd"), ("passed", "#2a9d8f"))


def heatmap_svg(report, size=720, matrix=None):
    """The host-pair matrix as an inline SVG: a row per server, a column per client, a cell per tested pair.

    Green: every test of the pair passed; red: a test (or the pre-check) failed; grey: not run.
    Above ~120 hosts, consecutive hosts (in natural name order) share a row/column block and a cell
    shows the worst of its pairs; every cell has a tooltip with its hosts and counts.
    ``matrix``: :func:`pair_matrix`'s result when the caller has it.
    """
    m = matrix or pair_matrix(report)
    names, block, cells = m["hosts"], m["block"], m["cells"]
    if not cells:
        return ""
    grid = {}
    for key, c in cells.items():
        grid[key] = (next(colour for count, colour in _CELL_COLOURS if c[count]), "%s: %d passed, %d failed, %d not run" % (
            rs.pair_label(names, block, key[0], key[1]), c["passed"], c["failed"], c["not_run"]))
    legend = ('<p class="legend muted"><span style="background:#2a9d8f;color:#fff">passed</span> '
              '<span style="background:#d62828;color:#fff">failed</span> <span style="background:#adb5bd">not run</span> '
              "- rows: server, columns: client, hosts in name order%s; hover a cell for its hosts.</p>" % (
                  "" if block == 1 else ", %d hosts per row/column" % block))
    return '<div class="matrix">%s</div>%s' % (rs.host_grid(names, block, grid, "host-pair matrix", size=size), legend)


def pair_figures_html(report, size=720, matrix=None):
    """The measured figures per host pair (:data:`PAIR_FIGURES`) as numeric heatmaps, one per figure measured.

    Same rows, columns and blocks as :func:`heatmap_svg`; a cell shows the worst figure of its pairs and tests,
    its tooltip the test and pair that gave it; the colour says how far the cell is from the best one.
    """
    m = matrix or pair_matrix(report)
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
            label = "%s per host pair (%s)" % (what, unit)
            out.append('<h3>%s</h3><div class="matrix">%s</div>' % (_h(label), rs.numeric_heatmap(
                m["hosts"], m["block"], values, label, unit, more_is_better, size=size)))
    return "".join(out)


def _html_host_pairs(report):
    """The pass/fail matrix and the heatmaps of the measured figures (one pair_matrix pass for all)."""
    m = pair_matrix(report)
    return heatmap_svg(report, matrix=m) + pair_figures_html(report, matrix=m)


def _html_host(name, h):
    stack = h.get("stack") or {}
    meta = []
    if stack:
        meta.append("stack %s%s" % (_h(stack.get("flavor")), " " + _h(stack.get("version")) if stack.get("version") else ""))
    if h.get("pool"):
        meta.append("node pool %s" % _h(h["pool"]))
    if h.get("facts_source"):
        meta.append("facts: %s" % _h(h["facts_source"]))
    if h.get("message"):
        meta.append(_h(h["message"]))
    out = []
    if meta:
        out.append('<p class="muted">%s</p>' % "; ".join(meta))
    if h["problems"]:
        out.append('<ul class="reasons">%s</ul>' % "".join('<li><b>%s</b></li>' % _h(p) for p in h["problems"]))
    out.append("<h3>Devices and ports</h3>" + _html_ports(h))
    out.append(_html_gpudirect(name, h["gpudirect"]))
    return "".join(out)


def _html_hosts_table(report, linked=None):
    """Every host in one table, failing first; a name links to the host's details where it has them."""
    rows = []
    for name in hosts_failing_first(report):
        h = report["hosts"][name]
        ports = [p for d in h["devices"] for p in d["ports"]]
        cell = '<a href="#host-%s">%s</a>' % (_h(name), _h(name)) if linked is None or name in linked else _h(name)
        rows.append('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td class="num">%d / %d</td>'
                    '<td class="num">%d / %d</td><td>%s</td></tr>' % (
                        "" if h["status"] == "ok" else "bad", cell, _badge(h["status"], h["status"]),
                        _h(h.get("pool")), sum(1 for p in ports if p["state"] == "ACTIVE"), len(ports),
                        h["validation"]["passed"], h["validation"]["failed"],
                        _h(h["problems"][0]) if h["problems"] else ""))
    return ("<table><tr><th>Host</th><th>Status</th><th>Node pool</th><th>Ports ACTIVE</th><th>Tests passed / failed</th>"
            "<th>First problem</th></tr>%s</table>" % "".join(rows))


def _html_rollout(view):
    rows = "".join(
        "<tr><td class=\"num\">%s of %s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
            _h(g["batch"]), _h(g["of"]), _h(", ".join(g["hosts"])), _h(g["reference"] or "-"),
            _badge("pass" if g["ok"] else "fail", "passed" if g["ok"] else "FAILED"),
            _h("; ".join("%s: %s" % (h, " | ".join(r)) for h, r in g["failed"].items()) or g["message"]))
        for g in view["gates"])
    return ('<div class="summary"><h2>Staged rollout: health gates (%d) %s</h2><table><tr><th>Batch</th><th>Hosts</th>'
            "<th>Tested against</th><th>Gate</th><th>Why</th></tr>%s</table></div>" % (
                len(view["gates"]), _badge("ok" if view["ok"] else "fail", "OK" if view["ok"] else "STOPPED"), rows))


def _page_head(title, badge, generated_at):
    """The start of a page of the report's look: its CSS, the header bar with the title, a badge and the time."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>%s</title><style>%s</style></head><body>" % (_h(title), _CSS),
        "<header><h1>%s %s</h1><div class=\"meta\">generated %s by rdma.fabric</div></header><main>" % (
            _h(title), badge, _h(generated_at or "-")),
    ]


def _plan_port_table(rows):
    return ("<table><tr><th>Port</th><th>Setting</th><th>Before</th><th>After</th></tr>%s</table>" % "".join(
        "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % tuple(_h(c) for c in row) for row in rows))


def _plan_host(plan, host):
    """One host of a plan: its failures, then per stage each change (label, port values before -> after, diffs)."""
    out = []
    failures = fabric_plan.host_failures(plan, host)
    if failures:
        out.append('<ul class="reasons">%s</ul>' % "".join("<li><b>%s</b></li>" % _h(f) for f in failures))
    for stage, changes in ((plan["hosts"].get(host) or {}).get("stages") or {}).items():
        items = []
        for c in changes:
            ports = fabric_plan.port_rows(c)
            where = fabric_plan.diff_headers(c)
            items.append("<li>%s%s%s</li>" % (
                _h(fabric_plan.change_label(c)), _plan_port_table(ports) if ports else "",
                "<ul>%s</ul>" % "".join("<li>%s</li>" % _h(w) for w in where) if where else ""))
        out.append('<h3>%s</h3><ul class="changes">%s</ul>' % (_h(stage), "".join(items)))
    return "".join(out)


_PLAN_BADGES = {"unreachable": "unreachable", "failed": "failed", "changes": "problems"}


def render_plan_section(plan, anchor="planned-changes"):
    """The "Planned changes" section of a fabric plan (``plan.check``'s shape), as HTML.

    Summary cards, the hosts that would be drained, rebooted or have their driver stack restarted, the hosts
    that failed or were unreachable in the plan (red), then each host that would change, per stage, with each
    change (task and item, port values before -> after, the files of its diffs). Every such host is open up to
    DETAIL_HOSTS hosts, collapsed above, and listed in detail up to LISTED (the rest by name); the hosts with
    nothing to change are one collapsed line, so the section stays readable at a thousand hosts.
    """
    s = plan["summary"]
    groups = fabric_plan.host_groups(plan)
    rows = fabric_plan.disruption_rows(plan)
    d = plan.get("disruption") or {}
    stopped = groups["stopped"]
    parts = ['<div class="summary" id="%s"><h2>Planned changes %s</h2>' % (_h(anchor), _plan_badge(plan)),
             "<p>%s%s</p>" % (_h(fabric_plan.headline(plan)),
                              " Planned %s." % _h(plan["generated_at"]) if plan.get("generated_at") else ""),
             '<div class="cards">',
             _card("%d" % s["hosts"], "hosts"),
             _card("%d" % s["hosts_changing"], "hosts that would change", "warn" if s["hosts_changing"] else ""),
             _card("%d" % s["changes"], "changes", "warn" if s["changes"] else ""),
             _card("%d" % len(d.get("reboot") or []), "would reboot", "warn" if d.get("reboot") else ""),
             _card("%d" % len(stopped), "failed or unreachable", "bad" if stopped else ""),
             "</div>"]
    if rows:
        parts.append("<table>%s</table>" % "".join(
            '<tr><th>%s</th><td class="num">%d</td><td>%s</td></tr>' % (_h(what), len(hosts), _h(", ".join(hosts) or "none"))
            for what, hosts in rows))
    if stopped:
        lines = [line for host in stopped for line in fabric_plan.host_failures(plan, host)]
        parts.append('<div class="problems-box"><h2>Failed or unreachable in the plan (%d)</h2><ul>%s</ul></div>' % (
            len(stopped), "".join("<li>%s</li>" % _h(line) for line in lines[:LISTED])
            + ("<li>... %d more in fabric-plan.json</li>" % (len(lines) - LISTED) if len(lines) > LISTED else "")))
    shown = stopped + groups["changing"]
    if shown:
        open_ = " open" if len(shown) <= DETAIL_HOSTS else ""
        if not open_:
            parts.append('<p class="muted">%d hosts; each collapsed, open one to see its changes.</p>' % len(shown))
        for host in shown[:LISTED]:
            status = fabric_plan.host_status(plan, host)
            parts.append('<details class="host %s" id="%s-%s"%s><summary>%s %s</summary>%s</details>' % (
                status, _h(anchor), _h(host), open_, _h(host),
                _badge(_PLAN_BADGES.get(status, "ok"), fabric_plan.host_title(plan, host)), _plan_host(plan, host)))
        if len(shown) > LISTED:
            parts.append('<p class="muted">... and %d more hosts (every change in fabric-plan.json and fabric-plan.md): '
                         "%s</p>" % (len(shown) - LISTED, _h(", ".join(shown[LISTED:]))))
    if groups["unchanged"]:
        parts.append('<details class="unchanged"><summary>Nothing to change on %d hosts</summary><p>%s</p></details>' % (
            len(groups["unchanged"]), _h(", ".join(groups["unchanged"]))))
    parts.append("</div>")
    return "".join(parts)


def _plan_badge(plan):
    return _badge("ok", "CHECK MODE") if plan.get("check_mode") else _badge("fail", "NOT a check-mode run")


def render_plan_html(plan, generated_at=None):
    """The fabric plan as one self-contained page (the report's look): title "Fabric plan", its section."""
    parts = _page_head("Fabric plan", _plan_badge(plan), generated_at or plan.get("generated_at"))
    parts.append(render_plan_section(plan))
    parts.append("</main><footer>rdma.fabric fabric plan (fabric-plan.json holds every change and its diff text)."
                 "</footer></body></html>")
    return "\n".join(parts) + "\n"


def render_html(report):
    """One self-contained page: summary first; every host in full up to DETAIL_HOSTS hosts, else collapsed details."""
    s = report["summary"]
    v = s["validation"]
    large = _is_large(report)
    parts = _page_head(report.get("title"), _badge("ok" if s["ok"] else "fail", "OK" if s["ok"] else "PROBLEMS"),
                       report.get("generated_at")) + [
        '<div class="cards">',
        _card("%d / %d" % (s["reachable"], s["hosts"]), "hosts reachable", "bad" if s["unreachable"] else ""),
        _card("%d" % len(s["hosts_with_problems"]), "hosts with problems", "bad" if s["hosts_with_problems"] else ""),
        _card("%d / %d" % (s["ports_active"], s["ports"]), "ports active", "" if s["ports_active"] == s["ports"] and s["ports"] else "warn"),
        _card("%d / %d" % (s["gpudirect_ready"], s["gpu_hosts"]), "GPUDirect ready", "" if s["gpudirect_ready"] == s["gpu_hosts"] else "warn"),
        _card("%d" % v["passed"], "tests passed", "" if v["passed"] else "warn"),
        _card("%d" % v["failed"], "tests failed", "bad" if v["failed"] else ""),
        "</div>",
    ]
    if report["problems"]:
        shown = 20 if large else LISTED
        more = len(report["problems"]) - shown
        parts.append('<div class="problems-box"><h2>Problems (%d)</h2><ul>%s%s</ul></div>' % (
            len(report["problems"]), "".join("<li>%s</li>" % _h(p) for p in report["problems"][:shown]),
            "<li>... %d more: see the hosts below and fabric-report.json</li>" % more if more > 0 else ""))
    if large and report["validation"]:
        parts.append('<div class="summary"><h2>Host pairs</h2>%s</div>' % _html_host_pairs(report))
    parts.append('<div class="summary"><h2>Hosts (%d), failing first</h2>%s</div>' % (
        s["hosts"], _html_hosts_table(report, linked=None if not large else set(
            n for n in report["hosts"] if report["hosts"][n]["status"] != "ok"))))
    if report.get("rollout"):
        parts.append(_html_rollout(report["rollout"]))
    if report.get("plan"):
        parts.append(render_plan_section(report["plan"]))
    if report.get("pools"):
        parts.append('<div class="summary"><h2>Node pools (%d)</h2><table><tr><th>Pool</th><th>Hosts</th><th>Ports</th></tr>%s'
                     "</table></div>" % (len(report["pools"]), "".join(
                         "<tr><td>%s</td><td class=\"num\">%d</td><td>%s</td></tr>" % (
                             _h(p["name"]), p["hosts"], _h(", ".join(p.get("ports") or []) or "none"))
                         for p in report["pools"])))
    parts.append('<section><h2>Validation</h2>%s%s</section>' % (
        "" if large else _html_host_pairs(report), _html_validation(report["validation"], large)))
    runs, perftests = workload_results(report["validation"])
    if runs or perftests:
        parts.append(_html_workload(runs, perftests, large))
    if large:
        failing = [n for n in hosts_failing_first(report) if report["hosts"][n]["status"] != "ok"]
        parts.append('<div class="summary"><h2>Hosts with problems (%d)</h2><p class="muted">Each collapsed; open one to see '
                     "its devices, ports, QoS and GPUDirect state. Hosts without problems: fabric-report.json.</p>"
                     % len(failing))
        for name in failing[:LISTED]:
            h = report["hosts"][name]
            parts.append('<details class="host %s" id="host-%s"><summary>%s %s</summary>%s</details>' % (
                h["status"], _h(name), _h(name), _badge(h["status"], h["status"]), _html_host(name, h)))
        if len(failing) > LISTED:
            parts.append('<p class="muted">... %d more in fabric-report.json</p>' % (len(failing) - LISTED))
        parts.append("</div>")
    else:
        for name in sorted(report["hosts"]):
            h = report["hosts"][name]
            parts.append('<section class="host %s" id="host-%s"><h2>%s %s</h2>%s</section>' % (
                h["status"], _h(name), _h(name), _badge(h["status"], h["status"]), _html_host(name, h)))
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
