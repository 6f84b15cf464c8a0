# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_validate workload stage: a real job's traffic, proven to go over RDMA.

Planned and judged here, on the controller; run by roles/rdma_validate/tasks/workload*.yml:

* an MPI allreduce across the hosts (Open MPI, ``pml=ucx``, one rank per host, mpi4py with numpy: the
  benchmark is roles/rdma_validate/files/mpi_allreduce.py), each rank started with its own host's UCX
  environment (``ucx_env`` restricted to the host's validation endpoint device), sizes from a few bytes
  to a few MiB;
* ``ucx_perftest`` ``tag_lat`` and ``tag_bw`` between the pairs of the validation plan;
* on GPU hosts where nccl-tests' ``all_reduce_perf`` is installed, the same allreduce through NCCL
  (``nccl_env`` of each host).

Proof that the traffic went over the RDMA device, both required for a pass:

* UCX's own transport report: with ``UCX_LOG_LEVEL=info`` UCX (1.13, as Debian 12 ships it) logs one
  ``ep_cfg[N]: tag(<transport>/<device>:<port> ...)`` line per endpoint configuration
  (``ucp_worker_print_used_tls`` in ``src/ucp/core/ucp_worker.c``); every configuration that reaches
  another host must use only verbs transports (``rc_verbs``, ``ud_verbs``, ``rc_mlx5``, ``ud_mlx5``,
  ``dc_mlx5``) on the host's endpoint device;
* the device's own counters (``ports/<n>/hw_counters`` and ``counters`` in sysfs, read before and
  after): sent and received packets rose on every host.

Result entries follow fabric_validate's shape (``test``, ``hosts``, ``server``, ``client``, ``devices``,
``bandwidth_gbps``, ``latency_us``, ``passed``, ``message`` ...) and add ``sizes`` (one row per message size:
``bytes``, ``time_us``, ``algbw_gbps``, ``busbw_gbps``), ``transports`` and ``counters`` (deltas per host).
Bus bandwidth follows nccl-tests' definition for allreduce: ``algbw * 2 * (n - 1) / n``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.perftest import MB_BYTES, GBIT, check_ip, check_name

ALLREDUCE_TAG = "RDMA_FABRIC_ALLREDUCE"
VERBS_TRANSPORTS = ("rc_verbs", "ud_verbs", "rc_mlx5", "ud_mlx5", "dc_mlx5")
LOCAL_TRANSPORTS = ("self", "posix", "sysv", "xpmem", "knem", "cma", "cuda_copy", "cuda_ipc", "gdr_copy",
                    "rocm_copy", "rocm_ipc")
UCX_PERFTESTS = ("tag_lat", "tag_bw")
# The result entries' tests: the allreduce runs (figures per message size in ``sizes``) and ucx_perftest's (a pair).
MPI_ALLREDUCE, NCCL_ALLREDUCE = "mpi_allreduce", "nccl_allreduce"
ALLREDUCE_TESTS = (MPI_ALLREDUCE, NCCL_ALLREDUCE)
PERFTEST_TESTS = tuple("ucx_" + t for t in UCX_PERFTESTS)
DEFAULT_SIZES = (8, 1024, 65536, 1048576, 4194304)
# Counters that count packets or data a port sent / received (rxe: hw_counters; others: counters).
TX_COUNTERS = ("sent_pkts", "port_xmit_packets", "port_xmit_data", "tx_packets", "tx_bytes")
RX_COUNTERS = ("rcvd_pkts", "port_rcv_packets", "port_rcv_data", "rx_packets", "rx_bytes")
_ENV_NAME_RE = re.compile(r"[A-Z][A-Z0-9_]*")
_ENV_VALUE_RE = re.compile(r"[A-Za-z0-9_.,:=^/@+-]*")
_EP_CFG_RE = re.compile(r"ep_cfg\[(\d+)\]:\s*(.*)")
_UCX_HOST_RE = re.compile(r"\[\d+\.\d+\]\s+\[([^:\]\s]+):(\d+)")
_LANE_RE = re.compile(r"(\w+)\(([^)]*)\)")
_RANK_RE = re.compile(r"^\[1,(\d+)\]<(?:stdout|stderr)>:")
_NUMBER_RE = re.compile(r"[-+]?\d+(?:\.\d+)?")
# a UCX log line: "[1732640000.123456] [host:1234:0]  file.c:123  UCX  INFO ..."
_UCX_LOG_RE = re.compile(r"\s*\[\d+\.\d+\]\s+\[[^\]]*\]")
OUTPUT_LINES = 12
_NCCL_ROW_RE = re.compile(r"\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+(.*)")


