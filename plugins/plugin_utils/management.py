# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which netdevs carry a host's management connection, and which drivers and RDMA devices they use.

From facts only (on the controller): Ansible's network facts (``setup`` with the ``network``
subset: each interface's addresses, ``module``, bond ``slaves``, bridge ``interfaces``, the
default routes) and the RDMA facts (``ansible_facts.rdma``: which netdev is which RDMA device's
port, and that device's driver). The management address is the host's ``ansible_host``; where it is
not an address on the host (a name, a loopback address, NAT or a port forward), the interfaces of
the default routes stand in for it. Bonds, bridges and VLANs (``parent.vid`` names) are followed down
to the netdevs whose driver carries the traffic. The mofed role refuses to reload a driver the
result names (users lost whole nodes to an openibd restart under their SSH session).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ipaddress


def _iface(facts, name):
    value = facts.get(name.replace("-", "_")) if name else None
    if not isinstance(value, dict):
        value = facts.get(name) if name else None
    return value if isinstance(value, dict) else {}


def _addresses(iface):
    out = []
    v4 = iface.get("ipv4")
    if isinstance(v4, dict) and v4.get("address"):
        out.append(v4["address"])
    for entry in iface.get("ipv4_secondaries") or []:
        if isinstance(entry, dict) and entry.get("address"):
            out.append(entry["address"])
    for entry in iface.get("ipv6") or []:
        if isinstance(entry, dict) and entry.get("address"):
            out.append(entry["address"].split("%")[0])
    return out


def _ip(text):
    try:
        return ipaddress.ip_address(str(text).strip("[]"))
    except ValueError:
        return None


def _lower(facts, name, seen):
    """``name`` and the netdevs under it (bond members, bridge ports, a VLAN's parent)."""
    if not name or name in seen:
        return []
    seen.add(name)
    out = [name]
    iface = _iface(facts, name)
    for member in list(iface.get("slaves") or []) + list(iface.get("interfaces") or []):
        out.extend(_lower(facts, member, seen))
    if "." in name:
        parent = name.rsplit(".", 1)[0]
        if parent in (facts.get("interfaces") or []):
            out.extend(_lower(facts, parent, seen))
    return out


def management_netdevs(facts, address=None, rdma=None):
    """The management connection's netdevs, their drivers and RDMA devices.

    Returns ``{"address", "source", "netdevs", "drivers", "rdma_devices"}``: ``source`` is
    ``address`` (an interface holds ``address``), ``default_route`` (it stands in) or ``unknown``
    (neither: no network facts); ``drivers``: each netdev's kernel module (Ansible's ``module``) and
    the driver of each RDMA device with a port on one of them (``rdma.netdevs``); soft RDMA
    devices (rxe, siw) add nothing (their driver is not the NIC's).
    """
    facts = facts if isinstance(facts, dict) else {}
    names = [n for n in (facts.get("interfaces") or []) if isinstance(n, str)]
    ip = _ip(address) if address else None
    top, source = [], "unknown"
    if ip is not None and not ip.is_loopback:
        top = [n for n in names if any(_ip(a) == ip for a in _addresses(_iface(facts, n)))]
        source = "address" if top else source
    if not top:
        for key in ("default_ipv4", "default_ipv6"):
            route = facts.get(key)
            if isinstance(route, dict) and route.get("interface") and route["interface"] not in top:
                top.append(route["interface"])
        source = "default_route" if top else "unknown"
    netdevs, seen = [], set()
    for name in top:
        netdevs.extend(_lower(facts, name, seen))
    drivers, devices = [], []
    rdma = rdma if isinstance(rdma, dict) else {}
    by_name = dict((d.get("name"), d) for d in rdma.get("devices") or [] if isinstance(d, dict))
    for name in netdevs:
        module = _iface(facts, name).get("module")
        if module and module not in drivers:
            drivers.append(module)
        entry = (rdma.get("netdevs") or {}).get(name)
        dev = by_name.get(entry.get("device")) if isinstance(entry, dict) else None
        if dev and not dev.get("soft"):
            if dev.get("name") not in devices:
                devices.append(dev.get("name"))
            if dev.get("driver") and dev["driver"] not in drivers:
                drivers.append(dev["driver"])
    return {"address": address, "source": source, "netdevs": netdevs, "drivers": drivers, "rdma_devices": devices}
