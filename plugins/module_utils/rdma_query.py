# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only queries over ``ansible_facts.rdma`` (facts schema version 1).

The facts are the single source of truth of the collection (see
``docs``/DESIGN): filters and roles that turn them into configuration (NCCL
environment, Kubernetes device-plugin selectors, node labels) all select
ports through :func:`select_ports`, so "which ports count" is decided in one
place:

* only ports whose ``state`` is ``ACTIVE``;
* SR-IOV virtual functions (``sriov.is_vf``) left out unless asked for (they
  belong to the SR-IOV device plugin, not to the shared one);
* soft devices (rxe, siw) left out unless asked for (no PCI device: the
  Kubernetes device plugins cannot expose them, see docs/k8s_rdma_stack.md);
* optional restriction to link layers and to device-name globs.

Input shapes accepted by :func:`host_facts_list` (so that filters can take
what a playbook has at hand): one facts dict (``ansible_facts.rdma``), a
whole ``ansible_facts`` dict (with an ``rdma`` key), a list of either, or a
mapping ``{host: facts}``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import re

SCHEMA_VERSION = 1
LINK_LAYERS = ("Ethernet", "InfiniBand")


class RdmaFactsError(ValueError):
    """Facts that cannot give the requested answer (bad shape, no RDMA)."""


def natural_key(text):
    """Sort key that orders ``mlx5_2`` before ``mlx5_10``."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", str(text))]


def _is_facts(obj):
    return isinstance(obj, dict) and isinstance(obj.get("devices"), list)


def _unwrap(obj, where):
    """One host's ``rdma`` facts from a facts dict or an ``ansible_facts`` dict."""
    if _is_facts(obj):
        facts = obj
    elif isinstance(obj, dict) and _is_facts(obj.get("rdma")):
        facts = obj["rdma"]
    else:
        raise RdmaFactsError(
            "%s is not RDMA facts: expected ansible_facts.rdma (a dict with a 'devices' list, "
            "as returned by rdma.fabric.rdma_device_facts), got %s" % (where, type(obj).__name__))
    version = facts.get("schema_version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise RdmaFactsError(
            "%s has facts schema_version %r; this collection reads schema_version %d"
            % (where, version, SCHEMA_VERSION))
    return facts


def host_facts_list(data):
    """Normalise the accepted input shapes to ``[(label, facts), ...]``."""
    if data is None:
        raise RdmaFactsError("no RDMA facts given (got None)")
    if isinstance(data, dict) and not _is_facts(data) and not _is_facts(data.get("rdma")):
        if not data:
            raise RdmaFactsError("no RDMA facts given (empty mapping)")
        return [(str(host), _unwrap(value, "host %s" % host)) for host, value in sorted(data.items())]
    if isinstance(data, dict):
        return [("host", _unwrap(data, "the input"))]
    if isinstance(data, (list, tuple)):
        if not data:
            raise RdmaFactsError("no RDMA facts given (empty list)")
        return [("item %d" % i, _unwrap(item, "list item %d" % i)) for i, item in enumerate(data)]
    raise RdmaFactsError("RDMA facts must be a dict, a list of dicts or a mapping host -> facts, got %s"
                         % type(data).__name__)


def check_link_layers(link_layers, param="link_layers"):
    """Validate a link-layer filter; returns a tuple (empty = all)."""
    if link_layers is None:
        return ()
    if isinstance(link_layers, str):
        link_layers = [link_layers]
    if not isinstance(link_layers, (list, tuple)):
        raise RdmaFactsError("%s must be a list of link layers (allowed: %s)" % (param, ", ".join(LINK_LAYERS)))
    bad = [ll for ll in link_layers if ll not in LINK_LAYERS]
    if bad:
        raise RdmaFactsError("%s: unknown link layer(s) %s; allowed: %s"
                             % (param, ", ".join(str(b) for b in bad), ", ".join(LINK_LAYERS)))
    return tuple(link_layers)


def _device_matches(name, patterns):
    return not patterns or any(fnmatch.fnmatchcase(name, pat) for pat in patterns)


def select_ports(facts, link_layers=None, devices=None, include_soft=False, include_vfs=False):
    """``[(device, port), ...]`` of one host's ACTIVE ports, naturally sorted.

    ``link_layers``: iterable of ``Ethernet``/``InfiniBand`` (empty = all).
    ``devices``: ibdev name globs (empty = all).
    """
    layers = check_link_layers(link_layers)
    patterns = list(devices or [])
    out = []
    for dev in facts.get("devices") or []:
        name = dev.get("name")
        if not name or not _device_matches(name, patterns):
            continue
        if dev.get("soft") and not include_soft:
            continue
        sriov = dev.get("sriov") or {}
        if sriov.get("is_vf") and not include_vfs:
            continue
        for port in dev.get("ports") or []:
            if port.get("state") != "ACTIVE":
                continue
            if layers and port.get("link_layer") not in layers:
                continue
            out.append((dev, port))
    out.sort(key=lambda dp: (natural_key(dp[0]["name"]), dp[1].get("number") or 0))
    return out


def port_netdev(dev, port):
    """The netdev carrying a port: its own netdev, else an rxe/siw parent."""
    return port.get("netdev") or dev.get("parent_netdev")


def pci_id(value):
    """``0x15b3`` -> ``15b3`` (the form device plugins match), None stays None."""
    if value is None:
        return None
    text = str(value).strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    return text or None


def agreed_value(values):
    """The single value all entries share, else None (also None when any is None or empty)."""
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    first = values[0]
    return first if all(v == first for v in values) else None


def describe_ports(facts):
    """Short human description of why a host has (no) usable ports, for error messages."""
    devs = facts.get("devices") or []
    if not devs:
        return "no RDMA devices"
    parts = []
    for dev in devs:
        for port in dev.get("ports") or []:
            parts.append("%s:%s %s%s" % (dev.get("name"), port.get("number"), port.get("state"),
                                         " (soft)" if dev.get("soft") else ""))
    return ", ".join(parts) or "devices without ports"
