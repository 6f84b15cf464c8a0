# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the RoCE ports a ``roce_qos`` call is about, all of them with one facts read.

"Is an RDMA port" and "is a RoCE port" mean what the facts say
(``ansible_facts.rdma``, read by :mod:`..rdma_facts`, kinds decided by
:func:`..rdma_schema.port_kind`): a netdev belongs to a port when it is that
port's netdev (rxe ``parent``, the PCI function's ``net/`` entry matched by
``dev_port``, else the lowest GID netdev) or appears in the port's GID table
(``ports/*/gid_attrs/ndevs``: VLAN netdevs on top of a RoCE port). Only ports
of kind ``roce`` are accepted; an iWARP port (node type RNIC, link layer
Ethernet too) or an InfiniBand port is rejected with an error naming it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, check_netdev_name, port_request
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import RdmaFactsGatherer
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    port_kind,
    port_netdev,
    ports,
)

KIND_TEXT = {"iwarp": "an iWARP port (node type RNIC)", "infiniband": "an InfiniBand port", None: "a port of unknown kind"}


class PortRef(object):
    """One RoCE port: its netdev, RDMA device, port number, link layer, driver."""

    def __init__(self, netdev, device, port, link_layer=None, soft=False, driver=None):
        self.netdev = netdev
        self.device = device
        self.port = port
        self.link_layer = link_layer
        self.soft = soft
        self.driver = driver

    def as_dict(self):
        return {"netdev": self.netdev, "device": self.device, "port": self.port}


def read_facts(tree):
    """The host's RDMA facts (one read for every port of a call)."""
    try:
        return RdmaFactsGatherer(tree.sysfs).gather()
    except RdmaFactsError as e:
        raise ValidationError("sysfs_path", str(e))


def _carries(dev, port, netdev):
    return port_netdev(dev, port) == netdev or any(
        isinstance(g, dict) and g.get("netdev") == netdev for g in port.get("gids") or [])


def _by_netdev(facts, tree, req):
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
            prefix + "netdev", "interface %r is not an RDMA port: no RDMA device under %s has it as its netdev or in its "
            "GID table. Create the RDMA link first (e.g. rdma.fabric.soft_roce or the NIC driver)"
            % (netdev, tree.sys("class", "infiniband")))
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


def resolve(facts, tree, req):
    """The :class:`PortRef` of one validated request; ValidationError naming the parameter otherwise."""
    dev, p = _by_netdev(facts, tree, req) if req.netdev is not None else _by_device(facts, req)
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
    return PortRef(netdev, name, number, p.get("link_layer"), bool(dev.get("soft")), dev.get("driver"))


def check_netdevs_exist(tree, requests):
    """Every named netdev must exist before anything else is read."""
    for req in requests:
        if req.netdev is not None and not tree.exists(tree.sys("class", "net", req.netdev)):
            raise ValidationError(req.prefix + "netdev", "interface %r does not exist (no %s)"
                                  % (req.netdev, tree.sys("class", "net", req.netdev)))


def resolve_ports(tree, requests, facts=None):
    """``[PortRef]`` of ``requests`` (validated :class:`..model.PortRequest`), with ONE facts read."""
    check_netdevs_exist(tree, requests)
    facts = read_facts(tree) if facts is None else facts
    refs = [resolve(facts, tree, req) for req in requests]
    seen = {}
    for req, ref in zip(requests, refs):
        if ref.netdev in seen:
            raise ValidationError("ports", "%s is listed twice (%s and %s); give each port once"
                                  % (ref.netdev, seen[ref.netdev], req.label))
        seen[ref.netdev] = req.label
    return refs


def find_port(tree, netdev=None, device=None, port=None):
    """One port by ``netdev``, or ``device`` with ``port`` (default 1); raise :class:`ValidationError`."""
    return resolve_ports(tree, [port_request({"netdev": netdev, "device": device, "port": port})])[0]
