# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does a workload's spec ask only for extended resources the rendered device plugins advertise?

Input:

* the workload: a Pod, a Deployment (or any object with a pod template at ``spec.template``: StatefulSet,
  DaemonSet, ReplicaSet, Job) or a KubeRay RayCluster (``spec.headGroupSpec.template`` and each
  ``spec.workerGroupSpecs[].template``), one object or a list (the documents of a YAML file);
* the rendered device-plugin configurations, as the k8s_rdma_stack role writes them: the
  k8s-rdma-shared-dev-plugin ConfigMap (``data["config.json"]``, ``{"configList": [...]}``), the
  sriov-network-device-plugin ConfigMap (``{"resourceList": [...]}``), a NicClusterPolicy
  (``spec.rdmaSharedDevicePlugin.config`` / ``spec.sriovDevicePlugin.config``), or those config dicts
  themselves; objects of other kinds are ignored, so a whole output folder can be passed;
* the node pools: ``{pool: facts}`` (one host's ``ansible_facts.rdma`` standing for the pool: hosts of a pool
  have the same NIC layout) or ``{pool: [facts, ...]}`` (every host is checked; a resource must be advertised
  on all of them).

A resource is advertised on a node when a config entry has its name (``<resourcePrefix>/<resourceName>``,
prefix ``rdma`` for the shared device plugin and ``intel.com`` for the SR-IOV one unless given, as the plugins
default) and a device of that node matches the entry's selectors the way the plugin matches them: every
given selector must match (AND), any value inside one (OR). The shared device plugin finds devices through
their PCI network function, so soft devices (rxe, siw) never match; SR-IOV resources match virtual functions.
ACTIVE ports only (as the role's selectors). ``nvidia.com/gpu*`` resources are advertised by the NVIDIA GPU
Operator's device plugin, which this stack does not render: they are reported as not checked, not as missing.

Input of the wrong shape (``containers: abc``, a number as a resource name, ``spec: [1, 2]``, a worker group
that is not a mapping) is refused with :class:`RdmaFactsError` naming the document and the field, never a
Python exception. The workload may be given as YAML text (``workload_file`` names it) and the configs as
``{file name: YAML text}``: a document that is not valid YAML is then refused naming its file.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import yaml

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    host_facts_list,
    pci_id,
    port_netdev,
    select_ports,
)

BUILTIN_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
SHARED_PREFIX = "rdma"
SRIOV_PREFIX = "intel.com"


def _field(obj, key, kind, where, default=None):
    """``obj[key]`` when it has the ``kind`` (dict or list; missing or null: ``default``), else an error naming it."""
    value = obj.get(key)
    if value is None:
        return default
    if not isinstance(value, kind):
        raise RdmaFactsError("%s: %s is %s, not a %s" % (where, key, _short(value), "mapping" if kind is dict else "list"))
    return value


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _pod_spec(template, where):
    """The pod spec of a pod template (``template.spec``), checked to be a mapping."""
    if not isinstance(template, dict):
        raise RdmaFactsError("%s: template is %s, not a mapping" % (where, _short(template)))
    return _field(template, "spec", dict, where + ".template", {})


def _templates(obj, where):
    """(label, where, pod spec) of every pod template of a workload object; ``where`` names the field in errors."""
    if not isinstance(obj, dict):
        raise RdmaFactsError("%s: a workload must be a Kubernetes object (a mapping), got %s" % (where, type(obj).__name__))
    kind = obj.get("kind")
    name = (_field(obj, "metadata", dict, where, {})).get("name") or "?"
    label = "%s/%s" % (kind, name)
    where = "%s (%s)" % (where, label)
    spec = _field(obj, "spec", dict, where, {})
    if kind == "Pod":
        return [(label, where + ": spec", spec)]
    if kind == "RayCluster":
        out = []
        head = _field(spec, "headGroupSpec", dict, where + ": spec", {})
        if head.get("template") is not None:
            at = where + ": spec.headGroupSpec"
            out.append((label + " head", at + ".template.spec", _pod_spec(head["template"], at)))
        for i, group in enumerate(_field(spec, "workerGroupSpecs", list, where + ": spec", [])):
            at = "%s: spec.workerGroupSpecs[%d]" % (where, i)
            if not isinstance(group, dict):
                raise RdmaFactsError("%s is %s, not a mapping" % (at, _short(group)))
            if group.get("template") is not None:
                out.append(("%s worker group %s" % (label, group.get("groupName") or "?"), at + ".template.spec",
                            _pod_spec(group["template"], at)))
        return out
    if spec.get("template") is not None:
        return [(label, where + ": spec.template.spec", _pod_spec(spec["template"], where + ": spec"))]
    job = _field(spec, "jobTemplate", dict, where + ": spec", {})
    job_spec = _field(job, "spec", dict, where + ": spec.jobTemplate", {})
    if job_spec.get("template") is not None:
        at = where + ": spec.jobTemplate.spec"
        return [(label, at + ".template.spec", _pod_spec(job_spec["template"], at))]
    raise RdmaFactsError("%s has no pod template (accepted: Pod, RayCluster, and objects with spec.template such "
                         "as Deployment, StatefulSet, DaemonSet, Job)" % where)


