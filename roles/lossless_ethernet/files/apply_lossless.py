# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Re-apply the saved lossless RoCE settings: /usr/local/libexec/rdma-fabric/apply-lossless.

This file is the ``__main__.py`` of a Python zip application that the
``rdma.fabric.lossless_ethernet`` role builds (``build_apply_bundle.py``) and
installs; ``rdma-fabric-lossless.service`` runs it at boot and whenever a
driver (re)creates a configured netdev or an RDMA device (udev rule).

It holds no QoS logic of its own. For every saved port
(``/etc/rdma-fabric/lossless/<netdev>.json``, the very arguments the role
passed to ``rdma.fabric.roce_qos``, as ``{"ANSIBLE_MODULE_ARGS": {...}}``), it
runs that same module, shipped inside this zip, the way Ansible documents for
running a module without Ansible: ``python3 -m <module> <args>``. The module
reads the port, changes only what differs (so a re-run changes nothing),
and restores what it changed if a step fails.

A port whose netdev or RDMA device does not exist yet is skipped (exit 0):
the udev rule runs this again when it appears.

Usage: apply-lossless [--dir DIR] [--check] [NETDEV ...]
Exit status: 0 when every present port is configured (or nothing was due),
1 when the module failed on a port, 2 on bad usage or unreadable files.
"""

from __future__ import absolute_import, division, print_function

import argparse
import fcntl
import json
import os
import signal
import subprocess
import sys

MODULE = "ansible_collections.rdma.fabric.plugins.modules.roce_qos"
DEFAULT_DIR = "/etc/rdma-fabric/lossless"
LOCK = "/run/rdma-fabric-lossless.lock"
_STOP = []


def _on_sigterm(signum, frame):
    _STOP.append(signum)


def bundle_path():
    """The zip this runs from (sys.path[0] of a zip application)."""
    here = os.path.dirname(os.path.abspath(__file__))
    return here if os.path.isfile(here) else os.path.dirname(here)


def port_ready(netdev, sysfs_path):
    """(ready, reason): does the netdev exist and is it an RDMA port yet?

    Uses the module's own port lookup, so "is an RDMA port" means exactly
    what the module will accept.
    """
    from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import SysfsTree
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import QosError
    from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import find_port

    tree = SysfsTree(sysfs_path)
    if not tree.exists(tree.sys("class", "net", netdev)):
        return False, "netdev %s does not exist (yet)" % netdev
    try:
        find_port(tree, netdev=netdev)
    except QosError as e:
        return False, str(e)
    return True, ""


def load_saved(path):
    with open(path) as f:
        doc = json.load(f)
    args = doc.get("ANSIBLE_MODULE_ARGS") if isinstance(doc, dict) else None
    if not isinstance(args, dict) or not args.get("netdev"):
        raise ValueError("%s: expected {\"ANSIBLE_MODULE_ARGS\": {\"netdev\": ..., ...}}" % path)
    return args


def run_module(args, check):
    """Run roce_qos on one port; return its result dict."""
    payload = dict(args)
    if check:
        payload["_ansible_check_mode"] = True
    env = dict(os.environ, PYTHONPATH=bundle_path(), LC_ALL="C", LANG="C")
    # The arguments go in on stdin, as AnsibleModule reads them when run
    # directly without an argument (no length limit, nothing in `ps`).
    proc = subprocess.run(
        [sys.executable, "-m", MODULE], input=json.dumps({"ANSIBLE_MODULE_ARGS": payload}).encode(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, check=False)
    out = proc.stdout.decode("utf-8", "replace")
    try:
        # The module prints exactly one JSON document (its result).
        result = json.loads(out[out.index("{"):])
    except ValueError:
        result = {"failed": True, "msg": "module gave no JSON result (rc=%d): %s %s" % (
            proc.returncode, out.strip(), proc.stderr.decode("utf-8", "replace").strip())}
    if proc.returncode != 0:
        result["failed"] = True
    return result


def warning_text(warning):
    """A module warning as text (ansible-core 2.19 returns structured warnings)."""
    if isinstance(warning, dict):
        event = warning.get("event") if isinstance(warning.get("event"), dict) else warning
        return str(event.get("msg", warning))
    return str(warning)


def summary(result):
    changed = [k for k, v in sorted((result.get("changes") or {}).items()) if v] if isinstance(result.get("changes"), dict) else []
    text = "changed" if result.get("changed") else "ok"
    if changed:
        text += " (%s)" % ", ".join(changed)
    if result.get("backend"):
        text += " backend=%s" % result["backend"]
    return text


def main(argv=None):
    # The udev rule restarts the service when a port appears, maybe while a run
    # is under way: finish the port at hand (the unit's KillMode=mixed signals
    # only this process), then stop cleanly; the new run re-applies everything.
    signal.signal(signal.SIGTERM, _on_sigterm)
    ap = argparse.ArgumentParser(prog="apply-lossless", description="Re-apply saved lossless RoCE settings (rdma.fabric).")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="saved settings (default %(default)s)")
    ap.add_argument("--check", action="store_true", help="report what would change, change nothing")
    ap.add_argument("--sysfs", default="/sys", help=argparse.SUPPRESS)
    ap.add_argument("--lock", default=LOCK, help=argparse.SUPPRESS)
    ap.add_argument("netdevs", nargs="*", help="only these ports (default: every saved port)")
    opts = ap.parse_args(argv)

    try:
        names = sorted(n for n in os.listdir(opts.dir) if n.endswith(".json"))
    except OSError as e:
        print("apply-lossless: cannot list %s: %s" % (opts.dir, e.strerror), file=sys.stderr)
        return 2
    if opts.netdevs:
        wanted = set(opts.netdevs)
        missing = wanted - set(n[:-5] for n in names)
        if missing:
            print("apply-lossless: no saved settings for %s in %s" % (", ".join(sorted(missing)), opts.dir), file=sys.stderr)
            return 2
        names = [n for n in names if n[:-5] in wanted]

    lock = open(opts.lock if os.access(os.path.dirname(opts.lock), os.W_OK) else os.devnull, "w")
    fcntl.flock(lock, fcntl.LOCK_EX)  # one run at a time (boot, udev and manual runs)

    status = 0
    for name in names:
        if _STOP:
            print("stopping before %s: asked to stop (a restarted run re-applies every port)" % name[:-5])
            break
        path = os.path.join(opts.dir, name)
        try:
            args = load_saved(path)
        except (IOError, OSError, ValueError) as e:
            print("%s: FAILED: unreadable saved settings: %s" % (name[:-5], e))
            status = max(status, 2)
            continue
        netdev = args["netdev"]
        if netdev != name[:-5]:
            print("%s: FAILED: %s is for netdev %r" % (name[:-5], path, netdev))
            status = max(status, 2)
            continue
        ready, reason = port_ready(netdev, opts.sysfs)
        if not ready:
            print("%s: skipped, not ready: %s" % (netdev, reason))
            continue
        result = run_module(args, opts.check)
        for w in result.get("warnings") or []:
            print("%s: warning: %s" % (netdev, warning_text(w)))
        if result.get("failed"):
            print("%s: FAILED: %s" % (netdev, result.get("msg")))
            status = max(status, 1)
        else:
            print("%s: %s%s" % (netdev, summary(result), " (check mode)" if opts.check else ""))
        sys.stdout.flush()
    return status


if __name__ == "__main__":
    sys.exit(main())
