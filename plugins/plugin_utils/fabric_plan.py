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

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import natural_key
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


class FabricPlan(object):
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
                "unreachable": sorted(set(self.unreachable)), "summary": summary(hosts)}
        everyone = sorted(set(hosts) | set(self.failed) | set(self.unreachable))
        drains = dict((host, host_drain(data, host)) for host in everyone)
        data["disruption"] = {
            "drain": [h for h in everyone if drains[h]["drain"]],
            "drain_why": dict((h, d["why"]) for h, d in drains.items() if d["drain"]),
            "reboot": sorted(self.reboots),
            "driver_restart": sorted(self.driver_restarts),
        }
        return data


def summary(hosts):
    """The plan's counts from its ``hosts``: hosts, hosts that would change, changes."""
    return {"hosts": len(hosts), "hosts_changing": sum(1 for h in hosts.values() if h["changes"]),
            "changes": sum(h["changes"] for h in hosts.values())}


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


class FabricPlanError(ValueError):
    """A plan (fabric-plan.json as loaded) that does not have the shape :meth:`FabricPlan.as_dict` writes."""


def _need(ok, where, what):
    if not ok:
        raise FabricPlanError("%s: %s" % (where, what))


def _is_failure(entry):
    return isinstance(entry, dict) and all(isinstance(entry.get(k), str) for k in ("stage", "task", "message"))


def check(data):
    """The plan ``data`` (fabric-plan.json as loaded) in the shape :meth:`FabricPlan.as_dict` writes, else FabricPlanError naming where.

    As lenient as site.yml's ``rdma_fabric_drain_plan`` (plugin_utils/rollout.py): ``failed``, ``unreachable``,
    ``summary`` and ``disruption`` may be missing (the first three are filled in: none, none, counted from
    ``hosts``); what is there must have its shape. Returns a new dictionary; ``data`` is left as it is.
    """
    _need(isinstance(data, dict), "the plan", "not a JSON object")
    data = dict(data)
    data.setdefault("failed", {})
    data.setdefault("unreachable", [])
    _need(data.get("check_mode") is None or isinstance(data["check_mode"], bool), "check_mode", "not true, false or null")
    _need(data.get("generated_at") is None or isinstance(data.get("generated_at"), str), "generated_at", "not a string")
    hosts = data.get("hosts")
    _need(isinstance(hosts, dict), "hosts", "not a dictionary keyed by host")
    for host, h in hosts.items():
        where = "hosts.%s" % host
        _need(isinstance(h, dict) and isinstance(h.get("changes"), int) and not isinstance(h.get("changes"), bool)
              and isinstance(h.get("stages"), dict), where, "not {changes: a number, stages: a dictionary}")
        for stage, changes in h["stages"].items():
            _need(isinstance(changes, list), "%s.stages.%s" % (where, stage), "not a list of changes")
            for i, c in enumerate(changes):
                at = "%s.stages.%s[%d]" % (where, stage, i)
                _need(isinstance(c, dict) and isinstance(c.get("task"), str), at, "not a change with a task name")
                ports = c.get("ports", {})
                _need(isinstance(ports, dict) and all(
                    isinstance(p, dict) and all(isinstance(p.get(k, {}), dict) for k in PORT_KEYS) for p in ports.values()),
                    at + ".ports", "not {port: {before, after, changes: dictionaries}}")
                _need(isinstance(c.get("diff", []), list) and all(isinstance(d, dict) for d in c.get("diff", [])),
                      at + ".diff", "not a list of dictionaries")
    failed = data.get("failed")
    _need(isinstance(failed, dict) and all(isinstance(fs, list) and all(_is_failure(f) for f in fs) for fs in failed.values()),
          "failed", "not {host: [{stage, task, message}]}")
    _need(isinstance(data.get("unreachable"), list) and all(isinstance(h, str) for h in data["unreachable"]),
          "unreachable", "not a list of host names")
    if "summary" not in data:
        data["summary"] = summary(hosts)
    counts = data["summary"]
    _need(isinstance(counts, dict) and all(isinstance(counts.get(k), int) for k in ("hosts", "hosts_changing", "changes")),
          "summary", "not {hosts, hosts_changing, changes: numbers}")
    d = data.get("disruption")
    if d is not None:
        _need(isinstance(d, dict) and all(isinstance(d.get(k), list) and all(isinstance(h, str) for h in d[k])
                                          for k in ("drain", "reboot", "driver_restart"))
              and isinstance(d.get("drain_why"), dict) and all(h in d["drain_why"] for h in d["drain"]),
              "disruption", "not {drain, reboot, driver_restart: host lists, drain_why: {host: why}}")
    return data


# The rows both renderings show (Markdown here, HTML in plugin_utils/report.py): one rule each.
def headline(plan):
    """The plan's first sentence: check mode or not, hosts, hosts that would change, changes."""
    s = plan["summary"]
    return "%s. %d hosts, %d would change (%d changes)." % (
        "Check mode: nothing was changed" if plan.get("check_mode") else "NOT a check-mode run",
        s["hosts"], s["hosts_changing"], s["changes"])


