# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``rdma-fabric qos-apply``: re-apply the saved lossless settings of each port.

The host runtime's subcommand (see :mod:`..host_cli`) that
``rdma-fabric-lossless.service`` runs at boot and whenever a driver (re)creates
a configured netdev or an RDMA device (udev rule), with no Ansible on the host.

Each saved file ``DIR/<netdev>.json`` (written by the
``rdma.fabric.lossless_ethernet`` role) is one entry of ``roce_qos``'s
``ports`` list, ``{"netdev": ..., <option>: VALUE, ...}``: the settings the
role resolved for that port, nothing derived. This runs the same code the
module runs: the same validation (:mod:`.model`, a key given twice in the
JSON included), one facts read for every port (:mod:`.port`), the same
read-compare-apply with rollback (:mod:`.engine`), under the same host lock
(:mod:`.lock`), so a re-run changes nothing and the module and this never
change a port at the same time.

Ports are applied one at a time, each on its own: a port that fails is rolled
back and reported, the others keep their settings. A port whose netdev or
RDMA device is not there yet is skipped (the udev rule runs this again when it
appears). SIGTERM (a restart by udev, a stop) lets the step under way finish,
rolls back what that port's run changed, and stops; the restarted run
re-applies every port.

Exit status: 0 when every present port is configured (or nothing was due),
1 when a port failed or the lock could not be taken, 2 on bad usage or
unreadable saved settings.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import os
import sys

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.runtime.host_cli import PROG, HostProcess, say
from ansible_collections.rdma.fabric.plugins.module_utils.qos import lock
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import StopSignals
from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import QosRun
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import (
    QosError,
    ValidationError,
    check_entry_keys,
    loads_json,
    port_request,
)
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import check_netdevs_exist, read_facts, resolve
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree

DEFAULT_DIR = paths.LOSSLESS_SAVED_DIR
LOCK_TIMEOUT = 120


def load_saved(path, netdev):
    """The validated request of one saved file; ValueError (with the reason) when it is not usable."""
    with open(path, "rb") as f:
        entry = loads_json(f.read().decode("utf-8"))
    if not isinstance(entry, dict) or entry.get("netdev") != netdev:
        raise ValueError("expected one port's settings {\"netdev\": \"%s\", <option>: VALUE, ...}, got %.200r"
                         % (netdev, entry))
    try:
        check_entry_keys(netdev, entry)
        return port_request(entry, netdev)
    except ValidationError as e:
        raise ValueError(str(e))


def summary(result):
    """One line per port: ``ok`` / ``changed (options)`` and the DCB backend."""
    changed = sorted(k for k, v in (result.get("changes") or {}).items() if v)
    text = "changed" if result.get("changed") else "ok"
    if changed:
        text += " (%s)" % ", ".join(changed)
    if result.get("backend"):
        text += " backend=%s" % result["backend"]
    return text


def _parser():
    ap = argparse.ArgumentParser(prog="%s qos-apply" % PROG,
                                 description="Re-apply the saved lossless RoCE settings of each port (rdma.fabric).")
    ap.add_argument("--dir", default=DEFAULT_DIR, help="saved settings, one NETDEV.json per port (default %(default)s)")
    ap.add_argument("--check", action="store_true", help="report what would change, change nothing")
    ap.add_argument("--lock-timeout", type=int, default=LOCK_TIMEOUT,
                    help="seconds to wait for the host's QoS lock (default %(default)s)")
    ap.add_argument("--sysfs", default="/sys", help=argparse.SUPPRESS)
    ap.add_argument("--lock", default=None, help=argparse.SUPPRESS)
    ap.add_argument("netdevs", nargs="*", help="only these ports (default: every saved port)")
    return ap


def _saved(opts):
    """``[(netdev, path)]`` to apply, or an exit status."""
    try:
        names = sorted(n[:-5] for n in os.listdir(opts.dir) if n.endswith(".json"))
    except OSError as e:
        say("%s qos-apply: cannot list %s: %s" % (PROG, opts.dir, e.strerror), sys.stderr)
        return 2
    if opts.netdevs:
        missing = sorted(set(opts.netdevs) - set(names))
        if missing:
            say("%s qos-apply: no saved settings for %s in %s" % (PROG, ", ".join(missing), opts.dir), sys.stderr)
            return 2
        names = [n for n in names if n in opts.netdevs]
    return [(n, os.path.join(opts.dir, n + ".json")) for n in names]


def _apply_one(tree, req, ref, check, stop):
    """Run one port; returns its exit status (0 or 1) after printing its lines."""
    qr = QosRun(CommandRunner(HostProcess()), tree, [(req, ref)], check_mode=check, stop=stop)
    try:
        result = qr.run()["ports"][ref.netdev]
    except QosError as e:
        for w in qr.warnings:
            say("%s: warning: %s" % (ref.netdev, w))
        say("%s: FAILED: %s" % (ref.netdev, e))
        return 1
    for w in qr.warnings:
        say("%s: warning: %s" % (ref.netdev, w))
    say("%s: %s%s" % (ref.netdev, summary(result), " (check mode)" if check else ""))
    return 0


def cli_main(argv):
    opts = _parser().parse_args(argv)
    saved = _saved(opts)
    if isinstance(saved, int):
        return saved
    status = 0
    requests = []
    for netdev, path in saved:
        try:
            requests.append(load_saved(path, netdev))
        except (IOError, OSError, ValueError) as e:
            say("%s: FAILED: unusable saved settings %s: %s" % (netdev, path, e))
            status = 2
    stop = StopSignals()
    tree = SysfsTree(opts.sysfs)
    try:
        with stop.watch(), lock.held("%s qos-apply" % PROG, opts.lock_timeout, path=opts.lock, required=not opts.check,
                                     warn=lambda text: say("warning: " + text)):
            present = []
            for req in requests:
                try:
                    check_netdevs_exist(tree, [req])
                    present.append(req)
                except ValidationError:
                    say("%s: skipped, not ready: netdev %s does not exist (yet)" % (req.netdev, req.netdev))
            facts = read_facts(tree) if present else None
            for req in present:
                if stop.received:
                    say("stopping before %s: asked to stop by %s (a restarted run re-applies every port)"
                        % (req.netdev, stop.name))
                    break
                try:
                    ref = resolve(facts, tree, req)
                except ValidationError as e:
                    say("%s: skipped, not ready: %s" % (req.netdev, e))
                    continue
                status = max(status, _apply_one(tree, req, ref, opts.check, stop))
                sys.stdout.flush()
    except QosError as e:
        say("%s qos-apply: %s" % (PROG, e), sys.stderr)
        return max(status, 1)
    return status
