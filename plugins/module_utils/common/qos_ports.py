# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one resolver of ``roce_qos``'s ports, on the facts document (``ansible_facts.rdma``).

Called by the host (``qos.port``, for ``roce_qos`` and ``rdma-fabric qos-apply``, on the facts it reads) and by
the controller (the ``rdma.fabric.roce_qos_ports`` filter of the ``lossless_ethernet`` role, on the facts of
the host), so the two cannot disagree about which port a netdev is, or whether it is a RoCE port.

A netdev belongs to a port when it is that port's netdev (the facts' ``netdev``, or an rxe/siw parent) or
appears in the port's GID table (VLAN netdevs on top of a RoCE port); the facts' ``netdevs`` mapping picks
among several, a RoCE port before any other kind. Only ports of kind ``roce``
(:func:`~.rdma_schema.port_kind`) are accepted: an iWARP or InfiniBand port is refused naming it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, check_netdev_name
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import port_kind, port_netdev, ports, roce_ports

KIND_TEXT = {"iwarp": "an iWARP port (node type RNIC)", "infiniband": "an InfiniBand port", None: "a port of unknown kind"}


def _carries(dev, port, netdev):
    return port_netdev(dev, port) == netdev or any(
        isinstance(g, dict) and g.get("netdev") == netdev for g in port.get("gids") or [])


def _by_netdev(facts, req, where):
    """The (device, port) of ``req.netdev``: the facts' own mapping first, a RoCE port before any other kind."""
    netdev, prefix = req.netdev, req.prefix
    found = [(dev, p) for dev, p in ports(facts) if _carries(dev, p, netdev)]
    mapped = facts.get("netdevs", {}).get(netdev) or {}
    found.sort(key=lambda dp: (port_kind(*dp) != "roce",
                               (dp[0].get("name"), dp[1].get("number")) != (mapped.get("device"), mapped.get("port"))))
    if req.device is not None:
        found = [dp for dp in found if dp[0].get("name") == req.device] or found
    if not found:
        raise ValidationError(
            prefix + "netdev", "interface %r is not an RDMA port: no RDMA device %s has it as its netdev or in its "
            "GID table. Create the RDMA link first (e.g. rdma.fabric.soft_roce or the NIC driver)" % (netdev, where))
    dev, p = found[0]
    if req.device is not None and req.device != dev.get("name"):
        raise ValidationError(prefix + "device", "interface %r belongs to RDMA device %r, not %r" % (netdev, dev.get("name"), req.device))
    if req.port is not None and req.port != p.get("number"):
        raise ValidationError(prefix + "port", "interface %r is port %d of %s, not port %s" % (netdev, p.get("number"), dev.get("name"), req.port))
    return dev, p


def _by_device(facts, req):
    prefix = req.prefix
    devices = dict((d.get("name"), d) for d in facts.get("devices") or [])
    if req.device not in devices:
        raise ValidationError(prefix + "device", "RDMA device %r does not exist; present: %s" % (
            req.device, ", ".join(sorted(devices)) or "none"))
    dev = devices[req.device]
    number = 1 if req.port is None else req.port
    matching = [p for p in dev.get("ports") or [] if p.get("number") == number]
    if not matching:
        raise ValidationError(prefix + "port", "%s has no port %s; ports: %s" % (
            req.device, number, ", ".join(str(p.get("number")) for p in dev.get("ports") or []) or "none"))
    return dev, matching[0]


def resolve(facts, req, where="in the RDMA facts"):
    """``(device, port, netdev)`` of one validated request (:class:`~.qos_model.PortRequest`) on ``facts``;
    :class:`~.qos_model.ValidationError` naming the parameter otherwise. ``where`` says where the devices were
    read (``under /sys/class/infiniband`` on the host)."""
    dev, p = _by_netdev(facts, req, where) if req.netdev is not None else _by_device(facts, req)
    name, number = dev.get("name"), p.get("number")
    kind = port_kind(dev, p)
    if kind != "roce":
        ll = p.get("link_layer")
        raise ValidationError(
            req.prefix + ("netdev" if req.netdev is not None else "device"),
            "%s port %s%s has link layer %s: %s; roce_qos configures RoCE ports only" % (
                name, number, " (%s)" % req.netdev if req.netdev else "", ll or "unknown", KIND_TEXT[kind]))
    netdev = req.netdev or port_netdev(dev, p)
    if not netdev:
        raise ValidationError(req.prefix + "device", "%s port %d has no netdev (not a RoCE port)" % (name, number))
    if req.netdev is None:
        check_netdev_name(req.prefix + "device", netdev)
    return dev, p, netdev


def roce_netdevs(facts):
    """The netdev of every RoCE port of ``facts``, in facts order, each once: the ports of ``ports: []``."""
    seen = []
    for dev, port in roce_ports(facts):
        netdev = port_netdev(dev, port)
        if netdev and netdev not in seen:
            seen.append(netdev)
    return seen
