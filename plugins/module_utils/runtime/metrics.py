# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA fabric metrics for node_exporter's textfile collector: ``rdma-fabric metrics``.

Runs in the host runtime (``python3 /usr/lib/rdma-fabric/rdma-fabric.pyz
metrics``, see DESIGN.md "Where code runs"): on the systemd timer the
``rdma.fabric.rdma_metrics`` role installs, and once after every successful
lossless re-apply (``--record-apply``, from a drop-in of
``rdma-fabric-lossless.service``). It never changes the host's settings.

What it reads (one :class:`Snapshot`; the role README lists every metric
with its source):

* ports: the RDMA facts gatherer (:mod:`.rdma_facts`, sysfs only) with its
  ``counters`` subset - state, physical state, rate, netdev MTU, link layer,
  the port kind (:func:`.rdma_schema.port_kind`), ``counters/`` and
  ``hw_counters/``;
* PFC per priority on RoCE ports' netdevs: DCB netlink (enabled priorities,
  ``requests``/``indications``, what ``dcb -s pfc show`` prints) and the
  driver's ``ethtool -S`` per-priority pause counters (:mod:`.netlink_stats`);
* drift: every saved lossless port (``/etc/rdma-fabric/lossless/<netdev>.json``,
  the roce_qos arguments the role applied) read and compared by the QoS
  engine itself in check mode (:class:`.qos.engine.QosRun`): one gauge per
  managed option, 1 where the host differs;
* GPUDirect readiness: :func:`.gd_probes.gather` (reads only);
* the collection version (from the config the role writes) and the time of
  the last successful lossless apply (``--record-apply`` stamp).

Each part is read on its own: a part that fails adds to
``rdma_fabric_collector_errors{section}`` (and says why on stderr) and its
metrics are missing; the collector never ends in a traceback. The textfile is
written atomically: a temporary file in the same folder, renamed over the
old one, so node_exporter never reads half a file.

Usage: rdma-fabric metrics [--config FILE] [--textfile FILE|-] [--record-apply]
Exit status: 0 written (read errors are in the metrics), 1 the file could
not be written, 2 bad usage or configuration.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import errno
import fnmatch
import json
import math
import os
import re
import signal
import socket
import sys
import time

from ansible_collections.rdma.fabric.plugins.module_utils.change.files import write_atomic
from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.runtime import netlink_stats
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    DEVICE_GLOB_RE,
    DEVICE_GLOB_RULE,
    natural_key,
    port_kind,
    ports,
)

CONFIG_PATH = paths.METRICS_CONFIG
GPUDIRECT_MODES = ("auto", "required", "ignore")
# Every configuration key, its default and what it must be (a type, or a check).
DEFAULTS = {
    # node_exporter's textfile collector folder (Debian's default) and the file in it
    "textfile": "/var/lib/prometheus/node-exporter/rdma_fabric.prom",
    # the lossless_ethernet role's saved per-port settings, and the lock its re-apply holds
    "saved_dir": paths.LOSSLESS_SAVED_DIR,
    "apply_lock": paths.QOS_LOCK,
    # where --record-apply keeps the time of the last successful apply
    "state_dir": paths.STATE_DIR,
    "sysfs": "/sys",
    "procfs": "/proc",
    # ports that must be ACTIVE, with an optional minimum rate: [{"match": "mlx5_0/1" | "mlx5_*", "rate_gbps": 200}]
    "expected_ports": [],
    "gpudirect": "auto",
    "include_vfs": False,
    "drift": True,
    "collection_version": None,
}
APPLY_STAMP = "lossless-last-apply"
TEXTFILE_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+\.prom")
PORT_NUMBER_RE = re.compile(r"[1-9][0-9]{0,2}")
# The highest rate an expected port may ask for, in Gb/s (a sanity bound: no RDMA link runs faster).
MAX_RATE_GBPS = 100000

