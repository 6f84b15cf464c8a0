# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: roce_qos_ports
short_description: A host's per-port rdma.fabric.roce_qos settings, resolved and validated on the controller
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Resolves which RoCE ports a host has and what each one gets, the way M(rdma.fabric.roce_qos) reads its O(ports)
    list, and validates every value with the module's own rules (C(plugins/module_utils/common/qos_model.py)) before
    anything is sent to the host. Errors name the variable the value came from.
  - "The ports: O(ports) when not empty (netdev names, or mappings C({netdev: NAME, <option>: VALUE})), else every
    port of kind C(roce) in O(facts) (the rule of C(plugins/module_utils/common/rdma_schema.py): iWARP ports such as C(siw)
    are not RoCE)."
  - "With O(facts), each named port is resolved on them by the resolver the module runs on the host
    (C(plugins/module_utils/common/qos_ports.py)): a netdev that is not a RoCE port of the host is refused here,
    naming the variable, as the module would refuse it; without O(facts) that check is left to the module."
  - "Each port's settings: the input (the defaults), overridden by O(port_settings) for that netdev, overridden by
    the port's own mapping in O(ports); a value V(null) leaves that option of that port alone and is dropped."
  - "O(port_settings) takes options only (an address - C(device), C(port), C(netdev) - inside it is refused: the key
    is the port); settings for a netdev that is not one of the resolved ports are a warning (they apply to nothing
    on this host: a typo, or group variables for hosts of another layout)."
  - Used by the C(rdma.fabric.lossless_ethernet) role (its C(resolve) entry point) and by the fabric report, which
    compares each port with what the role resolved for it.
options:
  _input:
    description: The default settings of every port, a mapping of M(rdma.fabric.roce_qos) options.
    type: dict
    required: true
  ports:
    description: The ports, V([]) for every RoCE port in O(facts).
    type: list
    elements: raw
    default: []
  port_settings:
    description: Per-port overrides, a mapping of netdev to a mapping of options.
    type: dict
    default: {}
  facts:
    description: The host's C(ansible_facts.rdma); needed when O(ports) is empty; the named ports are checked on it.
    type: dict
  var_prefix:
    description: Put before option names in errors, so that they name the variables (for example V(lossless_ethernet_)).
    type: str
    default: ""
"""

EXAMPLES = r"""
- name: What lossless_ethernet configures on this host
  ansible.builtin.debug:
    msg: >-
      {{ {'trust': 'dscp', 'pfc': [3]} | rdma.fabric.roce_qos_ports(ports=[], port_settings={'eth1': {'mtu': 4200}},
         facts=ansible_facts.rdma) }}
"""

RETURN = r"""
_value:
  description: One mapping per port, C(netdev) and the options that port gets (no null values), in port order.
  type: list
  elements: dict
"""

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_ports
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import (
    ValidationError,
    check_backend,
    choice,
    merge_port,
    normalise_input,
    port_request,
    ON_UNSUPPORTED_CHOICES,
    ADDRESS_KEYS,
    PORT_ENTRY_KEYS,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError, host_facts_list

FORMS = "a list of netdev names or of mappings {netdev: NAME, <option>: VALUE}"


def _fail(name, message):
    raise AnsibleFilterError("%s: %s" % (name, message))


def _check_defaults(defaults, prefix):
    try:
        normalise_input(defaults)
        if defaults.get("backend") is not None:
            check_backend("backend", defaults["backend"])
        if defaults.get("on_unsupported") is not None:
            choice("on_unsupported", defaults["on_unsupported"], ON_UNSUPPORTED_CHOICES)
    except ValidationError as e:
        _fail(prefix + e.param, e.detail)


def _check_keys(name, mapping, allowed=PORT_ENTRY_KEYS):
    if not isinstance(mapping, dict):
        _fail(name, "expected a mapping of options, got %r" % (mapping,))
    unknown = sorted(str(k) for k in mapping if k not in allowed)
    if unknown:
        _fail(name, "unknown option(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(allowed)))


def _wanted(ports, facts, prefix):
    """``[(name of the entry, entry mapping)]`` of the listed ports, or of every RoCE port in the facts."""
    if not isinstance(ports, (list, tuple)):
        _fail(prefix + "ports", "expected %s, got %r" % (FORMS, ports))
    if ports:
        out = []
        for i, p in enumerate(ports):
            name = "%sports[%d]" % (prefix, i)
            if isinstance(p, str):
                p = {"netdev": p}
            if not isinstance(p, dict) or not p.get("netdev"):
                _fail(name, "expected a netdev name or a mapping with netdev, got %r (%s)" % (p, FORMS))
            _check_keys(name, p)
            out.append((name, p))
        return out
    try:
        hosts = host_facts_list(facts)
    except RdmaFactsError as e:
        _fail(prefix + "ports", "[] means every RoCE port of the host, which needs its RDMA facts "
                                "(ansible_facts.rdma, from rdma.fabric.rdma_device_facts): %s" % e)
    return [(None, {"netdev": n}) for n in qos_ports.roce_netdevs(hosts[0][1])]


def _host_facts(facts):
    """The one host's facts document of ``facts`` (None when not given or not facts)."""
    if facts is None:
        return None
    try:
        return host_facts_list(facts)[0][1]
    except (RdmaFactsError, IndexError):
        return None


def roce_qos_ports(defaults, ports=None, port_settings=None, facts=None, var_prefix=""):
    """Resolved, validated per-port settings (see DOCUMENTATION)."""
    prefix = var_prefix or ""
    defaults = dict((k, v) for k, v in (defaults or {}).items() if v is not None)
    _check_defaults(defaults, prefix)
    port_settings = {} if port_settings is None else port_settings
    if not isinstance(port_settings, dict):
        _fail(prefix + "port_settings", "expected a mapping {NETDEV: {<option>: VALUE}}, got %r" % (port_settings,))
    for netdev, settings in port_settings.items():
        # the key is the port: an address inside (device, port, another netdev) would be dropped
        _check_keys("%sport_settings.%s" % (prefix, netdev), settings,
                    tuple(k for k in PORT_ENTRY_KEYS if k not in ADDRESS_KEYS))
    out, where = [], {}
    host = _host_facts(facts)
    for name, entry in _wanted(ports or [], facts, prefix):
        netdev = entry["netdev"]
        if netdev in where:
            _fail(prefix + "ports", "%s is listed twice (%s and %s)" % (netdev, where[netdev], name))
        where[netdev] = name
        settings = port_settings.get(netdev) or {}
        merged = merge_port(defaults, merge_port(settings, entry, drop_null=False))
        try:
            request = port_request(merged)
        except ValidationError as e:
            option = e.param
            source = (name + "." + option if name and option in entry
                      else "%sport_settings.%s.%s" % (prefix, netdev, option) if option in settings
                      else prefix + option)
            _fail(source, "port %s: %s" % (netdev, e.detail))
        if name and host is not None:
            try:
                qos_ports.resolve(host, request)   # the host's own resolver, on the host's facts
            except ValidationError as e:
                _fail(name + "." + e.param, e.detail)
        out.append(merged)
    for netdev in sorted(set(port_settings) - set(where), key=str):
        # legitimate in group variables for hosts of several layouts, and a typo (ens16O) all the same
        Display().warning("rdma.fabric.roce_qos_ports: %sport_settings.%s: %s is not one of this host's ports (%s), so "
                          "these settings apply to nothing here" % (prefix, netdev, netdev, ", ".join(where) or "none"))
    return out


class FilterModule(object):
    """rdma.fabric roce_qos port resolution."""

    def filters(self):
        return {"roce_qos_ports": roce_qos_ports}
