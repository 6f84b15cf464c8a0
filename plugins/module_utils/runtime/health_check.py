# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA node health check for Slurm and NHC: ``rdma-fabric health-check``.

Reads the host with the metrics collector's reader (:func:`.metrics.collect`,
same configuration file) and judges it:

* every expected port (``expected_ports``) exists, is ACTIVE, and runs at
  least at its expected rate;
* no saved lossless port differs from its applied profile (drift), and each
  could be compared;
* GPUDirect RDMA is ready where the host has NVIDIA GPUs (``gpudirect:
  auto``) or always (``required``);
* the ports could be read at all.

Prints one line and exits 0 (``OK: ...``) or 1 (``ERROR: <reasons>``); 2 for
bad usage or configuration. With ``--slurm-drain`` (for Slurm's
``HealthCheckProgram``, which acts on nothing but what the program does) it
also drains the node with ``scontrol`` when a check fails, reason
``rdma-fabric: <first reason>``, and resumes a node it drained itself once
every check passes again (a node drained for another reason is left alone),
as NHC does.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import re
import shutil
import socket
import subprocess
import sys

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics

REASON_PREFIX = "rdma-fabric:"
# How long to wait for a running lossless re-apply before judging without the drift check.
APPLY_LOCK_WAIT = 30.0
# Slurm node reasons are free text; keep them short enough for sinfo -R.
MAX_REASON = 200


def _port_name(p):
    return "%s/%s%s" % (p["device"], p["port"], " (%s)" % p["netdev"] if p["netdev"] else "")


def _gbps(value):
    return ("%g" % value) if value is not None else "unknown"


def evaluate(snap, cfg):
    """``(problems, summary)``: the reasons the node is unhealthy (empty when healthy) and what was checked."""
    problems = []
    if snap.errors.get("ports"):
        problems.append("cannot read the RDMA ports: %s" % "; ".join(t for s, t in snap.messages if s == "ports"))
    seen = set()
    expected = [p for p in snap.ports if p["expected"]]
    for p in expected:
        seen.add((p["device"], p["port"]))
        if p["state"] != "ACTIVE":
            problems.append("RDMA port %s is %s (physical state %s)" % (
                _port_name(p), p["state"] or "unreadable", p["phys_state"] or "unreadable"))
        elif p["expected_rate_gbps"] is not None and (p["rate_gbps"] is None or p["rate_gbps"] < p["expected_rate_gbps"]):
            problems.append("RDMA port %s runs at %s Gb/s, expected at least %s Gb/s" % (
                _port_name(p), _gbps(p["rate_gbps"]), _gbps(p["expected_rate_gbps"])))
    for entry, found in snap.expected_found:  # empty when the ports could not be read at all
        if not found:
            problems.append("expected RDMA port %s is missing" % entry["match"])
    for d in snap.drift:
        if not d["ok"]:
            problems.append("%s: the lossless settings could not be compared: %s" % (d["netdev"], d["error"]))
            continue
        drifted = [option for option, value in sorted(d["options"].items()) if value]
        if drifted:
            problems.append("%s: %s differ%s from the applied lossless profile" % (
                d["netdev"], ", ".join(drifted), "s" if len(drifted) == 1 else ""))
    gd = snap.gpudirect
    if snap.errors.get("gpudirect") and cfg["gpudirect"] == "required":
        problems.append("cannot read the GPUDirect state: %s" % "; ".join(t for s, t in snap.messages if s == "gpudirect"))
    elif gd is not None and (gd["gpus"] or cfg["gpudirect"] == "required") and not gd["ready"]:
        problems.append("GPUDirect RDMA is not ready: %s" % (gd["reasons"][0] if gd["reasons"] else "unknown reason"))
    at_rate = " at rate" if any(p["expected_rate_gbps"] for p in expected) else ""
    checked = ["%d expected RDMA port%s up%s" % (len(expected), "" if len(expected) == 1 else "s", at_rate)]
    if cfg["drift"]:
        checked.append("%d lossless port%s without drift" % (len(snap.drift), "" if len(snap.drift) == 1 else "s")
                       if snap.drift_skipped is None else "drift not checked (%s)" % snap.drift_skipped)
    if gd is not None and (gd["gpus"] or cfg["gpudirect"] == "required"):
        checked.append("GPUDirect RDMA ready")
    return problems, ", ".join(checked)


