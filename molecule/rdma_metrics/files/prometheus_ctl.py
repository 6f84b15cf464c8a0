# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Start and stop the scenario's Prometheus server on the lab host (test helper).

Debian's prometheus (tools/deps/apt-packages.txt), never as a service: one
process of this scenario, listening on 127.0.0.1 only, scraping the lab VMs'
node_exporter through their forwarded ports every 5 s and evaluating the
rdma_metrics role's own rule files. Its folder (config, data, log, pid) is
under the lab instance's state folder.

    prometheus_ctl.py start DIR RULES_DIR TARGET...   prints {"pid": N, "url": "http://127.0.0.1:PORT"}
    prometheus_ctl.py stop DIR                        stops the process it started (by its PID)
"""

from __future__ import absolute_import, division, print_function

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def ours(pid, folder):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return folder.encode() in f.read()
    except (IOError, OSError):
        return False


def stop(folder):
    try:
        with open(os.path.join(folder, "prometheus.pid")) as f:
            pid = int(f.read().strip())
    except (IOError, OSError, ValueError):
        return {"stopped": None}
    if ours(pid, folder):
        os.kill(pid, signal.SIGTERM)
        deadline = time.time() + 20
        while ours(pid, folder) and time.time() < deadline:
            time.sleep(0.2)
        if ours(pid, folder):
            os.kill(pid, signal.SIGKILL)
    os.unlink(os.path.join(folder, "prometheus.pid"))
    return {"stopped": pid}


def start(folder, rules_dir, targets):
    stop(folder)
    shutil.rmtree(os.path.join(folder, "data"), ignore_errors=True)
    os.makedirs(os.path.join(folder, "data"), exist_ok=True)
    port = free_port()
    rules_dir = os.path.abspath(rules_dir)
    rules = sorted(os.path.join(rules_dir, n) for n in os.listdir(rules_dir) if n.endswith(".rules.yml"))
    config = {
        "global": {"scrape_interval": "5s", "evaluation_interval": "5s", "scrape_timeout": "4s"},
        "rule_files": rules,
        "scrape_configs": [{"job_name": "node", "static_configs": [{"targets": targets}]}],
    }
    path = os.path.join(folder, "prometheus.yml")
    with open(path, "w") as f:
        json.dump(config, f, indent=1)  # JSON is YAML
    log = open(os.path.join(folder, "prometheus.log"), "w")
    proc = subprocess.Popen(
        ["prometheus", "--config.file=" + path, "--storage.tsdb.path=" + os.path.join(folder, "data"),
         "--web.listen-address=127.0.0.1:%d" % port, "--storage.tsdb.retention.time=2h"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, cwd=folder)
    with open(os.path.join(folder, "prometheus.pid"), "w") as f:
        f.write("%d\n" % proc.pid)
    url = "http://127.0.0.1:%d" % port
    deadline = time.time() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=2) as r:
                if r.status == 200:
                    break
        except (IOError, OSError):
            pass
        if proc.poll() is not None or time.time() > deadline:
            raise SystemExit("prometheus did not start; see %s" % os.path.join(folder, "prometheus.log"))
        time.sleep(0.5)
    return {"pid": proc.pid, "url": url, "config": config}


def main(argv):
    if argv[:1] == ["start"] and len(argv) >= 4:
        os.makedirs(argv[1], exist_ok=True)
        print(json.dumps(start(os.path.abspath(argv[1]), argv[2], argv[3:])))
    elif argv[:1] == ["stop"] and len(argv) == 2:
        print(json.dumps(stop(os.path.abspath(argv[1]))))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
