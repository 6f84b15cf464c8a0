# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fabric validation planning: endpoints, host pairs, pre-checks, results.

Inputs are the ``ansible_facts.rdma`` dictionaries of the hosts (schema in
DESIGN.md). Nothing here touches a host: the rdma_validate role calls these
through the ``validate_*`` filters on the controller, runs the tests with the
``perftest`` module and turns each run into one result entry.

A result entry (one per test per pair) is::

    {test, hosts: [server, client], server, client, devices: [srv, cli],
     ports: [srv, cli], gid_indices: [srv, cli], server_ip, tcp_port,
     bandwidth_gbps, latency_us, min_bandwidth_gbps, max_latency_us,
     passed, message, elapsed_s}
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import itertools
import math

from ansible_collections.rdma.fabric.plugins.module_utils.common.perftest import TESTS, PerftestError, check_name
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import port_kind
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import check_folder

TOPOLOGIES = ("ring", "all_pairs")
# Per-host variables of the rdma_validate role (host_vars / group_vars), read by the planning action.
HOST_VARS = ("device", "port", "data_ip", "switch")
DEFAULT_TESTS = ("rping", "ib_write_bw", "ib_send_lat")
PRECHECK = "precheck"


class ValidateError(ValueError):
    """Bad planning input (names the parameter and the allowed values)."""


def _ports(device):
    return [p for p in (device.get("ports") or []) if isinstance(p, dict)]


def _gid_entry(port, index):
    for gid in port.get("gids") or []:
        if isinstance(gid, dict) and gid.get("index") == index:
            return gid
    return None


def _port_score(dev, port):
    """Preference when no device/port is named: usable RoCE v2, then IB, then iWARP, then the rest."""
    if port.get("state") != "ACTIVE":
        return 4
    kind = port_kind(dev, port)
    if kind == "roce" and port.get("roce_v2_ipv4_gid_index") is not None:
        return 0
    if kind == "infiniband":
        return 1
    if kind == "iwarp":
        return 2
    return 3


def select_endpoint(rdma, host=None, device=None, port=None, data_ip=None):
    """Pick the device/port a host tests with and note what is wrong with it.

    ``device``/``port`` pin the choice; otherwise the first ACTIVE Ethernet
    port with a RoCE v2 IPv4 GID wins, then an ACTIVE InfiniBand port, then
    any port (so that the pre-check can say what is wrong with it).
    ``data_ip`` overrides the address taken from the RoCE v2 IPv4 GID.
    Returns a dict with ``problems`` (list of plain sentences) and ``ok``.
    """
    label = host or "host"
    ep = {
        "host": host, "device": None, "port": None, "driver": None, "soft": False,
        "link_layer": None, "state": None, "phys_state": None, "rate_gbps": None,
        "netdev": None, "mtu": None, "gid_index": None, "gid": None, "ip": data_ip or None, "kind": None,
        "problems": [], "ok": False,
    }
    if not isinstance(rdma, dict) or not isinstance(rdma.get("devices"), list):
        ep["problems"].append("%s: no RDMA facts (run rdma.fabric.rdma_device_facts)" % label)
        return ep
    devices = [d for d in rdma["devices"] if isinstance(d, dict)]
    if device:
        chosen = [d for d in devices if d.get("name") == device]
        if not chosen:
            have = ", ".join(sorted(str(d.get("name")) for d in devices)) or "none"
            ep["problems"].append("%s: RDMA device %s not found (devices: %s)" % (label, device, have))
            return ep
        devices = chosen
    if not devices:
        ep["problems"].append("%s: no RDMA devices (load a driver or create a Soft-RoCE link)" % label)
        return ep
    candidates = []
    for order, dev in enumerate(devices):
        for prt in _ports(dev):
            if port is not None and prt.get("number") != port:
                continue
            candidates.append((_port_score(dev, prt), order, prt.get("number") or 0, dev, prt))
    if not candidates:
        if device:
            ep["problems"].append("%s: %s has no port %s" % (label, device, port))
        else:
            ep["problems"].append("%s: no RDMA device has a port %s" % (label, port))
        return ep
    candidates.sort(key=lambda c: c[:3])
    dev, prt = candidates[0][3], candidates[0][4]
    ep.update(
        device=dev.get("name"), port=prt.get("number"), driver=dev.get("driver"), soft=bool(dev.get("soft")),
        link_layer=prt.get("link_layer"), state=prt.get("state"), phys_state=prt.get("phys_state"),
        rate_gbps=prt.get("rate_gbps"), netdev=prt.get("netdev"), mtu=prt.get("mtu"), kind=port_kind(dev, prt),
    )
    where = "%s: %s port %s" % (label, ep["device"], ep["port"])
    if ep["netdev"]:
        where += " (%s)" % ep["netdev"]
    problems = ep["problems"]
    if ep["state"] != "ACTIVE":
        problems.append("%s is %s, not ACTIVE" % (where, ep["state"] or "in an unknown state"))
    if ep["phys_state"] not in (None, "LinkUp"):
        problems.append("%s physical state is %s, not LinkUp" % (where, ep["phys_state"]))
    # (iWARP connects through rdma_cm (perftest -R) to the data IP: no GID index to find)
    if ep["kind"] == "roce":
        index = prt.get("roce_v2_ipv4_gid_index")
        if index is None:
            problems.append("%s has no RoCE v2 IPv4 GID (roce_v2_ipv4_gid_index is null): give %s an IPv4 address"
                            % (where, ep["netdev"] or "its netdev"))
        else:
            gid = _gid_entry(prt, index)
            if gid is None:
                problems.append("%s: roce_v2_ipv4_gid_index %s is not in the GID table" % (where, index))
            elif gid.get("type") != "RoCE v2" or gid.get("ip_version") != 4:
                problems.append("%s: GID %s is %s IPv%s, not RoCE v2 IPv4"
                                % (where, index, gid.get("type"), gid.get("ip_version")))
            else:
                ep["gid_index"] = index
                ep["gid"] = gid.get("gid")
                if not ep["ip"]:
                    ep["ip"] = gid.get("ip")
    elif ep["kind"] is None:
        problems.append("%s link layer is %s" % (where, ep["link_layer"] or "unknown"))
    if not ep["ip"] and not problems:
        problems.append("%s has no data IP: set rdma_validate_data_ip for this host" % where)
    ep["ok"] = not problems
    return ep


