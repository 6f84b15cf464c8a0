# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA traffic tests: command lines for, and parsers of, perftest and rping.

perftest (``ib_write_bw``, ``ib_send_lat``, ...; linux-rdma/perftest) prints a
parameter block (``Device : mlx5_0``, ``GID index : 3`` ...), a results header
and one result row per message size::

     #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]
     65536      5000             2.31               2.29                 0.004375

     #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec]
     2       1000          6.88           16.81        7.04              7.06         0.31      7.38        16.81

Units: ``--report_gbits`` prints Gbit/s (10^9 bit); without it perftest prints
MB/sec where MB is 2^20 bytes (perftest's ``format_factor`` 0x100000). Latency
tests run with ``-D`` (duration) print only ``t_avg[usec]``. Warnings such as
``Conflicting CPU frequency values detected`` may sit between the header and
the rows and are skipped.

rping (rdmacm-utils) with ``-v`` prints ``ping data: rdma-ping-N: ...`` once
per completed ping on the client (``server ping data: ...`` on the server).

Everything here is pure (no I/O) so that it can be unit-tested on captured
output and shared by the ``perftest`` module and the ``perftest_parse`` filter.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import math
import re
import time

BW_TESTS = ("ib_write_bw", "ib_read_bw", "ib_send_bw")
LAT_TESTS = ("ib_write_lat", "ib_read_lat", "ib_send_lat")
PERFTEST_TESTS = BW_TESTS + LAT_TESTS
TESTS = PERFTEST_TESTS + ("rping",)
MODES = ("server", "client")

# perftest: bytes per "MB" in MB/sec reports, bits per Gbit.
MB_BYTES = 1048576
GBIT = 1e9

# Names handed to tools: ibdev names such as mlx5_0, rxe0, siw_eth1, mlx5_bond_0.
# The anchored ones are used with re.fullmatch ("$" would let a trailing newline through).
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
_SEPARATOR_RE = re.compile(r"\s*-{10,}\s*")
_NUMBER_RE = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|-?inf"
_ROW_RE = re.compile(r"\s*(\d+)\s+(\d+)((?:\s+(?:%s))+)\s*" % _NUMBER_RE, re.IGNORECASE)
_LAT_COL_RE = re.compile(r"#bytes|#iterations|t_[a-z]+\[usec\]|[\d.]+% percentile\[usec\]|tps average")
_BW_HEADER_RE = re.compile(r"BW average\[(Gb/sec|MB/sec)\]")
_INFO_RE = re.compile(r"([A-Za-z][A-Za-z0-9 .*/()_-]*?)\s*:\s*([^\t]*?)\s*(?:\t+|\Z)")
_TITLE_RE = re.compile(r"\s*(.+?(?:BW|Lat(?:ency)?) Test)\s*", re.IGNORECASE)

# Lines that are warnings, not failures.
_WARNING_RE = re.compile(
    r"Conflicting CPU frequency values|CPU Frequency is not max|Test results may be inaccurate|"
    r"cpufreq_ondemand|^\s*Warning", re.IGNORECASE)
# Lines that report a failure (perftest, rping, libibverbs, librdmacm).
_ERROR_RE = re.compile(
    r"couldn'?t|could not|unable to|failed|failure|error|not found|cannot|can'?t|"
    r"no such|refused|timed out|timeout|mismatch|rejected|unreachable|invalid|"
    r"syndrom|incompatib|wait for \w+ state|usage:", re.IGNORECASE)
# Failures that mean "the server is not listening yet": worth a retry.
_CONNECT_RE = re.compile(
    r"couldn'?t connect|connection refused|unable to (?:init|open) the socket connection|"
    r"unable to open file descriptor for socket connection|rdma_connect|"
    r"RDMA_CM_EVENT_(?:REJECTED|UNREACHABLE|CONNECT_ERROR|ADDR_ERROR|ROUTE_ERROR)|"
    r"connect error|wait for CONNECTED state", re.IGNORECASE)
_RPING_DATA_RE = re.compile(r"^\s*(server )?ping data:", re.IGNORECASE)

_LAT_KEYS = {
    "#bytes": "bytes",
    "#iterations": "iterations",
    "t_min[usec]": "t_min_us",
    "t_max[usec]": "t_max_us",
    "t_typical[usec]": "t_typical_us",
    "t_avg[usec]": "t_avg_us",
    "t_stdev[usec]": "t_stdev_us",
    "99% percentile[usec]": "p99_us",
    "99.9% percentile[usec]": "p99_9_us",
    "tps average": "tps_average",
}


class PerftestError(ValueError):
    """Bad input for a test command line (names the parameter and what is allowed)."""


def test_kind(test):
    """'bw', 'lat' or 'ping' for a test name; PerftestError when unknown."""
    if test in BW_TESTS:
        return "bw"
    if test in LAT_TESTS:
        return "lat"
    if test == "rping":
        return "ping"
    raise PerftestError("test: unknown test %r; allowed: %s" % (test, ", ".join(TESTS)))


def _check_int(name, value, low, high, required=False):
    if value is None:
        if required:
            raise PerftestError("%s: required" % name)
        return None
    if isinstance(value, bool):
        raise PerftestError("%s: %r is not an integer; allowed: %d-%d" % (name, value, low, high))
    try:
        ivalue = int(value)
    except (TypeError, ValueError):
        raise PerftestError("%s: %r is not an integer; allowed: %d-%d" % (name, value, low, high))
    if ivalue != value and str(ivalue) != str(value):
        raise PerftestError("%s: %r is not an integer; allowed: %d-%d" % (name, value, low, high))
    if not low <= ivalue <= high:
        raise PerftestError("%s: %d is out of range; allowed: %d-%d" % (name, ivalue, low, high))
    return ivalue


def check_name(name, value):
    """An RDMA device name safe to hand to a tool (no option or shell syntax)."""
    if not isinstance(value, str) or not _NAME_RE.fullmatch(value):
        raise PerftestError(
            "%s: %r is not a valid RDMA device name; allowed: letters, digits and _ . : -, "
            "starting with a letter or digit, at most 64 characters" % (name, value))
    return value


def check_threshold(name, value):
    """A pass/fail threshold: None (no check) or a finite number >= 0.

    NaN would disable the check (every comparison with it is false) and
    infinity would fail or pass every run: both are refused.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PerftestError("%s: %r is not allowed; allowed: a finite number, 0 or more (or leave it unset for no check)"
                            % (name, value))
    return value


def check_ip(name, value):
    """A literal IPv4/IPv6 address (no host names: tests must hit the data IP)."""
    try:
        return str(ipaddress.ip_address(str(value)))
    except ValueError:
        raise PerftestError("%s: %r is not an IPv4 or IPv6 address" % (name, value))


def build_argv(test, mode, device=None, ib_port=1, gid_index=None, tcp_port=18515,
               server_ip=None, size=None, iterations=None, duration=None,
               report_gbits=True, count=10, binary=None, rdma_cm=False):
    """argv list for one side of a test; validates every value first.

    perftest: ``<test> -d DEV -i PORT [-x GID] [-R] -p TCP -F [--report_gbits]
    [-s SIZE] [-D SECS | -n ITERS] [SERVER_IP]``. rping: ``rping -s|-c -a IP
    -p TCP -C COUNT -v [-S SIZE]`` (the server binds to ``server_ip``).
    ``rdma_cm``: perftest connects the QPs through rdma_cm (``-R``), which
    iWARP devices require (rping always does); no GID index is passed then.
    """
    kind = test_kind(test)
    if mode not in MODES:
        raise PerftestError("mode: unknown mode %r; allowed: %s" % (mode, ", ".join(MODES)))
    tcp_port = _check_int("tcp_port", tcp_port, 1024, 65535, required=True)
    size = _check_int("size", size, 1, 1 << 30)
    binary = binary or test
    if kind == "ping":
        if server_ip is None:
            raise PerftestError("server_ip: required for rping (the server binds to it, the client connects to it)")
        ip = check_ip("server_ip", server_ip)
        count = _check_int("count", count, 1, 1000000, required=True)
        argv = [binary, "-s" if mode == "server" else "-c", "-a", ip, "-p", str(tcp_port), "-C", str(count), "-v"]
        if size is not None:
            argv += ["-S", str(max(size, 16))]
        return argv
    check_name("device", device)
    ib_port = _check_int("ib_port", ib_port, 1, 255, required=True)
    gid_index = _check_int("gid_index", gid_index, 0, 65535)
    iterations = _check_int("iterations", iterations, 5, 100000000)
    duration = _check_int("duration", duration, 1, 86400)
    if iterations is not None and duration is not None:
        raise PerftestError("iterations, duration: mutually exclusive; give one of them")
    argv = [binary, "-d", device, "-i", str(ib_port)]
    if rdma_cm:
        argv.append("-R")
    elif gid_index is not None:
        argv += ["-x", str(gid_index)]
    argv += ["-p", str(tcp_port), "-F"]
    if kind == "bw" and report_gbits:
        argv.append("--report_gbits")
    if size is not None:
        argv += ["-s", str(size)]
    if duration is not None:
        argv += ["-D", str(duration)]
    elif iterations is not None:
        argv += ["-n", str(iterations)]
    if mode == "client":
        if server_ip is None:
            raise PerftestError("server_ip: required in client mode")
        argv.append(check_ip("server_ip", server_ip))
    return argv


def _to_number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    if math.isnan(value) or math.isinf(value):
        return None
    return value


def _info_key(label):
    return re.sub(r"[^a-z0-9]+", "_", label.strip().lower()).strip("_")


def _parse_info(lines):
    """The ``Key : value`` parameter block (two pairs per line, tab separated)."""
    info = {}
    for line in lines:
        if ":" not in line or _SEPARATOR_RE.fullmatch(line):
            continue
        stripped = line.strip()
        # "local address: LID ..." / "GID: 00:00..." lines are QP details, not parameters
        if stripped.startswith(("local address", "remote address", "GID:")):
            continue
        for label, value in _INFO_RE.findall(stripped):
            key = _info_key(label)
            if key and key not in info:
                info[key] = value.strip()
    typed = {}
    for key in ("gid_index", "number_of_qps", "tx_depth", "cq_moderation"):
        if key in info:
            match = re.match(r"^(\d+)", info[key])
            typed[key] = int(match.group(1)) if match else None
    if "mtu" in info:
        match = re.match(r"^(\d+)", info["mtu"])
        typed["mtu"] = int(match.group(1)) if match else None
    info.update(typed)
    return info


def _collect_messages(lines):
    warnings, errors = [], []
    for line in lines:
        text = line.strip()
        if not text or _SEPARATOR_RE.fullmatch(text):
            continue
        if _WARNING_RE.search(text):
            warnings.append(text)
        elif _ERROR_RE.search(text) and not _RPING_DATA_RE.match(text):
            errors.append(text)
    return warnings, errors


def _lat_columns(header):
    cols = []
    for token in _LAT_COL_RE.findall(header):
        cols.append(_LAT_KEYS.get(token, _info_key(token)))
    return cols


def parse_perftest(text):
    """Parse perftest output (either side). Pure; never raises on odd text.

    Returns ``kind`` (bw/lat/None), ``title``, ``info`` (parameter block,
    snake_case keys), ``unit``, ``rows`` (one dict per message size),
    ``bandwidth_gbps`` (BW average of the last row, in Gbit/s),
    ``bandwidth_peak_gbps``, ``msg_rate_mpps``, ``latency_us`` (t_typical,
    i.e. the median, else t_avg), ``latency`` (the last row's statistics),
    ``warnings`` and ``errors`` (lines), ``tail`` (the last two lines printed,
    rules left out: what a failure without a result shows).
    """
    text = text or ""
    lines = text.splitlines()
    result = {
        "kind": None, "title": None, "info": {}, "unit": None, "rows": [],
        "bandwidth_gbps": None, "bandwidth_peak_gbps": None, "msg_rate_mpps": None,
        "latency_us": None, "latency": None, "warnings": [], "errors": [],
    }
    header_at = None
    lat_cols = None
    for i, line in enumerate(lines):
        match = _BW_HEADER_RE.search(line)
        if match and "#bytes" in line:
            result["kind"] = "bw"
            result["unit"] = match.group(1)
            header_at = i
        elif "#bytes" in line and "[usec]" in line:
            result["kind"] = "lat"
            result["unit"] = "usec"
            lat_cols = _lat_columns(line)
            header_at = i
        elif result["title"] is None:
            title = _TITLE_RE.fullmatch(line)
            if title and "#" not in line:
                result["title"] = title.group(1).strip()
    info_lines = lines[:header_at] if header_at is not None else lines
    result["info"] = _parse_info(info_lines)
    body = lines[header_at + 1:] if header_at is not None else []
    other = []
    for line in body:
        row = _ROW_RE.fullmatch(line)
        if not row:
            other.append(line)
            continue
        values = [int(row.group(1)), int(row.group(2))] + [_to_number(v) for v in row.group(3).split()]
        if result["kind"] == "bw" and len(values) >= 5:
            result["rows"].append({
                "bytes": values[0], "iterations": values[1],
                "bw_peak": values[2], "bw_average": values[3], "msg_rate_mpps": values[4],
            })
        elif result["kind"] == "lat" and lat_cols and len(values) >= 3:
            result["rows"].append(dict(zip(lat_cols, values)))
        else:
            other.append(line)
    warnings, errors = _collect_messages(info_lines + other)
    result["warnings"], result["errors"] = warnings, errors
    # What the tool printed last: a failure without a result or an error line names it.
    result["tail"] = [line.strip() for line in lines if line.strip() and not set(line.strip()) <= set("-*")][-2:]
    if result["rows"]:
        last = result["rows"][-1]
        if result["kind"] == "bw":
            factor = 1.0 if result["unit"] == "Gb/sec" else MB_BYTES * 8 / GBIT
            avg, peak = last["bw_average"], last["bw_peak"]
            result["bandwidth_gbps"] = round(avg * factor, 4) if avg is not None else None
            result["bandwidth_peak_gbps"] = round(peak * factor, 4) if peak is not None else None
            result["msg_rate_mpps"] = last["msg_rate_mpps"]
        else:
            result["latency"] = dict(last)
            typical = last.get("t_typical_us")
            result["latency_us"] = typical if typical is not None else last.get("t_avg_us")
    return result


def parse_rping(text):
    """Parse rping -v output: ``pings`` (client lines ``ping data:``), errors."""
    text = text or ""
    lines = text.splitlines()
    client = [ln for ln in lines if _RPING_DATA_RE.match(ln) and not ln.strip().lower().startswith("server")]
    server = [ln for ln in lines if ln.strip().lower().startswith("server ping data:")]
    warnings, errors = _collect_messages(lines)
    return {
        "kind": "ping", "pings": len(client), "server_pings": len(server),
        "warnings": warnings, "errors": errors,
    }


def parse(test, text):
    """Dispatch on the test name (``rping`` or a perftest binary)."""
    kind = test_kind(test)
    if kind == "ping":
        return parse_rping(text)
    return parse_perftest(text)


def is_connect_failure(text):
    """True when output says the peer was not (yet) listening."""
    return bool(_CONNECT_RE.search(text or ""))


def evaluate(test, mode, parsed, rc, min_bandwidth_gbps=None, max_latency_us=None, count=None,
             timed_out=False, timeout=None):
    """Decide ``passed`` and a one-line ``message`` for one side of a test."""
    kind = test_kind(test)
    problems = []
    if timed_out:
        problems.append("timed out after %ss" % timeout if timeout else "timed out")
    elif rc not in (0, None):
        problems.append("exited with rc %s" % rc)
    errors = parsed.get("errors") or []
    if kind == "ping":
        if mode == "client" and count is not None and parsed.get("pings", 0) < count:
            problems.append("%d of %d pings completed" % (parsed.get("pings", 0), count))
        detail = "%d pings" % (parsed.get("pings") if mode == "client" else parsed.get("server_pings", 0))
    elif kind == "bw":
        bw = parsed.get("bandwidth_gbps")
        if bw is None:
            if mode == "client" or rc not in (0, None):
                problems.append("no bandwidth result in the output")
            detail = "no bandwidth figure"
        else:
            detail = "%.3f Gb/s" % bw
            if min_bandwidth_gbps is not None and bw < min_bandwidth_gbps:
                problems.append("bandwidth %.3f Gb/s below the threshold %.3f Gb/s" % (bw, min_bandwidth_gbps))
    else:
        lat = parsed.get("latency_us")
        if lat is None:
            if mode == "client" or rc not in (0, None):
                problems.append("no latency result in the output")
            detail = "no latency figure"
        else:
            detail = "%.2f us" % lat
            if max_latency_us is not None and lat > max_latency_us:
                problems.append("latency %.2f us above the threshold %.2f us" % (lat, max_latency_us))
    if problems and errors:
        problems.append("output: " + " | ".join(errors[-3:]))
    elif kind != "ping" and any(p.startswith("no ") and p.endswith(" result in the output") for p in problems):
        tail = parsed.get("tail") or []
        problems.append(("output ends: " + " | ".join(tail))[:300] if tail else "no output")
    passed = not problems
    if passed:
        message = "%s %s ok: %s" % (test, mode, detail)
    else:
        message = "%s %s failed: %s" % (test, mode, "; ".join(problems))
    return passed, message


def normalize_specs(params):
    """One spec per test from the module options (``test`` or ``tests``).

    ``tests`` entries override the top-level ``size``, ``iterations``,
    ``duration``, ``count``, ``min_bandwidth_gbps`` and ``max_latency_us``; an
    entry that sets ``iterations`` or ``duration`` ignores both top-level
    ones. Entry ``tcp_port`` defaults to ``tcp_port`` + its position.
    """
    keys = ("size", "iterations", "duration", "count", "min_bandwidth_gbps", "max_latency_us")
    if params.get("tests"):
        specs = []
        for i, entry in enumerate(params["tests"]):
            if not isinstance(entry, dict) or not entry.get("test"):
                raise PerftestError("tests[%d]: needs a test; allowed: %s" % (i, ", ".join(TESTS)))
            spec = dict((k, params.get(k)) for k in keys)
            if entry.get("iterations") is not None or entry.get("duration") is not None:
                spec["iterations"] = spec["duration"] = None
            for k in keys:
                if entry.get(k) is not None:
                    spec[k] = entry[k]
            spec["test"] = entry["test"]
            spec["tcp_port"] = entry.get("tcp_port") if entry.get("tcp_port") is not None else params["tcp_port"] + i
            specs.append(spec)
        ports = [s["tcp_port"] for s in specs]
        if len(set(ports)) != len(ports):
            raise PerftestError("tests: two tests use the same tcp_port (%s); give each its own" % ports)
        return specs
    spec = dict((k, params.get(k)) for k in keys)
    spec.update(test=params["test"], tcp_port=params["tcp_port"])
    return [spec]


def run_test(run_command, argv, timeout_bin, timeout, mode, retries=0, retry_delay=1.0, clock=None, sleep=None):
    """Run one side of one test, bounded by ``timeout`` seconds (coreutils timeout).

    A client retries while the output says the server is not listening yet,
    within the same time budget. Returns ``(rc, out, err, attempts,
    timed_out, elapsed)``. ``run_command(argv)`` returns ``(rc, out, err)``.
    """
    clock = clock or time.time
    sleep = sleep or time.sleep
    start = clock()
    deadline = start + timeout
    retries = retries if mode == "client" else 0
    attempts = 0
    while True:
        remaining = max(1, int(round(deadline - clock())))
        attempts += 1
        rc, out, err = run_command([timeout_bin, "--kill-after=5", str(remaining)] + list(argv))
        timed_out = rc in (124, 137)
        if rc == 0 or timed_out or retries <= 0:
            break
        if not is_connect_failure("%s\n%s" % (out, err)):
            break
        if clock() + retry_delay >= deadline:
            break
        retries -= 1
        sleep(retry_delay)
    return rc, out, err, attempts, timed_out, round(clock() - start, 3)
