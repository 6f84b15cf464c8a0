# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The lab's time budget: each Molecule scenario's steps against what they may take.

    python3 benchmarks/lab_budget.py [--logs .cache/molecule-logs] [--budget benchmarks/lab_budget.json]
                                     [--history] [--record]

`tools/lab/run-molecule-all` writes, after every scenario it runs,
``.cache/molecule-logs/<scenario>.steps.json`` (tools/lab/step-times: each step
of the scenario's test_sequence with its seconds and result) and prints this
table at the end of its run. The table lists, per scenario and per step
(create, prepare, converge, side_effect, idempotence, verify, cleanup,
destroy; syntax and the first destroy folded into "other"), the seconds of the
last run beside the budget in benchmarks/lab_budget.json, and marks a step
that took more than its budget plus 20 % (and 15 s): the next slow-down shows
where it came from.

Each step of a run also names its slowest tasks (step-times: from each task's
banner to the next); the tasks of a step over budget are printed under the
table, and --slowest N prints the N slowest tasks of the last runs over all
scenarios: where to cut when the whole run is too long.

--save "what was measured" writes the last run's figures as the new budget
(rounded up to 5 s). --record appends the last run of every scenario to
``.cache/molecule-logs/history.jsonl`` (run-molecule-all does it after each
run); --history prints, per scenario, the total of each recorded run.

The budget file holds the figures of a measured `make test` (its "measured"
key says which run); update it with a new measurement when a scenario grows
on purpose, in the same commit. A measurement, not a pass/fail test: the exit
status is 0 whatever the figures.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = ("create", "prepare", "converge", "side_effect", "idempotence", "verify", "cleanup", "destroy")
SLACK = 0.2  # a step is over budget past budget * (1 + SLACK) and budget + MIN_OVER seconds
MIN_OVER = 15


def load_runs(logs):
    """{scenario: steps document} of the last run of each scenario found in ``logs``."""
    runs = {}
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        if name.endswith(".steps.json"):
            try:
                with open(os.path.join(logs, name)) as f:
                    doc = json.load(f)
            except (IOError, ValueError) as e:
                sys.stderr.write("lab_budget: %s unreadable (%s), left out\n" % (name, e))
                continue
            runs[doc.get("scenario") or name[:-len(".steps.json")]] = doc
    return runs


def per_step(doc):
    """{step: seconds} of one run; the leading destroy and syntax go to "other", the final destroy to destroy."""
    out = {}
    seen_create = False
    for s in doc.get("steps", []):
        step = s.get("step", "").replace("-", "_")
        if step == "create":
            seen_create = True
        key = step if step in STEPS and (seen_create or step != "destroy") else "other"
        out[key] = round(out.get(key, 0) + float(s.get("seconds") or 0), 1)
    return out


def cpu_total(doc):
    """CPU seconds of a run (controller and VMs), or None when the run did not record them."""
    cpu = doc.get("cpu_seconds") or {}
    vals = [v for v in cpu.values() if isinstance(v, (int, float))]
    return round(sum(vals), 1) if vals else None


def failed_steps(doc):
    return [s["step"] for s in doc.get("steps", []) if s.get("result") not in ("Successful", "Skipped")]


def seconds_text(value):
    """'-' for a figure that is not there, else whole seconds."""
    return "-" if value is None else "%.0f" % value


def table(runs, budget):
    cols = STEPS + ("other",)
    head = "%-22s" % "scenario" + "".join("%12s" % c for c in cols) + "%10s%8s" % ("total", "cpu-s")
    lines = [head, "-" * len(head)]
    over = []
    total_run = total_budget = total_cpu = 0.0
    for scenario in sorted(set(runs) | set(budget)):
        got = per_step(runs[scenario]) if scenario in runs else {}
        want = budget.get(scenario, {})
        cells = []
        for c in cols:
            g, w = got.get(c), want.get(c)
            if g is None and w is None:
                cells.append("%12s" % "")
                continue
            mark = ""
            if g is not None and w is not None and g > w * (1 + SLACK) and g > w + MIN_OVER:
                mark = "!"
                over.append((scenario, c, "%s %s: %.0f s, budget %.0f s" % (scenario, c, g, w)))
            cells.append("%12s" % ("%s/%s%s" % (seconds_text(g), seconds_text(w), mark)))
        tg = sum(got.values()) if got else None
        tw = sum(v for v in want.values() if isinstance(v, (int, float))) if want else None
        total_run += tg or 0
        total_budget += tw or 0
        failed = failed_steps(runs[scenario]) if scenario in runs else []
        cpu = cpu_total(runs[scenario]) if scenario in runs else None
        total_cpu += cpu or 0
        lines.append("%-22s" % (scenario + (" FAILED" if failed else "")) + "".join(cells)
                     + "%10s" % ("%s/%s" % (seconds_text(tg), seconds_text(tw))) + "%8s" % seconds_text(cpu))
    lines.append("-" * len(head))
    lines.append("%-22s%s%10s%8.0f" % ("all scenarios", " " * 12 * len(cols), "%.0f/%.0f" % (total_run, total_budget),
                                       total_cpu))
    lines.append("(each cell: seconds of the last run / budget; ! over budget by more than %d %% and %d s;"
                 % (SLACK * 100, MIN_OVER))
    lines.append(" cpu-s: CPU seconds of the scenario's Ansible and its VMs' QEMU processes, what it costs a"
                 " machine however loaded)")
    return lines, over


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", default=os.path.join(ROOT, ".cache", "molecule-logs"))
    ap.add_argument("--budget", default=os.path.join(ROOT, "benchmarks", "lab_budget.json"))
    ap.add_argument("--record", action="store_true", help="append the last runs to the logs' history.jsonl")
    ap.add_argument("--history", action="store_true", help="print the recorded runs' totals per scenario")
    ap.add_argument("--save", metavar="MEASURED", help="write the last runs as the budget, saying what was measured")
    ap.add_argument("--slowest", type=int, default=0, metavar="N",
                    help="print the N slowest tasks of the last runs (all scenarios)")
    ap.add_argument("scenarios", nargs="*", help="only these scenarios (default: every one with a run or a budget)")
    args = ap.parse_args()
    runs = load_runs(args.logs)
    try:
        with open(args.budget) as f:
            budget_doc = json.load(f)
    except (IOError, ValueError) as e:
        sys.stderr.write("lab_budget: no budget read from %s (%s)\n" % (args.budget, e))
        budget_doc = {}
    budget = budget_doc.get("scenarios", {})
    if args.scenarios:
        runs = dict((k, v) for k, v in runs.items() if k in args.scenarios)
        budget = dict((k, v) for k, v in budget.items() if k in args.scenarios)
    history = os.path.join(args.logs, "history.jsonl")
    if args.record:
        with open(history, "a") as f:
            for doc in runs.values():
                f.write(json.dumps(doc, sort_keys=True) + "\n")
    if args.history:
        if not os.path.exists(history):
            print("no history in %s" % history)
            return 0
        with open(history) as f:
            for line in f:
                doc = json.loads(line)
                steps = per_step(doc)
                print("%-22s %s %6.0f s  %s" % (doc["scenario"], doc.get("started"), sum(steps.values()),
                                                " ".join("%s=%.0f" % kv for kv in sorted(steps.items()))))
        return 0
    if args.save:
        doc = {"measured": args.save, "scenarios": dict(
            (name, dict((k, int(-(-v // 5) * 5)) for k, v in per_step(run).items()))
            for name, run in sorted(runs.items()) if not failed_steps(run))}
        with open(args.budget + ".tmp", "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
        os.rename(args.budget + ".tmp", args.budget)
        budget = doc["scenarios"]
        budget_doc = doc
    lines, over = table(runs, budget)
    print("Lab time budget (%s; budget: %s)" % (args.logs, budget_doc.get("measured", "none")))
    print("\n".join(lines))
    for scenario, step, text in over:
        print("over budget: " + text)
        for t in slowest_tasks({scenario: runs[scenario]}, step)[:3]:
            print("    %6.0f s  %s" % (t["seconds"], task_text(t)))
    if args.slowest:
        print("The %d slowest tasks of the last runs:" % args.slowest)
        for t in slowest_tasks(runs)[:args.slowest]:
            print("%6.0f s  %-22s %-12s %s" % (t["seconds"], t["scenario"], t["step"], task_text(t)))
    return 0


def slowest_tasks(runs, step=None):
    """The tasks step-times timed in these runs (of one step, or of all), slowest first."""
    found = []
    for scenario, doc in runs.items():
        for s in doc.get("steps", []):
            if step is None or s["step"] == step:
                found.extend(dict(t, scenario=scenario, step=s["step"]) for t in s.get("slowest", []))
    return sorted(found, key=lambda t: -t["seconds"])


def task_text(t):
    return "%s (play: %s)" % (t["task"], t.get("play")) if t.get("play") else t["task"]


if __name__ == "__main__":
    sys.exit(main())