def ring_order(hosts, switch_of=None):
    """Hosts in ring order: as given, or grouped by switch (switches in order of their first host)."""
    hosts = list(hosts)
    if not switch_of or not any(switch_of.get(h) for h in hosts):
        return hosts
    groups = {}
    for host in hosts:
        groups.setdefault(switch_of.get(host) or "", []).append(host)
    return [h for members in groups.values() for h in members]


def make_pairs(hosts, topology, neighbours=1, switch_of=None):
    """(server, client) pairs; see :func:`validation_plan`.

    ``ring``: each host with its next ``neighbours`` hosts in ring order (two hosts make one pair),
    plus, when ``switch_of`` names the hosts' switches, one pair per switch from its middle host to
    the middle host of the next switch (two switches: one such pair). ``all_pairs``: every pair.
    The number of pairs grows linearly with the hosts except for ``all_pairs``.
    """
    if topology not in TOPOLOGIES:
        raise ValidateError("topology: unknown %r; allowed: %s" % (topology, ", ".join(TOPOLOGIES)))
    if isinstance(neighbours, bool) or not isinstance(neighbours, int) or neighbours < 1:
        raise ValidateError("neighbours: %r is out of range; allowed: an integer >= 1" % (neighbours,))
    hosts = list(hosts)
    if len(hosts) < 2:
        return []
    if topology == "all_pairs":
        return list(itertools.combinations(hosts, 2))
    order = ring_order(hosts, switch_of)
    n = len(order)
    pairs = []
    seen = set()

    def add(a, b):
        key = frozenset((a, b))
        if a != b and key not in seen:
            seen.add(key)
            pairs.append((a, b))

    for step in range(1, min(neighbours, n - 1) + 1):
        for i in range(n):
            add(order[i], order[(i + step) % n])
    if switch_of:
        groups = {}
        for host in order:
            if switch_of.get(host):
                groups.setdefault(switch_of[host], []).append(host)
        names = list(groups)
        if len(names) >= 2:
            for i, name in enumerate(names if len(names) > 2 else names[:1]):
                here, there = groups[name], groups[names[(i + 1) % len(names)]]
                add(here[len(here) // 2], there[len(there) // 2])
    return pairs


def schedule_waves(runs, concurrency=0):
    """Waves of runs: no host in two runs of a wave, at most ``concurrency`` runs per wave (0: no limit).

    Returns ``[{"runs": [run indices], "servers": {host: run index}, "clients": {host: run index}}]``;
    every run is in exactly one wave, in the order of the runs (first fit).
    """
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 0:
        raise ValidateError("concurrency: %r is out of range; allowed: an integer >= 0 (0: no limit)" % (concurrency,))
    waves = []
    busy = []
    first_open = 0
    for index, run in enumerate(runs):
        server, client = run["server"]["host"], run["client"]["host"]
        w = first_open
        while w < len(waves) and ((concurrency and len(waves[w]["runs"]) >= concurrency)
                                  or server in busy[w] or client in busy[w]):
            w += 1
        if w == len(waves):
            waves.append({"runs": [], "servers": {}, "clients": {}})
            busy.append(set())
        waves[w]["runs"].append(index)
        waves[w]["servers"][server] = index
        waves[w]["clients"][client] = index
        busy[w].update((server, client))
        while first_open < len(waves) and concurrency and len(waves[first_open]["runs"]) >= concurrency:
            first_open += 1
    return waves


def check_host_vars(host, values):
    """Errors in one host's rdma_validate_{device,port,data_ip,switch} (``values`` keyed by those suffixes)."""
    errors = []
    device = values.get("device")
    if device not in (None, ""):
        try:
            check_name("device", device)  # perftest's rule: the name goes to its -d
        except PerftestError:
            errors.append("rdma_validate_device of host %s: %r is not allowed; allowed: an RDMA device name such as "
                          "mlx5_0 (letters, digits and _ . : -), or empty" % (host, device))
    port = values.get("port")
    if port is not None and port != "":
        try:
            number = int(port)
            if isinstance(port, bool) or isinstance(port, float) or number < 0 or number > 255:
                raise ValueError(port)
        except (TypeError, ValueError):
            errors.append("rdma_validate_port of host %s: %r is not allowed; allowed: a port number 1-255, or 0 to "
                          "choose one" % (host, port))
    data_ip = values.get("data_ip")
    if data_ip not in (None, ""):
        try:
            # (an IPv6 scope id takes any text, a line break included: no space or control character at all)
            if not isinstance(data_ip, str) or any(c.isspace() or ord(c) < 32 for c in data_ip):
                raise ValueError(data_ip)
            ipaddress.ip_address(data_ip)
        except ValueError:
            errors.append("rdma_validate_data_ip of host %s: %r is not allowed; allowed: an IPv4 or IPv6 address, or "
                          "empty" % (host, data_ip))
    switch = values.get("switch")
    if switch is not None and (not isinstance(switch, (str, int)) or isinstance(switch, bool)
                               or (isinstance(switch, str) and ("\n" in switch or "\x00" in switch))):
        errors.append("rdma_validate_switch of host %s: %r is not allowed; allowed: the name of the switch (leaf, or "
                      "rail switch) its tested port is cabled to" % (host, switch))
    return errors


def _fmt(value, unit=""):
    return "unknown" if value is None else "%s%s" % (value, unit)


def pair_problems(server, client):
    """Pre-check of one pair: each end's problems, then link layer, MTU, GID/IP agreement."""
    problems = list(server.get("problems") or []) + list(client.get("problems") or [])
    s, c = server, client
    if s.get("device") and c.get("device"):
        if s.get("link_layer") and c.get("link_layer") and s["link_layer"] != c["link_layer"]:
            problems.append("link layer mismatch: %s %s port %s is %s, %s %s port %s is %s" % (
                s["host"], s["device"], s["port"], s["link_layer"], c["host"], c["device"], c["port"], c["link_layer"]))
        if s.get("mtu") is not None and c.get("mtu") is not None and s["mtu"] != c["mtu"]:
            problems.append("MTU mismatch: %s %s has MTU %s, %s %s has MTU %s" % (
                s["host"], s.get("netdev") or s["device"], s["mtu"], c["host"], c.get("netdev") or c["device"], c["mtu"]))
        if s.get("ip") and s.get("ip") == c.get("ip"):
            problems.append("%s and %s both use data IP %s" % (s["host"], c["host"], s["ip"]))
        if s.get("gid") and s.get("gid") == c.get("gid"):
            problems.append("%s and %s have the same GID %s" % (s["host"], c["host"], s["gid"]))
    return problems


def thresholds(server, client, min_bw_fraction, min_bw_fraction_soft, min_bw_gbps=None,
               max_latency_us=None, max_latency_us_soft=None):
    """Minimum bandwidth (fraction of the slower port's rate) and maximum latency for a pair."""
    soft = bool(server.get("soft") or client.get("soft"))
    rates = [server.get("rate_gbps"), client.get("rate_gbps")]
    rate = min(rates) if all(isinstance(r, (int, float)) for r in rates) else None
    fraction = min_bw_fraction_soft if soft else min_bw_fraction
    floor = None
    if rate is not None and fraction is not None:
        floor = round(rate * float(fraction), 4)
    if min_bw_gbps is not None:
        floor = max(floor or 0.0, float(min_bw_gbps))
    lat = max_latency_us_soft if soft else max_latency_us
    return {
        "soft": soft, "rate_gbps": rate, "fraction": fraction,
        "min_bandwidth_gbps": floor, "max_latency_us": float(lat) if lat is not None else None,
    }


def _entry(test, server, client, **kw):
    entry = {
        "test": test,
        "hosts": [server.get("host"), client.get("host")],
        "server": server.get("host"), "client": client.get("host"),
        "devices": [server.get("device"), client.get("device")],
        "ports": [server.get("port"), client.get("port")],
        "gid_indices": [server.get("gid_index"), client.get("gid_index")],
        "server_ip": server.get("ip"), "tcp_port": None,
        "bandwidth_gbps": None, "latency_us": None,
        "min_bandwidth_gbps": None, "max_latency_us": None,
        "passed": False, "message": "", "elapsed_s": None,
    }
    entry.update(kw)
    return entry


def check_options(tests=DEFAULT_TESTS, base_port=18515, min_bw_fraction=0.5, min_bw_fraction_soft=0.001,
                  min_bw_gbps=None, max_latency_us=None, max_latency_us_soft=None, lat_iterations=1000,
                  lat_iterations_soft=100, bw_iterations=5000, bw_iterations_soft=300, bw_size=65536, rping_count=10,
                  topology="ring", neighbours=1, concurrency=0, timeout=60, connect_retries=10, results_dir=""):
    """Raise :class:`ValidateError` naming the first bad option and the allowed values.

    ``timeout``, ``connect_retries`` (the perftest sides) and ``results_dir`` (where
    validation.json goes) are not used by the plan; they are checked here so that every
    option is checked before the role changes anything.
    """
    tests = list(tests or [])
    for test in tests:
        if test not in TESTS:
            raise ValidateError("tests: unknown test %r; allowed: %s" % (test, ", ".join(TESTS)))
    if len(set(tests)) != len(tests):
        raise ValidateError("tests: %s lists a test twice" % ", ".join(tests))
    if topology not in TOPOLOGIES:
        raise ValidateError("topology: unknown %r; allowed: %s" % (topology, ", ".join(TOPOLOGIES)))
    ints = (("base_port", base_port, 1024, 65535), ("lat_iterations", lat_iterations, 5, 100000000),
            ("lat_iterations_soft", lat_iterations_soft, 5, 100000000), ("bw_iterations", bw_iterations, 5, 100000000),
            ("bw_iterations_soft", bw_iterations_soft, 5, 100000000),
            ("bw_size", bw_size, 1, 1 << 30), ("rping_count", rping_count, 1, 1000000),
            ("neighbours", neighbours, 1, 1000), ("concurrency", concurrency, 0, 1000000),
            ("timeout", timeout, 1, 86400), ("connect_retries", connect_retries, 0, 1000))
    for name, value, low, high in ints:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise ValidateError("%s: %r is out of range; allowed: an integer %d-%d" % (name, value, low, high))
    try:
        check_folder(results_dir, "results_dir", empty_ok=True)
    except ValueError as e:
        raise ValidateError(str(e))
    for name, value in (("min_bw_fraction", min_bw_fraction), ("min_bw_fraction_soft", min_bw_fraction_soft)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 <= value <= 1:
            raise ValidateError("%s: %r is out of range; allowed: 0.0-1.0" % (name, value))
    for name, value in (("min_bw_gbps", min_bw_gbps), ("max_latency_us", max_latency_us),
                        ("max_latency_us_soft", max_latency_us_soft)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValidateError("%s: %r is not allowed; allowed: a finite number >= 0 (0 or null: no limit)" % (name, value))


def reachable_split(hosts, reachable=None):
    """``(kept, left_out)``: the hosts, in order, that this run can reach, and the others.

    ``reachable``: the hosts the run may touch (its --limit; None: every host). A slice of a sliced
    job (AWX job slicing, a run with --limit) reaches only its own hosts: a host of another slice is
    left out of its plan, never paired, pre-checked or failed there; the fleet job pairs the hosts
    across slices.
    """
    if reachable is None:
        return list(hosts), []
    reach = set(reachable)
    return [h for h in hosts if h in reach], [h for h in hosts if h not in reach]


def validation_plan(endpoints, hosts, topology="ring", tests=DEFAULT_TESTS, base_port=18515, min_bw_fraction=0.5,
                    min_bw_fraction_soft=0.001, min_bw_gbps=None, max_latency_us=None, max_latency_us_soft=None,
                    lat_iterations=1000, lat_iterations_soft=100, bw_iterations=5000, bw_iterations_soft=300, bw_size=65536,
                    rping_count=10, neighbours=1, switch_of=None, concurrency=0, reachable=None):
    """Pairs, pre-check results and the runs for the hosts of a play.

    ``endpoints`` maps host -> ``select_endpoint`` output; a host of ``hosts``
    without one was unreachable or failed earlier and fails its pairs' pre-check.
    ``reachable`` (None: all): the hosts this run can reach; the others are left
    out before pairing (:func:`reachable_split`) and listed in ``left_out``.
    Returns ``{pairs, runs, results, problems, waves, left_out}``: ``results`` already holds a
    ``precheck`` entry per pair and a failed entry for every test of a pair
    that failed its pre-check; ``runs`` holds one run per pair that passed,
    with the ``tests`` to execute in order (the rdma.fabric.perftest module's
    ``tests`` entries: each with its own TCP port, thresholds, and size:
    ``bw_iterations`` of ``bw_size`` bytes for bandwidth, ``lat_iterations``
    for latency, the ``*_soft`` counts when an end is a soft device, whose
    round trips take milliseconds under emulation, ``rping_count`` for rping).
    Iterations, not perftest's duration mode: under emulation ``-D`` can
    report 0 Gb/s for a run that moved data (seen on the lab's TCG VMs).

    Pairs: :func:`make_pairs` (``neighbours`` per host in a ring, one more pair per switch when
    ``switch_of`` maps hosts to switches, or all pairs). The runs are grouped into ``waves``
    (:func:`schedule_waves`: no host twice in a wave, at most ``concurrency`` runs in one).
    """
    endpoints = endpoints or {}
    tests = list(tests or [])
    check_options(tests=tests, base_port=base_port, min_bw_fraction=min_bw_fraction,
                  min_bw_fraction_soft=min_bw_fraction_soft, min_bw_gbps=min_bw_gbps, max_latency_us=max_latency_us,
                  max_latency_us_soft=max_latency_us_soft, lat_iterations=lat_iterations,
                  lat_iterations_soft=lat_iterations_soft, bw_iterations=bw_iterations,
                  bw_iterations_soft=bw_iterations_soft, bw_size=bw_size, rping_count=rping_count, topology=topology,
                  neighbours=neighbours, concurrency=concurrency)
    hosts, left_out = reachable_split(hosts or [], reachable)
    out = {"pairs": [], "runs": [], "results": [], "problems": [], "waves": [], "left_out": left_out}
    if len(hosts) < 2:
        out["problems"].append("need at least two hosts to validate the fabric, got %d (%s)"
                               % (len(hosts), ", ".join(hosts) or "none"))
    port = base_port
    for server_host, client_host in make_pairs(hosts, topology, neighbours=neighbours, switch_of=switch_of):
        server = endpoints.get(server_host) or {
            "host": server_host, "problems": ["%s: unreachable or failed before validation" % server_host]}
        client = endpoints.get(client_host) or {
            "host": client_host, "problems": ["%s: unreachable or failed before validation" % client_host]}
        problems = pair_problems(server, client)
        limits = thresholds(server, client, min_bw_fraction, min_bw_fraction_soft, min_bw_gbps,
                            max_latency_us, max_latency_us_soft)
        pair = {"server": server_host, "client": client_host, "problems": problems, "ok": not problems,
                "thresholds": limits}
        out["pairs"].append(pair)
        if problems:
            msg = "pre-check failed: " + "; ".join(problems)
        else:
            msg = "pre-check ok: %s %s port %s and %s %s port %s ACTIVE, %s, MTU %s/%s, GID index %s/%s" % (
                server_host, server.get("device"), server.get("port"), client_host, client.get("device"),
                client.get("port"), server.get("link_layer"), _fmt(server.get("mtu")), _fmt(client.get("mtu")),
                _fmt(server.get("gid_index")), _fmt(client.get("gid_index")))
        out["results"].append(_entry(PRECHECK, server, client, passed=not problems, message=msg))
        if problems:
            for test in tests:
                out["results"].append(_entry(test, server, client, passed=False,
                                             message="not run: pre-check failed: " + "; ".join(problems)))
            continue
        specs = []
        for test in tests:
            if port + 1 > 65535:
                port = base_port
            spec = {"test": test, "tcp_port": port, "size": None, "iterations": None, "duration": None,
                    "count": None, "min_bandwidth_gbps": None, "max_latency_us": None}
            if test.endswith("_bw"):
                spec.update(iterations=bw_iterations_soft if limits["soft"] else bw_iterations, size=bw_size,
                            min_bandwidth_gbps=limits["min_bandwidth_gbps"])
            elif test.endswith("_lat"):
                spec.update(iterations=lat_iterations_soft if limits["soft"] else lat_iterations,
                            max_latency_us=limits["max_latency_us"])
            else:
                spec.update(count=rping_count)
            specs.append(spec)
            port += 1
        if specs:
            out["runs"].append({
                "id": "%s-%s" % (server_host, client_host), "server": server, "client": client,
                "tests": specs, "thresholds": limits,
            })
    out["waves"] = schedule_waves(out["runs"], concurrency)
    return out


def _res_msg(res):
    if not isinstance(res, dict):
        return None
    return res.get("message") or res.get("msg")


def _by_test(res):
    out = {}
    if isinstance(res, dict):
        for item in res.get("results") or []:
            if isinstance(item, dict) and item.get("test"):
                out[item["test"]] = item
    return out


def run_result(run, client=None, server_start=None, server=None, check_mode=False):
    """Result entries (one per test of the run) from the registered task results.

    ``client`` is the perftest client task result, ``server_start`` the
    (async) server start result and ``server`` its async_status result; each
    may be missing, skipped, unreachable or failed.
    """
    s_ep, c_ep = run["server"], run["client"]
    entries = []
    start = server_start if isinstance(server_start, dict) else {}
    srv = server if isinstance(server, dict) else {}
    cli = client if isinstance(client, dict) else {}
    srv_tests, cli_tests = _by_test(srv), _by_test(cli)
    for spec in run["tests"]:
        test = spec["test"]
        entry = _entry(test, s_ep, c_ep, tcp_port=spec.get("tcp_port"),
                       min_bandwidth_gbps=spec.get("min_bandwidth_gbps"), max_latency_us=spec.get("max_latency_us"))
        entries.append(entry)
        if check_mode:
            entry.update(passed=None, message="not run in check mode")
            continue
        if start.get("unreachable"):
            entry["message"] = "server %s unreachable: %s" % (s_ep.get("host"), _res_msg(start) or "no connection")
            continue
        if start.get("failed"):
            entry["message"] = "server %s failed to start: %s" % (s_ep.get("host"), _res_msg(start) or "unknown error")
            continue
        notes = []
        if srv.get("unreachable"):
            notes.append("server %s became unreachable" % s_ep.get("host"))
        elif srv and not srv.get("finished") and not srv.get("skipped"):
            notes.append("server %s did not finish in time" % s_ep.get("host"))
        elif test in srv_tests and srv_tests[test].get("passed") is False:
            notes.append("server: " + (_res_msg(srv_tests[test]) or "failed"))
        elif srv.get("finished") and srv.get("failed") and not srv_tests:
            notes.append("server: " + (_res_msg(srv) or "failed"))
        mine = cli_tests.get(test)
        if not cli or cli.get("skipped"):
            entry["message"] = "client %s did not run" % c_ep.get("host")
        elif cli.get("unreachable"):
            entry["message"] = "client %s unreachable: %s" % (c_ep.get("host"), _res_msg(cli) or "no connection")
        elif mine is None:
            entry["message"] = "client %s failed: %s" % (c_ep.get("host"), _res_msg(cli) or "no result for this test")
        else:
            entry.update(
                passed=mine.get("passed") is True, bandwidth_gbps=mine.get("bandwidth_gbps"),
                latency_us=mine.get("latency_us"), elapsed_s=mine.get("elapsed_s"), message=_res_msg(mine) or "",
            )
        if notes and not entry["passed"]:
            entry["message"] = "%s (%s)" % (entry["message"], "; ".join(notes))
    return entries


def collect_results(plan, done_by_host):
    """Result entries of every run of a plan, in run order, from what each host kept of its runs.

    ``done_by_host``: ``{host: {run id: {"client": result}}}`` for a run's client and
    ``{"server_start": result, "server": async result}`` for its server (the role's per-host record
    of the waves it took part in; a reference host's side is in its partner's record, see
    ``wave_sides``). A run nobody recorded (its wave never ran) reads "did not run".
    """
    entries = []
    for run in plan.get("runs") or []:
        # A side run for a reference host (wave_sides) is kept by the pair's other host.
        kept = {}
        for host in (run["server"]["host"], run["client"]["host"]):
            kept.update((done_by_host.get(host) or {}).get(run["id"]) or {})
        server = client = kept
        entries.extend(run_result(run, client=client.get("client"), server_start=server.get("server_start"),
                                  server=server.get("server")))
    return entries


def wave_sides(plan, wave, host, reference_hosts=()):
    """The sides of wave ``wave`` that ``host`` runs: its own, and its partner's when that is a reference host.

    Reference hosts are outside the play (a staged rollout tests a batch against a host of an
    earlier batch): their side of a pair runs by delegation from the pair's other host, which is in
    the play and, a host being in at most one pair per wave, has no side of its own to run then.
    Returns ``server``/``client``: ``{"run": index, "host": the host the side runs on}`` or None,
    and ``peer_start``: the host whose record holds the server start of ``host``'s client run.
    """
    refs = set(reference_hosts or ())
    w = plan["waves"][int(wave)]
    runs = plan["runs"]
    out = {"server": None, "client": None, "peer_start": None}
    for side, other in (("server", "client"), ("client", "server")):
        slots = w["%ss" % side]
        if host in slots:
            out[side] = {"run": slots[host], "host": host}
            continue
        for ref in sorted(refs & set(slots)):
            if runs[slots[ref]][other]["host"] == host:
                out[side] = {"run": slots[ref], "host": ref}
    if out["client"] is not None:
        srv = runs[out["client"]["run"]]["server"]["host"]
        out["peer_start"] = runs[out["client"]["run"]]["client"]["host"] if srv in refs else srv
        if out["client"]["host"] != host:
            out["peer_start"] = host
    return out


def summarize(results):
    """Counts per test and overall (pre-checks included)."""
    summary = {"total": 0, "passed": 0, "failed": 0, "not_run": 0, "by_test": {}}
    for r in results or []:
        if not isinstance(r, dict):
            continue
        test = r.get("test") or "unknown"
        bucket = summary["by_test"].setdefault(test, {"total": 0, "passed": 0, "failed": 0, "not_run": 0})
        key = "passed" if r.get("passed") is True else ("not_run" if r.get("passed") is None else "failed")
        for target in (summary, bucket):
            target["total"] += 1
            target[key] += 1
    summary["ok"] = summary["failed"] == 0 and summary["total"] > 0
    return summary
