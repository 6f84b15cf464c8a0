# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Find the RoCE port a ``roce_qos`` call is about, from sysfs only.

TO BE MERGED: ``module_utils/rdma_facts.py`` (the facts reader, written in
parallel) did not exist when this was written. This is a deliberately minimal
lookup (netdev <-> RDMA device/port) that should become a call into the facts
reader once it lands; the three relations used are the ones the facts schema
documents: ``ports/N/gid_attrs/ndevs/*``, rxe ``parent`` and ``device/net``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import (
    ValidationError,
    check_ibdev_name,
    check_netdev_name,
)


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


def _ports(tree, dev):
    out = []
    for name in tree.listdir(tree.sys("class", "infiniband", dev, "ports")):
        if name.isdigit():
            out.append(int(name))
    return sorted(out)


def _port_of_netdev_in_device(tree, dev, netdev):
    """Port number whose netdev is ``netdev`` on ``dev`` (PCI device/net or rxe parent)."""
    ports = _ports(tree, dev)
    if not ports:
        return None
    parent = tree.read(tree.sys("class", "infiniband", dev, "parent"))
    if parent is not None and parent == netdev:
        return ports[0]
    if tree.exists(tree.sys("class", "infiniband", dev, "device", "net", netdev)):
        # Multi-port functions (mlx4) number their netdevs with dev_port (0-based).
        dev_port = tree.read_int(tree.sys("class", "net", netdev, "dev_port"))
        if dev_port is not None and (dev_port + 1) in ports:
            return dev_port + 1
        return ports[0]
    return None


def _ndev_match(tree, dev, netdev):
    for port in _ports(tree, dev):
        ndevs = tree.sys("class", "infiniband", dev, "ports", str(port), "gid_attrs", "ndevs")
        for idx in tree.listdir(ndevs):
            if tree.read(tree.sys("class", "infiniband", dev, "ports", str(port), "gid_attrs", "ndevs", idx)) == netdev:
                return port
    return None


def _netdev_of_port(tree, dev, port):
    parent = tree.read(tree.sys("class", "infiniband", dev, "parent"))
    if parent:
        return parent
    nets = tree.listdir(tree.sys("class", "infiniband", dev, "device", "net"))
    if len(nets) == 1:
        return nets[0]
    for net in nets:
        dev_port = tree.read_int(tree.sys("class", "net", net, "dev_port"))
        if dev_port is not None and dev_port + 1 == port:
            return net
    ndevs = tree.sys("class", "infiniband", dev, "ports", str(port), "gid_attrs", "ndevs")
    for idx in sorted(tree.listdir(ndevs), key=lambda s: int(s) if s.isdigit() else 1 << 30):
        name = tree.read(tree.sys("class", "infiniband", dev, "ports", str(port), "gid_attrs", "ndevs", idx))
        if name:
            return name
    return None


def _link_layer(tree, dev, port):
    return tree.read(tree.sys("class", "infiniband", dev, "ports", str(port), "link_layer"))


def find_port(tree, netdev=None, device=None, port=None):
    """Resolve the port; raise :class:`ValidationError` naming the parameter.

    Either ``netdev`` (its RDMA device/port is looked up), or ``device`` with
    ``port`` (default 1; its netdev is looked up).
    """
    devices = tree.listdir(tree.sys("class", "infiniband"))
    if netdev is not None:
        check_netdev_name("netdev", netdev)
        if not tree.exists(tree.sys("class", "net", netdev)):
            raise ValidationError("netdev", "interface %r does not exist (no %s)" % (netdev, tree.sys("class", "net", netdev)))
        found = None
        for dev in devices:
            p = _port_of_netdev_in_device(tree, dev, netdev)
            if p is not None:
                found = (dev, p)
                break
        if found is None:
            for dev in devices:
                p = _ndev_match(tree, dev, netdev)
                if p is not None:
                    found = (dev, p)
                    break
        if found is None:
            raise ValidationError(
                "netdev", "interface %r is not an RDMA port: no device under %s lists it (ports/*/gid_attrs/ndevs, "
                "rxe parent, device/net). Create the RDMA link first (e.g. rdma.fabric.soft_roce or the NIC driver)"
                % (netdev, tree.sys("class", "infiniband")))
        dev, p = found
        if device is not None and device != dev:
            raise ValidationError("device", "interface %r belongs to RDMA device %r, not %r" % (netdev, dev, device))
        if port is not None and port != p:
            raise ValidationError("port", "interface %r is port %d of %s, not port %s" % (netdev, p, dev, port))
        ref = PortRef(netdev, dev, p)
    else:
        if device is None:
            raise ValidationError("netdev", "give netdev, or device (with port)")
        check_ibdev_name("device", device)
        if device not in devices:
            raise ValidationError("device", "RDMA device %r does not exist; present: %s" % (device, ", ".join(devices) or "none"))
        ports = _ports(tree, device)
        p = 1 if port is None else port
        if p not in ports:
            raise ValidationError("port", "%s has no port %s; ports: %s" % (device, p, ", ".join(str(x) for x in ports) or "none"))
        nd = _netdev_of_port(tree, device, p)
        if not nd:
            raise ValidationError("device", "%s port %d has no netdev (not a RoCE port)" % (device, p))
        check_netdev_name("device", nd)
        ref = PortRef(nd, device, p)
    ref.link_layer = _link_layer(tree, ref.device, ref.port)
    ref.soft = tree.exists(tree.sys("class", "infiniband", ref.device, "parent"))
    if ref.link_layer is not None and ref.link_layer != "Ethernet":
        raise ValidationError(
            "netdev" if netdev is not None else "device",
            "%s port %d has link layer %s; roce_qos configures RoCE (Ethernet) ports only" % (ref.device, ref.port, ref.link_layer))
    return ref
