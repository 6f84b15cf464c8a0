# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes RDMA stack settings derived from ``ansible_facts.rdma``.

Pure functions (no Kubernetes client): used by the filter plugins
``rdma_selectors``, ``rdma_node_labels`` and ``rdma_cni_config`` and through
them by the ``k8s_rdma_stack`` role.

k8s-rdma-shared-dev-plugin selectors (github.com/Mellanox/k8s-rdma-shared-dev-plugin,
README "Selectors Matching Process"): the plugin lists PCI network devices
(class 0x02) and keeps those matching every given selector (AND between
selectors, OR inside one). ``vendors``/``deviceIDs`` are lower-case hex
without ``0x`` as the plugin reads them from PCI, ``drivers`` is the PCI
driver (``mlx5_core``), ``ifNames`` the PCI device's netdev. The values are
collected from the ACTIVE ports of all given hosts (union per selector).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress
import json
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    USER_SPACE_MODULES,
    RdmaFactsError,
    check_link_layers,
    describe_ports,
    host_facts_list,
    natural_key,
    pci_id,
    port_kind,
    port_netdev,
    select_ports,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import (
    SOCKET_IFNAME_RE,
    SOCKET_IFNAME_RULE,
    check_extra,
    check_gid_index,
    check_pod_ifname,
    check_tc,
    roce_gid_and_tos,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.pod_check import plugin_link_type, selector_misses

CNI_TYPES = ("macvlan", "host-device", "ipoib")
IPAM_TYPES = ("whereabouts", "host-local")
MACVLAN_MODES = ("bridge", "private", "vepa", "passthru")
# DNS-1123 subdomain (label key prefix) and label name / value rules.
# Used with fullmatch only (a trailing newline never passes).
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_RESOURCE_NAME = re.compile(r"[a-zA-Z0-9_]+")


def _sorted_unique(values, key=None):
    """Unique non-empty values, sorted (plain order for hex IDs, ``natural_key`` for names)."""
    return sorted({v for v in values if v}, key=key)


def _no_rdma_error(hosts, what):
    return RdmaFactsError(
        "no ACTIVE RDMA port to derive %s from: %s" % (
            what, "; ".join("%s: %s" % (label, describe_ports(f)) for label, f in hosts)))


def shared_dev_selectors(data, link_layers=None, devices=None, include_soft=False):
    """k8s-rdma-shared-dev-plugin ``selectors`` from the ACTIVE ports of the hosts.

    Returns ``{"vendors", "deviceIDs", "drivers", "ifNames", "linkTypes"}`` with
    empty lists left out (soft devices only contribute ``ifNames`` and
    ``linkTypes``: they have no PCI IDs). ``linkTypes`` is the encapsulation of
    the ports' netdevs (``ether``, ``infiniband``; :func:`pod_check.plugin_link_type`).
    SR-IOV VFs are never selected here (the SR-IOV device plugin owns them).
    """
    hosts = host_facts_list(data)
    chosen = []
    for _label, facts in hosts:
        chosen.extend(select_ports(facts, link_layers, devices, include_soft, include_vfs=False))
    out = _derived_selectors(chosen)
    if not out:
        raise _no_rdma_error(hosts, "device plugin selectors")
    return out


def sriov_vf_selectors(data, link_layers=None, devices=None):
    """sriov-network-device-plugin ``netDevice`` selectors for the ACTIVE RDMA VFs of the hosts.

    Returns ``{"vendors", "devices", "drivers", "pfNames", "linkTypes", "isRdma": True}``;
    ``pfNames`` are the netdevs of the VFs' physical functions where the facts
    know them; ``linkTypes`` the encapsulation of the VFs' netdevs (``ether``,
    ``infiniband``), which this plugin's netDevice selector compares too.
    """
    hosts = host_facts_list(data)
    vendors, dev_ids, drivers, pf_names, link_types = [], [], [], [], []
    for _label, facts in hosts:
        pf_netdev = {}
        for dev in facts.get("devices") or []:
            if dev.get("pci_address"):
                for port in dev.get("ports") or []:
                    if port.get("netdev"):
                        pf_netdev.setdefault(dev["pci_address"], port["netdev"])
        for dev, port in select_ports(facts, link_layers, devices, include_soft=False, include_vfs=True):
            sriov = dev.get("sriov") or {}
            if not sriov.get("is_vf"):
                continue
            vendors.append(pci_id(dev.get("vendor_id")))
            dev_ids.append(pci_id(dev.get("device_id")))
            drivers.append(dev.get("driver"))
            pf_names.append(pf_netdev.get(sriov.get("physfn")))
            link_types.append(plugin_link_type(port))
    if not vendors:
        raise RdmaFactsError(
            "no ACTIVE RDMA SR-IOV virtual function in the facts (create VFs first, or give the "
            "sriov-network-device-plugin resources explicitly): "
            + "; ".join("%s: %s" % (label, describe_ports(f)) for label, f in hosts))
    out = {}
    for key, values in (("vendors", vendors), ("devices", dev_ids), ("drivers", drivers), ("pfNames", pf_names),
                        ("linkTypes", link_types)):
        values = _sorted_unique(values, natural_key if key == "pfNames" else None)
        if values:
            out[key] = values
    out["isRdma"] = True
    return out


def check_label_prefix(prefix):
    if not isinstance(prefix, str) or not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix):
        raise RdmaFactsError("label prefix must be a DNS subdomain such as 'rdma.fabric' or 'example.com', got %r" % (prefix,))
    return prefix


LABEL_NAMES = ("capable", "link-layer", "roce-v2-gid-index", "nccl-pool")


def node_label_keys(prefix):
    check_label_prefix(prefix)
    return ["%s/%s" % (prefix, name) for name in LABEL_NAMES]


def node_labels(data, prefix="rdma.fabric", link_layers=None, devices=None, include_soft=False, nccl_pool=None):
    """Scheduling labels for ONE node from its facts.

    ``<prefix>/capable``: ``"true"``/``"false"`` (any ACTIVE selected port);
    ``<prefix>/link-layer``: ``Ethernet``, ``InfiniBand`` or ``Mixed``;
    ``<prefix>/roce-v2-gid-index``: the RoCE v2 IPv4 GID index when all the
    node's ACTIVE RoCE ports agree on it; ``<prefix>/nccl-pool``: ``nccl_pool``
    when given (the node's pool id, which names its NCCL ConfigMap). Labels
    that do not apply are left out.
    """
    check_label_prefix(prefix)
    hosts = host_facts_list(data)
    if len(hosts) != 1:
        raise RdmaFactsError("node labels are computed per node: give one host's facts, got %d" % len(hosts))
    if nccl_pool is not None and (not isinstance(nccl_pool, str) or not _DNS_LABEL.fullmatch(nccl_pool) or len(nccl_pool) > 63):
        raise RdmaFactsError("nccl_pool must be a node pool id (a DNS label such as roce1-4c1d2f0a), got %r" % (nccl_pool,))
    facts = hosts[0][1]
    ports = select_ports(facts, link_layers, devices, include_soft, include_vfs=False)
    labels = {"%s/capable" % prefix: "true" if ports else "false"}
    if nccl_pool is not None:
        labels["%s/nccl-pool" % prefix] = nccl_pool
    if not ports:
        return labels
    layers = {p.get("link_layer") for _d, p in ports}
    labels["%s/link-layer" % prefix] = layers.pop() if len(layers) == 1 else "Mixed"
    roce = [p for d, p in ports if port_kind(d, p) == "roce"]
    if roce:
        idx = roce_gid_and_tos(roce)[0]
        if idx is not None:
            labels["%s/roce-v2-gid-index" % prefix] = str(idx)
    for key, value in labels.items():
        if not _LABEL_VALUE.fullmatch(value) or len(value) > 63:
            raise RdmaFactsError("label %s has an invalid value %r" % (key, value))
    return labels


