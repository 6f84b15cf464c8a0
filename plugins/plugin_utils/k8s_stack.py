# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the k8s_rdma_stack role renders, joined over the node pools once (controller only).

The rules live in :mod:`k8s_rdma` (selectors, labels, CNI configurations, NV-IPAM pools, the NFD
rule, the role's variable checks) and :mod:`nccl` (the NCCL environment); this module applies them
to the node pools of :mod:`node_pools` and joins the answers with the nodes: each pool's labels,
resources and NCCL settings, each node's labels, the device plugin configurations over all pools,
which components the templates render, the warnings. The ``rdma.fabric.node_pools`` action returns
the result (option ``k8s``), and the role's YAML only renders it.

``settings`` are the role's variables by their full names (``k8s_rdma_stack_shared_devices``, ...),
as the role passes them; they are checked with :func:`k8s_rdma.check_role_vars` first.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError, missing_user_space_modules
from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import (
    NFD_LABEL,
    check_role_vars,
    cni_config_json,
    gpu_operator_values,
    nccl_network_interface,
    nfd_rule,
    node_label_keys,
    node_labels,
    nv_ipam_pool,
    shared_dev_gaps,
    shared_dev_plugin_layout,
    shared_dev_selectors,
    sriov_vf_selectors,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import pod_nccl_env

PREFIX = "k8s_rdma_stack_"
# The role's variables this module reads (without the prefix); every one must be given.
SETTINGS = (
    "state", "method", "apply", "output_dir", "include_soft_devices", "require_user_space_modules",
    "node_labels_enabled", "node_label_prefix", "node_selection", "node_selector", "shared_devices",
    "shared_devices_pools", "shared_dev_plugin_periodic_update_interval", "sriov_device_plugin_enabled",
    "sriov_resources", "networks", "ipam", "multus_enabled", "whereabouts_enabled", "ipoib_cni_enabled",
    "rdma_netns", "network_operator_namespace", "nccl_enabled", "nccl_pod_interface", "nccl_network",
    "nccl_socket_ifname", "nccl_host_network", "nccl_link_layers", "nccl_gid_index", "nccl_tc", "nccl_extra_env",
    "gpu_operator_values_enabled", "gpu_operator_values",
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


def ipam_mode(s):
    """``nv_ipam`` or ``whereabouts``: what replaces a network's whereabouts range (``auto``: NV-IPAM under the
    Network Operator, whose own IPAM it is; whereabouts with the plain manifests)."""
    if s["ipam"] == "auto":
        return "nv_ipam" if s["method"] == "network_operator" else "whereabouts"
    return s["ipam"]


def pools_text(pools):
    """``name = label; ...``: the pools as the role's messages name them."""
    return "; ".join("%s = %s" % (pool["name"], pool["label"]) for pool in pools.values())


def _nodes(pool, node_names):
    return [node_names.get(host, host) for host in pool["hosts"]]


def _selection(s):
    """``{label: value}`` the device plugin DaemonSets (and the NicClusterPolicy, the IP pools) select nodes by:
    NFD's label, or the role's own ``<prefix>/capable`` when it labels the nodes; empty otherwise."""
    if s["node_selection"] == "nfd":
        return {NFD_LABEL: "true"}
    if s["node_labels_enabled"]:
        return {"%s/capable" % s["node_label_prefix"]: "true"}
    return {}


def _components(s, mode):
    nets = s["networks"]
    return {
        "multus": bool(s["multus_enabled"]),
        "whereabouts": bool(s["whereabouts_enabled"]) and mode == "whereabouts"
        and any((net.get("ipam") or {}).get("type") == "whereabouts" for net in nets),
        "nv_ipam": mode == "nv_ipam",
        "ipoib": bool(s["ipoib_cni_enabled"]) and any(net.get("type") == "ipoib" for net in nets),
        "rdma_cni": s["rdma_netns"] == "exclusive",
        "nfd_rule": s["node_selection"] == "nfd",
    }


def _ip_pools(s, mode, nodes, selection):
    """``(pools, {network index: pool name})``: one NV-IPAM IPPool per network whose IPAM is whereabouts (networks
    naming the same ``ip_pool`` share it and must agree), in the Network Operator's namespace."""
    if mode != "nv_ipam":
        return [], {}
    pools, by_name, names = [], {}, {}
    for i, net in enumerate(s["networks"]):
        name, spec = nv_ipam_pool(net, nodes)
        if name is None:
            continue
        if selection:
            key, value = list(selection.items())[0]
            spec["nodeSelector"] = {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": key, "operator": "In", "values": [value]}]}]}
        if name in by_name and by_name[name] != spec:
            raise RdmaFactsError("k8s_rdma_stack_networks[%d]: network %s uses IP pool %s, which another network "
                                 "defines with other settings (range, exclude, gateway, per_node_block_size must "
                                 "be the same, or give each its own ip_pool)" % (i, net.get("name"), name))
        if name not in by_name:
            by_name[name] = spec
            pools.append({"name": name, "namespace": s["network_operator_namespace"], "spec": spec})
        names[i] = name
    return pools, names


def _cni_configs(s, pool_of_network):
    return [cni_config_json(net, ip_pool=pool_of_network.get(i), rdma_cni=s["rdma_netns"] == "exclusive")
            for i, net in enumerate(s["networks"])]


def stack_settings(pools, node_names, settings, stacks=None):
    """Everything the role renders, from the node pools (``pools``: the ``node_pools`` action's ``pools``, each
    with ``name``, ``hosts``, ``label`` and ``facts``; ``node_names``: ``{host: Kubernetes node name}`` of every
    host of the group, those without facts included; ``stacks``: ``{host: the facts' stack flavor}``).

    Adds to each pool ``labels`` (its nodes' labels), ``resources`` (``{resourceName: selectors}`` of the shared
    device plugin resources its ports are in), ``nccl_pod_env`` (its pods' NCCL environment) and
    ``missing_modules`` (the user-space RDMA modules its nodes lack: then they are not advertised). Returns
    ``{no_port, labels, shared_dp_config, sriov_dp_config, nccl_env, cni_configs, components, selection,
    ds_node_selector, ip_pools, nfd_rule, gpu_operator_values, not_advertised, warnings, pools_text}``: ``no_port``
    is why no node can be given an RDMA device (empty when one can; the derivations are then empty); ``labels`` is
    ``{node name: labels}`` (``null`` values with ``state: absent``, ``{}`` with node labels off).
    """
    s = _settings(settings)
    prefix = s["node_label_prefix"]
    mode = ipam_mode(s)
    selection = _selection(s)
    out = {"no_port": "", "labels": {}, "shared_dp_config": {}, "sriov_dp_config": {}, "nccl_env": {},
           "cni_configs": [], "components": _components(s, mode), "selection": selection,
           "ds_node_selector": dict(selection, **s["node_selector"]), "ip_pools": [], "nfd_rule": {"rules": []},
           "gpu_operator_values": {}, "not_advertised": {}, "warnings": [], "pools_text": pools_text(pools)}
    if s["state"] == "absent":
        # the objects are found again by kind, namespace and name; the pools known from the facts name the
        # NCCL ConfigMaps, every node of the group gets its labels removed
        out["shared_dp_config"] = {"configList": []}
        out["sriov_dp_config"] = {"resourceList": []}
        out["nccl_env"] = dict((name, {}) for name in pools) if s["nccl_enabled"] else {}
        out["ip_pools"], pool_of_network = _ip_pools(s, mode, 1, selection)
        out["cni_configs"] = ["{}" for _net in s["networks"]]
        if s["node_labels_enabled"]:
            remove = dict((key, None) for key in node_label_keys(prefix))
            out["labels"] = dict((node, remove) for node in node_names.values())
        return out
    # a pool whose nodes lack a user-space RDMA module cannot give its devices to pods: it is not advertised
    usable = {}
    for name, pool in pools.items():
        pool["missing_modules"] = missing_user_space_modules(pool["facts"]) if s["require_user_space_modules"] else []
        if pool["missing_modules"]:
            nodes = _nodes(pool, node_names)
            for node in nodes:
                out["not_advertised"][node] = pool["missing_modules"]
            out["warnings"].append(
                "node(s) %s lack the user-space RDMA module(s) %s (the facts' modules), so the RDMA device plugin "
                "could give pods no device there (k8s-rdma-shared-dev-plugin #103, #192); they are not advertised "
                "(labelled %s/capable=false, left out of the selectors). Load the modules (rdma.fabric.mofed, "
                "mofed_kernel_modules), gather the facts and run again."
                % (", ".join(nodes), ", ".join(pool["missing_modules"]), prefix))
        else:
            usable[pool["label"]] = pool["facts"]
    every, reason = None, "no node pool has the user-space RDMA modules"
    try:
        every = shared_dev_selectors(usable, include_soft=s["include_soft_devices"]) if usable else None
    except RdmaFactsError as e:
        reason = str(e)
    if every is None:
        out["no_port"] = "; ".join([reason] + ["%s: user-space RDMA module(s) %s not loaded" % (
            pool["label"], ", ".join(pool["missing_modules"])) for pool in pools.values() if pool["missing_modules"]])
        return out
    # per pool: labels and NCCL settings
    rdma_ifname = nccl_network_interface(s["networks"], s["nccl_network"])
    no_rdma, capable_nodes = [], 0
    for name, pool in pools.items():
        facts = pool["facts"] if not pool["missing_modules"] else dict(pool["facts"], devices=[])
        pool["labels"] = node_labels(facts, prefix=prefix, include_soft=s["include_soft_devices"],
                                     nccl_pool=name if s["nccl_enabled"] else None)
        if pool["labels"]["%s/capable" % prefix] == "false":
            if not pool["missing_modules"]:
                no_rdma.extend(_nodes(pool, node_names))
        else:
            capable_nodes += len(pool["hosts"])
        if s["nccl_enabled"]:
            try:
                pool["nccl_pod_env"] = pod_nccl_env(
                    facts, pod_interface=s["nccl_pod_interface"], rdma_pod_interface=rdma_ifname,
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
    _shared_device_plugin(s, pools, usable, out)
    if s["sriov_device_plugin_enabled"]:
        out["sriov_dp_config"] = {"resourceList": s["sriov_resources"] or [
            dict(SRIOV_DEFAULT_RESOURCE, selectors=sriov_vf_selectors(usable))]}
    if s["include_soft_devices"] and ("vendors" not in every or any(
            dev.get("soft") for f in usable.values() for dev in f.get("devices") or [])):
        out["warnings"].append(
            "the selected RDMA devices include soft devices (Soft-RoCE rxe / siw). The k8s-rdma-shared-dev-plugin "
            "finds RDMA devices through their PCI device, so pods get no soft device through it; the objects are "
            "still valid (lab/rendering use). NCCL settings and node labels include them.")
    out["ip_pools"], pool_of_network = _ip_pools(s, mode, capable_nodes, selection)
    out["cni_configs"] = _cni_configs(s, pool_of_network)
    if out["components"]["nfd_rule"]:
        out["nfd_rule"] = nfd_rule(every)
    elif s["node_labels_enabled"] and not s["apply"] and s["output_dir"]:
        out["warnings"].append(
            "render only: the device plugin DaemonSets select %s=true, which the node label patches in "
            "node-labels/ set, outside the kustomization (a GitOps tool must not own Nodes): apply them "
            "(kubectl apply --server-side -f node-labels/) or the plugins run nowhere; "
            "k8s_rdma_stack_node_selection: nfd selects by a label NFD sets from a rule in the kustomization."
            % list(selection)[0])
    if s["rdma_netns"] == "exclusive":
        shared = [e["resourceName"] for e in out["shared_dp_config"]["configList"] if e.get("rdmaHcaMax", 63) > 1]
        if shared:
            out["warnings"].append(
                "RDMA netns mode exclusive: an RDMA device is in one network namespace at a time (rdma-cni moves it "
                "into the pod that has its interface), yet %s let up to rdmaHcaMax pods ask for each device; give "
                "them rdmaHcaMax: 1." % ", ".join(shared))
    if s["gpu_operator_values_enabled"]:
        host_stacks = dict((node_names.get(h, h), flavor) for h, flavor in (stacks or {}).items()
                           if h in set(x for p in pools.values() if p["labels"]["%s/capable" % prefix] == "true"
                                       for x in p["hosts"]))
        values, odd = gpu_operator_values(host_stacks)
        if odd:
            out["warnings"].append(
                "GPU Operator values: node(s) %s have the inbox RDMA stack, the others MLNX_OFED/DOCA-OFED on the "
                "host; driver.rdma.useHostMofed is one setting for the whole cluster, so it stays false."
                % ", ".join(odd))
        out["gpu_operator_values"] = _merge(values, s["gpu_operator_values"])
    return out


def _merge(base, extra):
    """``extra`` merged into ``base`` recursively (mappings merged, anything else replaced)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _shared_device_plugin(s, pools, usable, out):
    """The shared device plugin: one config for every node, from each advertised pool's own resource list."""
    pool_resources = dict((pool["label"], s["shared_devices_pools"][pool["name"]]) for pool in pools.values()
                          if pool["name"] in s["shared_devices_pools"] and pool["label"] in usable)
    layout = shared_dev_plugin_layout(
        s["shared_devices"], usable, include_soft=s["include_soft_devices"],
        periodic_update_interval=s["shared_dev_plugin_periodic_update_interval"], pool_resources=pool_resources)
    out["shared_dp_config"] = layout["config"]
    for name, pool in pools.items():
        pool["resources"] = layout["per_pool"].get(pool["label"], {})
        for resource, new_names in sorted(layout["link_splits"].get(pool["label"], {}).items()):
            out["warnings"].append(
                "node pool %s (%s) has InfiniBand and Ethernet ports in %s; a resource holds one link type, so they "
                "are given as %s there, and pods asking for %s cannot run on its nodes (ask for one of those, or give "
                "the resources link_layers)." % (name, pool["label"], resource, " and ".join(new_names), resource))
    # each pool with RDMA ports that gives a split resource no ACTIVE port (a one-port pool has no second half),
    # and each split resource no pool gives one, which is then left out (a pool without an ACTIVE port has its
    # own warning)
    capable = dict((pool["label"], pool["facts"]) for pool in pools.values()
                   if pool["label"] in usable and pool["labels"]["%s/capable" % s["node_label_prefix"]] == "true")
    if capable:
        out["warnings"].extend(shared_dev_gaps(s["shared_devices"], capable, include_soft=s["include_soft_devices"],
                                               pool_resources=pool_resources))
