# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.validation_results (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.modules.validation_results import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import read_hosts


def collect(plan, records, check_mode=False):
    """``(results, summary)`` of a plan; ``records``: ``{host: {run id: record}}`` (see fabric_validate.collect_results)."""
    if not isinstance(plan.get("runs"), list) or not isinstance(plan.get("results"), list):
        raise fv.ValidateError("plan: must be the plan returned by rdma.fabric.validation_plan (runs, results)")
    if check_mode:
        runs = [e for run in plan["runs"] for e in fv.run_result(run, check_mode=True)]
    else:
        runs = fv.collect_results(plan, records)
    results = list(plan["results"]) + runs
    return results, fv.summarize(results)


def write_json(dest, summary, results):
    """validation.json in dest, atomically; returns its path."""
    if not os.path.isdir(dest):
        os.makedirs(dest, 0o755)
    path = os.path.join(dest, "validation.json")
    fd, tmp = tempfile.mkstemp(prefix=".validation.json.", dir=dest)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump({"summary": summary, "validation": results}, f, indent=4, sort_keys=True)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.rename(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        del tmp
        _validation, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        plan = args["plan"]
        check_mode = bool(self._task.check_mode)
        records = {}
        if not check_mode:
            hosts = []
            for run in plan.get("runs") or []:
                hosts.extend((run["server"]["host"], run["client"]["host"]))
            hosts = list(dict.fromkeys(hosts))
            read = read_hosts(task_vars or {}, hosts, data=(args["record_var"],))
            records = dict((h, read[h]["vars"].get(args["record_var"]) or {}) for h in hosts)
        try:
            results, summary = collect(plan, records, check_mode=check_mode)
            path = os.path.join(args["dest"], "validation.json") if args["dest"] else None
            if args["dest"] and not check_mode:
                path = write_json(args["dest"], summary, results)
        except fv.ValidateError as e:
            raise AnsibleActionFail("rdma.fabric.validation_results: %s" % e)
        except (IOError, OSError) as e:
            raise AnsibleActionFail("rdma.fabric.validation_results: dest: cannot write validation.json: %s" % e)
        result.update(changed=False, results=results, summary=summary, path=path)
        return result
