# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.validation_results (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.rdma.fabric.plugins.modules.validation_results import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import ControllerAction, check_folder, check_var_name, write_atomic
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import read_hosts


def collect(plan, records, check_mode=False, extra=None):
    """``(results, summary)`` of a plan; ``records``: ``{host: {run id: record}}`` (see fabric_validate.collect_results).

    ``extra``: results of later stages (the workload's), after the pair tests, in the summary too.
    """
    if not isinstance(plan.get("runs"), list) or not isinstance(plan.get("results"), list):
        raise fv.ValidateError("plan: must be the plan returned by rdma.fabric.validation_plan (runs, results)")
    bad = [i for i, e in enumerate(extra or []) if not isinstance(e, dict) or not isinstance(e.get("test"), str)
           or e.get("passed") not in (True, False, None)]
    if bad:
        raise fv.ValidateError("extra: entry %d is not a result (a dict with a 'test' name and 'passed' true, false "
                               "or null)" % bad[0])
    if check_mode:
        runs = [e for run in plan["runs"] for e in fv.run_result(run, check_mode=True)]
    else:
        runs = fv.collect_results(plan, records)
    results = list(plan["results"]) + runs + list(extra or [])
    return results, fv.summarize(results)


def write_json(dest, summary, results):
    """validation.json in dest, atomically; returns its path."""
    if not os.path.isdir(dest):
        os.makedirs(dest, 0o755)
    path = os.path.join(dest, "validation.json")
    text = json.dumps({"summary": summary, "validation": results}, indent=4, sort_keys=True) + "\n"
    write_atomic(path, text.encode("utf-8"), 0o644)
    return path


class ActionModule(ControllerAction):
    NAME = "validation_results"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def run_on_controller(self, args, task_vars):
        plan = args["plan"]
        check_folder(args["dest"], "dest", empty_ok=True)
        check_var_name(args["record_var"], "record_var")
        check_mode = bool(self._task.check_mode)
        records = {}
        if not check_mode:
            hosts = []
            for run in plan.get("runs") or []:
                hosts.extend((run["server"]["host"], run["client"]["host"]))
            hosts = list(dict.fromkeys(hosts))
            read = read_hosts(task_vars, hosts, data=(args["record_var"],))
            records = dict((h, read[h]["vars"].get(args["record_var"]) or {}) for h in hosts)
        results, summary = collect(plan, records, check_mode=check_mode, extra=args["extra"])
        path = os.path.join(args["dest"], "validation.json") if args["dest"] else None
        if args["dest"] and not check_mode:
            path = write_json(args["dest"], summary, results)
        return dict(changed=False, results=results, summary=summary, path=path)