# --- CNI configuration for NetworkAttachmentDefinitions -----------------------

def _req(net, key, where):
    value = net.get(key)
    if value in (None, ""):
        raise RdmaFactsError("%s: '%s' is required" % (where, key))
    return value


def _check_cidr(value, where, key):
    try:
        return ipaddress.ip_network(str(value), strict=False)
    except ValueError:
        raise RdmaFactsError("%s: '%s' must be a CIDR such as 192.168.100.0/24, got %r" % (where, key, value))


def _check_ip(value, where, key):
    try:
        return ipaddress.ip_address(str(value))
    except ValueError:
        raise RdmaFactsError("%s: '%s' must be an IP address, got %r" % (where, key, value))


def ipam_config(ipam, where="ipam"):
    """Validate and normalise an IPAM dict (whereabouts, host-local, or any other type passed through)."""
    if not isinstance(ipam, dict) or not ipam.get("type"):
        raise RdmaFactsError("%s: must be a dict with a 'type' (one of %s, or another installed IPAM plugin)"
                             % (where, ", ".join(IPAM_TYPES)))
    ipam = dict(ipam)
    kind = ipam["type"]
    if kind == "whereabouts":
        net = _check_cidr(_req(ipam, "range", where), where, "range")
        for key in ("range_start", "range_end", "gateway"):
            if ipam.get(key) is not None and _check_ip(ipam[key], where, key) not in net:
                raise RdmaFactsError("%s: '%s' %s is outside range %s" % (where, key, ipam[key], net))
        for i, excl in enumerate(ipam.get("exclude") or []):
            _check_cidr(excl, where, "exclude[%d]" % i)
    elif kind == "host-local":
        if "ranges" not in ipam:
            net = _check_cidr(_req(ipam, "subnet", where), where, "subnet")
            for key in ("rangeStart", "rangeEnd", "gateway"):
                if ipam.get(key) is not None and _check_ip(ipam[key], where, key) not in net:
                    raise RdmaFactsError("%s: '%s' %s is outside subnet %s" % (where, key, ipam[key], net))
    return {k: v for k, v in ipam.items() if v is not None}


def cni_config(network, ip_pool=None, rdma_cni=False):
    """CNI JSON config (a dict) for one NetworkAttachmentDefinition.

    ``network`` keys: ``name`` (DNS label), ``type`` (macvlan, host-device,
    ipoib), ``master`` (macvlan/ipoib parent netdev), ``device`` or
    ``pciBusID`` (host-device), ``mode`` (macvlan), ``mtu``, ``ipam`` (dict),
    ``cni_version`` (default 0.3.1). Other keys (namespace, resource_name,
    pod_interface, ip_pool, per_node_block_size) are for the objects around
    the CNI config, not the config.

    ``ip_pool``: the name of the NV-IPAM IP pool that replaces the network's
    whereabouts range (:func:`nv_ipam_pool`): the IPAM becomes
    ``{"type": "nv-ipam", "poolName": ip_pool}``. ``rdma_cni``: chain the
    rdma CNI plugin after the network's own (a conflist whose ``plugins`` are
    the network's config and ``{"type": "rdma"}``), which moves the RDMA
    device of the pod's interface into the pod's network namespace (RDMA
    netns mode ``exclusive``).
    """
    if not isinstance(network, dict):
        raise RdmaFactsError("a network must be a dict, got %s" % type(network).__name__)
    name = network.get("name")
    if not isinstance(name, str) or not _DNS_LABEL.fullmatch(name) or len(name) > 63:
        raise RdmaFactsError("network name must be a DNS-1123 label (lower case, digits, '-'), got %r" % (name,))
    where = "network %s" % name
    kind = network.get("type")
    if kind not in CNI_TYPES:
        raise RdmaFactsError("%s: 'type' must be one of %s, got %r" % (where, ", ".join(CNI_TYPES), kind))
    conf = {"cniVersion": str(network.get("cni_version") or "0.3.1"), "name": name, "type": kind}
    if kind in ("macvlan", "ipoib"):
        conf["master"] = str(_req(network, "master", where))
    if kind == "macvlan":
        mode = network.get("mode") or "bridge"
        if mode not in MACVLAN_MODES:
            raise RdmaFactsError("%s: 'mode' must be one of %s, got %r" % (where, ", ".join(MACVLAN_MODES), mode))
        conf["mode"] = mode
    if kind == "host-device":
        if network.get("device"):
            conf["device"] = str(network["device"])
        elif network.get("pciBusID"):
            conf["pciBusID"] = str(network["pciBusID"])
        else:
            raise RdmaFactsError("%s: host-device needs 'device' (a netdev name) or 'pciBusID'" % where)
    if network.get("mtu") is not None:
        mtu = network["mtu"]
        if isinstance(mtu, bool) or not isinstance(mtu, int) or not 68 <= mtu <= 65520:
            raise RdmaFactsError("%s: 'mtu' must be an integer 68-65520, got %r" % (where, mtu))
        conf["mtu"] = mtu
    conf["ipam"] = ipam_config(network.get("ipam") if network.get("ipam") is not None else {}, where + " ipam")
    if ip_pool is not None:
        conf["ipam"] = {"type": NV_IPAM_TYPE, "poolName": ip_pool}
    if rdma_cni:
        plugin = dict(conf)
        return {"cniVersion": plugin.pop("cniVersion"), "name": plugin.pop("name"), "plugins": [plugin, {"type": "rdma"}]}
    return conf


# --- NV-IPAM (the IPAM of the NVIDIA Network Operator) -------------------------------------------------------
# github.com/Mellanox/nvidia-k8s-ipam: an IPPool (nv-ipam.nvidia.com/v1alpha1) has a subnet, a gateway, exclusions
# (startIP-endIP ranges) and perNodeBlockSize, the number of addresses its controller gives each selected node; the
# CNI config names the pool: {"type": "nv-ipam", "poolName": ...}. Pool names: letters, digits, '.', '_', '-'.

