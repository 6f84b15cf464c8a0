# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read many hosts' variables once, for the fleet-wide action plugins.

An action plugin runs once on the controller and gets ``hostvars`` in its task variables.
:func:`read_hosts` walks the hosts it is given one time, each host's variables computed once
(``HostVars.raw_get``: inventory, host and group vars, facts; the way ``hostvars[host]``
computes them), and takes from them only what the caller asks for: facts (data, never
templated) and a few variables, templated in that host's context only when they hold a
template. Nothing is copied into other hosts' variables, no task runs per host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from collections.abc import Mapping

from ansible.errors import AnsibleError
from ansible.inventory.manager import InventoryManager

_MISSING = object()


def _needs_templating(value):
    """Strings holding a template, and containers (which may hold one)."""
    if isinstance(value, str):
        return "{{" in value or "{%" in value
    return isinstance(value, (Mapping, list, tuple))


def read_hosts(task_vars, hosts, variables=(), facts=(), data=()):
    """``{host: {"facts": {name: value or None}, "vars": {name: value}, "known": bool}}`` in host order.

    ``variables``: names of host variables to read, templated where they hold a template;
    ``data``: names of variables that hold data (registered results, facts set by set_fact),
    read as they are; absent ones are left out of ``vars``. ``facts``: names under
    ``ansible_facts`` (absent ones are None). ``known`` is false for a name that is not an
    inventory host.
    """
    hostvars = task_vars.get("hostvars")
    out = {}
    for host in hosts:
        raw = hostvars.raw_get(host) if hostvars is not None and host in hostvars else None
        if not isinstance(raw, Mapping):
            out[host] = {"facts": dict((name, None) for name in facts), "vars": {}, "known": False}
            continue
        host_facts = raw.get("ansible_facts")
        if not isinstance(host_facts, Mapping):
            host_facts = {}
        values = {}
        templated = None
        for name in variables:
            value = raw.get(name, _MISSING)
            if value is _MISSING:
                continue
            if _needs_templating(value):
                if templated is None:
                    templated = hostvars[host]
                value = templated[name]
            values[name] = value
        for name in data:
            if name in raw:
                values[name] = raw[name]
        out[host] = {"facts": dict((name, host_facts.get(name)) for name in facts), "vars": values, "known": True}
    return out


def limit_hosts(task_vars, loader):
    """The inventory hosts this run may touch: those its ``--limit`` selects (``ansible_limit``), resolved
    the way ansible-playbook resolves it (host patterns, groups, ``!`` and ``&``, ``@file``), against the
    inventory's groups (``groups``); None without a limit (every host).
    """
    limit = task_vars.get("ansible_limit")
    if not limit:
        return None
    inventory = InventoryManager(loader, parse=False)
    for group, hosts in (task_vars.get("groups") or {}).items():
        inventory.add_group(group)
        for host in hosts:
            inventory.add_host(host, group=group)
    inventory.subset(limit)
    try:
        return [h.name for h in inventory.get_hosts("all")]
    except AnsibleError:
        # A limit that matches no host: ansible-playbook warns (or, with HOST_PATTERN_MISMATCH=error, as under
        # ansible-test, stops) and runs nothing; here it selects no host.
        return []
