# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The owner of the facts schema (``ansible_facts.rdma``, schema version 1).

Everything that writes or reads the facts imports its names from here: the
schema version, the error type, the sort order of device names and the one
rule that says what kind of RDMA port a port is (:func:`port_kind`):

* ``iwarp``: the device's node type is ``RNIC`` (iWARP NICs such as Intel
  E810 in iWARP mode, Chelsio, Soft-iWARP ``siw``); its link layer reads
  ``Ethernet`` too, but it is not RoCE: no PFC/ToS, and rdma_cm is required;
* ``infiniband``: link layer ``InfiniBand``;
* ``roce``: link layer ``Ethernet`` on any other node type (RoCE NICs, rxe);
* ``None``: the link layer is unknown.

Host-side code (modules) and controller-side code (filters, plugin_utils)
both import this file, so it uses nothing but the standard library. The
filter ``rdma.fabric.rdma_ports`` exposes :func:`ports` to roles and
playbooks, so YAML never restates the rule.

Filters and roles that turn facts into configuration (NCCL environment,
Kubernetes device-plugin selectors, node labels) select usable ports
through :func:`select_ports`, so "which ports count" is decided in one
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

# The version of ansible_facts.rdma (docs/DESIGN.md, 'Facts schema'); the GPUDirect facts and the report have their own.
SCHEMA_VERSION = 1
_NATURAL_RE = re.compile(r"(\d+)")
LINK_LAYERS = ("Ethernet", "InfiniBand")
# An RDMA device name or a shell glob of them (IB_DEVICE_NAME_MAX is 64): what ``devices`` filters and
# expected-port matches take. A glob of other characters could only match nothing, silently.
DEVICE_GLOB_RE = re.compile(r"[A-Za-z0-9_.:*?!\[\]-]{1,64}")
DEVICE_GLOB_RULE = "an RDMA device name or a shell glob of them such as mlx5_* (letters, digits and _ . : * ? ! [ ] -)"


PORT_KINDS = ("roce", "infiniband", "iwarp")
# Node type of iWARP devices, as the facts spell it (the text after "4: ").
IWARP_NODE_TYPE = "RNIC"


class RdmaFactsError(ValueError):
    """Bad input or facts that cannot give the requested answer; the message names the parameter."""


def natural_key(text):
    """Sort key that orders ``mlx5_2`` before ``mlx5_10``."""
    text = "" if text is None else str(text)
    return [int(part) if part.isdigit() else part for part in _NATURAL_RE.split(text)]


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


def port_kind(dev, port):
    """``roce``, ``infiniband``, ``iwarp`` or None (unknown link layer) for one port of one device."""
    if dev.get("node_type") == IWARP_NODE_TYPE:
        return "iwarp"
    link_layer = port.get("link_layer")
    if link_layer == "InfiniBand":
        return "infiniband"
    if link_layer == "Ethernet":
        return "roce"
    return None


def check_kinds(kinds, param="kinds"):
    """Validate a port-kind filter; returns a tuple (empty = all kinds)."""
    if kinds is None:
        return ()
    if isinstance(kinds, str):
        kinds = [kinds]
    if not isinstance(kinds, (list, tuple)):
        raise RdmaFactsError("%s must be a list of port kinds (allowed: %s)" % (param, ", ".join(PORT_KINDS)))
    bad = [k for k in kinds if k not in PORT_KINDS]
    if bad:
        raise RdmaFactsError("%s: unknown port kind(s) %s; allowed: %s"
                             % (param, ", ".join(str(b) for b in bad), ", ".join(PORT_KINDS)))
    return tuple(kinds)


def ports(facts, kinds=None, active_only=False, include_soft=True, include_vfs=True):
    """``[(device, port), ...]`` of one host whose :func:`port_kind` is in ``kinds`` (empty = any), in facts order.

    Unlike :func:`select_ports` this keeps ports that are down and soft
    devices by default: it answers "what is there", e.g. which netdevs
    ``lossless_ethernet`` configures (a port that is down still gets its
    QoS, so it comes up lossless).
    """
    wanted = check_kinds(kinds)
    out = []
    for dev in facts.get("devices") or []:
        if not isinstance(dev, dict):
            continue
        if dev.get("soft") and not include_soft:
            continue
        if (dev.get("sriov") or {}).get("is_vf") and not include_vfs:
            continue
        for port in dev.get("ports") or []:
            if active_only and port.get("state") != "ACTIVE":
                continue
            if wanted and port_kind(dev, port) not in wanted:
                continue
            out.append((dev, port))
    return out


