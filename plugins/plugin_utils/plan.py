# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The plan of a check-mode run of site.yml: per host, per stage, what would change.

Fed by the ``rdma.fabric.fabric_plan`` callback (one call per task result), rendered as JSON and
Markdown. A stage is the play a task ran in (site.yml has one play per stage; in a staged rollout
the task's role names it). Pure functions; no Ansible import.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.rdma.fabric.plugins.plugin_utils.rollout import host_drain

DIFF_LIMIT = 2000
PORT_KEYS = ("before", "after", "changes")
# A task of these actions that would change something reboots the host / restarts its RDMA driver stack.
REBOOT_ACTIONS = ("ansible.builtin.reboot", "ansible.legacy.reboot", "reboot")
SERVICE_ACTIONS = ("ansible.builtin.systemd_service", "ansible.builtin.systemd", "ansible.builtin.service",
                   "ansible.legacy.systemd_service", "ansible.legacy.systemd", "ansible.legacy.service",
                   "systemd_service", "systemd", "service")
DRIVER_UNITS = ("openibd", "openibd.service")
DRIVER_STATES = ("restarted", "stopped", "reloaded")


class Plan(object):
    """Changes seen in a run, ``hosts[host][stage] = [change, ...]``."""

    def __init__(self):
        self.hosts = {}
        self.check_mode = None
        self.failed = {}
        self.unreachable = []
        self.reboots = set()
        self.driver_restarts = set()

    def _stage(self, host, stage):
        return self.hosts.setdefault(host, {}).setdefault(stage, [])

    def add(self, host, stage, task, result, action=None, args=None):
        """Record one task result (a dict as the module returned it) when it would change something.

        ``action`` and ``args`` (the task's): a reboot, or an openibd restart, marks the host as one that
        would reboot or restart its driver stack.
        """
        result = result if isinstance(result, dict) else {}
        self.hosts.setdefault(host, {})
        items = result.get("results") if isinstance(result.get("results"), list) else [result]
        for item in items:
            if not isinstance(item, dict) or not item.get("changed"):
                continue
            change = {"task": task}
            if "item" in item:
                change["item"] = _short(item.get("item"))
            diff = _diffs(item.get("diff"))
            if diff:
                change["diff"] = diff
            ports = item.get("ports")
            if isinstance(ports, dict):
                change["ports"] = dict(
                    (name, dict((k, p.get(k)) for k in PORT_KEYS if k in p))
                    for name, p in sorted(ports.items()) if isinstance(p, dict) and p.get("changed"))
            self._stage(host, stage).append(change)
            invoked = (item.get("invocation") or {}).get("module_args") or args or {}
            if action in REBOOT_ACTIONS:
                self.reboots.add(host)
            elif (action in SERVICE_ACTIONS and invoked.get("name") in DRIVER_UNITS
                  and invoked.get("state") in DRIVER_STATES):
                self.driver_restarts.add(host)

    def fail(self, host, stage, task, message):
        self.failed.setdefault(host, []).append({"stage": stage, "task": task, "message": str(message)[:500]})

    def as_dict(self):
        hosts = {}
        for host in sorted(self.hosts):
            stages = dict((s, c) for s, c in self.hosts[host].items() if c)
            hosts[host] = {"changes": sum(len(c) for c in stages.values()), "stages": stages}
        data = {"check_mode": self.check_mode, "hosts": hosts, "failed": self.failed,
                "unreachable": sorted(set(self.unreachable)),
                "summary": {"hosts": len(hosts), "hosts_changing": sum(1 for h in hosts.values() if h["changes"]),
                            "changes": sum(h["changes"] for h in hosts.values())}}
        everyone = sorted(set(hosts) | set(self.failed) | set(self.unreachable))
        drains = dict((host, host_drain(data, host)) for host in everyone)
        data["disruption"] = {
            "drain": [h for h in everyone if drains[h]["drain"]],
            "drain_why": dict((h, d["why"]) for h, d in drains.items() if d["drain"]),
            "reboot": sorted(self.reboots),
            "driver_restart": sorted(self.driver_restarts),
        }
        return data


def _short(value):
    text = json.dumps(value, sort_keys=True, default=str)
    return value if len(text) <= 200 else text[:200] + "..."


def _diffs(diff):
    out = []
    for d in diff if isinstance(diff, list) else ([diff] if isinstance(diff, dict) else []):
        entry = {}
        for key in ("before_header", "after_header"):
            if d.get(key):
                entry[key] = str(d[key])
        for key in ("before", "after"):
            if key in d:
                value = d[key]
                text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
                entry[key] = text if len(text) <= DIFF_LIMIT else text[:DIFF_LIMIT] + "\n... (cut)"
        if d.get("prepared"):
            entry["prepared"] = str(d["prepared"])[:DIFF_LIMIT]
        if entry:
            out.append(entry)
    return out


def markdown(plan):
    """The plan as Markdown: a summary, then per host and stage each change (ports before -> after)."""
    s = plan["summary"]
    lines = ["# Fabric plan", "",
             "%s. %d hosts, %d would change (%d changes)." % (
                 "Check mode: nothing was changed" if plan.get("check_mode") else "NOT a check-mode run",
                 s["hosts"], s["hosts_changing"], s["changes"]), ""]
    d = plan.get("disruption") or {}
    if d:
        lines += [
            "- Would be drained (with rdma_fabric_slurm_drain or rdma_fabric_k8s_drain and this plan as "
            "rdma_fabric_drain_plan): %s" % (", ".join("%s (%s)" % (h, d["drain_why"][h]) for h in d["drain"]) or "none"),
            "- Would reboot: %s" % (", ".join(d["reboot"]) or "none"),
            "- Would restart the RDMA driver stack (openibd): %s" % (", ".join(d["driver_restart"]) or "none"),
            ""]
    for host, h in sorted(plan["hosts"].items()):
        lines.append("## %s: %s" % (host, "%d changes" % h["changes"] if h["changes"] else "nothing to change"))
        for stage, changes in h["stages"].items():
            lines += ["", "### %s" % stage, ""]
            for c in changes:
                label = c["task"] + (" (%s)" % json.dumps(c["item"], sort_keys=True, default=str) if "item" in c else "")
                lines.append("- %s" % label)
                for port, p in sorted((c.get("ports") or {}).items()):
                    keys = [k for k, v in (p.get("changes") or {}).items() if v]
                    for k in keys:
                        lines.append("  - %s %s: %s -> %s" % (port, k, json.dumps((p.get("before") or {}).get(k)),
                                                              json.dumps((p.get("after") or {}).get(k))))
                for d in c.get("diff") or []:
                    where = d.get("after_header") or d.get("before_header")
                    if where:
                        lines.append("  - %s" % where)
        lines.append("")
    for host, fails in sorted(plan["failed"].items()):
        for f in fails:
            lines.append("- FAILED %s (%s, %s): %s" % (host, f["stage"], f["task"], f["message"]))
    for host in plan["unreachable"]:
        lines.append("- UNREACHABLE %s" % host)
    return "\n".join(lines).rstrip() + "\n"
