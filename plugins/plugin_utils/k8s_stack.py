# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the k8s_rdma_stack role renders, joined over the node pools once (controller only).

The rules live in :mod:`k8s_rdma` (selectors, labels, CNI configurations, the role's variable checks)
and :mod:`nccl` (the NCCL environment); this module applies them to the node pools of
:mod:`node_pools` and joins the answers with the nodes: each pool's labels, resources and NCCL
settings, each node's labels, the device plugin configurations over all pools, the warnings. The
``rdma.fabric.node_pools`` action returns the result (option ``k8s``), and the role's YAML only
renders it.

``settings`` are the role's variables by their full names (``k8s_rdma_stack_shared_devices``, ...),
as the role passes them; they are checked with :func:`k8s_rdma.check_role_vars` first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import (
    check_role_vars,
    cni_config_json,
    nccl_network_interface,
    node_label_keys,
    node_labels,
    shared_dev_plugin_layout,
    shared_dev_selectors,
    sriov_vf_selectors,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import pod_nccl_env

PREFIX = "k8s_rdma_stack_"
# The role's variables this module reads (without the prefix); every one must be given.
SETTINGS = (
    "state", "include_soft_devices", "node_labels_enabled", "node_label_prefix", "shared_devices",
    "shared_devices_pools", "shared_dev_plugin_periodic_update_interval", "sriov_device_plugin_enabled",
    "sriov_resources", "networks", "nccl_enabled", "nccl_pod_interface", "nccl_network", "nccl_socket_ifname",
    "nccl_host_network", "nccl_link_layers", "nccl_gid_index", "nccl_tc", "nccl_extra_env",
)
SRIOV_DEFAULT_RESOURCE = {"resourceName": "sriov_rdma_vf", "resourcePrefix": "nvidia.com"}


def _settings(settings):
    """``{short name: value}`` of the role's variables; missing ones and bad values are errors."""
    if not isinstance(settings, dict):
        raise RdmaFactsError("k8s: must be a dict of the k8s_rdma_stack role's variables, got %s"
                             % type(settings).__name__)
    missing = [PREFIX + name for name in SETTINGS if PREFIX + name not in settings]
    if missing:
        raise RdmaFactsError("k8s: missing %s (the k8s_rdma_stack role's variables, by their full names)"
                             % ", ".join(missing))
    errors = check_role_vars(settings)
    if errors:
        raise RdmaFactsError("k8s: %s" % "; ".join(errors))
    return dict((name, settings[PREFIX + name]) for name in SETTINGS)


def pools_text(pools):
    """``name = label; ...``: the pools as the role's messages name them."""
    return "; ".join("%s = %s" % (pool["name"], pool["label"]) for pool in pools.values())


def _nodes(pool, node_names):
    return [node_names.get(host, host) for host in pool["hosts"]]


def stack_settings(pools, node_names, settings):
    """Everything the role renders, from the node pools (``pools``: the ``node_pools`` action's ``pools``, each
    with ``name``, ``hosts``, ``label`` and ``facts``; ``node_names``: ``{host: Kubernetes node name}`` of every
    host of the group, those without facts included).

    Adds to each pool ``labels`` (its nodes' labels), ``resources`` (``{resourceName: selectors}`` of the shared
    device plugin resources its ports are in) and ``nccl_pod_env`` (its pods' NCCL environment). Returns
    ``{no_port, labels, shared_dp_config, sriov_dp_config, nccl_env, cni_configs, warnings, pools_text}``:
    ``no_port`` is why no node can be given an RDMA device (empty when one can; the rest is then empty);
    ``labels`` is ``{node name: labels}`` (``null`` values with ``state: absent``, ``{}`` with node labels off).
    """
    s = _settings(settings)
    prefix = s["node_label_prefix"]
    out = {"no_port": "", "labels": {}, "shared_dp_config": {}, "sriov_dp_config": {}, "nccl_env": {},
           "cni_configs": [], "warnings": [], "pools_text": pools_text(pools)}
    if s["state"] == "absent":
        # the objects are found again by kind, namespace and name; the pools known from the facts name the
        # NCCL ConfigMaps, every node of the group gets its labels removed
        out["shared_dp_config"] = {"configList": []}
        out["sriov_dp_config"] = {"resourceList": []}
        out["nccl_env"] = dict((name, {}) for name in pools) if s["nccl_enabled"] else {}
        out["cni_configs"] = ["{}" for _net in s["networks"]]
        if s["node_labels_enabled"]:
            remove = dict((key, None) for key in node_label_keys(prefix))
            out["labels"] = dict((node, remove) for node in node_names.values())
        return out
    facts = dict((pool["label"], pool["facts"]) for pool in pools.values())
    try:
        every = shared_dev_selectors(facts, include_soft=s["include_soft_devices"])
    except RdmaFactsError as e:
        out["no_port"] = str(e)
        return out
    # per pool: labels and NCCL settings
    rdma_ifname = nccl_network_interface(s["networks"], s["nccl_network"])
    no_rdma = []
    for name, pool in pools.items():
        pool["labels"] = node_labels(pool["facts"], prefix=prefix, include_soft=s["include_soft_devices"],
                                     nccl_pool=name if s["nccl_enabled"] else None)
        if pool["labels"]["%s/capable" % prefix] == "false":
            no_rdma.extend(_nodes(pool, node_names))
        if s["nccl_enabled"]:
            try:
                pool["nccl_pod_env"] = pod_nccl_env(
                    pool["facts"], pod_interface=s["nccl_pod_interface"], rdma_pod_interface=rdma_ifname,
                    socket_ifname=s["nccl_socket_ifname"] or None, link_layers=s["nccl_link_layers"] or None,
                    include_soft=s["include_soft_devices"], gid_index=s["nccl_gid_index"], tc=s["nccl_tc"],
                    extra=s["nccl_extra_env"], host_network=s["nccl_host_network"])
            except RdmaFactsError as e:
                raise RdmaFactsError("NCCL settings of pool %s (%s): %s" % (name, pool["label"], e))
            out["nccl_env"][name] = pool["nccl_pod_env"]
        if s["node_labels_enabled"]:
            for node in _nodes(pool, node_names):
                out["labels"][node] = pool["labels"]
    if no_rdma:
        out["warnings"].append(
            "node(s) %s have no ACTIVE RDMA port; they are labelled %s/capable=false and get no RDMA device plugin pod."
            % (", ".join(no_rdma), prefix))
    # the shared device plugin: one config for every node, from each pool's own resource list
    pool_resources = dict((pool["label"], s["shared_devices_pools"][pool["name"]])
                          for pool in pools.values() if pool["name"] in s["shared_devices_pools"])
    layout = shared_dev_plugin_layout(
        s["shared_devices"], facts, include_soft=s["include_soft_devices"],
        periodic_update_interval=s["shared_dev_plugin_periodic_update_interval"], pool_resources=pool_resources)
    out["shared_dp_config"] = layout["config"]
    for name, pool in pools.items():
        pool["resources"] = layout["per_pool"][pool["label"]]
        for resource, new_names in sorted(layout["link_splits"].get(pool["label"], {}).items()):
            out["warnings"].append(
                "node pool %s (%s) has InfiniBand and Ethernet ports in %s; a resource holds one link type, so they "
                "are given as %s there, and pods asking for %s cannot run on its nodes (ask for one of those, or give "
                "the resources link_layers)." % (name, pool["label"], resource, " and ".join(new_names), resource))
    wanted = []
    for res in s["shared_devices"] + [r for lst in s["shared_devices_pools"].values() for r in lst]:
        if res["resourceName"] not in wanted:
            wanted.append(res["resourceName"])
    # (a resource split by link type in a pool is explained by its own warning)
    placed = set(e["resourceName"] for e in out["shared_dp_config"]["configList"]) | set(
        name for splits in layout["link_splits"].values() for name in splits)
    unplaced = [name for name in wanted if name not in placed]
    if unplaced:
        out["warnings"].append(
            "no node pool gives an ACTIVE RDMA port to %s (a pool with one port gives it to the first part of the "
            "split), so the shared device plugin does not advertise it; pods asking for it stay Pending. Node "
            "pools: %s." % (", ".join(unplaced), out["pools_text"]))
    if s["sriov_device_plugin_enabled"]:
        out["sriov_dp_config"] = {"resourceList": s["sriov_resources"] or [
            dict(SRIOV_DEFAULT_RESOURCE, selectors=sriov_vf_selectors(facts))]}
    if s["include_soft_devices"] and ("vendors" not in every or any(
            dev.get("soft") for f in facts.values() for dev in f.get("devices") or [])):
        out["warnings"].append(
            "the selected RDMA devices include soft devices (Soft-RoCE rxe / siw). The k8s-rdma-shared-dev-plugin "
            "finds RDMA devices through their PCI device, so pods get no soft device through it; the objects are "
            "still valid (lab/rendering use). NCCL settings and node labels include them.")
    out["cni_configs"] = [cni_config_json(net) for net in s["networks"]]
    return out
