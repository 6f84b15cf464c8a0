# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the RoCE ports a ``roce_qos`` call is about, all of them with one facts read.

The netdevs must exist (sysfs); which port each is, and whether it is a RoCE
port, is decided on the facts read here (``facts.rdma_facts``) by the one
resolver, :func:`..common.qos_ports.resolve`, which the controller's
``roce_qos_ports`` filter calls on the same facts.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_ports
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, port_request
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import RdmaFactsGatherer


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


def resolve(facts, tree, req):
    """The :class:`PortRef` of one validated request (the one resolver, :func:`..common.qos_ports.resolve`, on the
    facts read here); ValidationError naming the parameter otherwise."""
    dev, p, netdev = qos_ports.resolve(facts, req, "under %s" % tree.sys("class", "infiniband"))
    return PortRef(netdev, dev.get("name"), p.get("number"), p.get("link_layer"), bool(dev.get("soft")), dev.get("driver"))


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
