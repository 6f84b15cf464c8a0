# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Benchmark the RDMA metrics collector (``rdma-fabric metrics``) on a large synthetic host.

The host is the facts benchmark's (benchmarks/facts.py ``build_host``: 16
dual-port mlx5 HCAs, 8 of them SR-IOV PFs with 8 VFs each: 80 RDMA devices,
96 ports, counters and hw_counters on every port, rdma_cm configfs), plus
lossless settings saved for the 32 PF netdevs as rdma.fabric.lossless_ethernet
saves them (MTU, rdma_cm ToS and mode: the options read from sysfs and
configfs; DCB options would add the ``dcb`` commands of the drift check,
measured on the lab by the scenario, see below). Prints, median of --runs:

1. one whole collection as the timer runs it (ports and counters, PFC, drift,
   GPUDirect, apply time) and the rendering of the textfile, by section;
2. the same without the VF ports (the role's default, ``include_vfs: false``)
   and with them;
3. the size of the textfile, and the CPU time of a run (wall time on a loaded
   machine includes waiting for a CPU).

Target (issue 20): well under a second per run on a big host.

    .venv/bin/python benchmarks/metrics.py
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _median_ms(samples):
    return statistics.median(samples) * 1000.0


def save_lossless(saved_dir, netdevs):
    os.makedirs(saved_dir)
    for nd in netdevs:
        with open(os.path.join(saved_dir, nd + ".json"), "w") as f:
            json.dump({"netdev": nd, "mtu": 9000, "roce_tos": 106, "roce_mode": "v2",
                       "backend": "auto", "on_unsupported": "fail"}, f, indent=2, sort_keys=True)


def run(cfg, runs):
    from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
    metrics.render(metrics.collect(cfg))  # warm-up (imports, dentry cache)
    totals, sections, render_ms, size, cpu = [], {}, [], 0, []
    snap = None
    for dummy in range(runs):
        c0 = _cpu()
        t0 = time.perf_counter()
        snap = metrics.collect(cfg)
        t1 = time.perf_counter()
        text = metrics.render(snap)
        t2 = time.perf_counter()
        cpu.append(_cpu() - c0)
        totals.append(t2 - t0)
        render_ms.append(t2 - t1)
        size = len(text)
        for name, secs in snap.durations.items():
            sections.setdefault(name, []).append(secs)
    return snap, totals, sections, render_ms, size, cpu


def _cpu():
    """CPU seconds of this process and of its reaped children (the facts gatherer's forked workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=15, help="collector runs (median)")
    parser.add_argument("--tmpdir", default=None, help="where to build the tree (default /dev/shm when writable)")
    args = parser.parse_args(argv)

    coll_path = os.environ.get("ANSIBLE_COLLECTIONS_PATH") or os.path.join(REPO, "build", "collections")
    sys.path.insert(0, coll_path.split(os.pathsep)[0])
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from facts import build_host  # the facts benchmark's synthetic host

    from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics

    base = args.tmpdir
    if base is None and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
        base = "/dev/shm"
    workdir = tempfile.mkdtemp(prefix="rdma-metrics-bench-", dir=base)
    try:
        sys_root = os.path.join(workdir, "sys")
        summary = build_host(sys_root)
        netdevs = sorted(n for n in os.listdir(os.path.join(sys_root, "class", "net")) if "v" not in n and "." not in n)
        save_lossless(os.path.join(workdir, "saved"), netdevs)
        print("synthetic host: %(rdma_devices)d RDMA devices (%(pfs)d dual-port HCAs, %(vfs)d VFs)" % summary,
              "+ lossless settings saved for %d netdevs; machine: %d CPUs, load average %s"
              % (len(netdevs), os.cpu_count() or 0, " ".join("%.2f" % x for x in os.getloadavg())))
        for include_vfs in (False, True):
            cfg = metrics.check_config({
                "sysfs": sys_root, "procfs": os.path.join(workdir, "proc"), "saved_dir": os.path.join(workdir, "saved"),
                "state_dir": os.path.join(workdir, "state"), "apply_lock": os.path.join(workdir, "apply.lock"),
                "textfile": os.path.join(workdir, "rdma_fabric.prom"), "include_vfs": include_vfs,
                "expected_ports": [{"match": "mlx5_*", "rate_gbps": 100}]})
            snap, totals, sections, render_ms, size, cpu = run(cfg, args.runs)
            assert not any(snap.errors.values()), snap.messages
            assert len(snap.drift) == len(netdevs) and all(d["ok"] for d in snap.drift), snap.drift[:2]
            print("include_vfs=%s: %d ports, %d saved ports compared: collect + render median %.1f ms (min %.1f) over %d runs; "
                  "textfile %d bytes" % (include_vfs, len(snap.ports), len(snap.drift), _median_ms(totals),
                                         min(totals) * 1000, len(totals), size))
            print("  CPU time (this process and its forked workers) median %.1f ms" % _median_ms(cpu))
            print("  by section (median ms): %s; render %.1f" % (", ".join(
                "%s %.1f" % (k, _median_ms(v)) for k, v in sorted(sections.items()) if k != "total"), _median_ms(render_ms)))
            print("  target: well under 1 s per run -> %s" % ("MET" if _median_ms(totals) < 500 else "NOT MET"))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