# Named counters: (metric, help, multiplier, sources in order of preference).
# A source is "counters/<file>" (the IB PMA counters every RDMA driver keeps)
# or "hw_counters/<file>" (driver-specific: mlx5, rxe, ...). The first source
# that exists on a port gives the value.
PORT_COUNTERS = (
    ("symbol_errors", "Minor link errors detected on one or more physical lanes", 1,
     ("counters/symbol_error",)),
    ("link_downed", "Times the link error recovery process failed and the link went down", 1,
     ("counters/link_downed", "hw_counters/link_downed")),
    ("link_error_recovery", "Times the link completed the link error recovery process", 1,
     ("counters/link_error_recovery",)),
    ("receive_errors", "Packets received with errors", 1, ("counters/port_rcv_errors",)),
    ("receive_remote_physical_errors", "Packets received marked with the EBP delimiter", 1,
     ("counters/port_rcv_remote_physical_errors",)),
    ("transmit_discards", "Outbound packets discarded because the port was down or congested", 1,
     ("counters/port_xmit_discards",)),
    ("local_link_integrity_errors", "Times the local physical errors exceeded the threshold", 1,
     ("counters/local_link_integrity_errors",)),
    ("excessive_buffer_overrun_errors", "Consecutive flow control update periods with buffer overrun", 1,
     ("counters/excessive_buffer_overrun_errors",)),
    ("receive_bytes", "Data octets received (port_rcv_data counts 4-octet words)", 4, ("counters/port_rcv_data",)),
    ("transmit_bytes", "Data octets transmitted (port_xmit_data counts 4-octet words)", 4, ("counters/port_xmit_data",)),
    ("receive_packets", "Packets received", 1, ("counters/port_rcv_packets", "hw_counters/rcvd_pkts")),
    ("transmit_packets", "Packets transmitted", 1, ("counters/port_xmit_packets", "hw_counters/sent_pkts")),
    ("transmit_wait", "Ticks during which the port had data to transmit but none was sent", 1,
     ("counters/port_xmit_wait",)),
    ("out_of_sequence", "Packets received out of sequence", 1,
     ("hw_counters/out_of_sequence", "hw_counters/out_of_seq_request")),
    ("packet_sequence_errors", "NAK sequence errors received (the peer saw a PSN gap)", 1,
     ("hw_counters/packet_seq_err", "hw_counters/rcvd_seq_err")),
    ("retransmits", "Retransmissions: adaptive retransmissions (mlx5) or completer retries (rxe)", 1,
     ("hw_counters/roce_adp_retrans", "hw_counters/completer_retry_err")),
    ("ack_timeouts", "Times the ACK timer expired on the sending side (each one retransmits)", 1,
     ("hw_counters/local_ack_timeout_err",)),
    ("retry_exceeded_errors", "Send queues that ran out of retries", 1, ("hw_counters/retry_exceeded_err",)),
    ("duplicate_requests", "Duplicate requests received", 1, ("hw_counters/duplicate_request",)),
    ("cnp_sent", "Congestion notification packets sent (this port was a notification point)", 1,
     ("hw_counters/np_cnp_sent",)),
    ("cnp_handled", "Congestion notification packets handled (this port was a reaction point)", 1,
     ("hw_counters/rp_cnp_handled",)),
    ("cnp_ignored", "Congestion notification packets received and ignored", 1, ("hw_counters/rp_cnp_ignored",)),
    ("ecn_marked_packets", "RoCE packets received with the ECN congestion mark", 1,
     ("hw_counters/np_ecn_marked_roce_packets",)),
    ("out_of_buffer", "Packets dropped because no receive buffer was posted", 1, ("hw_counters/out_of_buffer",)),
)
# hw_counters entries that are settings, not counters (mlx5, rxe: the statistics cache lifetime in ms).
HW_COUNTER_SETTINGS = ("lifespan",)
# Driver ethtool -S names of per-priority pause counters: (regex of direction and priority, kind, scale to base units).
ETHTOOL_PFC = (
    (re.compile(r"(rx|tx)_prio([0-7])_pause\Z"), "frames", 1.0),                      # mlx5
    (re.compile(r"(rx|tx)_priority_([0-7])_xoff\.nic\Z"), "frames", 1.0),             # ice
    (re.compile(r"(rx|tx)_pfc_ena_frames_pri([0-7])\Z"), "frames", 1.0),              # bnxt_en
    (re.compile(r"(rx|tx)_prio([0-7])_pause_duration\Z"), "duration", 1e-6),          # mlx5, microseconds
)
ETHTOOL_STORM = (("tx_pause_storm_warning_events", "warning"), ("tx_pause_storm_error_events", "error"))  # mlx5

