# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.node_pools: hostvars read once, pools computed once (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.modules.node_pools import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import ControllerAction, check_var_name
from ansible_collections.rdma.fabric.plugins.plugin_utils.hostvars import read_hosts
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_stack import stack_settings
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import ON_NO_RDMA, nccl_env
from ansible_collections.rdma.fabric.plugins.plugin_utils.node_pools import node_pools

NCCL_OPTIONS = ("link_layers", "devices", "include_soft", "include_vfs", "socket_ifname", "gid_index", "tc",
                "on_no_rdma", "extra")


def check_nccl(nccl):
    """The ``nccl`` options with ``on_no_rdma`` defaulted, every one checked before any pool is worked out."""
    bad = sorted(str(k) for k in set(nccl) - set(NCCL_OPTIONS))
    if bad:
        raise RdmaFactsError("nccl: unknown option(s) %s; allowed: %s" % (", ".join(bad), ", ".join(NCCL_OPTIONS)))
    options = dict(nccl)
    options.setdefault("on_no_rdma", "disable")
    if options["on_no_rdma"] not in ON_NO_RDMA:
        raise RdmaFactsError("nccl.on_no_rdma: %r is not allowed; allowed: %s" % (options["on_no_rdma"], ", ".join(ON_NO_RDMA)))
    try:  # the rules of nccl_env on a host without ports: every option's check, whatever the pools hold
        nccl_env({"devices": []}, **dict(options, on_no_rdma="disable"))
    except RdmaFactsError as e:
        raise RdmaFactsError("nccl: %s" % e)
    return options


def pool_result(hosts, facts_by_host, nccl=None, node_names=None, k8s=None):
    """The module's return values from ``{host: rdma facts}`` (shared with the unit tests)."""
    options = None if nccl is None else check_nccl(nccl)
    pools = node_pools(facts_by_host, hosts)
    out_pools = {}
    for name, pool in pools.pools.items():
        members = pool["hosts"]
        entry = {"name": name, "hosts": members, "count": len(members),
                 "label": members[0] if len(members) == 1 else "%s and %d more" % (members[0], len(members) - 1),
                 "facts": pool["facts"]}
        out_pools[name] = entry
    for item in pools.summary():
        out_pools[item["name"]]["ports"] = item["ports"]
    if options is not None:
        for name, entry in out_pools.items():
            try:
                entry["nccl_env"] = nccl_env(entry["facts"], **options)
            except RdmaFactsError as e:
                raise RdmaFactsError("nccl: pool %s (%s): %s" % (name, entry["label"], e))
    result = {"changed": False, "pools": out_pools, "host_pool": pools.host_pool, "missing": pools.missing}
    if node_names is not None:
        result["node_names"] = node_names
    if k8s is not None:
        stacks = dict((h, ((facts_by_host.get(h) or {}).get("stack") or {}).get("flavor")) for h in pools.host_pool)
        result["k8s"] = stack_settings(out_pools, node_names or dict((h, h) for h in hosts), k8s, stacks=stacks)
        # shown by Ansible as warnings, each once
        result["warnings"] = ["k8s_rdma_stack: %s%s" % (w, "" if w.endswith(".") else ".") for w in result["k8s"]["warnings"]]
    return result


class ActionModule(ControllerAction):
    NAME = "node_pools"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def run_on_controller(self, args, task_vars):
        hosts = list(args["hosts"])
        name_var = args.get("node_name_var")
        if name_var is not None:
            check_var_name(name_var, "node_name_var")
        read = read_hosts(task_vars, hosts, variables=[name_var] if name_var else (), facts=("rdma", "nodename"))
        unknown = [h for h in hosts if not read[h]["known"]]
        if unknown:
            raise ValueError("hosts: not in the inventory: %s" % ", ".join(unknown[:20]))
        facts = dict((h, read[h]["facts"]["rdma"]) for h in hosts)
        node_names = None
        if name_var:
            node_names = dict((h, read[h]["vars"].get(name_var) or read[h]["facts"]["nodename"] or h) for h in hosts)
        return pool_result(hosts, facts, nccl=args.get("nccl"), node_names=node_names, k8s=args.get("k8s"))
