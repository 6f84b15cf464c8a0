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

DIFF_LIMIT = 2000
PORT_KEYS = ("before", "after", "changes")


class Plan(object):
    """Changes seen in a run, ``hosts[host][stage] = [change, ...]``."""

    def __init__(self):
        self.hosts = {}
        self.check_mode = None
        self.failed = {}
        self.unreachable = []

    def _stage(self, host, stage):
        return self.hosts.setdefault(host, {}).setdefault(stage, [])

    def add(self, host, stage, task, result):
        """Record one task result (a dict as the module returned it) when it would change something."""
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

    def fail(self, host, stage, task, message):
        self.failed.setdefault(host, []).append({"stage": stage, "task": task, "message": str(message)[:500]})

    def as_dict(self):
        hosts = {}
        for host in sorted(self.hosts):
            stages = dict((s, c) for s, c in self.hosts[host].items() if c)
            hosts[host] = {"changes": sum(len(c) for c in stages.values()), "stages": stages}
        return {"check_mode": self.check_mode, "hosts": hosts, "failed": self.failed,
                "unreachable": sorted(set(self.unreachable)),
                "summary": {"hosts": len(hosts), "hosts_changing": sum(1 for h in hosts.values() if h["changes"]),
                            "changes": sum(h["changes"] for h in hosts.values())}}


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
