# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.validation_plan: hostvars read once, the whole plan in one task (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


from ansible_collections.rdma.fabric.plugins.modules.validation_plan import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import ControllerAction
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import limit_hosts, read_hosts

HOST_VAR_PREFIX = "rdma_validate_"
# 0 means "none" for these (as the role's variables say).
ZERO_IS_NONE = ("min_bw_gbps", "max_latency_us", "max_latency_us_soft")
PLAN_OPTIONS = ("topology", "tests", "base_port", "min_bw_fraction", "min_bw_fraction_soft", "min_bw_gbps",
                "max_latency_us", "max_latency_us_soft", "lat_iterations", "lat_iterations_soft", "bw_iterations",
                "bw_iterations_soft", "bw_size", "rping_count", "neighbours", "concurrency")


def plan_options(args):
    out = dict((name, args[name]) for name in PLAN_OPTIONS)
    for name in ZERO_IS_NONE:
        if out[name] == 0:
            out[name] = None
    return out


def make_plan(args, host_values):
    """The module's return values from ``{host: {"rdma": facts, "device", "port", "data_ip", "switch"}}``."""
    options = plan_options(args)
    try:
        fv.check_options(timeout=args["timeout"], connect_retries=args["connect_retries"],
                         results_dir=args["results_dir"], **options)
    except fv.ValidateError as e:
        raise fv.ValidateError(args["var_prefix"] + str(e))
    errors = []
    for host in args["hosts"]:
        errors.extend(fv.check_host_vars(host, host_values.get(host) or {}))
    if errors:
        raise fv.ValidateError("; ".join(errors[:20]) + ("; and %d more" % (len(errors) - 20) if len(errors) > 20 else ""))
    if args["check_only"]:
        return {"changed": False}
    live = set(args["hosts"] if args.get("live_hosts") is None else args["live_hosts"])
    reachable = args.get("reachable_hosts")
    if reachable is not None:
        live &= set(reachable)
    endpoints = {}
    switch_of = {}
    for host in args["hosts"]:
        values = host_values.get(host) or {}
        if values.get("switch") not in (None, ""):
            switch_of[host] = str(values["switch"])
        if host not in live:
            continue
        port = values.get("port")
        endpoints[host] = fv.select_endpoint(values.get("rdma"), host=host, device=values.get("device") or None,
                                             port=(int(port) or None) if port not in (None, "") else None,
                                             data_ip=values.get("data_ip") or None)
    plan = fv.validation_plan(endpoints, args["hosts"], switch_of=switch_of or None, reachable=reachable, **options)
    # Each live host's endpoint (device, port, GID index, address): the workload stage starts its ranks there.
    plan["endpoints"] = endpoints
    return {"changed": False, "plan": plan}


class ActionModule(ControllerAction):
    NAME = "validation_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def run_on_controller(self, args, task_vars):
        names = [HOST_VAR_PREFIX + name for name in fv.HOST_VARS]
        if args.get("reachable_hosts") is None:
            # the hosts this run may touch: its --limit (a slice of a sliced job), else every host
            args = dict(args, reachable_hosts=limit_hosts(task_vars, self._loader))
        read = read_hosts(task_vars, args["hosts"], variables=names, facts=() if args["check_only"] else ("rdma",))
        # A host's own variables (inventory, extra vars) win; else the value this task sees when it does not
        # come from this host's inventory (role and play variables, the role's defaults), the same for all.
        me = task_vars.get("inventory_hostname")
        mine = read_hosts(task_vars, [me], variables=names)[me]["vars"] if me else {}
        fallback = dict((name, self._templar.template(task_vars[HOST_VAR_PREFIX + name]))
                        for name in fv.HOST_VARS
                        if HOST_VAR_PREFIX + name in task_vars and HOST_VAR_PREFIX + name not in mine)
        host_values = {}
        for host in args["hosts"]:
            entry = read[host]
            if not entry["known"]:
                raise ValueError("hosts: not in the inventory: %s" % host)
            values = dict((name, entry["vars"].get(HOST_VAR_PREFIX + name, fallback.get(name))) for name in fv.HOST_VARS)
            values["rdma"] = entry["facts"].get("rdma")
            host_values[host] = values
        return make_plan(args, host_values)