NV_IPAM_TYPE = "nv-ipam"
_POOL_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


def check_ip_pool_name(name, where):
    if not isinstance(name, str) or len(name) > 63 or not _POOL_NAME.fullmatch(name):
        raise RdmaFactsError("%s: ip_pool must be an NV-IPAM pool name (letters, digits, '.', '_', '-', at most 63), "
                             "got %r" % (where, name))
    return name


def _check_block_size(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RdmaFactsError("%s: per_node_block_size must be an integer >= 1 (addresses per node), got %r"
                             % (where, value))
    return value


def _address_range(first, last):
    return {"startIP": str(first), "endIP": str(last)}


def nv_ipam_pool(network, nodes):
    """``(pool name, IPPool spec)`` of a network whose IPAM is whereabouts, for NV-IPAM; ``(None, None)`` for a
    network with another IPAM (kept as it is).

    The same settings as the whereabouts range: ``subnet`` is the network of ``range``; ``exclusions`` are its
    ``exclude`` CIDRs and the addresses before ``range_start`` and after ``range_end``; ``gateway`` as given. The
    pool's name is the network's ``ip_pool``, else its name. ``perNodeBlockSize`` is the network's
    ``per_node_block_size``, else the largest power of two not above the usable addresses divided by ``nodes``
    (the nodes the pool serves; at least 1): a cluster that doubles halves it, so give it explicitly to keep
    the blocks stable as the cluster grows.
    """
    ipam = network.get("ipam") or {}
    if ipam.get("type") != "whereabouts":
        return None, None
    where = "network %s" % network.get("name")
    name = check_ip_pool_name(network.get("ip_pool") or network.get("name"), where)
    ipam = ipam_config(ipam, where + " ipam")
    net = _check_cidr(ipam["range"], where, "range")
    hosts = list(net.hosts()) if net.num_addresses > 2 else list(net)
    first, last = hosts[0], hosts[-1]
    excluded = []
    if ipam.get("range_start") is not None and _check_ip(ipam["range_start"], where, "range_start") > first:
        excluded.append((first, _check_ip(ipam["range_start"], where, "range_start") - 1))
    if ipam.get("range_end") is not None and _check_ip(ipam["range_end"], where, "range_end") < last:
        excluded.append((_check_ip(ipam["range_end"], where, "range_end") + 1, last))
    for i, cidr in enumerate(ipam.get("exclude") or []):
        block = _check_cidr(cidr, where, "exclude[%d]" % i)
        excluded.append((block[0], block[-1]))
    excluded_count = 0
    for start, end in excluded:
        lo, hi = max(start, first), min(end, last)
        if lo <= hi:
            excluded_count += int(hi) - int(lo) + 1
    usable = len(hosts) - excluded_count
    if network.get("per_node_block_size") is not None:
        block = _check_block_size(network["per_node_block_size"], where)
    else:
        per_node = usable // max(int(nodes), 1)
        if per_node < 1:
            raise RdmaFactsError("%s: range %s has %d usable address(es) for %d node(s); give a larger range or "
                                 "per_node_block_size" % (where, net, usable, nodes))
        block = 1 << (per_node.bit_length() - 1)
    spec = {"subnet": str(net), "perNodeBlockSize": block}
    if excluded:
        spec["exclusions"] = [_address_range(start, end) for start, end in excluded]
    if ipam.get("gateway") is not None:
        spec["gateway"] = str(ipam["gateway"])
    return name, spec


MULTUS_FIRST_INTERFACE = "net1"


def nccl_network_interface(networks, name):
    """The pod-side interface of the Multus network ``name`` (an entry of ``networks``) that NCCL uses.

    Multus names a pod's attachments ``net1``, ``net2`` ... in the order of the pod's
    ``k8s.v1.cni.cncf.io/networks`` annotation unless the selection gives an ``interface``.
    The rule: the network's ``pod_interface`` key when set (the pod must ask for that name with
    ``interface`` in its selection), else ``net1`` (the pod lists the network first). ``name`` empty
    or None: None (no Multus network for NCCL). Entries with that name in several namespaces must agree.
    """
    if not name:
        return None
    if not isinstance(networks, list):
        raise RdmaFactsError("networks must be a list of network dicts")
    found = sorted(set(check_pod_ifname(net.get("pod_interface") or MULTUS_FIRST_INTERFACE, "network %s pod_interface" % name)
                       for net in networks if isinstance(net, dict) and net.get("name") == name))
    if not found:
        raise RdmaFactsError("%r is not the name of a network in k8s_rdma_stack_networks (networks: %s)"
                             % (name, ", ".join(sorted(set(str(n.get("name")) for n in networks if isinstance(n, dict)))) or "none"))
    if len(found) > 1:
        raise RdmaFactsError("the networks named %r give different pod_interface values (%s); NCCL needs one"
                             % (name, ", ".join(found)))
    return found[0]


def cni_config_json(network, ip_pool=None, rdma_cni=False):
    """:func:`cni_config` as the JSON text a NetworkAttachmentDefinition carries."""
    return json.dumps(cni_config(network, ip_pool=ip_pool, rdma_cni=rdma_cni), indent=2, sort_keys=True)


# --- Node Feature Discovery (node selection without the role's own node labels) ---------------------------------
# A NodeFeatureRule (nfd.k8s-sigs.io/v1alpha1) the role renders: NFD labels the nodes that have a PCI device of the
# pools' RDMA NICs and the user-space RDMA modules loaded with feature.node.kubernetes.io/rdma.available=true (NFD's
# own label namespace, allowed without extra NFD settings; the label NVIDIA's examples select with). NFD sees
# neither port states nor which ports are RDMA ports, so it selects somewhat more nodes than the facts would.

NFD_LABEL = "feature.node.kubernetes.io/rdma.available"


def nfd_rule(selectors):
    """The ``spec`` of the NodeFeatureRule from the merged shared device plugin selectors (``vendors``,
    ``deviceIDs``): the user-space RDMA modules loaded and, when the selectors have PCI IDs, a PCI device of one of
    those vendors and device IDs."""
    match = [{"feature": "kernel.loadedmodule", "matchExpressions": dict(
        (name, {"op": "Exists"}) for name in USER_SPACE_MODULES)}]
    pci = {}
    if selectors.get("vendors"):
        pci["vendor"] = {"op": "In", "value": list(selectors["vendors"])}
    if selectors.get("deviceIDs"):
        pci["device"] = {"op": "In", "value": list(selectors["deviceIDs"])}
    if pci:
        match.append({"feature": "pci.device", "matchExpressions": pci})
    return {"rules": [{"name": "rdma.fabric RDMA available", "labels": {NFD_LABEL.split("/", 1)[1]: "true"},
                       "matchFeatures": match}]}


# --- Multus already in the cluster ------------------------------------------------------------------------------

def multus_installs(daemonsets, managed_by):
    """``[{namespace, name, image, ours}]``: the DaemonSets (Kubernetes objects, as ``kubernetes.core.k8s_info``
    lists them) with a container or init container of a multus-cni image; ``ours`` when its
    ``app.kubernetes.io/managed-by`` label is ``managed_by`` (this role installed it) or a NicClusterPolicy owns it
    (the Network Operator deployed it from the role's policy)."""
    out = []
    for ds in daemonsets or []:
        if not isinstance(ds, dict):
            continue
        meta = ds.get("metadata") or {}
        pod = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        images = [c.get("image") or "" for c in (pod.get("initContainers") or []) + (pod.get("containers") or [])
                  if isinstance(c, dict)]
        multus = [i for i in images if "multus" in i.rsplit("/", 1)[-1]]
        if multus:
            owners = [o.get("kind") for o in meta.get("ownerReferences") or [] if isinstance(o, dict)]
            out.append({"namespace": meta.get("namespace"), "name": meta.get("name"), "image": multus[0],
                        "ours": (meta.get("labels") or {}).get("app.kubernetes.io/managed-by") == managed_by
                        or "NicClusterPolicy" in owners})
    return out


def multus_status(daemonsets, enabled, crd_exists, networks, managed_by):
    """What to do about Multus when applying: ``{render, fail, message, installs}``.

    ``daemonsets``: the cluster's DaemonSets (``kubernetes.core.k8s_info``); ``enabled``:
    ``k8s_rdma_stack_multus_enabled``; ``crd_exists``: whether the NetworkAttachmentDefinition CRD is there;
    ``networks``: how many NetworkAttachmentDefinitions the role applies. A Multus installed by someone else is
    never replaced (most clusters have one, as ``kube-multus-ds`` in kube-system, the name of the role's own):
    the role's Multus is applied only when asked and no other is found. Networks without any Multus and without
    its CRD cannot be applied: ``fail``.
    """
    installs = multus_installs(daemonsets, managed_by)
    named = ", ".join("%s/%s (%s)" % (i["namespace"], i["name"], i["image"]) for i in installs)
    foreign = [i for i in installs if not i["ours"]]
    ours = [i for i in installs if i["ours"]]
    out = {"render": False, "fail": False, "installs": installs}
    if foreign:
        out["message"] = "Multus is installed (%s); the networks use it%s." % (named, (
            ", and the role does not apply its own (k8s_rdma_stack_multus_enabled asks for it): it would replace "
            "the installed one") if enabled else "")
    elif enabled:
        out["render"] = True
        out["message"] = ("the role's Multus (%s) is updated." % named) if ours else (
            "no Multus is installed; the role installs its own (k8s_rdma_stack_multus_enabled).")
    elif ours:
        out["message"] = ("the role's own Multus from an earlier run (%s) stays as it is: k8s_rdma_stack_multus_enabled "
                          "is false, so the role no longer applies it (docs/k8s_rdma_stack.md, Multus, says how to "
                          "remove it without leaving its CNI configuration on the nodes)." % named)
    elif networks and not crd_exists:
        out["fail"] = True
        out["message"] = ("the %d network(s) need Multus, and the cluster has none (no multus-cni DaemonSet, no "
                          "NetworkAttachmentDefinition CRD): install Multus, or set k8s_rdma_stack_multus_enabled: "
                          "true to let the role install its own." % networks)
    elif networks:
        out["message"] = ("no multus-cni DaemonSet found, but the NetworkAttachmentDefinition CRD exists: the "
                          "networks are applied for the Multus the cluster runs some other way.")
    else:
        out["message"] = "no networks: Multus is not needed."
    return out


# --- the NVIDIA GPU Operator's values for an RDMA fabric ------------------------------------------------------------

HOST_OFED_FLAVORS = ("mlnx_ofed", "doca")


def gpu_operator_values(stacks):
    """Helm values of the NVIDIA GPU Operator that go with this fabric, from ``{node: stack flavor}`` of the RDMA
    nodes (the facts' ``stack.flavor``): ``driver.rdma.enabled`` (the driver container loads nvidia-peermem) and
    ``driver.rdma.useHostMofed`` when every node has MLNX_OFED / DOCA-OFED on the host (as the mofed role installs
    it), so the driver container builds against the host's stack instead of waiting for the Network Operator's
    driver container. Returns ``(values, nodes whose stack differs from the others')`` (a mixed fleet gets
    ``useHostMofed: false`` and the caller says which nodes)."""
    flavors = dict((node, flavor) for node, flavor in stacks.items())
    host = sorted(n for n, f in flavors.items() if f in HOST_OFED_FLAVORS)
    other = sorted(n for n, f in flavors.items() if f not in HOST_OFED_FLAVORS)
    use_host = bool(host) and not other
    return {"driver": {"rdma": {"enabled": True, "useHostMofed": use_host}}}, (other if host and other else [])


# --- device plugin configuration files -----------------------------------------

SHARED_RESOURCE_KEYS = ("resourceName", "rdmaHcaMax", "resourcePrefix", "selectors", "link_layers", "rdma_devices",
                        "split")
SELECTOR_KEYS = ("vendors", "deviceIDs", "drivers", "ifNames", "linkTypes")


def check_shared_resources(resources):
    """Validate the shared device plugin resources (see :func:`shared_dev_plugin_config`); returns them."""
    if not isinstance(resources, list) or not resources:
        raise RdmaFactsError("shared device resources must be a non-empty list")
    names = set()
    for i, res in enumerate(resources):
        if not isinstance(res, dict):
            raise RdmaFactsError("shared device resource %d must be a dict" % i)
        name = res.get("resourceName")
        if not isinstance(name, str) or not _RESOURCE_NAME.fullmatch(name):
            raise RdmaFactsError("shared device resource %d: resourceName must match [a-zA-Z0-9_]+, got %r" % (i, name))
        if name in names:
            raise RdmaFactsError("shared device resource %d: resourceName %s is used twice" % (i, name))
        names.add(name)
        hca_max = res.get("rdmaHcaMax", 63)
        if isinstance(hca_max, bool) or not isinstance(hca_max, int) or hca_max < 0:
            raise RdmaFactsError("shared device resource %s: rdmaHcaMax must be an integer >= 0, got %r" % (name, hca_max))
        unknown = sorted(set(res) - set(SHARED_RESOURCE_KEYS))
        if unknown:
            raise RdmaFactsError("shared device resource %s: unknown key(s) %s; allowed: %s"
                                 % (name, ", ".join(unknown), ", ".join(SHARED_RESOURCE_KEYS)))
        selectors = res.get("selectors") or {}
        if not isinstance(selectors, dict):
            raise RdmaFactsError("shared device resource %s: selectors must be a dict of %s" % (name, ", ".join(SELECTOR_KEYS)))
        for key, values in selectors.items():
            if key not in SELECTOR_KEYS:
                raise RdmaFactsError("shared device resource %s: unknown selector %s; allowed: %s"
                                     % (name, key, ", ".join(SELECTOR_KEYS)))
            if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
                raise RdmaFactsError("shared device resource %s: selector %s must be a list of strings" % (name, key))
        check_link_layers(res.get("link_layers"), "shared device resource %s: link_layers" % name)
        globs = res.get("rdma_devices")
        if globs is not None and (not isinstance(globs, list) or not all(isinstance(g, str) and g for g in globs)):
            raise RdmaFactsError("shared device resource %s: rdma_devices must be a list of name globs such as mlx5_*" % name)
        _check_split(res.get("split"), "shared device resource %s" % name)
    return resources


def _check_split(split, where):
    if split is None:
        return None
    ok = isinstance(split, dict) and set(split) == {"part", "parts"} and all(
        isinstance(split[k], int) and not isinstance(split[k], bool) for k in ("part", "parts"))
    if not ok or not 1 <= split["part"] <= split["parts"]:
        raise RdmaFactsError("%s: split must be {part: P, parts: N} with integers 1 <= P <= N (part P of each node "
                             "pool's RDMA ports cut into N parts in (NUMA node, PCI address) order), got %r" % (where, split))
    return split


def check_shared_resources_by_pool(pool_resources):
    """Validate ``{pool: resources}`` (per node pool lists replacing the default one); returns it."""
    if not isinstance(pool_resources, dict):
        raise RdmaFactsError("must be a dict of node pool name -> list of shared device resources")
    for pool, resources in pool_resources.items():
        try:
            check_shared_resources(resources)
        except RdmaFactsError as e:
            raise RdmaFactsError("pool %s: %s" % (pool, e))
    return pool_resources


def port_layout_key(dev_port):
    """Order of a node's RDMA ports for the split rule: NUMA node, then PCI address, then device name and port
    number; unknown NUMA nodes (None, -1) and devices without a PCI address (soft devices) after the others."""
    dev, port = dev_port
    numa = dev.get("numa_node")
    numa_known = isinstance(numa, int) and not isinstance(numa, bool) and numa >= 0
    pci = dev.get("pci_address")
    return (0 if numa_known else 1, numa if numa_known else 0, 0 if pci else 1, pci or "",
            natural_key(dev.get("name")), port.get("number") or 0)


def split_ports(ports_in_order, part, parts):
    """Part ``part`` (1-based) of ``parts`` consecutive parts; the first ``len % parts`` parts get one more."""
    size, extra = divmod(len(ports_in_order), parts)
    start = (part - 1) * size + min(part - 1, extra)
    return ports_in_order[start:start + size + (1 if part <= extra else 0)]


def shared_dev_assignment(resources, facts, include_soft=False):
    """``{resourceName: [(dev, port), ...]}``: the ports of ONE node that each derived resource gives out.

    Ports in any state (a DOWN port keeps its place, so the parts do not move when a link drops; only the ACTIVE
    ones go into the selectors), SR-IOV virtual functions never (the SR-IOV plugin owns them), soft devices only with
    ``include_soft``, restricted by the resource's ``link_layers`` and ``rdma_devices``; with ``split`` only its part
    of those, in :func:`port_layout_key` order. Resources with explicit ``selectors`` are not derived (left out).
    """
    out = {}
    for res in resources:
        if res.get("selectors"):
            continue
        chosen = select_ports(facts, res.get("link_layers"), res.get("rdma_devices"), include_soft,
                              include_vfs=False, active_only=False)
        split = res.get("split")
        if split:
            chosen = split_ports(sorted(chosen, key=port_layout_key), split["part"], split["parts"])
        out[res["resourceName"]] = chosen
    return out


def _merge_entry(entries, order, res, pool):
    """Add one pool's resource definition to the merged entries (same name: same settings in every pool's list)."""
    name = res["resourceName"]
    entry = {"resourceName": name, "rdmaHcaMax": res.get("rdmaHcaMax", 63)}
    if res.get("resourcePrefix"):
        entry["resourcePrefix"] = res["resourcePrefix"]
    if res.get("selectors"):
        entry["selectors"] = res["selectors"]
    if name not in entries:
        entries[name] = entry
        order.append(name)
        return
    if entries[name] != entry:
        raise RdmaFactsError("shared device resource %s is defined differently for pool %s (%s) than before (%s): "
                             "rdmaHcaMax, resourcePrefix and explicit selectors must be the same in every pool's list"
                             % (name, pool, json.dumps(entry, sort_keys=True), json.dumps(entries[name], sort_keys=True)))


def _overlaps(config_list, derived, assignments, hosts):
    """Problems (sentences) where the merged selectors select a device of a node pool in more than one resource,
    or in a derived resource the pool's own derivation did not give it to."""
    problems = []
    for label, facts in hosts:
        given = dict(("%s:%s" % (d.get("name"), p.get("number")), name)
                     for name, chosen in assignments[label].items() for d, p in chosen)
        for dev, port in select_ports(facts, include_soft=False, include_vfs=False, active_only=False):
            what = "%s:%s" % (dev.get("name"), port.get("number"))
            netdev = port_netdev(dev, port)
            hits = [e["resourceName"] for e in config_list if selector_misses("shared", e.get("selectors"), dev, port) == []]
            if len(hits) > 1:
                problems.append("on node(s) %s, device %s (%s) is selected by %s" % (label, what, netdev, " and ".join(hits)))
                continue
            for name in hits:
                if name in derived and given.get(what) != name:
                    problems.append("on node(s) %s, device %s (%s) is selected by %s, but the rule gives it to %s "
                                    "(selectors derived from other node pools select it too)"
                                    % (label, what, netdev, name, given.get(what) or "no resource"))
    return problems


def shared_dev_plugin_config(resources, data, include_soft=False, periodic_update_interval=None, pool_resources=None):
    """The k8s-rdma-shared-dev-plugin ``config.json`` document (a dict).

    ``resources``: list of dicts with ``resourceName`` (required),
    ``rdmaHcaMax`` (default 63), optional ``resourcePrefix``, ``selectors``
    (used as given when non-empty; otherwise derived from the facts),
    ``link_layers`` and ``rdma_devices`` (restrict the derivation) and ``split``
    (``{part, parts}``: only that part of each node pool's ports, see
    :func:`shared_dev_assignment`).

    ``data``: the node pools' facts (``{pool label: facts}``, a list, or one host's facts); each pool's ports
    are given out by ``pool_resources[label]`` when given (a per-pool list replacing ``resources``), else by
    ``resources``. The plugin reads ONE config for every node, so a derived resource's selectors are the union of
    what each pool gives it (from ACTIVE ports); a split resource no pool gives an ACTIVE port is left out (a
    resource with empty selectors would select every device), any other derived resource without one is an error.
    The merged selectors are then matched against every pool's devices (:func:`pod_check.selector_misses`, the
    plugin's rules): a device selected by two resources, or by a derived resource its pool did not give it to,
    is an error naming the nodes and the devices.
    """
    return shared_dev_plugin_layout(resources, data, include_soft, periodic_update_interval, pool_resources)["config"]


DERIVED_SELECTOR_KEYS = ("vendors", "deviceIDs", "drivers", "ifNames", "linkTypes")
# A derived resource whose ports on one node have both link types is given as one resource per link type,
# named with these suffixes (rdma_shared_device_a -> rdma_shared_device_a_ib, rdma_shared_device_a_eth).
LINK_TYPE_SUFFIXES = (("infiniband", "ib"), ("ether", "eth"))


def _derived_selectors(chosen):
    """The selectors of the ACTIVE ports among ``chosen`` (``[(dev, port)]``); empty lists left out."""
    values = dict((key, []) for key in DERIVED_SELECTOR_KEYS)
    for dev, port in chosen:
        if port.get("state") != "ACTIVE":
            continue
        if not dev.get("soft"):
            values["vendors"].append(pci_id(dev.get("vendor_id")))
            values["deviceIDs"].append(pci_id(dev.get("device_id")))
            values["drivers"].append(dev.get("driver"))
        values["ifNames"].append(port_netdev(dev, port))
        values["linkTypes"].append(plugin_link_type(port))
    return _selector_dict(values)


def split_by_link_type(assignment, pool_list, label):
    """``(assignment, splits)``: a pool's :func:`shared_dev_assignment` where every resource whose ports have both
    link types (InfiniBand and Ethernet, in any state) is replaced by one resource per link type,
    ``<name>_ib`` and ``<name>_eth`` (:data:`LINK_TYPE_SUFFIXES`); ``splits`` is ``{name: [new names]}``.
    A new name that is already a resource of the pool's list is an error."""
    taken = set(res["resourceName"] for res in pool_list)
    out, splits = {}, {}
    for name, chosen in assignment.items():
        kinds = set(plugin_link_type(port) for _dev, port in chosen)
        if len(kinds) < 2:
            out[name] = chosen
            continue
        splits[name] = []
        for kind, suffix in LINK_TYPE_SUFFIXES:
            part = [(dev, port) for dev, port in chosen if plugin_link_type(port) == kind]
            if not part:
                continue
            new = "%s_%s" % (name, suffix)
            if new in taken:
                raise RdmaFactsError("shared device resource %s has InfiniBand and Ethernet ports on node(s) %s; it would "
                                     "be given as one resource per link type, but %s is already a resource: give the "
                                     "resources link_layers" % (name, label, new))
            out[new] = part
            splits[name].append(new)
    return out, splits


def _selector_dict(values):
    sel = {}
    for key in DERIVED_SELECTOR_KEYS:
        vals = _sorted_unique(values.get(key) or [], natural_key if key == "ifNames" else None)
        if vals:
            sel[key] = vals
    return sel


def shared_dev_plugin_layout(resources, data, include_soft=False, periodic_update_interval=None, pool_resources=None):
    """:func:`shared_dev_plugin_config`'s document with what each pool gives: ``{"config", "per_pool",
    "link_splits"}``. ``per_pool`` is ``{pool label: {resourceName: selectors}}``, the selectors of each derived
    resource from that pool's own ACTIVE ports (resources the pool gives no ACTIVE port are left out);
    ``link_splits`` is ``{pool label: {resourceName: [names]}}`` for the resources whose ports on that pool's nodes
    have both link types, given there as one resource per link type (:func:`split_by_link_type`)."""
    check_shared_resources(resources)
    if pool_resources:
        check_shared_resources_by_pool(pool_resources)
    hosts = host_facts_list(data)
    entries, order, derived, assignments, per_pool, link_splits, children = {}, [], set(), {}, {}, {}, {}
    optional = set(res["resourceName"] for lst in [resources] + list((pool_resources or {}).values())
                   for res in lst if res.get("split") and not res.get("selectors"))
    for label, facts in hosts:
        pool_list = (pool_resources or {}).get(label) or resources
        for res in pool_list:
            _merge_entry(entries, order, res, label)
        assignments[label], splits = split_by_link_type(
            shared_dev_assignment(pool_list, facts, include_soft=include_soft), pool_list, label)
        if splits:
            link_splits[label] = splits
        for name, new_names in splits.items():
            res = [r for r in pool_list if r["resourceName"] == name][0]
            for new in new_names:
                _merge_entry(entries, children.setdefault(name, []), dict(res, resourceName=new), label)
            optional.update([name] + new_names)
            derived.add(name)
        per_pool[label] = {}
        for name, chosen in assignments[label].items():
            derived.add(name)
            sel = _derived_selectors(chosen)
            if sel:
                per_pool[label][name] = sel
    config_list = []
    for name in [n for name in order for n in [name] + sorted(
            children.get(name, []), key=lambda n: [s for _k, s in LINK_TYPE_SUFFIXES].index(n.rsplit("_", 1)[1]))]:
        entry = dict(entries[name])
        if name in derived:
            merged = {}
            for label, dummy in hosts:
                for key, vals in per_pool[label].get(name, {}).items():
                    merged.setdefault(key, []).extend(vals)
            sel = _selector_dict(merged)
            if not sel:
                if name in optional:
                    continue
                raise _no_rdma_error(hosts, "the device plugin selectors of %s" % name)
            entry["selectors"] = sel
        config_list.append(entry)
    if not config_list:
        raise _no_rdma_error(hosts, "device plugin selectors")
    problems = _overlaps(config_list, derived, assignments, hosts)
    if problems:
        raise RdmaFactsError("the shared device plugin resources overlap (a device may be in one resource only; give "
                             "them disjoint link_layers, rdma_devices or split parts, or per node pool lists): "
                             + "; ".join(problems))
    doc = {"configList": config_list}
    if periodic_update_interval is not None:
        doc["periodicUpdateInterval"] = periodic_update_interval
    return {"config": doc, "per_pool": per_pool, "link_splits": link_splits}


def shared_dev_gaps(resources, data, include_soft=False, pool_resources=None):
    """Sentences, one per node pool and split resource the pool gives no ACTIVE port: which pool, which resource
    and why (its part of the pool's ports is empty or has no ACTIVE port), and, per split resource no pool gives
    an ACTIVE port, that it is left out of the config (see :func:`shared_dev_plugin_config`). A pod asking for
    such a resource does not run on that pool's nodes."""
    gaps, placed, split = [], set(), []
    for label, facts in host_facts_list(data):
        pool_list = (pool_resources or {}).get(label) or resources
        chosen = shared_dev_assignment(pool_list, facts, include_soft=include_soft)
        for res in pool_list:
            if not res.get("split") or res.get("selectors"):
                continue
            name = res["resourceName"]
            full = "%s/%s" % (res.get("resourcePrefix") or "rdma", name)
            if name not in split:
                split.append(name)
            part, parts = res["split"]["part"], res["split"]["parts"]
            mine = chosen.get(name) or []
            if any(p.get("state") == "ACTIVE" for _d, p in mine):
                placed.add(name)
                continue
            pool_ports = select_ports(facts, res.get("link_layers"), res.get("rdma_devices"), include_soft,
                                      include_vfs=False, active_only=False)
            names = ", ".join("%s:%s" % (d.get("name"), p.get("number"))
                              for d, p in sorted(pool_ports, key=port_layout_key)) or "none"
            if mine:
                why = "its part %d of %d (%s) has no ACTIVE port" % (part, parts, ", ".join(
                    "%s:%s %s" % (d.get("name"), p.get("number"), p.get("state")) for d, p in mine))
            else:
                why = ("it has %d RDMA port(s) to share out (%s) and part %d of %d is empty: a device is in at most "
                       "one resource" % (len(pool_ports), names, part, parts))
            gaps.append("the node pool of %s gives no ACTIVE RDMA port to %s: %s; pods asking for %s do not run "
                        "on its nodes (they stay Pending)" % (label, full, why, full))
    for name in split:
        if name not in placed:
            gaps.append("%s is left out of the config: no node pool gives it an ACTIVE RDMA port (a resource with "
                        "empty selectors would select every device)" % name)
    return gaps


def _index_ranges(indices):
    """``[0, 1, 2, 5]`` -> ``["0-2", "5"]`` (the device plugin's ``pfName#first-last`` form)."""
    out = []
    for i in sorted(set(indices)):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return ["%d-%d" % (a, b) if a != b else "%d" % a for a, b in out]


def sriov_pf_vf_selectors(data):
    """sriov-network-device-plugin ``netDevice`` selectors for the VFs the ``sriov`` role made.

    ``data``: ``{host: sriov_pfs_current}`` (each a list of PFs as the
    ``sriov_vfs`` module returns them: ``netdev`` and ``vfs`` with
    ``index``, ``vendor_id``, ``device_id``, ``driver``, ``rdma_devices``), or
    one host's list. Any VF counts, RDMA or not (a Soft-RoCE link on a VF
    netdev is not an RDMA device of the VF); ``pfNames`` name each PF with
    its VF ranges (``eth2#0-1``); ``isRdma`` is set only when every VF has an
    RDMA device of its own (the plugin then hands out its RDMA device too).
    """
    hosts = sorted(data.items()) if isinstance(data, dict) else [("host", data)]
    vendors, dev_ids, drivers, pf_names, rdma = [], [], [], [], []
    for host, pfs in hosts:
        if not isinstance(pfs, list):
            raise RdmaFactsError("%s: SR-IOV PFs must be a list (sriov_pfs_current of the sriov role), got %s"
                                 % (host, type(pfs).__name__))
        for pf in pfs:
            vfs = [vf for vf in (pf.get("vfs") or []) if isinstance(vf, dict)]
            if not vfs:
                continue
            pf_names.append("%s#%s" % (pf.get("netdev"), ",".join(_index_ranges(vf["index"] for vf in vfs))))
            for vf in vfs:
                vendors.append(pci_id(vf.get("vendor_id")))
                dev_ids.append(pci_id(vf.get("device_id")))
                drivers.append(vf.get("driver"))
                rdma.append(bool(vf.get("rdma_devices")))
    if not pf_names:
        raise RdmaFactsError("no SR-IOV virtual function in %s (run the rdma.fabric.sriov role first)"
                             % ", ".join(h for h, _pfs in hosts))
    out = {}
    for key, values in (("vendors", vendors), ("devices", dev_ids), ("drivers", drivers), ("pfNames", pf_names)):
        values = _sorted_unique([v for v in values if v], natural_key if key == "pfNames" else None)
        if values:
            out[key] = values
    if all(rdma):
        out["isRdma"] = True
    return out


def sriov_dp_config(resources, data):
    """The sriov-network-device-plugin ``config.json`` (a dict).

    Empty ``resources`` -> one ``sriov_rdma_vf`` resource whose selectors are
    derived from the ACTIVE RDMA VFs in the facts.
    """
    if not resources:
        resources = [{"resourceName": "sriov_rdma_vf", "resourcePrefix": "nvidia.com",
                      "selectors": sriov_vf_selectors(data)}]
    for i, res in enumerate(resources):
        if not isinstance(res, dict) or not isinstance(res.get("resourceName"), str) or not _RESOURCE_NAME.fullmatch(res["resourceName"]):
            raise RdmaFactsError("sriov resource %d: resourceName must match [a-zA-Z0-9_]+" % i)
    return {"resourceList": resources}


# --- the role's own variables ---------------------------------------------------------------
# Types and choices are checked by the role's meta/argument_specs.yml before its first task;
# these are the rules a type cannot say. Each error names the variable and what is allowed.

_IMAGE = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
                    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_REGISTRY = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*(?::[0-9]+)?(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")
_URL = re.compile(r"(?:https?|oci)://[^\s/$.?#][^\s]*")
_FIELD_MANAGER = re.compile(r"[\x21-\x7e]{1,128}")


def _full(regex, value):
    return isinstance(value, str) and regex.fullmatch(value) is not None


def _ok(check, value):
    try:
        check(value)
    except RdmaFactsError:
        return False
    return True


def _dns_label(value, max_len=63):
    return isinstance(value, str) and len(value) <= max_len and _DNS_LABEL.fullmatch(value) is not None


def _dns_subdomain(value):
    return isinstance(value, str) and len(value) <= 253 and _DNS_SUBDOMAIN.fullmatch(value) is not None


def _label_key(key):
    if not isinstance(key, str):
        return False
    prefix, _sep, name = key.rpartition("/")
    if prefix and not _dns_subdomain(prefix):
        return False
    return 0 < len(name) <= 63 and re.fullmatch(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?", name) is not None


def _label_value(value):
    return isinstance(value, str) and len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


def _plain_text(value):
    return isinstance(value, str) and "\x00" not in value and "\n" not in value and "\r" not in value


def check_role_vars(values):
    """Errors (plain sentences) in the k8s_rdma_stack variables given as ``{name: value}``.

    Only the names present are checked; an empty list means every value is usable. Called by
    the role before it reads a fact or writes a file.
    """
    errors = []
    p = "k8s_rdma_stack_"

    def get(name):
        return values.get(p + name)

    def need(name, ok, allowed):
        if p + name in values and not ok(values[p + name]):
            errors.append("%s%s: %r is not allowed; allowed: %s" % (p, name, values[p + name], allowed))

    for name in ("output_dir", "kubeconfig", "context", "node_group"):
        need(name, _plain_text, "a path or name without NUL or line breaks")
    need("node_group", bool, "the name of an inventory group")
    need("field_manager", lambda v: _full(_FIELD_MANAGER, v), "1-128 printable characters without spaces")
    need("wait_timeout", lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 86400,
         "a whole number of seconds from 1 to 86400")
    need("namespace", _dns_label, "a Kubernetes namespace name (DNS label: a-z, 0-9, '-', at most 63)")
    need("network_operator_namespace", _dns_label, "a Kubernetes namespace name (DNS label)")
    need("network_operator_release_name", lambda v: _dns_label(v, 53), "a Helm release name (DNS label, at most 53)")
    need("registry_mirror", lambda v: v == "" or _full(_REGISTRY, v),
         "empty, or a registry host[:port][/path] such as registry.example.internal:5000")
    for comp in ("rdma_shared_dev_plugin", "sriov_device_plugin", "multus", "whereabouts", "ipoib_cni", "rdma_cni"):
        need(comp + "_image", lambda v: _full(_IMAGE, v), "an image reference without tag, such as ghcr.io/org/name")
        need(comp + "_version", lambda v: _full(_TAG, v), "an image tag such as v1.5.3")
    need("network_operator_component_repository", lambda v: _full(_IMAGE, v), "an image repository such as nvcr.io/nvidia/mellanox")
    need("network_operator_component_version", lambda v: _full(_TAG, v), "an image tag")
    need("network_operator_chart_version", lambda v: _full(_TAG, v), "a chart version such as v26.1.0")
    need("network_operator_chart_name", lambda v: _full(re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"), v), "a chart name")
    need("network_operator_chart_repo_url", lambda v: _full(_URL, v), "an http(s):// or oci:// URL")
    need("image_pull_secrets", lambda v: isinstance(v, list) and all(_dns_subdomain(s) for s in v),
         "a list of Secret names (DNS subdomains)")
    need("shared_dev_plugin_periodic_update_interval",
         lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 86400,
         "a whole number of seconds from 0 to 86400")
    need("nccl_configmap_name", lambda v: _dns_subdomain(v) and len(v) <= 189,
         "a ConfigMap name (DNS subdomain, at most 189 characters: '-<node pool id>' is appended)")
    need("nccl_namespaces", lambda v: isinstance(v, list) and len(v) > 0 and all(_dns_label(n) for n in v),
         "a non-empty list of namespace names (DNS labels)")
    need("nccl_socket_ifname", lambda v: v == "" or _full(SOCKET_IFNAME_RE, v), "empty, or " + SOCKET_IFNAME_RULE)
    need("nccl_pod_interface", lambda v: _ok(check_pod_ifname, v),
         "a network interface name inside the pod (1-15 of A-Z, a-z, 0-9, '_', '.', '-'), such as eth0")
    need("nccl_network", lambda v: isinstance(v, str) and (v == "" or _dns_label(v)),
         "empty, or the name of an entry of k8s_rdma_stack_networks")
    if isinstance(get("nccl_network"), str) and _dns_label(get("nccl_network")) and isinstance(get("networks"), list):
        try:
            nccl_network_interface(get("networks"), get("nccl_network"))
        except RdmaFactsError as e:
            errors.append("%snccl_network: %s" % (p, e))
    need("nccl_extra_env", lambda v: isinstance(v, dict) and not check_extra(v),
         "a dict of environment variable names ([A-Z_][A-Z0-9_]*) to one line of text, numbers, booleans or null")
    need("node_selector", lambda v: isinstance(v, dict) and all(_label_key(k) and _label_value(x) for k, x in v.items()),
         "a dict of label keys to label values (strings)")
    need("network_operator_values", lambda v: isinstance(v, dict), "a dict of Helm values")
    need("gpu_operator_values", lambda v: isinstance(v, dict), "a dict of Helm values")
    if get("ipam") == "nv_ipam" and p + "method" in values and get("method") != "network_operator":
        errors.append("%sipam: nv_ipam needs %smethod: network_operator (NV-IPAM is deployed by the NVIDIA Network "
                      "Operator); allowed with %smethod %s: auto, whereabouts" % (p, p, p, get("method")))
    if p + "node_label_prefix" in values:
        try:
            check_label_prefix(get("node_label_prefix"))
        except RdmaFactsError as e:
            errors.append("%snode_label_prefix: %s" % (p, e))
    checks = (
        ("nccl_gid_index", check_gid_index),
        ("nccl_tc", check_tc),
        ("shared_devices", check_shared_resources),
        ("shared_devices_pools", check_shared_resources_by_pool),
        ("nccl_link_layers", check_link_layers),
    )
    for name, check in checks:
        if p + name in values:
            try:
                check(values[p + name])
            except RdmaFactsError as e:
                errors.append("%s%s: %s" % (p, name, e))
    if p + "networks" in values:
        nets = get("networks")
        if not isinstance(nets, list):
            errors.append("%snetworks: must be a list of network dicts" % p)
        else:
            seen = set()
            for i, net in enumerate(nets):
                try:
                    cni_config(net)
                except RdmaFactsError as e:
                    errors.append("%snetworks[%d]: %s" % (p, i, e))
                    continue
                ns = net.get("namespace") or "default"
                if not _dns_label(ns):
                    errors.append("%snetworks[%d]: namespace %r is not a namespace name (DNS label)" % (p, i, ns))
                if (ns, net["name"]) in seen:
                    errors.append("%snetworks[%d]: %s/%s is defined twice" % (p, i, ns, net["name"]))
                seen.add((ns, net["name"]))
                if net.get("pod_interface") is not None and not _ok(check_pod_ifname, net["pod_interface"]):
                    errors.append("%snetworks[%d]: pod_interface %r is not allowed; allowed: a network interface name "
                                  "inside the pod (1-15 of A-Z, a-z, 0-9, '_', '.', '-'), such as net1" % (p, i, net["pod_interface"]))
                res = net.get("resource_name")
                if res and not _full(re.compile(r"[A-Za-z0-9][-A-Za-z0-9_.]*/[a-zA-Z0-9_]+"), res):
                    errors.append("%snetworks[%d]: resource_name %r must look like rdma/rdma_shared_device_a" % (p, i, res))
                for key, check in (("ip_pool", check_ip_pool_name), ("per_node_block_size", _check_block_size)):
                    if net.get(key) is not None:
                        try:
                            check(net[key], "network %s" % net["name"])
                        except RdmaFactsError as e:
                            errors.append("%snetworks[%d]: %s" % (p, i, e))
                if get("rdma_netns") == "exclusive" and net["type"] != "host-device":
                    errors.append("%snetworks[%d]: type %s cannot be used with %srdma_netns: exclusive (rdma-cni moves "
                                  "the RDMA device of the pod's interface into the pod, and a %s interface has none "
                                  "of its own); allowed: host-device (a physical or virtual function)"
                                  % (p, i, net["type"], p, net["type"]))
    if p + "sriov_resources" in values:
        try:
            sriov_dp_config(get("sriov_resources") or [{"resourceName": "placeholder"}], None)
        except RdmaFactsError as e:
            errors.append("%ssriov_resources: %s" % (p, e))
    return errors