PORT_STATES = {1: "DOWN", 2: "INIT", 3: "ARMED", 4: "ACTIVE", 5: "ACTIVE_DEFER"}


class ConfigError(ValueError):
    """A bad configuration value; the message names the key and what is allowed."""


# ---------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------
def _check_path(key, value, absolute=True):
    if not isinstance(value, str) or not value or (absolute and not value.startswith("/")):
        raise ConfigError("%s: expected an absolute path, got %r" % (key, value))
    return value


def check_config(raw):
    """The configuration with defaults filled in; :class:`ConfigError` naming the key for bad input."""
    if not isinstance(raw, dict):
        raise ConfigError("the configuration must be a JSON object, got %s" % type(raw).__name__)
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ConfigError("unknown key(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(sorted(DEFAULTS))))
    cfg = dict(DEFAULTS)
    cfg.update(raw)
    for key in ("textfile", "saved_dir", "apply_lock", "state_dir", "sysfs", "procfs"):
        _check_path(key, cfg[key])
    if not TEXTFILE_NAME_RE.fullmatch(os.path.basename(cfg["textfile"])):
        raise ConfigError("textfile: %r must name a file ending in .prom (node_exporter reads only those), "
                          "of letters, digits, '_', '.', '-'" % cfg["textfile"])
    if cfg["gpudirect"] not in GPUDIRECT_MODES:
        raise ConfigError("gpudirect: %r is not allowed; choose one of %s" % (cfg["gpudirect"], ", ".join(GPUDIRECT_MODES)))
    for key in ("include_vfs", "drift"):
        if not isinstance(cfg[key], bool):
            raise ConfigError("%s: expected true or false, got %r" % (key, cfg[key]))
    if cfg["collection_version"] is not None and not isinstance(cfg["collection_version"], str):
        raise ConfigError("collection_version: expected a version text or null, got %r" % (cfg["collection_version"],))
    expected = cfg["expected_ports"]
    if not isinstance(expected, list):
        raise ConfigError("expected_ports: expected a list of {match, rate_gbps}, got %r" % (expected,))
    checked = []
    for i, entry in enumerate(expected):
        where = "expected_ports[%d]" % i
        if not isinstance(entry, dict) or set(entry) - set(("match", "rate_gbps")) or "match" not in entry:
            raise ConfigError("%s: each entry must be {match: DEVICE[/PORT] glob, rate_gbps: number or null}, "
                              "got %r" % (where, entry))
        match, rate = entry["match"], entry.get("rate_gbps")
        device, slash, port = match.partition("/") if isinstance(match, str) else ("", "", "")
        if not DEVICE_GLOB_RE.fullmatch(device) or (slash and not PORT_NUMBER_RE.fullmatch(port)):
            raise ConfigError("%s.match: %r is not allowed; allowed: %s, optionally with /PORT (e.g. mlx5_0/1, mlx5_*)"
                              % (where, match, DEVICE_GLOB_RULE))
        if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate)
                                 or not 0 < rate <= MAX_RATE_GBPS):
            raise ConfigError("%s.rate_gbps: %r is not allowed; allowed: null, or the lowest rate in Gb/s (a number "
                              "above 0, at most %d)" % (where, rate, MAX_RATE_GBPS))
        checked.append({"match": match, "rate_gbps": None if rate is None else float(rate)})
    cfg["expected_ports"] = checked
    return cfg


def load_config(path):
    """Read and check the configuration file; a missing file means the defaults."""
    try:
        with open(path) as f:
            raw = json.load(f)
    except (IOError, OSError) as e:
        if e.errno == errno.ENOENT:
            raw = {}
        else:
            raise ConfigError("%s: cannot read it: %s" % (path, e.strerror))
    except ValueError as e:
        raise ConfigError("%s: not valid JSON: %s" % (path, e))
    return check_config(raw)


def exact_port(entry):
    """``(device, port)`` of an ``expected_ports`` entry that names one port exactly (no glob), else None."""
    device, slash, port = entry["match"].partition("/")
    if not slash or any(c in device for c in "*?[]!"):
        return None
    return device, int(port)