class WorkloadError(ValueError):
    """Bad planning input (names the parameter and the allowed values)."""


def _check_sizes(sizes):
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise WorkloadError("sizes: give a list of message sizes in bytes (4 to 1073741824), got %r" % (sizes,))
    out = []
    for size in sizes:
        if isinstance(size, bool) or not isinstance(size, int) or not 4 <= size <= 1 << 30:
            raise WorkloadError("sizes: %r is not a message size; allowed: integers 4-1073741824" % (size,))
        out.append(size)
    return sorted(set(out))


def _check_env(env, where):
    if not isinstance(env, dict):
        raise WorkloadError("%s: the environment must be a dict, got %s" % (where, type(env).__name__))
    for key, value in env.items():
        if not _ENV_NAME_RE.fullmatch(str(key)) or not _ENV_VALUE_RE.fullmatch(str(value)):
            raise WorkloadError("%s: %s=%s is not a plain environment setting (names: capitals, digits, _; values: "
                                "letters, digits and _ . , : = ^ / @ + -)" % (where, key, value))
    return ["%s=%s" % (k, env[k]) for k in sorted(env)]


def _env_argv(env, where):
    """``env K=V ...`` prefix: each rank gets its own host's settings (mpirun -x would copy the launcher's)."""
    return ["env"] + _check_env(env, where)


# nccl-tests' binary: a command name or an absolute path (it goes into the mpirun command line and `which`).
NCCL_BINARY_RE = re.compile(r"/?[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_.+-]+)*")


