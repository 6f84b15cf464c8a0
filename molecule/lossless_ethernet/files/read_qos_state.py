# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read back every setting the lossless_ethernet scenario touches (test helper).

Runs on the lab VM (ansible.builtin.script). Prints one JSON document:
per netdev given on the command line, its MTU and operstate, the real
`dcb -j` PFC/ETS/APP state (null where the driver has no DCB), global pause
from `ethtool -a` (text: ethtool 6.1's --json output is wrong), the RDMA
device on it and that device's rdma_cm configfs default ToS and RoCE mode,
with --counters the dcbsim per-DSCP transmit counters; plus the saved settings files, the
host runtime's files, the service and the dcbsim fault-injection parameter. Reading configfs needs the
device's folder: it is created for the read and removed again when this
created it (as cma_roce_tos does), so the host is left as it was.

The collection's paths come as options (--saved-dir, --runtime), from the rdma.fabric.host_path lookup
(vars/paths.yml): this file writes none of them.
"""

from __future__ import absolute_import, division, print_function

import argparse
import glob
import hashlib
import json
import os
import stat
import subprocess
import sys

LEGACY_TOOL = "/usr/local/libexec/rdma-fabric"
UNIT = "rdma-fabric-lossless.service"
CONFIGFS = "/sys/kernel/config/rdma_cm"


def run(argv):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False,
                           env=dict(os.environ, LC_ALL="C"))
    except OSError as e:
        return 127, "", str(e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except (IOError, OSError):
        return None


def dcb(netdev, obj):
    rc, out, err = run(["dcb", "-j", obj, "show", "dev", netdev])
    return json.loads(out) if rc == 0 else None


def pause(netdev):
    rc, out, err = run(["ethtool", "-a", netdev])
    if rc != 0:
        return None
    vals = {}
    for line in out.splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            vals[k.strip().lower()] = v.strip() == "on"
    return {"autoneg": vals.get("autonegotiate"), "rx": vals.get("rx"), "tx": vals.get("tx")}


def counters(netdev):
    rc, out, err = run(["ethtool", "-S", netdev])
    if rc != 0:
        return None
    out_d = {}
    for line in out.splitlines()[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            if k.strip().startswith(("tx_dscp", "tx_roce_v2")):
                out_d[k.strip()] = int(v)
    return out_d


def rdma_device(netdev):
    for dev in sorted(glob.glob("/sys/class/infiniband/*")):
        if read(os.path.join(dev, "parent")) == netdev:
            return os.path.basename(dev)
    return None


def roce_cm(device):
    if device is None or not os.path.isdir(CONFIGFS):
        return None
    path = os.path.join(CONFIGFS, device)
    created = False
    if not os.path.isdir(path):
        os.mkdir(path)
        created = True
    try:
        return {"tos": int(read(os.path.join(path, "ports", "1", "default_roce_tos"))),
                "mode": read(os.path.join(path, "ports", "1", "default_roce_mode"))}
    finally:
        if created:
            os.rmdir(path)


def netdev_state(netdev, with_counters):
    if not os.path.isdir("/sys/class/net/" + netdev):
        return {"exists": False}
    device = rdma_device(netdev)
    return {
        "exists": True,
        "mtu": int(read("/sys/class/net/%s/mtu" % netdev)),
        "operstate": read("/sys/class/net/%s/operstate" % netdev),
        "pfc": dcb(netdev, "pfc"),
        "ets": dcb(netdev, "ets"),
        "app": dcb(netdev, "app"),
        "pause": pause(netdev),
        "rdma_device": device,
        "roce_cm": roce_cm(device),
        "counters": counters(netdev) if with_counters else None,
    }


def saved(saved_dir):
    out = {}
    for path in sorted(glob.glob(os.path.join(saved_dir, "*.json"))):
        with open(path, "rb") as f:
            data = f.read()
        out[os.path.basename(path)] = {
            "mode": "%04o" % stat.S_IMODE(os.stat(path).st_mode),
            "sha256": hashlib.sha256(data).hexdigest(),
            "args": json.loads(data.decode()),
        }
    return out


def runtime(files):
    """The host runtime's files (mode, SHA-1) and whether the earlier re-apply tool is gone."""
    out = {}
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (IOError, OSError):
            out[path] = None
            continue
        out[path] = {"mode": "%04o" % stat.S_IMODE(os.stat(path).st_mode), "sha1": hashlib.sha1(data).hexdigest()}
    out["legacy_tool_present"] = os.path.exists(LEGACY_TOOL)
    return out


def unit():
    rc, out, err = run(["systemctl", "show", "-p", "ActiveState", "-p", "Result", "-p", "UnitFileState",
                        "-p", "ExecMainStatus", "-p", "NRestarts", "-p", "InvocationID", "-p", "ExecStart", UNIT])
    return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)


def unit_jobs():
    """Queued or running systemd jobs of the service (a udev-triggered restart, say)."""
    rc, out, err = run(["systemctl", "list-jobs", "--no-legend", "--plain"])
    return [line for line in out.splitlines() if UNIT in line]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--counters", action="store_true")
    ap.add_argument("--saved-dir", required=True, help="lossless_ethernet's saved settings (LOSSLESS_SAVED_DIR)")
    ap.add_argument("--runtime", action="append", required=True,
                    help="a file of the host runtime (HOST_RUNTIME, HOST_RUNTIME_COMMAND)")
    ap.add_argument("netdevs", nargs="*")
    opts = ap.parse_args(sys.argv[1:])
    state = {"netdevs": dict((n, netdev_state(n, opts.counters)) for n in opts.netdevs),
             "saved": saved(opts.saved_dir), "runtime": runtime(opts.runtime), "unit": unit(), "unit_jobs": unit_jobs(),
             "dcbsim_fail": read("/sys/module/dcbsim/parameters/fail")}
    print(json.dumps(state, sort_keys=True))


if __name__ == "__main__":
    main()
