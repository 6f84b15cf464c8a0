# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the RoCE port a ``roce_qos`` call is about.

"Is an RDMA port" means what the facts say (``ansible_facts.rdma``, read by
:mod:`..rdma_facts`, the single source of truth): the netdev is a port's own
netdev (rxe ``parent``, the PCI function's ``net/`` entry matched by
``dev_port``, else the lowest GID netdev), or it appears in a port's GID
table (``ports/*/gid_attrs/ndevs``: VLAN netdevs on top of a RoCE port).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import (
    ValidationError,
    check_ibdev_name,
    check_netdev_name,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_facts import RdmaFactsError, RdmaFactsGatherer


class PortRef(object):
    """One RoCE port: its netdev, RDMA device, port number and link layer."""

    def __init__(self, netdev, device, port, link_layer=None, soft=False):
        self.netdev = netdev
        self.device = device
        self.port = port
        self.link_layer = link_layer
        self.soft = soft

    def as_dict(self):
        return {"netdev": self.netdev, "device": self.device, "port": self.port}


def _facts(tree):
    try:
        return RdmaFactsGatherer(tree.sysfs).gather()
    except RdmaFactsError as e:
        raise ValidationError("sysfs_path", str(e))


def find_port(tree, netdev=None, device=None, port=None, facts=None):
    """Resolve the port; raise :class:`ValidationError` naming the parameter.

    Either ``netdev`` (its RDMA device/port is looked up), or ``device`` with
    ``port`` (default 1; its netdev is looked up). ``facts``: the host's RDMA
    facts when the caller has them already; None reads them from ``tree``.
    """
    if netdev is not None:
        check_netdev_name("netdev", netdev)
    if device is not None:
        check_ibdev_name("device", device)
    if netdev is None and device is None:
        raise ValidationError("netdev", "give netdev, or device (with port)")
    if netdev is not None and not tree.exists(tree.sys("class", "net", netdev)):
        raise ValidationError("netdev", "interface %r does not exist (no %s)" % (netdev, tree.sys("class", "net", netdev)))
    if facts is None:
        facts = _facts(tree)
    devices = dict((d["name"], d) for d in facts["devices"])
    if netdev is not None:
        ref = facts["netdevs"].get(netdev)
        if ref is None:
            raise ValidationError(
                "netdev", "interface %r is not an RDMA port: no RDMA device under %s has it as its netdev or in its "
                "GID table. Create the RDMA link first (e.g. rdma.fabric.soft_roce or the NIC driver)"
                % (netdev, tree.sys("class", "infiniband")))
        dev_name, number = ref["device"], ref["port"]
        if device is not None and device != dev_name:
            raise ValidationError("device", "interface %r belongs to RDMA device %r, not %r" % (netdev, dev_name, device))
        if port is not None and port != number:
            raise ValidationError("port", "interface %r is port %d of %s, not port %s" % (netdev, number, dev_name, port))
        nd = netdev
    else:
        if device not in devices:
            raise ValidationError("device", "RDMA device %r does not exist; present: %s" % (device, ", ".join(sorted(devices)) or "none"))
        dev_name = device
        number = 1 if port is None else port
        numbers = [p["number"] for p in devices[device]["ports"]]
        if number not in numbers:
            raise ValidationError("port", "%s has no port %s; ports: %s" % (device, number, ", ".join(str(x) for x in numbers) or "none"))
        nd = [p for p in devices[device]["ports"] if p["number"] == number][0]["netdev"]
        if not nd:
            raise ValidationError("device", "%s port %d has no netdev (not a RoCE port)" % (device, number))
        check_netdev_name("device", nd)
    dev = devices[dev_name]
    port_facts = [p for p in dev["ports"] if p["number"] == number][0]
    link_layer = port_facts["link_layer"]
    if link_layer is not None and link_layer != "Ethernet":
        raise ValidationError(
            "netdev" if netdev is not None else "device",
            "%s port %d has link layer %s; roce_qos configures RoCE (Ethernet) ports only" % (dev_name, number, link_layer))
    return PortRef(nd, dev_name, number, link_layer, dev["soft"])