def workload_plan(endpoints, hosts, envs, sizes=DEFAULT_SIZES, iterations=20, time_budget_s=3.0, timeout=300,
                  base_port=18600, perftest_iterations=1000, perftest_iterations_soft=100, perftest_bw_size=65536,
                  pairs=None, script="", mpirun_args=None, allow_run_as_root=False, nccl_hosts=None, nccl_envs=None,
                  nccl_binary="all_reduce_perf"):
    """The workload runs for ``hosts`` (only those whose endpoint is ok take part).

    ``endpoints``: host -> validate_endpoint output; ``envs``: host -> ucx_env output (the UCX settings each
    rank runs with); ``pairs``: [(server, client)] for ucx_perftest (default: a ring). Returns ``{hosts,
    launcher, problems, mpirun: argv, devices: {host: [device, port]}, perftests: [runs], nccl: argv or None}``.
    """
    sizes = _check_sizes(list(sizes))
    for name, value, low, high in (("iterations", iterations, 1, 100000), ("timeout", timeout, 10, 86400),
                                   ("base_port", base_port, 1024, 65000),
                                   ("perftest_iterations", perftest_iterations, 1, 10000000),
                                   ("perftest_iterations_soft", perftest_iterations_soft, 1, 10000000),
                                   ("perftest_bw_size", perftest_bw_size, 1, 1 << 30)):
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise WorkloadError("%s: %r is out of range; allowed: an integer %d-%d" % (name, value, low, high))
    try:
        budget = float(time_budget_s)
    except (TypeError, ValueError):
        budget = -1
    if not 0 < budget <= 3600:
        raise WorkloadError("time_budget_s: %r is out of range; allowed: a number of seconds above 0, at most 3600"
                            % (time_budget_s,))
    if not isinstance(script, str) or not script.strip():
        raise WorkloadError("script: the allreduce benchmark's source is required (roles/rdma_validate/files/mpi_allreduce.py)")
    if not isinstance(nccl_binary, str) or not NCCL_BINARY_RE.fullmatch(nccl_binary) or ".." in nccl_binary.split("/"):
        raise WorkloadError("nccl_binary: %r is not allowed; allowed: a command name such as all_reduce_perf or an "
                            "absolute path to it (letters, digits and _ . + - /, no '..' part)" % (nccl_binary,))
    extra = list(mpirun_args or [])
    if not all(isinstance(a, str) for a in extra):
        raise WorkloadError("mpirun_args: give a list of strings, got %r" % (mpirun_args,))
    endpoints = endpoints or {}
    envs = envs or {}
    out = {"hosts": [], "launcher": None, "problems": [], "mpirun": None, "devices": {}, "perftests": [],
           "nccl": None}
    for host in hosts or []:
        ep = endpoints.get(host)
        if not ep or not ep.get("ok"):
            out["problems"].append("%s: left out of the workload: %s" % (
                host, "; ".join((ep or {}).get("problems") or ["unreachable or failed before validation"])))
            continue
        if host not in envs:
            out["problems"].append("%s: left out of the workload: no UCX settings" % host)
            continue
        check_name("device", ep["device"])
        check_ip("ip", ep["ip"])
        out["hosts"].append(host)
        out["devices"][host] = [ep["device"], ep.get("port") or 1]
    if len(out["hosts"]) < 2:
        out["problems"].append("the workload needs at least two hosts with a usable endpoint, got %d" % len(out["hosts"]))
        return out
    out["launcher"] = out["hosts"][0]
    netdevs = sorted(set(endpoints[h].get("netdev") for h in out["hosts"] if endpoints[h].get("netdev")))
    argv = ["timeout", "--kill-after=10", str(timeout), "mpirun", "--tag-output", "--bind-to", "none",
            "--mca", "pml", "ucx"]
    if netdevs:
        # Open MPI's own daemons talk over the data network (lab VMs share one management address).
        argv += ["--mca", "oob_tcp_if_include", ",".join(netdevs), "--mca", "btl_tcp_if_include", ",".join(netdevs)]
    if allow_run_as_root:
        argv.append("--allow-run-as-root")
    argv += extra
    args = [",".join(str(s) for s in sizes), str(iterations), "%g" % budget]
    for i, host in enumerate(out["hosts"]):
        env = dict(envs[host])
        env["UCX_LOG_LEVEL"] = "info"
        if i:
            argv.append(":")
        argv += ["-np", "1", "-H", endpoints[host]["ip"]] + _env_argv(env, "envs[%s]" % host)
        argv += ["python3", "-c", script] + args
    out["mpirun"] = argv
    if pairs is None:
        hs = out["hosts"]
        pairs = [(hs[0], hs[1])] if len(hs) == 2 else [(hs[i], hs[(i + 1) % len(hs)]) for i in range(len(hs))]
    port = base_port
    for server, client in pairs:
        if server not in out["devices"] or client not in out["devices"]:
            continue
        soft = bool(endpoints[server].get("soft") or endpoints[client].get("soft"))
        for test, name in zip(UCX_PERFTESTS, PERFTEST_TESTS):
            iters = perftest_iterations_soft if soft else perftest_iterations
            size = 8 if test == "tag_lat" else perftest_bw_size
            # ucx_perftest warms up with 10000 iterations unless told (minutes on a slow link).
            common = ["-p", str(port), "-t", test, "-n", str(iters), "-w", str(max(2, iters // 10)), "-s", str(size), "-f"]
            senv = dict(envs[server], UCX_LOG_LEVEL="info")
            cenv = dict(envs[client], UCX_LOG_LEVEL="info")
            out["perftests"].append({
                "id": "%s %s-%s" % (test, server, client), "test": name, "tcp_port": port, "size": size,
                "iterations": iters,
                "server": {"host": server, "ip": endpoints[server]["ip"], "device": endpoints[server]["device"],
                           "port": endpoints[server].get("port")},
                "client": {"host": client, "ip": endpoints[client]["ip"], "device": endpoints[client]["device"],
                           "port": endpoints[client].get("port")},
                "server_argv": (["timeout", "--kill-after=5", str(timeout)] + _env_argv(senv, "envs[%s]" % server)
                                + ["ucx_perftest"] + common),
                "client_argv": (["timeout", "--kill-after=5", str(timeout)] + _env_argv(cenv, "envs[%s]" % client)
                                + ["ucx_perftest", endpoints[server]["ip"]] + common),
            })
            port += 1
    nccl_hosts = [h for h in (nccl_hosts or []) if h in out["hosts"]]
    if len(nccl_hosts) >= 2:
        nargv = argv[:argv.index("-np")]
        for i, host in enumerate(nccl_hosts):
            if i:
                nargv.append(":")
            nenv = dict((nccl_envs or {}).get(host) or {})
            nargv += ["-np", "1", "-H", endpoints[host]["ip"]] + _env_argv(nenv, "nccl_envs[%s]" % host)
            nargv += [nccl_binary, "-b", str(sizes[0]), "-e", str(sizes[-1]), "-f", "2", "-g", "1",
                      "-n", str(iterations)]
        out["nccl"] = nargv
    return out


# --------------------------------------------------------------------------
# parsers
# --------------------------------------------------------------------------
def _strip_tag(line):
    match = _RANK_RE.match(line)
    if match:
        return int(match.group(1)), line[match.end():]
    return None, line


def parse_allreduce(text):
    """The benchmark's JSON report (rank 0's ``RDMA_FABRIC_ALLREDUCE {...}`` line), or None."""
    for line in (text or "").splitlines():
        dummy, line = _strip_tag(line)
        idx = line.find(ALLREDUCE_TAG + " ")
        if idx < 0:
            continue
        try:
            data = json.loads(line[idx + len(ALLREDUCE_TAG) + 1:])
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("rows"), list):
            return data
    return None


def parse_ucx_transports(text):
    """UCX's ``ep_cfg`` report lines: ``[{rank, host, index, lanes: {feature: [tl/dev, ...]}}]``."""
    out = []
    for line in (text or "").splitlines():
        rank, line = _strip_tag(line)
        match = _EP_CFG_RE.search(line)
        if not match:
            continue
        host = _UCX_HOST_RE.search(line)
        lanes = {}
        for feature, resources in _LANE_RE.findall(match.group(2)):
            lanes[feature] = resources.split()
        out.append({"rank": rank, "host": host.group(1) if host else None, "index": int(match.group(1)),
                    "lanes": lanes})
    return out


def _resources(cfg):
    return sorted(set(r for rs in cfg["lanes"].values() for r in rs))


def remote_configs(configs):
    """The endpoint configurations that reach another host (not only loop-back or shared memory)."""
    return [c for c in configs if any(r.split("/", 1)[0] not in LOCAL_TRANSPORTS for r in _resources(c))]


def check_transports(configs, device, port):
    """Problems (sentences) when a remote endpoint configuration does not run over ``device:port``'s verbs."""
    remote = remote_configs(configs)
    if not remote:
        return ["UCX reported no endpoint to another host (no ep_cfg line: was UCX_LOG_LEVEL=info passed?)"]
    want = "%s:%s" % (device, port)
    problems = []
    for cfg in remote:
        bad = [r for r in _resources(cfg) if r.split("/", 1)[0] not in LOCAL_TRANSPORTS
               and (r.split("/", 1)[0] not in VERBS_TRANSPORTS or r.split("/", 1)[-1] != want)]
        if bad:
            problems.append("ep_cfg[%d] uses %s, not a verbs transport on %s" % (cfg["index"], ", ".join(bad), want))
    return problems


def parse_ucx_perftest(text):
    """The last result row of ``ucx_perftest -f``: iterations, latency (usec) and bandwidth (MB/s = MiB/s).

    A row is eight numbers, after an optional label that is not a number (``Final:``, ``[thread 0]``; UCX 1.13
    prints none): read as tokens, so that no pattern can split the iteration count between label and figures.
    """
    row = None
    for line in (text or "").splitlines():
        if "ep_cfg" in line:
            continue
        tokens = line.split()
        if len(tokens) < 8 or any(not _NUMBER_RE.fullmatch(t) for t in tokens[-8:]):
            continue
        if any(_NUMBER_RE.fullmatch(t) for t in tokens[:-8]):
            continue
        row = [float(v) for v in tokens[-8:]]
    if row is None:
        return None
    return {"iterations": int(row[0]), "latency_percentile_us": row[1], "latency_avg_us": row[2],
            "latency_us": row[3], "bandwidth_mbs": row[5], "msg_rate": row[7],
            "bandwidth_gbps": round(row[5] * MB_BYTES * 8 / GBIT, 6)}


def parse_nccl_tests(text):
    """nccl-tests rows (out-of-place figures): bytes, time_us, algbw_gbps, busbw_gbps (GB/s converted to Gb/s)."""
    rows = []
    for line in (text or "").splitlines():
        dummy, line = _strip_tag(line)
        if line.lstrip().startswith("#"):
            continue
        match = _NCCL_ROW_RE.fullmatch(line)
        if not match:
            continue
        fields = match.group(6).split()
        try:
            time_us, algbw, busbw = float(fields[0]), float(fields[1]), float(fields[2])
        except (IndexError, ValueError):
            continue
        wrong = fields[3] if len(fields) > 3 else "0"
        rows.append({"bytes": int(match.group(1)), "time_us": time_us, "algbw_gbps": round(algbw * 8, 4),
                     "busbw_gbps": round(busbw * 8, 4), "correct": wrong in ("0", "N/A")})
    return rows


def parse_counters(text):
    """``grep -r . DIR ...`` output (``path:value``) -> ``{counter name: int}`` (both counter folders merged)."""
    out = {}
    for line in (text or "").splitlines():
        path, sep, value = line.rpartition(":")
        if not sep:
            continue
        try:
            out[path.rsplit("/", 1)[-1]] = int(value.strip())
        except ValueError:
            continue
    return out


def counter_deltas(before, after):
    """Counters that rose between two reads, with their increase."""
    return dict((k, after[k] - before[k]) for k in sorted(after) if k in before and after[k] > before[k])


def _traffic_problems(host, device, deltas):
    tx = sum(deltas.get(k, 0) for k in TX_COUNTERS)
    rx = sum(deltas.get(k, 0) for k in RX_COUNTERS)
    problems = []
    if tx <= 0:
        problems.append("%s: no send counter of %s rose (%s)" % (host, device, ", ".join(TX_COUNTERS)))
    if rx <= 0:
        problems.append("%s: no receive counter of %s rose (%s)" % (host, device, ", ".join(RX_COUNTERS)))
    return problems


def _res_text(res):
    if not isinstance(res, dict):
        return ""
    return "%s\n%s" % (res.get("stdout") or "", res.get("stderr") or "")


def _counter_view(plan_, before, after):
    """{host: deltas} from the registered counter reads ({host: command result})."""
    out = {}
    for host in plan_["hosts"]:
        out[host] = counter_deltas(parse_counters(_res_text((before or {}).get(host))),
                                   parse_counters(_res_text((after or {}).get(host))))
    return out


def _base_entry(test, hosts, devices):
    return {
        "test": test, "hosts": list(hosts), "server": hosts[0] if hosts else None,
        "client": ",".join(hosts[1:]) or None, "devices": list(devices), "ports": [], "gid_indices": [],
        "server_ip": None, "tcp_port": None, "bandwidth_gbps": None, "latency_us": None,
        "min_bandwidth_gbps": None, "max_latency_us": None, "passed": False, "message": "", "elapsed_s": None,
    }


def _human(size):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return "%d %s" % (size // div, unit)
    return "%d B" % size


def allreduce_result(plan_, run, before=None, after=None, check_mode=False):
    """The ``mpi_allreduce`` result entry from the mpirun task result and the counter reads."""
    hosts = plan_["hosts"]
    entry = _base_entry(MPI_ALLREDUCE, hosts, [plan_["devices"][h][0] for h in hosts])
    entry["ports"] = [plan_["devices"][h][1] for h in hosts]
    if check_mode:
        entry.update(passed=None, message="not run in check mode")
        return entry
    if not isinstance(run, dict) or run.get("skipped") or "rc" not in run:
        entry["message"] = "mpi_allreduce did not run on %s: %s" % (plan_["launcher"], (run or {}).get("msg") or "skipped")
        return entry
    text = _res_text(run)
    data = parse_allreduce(text)
    configs = parse_ucx_transports(text)
    counters = _counter_view(plan_, before, after)
    entry["counters"] = counters
    entry["transports"] = dict((str(c["host"] or c["rank"]), []) for c in configs)
    for cfg in remote_configs(configs):
        entry["transports"][str(cfg["host"] or cfg["rank"])] = sorted(
            set(entry["transports"][str(cfg["host"] or cfg["rank"])]) | set(_resources(cfg)))
    entry["elapsed_s"] = run.get("delta") and _seconds(run.get("delta"))
    problems = []
    if run.get("rc") != 0:
        tail = [ln for ln in text.splitlines() if ln.strip()][-3:]
        problems.append("mpirun exited with rc %s%s" % (run.get("rc"), (": " + " | ".join(tail)) if tail else ""))
    if data is None:
        problems.append("no allreduce report from rank 0")
    else:
        entry["sizes"] = data["rows"]
        entry["ranks"] = data.get("ranks")
        wrong = [r["bytes"] for r in data["rows"] if not r.get("correct")]
        if wrong:
            problems.append("wrong allreduce result at %s" % ", ".join(_human(b) for b in wrong))
        if data["rows"]:
            entry["latency_us"] = data["rows"][0].get("time_us")
            entry["bandwidth_gbps"] = data["rows"][-1].get("busbw_gbps")
    for rank, host in enumerate(hosts):
        mine = [c for c in configs if c["rank"] == rank]
        device, port = plan_["devices"][host]
        problems += ["%s: %s" % (host, p) for p in check_transports(mine, device, port)]
        problems += _traffic_problems(host, device, counters.get(host) or {})
    entry["passed"] = not problems
    if problems:
        entry["message"] = "mpi_allreduce failed: " + "; ".join(problems)
    else:
        rows = data["rows"]
        entry["message"] = "mpi_allreduce ok: %d ranks over %s; %s; counters rose: %s" % (
            data.get("ranks") or len(hosts),
            ", ".join(sorted(set(r for v in entry["transports"].values() for r in v
                                 if r.split("/", 1)[0] in VERBS_TRANSPORTS))),
            ", ".join("%s %.1f us %.4f Gb/s bus" % (_human(r["bytes"]), r["time_us"], r["busbw_gbps"]) for r in rows),
            "; ".join("%s %s" % (h, ", ".join("%s +%d" % (k, v) for k, v in sorted(counters[h].items())
                                              if k in TX_COUNTERS + RX_COUNTERS)) for h in hosts))
    return entry


def _seconds(delta):
    """``0:00:12.345678`` (a command result's ``delta``) -> seconds."""
    try:
        h, m, s = str(delta).split(":")
        return round(int(h) * 3600 + int(m) * 60 + float(s), 3)
    except ValueError:
        return None


def perftest_result(run, server_start=None, client=None, server=None, check_mode=False):
    """One ``ucx_tag_lat`` / ``ucx_tag_bw`` entry from its server (async) and client results."""
    entry = _base_entry(run["test"], [run["server"]["host"], run["client"]["host"]],
                        [run["server"]["device"], run["client"]["device"]])
    entry.update(ports=[run["server"]["port"], run["client"]["port"]], server_ip=run["server"]["ip"],
                 tcp_port=run["tcp_port"])
    if check_mode:
        entry.update(passed=None, message="not run in check mode")
        return entry
    if not isinstance(client, dict) or client.get("skipped") or "rc" not in client:
        entry["message"] = "%s: client %s did not run: %s" % (
            run["test"], run["client"]["host"], (client or {}).get("msg") or "skipped")
        return entry
    text = _res_text(client)
    parsed = parse_ucx_perftest(text)
    configs = parse_ucx_transports(text)
    entry["transports"] = {run["client"]["host"]: sorted(set(r for c in remote_configs(configs) for r in _resources(c)))}
    entry["elapsed_s"] = _seconds(client.get("delta"))
    problems = []
    if client.get("rc") != 0:
        tail = [ln for ln in text.splitlines() if ln.strip()][-3:]
        problems.append("ucx_perftest exited with rc %s%s" % (client.get("rc"), (": " + " | ".join(tail)) if tail else ""))
    # the tool's own rows (UCX's log lines left out), kept with the figures read from them
    entry["output"] = [ln.rstrip() for ln in text.splitlines() if ln.strip() and "ep_cfg" not in ln
                       and not _UCX_LOG_RE.match(ln)][-OUTPUT_LINES:]
    if parsed is None:
        problems.append("no result row in the output")
    elif parsed["iterations"] != run["iterations"]:
        problems.append("the result row counts %d iterations, %d were asked for (a row this parser misread?)" % (
            parsed["iterations"], run["iterations"]))
    else:
        entry["result"] = parsed
        if run["test"] == "ucx_tag_lat":
            entry["latency_us"] = parsed["latency_us"]
        else:
            entry["bandwidth_gbps"] = parsed["bandwidth_gbps"]
    problems += check_transports(configs, run["client"]["device"], run["client"]["port"] or 1)
    srv = server if isinstance(server, dict) else {}
    if srv.get("finished") and srv.get("rc") not in (0, None):
        problems.append("server %s exited with rc %s" % (run["server"]["host"], srv.get("rc")))
    entry["passed"] = not problems
    if problems:
        entry["message"] = "%s failed: %s" % (run["test"], "; ".join(problems))
    elif run["test"] == "ucx_tag_lat":
        entry["message"] = "%s ok: %.2f us (%d B, %d iterations) over %s" % (
            run["test"], parsed["latency_us"], run["size"], parsed["iterations"],
            ", ".join(entry["transports"][run["client"]["host"]]))
    else:
        entry["message"] = "%s ok: %.4f Gb/s (%d B messages, %d iterations) over %s" % (
            run["test"], parsed["bandwidth_gbps"], run["size"], parsed["iterations"],
            ", ".join(entry["transports"][run["client"]["host"]]))
    return entry


def nccl_result(plan_, run, check_mode=False):
    """The ``nccl_allreduce`` entry from an nccl-tests ``all_reduce_perf`` run (GPU hosts)."""
    hosts = list(plan_["hosts"])
    entry = _base_entry(NCCL_ALLREDUCE, hosts, [plan_["devices"][h][0] for h in hosts])
    if check_mode:
        entry.update(passed=None, message="not run in check mode")
        return entry
    if not isinstance(run, dict) or run.get("skipped") or "rc" not in run:
        entry["message"] = "nccl_allreduce did not run: %s" % ((run or {}).get("msg") or "skipped")
        return entry
    rows = parse_nccl_tests(_res_text(run))
    entry["sizes"] = rows
    problems = []
    if run.get("rc") != 0:
        problems.append("all_reduce_perf exited with rc %s" % run.get("rc"))
    if not rows:
        problems.append("no result rows in the output")
    wrong = [r["bytes"] for r in rows if not r["correct"]]
    if wrong:
        problems.append("wrong results at %s" % ", ".join(_human(b) for b in wrong))
    if rows:
        entry["latency_us"] = rows[0]["time_us"]
        entry["bandwidth_gbps"] = rows[-1]["busbw_gbps"]
    entry["passed"] = not problems
    entry["message"] = ("nccl_allreduce failed: " + "; ".join(problems)) if problems else (
        "nccl_allreduce ok: %s" % ", ".join("%s %.4f Gb/s bus" % (_human(r["bytes"]), r["busbw_gbps"]) for r in rows))
    return entry