def expectation(cfg, device, port):
    """``(expected, rate_gbps)`` for one port: the first ``expected_ports`` entry that matches it."""
    for entry in cfg["expected_ports"]:
        pattern = entry["match"]
        dev_pat, dummy, port_pat = pattern.partition("/")
        if fnmatch.fnmatchcase(device, dev_pat) and (not port_pat or int(port_pat) == port):
            return True, entry["rate_gbps"]
    return False, None


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
class Snapshot(object):
    """Everything one run read; :func:`render` turns it into the textfile, the health check judges it."""

    def __init__(self):
        self.ports = []          # dicts, see _read_ports
        self.expected_found = []  # (expected_ports entry, ports it matched) after the ports were read
        self.pfc = {}            # (device, port) -> {"netdev", "enabled", "requests", "indications", "ethtool"}
        self.drift = []          # dicts, see _read_drift
        self.drift_skipped = None  # why the drift check did not run this time
        self.gpudirect = None    # {"gpus": n, "ready": bool, "reasons": [...]}
        self.last_apply = None   # epoch seconds
        self.errors = {}         # section -> count
        self.messages = []       # (section, text)
        self.durations = {}      # section -> seconds
        self.version = None
        self.gpudirect_required = False
        self.facts = None
        self.finished = None

    def error(self, section, text):
        self.errors[section] = self.errors.get(section, 0) + 1
        self.messages.append((section, text))


def _section(snap, name, func, *args):
    """Run one part of the read; an exception becomes an error count and a message, never a traceback."""
    t0 = time.time()
    snap.errors.setdefault(name, 0)
    try:
        func(snap, *args)
    except Exception as e:  # pylint: disable=broad-except  # a collector must not die of one part
        snap.error(name, "%s: %s" % (type(e).__name__, e))
    snap.durations[name] = time.time() - t0


def _counter_values(port):
    values = {}
    for group in ("counters", "hw_counters"):
        for name, value in (port.get(group) or {}).items():
            values[group + "/" + name] = value
    return values


def _read_ports(snap, cfg):
    from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
    facts = gather_rdma_facts(cfg["sysfs"], gather_subset=["counters"])
    snap.facts = facts
    for dev, port in ports(facts, include_vfs=cfg["include_vfs"]):
        expected, rate = expectation(cfg, dev["name"], port["number"])
        raw = _counter_values(port)
        counters = {}
        for metric, dummy, scale, sources in PORT_COUNTERS:
            for source in sources:
                if raw.get(source) is not None:
                    counters[metric] = raw[source] * scale
                    break
        unreadable = sorted(k for k, v in raw.items() if v is None and k.split("/", 1)[1] not in HW_COUNTER_SETTINGS)
        if unreadable:
            snap.error("ports", "%s/%s: unreadable counters: %s" % (dev["name"], port["number"], ", ".join(unreadable)))
        if port.get("state_id") is None:  # a port folder that vanished mid-read, or a state the kernel would not give
            snap.error("ports", "%s/%s: the port state could not be read (the port may have disappeared)"
                       % (dev["name"], port["number"]))
        snap.ports.append({
            "device": dev["name"], "port": port["number"], "netdev": port.get("netdev") or dev.get("parent_netdev"),
            "link_layer": port.get("link_layer"), "kind": port_kind(dev, port), "driver": dev.get("driver"),
            "soft": bool(dev.get("soft")), "state": port.get("state"), "state_id": port.get("state_id"),
            "phys_state": port.get("phys_state"), "phys_state_id": port.get("phys_state_id"),
            "rate_gbps": port.get("rate_gbps"), "mtu": port.get("mtu"), "counters": counters,
            "expected": expected, "expected_rate_gbps": rate,
        })
    snap.expected_found = [
        (entry, sum(1 for p in snap.ports if expectation({"expected_ports": [entry]}, p["device"], p["port"])[0]))
        for entry in cfg["expected_ports"]]


def pfc_from_ethtool(stats):
    """``({(kind, direction, priority): value}, {storm level: count})`` from ``ethtool -S`` names (see ETHTOOL_PFC)."""
    ethtool = {}
    for name, value in stats.items():
        for regex, kind, scale in ETHTOOL_PFC:
            m = regex.match(name)
            if m:
                ethtool[(kind, m.group(1), int(m.group(2)))] = value * scale
                break
    storm = dict((level, stats[name]) for name, level in ETHTOOL_STORM if name in stats)
    return ethtool, storm


