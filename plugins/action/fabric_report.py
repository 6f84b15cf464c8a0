# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.fabric_report: the report built and written on the controller (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import datetime
import json
import os

from ansible_collections.rdma.fabric.plugins.modules.fabric_report import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_plan
from ansible_collections.rdma.fabric.plugins.plugin_utils import report as rpt
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import (
    ControllerAction,
    check_file_mode,
    check_file_name,
    check_folder,
    read_bytes,
    write_atomic,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import read_hosts
from ansible_collections.rdma.fabric.plugins.plugin_utils.node_pools import node_pools

EXTENSIONS = {"json": "json", "md": "md", "html": "html"}
HOST_DATA = ("rdma_report_ping", "rdma_report_qos")
VALIDATION_VAR = "rdma_validate_results"


class ReportError(ValueError):
    """Bad input; the message names the option and the allowed values."""


def _mode(mode):
    try:
        return check_file_mode(mode)
    except ValueError as e:
        raise ReportError(str(e))


def validation_from_file(path):
    """The ``validation`` list of a validation.json (rdma_validate role), [] when there is none."""
    if not path or not os.path.isfile(path):
        return []
    try:
        with open(path) as f:
            data = json.load(f)
    except (IOError, OSError, ValueError) as e:
        raise ReportError("validation_file: %s cannot be read as JSON: %s" % (path, e))
    results = data.get("validation") if isinstance(data, dict) else None
    if not isinstance(results, list):
        raise ReportError("validation_file: %s has no 'validation' list" % path)
    return results


def plan_from_file(path):
    """``(plan, warning)``: the fabric plan at ``path`` (fabric-plan.json), or None and why it is left out.

    An optional part of the report: a plan that cannot be read or is not a fabric plan gives a warning
    and the report without its "Planned changes", never a failed task.
    """
    if not path:
        return None, None
    left_out = "the report is written without its planned changes"
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except (IOError, OSError, ValueError, RecursionError) as e:
        return None, "plan_file: %s cannot be read as JSON (%s); %s" % (path, e, left_out)
    try:
        return fabric_plan.check(data), None
    except fabric_plan.FabricPlanError as e:
        return None, "plan_file: %s is not a fabric plan as the fabric_plan callback writes it (%s); %s" % (path, e, left_out)


def run_report(args, host_values=None, validation=None, check_mode=False, diff=False):
    """Build and write the report; the module's return values (shared with the unit tests).

    ``host_values``: with ``hosts`` a list, ``{host: {"rdma", "gpudirect", "ping", "qos"}}`` as read from hostvars.
    ``validation``: the results to use when ``args["validation"]`` is None (found in hostvars), else the file's.
    """
    base = args["basename"]
    try:
        check_file_name(base, "basename")
        dest = check_folder(args["dest"], "dest")
    except ValueError as e:
        raise ReportError(str(e))
    mode = _mode(args["mode"])
    if os.path.exists(dest) and not os.path.isdir(dest):
        raise ReportError("dest: %s exists and is not a folder" % dest)
    hosts = args["hosts"]
    pools = None
    if isinstance(hosts, dict):
        for name, value in hosts.items():
            if value is not None and not isinstance(value, dict):
                raise ReportError("hosts: the value for %s must be a dictionary (reachable, message, rdma, gpudirect, qos)" % name)
        inputs = hosts
    elif isinstance(hosts, list) and all(isinstance(h, str) for h in hosts):
        inputs = rpt.host_inputs(hosts, host_values or {}, live_hosts=args.get("live_hosts"), reads=args.get("reads"))
        if args.get("pools", True):
            groups = node_pools(dict((h, (inputs[h] or {}).get("rdma")) for h in hosts), hosts)
            pools = {"pools": groups.summary(), "host_pool": groups.host_pool}
    else:
        raise ReportError("hosts: must be a list of inventory host names or a dictionary of per-host input keyed by host")
    if args.get("validation") is not None:
        results = args["validation"]
    elif validation is not None:
        results = validation
    else:
        results = validation_from_file(args.get("validation_file"))

    plan, plan_warning = plan_from_file(args.get("plan_file"))
    generated_at = args.get("generated_at") or datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
    report = rpt.build_report(inputs, results, generated_at=generated_at, title=args["title"], pools=pools,
                              rollout=args.get("rollout"), plan=plan)
    paths = dict((fmt, os.path.join(dest, "%s.%s" % (base, EXTENSIONS[fmt]))) for fmt in args["formats"])
    contents = dict((fmt, rpt.render(report, fmt).encode("utf-8")) for fmt in args["formats"])
    changed_files = [fmt for fmt in args["formats"] if read_bytes(paths[fmt]) != contents[fmt]]
    result = dict(
        changed=bool(changed_files), paths=paths, changed_files=changed_files, summary=report["summary"],
        summary_lines=rpt.summary_lines(report, paths.get("html") or next(iter(paths.values()), None)),
        problems=report["problems"][:rpt.LISTED], problem_count=len(report["problems"]),
    )
    if plan_warning:
        result["warnings"] = [plan_warning]
    if diff:
        json_path = os.path.join(dest, "%s.json" % base)
        before = read_bytes(json_path)
        result["diff"] = {"before_header": json_path, "after_header": json_path,
                          "before": before.decode("utf-8", "replace") if before is not None else "",
                          "after": contents["json"].decode("utf-8") if "json" in contents else rpt.render_json(report)}
    if check_mode or not changed_files:
        return result
    if not os.path.isdir(dest):
        os.makedirs(dest, 0o755)
    written = []
    for fmt in changed_files:
        try:
            write_atomic(paths[fmt], contents[fmt], mode)
        except (IOError, OSError) as e:
            raise ReportError("cannot write %s: %s (written before the error: %s)" % (paths[fmt], e, ", ".join(written) or "none"))
        written.append(paths[fmt])
    return result


class ActionModule(ControllerAction):
    NAME = "fabric_report"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def run_on_controller(self, args, task_vars):
        hosts = args["hosts"]
        host_values = None
        validation = None
        if isinstance(hosts, list):
            wanted = [h for h in hosts if isinstance(h, str)]
            # One pass over the hosts' variables: facts, registered results, and this run's validation
            # results (set on every host of the validation play; the first host that has them will do).
            read = read_hosts(task_vars, wanted, facts=("rdma", "gpudirect"), data=HOST_DATA + (VALIDATION_VAR,))
            host_values = {}
            for host in wanted:
                entry = read[host]
                host_values[host] = {"rdma": entry["facts"]["rdma"], "gpudirect": entry["facts"]["gpudirect"],
                                     "ping": entry["vars"].get("rdma_report_ping"), "qos": entry["vars"].get("rdma_report_qos")}
                if validation is None and isinstance(entry["vars"].get(VALIDATION_VAR), list):
                    validation = entry["vars"][VALIDATION_VAR]
        return run_report(args, host_values=host_values, validation=validation,
                          check_mode=bool(self._task.check_mode), diff=bool(self._task.diff))