def roce_ports(facts, **kwargs):
    """:func:`ports` of kind ``roce``."""
    return ports(facts, kinds=("roce",), **kwargs)


def ib_ports(facts, **kwargs):
    """:func:`ports` of kind ``infiniband``."""
    return ports(facts, kinds=("infiniband",), **kwargs)


def iwarp_ports(facts, **kwargs):
    """:func:`ports` of kind ``iwarp``."""
    return ports(facts, kinds=("iwarp",), **kwargs)


def port_view(dev, port):
    """A flat, JSON-friendly record of one port, as the ``rdma_ports`` filter returns it."""
    return {
        "device": dev.get("name"), "port": port.get("number"), "kind": port_kind(dev, port),
        "netdev": port.get("netdev"), "carrier_netdev": port_netdev(dev, port),
        "link_layer": port.get("link_layer"), "state": port.get("state"), "rate_gbps": port.get("rate_gbps"),
        "soft": bool(dev.get("soft")), "is_vf": bool((dev.get("sriov") or {}).get("is_vf")),
        "driver": dev.get("driver"), "pci_address": dev.get("pci_address"),
        "roce_v2_ipv4_gid_index": port.get("roce_v2_ipv4_gid_index"),
    }


def pci_nics(facts):
    """The RDMA devices that sit on a PCI function (not soft rxe/siw), in facts order."""
    return [dev for dev in facts.get("devices") or []
            if isinstance(dev, dict) and not dev.get("soft") and dev.get("pci_address")]


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


def check_device_globs(devices, param="devices"):
    """Validate a device-name filter (a list of :data:`DEVICE_GLOB_RE` globs); returns a list (empty = all)."""
    if devices is None:
        return []
    if not isinstance(devices, (list, tuple)):
        raise RdmaFactsError("%s must be a list of RDMA device name globs, got %r" % (param, devices))
    for i, pattern in enumerate(devices):
        if not isinstance(pattern, str) or not DEVICE_GLOB_RE.fullmatch(pattern):
            raise RdmaFactsError("%s[%d]: %r is not allowed; allowed: %s" % (param, i, pattern, DEVICE_GLOB_RULE))
    return list(devices)


def _device_matches(name, patterns):
    return not patterns or any(fnmatch.fnmatchcase(name, pat) for pat in patterns)


def select_ports(facts, link_layers=None, devices=None, include_soft=False, include_vfs=False, active_only=True):
    """``[(device, port), ...]`` of one host's ACTIVE ports (any state with ``active_only=False``), naturally sorted.

    ``link_layers``: iterable of ``Ethernet``/``InfiniBand`` (empty = all).
    ``devices``: ibdev name globs (empty = all).
    """
    layers = check_link_layers(link_layers)
    patterns = check_device_globs(devices)
    out = [(dev, port) for dev, port in
           ports(facts, active_only=active_only, include_soft=include_soft, include_vfs=include_vfs)
           if dev.get("name") and _device_matches(dev["name"], patterns)
           and (not layers or port.get("link_layer") in layers)]
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


# The kernel modules programs need to use RDMA devices from user space: ib_uverbs gives the verbs
# (/dev/infiniband/uverbsN), rdma_ucm the RDMA connection manager (/dev/infiniband/rdma_cm). Without them the
# devices exist but no program (no pod through the Kubernetes RDMA device plugins) can use them.
USER_SPACE_MODULES = ("ib_uverbs", "rdma_ucm")


def missing_user_space_modules(facts):
    """The :data:`USER_SPACE_MODULES` the facts' ``modules`` report as not loaded, on a host with RDMA devices.

    ``[]`` when the host has no RDMA device, or when ``modules`` does not say: missing, not a mapping, a module not
    listed, or ``ib_core`` itself not reported loaded (every RDMA device needs it, and it has a /sys/module entry
    even when built in, so a host with devices and no ``ib_core`` entry is one whose module list could not be
    read: unknown, not missing). A user-space module built into the kernel without parameters has no
    /sys/module entry, so the facts report it absent.
    """
    if not isinstance(facts, dict) or not facts.get("devices"):
        return []
    modules = facts.get("modules")
    if not isinstance(modules, dict) or modules.get("ib_core") is not True:
        return []
    return [name for name in USER_SPACE_MODULES if modules.get(name) is False]
