# -*- coding: utf-8 -*-
"""The NIC-to-NIC matrix on a DERIVED tree shaped like the lab's pcie_topology VM (tools/lab/lab PCIE_TOPOLOGY).

Bus numbers are the ones Linux gives that QEMU layout (root ports and switch
ports numbered depth first, pxb-pcie expanders as host bridges 0x20/0x30/0x40;
devices on pcie.0 have no NUMA node, -1). This checks the engine against the
labels the layout is built for before a lab boots; the live check (lspci -PP
and numa_node read on the guest) is Molecule ``pcie_topology``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import itertools

from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import PciTreeBuilder

CLASS_ETHERNET = 0x020000
IGB = (0x8086, 0x10C9)
VIRTIO_NET = (0x1AF4, 0x1041)


def build(tmp_path):
    b = PciTreeBuilder(tmp_path)
    nics = {}

    def nic(parent, address, letter, ids, numa):
        b.device(parent, address, ids[0], ids[1], CLASS_ETHERNET, numa=numa, driver="igb" if ids == IGB else "virtio-pci")
        nics[letter] = address

    root = b.host_bridge("pci0000:00")
    rp1 = b.bridge(root, "0000:00:10.0", numa=-1)
    sw1 = b.bridge(rp1, "0000:01:00.0", numa=-1)
    nic(b.bridge(sw1, "0000:02:00.0", numa=-1), "0000:03:00.0", "A", IGB, -1)
    nic(b.bridge(sw1, "0000:02:01.0", numa=-1), "0000:04:00.0", "B", VIRTIO_NET, -1)
    sw2 = b.bridge(b.bridge(sw1, "0000:02:02.0", numa=-1), "0000:05:00.0", numa=-1)
    nic(b.bridge(sw2, "0000:06:00.0", numa=-1), "0000:07:00.0", "C", IGB, -1)
    nic(b.bridge(root, "0000:00:11.0", numa=-1), "0000:08:00.0", "D", VIRTIO_NET, -1)
    for host, bus, letter, ids, numa in (("pci0000:20", 0x20, "E", IGB, 0), ("pci0000:30", 0x30, "F", VIRTIO_NET, 0),
                                         ("pci0000:40", 0x40, "G", IGB, 1)):
        rp = b.bridge(b.host_bridge(host), "0000:%02x:00.0" % bus, numa=numa)
        nic(rp, "0000:%02x:00.0" % (bus + 1), letter, ids, numa)
    # the lab's own disk, management and data NICs on pcie.0 (not bridges, not in the labels below)
    b.device(root, "0000:00:04.0", VIRTIO_NET[0], VIRTIO_NET[1], CLASS_ETHERNET, numa=-1)
    return b, nics


WANTED = {
    ("A", "B"): "PIX",   # one switch (sw1)
    ("A", "C"): "PXB", ("B", "C"): "PXB",   # sw1 and sw2
    ("A", "D"): "PHB", ("B", "D"): "PHB", ("C", "D"): "PHB",   # only the host bridge pci0000:00 in common
    ("E", "F"): "NODE",  # two host bridges, both on node 0
    ("E", "G"): "SYS", ("F", "G"): "SYS",   # nodes 0 and 1
}


def test_every_label_occurs_where_the_layout_puts_it(tmp_path):
    b, nics = build(tmp_path)
    matrix = gd_probes.gather(SysfsTree(b.sys, b.proc), "ignore")["topology"]["nic_matrix"]
    assert sorted(matrix) == sorted(list(nics.values()) + ["0000:00:04.0"])
    for (x, y), label in WANTED.items():
        assert matrix[nics[x]][nics[y]] == matrix[nics[y]][nics[x]] == label, (x, y)
    # pcie.0 has no NUMA node (-1): across host bridges that is NODE, never SYS
    for x, y in itertools.product("ABCD", "EFG"):
        assert matrix[nics[x]][nics[y]] == "NODE", (x, y)
    assert set(matrix[nics[x]][nics[y]] for x, y in itertools.combinations("ABCDEFG", 2)) == {"PIX", "PXB", "PHB", "NODE", "SYS"}