def _read_pfc(snap, cfg):
    seen = {}
    for p in snap.ports:
        if p["kind"] != "roce" or not p["netdev"]:
            continue
        key = (p["device"], p["port"])
        if p["netdev"] in seen:
            continue
        seen[p["netdev"]] = key
        try:
            dcb = netlink_stats.dcb_ieee_pfc(p["netdev"])
        except (IOError, OSError, socket.timeout) as e:
            snap.error("pfc", "%s: DCB netlink: %s" % (p["netdev"], e))
            dcb = None
        try:
            stats = netlink_stats.ethtool_stats(p["netdev"]) or {}
        except (IOError, OSError) as e:
            snap.error("pfc", "%s: ethtool statistics: %s" % (p["netdev"], e))
            stats = {}
        ethtool, storm = pfc_from_ethtool(stats)
        if dcb is None and not ethtool and not storm:
            continue
        snap.pfc[key] = {"netdev": p["netdev"], "dcb": dcb, "ethtool": ethtool, "storm": storm}


def saved_ports(saved_dir):
    """``[(netdev, request or None, error or None)]`` of the saved lossless settings, by name.

    Each file is read and validated as ``rdma-fabric qos-apply`` reads it
    (:func:`.qos.reapply.load_saved`): one ``roce_qos`` ports entry.
    """
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.reapply import load_saved
    try:
        names = sorted(n for n in os.listdir(saved_dir) if n.endswith(".json"))
    except (IOError, OSError) as e:
        if e.errno == errno.ENOENT:
            return []
        raise
    out = []
    for name in names:
        netdev = name[:-len(".json")]
        try:
            out.append((netdev, load_saved(os.path.join(saved_dir, name), netdev), None))
        except (IOError, OSError, ValueError) as e:
            out.append((netdev, None, "unreadable saved settings %s: %s" % (name, e)))
    return out


def check_drift(netdev, request, sysfs, facts=None):
    """One saved port compared with the host by the QoS engine in check mode.

    ``{"netdev", "device", "port", "ok", "error", "options": {option: drifted}, "unsupported": [options]}``.
    ``request``: the port's validated request (:func:`saved_ports`); ``facts``: the RDMA
    facts this run read (else they are read here to find the port).
    """
    from ansible_collections.rdma.fabric.plugins.module_utils.runtime.host_cli import HostProcess
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import CommandRunner
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import QosRun
    from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import check_netdevs_exist, read_facts, resolve
    from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
    entry = {"netdev": netdev, "device": None, "port": None, "ok": False, "error": None, "options": {}, "unsupported": []}
    tree = SysfsTree(sysfs)
    try:
        check_netdevs_exist(tree, [request])
        ref = resolve(read_facts(tree) if facts is None else facts, tree, request)
        result = QosRun(CommandRunner(HostProcess()), tree, [(request, ref)], check_mode=True).run()["ports"][ref.netdev]
    except QosError as e:
        entry["error"] = str(e)
        return entry
    entry.update(ok=True, device=ref.device, port=ref.port,
                 options=dict((k, bool(v)) for k, v in result["changes"].items()),
                 unsupported=[u["option"] for u in result["unsupported"]])
    return entry


def _read_drift(snap, cfg, lock_wait=0.0):
    saved = saved_ports(cfg["saved_dir"])
    if not saved:
        return
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import lock as qos_lock

    lock = qos_lock.shared(cfg["apply_lock"], lock_wait)
    if lock is False:
        snap.drift_skipped = "a lossless re-apply is running (%s is locked)" % cfg["apply_lock"]
        return
    try:
        for netdev, request, problem in saved:
            if problem is not None:
                snap.error("drift", "%s: %s" % (netdev, problem))
                snap.drift.append({"netdev": netdev, "device": None, "port": None, "ok": False, "error": problem,
                                   "options": {}, "unsupported": []})
                continue
            entry = check_drift(netdev, request, cfg["sysfs"], snap.facts)
            snap.drift.append(entry)
    finally:
        if lock is not None:
            os.close(lock)


def _read_gpudirect(snap, cfg):
    if cfg["gpudirect"] == "ignore":
        return
    from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes
    from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
    facts = gd_probes.gather(SysfsTree(cfg["sysfs"], cfg["procfs"]), "audit")
    snap.gpudirect = {"gpus": len(facts["gpus"]), "ready": bool(facts["ready"]), "reasons": list(facts["reasons"])}


