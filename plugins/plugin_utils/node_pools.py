# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Node pools: the hosts of a fleet grouped by NIC layout, computed once per run.

Every controller-side derivation from ``ansible_facts.rdma`` (Kubernetes device-plugin
selectors and node labels, the NCCL environment, the report's pool summary) gives the same
answer for two hosts whose facts agree on what that derivation reads. A fleet of thousands
of nodes has a handful of such layouts, so the derivations run once per pool, on one
representative's facts, and every host takes its pool's answer.

The pool rule (:func:`layout`): two hosts are in the same pool when they have the same RDMA
devices, compared by

* device: ``name``, ``driver``, ``node_type``, ``soft``, PCI ``vendor_id`` and
  ``device_id``, ``numa_node``, ``parent_netdev`` (rxe/siw), whether it is an SR-IOV
  virtual function and the netdev of its physical function;
* port: ``number``, ``state``, ``link_layer``, ``netdev``, ``roce_v2_ipv4_gid_index``
  and the rdma_cm defaults (``roce.default_mode``, ``roce.default_tos``);

in the facts' order of devices and ports, and, only when one of them is reported absent, which
user-space RDMA modules (``ib_uverbs``, ``rdma_ucm``) a host with RDMA devices lacks (so a host
that cannot give its devices to programs is in a pool of its own, and the pools of complete hosts
keep their names). What identifies a host is left out: GUIDs, GIDs
and addresses, PCI addresses, MTU, rate, LIDs. A host whose port is down is therefore in
another pool than its healthy twins until the port comes back (its NCCL HCA list and node
labels do differ). A host without RDMA facts is in no pool (:attr:`NodePools.missing`).

A pool's name is ``<ports>-<hash>``: the port count per kind in the port rule's words
(``ib2``, ``roce1``, ``roce2-ib1``; ``soft`` for rxe/siw ports, ``none`` without ports),
then the first 8 hex digits of the SHA-256 of the layout. It is stable across runs and
inventories (the same layout always gets the same name), short enough for a Kubernetes
label value, and sorts pools of one kind together.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import json

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    host_facts_list,
    missing_user_space_modules,
    port_kind,
)

DEVICE_KEYS = ("name", "driver", "node_type", "soft", "vendor_id", "device_id", "numa_node", "parent_netdev")
PORT_KEYS = ("number", "state", "link_layer", "netdev", "roce_v2_ipv4_gid_index")
ROCE_KEYS = ("default_mode", "default_tos")
# Order of the kinds in a pool name.
_NAME_KINDS = (("infiniband", "ib"), ("roce", "roce"), ("iwarp", "iwarp"), ("soft", "soft"), (None, "other"))


def _pf_netdevs(facts):
    """PCI address -> netdev of the first port with one (a VF's physical function)."""
    out = {}
    for dev in facts.get("devices") or []:
        if isinstance(dev, dict) and dev.get("pci_address"):
            for port in dev.get("ports") or []:
                if isinstance(port, dict) and port.get("netdev"):
                    out.setdefault(dev["pci_address"], port["netdev"])
                    break
    return out


def layout(facts):
    """The pool key of one host's ``ansible_facts.rdma``: a JSON-ready list, see the module docstring."""
    pf_netdev = None
    devices = []
    for dev in facts.get("devices") or []:
        if not isinstance(dev, dict):
            continue
        sriov = dev.get("sriov") if isinstance(dev.get("sriov"), dict) else {}
        entry = [dev.get(k) for k in DEVICE_KEYS]
        if sriov.get("is_vf"):
            if pf_netdev is None:
                pf_netdev = _pf_netdevs(facts)
            entry.append(["vf", pf_netdev.get(sriov.get("physfn"))])
        else:
            entry.append(None)
        ports = []
        for port in dev.get("ports") or []:
            if not isinstance(port, dict):
                continue
            roce = port.get("roce") if isinstance(port.get("roce"), dict) else {}
            ports.append([port.get(k) for k in PORT_KEYS] + [roce.get(k) for k in ROCE_KEYS])
        entry.append(ports)
        devices.append(entry)
    return devices


def _kind_counts(facts):
    counts = {}
    for dev in facts.get("devices") or []:
        if not isinstance(dev, dict):
            continue
        for port in dev.get("ports") or []:
            if isinstance(port, dict):
                kind = "soft" if dev.get("soft") else port_kind(dev, port)
                counts[kind] = counts.get(kind, 0) + 1
    return counts


def pool_key(facts):
    """The text two hosts of one pool share: :func:`layout` as JSON, with the missing user-space RDMA modules
    when there are any (see the module docstring)."""
    missing = missing_user_space_modules(facts)
    key = [layout(facts), {"missing_user_space_modules": missing}] if missing else layout(facts)
    return json.dumps(key, separators=(",", ":"))


def pool_name(facts, key_text=None):
    """``<ports>-<hash8>`` for one host's facts (see the module docstring)."""
    if key_text is None:
        key_text = pool_key(facts)
    counts = _kind_counts(facts)
    summary = "-".join("%s%d" % (short, counts[kind]) for kind, short in _NAME_KINDS if counts.get(kind)) or "none"
    return "%s-%s" % (summary, hashlib.sha256(key_text.encode("utf-8")).hexdigest()[:8])


class NodePools(object):
    """Hosts grouped into pools; built once from ``{host: rdma facts or None}`` in host order.

    ``pools``: ``{name: {"name", "hosts": [...], "facts": the first host's facts}}`` in order of
    first appearance; ``host_pool``: ``{host: name}``; ``missing``: hosts without RDMA facts.
    """

    def __init__(self, facts_by_host, hosts=None):
        self.pools = {}
        self.host_pool = {}
        self.missing = []
        by_key = {}
        for host in (hosts if hosts is not None else list(facts_by_host)):
            facts = facts_by_host.get(host)
            if facts is None:
                self.missing.append(host)
                continue
            facts = host_facts_list({host: facts})[0][1]
            key_text = pool_key(facts)
            name = by_key.get(key_text)
            if name is None:
                name = pool_name(facts, key_text)
                by_key[key_text] = name
                self.pools[name] = {"name": name, "hosts": [], "facts": facts}
            self.pools[name]["hosts"].append(host)
            self.host_pool[host] = name

    def representatives(self):
        """``{pool name: facts}``: one host's facts per pool, for the per-pool derivations."""
        return dict((name, pool["facts"]) for name, pool in self.pools.items())

    def per_host(self, per_pool):
        """``{host: value}`` from ``{pool name: value}`` (hosts without facts left out)."""
        return dict((host, per_pool[name]) for host, name in self.host_pool.items())

    def summary(self):
        """``[{name, hosts: count, ports: [...]}]``: what each pool looks like, for reports and logs."""
        out = []
        for name, pool in self.pools.items():
            ports = []
            for dev in pool["facts"].get("devices") or []:
                for port in (dev.get("ports") or []) if isinstance(dev, dict) else []:
                    if isinstance(port, dict):
                        ports.append("%s/%s %s %s%s" % (
                            dev.get("name"), port.get("number"), port.get("link_layer"), port.get("state"),
                            " (soft)" if dev.get("soft") else ""))
            out.append({"name": name, "hosts": len(pool["hosts"]), "ports": ports})
        return out


def node_pools(facts_by_host, hosts=None):
    """:class:`NodePools` of ``{host: facts}`` (``hosts`` gives the order; default the mapping's)."""
    if not isinstance(facts_by_host, dict):
        raise RdmaFactsError("node pools need a mapping host -> ansible_facts.rdma, got %s" % type(facts_by_host).__name__)
    return NodePools(facts_by_host, hosts)
