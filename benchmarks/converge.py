# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure playbooks/site.yml on the Soft-RoCE VM lab: the first run and the idempotent second run.

    python3 benchmarks/converge.py [--inventory .lab/NAME/inventory.yml] [--keep-lab] [--runs 2]

Boots a lab of its own (RDMA_LAB_NAME=bench-converge, unless --inventory names
a running one), serves the lab's Debian mirror (molecule/site/prepare.yml),
runs molecule/site/converge.yml (site.yml with the lab's settings) twice with
the ansible.posix.json callback, and prints for each run: wall time, tasks
executed (task results over all hosts), ok / changed / failed / unreachable /
skipped counts, remote module calls per host (task results, loop items counted
one each, that ran a module on the host: not skipped, not delegated, not a
controller-only action such as set_fact or assert or the collection's own
controller actions such as validation_plan), and the validation figures; for
every run after the first, those calls task by task (host, play, task, module,
calls), so that an idempotent run shows which tasks still reach the host
(target: at most 12 per host). Then the ratio of the second run's wall time to
the first's (target: at most 0.25) and whether the second run changed anything
(target: changed=0). Stops the mirror and the lab it booted.

A measurement, not a pass/fail test: the exit status is 0 when both runs
completed, whatever the figures. TCG emulation and a shared machine make the
absolute times vary; the ratio is the figure to watch.
"""

from __future__ import absolute_import, division, print_function

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAB = os.path.join(ROOT, "tools", "lab", "lab")
SCENARIO = os.path.join(ROOT, "molecule", "site")
ANSIBLE_PLAYBOOK = os.path.join(ROOT, ".venv", "bin", "ansible-playbook")
SLOWEST = 12  # tasks listed per run, slowest first
# Actions that run on the controller only (no module call on the host). Every
# other task result that was not skipped is a remote module call, unless it was
# delegated (to the controller, the only delegation site.yml makes).
CONTROLLER_ACTIONS = frozenset(
    "ansible.builtin.%s" % a for a in (
        "set_fact", "assert", "debug", "fail", "meta", "add_host", "group_by", "include_tasks",
        "import_tasks", "include_role", "import_role", "include_vars", "set_stats", "pause", "validate_argument_spec",
        "end_play", "end_host"))
CONTROLLER_ACTIONS |= frozenset(a.rsplit(".", 1)[-1] for a in CONTROLLER_ACTIONS)


def collection_controller_actions():
    """The collection's own controller-only actions: plugins/action/*.py built on ControllerAction
    (plugin_utils/controller.py: _requires_connection False, no module runs on a host), e.g. validation_plan."""
    folder = os.path.join(ROOT, "plugins", "action")
    names = set()
    for base in sorted(os.listdir(folder)):
        if base.endswith(".py"):
            with open(os.path.join(folder, base)) as source:
                if "class ActionModule(ControllerAction)" in source.read():
                    names |= {"rdma.fabric." + base[:-3], base[:-3]}
    return frozenset(names)


CONTROLLER_ACTIONS |= collection_controller_actions()


def env_for(ephemeral, lab_name):
    env = dict(os.environ)
    env.update(
        ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
        ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"),
        MOLECULE_PROJECT_DIRECTORY=ROOT,
        MOLECULE_EPHEMERAL_DIRECTORY=ephemeral,
        RDMA_LAB_NAME=lab_name,
    )
    return env


def playbook(inventory, path, env, json_out=False):
    """Run one playbook; returns (wall seconds, rc, parsed json or None, output text)."""
    run_env = dict(env)
    if json_out:
        run_env.update(ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_CALLBACK_RESULT_FORMAT="json")
    argv = [ANSIBLE_PLAYBOOK, "-i", inventory, path]
    start = time.time()
    proc = subprocess.run(argv, cwd=ROOT, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    wall = time.time() - start
    data = None
    if json_out:
        text = proc.stdout
        try:
            data = json.loads(text[text.index("{"):])
        except ValueError:
            data = None
    return wall, proc.returncode, data, proc.stdout + proc.stderr


def _stamp(text):
    """The json callback's ISO time (``2026-11-21T07:00:00.123456Z``; no fraction when it is 0)."""
    text = text.rstrip("Z")
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f" if "." in text else "%Y-%m-%dT%H:%M:%S")


def seconds(duration):
    """Seconds between the json callback's start and end stamps (0 when absent)."""
    try:
        return (_stamp(duration["end"]) - _stamp(duration["start"])).total_seconds()
    except (KeyError, TypeError, ValueError):
        return 0.0


def figures(data):
    """Task results, per-status counts, and where the time went, from the json callback's output."""
    out = {"tasks": 0, "task_results": 0, "ok": 0, "changed": 0, "failures": 0, "unreachable": 0, "skipped": 0,
           "changed_tasks": [], "validation": [], "plays": [], "slowest": [], "remote_calls": {}, "calls_by_task": [],
           "delegated_calls": []}
    if not data:
        return out
    timed = []
    for play in data.get("plays", []):
        play_name = play.get("play", {}).get("name") or ""
        out["plays"].append((play.get("play", {}).get("name") or "", seconds(play.get("play", {}).get("duration")),
                             len(play.get("tasks", []))))
        for task in play.get("tasks", []):
            out["tasks"] += 1
            timed.append((seconds(task.get("task", {}).get("duration")), task.get("task", {}).get("name") or ""))
            for host, res in (task.get("hosts") or {}).items():
                out["task_results"] += 1
                if res.get("changed"):
                    out["changed_tasks"].append("%s: %s" % (host, task.get("task", {}).get("name")))
                delegated = res.get("_ansible_delegated_vars")
                remote = not (res.get("skipped") or delegated or res.get("action") in CONTROLLER_ACTIONS)
                if delegated and not res.get("skipped") and res.get("action") not in CONTROLLER_ACTIONS \
                        and delegated.get("ansible_connection") != "local":
                    # rdma_validate's test runs (perftest, async_status) delegate to a host of the pair: listed, not
                    # counted. (The json callback keeps the connection variables of the delegation, not its host
                    # name: a delegation to the controller is the one with a local connection.)
                    target = "%s:%s" % (delegated.get("ansible_host"), delegated.get("ansible_port"))
                    out["delegated_calls"].append((host, play_name, task.get("task", {}).get("name") or "",
                                                   res.get("action") or "", target,
                                                   max(1, int(res.get("attempts") or 1))))
                if remote:
                    calls = sum(1 for item in res.get("results") or [res]
                                if isinstance(item, dict) and not item.get("skipped"))
                    out["remote_calls"][host] = out["remote_calls"].get(host, 0) + calls
                    out["calls_by_task"].append((host, play_name, task.get("task", {}).get("name") or "",
                                                 res.get("action") or "", calls))
                name = task.get("task", {}).get("name") or ""
                if name.endswith("Show the summary") and isinstance(res.get("msg"), list):
                    out["validation"] = res["msg"]
    out["slowest"] = sorted(timed, reverse=True)[:SLOWEST]
    for host, stats in (data.get("stats") or {}).items():
        for key in ("ok", "changed", "failures", "unreachable", "skipped"):
            out[key] += stats.get(key, 0)
    return out


def print_calls(calls_by_task):
    """The remote module calls of one run, per host: play, task, module, calls (an idempotent run's list is short)."""
    hosts = sorted({host for host, _play, _task, _action, _n in calls_by_task})
    for host in hosts:
        print("    remote module calls of %s (play / task / module: calls):" % host)
        play_seen = None
        for h, play, task, action, n in calls_by_task:
            if h != host:
                continue
            if play != play_seen:
                print("      %s" % play)
                play_seen = play
            print("        %-70s %-34s %d" % (task[:70], action, n))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--inventory", help="inventory of a running lab (default: boot one)")
    parser.add_argument("--keep-lab", action="store_true", help="leave the lab this script booted running")
    parser.add_argument("--runs", type=int, default=2, help="site.yml runs (default 2)")
    args = parser.parse_args()

    lab_name = os.environ.get("RDMA_LAB_NAME", "bench-converge")
    booted = False
    if args.inventory:
        inventory = os.path.abspath(args.inventory)
    else:
        env = dict(os.environ, RDMA_LAB_NAME=lab_name)
        t0 = time.time()
        subprocess.run([LAB, "up"], env=env, check=True)
        print("lab up: %.0f s" % (time.time() - t0))
        booted = True
        inventory = os.path.join(ROOT, ".lab", lab_name, "inventory.yml")
    ephemeral = tempfile.mkdtemp(prefix="bench-converge-")
    env = env_for(ephemeral, lab_name)
    runs = []
    try:
        wall, rc, _data, text = playbook(inventory, os.path.join(SCENARIO, "prepare.yml"), env)
        if rc != 0:
            print(text[-3000:])
            raise SystemExit("prepare failed (rc %d)" % rc)
        print("prepare (mirror): %.0f s" % wall)
        for i in range(args.runs):
            wall, rc, data, text = playbook(inventory, os.path.join(SCENARIO, "converge.yml"), env, json_out=True)
            fig = figures(data)
            fig.update(run=i + 1, wall_s=round(wall, 1), rc=rc)
            runs.append(fig)
            print("run %d: rc=%d wall=%.1f s tasks=%d task_results=%d ok=%d changed=%d failed=%d unreachable=%d skipped=%d"
                  % (fig["run"], rc, wall, fig["tasks"], fig["task_results"], fig["ok"], fig["changed"],
                     fig["failures"], fig["unreachable"], fig["skipped"]))
            print("    remote module calls per host: %s" % ", ".join(
                "%s %d" % hc for hc in sorted(fig["remote_calls"].items())))
            if i > 0 or args.runs == 1:
                print_calls(fig["calls_by_task"])
                for host, play, task, action, target, attempts in fig["delegated_calls"]:
                    print("    not counted, delegated to %s (from %s): %s / %s %s (attempts %d)"
                          % (target, host, play, task[:60], action, attempts))
            for line in fig["validation"]:
                print("    " + line)
            print("    time per play (s, tasks):")
            for name, secs, ntasks in fig["plays"]:
                print("      %6.1f %3d  %s" % (secs, ntasks, name))
            print("    slowest tasks (s):")
            for secs, name in fig["slowest"]:
                print("      %6.1f  %s" % (secs, name))
            if i > 0 and fig["changed_tasks"]:
                print("    changed on run %d: %s" % (fig["run"], "; ".join(fig["changed_tasks"])))
            if data is None:
                print(text[-3000:])
    finally:
        playbook(inventory, os.path.join(SCENARIO, "cleanup.yml"), env)
        if booted and not args.keep_lab:
            subprocess.run([LAB, "down"], env=dict(os.environ, RDMA_LAB_NAME=lab_name), check=False)
    if len(runs) >= 2 and runs[0]["wall_s"]:
        ratio = runs[1]["wall_s"] / runs[0]["wall_s"]
        print("second/first wall time: %.2f (target <= 0.25: %s)" % (ratio, "met" if ratio <= 0.25 else "NOT met"))
        most = max(runs[1]["remote_calls"].values() or [0])
        print("second run remote module calls, most on one host: %d (target <= 12: %s)"
              % (most, "met" if most <= 12 else "NOT met"))
        print("second run changed: %d (target 0: %s)" % (runs[1]["changed"], "met" if runs[1]["changed"] == 0 else "NOT met"))
    print("reports: %s/reports" % ephemeral)
    return 0 if runs and all(r["rc"] == 0 for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