def _read_apply(snap, cfg):
    text = None
    try:
        with open(os.path.join(cfg["state_dir"], APPLY_STAMP)) as f:
            text = f.read().strip()
    except (IOError, OSError) as e:
        if e.errno != errno.ENOENT:
            raise
    if text:
        snap.last_apply = float(text)


def collect(cfg, lock_wait=0.0):
    """Read everything (see the module docstring); never raises for a read error."""
    snap = Snapshot()
    snap.version = cfg["collection_version"]
    snap.gpudirect_required = cfg["gpudirect"] == "required"
    t0 = time.time()
    _section(snap, "ports", _read_ports, cfg)
    _section(snap, "pfc", _read_pfc, cfg)
    if cfg["drift"]:
        _section(snap, "drift", _read_drift, cfg, lock_wait)
    _section(snap, "gpudirect", _read_gpudirect, cfg)
    _section(snap, "apply", _read_apply, cfg)
    snap.durations["total"] = time.time() - t0
    snap.finished = time.time()
    return snap


def record_apply(cfg, now=None):
    """Write the time of a successful lossless apply (atomically) for ``rdma_fabric_lossless_last_apply_timestamp_seconds``."""
    os.makedirs(cfg["state_dir"], mode=0o755, exist_ok=True)
    write_atomic(os.path.join(cfg["state_dir"], APPLY_STAMP), "%.3f\n" % (time.time() if now is None else now))


# ---------------------------------------------------------------------------
# the textfile
# ---------------------------------------------------------------------------
def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _fmt(value):
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") and "e" not in text else text


class _Writer(object):
    def __init__(self):
        self.lines = []
        self.families = {}

    def add(self, name, kind, help_text, labels, value):
        if value is None:
            return
        if name not in self.families:
            self.families[name] = (kind, help_text, [])
        self.families[name][2].append((labels, value))

    def text(self):
        out = []
        for name in self.families:
            kind, help_text, samples = self.families[name]
            out.append("# HELP %s %s" % (name, help_text.replace("\\", "\\\\").replace("\n", "\\n")))
            out.append("# TYPE %s %s" % (name, kind))
            for labels, value in samples:
                if labels:
                    body = ",".join('%s="%s"' % (k, _escape(v)) for k, v in labels)
                    out.append("%s{%s} %s" % (name, body, _fmt(value)))
                else:
                    out.append("%s %s" % (name, _fmt(value)))
        return "\n".join(out) + "\n"


P = "rdma_fabric_"
HELP_PORT_UP = ("1 when the port state is ACTIVE; 0 also for an expected port that is gone (its device or port folder "
                "disappeared) or whose state cannot be read")
HELP_EXPECTED_UP = "1 when the configuration expects this port ACTIVE (expected_ports)"
HELP_EXPECTED_RATE = "The lowest rate the configuration accepts for the port"