def _extended(resources, where):
    out = {}
    if resources is None:
        return out
    if not isinstance(resources, dict):
        raise RdmaFactsError("%s: resources is %s, not a mapping" % (where, _short(resources)))
    for section in ("limits", "requests"):
        for key, value in _field(resources, section, dict, where + ".resources", {}).items():
            if not isinstance(key, str):
                raise RdmaFactsError("%s.resources.%s: the key %r is not a resource name" % (where, section, key))
            if key in BUILTIN_RESOURCES or key.startswith("hugepages-") or "/" not in key:
                continue
            try:
                count = int(value)
            except (TypeError, ValueError):
                count = value
            out[key] = max(out.get(key, 0), count) if isinstance(count, int) else count
    return out


def load_yaml(text, where):
    """The documents of a YAML text (empty ones left out); :class:`RdmaFactsError` naming ``where`` when it is not YAML."""
    if not isinstance(text, str):
        raise RdmaFactsError("%s: expected YAML text, got %s" % (where, type(text).__name__))
    try:
        return [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as e:
        raise RdmaFactsError("%s: not valid YAML: %s" % (where, " ".join(str(e).split())))


def requests(workload, workload_file=None):
    """``[{template, container, resource, count}]`` of every extended resource the pod templates ask for.

    ``workload``: an object, a list of them, or YAML text (``workload_file`` names it in errors).
    """
    source = workload_file or "workload"
    if isinstance(workload, str):
        workload = load_yaml(workload, source)
    objs = workload if isinstance(workload, list) else [workload]
    out = []
    for i, obj in enumerate(o for o in objs if o):
        for label, where, pod in _templates(obj, "%s document %d" % (source, i + 1)):
            for ctype in ("initContainers", "containers"):
                for j, ctr in enumerate(_field(pod, ctype, list, where, [])):
                    at = "%s.%s[%d]" % (where, ctype, j)
                    if not isinstance(ctr, dict):
                        raise RdmaFactsError("%s is %s, not a container (a mapping)" % (at, _short(ctr)))
                    for res, count in sorted(_extended(ctr.get("resources"), at).items()):
                        out.append({"template": label, "container": ctr.get("name"), "resource": res, "count": count})
    return out


def _config_of(obj, where):
    """The config dicts inside one rendered object (ConfigMap, NicClusterPolicy, or a config dict)."""
    if not isinstance(obj, dict):
        return []
    if "configList" in obj or "resourceList" in obj:
        return [obj]
    kind = obj.get("kind")
    texts = []
    if kind == "ConfigMap":
        texts = [v for v in _field(obj, "data", dict, where, {}).values() if isinstance(v, str)]
    elif kind == "NicClusterPolicy":
        spec = _field(obj, "spec", dict, where, {})
        texts = [_field(spec, k, dict, where + ": spec", {}).get("config")
                 for k in ("rdmaSharedDevicePlugin", "sriovDevicePlugin")]
    out = []
    for text in texts:
        if not isinstance(text, str):
            continue
        try:
            doc = json.loads(text)
        except ValueError:
            continue
        if isinstance(doc, dict) and ("configList" in doc or "resourceList" in doc):
            out.append(doc)
    return out


def _config_objects(configs):
    """``[(where, object)]`` of the configs: a list of objects, one object, or ``{file name: YAML text}``."""
    if isinstance(configs, dict) and configs and all(isinstance(v, str) for v in configs.values()):
        return [("%s document %d" % (name, i + 1), doc) for name in sorted(configs, key=str)
                for i, doc in enumerate(load_yaml(configs[name], str(name)))]
    objs = configs if isinstance(configs, list) else [configs]
    return [("configs[%d]" % i, obj) for i, obj in enumerate(objs)]


def advertised(configs):
    """``{resource: {"plugin": shared|sriov, "entry": config entry}}`` of every rendered resource."""
    out = {}
    for where, obj in _config_objects(configs):
        for doc in _config_of(obj, where):
            for key, plugin, prefix in (("configList", "shared", SHARED_PREFIX), ("resourceList", "sriov", SRIOV_PREFIX)):
                for i, entry in enumerate(_field(doc, key, list, where, [])):
                    if not isinstance(entry, dict):
                        raise RdmaFactsError("%s: %s[%d] is %s, not a mapping" % (where, key, i, _short(entry)))
                    name = "%s/%s" % (entry.get("resourcePrefix") or prefix, entry.get("resourceName"))
                    out[name] = {"plugin": plugin, "entry": entry}
    return out


def _pf_netdevs(facts):
    """PCI address of a physical function -> its netdev (how a VF's ``pfNames`` selector is matched)."""
    out = {}
    for dev in facts.get("devices") or []:
        for port in dev.get("ports") or [] if dev.get("pci_address") else []:
            if port.get("netdev"):
                out.setdefault(dev["pci_address"], port["netdev"])
    return out


# What the shared device plugin's linkTypes selector compares: the encapsulation of the port's netdev as netlink
# names it (k8s-rdma-shared-dev-plugin pkg/resources/pci_net_device.go reads link.Attrs().EncapType:
# ARPHRD_ETHER "ether", ARPHRD_INFINIBAND "infiniband"), from the facts' link layer.
LINK_TYPES = {"Ethernet": "ether", "InfiniBand": "infiniband"}


def plugin_link_type(port):
    """The shared device plugin's ``linkTypes`` value of a port (``ether``/``infiniband``; None: link layer unknown)."""
    return LINK_TYPES.get(port.get("link_layer"))


def _device_fields(plugin, dev, port, pf_netdevs):
    """The values the plugin compares with its selectors, for one device (None: the plugin never sees it)."""
    if plugin == "shared":
        return (("vendors", pci_id(dev.get("vendor_id"))), ("deviceIDs", pci_id(dev.get("device_id"))),
                ("drivers", dev.get("driver")), ("ifNames", port_netdev(dev, port)),
                ("linkTypes", plugin_link_type(port)))
    sriov = dev.get("sriov") or {}
    if not sriov.get("is_vf"):
        return None
    return (("vendors", pci_id(dev.get("vendor_id"))), ("devices", pci_id(dev.get("device_id"))),
            ("drivers", dev.get("driver")), ("pfNames", pf_netdevs.get(sriov.get("physfn"))))


def selector_misses(plugin, selectors, dev, port, pf_netdevs=None):
    """Why the plugin's ``selectors`` do not select one device: ``[]`` when they do, None when the plugin never
    sees the device (a physical function for the SR-IOV plugin). Every selector given must match (AND), any of its
    values (OR); soft devices are not special-cased here (see :func:`matches`)."""
    if isinstance(selectors, list):
        selectors = selectors[0] if selectors else {}
    selectors = selectors or {}
    fields = _device_fields(plugin, dev, port, pf_netdevs if pf_netdevs is not None else {})
    if fields is None:
        return None
    return ["%s %s not in %s" % (key, value, selectors[key]) for key, value in fields
            if selectors.get(key) and value not in selectors[key]]


def matches(plugin, entry, facts):
    """Devices (``dev:port``) of one node that a config entry selects, and why each other one is not selected.

    Every selector given must match (AND), any of its values (OR). ``plugin``: ``shared`` (soft devices never
    match: the plugin finds devices through their PCI function) or ``sriov`` (virtual functions only).
    """
    sel = entry.get("selectors") or {}
    hits, misses = [], []
    pf_netdevs = _pf_netdevs(facts)
    for dev, port in select_ports(facts, include_soft=True, include_vfs=plugin == "sriov"):
        what = "%s:%s" % (dev.get("name"), port.get("number"))
        if dev.get("soft"):
            misses.append("%s is a soft device (the plugin finds devices through their PCI function)" % what)
            continue
        failed = selector_misses(plugin, sel, dev, port, pf_netdevs)
        if failed is None:
            continue
        if failed:
            misses.append("%s: %s" % (what, ", ".join(failed)))
        else:
            hits.append(what)
    if plugin == "sriov" and not hits and not misses:
        misses.append("no ACTIVE RDMA virtual function")
    return hits, misses


def _pools(pools):
    if not isinstance(pools, dict) or not pools:
        raise RdmaFactsError("pools must be a mapping pool name -> RDMA facts (or a list of them), got %r"
                             % (type(pools).__name__,))
    out = {}
    for name in sorted(pools):
        value = pools[name]
        hosts = host_facts_list(value if isinstance(value, list) else [value])
        out[str(name)] = [facts for dummy, facts in hosts]
    return out


def shared_capacity(pool, hosts, shared_names):
    """Why a pool cannot give ``shared_names`` (RDMA shared device plugin resources) at once, or None when it can.

    A device is in at most one resource of the shared device plugin (the k8s_rdma_stack role refuses overlapping
    selectors), so a node gives at most as many of these resources as it has devices the plugin can hand out:
    ACTIVE ports of PCI functions (not soft devices, not SR-IOV virtual functions).
    """
    if len(shared_names) < 2:
        return None
    fewest, soft = None, []
    for facts in hosts:
        usable = ["%s:%s" % (d.get("name"), p.get("number")) for d, p in select_ports(facts, include_soft=False)]
        if fewest is None or len(usable) < len(fewest):
            fewest = usable
        soft.extend("%s:%s" % (d.get("name"), p.get("number")) for d, p in select_ports(facts, include_soft=True)
                    if d.get("soft"))
    if fewest is None or len(fewest) >= len(shared_names):
        return None
    text = ("pool %s has %d device(s) the RDMA shared device plugin can hand out (%s) and a device is in at most one "
            "resource, so it cannot give the %d RDMA shared resources the pod asks for (%s)"
            % (pool, len(fewest), ", ".join(fewest) or "none", len(shared_names), ", ".join(shared_names)))
    if soft:
        text += "; %s: soft device(s), which the plugin cannot hand out (it finds devices through their PCI function)" \
            % ", ".join(sorted(set(soft)))
    return text


def check(workload, configs, pools, workload_file=None):
    """Per node pool, whether every extended resource the workload asks for is advertised, and why not.

    Returns ``{ok, requests, advertised: [names], pools: {pool: {ok, resources: {resource: {status, reason,
    devices}}}}}``; ``status`` is ``ok``, ``missing`` or ``not_checked`` (GPU resources). ``workload`` and
    ``configs`` as :func:`requests` and :func:`advertised` take them.
    """
    asked = requests(workload, workload_file)
    if not asked:
        raise RdmaFactsError("the workload asks for no extended resource (nothing under resources.requests/limits "
                             "with a '/' in its name)")
    ads = advertised(configs)
    result = {"ok": True, "requests": asked, "advertised": sorted(ads), "pools": {}}
    names = sorted(set(r["resource"] for r in asked))
    for pool, hosts in _pools(pools).items():
        view = {"ok": True, "resources": {}}
        for name in names:
            count = max((r["count"] for r in asked if r["resource"] == name and isinstance(r["count"], int)), default=1)
            if name not in ads:
                if name.startswith("nvidia.com/gpu"):
                    view["resources"][name] = {
                        "status": "not_checked", "devices": [],
                        "reason": "advertised by the NVIDIA GPU Operator's device plugin, which k8s_rdma_stack does "
                                  "not render: not checked here"}
                    continue
                view["resources"][name] = {
                    "status": "missing", "devices": [],
                    "reason": "no rendered device-plugin config advertises %s (advertised: %s)"
                              % (name, ", ".join(sorted(ads)) or "none")}
                view["ok"] = False
                continue
            ad = ads[name]
            entry = ad["entry"]
            devices, reasons = [], []
            for i, facts in enumerate(hosts):
                hits, misses = matches(ad["plugin"], entry, facts)
                label = "host %d of the pool" % (i + 1) if len(hosts) > 1 else "the pool's nodes"
                if not hits:
                    reasons.append("%s: no device matches the selectors of %s (%s)"
                                   % (label, name, "; ".join(misses) or "no ACTIVE RDMA port"))
                devices.append(hits)
            hca_max = entry.get("rdmaHcaMax")
            if ad["plugin"] == "shared" and isinstance(hca_max, int) and count > hca_max:
                reasons.append("the pod asks for %d but rdmaHcaMax of %s is %d" % (count, name, hca_max))
            if reasons:
                view["resources"][name] = {"status": "missing", "devices": devices, "reason": "; ".join(reasons)}
                view["ok"] = False
            else:
                view["resources"][name] = {"status": "ok", "devices": devices,
                                           "reason": "advertised by the %s device plugin (%s)"
                                                     % ("RDMA shared" if ad["plugin"] == "shared" else "SR-IOV",
                                                        ", ".join(sorted(set(d for hs in devices for d in hs))))}
        shared = [n for n in names if (n in ads and ads[n]["plugin"] == "shared")
                  or (n not in ads and n.startswith(SHARED_PREFIX + "/"))]
        why = shared_capacity(pool, hosts, shared)
        if why:
            for name in shared:
                if view["resources"][name]["status"] == "missing":
                    view["resources"][name]["reason"] += "; " + why
        result["pools"][pool] = view
        result["ok"] = result["ok"] and view["ok"]
    return result