def disruption_rows(plan):
    """``[(what, [host (why), ...]), ...]``: the hosts that would be drained, rebooted, have the driver restarted."""
    d = plan.get("disruption")
    if not d:
        return []
    return [("Would be drained (with rdma_fabric_slurm_drain or rdma_fabric_k8s_drain and this plan as "
             "rdma_fabric_drain_plan)", ["%s (%s)" % (h, d["drain_why"][h]) for h in d["drain"]]),
            ("Would reboot", list(d["reboot"])),
            ("Would restart the RDMA driver stack (openibd)", list(d["driver_restart"]))]


def host_failures(plan, host):
    """The lines saying that ``host`` failed (stage, task, message) or was unreachable in the plan."""
    lines = ["FAILED %s (%s, %s): %s" % (host, f["stage"], f["task"], f["message"]) for f in plan["failed"].get(host, [])]
    if host in plan["unreachable"]:
        lines.append("UNREACHABLE %s" % host)
    return lines


def host_groups(plan):
    """The plan's hosts in the order the renderings show them: ``stopped`` (failed or unreachable in the plan),
    ``changing`` (would change) and ``unchanged`` (nothing to change), each in natural name order."""
    stopped = set(plan["failed"]) | set(plan["unreachable"])
    hosts = plan["hosts"]
    groups = {"stopped": sorted(stopped, key=natural_key), "changing": [], "unchanged": []}
    for host in sorted(hosts, key=natural_key):
        if host not in stopped:
            groups["changing" if hosts[host]["changes"] else "unchanged"].append(host)
    return groups


def host_status(plan, host):
    """``unreachable``, ``failed`` (in the plan), ``changes`` (would change) or ``unchanged``."""
    if host in plan["unreachable"]:
        return "unreachable"
    if host in plan["failed"]:
        return "failed"
    return "changes" if (plan["hosts"].get(host) or {}).get("changes") else "unchanged"


def host_title(plan, host):
    """What a host's heading says: how many changes, and whether it failed or was unreachable in the plan."""
    count = (plan["hosts"].get(host) or {}).get("changes") or 0
    status = host_status(plan, host)
    what = "%d changes" % count if count else "nothing to change"
    return "%s, %s" % (status.upper(), what) if status in ("unreachable", "failed") else what


def change_label(change):
    """A change's task name, with its loop item."""
    return change["task"] + (" (%s)" % json.dumps(change["item"], sort_keys=True, default=str) if "item" in change else "")


def port_rows(change):
    """``[(port, setting, before, after)]`` (values as JSON) for each port setting the change would alter."""
    rows = []
    for port, p in sorted((change.get("ports") or {}).items()):
        for key, differs in (p.get("changes") or {}).items():
            if differs:
                rows.append((port, key, json.dumps((p.get("before") or {}).get(key), sort_keys=True, default=str),
                             json.dumps((p.get("after") or {}).get(key), sort_keys=True, default=str)))
    return rows


def diff_headers(change):
    """What each diff of the change is about (a file, mostly): its after header, else its before header."""
    return [d.get("after_header") or d.get("before_header") for d in change.get("diff") or []
            if d.get("after_header") or d.get("before_header")]


def markdown(plan, title="Fabric plan", level=1):
    """The plan as Markdown: a summary, the disruptions, then per host and stage each change (ports before -> after).

    Hosts that failed or were unreachable first, then those that would change; those with nothing to change in one
    line. ``title`` and ``level`` (of its heading) let the fabric report carry the plan as one of its sections.
    """
    top = "#" * level
    lines = ["%s %s" % (top, title), ""]
    if plan.get("generated_at"):
        lines += ["Planned: %s" % plan["generated_at"], ""]
    lines += [headline(plan), ""]
    rows = disruption_rows(plan)
    if rows:
        lines += ["- %s: %s" % (what, ", ".join(hosts) or "none") for what, hosts in rows] + [""]
    groups = host_groups(plan)
    for host in groups["stopped"] + groups["changing"]:
        h = plan["hosts"].get(host) or {"changes": 0, "stages": {}}
        lines.append("%s# %s: %s" % (top, host, host_title(plan, host)))
        failures = host_failures(plan, host)
        if failures:
            lines += [""] + ["- %s" % line for line in failures]
        for stage, changes in h["stages"].items():
            lines += ["", "%s## %s" % (top, stage), ""]
            for c in changes:
                lines.append("- %s" % change_label(c))
                lines += ["  - %s %s: %s -> %s" % row for row in port_rows(c)]
                lines += ["  - %s" % where for where in diff_headers(c)]
        lines.append("")
    if groups["unchanged"]:
        lines += ["%s# Nothing to change (%d hosts)" % (top, len(groups["unchanged"])), "",
                  ", ".join(groups["unchanged"]), ""]
    return "\n".join(lines).rstrip() + "\n"