def render(snap):
    """The Prometheus text exposition of a :class:`Snapshot` (names: see the role README)."""
    w = _Writer()
    w.add(P + "build_info", "gauge", "The rdma.fabric collection that installed the collector (version label)",
          (("version", snap.version or "unknown"),), 1)
    for p in sorted(snap.ports, key=lambda x: (natural_key(x["device"]), x["port"])):
        lab = (("device", p["device"]), ("port", str(p["port"])))
        w.add(P + "port_info", "gauge", "An RDMA port: its netdev, link layer, kind (roce, infiniband, iwarp) and driver",
              lab + (("netdev", p["netdev"] or ""), ("link_layer", p["link_layer"] or "Unknown"),
                     ("kind", p["kind"] or "unknown"), ("driver", p["driver"] or "unknown"),
                     ("soft", "true" if p["soft"] else "false")), 1)
        w.add(P + "port_state", "gauge", "Port state number from ports/N/state (1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER)",
              lab, p["state_id"])
        w.add(P + "port_up", "gauge", HELP_PORT_UP, lab,
              (None if not p["expected"] else 0) if p["state_id"] is None else p["state_id"] == 4)
        w.add(P + "port_physical_state", "gauge",
              "Physical state number from ports/N/phys_state (2 Polling, 3 Disabled, 5 LinkUp, 6 LinkErrorRecovery, ...)",
              lab, p["phys_state_id"])
        w.add(P + "port_rate_bytes_per_second", "gauge", "Port signalling rate from ports/N/rate (Gb/s x 125000000)",
              lab, None if p["rate_gbps"] is None else p["rate_gbps"] * 1.25e8)
        w.add(P + "port_mtu_bytes", "gauge", "MTU of the port's netdev (class/net/IF/mtu)", lab, p["mtu"])
        w.add(P + "port_expected_up", "gauge", HELP_EXPECTED_UP, lab, p["expected"])
        if p["expected"] and p["expected_rate_gbps"] is not None:
            w.add(P + "port_expected_rate_bytes_per_second", "gauge", HELP_EXPECTED_RATE, lab, p["expected_rate_gbps"] * 1.25e8)
    for entry, found in snap.expected_found:
        exact = exact_port(entry)
        if exact is not None and not found:  # an expected port that is gone: its series say so (RdmaPortDown)
            lab = (("device", exact[0]), ("port", str(exact[1])))
            w.add(P + "port_up", "gauge", HELP_PORT_UP, lab, 0)
            w.add(P + "port_expected_up", "gauge", HELP_EXPECTED_UP, lab, 1)
            if entry["rate_gbps"] is not None:
                w.add(P + "port_expected_rate_bytes_per_second", "gauge", HELP_EXPECTED_RATE, lab, entry["rate_gbps"] * 1.25e8)
        elif exact is None:
            w.add(P + "expected_ports_found", "gauge", "Ports that an expected_ports entry that is a glob or a device "
                  "without a port matches (0: none is there)", (("match", entry["match"]),), found)
    for metric, help_text, dummy, sources in PORT_COUNTERS:
        for p in sorted(snap.ports, key=lambda x: (natural_key(x["device"]), x["port"])):
            if metric in p["counters"]:
                w.add(P + "port_" + metric + "_total", "counter", "%s (%s)" % (help_text, ", ".join(sources)),
                      (("device", p["device"]), ("port", str(p["port"]))), p["counters"][metric])
    for (device, port), pfc in sorted(snap.pfc.items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1])):
        lab = (("device", device), ("port", str(port)))
        dcb = pfc["dcb"]
        frames = dict(((d, prio), v) for (kind, d, prio), v in pfc["ethtool"].items() if kind == "frames")
        duration = dict(((d, prio), v) for (kind, d, prio), v in pfc["ethtool"].items() if kind == "duration")
        for prio in range(8):
            plab = lab + (("priority", str(prio)),)
            if dcb is not None:
                w.add(P + "pfc_enabled", "gauge", "1 when PFC is on for the priority (DCB netlink IEEE PFC, dcb pfc show)",
                      plab, prio in dcb["enabled"])
            for direction in ("rx", "tx"):
                value = frames.get((direction, prio))
                if value is None and dcb is not None:
                    value = dcb["indications" if direction == "rx" else "requests"][prio]
                w.add(P + "pfc_pause_frames_total", "counter",
                      "PFC pause frames per priority, received (rx) or sent (tx): the driver's ethtool -S counters "
                      "(rx/tx_prioN_pause, rx/tx_priority_N_xoff.nic, rx/tx_pfc_ena_frames_priN), else DCB netlink "
                      "IEEE PFC indications (rx) and requests (tx) as dcb -s pfc show prints them",
                      plab + (("direction", direction),), value)
                w.add(P + "pfc_pause_duration_seconds_total", "counter",
                      "Time paused by PFC per priority (ethtool -S rx/tx_prioN_pause_duration, microseconds)",
                      plab + (("direction", direction),), duration.get((direction, prio)))
        for level, value in sorted(pfc["storm"].items()):
            w.add(P + "pfc_storm_events_total", "counter",
                  "PFC storm prevention events of the NIC (ethtool -S tx_pause_storm_warning_events, tx_pause_storm_error_events)",
                  lab + (("level", level),), value)
    for d in snap.drift:
        nlab = (("netdev", d["netdev"]),)
        w.add(P + "qos_drift_check_success", "gauge",
              "1 when the saved lossless settings of the netdev could be compared with the host", nlab, d["ok"])
        for option, drifted in sorted(d["options"].items()):
            w.add(P + "qos_drift", "gauge",
                  "1 when the host differs from the applied lossless profile for the option (roce_qos check mode)",
                  nlab + (("option", option),), drifted)
        for option in d["unsupported"]:
            w.add(P + "qos_unsupported", "gauge", "1 for a saved option the port cannot do (skipped with on_unsupported: warn)",
                  nlab + (("option", option),), 1)
    w.add(P + "qos_drift_check_skipped", "gauge", "1 when this run left the drift check out (a lossless re-apply held its lock)",
          (), None if not snap.drift_skipped else 1)
    if snap.gpudirect is not None:
        w.add(P + "gpudirect_gpus", "gauge", "NVIDIA GPUs (PCI vendor 0x10de, class 0x03xx)", (), snap.gpudirect["gpus"])
        if snap.gpudirect["gpus"] or snap.gpudirect_required:
            w.add(P + "gpudirect_ready", "gauge", "1 when GPUDirect RDMA is usable (rdma.fabric.gpudirect readiness rules)",
                  (), snap.gpudirect["ready"])
            w.add(P + "gpudirect_blocking_reasons", "gauge", "Reasons that keep GPUDirect RDMA from working (health-check prints them)",
                  (), len(snap.gpudirect["reasons"]))
    w.add(P + "lossless_last_apply_timestamp_seconds", "gauge",
          "When the lossless settings were last applied successfully (Unix time; the re-apply service's success hook)",
          (), snap.last_apply)
    for section in sorted(snap.errors):
        w.add(P + "collector_errors", "gauge", "Read errors of the last run, by section (their metrics are missing)",
              (("section", section),), snap.errors[section])
    for section in sorted(snap.durations):
        w.add(P + "collector_duration_seconds", "gauge", "Time the last run spent, by section", (("section", section),),
              round(snap.durations[section], 6))
    w.add(P + "collector_last_run_timestamp_seconds", "gauge", "When the last run finished (Unix time)", (),
          round(snap.finished, 3) if snap.finished else None)
    return w.text()


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------
def _on_sigterm(signum, frame):
    raise SystemExit(128 + signum)