def one_line(text):
    return re.sub(r"\s+", " ", text).strip()


def parse_node(text):
    """``(state, reason)`` from ``scontrol show node`` (Slurm 22.05): state flags such as ``IDLE+DRAIN``, the
    reason text without Slurm's ``[user@time]`` suffix; ``""`` where Slurm prints no ``Reason=`` (a node in service)."""
    state = reason = ""
    for line in text.splitlines():
        words = line.split()
        if words and words[0].startswith("Reason="):  # the rest of its line, however many words
            reason = re.fullmatch(r"\s*Reason=(.*?)(?:\s+\[[^\]]*\])?\s*", line).group(1).strip()
        elif not state:
            state = next((word[len("State="):] for word in words if word.startswith("State=")), "")
    return state, reason


class Slurm(object):
    """Drain and resume this node through ``scontrol`` (argv lists, no shell)."""

    def __init__(self, node, scontrol):
        self.node = node
        self.scontrol = scontrol

    def _run(self, args):
        proc = subprocess.run([self.scontrol] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, check=False)
        return proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")

    def node_state(self):
        """``(state, reason)`` of this node (:func:`parse_node`)."""
        rc, out, err = self._run(["show", "node", self.node])
        if rc != 0:
            raise OSError("scontrol show node %s failed (rc=%d): %s" % (self.node, rc, one_line(err or out)))
        return parse_node(out)

    def drain(self, reason):
        rc, out, err = self._run(["update", "NodeName=%s" % self.node, "State=DRAIN", "Reason=%s" % reason])
        if rc != 0:
            raise OSError("scontrol update NodeName=%s State=DRAIN failed (rc=%d): %s" % (self.node, rc, one_line(err or out)))

    def resume_if_ours(self):
        """Resume the node when it is drained with a reason this check gave; True when it did."""
        state, reason = self.node_state()
        if "DRAIN" not in state.upper().split("+") or not reason.startswith(REASON_PREFIX):
            return False
        rc, out, err = self._run(["update", "NodeName=%s" % self.node, "State=RESUME"])
        if rc != 0:
            raise OSError("scontrol update NodeName=%s State=RESUME failed (rc=%d): %s" % (self.node, rc, one_line(err or out)))
        return True


def cli_main(argv=None):
    """``rdma-fabric health-check``: one line, exit 0 healthy / 1 unhealthy / 2 bad usage."""
    ap = argparse.ArgumentParser(prog="rdma-fabric health-check",
                                 description="Check this node's RDMA ports, lossless settings and GPUDirect RDMA (rdma.fabric).")
    metrics.add_common_args(ap)
    ap.add_argument("--slurm-drain", action="store_true",
                    help="drain this Slurm node when a check fails, resume it when the checks pass and it was drained by this check")
    ap.add_argument("--node", help="Slurm node name (default: the short host name)")
    opts = ap.parse_args(argv)
    try:
        cfg = metrics.config_from_args(opts)
    except metrics.ConfigError as e:
        sys.stdout.write("ERROR: rdma-fabric health-check: configuration error: %s" % one_line(str(e)) + "\n")
        return 2
    snap = metrics.collect(cfg, lock_wait=APPLY_LOCK_WAIT)
    problems, summary = evaluate(snap, cfg)
    status = 1 if problems else 0
    line = ("ERROR: " + one_line("; ".join(problems))) if problems else ("OK: " + summary)
    if opts.slurm_drain:
        scontrol = shutil.which("scontrol")
        node = opts.node or socket.gethostname().split(".")[0]
        try:
            if scontrol is None:
                raise OSError("scontrol is not installed")
            slurm = Slurm(node, scontrol)
            if problems:
                more = " (and %d more)" % (len(problems) - 1) if len(problems) > 1 else ""
                slurm.drain((REASON_PREFIX + " " + one_line(problems[0]))[:MAX_REASON - len(more)] + more)
                line += " [drained %s]" % node
            elif slurm.resume_if_ours():
                line += " [resumed %s]" % node
        except (IOError, OSError, subprocess.TimeoutExpired) as e:
            line += " [slurm: %s]" % one_line(str(e))
    sys.stdout.write(line + "\n")
    return status


if __name__ == "__main__":
    raise SystemExit(cli_main())
