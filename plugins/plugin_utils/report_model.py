# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fabric report's data model: what the report says, pure Python, no rendering (controller side).

``build_report(hosts, validation)`` turns per-host inputs::

    {host: {"reachable": bool, "failed_earlier": bool, "message": str,
            "facts_source": "live"|"cache"|None, "rdma": ansible_facts.rdma or None, "gpudirect": ansible_facts.gpudirect or None,
            "qos": {netdev: {setting: value}} or None}}

and the validation results (rdma_validate role, one entry per test per pair)
into the report data (a host's ``status``: ``ok``, ``problems``, ``failed`` -
a task failed on it earlier in the run, so its later stages did not run -
or ``unreachable``): top-level ``hosts`` keyed by host, ``validation`` (the
list), ``summary``, ``problems`` and, when node pools are given, ``pools``.
Problems are plain sentences naming the host and port.

Built in one pass: the validation entries are indexed by host once, each host
view reads its own entries. :func:`host_inputs` turns what the report playbook
collected (each host's facts, registered results, the controller-side reads of
hosts that dropped out) into the per-host inputs, also in one pass.

Also here, shared by every rendering (plugins/plugin_utils/report.py): the
views the renderings draw (:func:`pair_matrix`, the host-pair blocks;
:func:`workload_results`, :func:`size_rows`; :func:`hosts_failing_first`;
:func:`is_large`: above ``DETAIL_HOSTS`` hosts the renderings summarise) and
the words each value is written with (:func:`num_text`, :func:`verdict`,
:func:`qos_text`, ...), so that the Markdown and the HTML say the same.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import math
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    missing_user_space_modules,
    natural_key,
    port_kind,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils import workload as wl

# The version of the report's document (report.json), its own: the facts' is rdma_schema.SCHEMA_VERSION.
REPORT_SCHEMA_VERSION = 1
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
        "kind": port_kind(dev, port),
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
    if view["kind"] == "roce" and gid_index is None:
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
        missing = missing_user_space_modules(rdma)
        if missing:
            problems.append("user-space RDMA module(s) %s not loaded: no program can use the RDMA devices, and the "
                            "Kubernetes RDMA stack does not advertise this node" % ", ".join(missing))
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
        "schema_version": REPORT_SCHEMA_VERSION,
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
def num_text(value, fmt="%.3f"):
    if value is None:
        return "-"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return fmt % value
    return str(value)


def pair_text(r):
    return "%s -> %s" % (r.get("server"), r.get("client"))


def devices_text(r):
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


def threshold_text(r):
    if r.get("min_bandwidth_gbps") is not None:
        return ">= %s Gb/s" % num_text(r["min_bandwidth_gbps"])
    if r.get("max_latency_us") is not None:
        return "<= %s us" % num_text(r["max_latency_us"], "%.1f")
    return "-"


def verdict(passed):
    return "PASS" if passed is True else ("NOT RUN" if passed is None else "FAIL")


def _value_text(value):
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value) or "none"
    if isinstance(value, dict):
        return ",".join("%s:%s" % (k, value[k]) for k in sorted(value, key=str)) or "none"
    return "-" if value is None else str(value)


def qos_text(port):
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


def gpu_label(gpu):
    if isinstance(gpu, dict):
        addr = gpu.get("pci_address") or gpu.get("address") or "?"
        name = gpu.get("name") or gpu.get("model") or gpu.get("device_id")
        return "%s%s" % (addr, " (%s)" % name if name else "")
    return str(gpu)


def matrix_columns(matrix):
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


def is_large(report):
    return len(report["hosts"]) > DETAIL_HOSTS


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
                rows.append([run_label(r), num_text(row.get("bytes"), "%d"), num_text(row.get("time_us"), "%.1f"),
                             num_text(row.get("algbw_gbps"), "%.4g"), num_text(row.get("busbw_gbps"), "%.4g"),
                             {True: "yes", False: "NO"}.get(row.get("correct"), "-")])
    return rows


SIZE_HEADERS = ["Run", "Bytes", "Time us", "Algorithm bandwidth Gb/s", "Bus bandwidth Gb/s", "Correct"]
PERF_HEADERS = ["Test", "Server -> client", "Devices", "Latency us", "Bandwidth Gb/s", "Result"]


def perftests_shown(perftests, large):
    """ucx_perftest's entries to list: all, or above DETAIL_HOSTS hosts the ones that did not pass (first LISTED)."""
    return [r for r in perftests if not large or r.get("passed") is not True][:LISTED if large else None]


def perf_row(r):
    return [r.get("test"), pair_text(r), devices_text(r), num_text(r.get("latency_us"), "%.2f"),
            num_text(r.get("bandwidth_gbps"), "%.4g"), verdict(r.get("passed"))]