def add_common_args(ap):
    ap.add_argument("--config", default=CONFIG_PATH, help="configuration written by rdma.fabric.rdma_metrics (default %(default)s)")
    ap.add_argument("--sysfs", help=argparse.SUPPRESS)
    ap.add_argument("--procfs", help=argparse.SUPPRESS)


def config_from_args(opts):
    cfg = load_config(opts.config)
    for key in ("sysfs", "procfs"):
        if getattr(opts, key, None):
            cfg[key] = _check_path("--" + key, os.path.abspath(getattr(opts, key)))
    return cfg


def cli_main(argv=None):
    """``rdma-fabric metrics``: read, render, write the textfile (see the module docstring)."""
    signal.signal(signal.SIGTERM, _on_sigterm)
    ap = argparse.ArgumentParser(prog="rdma-fabric metrics",
                                 description="Write RDMA fabric metrics for node_exporter's textfile collector (rdma.fabric).")
    add_common_args(ap)
    ap.add_argument("--textfile", help="where to write (default: the configuration's textfile); - prints to stdout")
    ap.add_argument("--record-apply", action="store_true",
                    help="first record now as the time of the last successful lossless apply (the re-apply service's hook)")
    opts = ap.parse_args(argv)
    try:
        cfg = config_from_args(opts)
        if opts.textfile and opts.textfile != "-":
            cfg["textfile"] = os.path.abspath(opts.textfile)
            cfg = check_config(dict((k, v) for k, v in cfg.items()))
    except ConfigError as e:
        sys.stderr.write("rdma-fabric metrics: configuration error: %s" % e + "\n")
        return 2
    if opts.record_apply:
        try:
            record_apply(cfg)
        except (IOError, OSError) as e:
            sys.stderr.write("rdma-fabric metrics: cannot record the apply time under %s: %s" % (cfg["state_dir"], e) + "\n")
    snap = collect(cfg)
    for section, text in snap.messages:
        sys.stderr.write("rdma-fabric metrics: %s: %s" % (section, text) + "\n")
    text = render(snap)
    if opts.textfile == "-":
        sys.stdout.write(text)
        return 0
    try:
        write_atomic(cfg["textfile"], text)
    except (IOError, OSError) as e:
        sys.stderr.write("rdma-fabric metrics: cannot write %s: %s" % (cfg["textfile"], getattr(e, "strerror", None) or e) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(cli_main())
