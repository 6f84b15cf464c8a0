# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""PCI topology read from sysfs: devices, bridges, NUMA, SR-IOV, config space.

Generic on purpose (the GPUDirect probes use it, the RDMA facts may reuse it):

* :class:`PciTopology` walks ``<sys>/bus/pci/devices/*``; each entry is a link
  into ``<sys>/devices/pciDDDD:BB/...``, and the resolved path is the chain of
  bridges from the host bridge down to the device.
* :meth:`PciTopology.relation` labels the path between two devices with the
  ``nvidia-smi topo -m`` legend (PIX, PXB, PHB, NODE, SYS).
* :func:`ext_capabilities` walks the PCIe extended capability list of a
  configuration space image (offsets 0x100 and up).
* :meth:`PciTopology.identity` describes a device by what stays when the bus
  is renumbered (vendor, device and subsystem IDs, the PCIe Device Serial
  Number, the physical slot); :meth:`PciTopology.find_by_identity` finds it
  again, or says why it cannot (the GPUDirect ACS boot path uses both).

Every read goes through :class:`~.sysfs.SysfsTree`, so a missing attribute reads
as ``None`` and the whole thing runs on fixture trees.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import os
import re
import struct

from ansible_collections.rdma.fabric.plugins.module_utils.common.numbers import parse_int
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import natural_key

# Full-match only (re.fullmatch): "$" would let a trailing newline through.
PCI_ADDRESS_RE = re.compile(r"[0-9a-fA-F]{4,}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]")

# The nvidia-smi topo -m legend, nearest first.
#   PIX  at most one PCIe switch between the two devices
#   PXB  several PCIe switches, no host bridge
#   PHB  through a PCIe host bridge (the CPU's root complex)
#   NODE through the interconnect between host bridges of one NUMA node
#   SYS  through the interconnect between NUMA nodes (QPI/UPI/xGMI)
RELATIONS = ("PIX", "PXB", "PHB", "NODE", "SYS")
RELATION_RANK = dict((name, rank) for rank, name in enumerate(RELATIONS))
SHARED_SWITCH = ("PIX", "PXB")      # the two ends share a PCIe switch
OTHER_ROOT_COMPLEX = ("NODE", "SYS")  # the two ends are under different root complexes

# PCI class codes (base class, sub class) as in the kernel's pci_ids.h
PCI_CLASS_BRIDGE_PCI = 0x0604
PCI_CLASS_BRIDGE_PCI_SEMI = 0x0609  # semi-transparent PCI-to-PCI bridge

PCI_CFG_SPACE_SIZE = 256        # conventional PCI configuration space
PCI_CFG_SPACE_EXP_SIZE = 4096   # PCIe: extended capabilities live at 0x100..0xfff
PCI_EXT_CAP_START = 0x100
PCI_EXT_CAP_ID_DSN = 0x0003     # Device Serial Number (PCIe base spec; pci_regs.h)

IDENTITY_KEYS = ("vendor_id", "device_id", "subsystem_vendor_id", "subsystem_device_id", "serial", "slot")


def is_pci_address(name):
    """True for a PCI address in sysfs form (``0000:3b:00.0``, VMD ``10000:01:00.0``)."""
    return isinstance(name, str) and bool(PCI_ADDRESS_RE.fullmatch(name))


def _hex4(value):
    return None if value is None else "0x%04x" % value


class PciDevice(object):
    """One PCI function as sysfs shows it."""

    def __init__(self, address, path, host_bridge, chain):
        self.address = address
        self.path = path                # resolved sysfs path, or None
        self.host_bridge = host_bridge  # e.g. "pci0000:00" (None when unknown)
        self.chain = tuple(chain)       # PCI addresses from the root port down to this device
        self.vendor = None
        self.device = None
        self.class_code = None
        self.numa_node = None
        self.driver = None
        self.physfn = None
        self.virtfns = []
        self.sriov_totalvfs = None
        self.sriov_numvfs = None
        self.iommu_group = None
        self.subsystem_vendor = None
        self.subsystem_device = None

    @property
    def is_vf(self):
        return self.physfn is not None

    @property
    def is_bridge(self):
        return self.class_code is not None and (self.class_code >> 8) in (PCI_CLASS_BRIDGE_PCI, PCI_CLASS_BRIDGE_PCI_SEMI)

    @property
    def base_class(self):
        return None if self.class_code is None else self.class_code >> 16

    def as_dict(self):
        return {
            "pci_address": self.address,
            "vendor_id": _hex4(self.vendor),
            "device_id": _hex4(self.device),
            "class": None if self.class_code is None else "0x%06x" % self.class_code,
            "numa_node": self.numa_node,
            "driver": self.driver,
            "host_bridge": self.host_bridge,
            "iommu_group": self.iommu_group,
            "is_vf": self.is_vf,
            "physfn": self.physfn,
            "sriov": None if self.sriov_totalvfs is None else {
                "totalvfs": self.sriov_totalvfs,
                "numvfs": self.sriov_numvfs,
                "virtfns": list(self.virtfns),
            },
        }


def split_device_path(devices_root, resolved):
    """Split a resolved device path into (host_bridge, chain of PCI addresses).

    ``<sys>/devices/pci0000:00/0000:00:01.0/0000:01:00.0`` gives
    ``("pci0000:00", ("0000:00:01.0", "0000:01:00.0"))``. The host bridge is
    everything above the trailing run of PCI addresses, so a VMD domain
    (``pci0000:00/0000:00:0e.0/pci10000:00/10000:01:00.0``) keeps its own
    host bridge. Paths outside ``devices_root`` give ``(None, ())``.
    """
    if not resolved:
        return None, ()
    rel = os.path.relpath(resolved, devices_root)
    if rel.startswith(".."):
        return None, ()
    parts = [p for p in rel.split(os.sep) if p and p != "."]
    idx = len(parts)
    while idx > 0 and is_pci_address(parts[idx - 1]):
        idx -= 1
    chain = tuple(parts[idx:])
    host = "/".join(parts[:idx]) or None
    return host, chain


class PciTopology(object):
    """All PCI functions of a (possibly fixture) sysfs tree."""

    CPU = "CPU"

    def __init__(self, tree):
        self.tree = tree
        self.devices_root = tree.sys("devices")
        self.devices = {}
        self._slots = None
        for name in tree.listdir(tree.sys("bus", "pci", "devices")):
            if is_pci_address(name):
                self.devices[name] = self._read_device(name)

    # -- reading ----------------------------------------------------------
    _ATTRS = ("vendor", "device", "class", "numa_node", "sriov_totalvfs", "sriov_numvfs", "subsystem_vendor",
              "subsystem_device")

    def _read_device(self, address):
        tree = self.tree
        link = tree.sys("bus", "pci", "devices", address)
        # a link into devices/...; procfs-style captures keep a folder instead
        resolved = tree.readlink(link) or (link if tree.isdir(link) else None)
        host, chain = split_device_path(self.devices_root, resolved)
        if not chain:
            # not below <sys>/devices (odd layout): still a device, no topology
            chain = (address,)
        dev = PciDevice(address, resolved, host, chain)
        base = resolved or link
        attrs = tree.read_attrs(base, self._ATTRS)
        dev.vendor = parse_int(attrs["vendor"], 16)
        dev.device = parse_int(attrs["device"], 16)
        dev.class_code = parse_int(attrs["class"], 16)
        numa = parse_int(attrs["numa_node"], 10)
        dev.numa_node = numa if numa is not None and numa >= 0 else None
        dev.sriov_totalvfs = parse_int(attrs["sriov_totalvfs"], 10)
        dev.sriov_numvfs = parse_int(attrs["sriov_numvfs"], 10)
        dev.subsystem_vendor = parse_int(attrs["subsystem_vendor"], 16)
        dev.subsystem_device = parse_int(attrs["subsystem_device"], 16)
        dev.driver = tree.link_basename(os.path.join(base, "driver"))
        dev.physfn = tree.link_basename(os.path.join(base, "physfn"))
        virtfns = [tree.link_basename(os.path.join(base, entry)) for entry in tree.listdir(base)
                   if entry.startswith("virtfn") and entry[6:].isdigit()]
        dev.virtfns = sorted((v for v in virtfns if v), key=natural_key)
        group = tree.link_basename(os.path.join(base, "iommu_group"))
        dev.iommu_group = int(group) if group is not None and group.isdigit() else None
        return dev

    def get(self, address):
        return self.devices.get(address)

    def find(self, vendor=None, base_class=None):
        """Devices matching a vendor id and/or a PCI base class, sorted by address."""
        found = []
        for address in sorted(self.devices):
            dev = self.devices[address]
            if vendor is not None and dev.vendor != vendor:
                continue
            if base_class is not None and dev.base_class != base_class:
                continue
            found.append(dev)
        return found

    def config_path(self, address):
        dev = self.devices.get(address)
        base = dev.path if dev is not None and dev.path else self.tree.sys("bus", "pci", "devices", address)
        return os.path.join(base, "config")

    def read_config(self, address):
        """Raw configuration space bytes (64 for non-root on Linux), None if unreadable."""
        return self.tree.read_bytes(self.config_path(address))

    # -- identity (what survives a renumbered bus) ------------------------
    def slot(self, address):
        """Physical slot name of a device (``bus/pci/slots/<name>/address`` is its ``DDDD:BB:DD``), else None."""
        if self._slots is None:
            self._slots = {}
            slots_dir = self.tree.sys("bus", "pci", "slots")
            for name in self.tree.listdir(slots_dir):
                where = self.tree.read(os.path.join(slots_dir, name, "address"))
                if where:
                    self._slots.setdefault(where.lower(), []).append(name)
        names = self._slots.get(address.rsplit(".", 1)[0].lower(), [])
        return names[0] if len(names) == 1 else None

    def serial(self, address):
        """The PCIe Device Serial Number as ``lspci`` prints it (``48-2d-b0-ff-fe-1a-2b-3c``), else None.

        Needs the extended configuration space, which only root can read.
        """
        config = self.read_config(address)
        offset = find_ext_capability(config, PCI_EXT_CAP_ID_DSN)
        if offset is None or offset + 12 > len(config):
            return None
        low, high = struct.unpack_from("<II", config, offset + 4)
        value = (high << 32) | low
        return "-".join("%02x" % ((value >> shift) & 0xFF) for shift in range(56, -8, -8))

    def identity(self, address):
        """What names a device across renumbering: IDs, serial number, slot (see :data:`IDENTITY_KEYS`)."""
        dev = self.devices[address]
        return {
            "vendor_id": _hex4(dev.vendor),
            "device_id": _hex4(dev.device),
            "subsystem_vendor_id": _hex4(dev.subsystem_vendor),
            "subsystem_device_id": _hex4(dev.subsystem_device),
            "serial": self.serial(address),
            "slot": self.slot(address),
        }

    def find_by_identity(self, identity):
        """``(address, None)`` of the one device with ``identity``, else ``(None, why)``.

        The IDs must match; then the serial number when the identity has one,
        else the slot when it has one, else the IDs alone must name exactly one
        device. Never a guess: two candidates are as bad as none.
        """
        ids = tuple(identity.get(k) for k in IDENTITY_KEYS[:4])
        if ids[0] is None or ids[1] is None:
            return None, "the identity has no vendor and device ID"
        candidates = [a for a in sorted(self.devices) if tuple(self.identity_ids(a)) == ids]
        what = "vendor %s device %s subsystem %s:%s" % ids
        if identity.get("serial"):
            candidates = [a for a in candidates if self.serial(a) == identity["serial"]]
            what += " serial number %s" % identity["serial"]
        elif identity.get("slot"):
            candidates = [a for a in candidates if self.slot(a) == identity["slot"]]
            what += " in slot %s" % identity["slot"]
        if len(candidates) == 1:
            return candidates[0], None
        if not candidates:
            return None, "no device with %s" % what
        return None, "%d devices with %s (%s): cannot tell which" % (len(candidates), what, ", ".join(candidates))

    def identity_ids(self, address):
        dev = self.devices[address]
        return [_hex4(dev.vendor), _hex4(dev.device), _hex4(dev.subsystem_vendor), _hex4(dev.subsystem_device)]

    def bridge_ids(self, addresses):
        """``["0x1000:0xc030", ...]``: vendor:device of each address (the shape of a path)."""
        return ["%s:%s" % tuple(self.identity_ids(a)[:2]) for a in addresses]

    # -- topology ---------------------------------------------------------
    def numa_node(self, address):
        """NUMA node of a device: its own, else its root port's; None when unknown."""
        dev = self.devices.get(address)
        if dev is None:
            return None
        if dev.numa_node is not None:
            return dev.numa_node
        for upper in dev.chain:
            other = self.devices.get(upper)
            if other is not None and other.numa_node is not None:
                return other.numa_node
        return None

    def switch_parents(self, address):
        """Parent nodes the way NCCL's topology detection walks sysfs.

        Each hop rewinds two path components, so a PCIe switch's downstream
        plus upstream port pair counts as one switch node; the walk stops at
        the host bridge (``CPU``). Nodes are ``(host_bridge, chain_prefix)``.
        """
        dev = self.devices[address]
        nodes = []
        idx = len(dev.chain) - 1 - 2
        while idx >= 0:
            nodes.append((dev.host_bridge, dev.chain[:idx + 1]))
            idx -= 2
        nodes.append((self.CPU, dev.host_bridge))
        return nodes

    def relation(self, a, b):
        """``nvidia-smi topo -m`` label of the path between two devices."""
        if a == b:
            return "X"
        da, db = self.devices[a], self.devices[b]
        if da.host_bridge is None or db.host_bridge is None or da.host_bridge != db.host_bridge:
            na, nb = self.numa_node(a), self.numa_node(b)
            # single-node machines report -1 (None here): same node
            if na is None or nb is None or na == nb:
                return "NODE"
            return "SYS"
        pa, pb = self.switch_parents(a), self.switch_parents(b)
        for ia, node in enumerate(pa):
            if node in pb:
                if node[0] == self.CPU:
                    return "PHB"
                switches = ia + pb.index(node) + 1
                return "PIX" if switches == 1 else "PXB"
        return "PHB"  # unreachable: both lists end with the same CPU node

    def path_bridges(self, a, b):
        """PCI addresses of the bridges on the path from ``a`` to ``b``.

        Ordered from ``a`` upwards, then down to ``b``; the endpoints are left
        out. Below one host bridge the lowest common bridge appears once.
        """
        da, db = self.devices[a], self.devices[b]
        ca, cb = da.chain, db.chain
        if da.host_bridge != db.host_bridge:
            return list(reversed(ca[:-1])) + list(cb[:-1])
        common = 0
        while common < min(len(ca), len(cb)) and ca[common] == cb[common]:
            common += 1
        up = list(reversed(ca[common:-1]))
        down = list(cb[common:-1])
        lca = [ca[common - 1]] if 0 < common < len(ca) and common < len(cb) else []
        return up + lca + down


def ext_capabilities(config):
    """``[(cap_id, version, offset)]`` of the PCIe extended capability list.

    ``config`` is a configuration space image; the list starts at 0x100 and
    each header is ``id:16 | version:4 | next:12`` (little endian). An image of
    256 bytes or less has no extended capabilities.
    """
    caps = []
    if not config or len(config) <= PCI_CFG_SPACE_SIZE:
        return caps
    offset = PCI_EXT_CAP_START
    seen = set()
    while offset >= PCI_EXT_CAP_START and offset + 4 <= len(config) and offset not in seen:
        seen.add(offset)
        header = struct.unpack_from("<I", config, offset)[0]
        if header in (0, 0xFFFFFFFF):
            break
        caps.append((header & 0xFFFF, (header >> 16) & 0xF, offset))
        offset = (header >> 20) & 0xFFC
    return caps


def find_ext_capability(config, cap_id):
    """Offset of the first extended capability ``cap_id``, else None."""
    for found, _version, offset in ext_capabilities(config):
        if found == cap_id:
            return offset
    return None


def read_u16(config, offset):
    if config is None or offset + 2 > len(config):
        return None
    return struct.unpack_from("<H", config, offset)[0]


def write_config_u16(config_path, offset, value):
    """Write one 16-bit register of a configuration space through its sysfs ``config`` file.

    What ``setpci`` does with its sysfs access method: a 2-byte write at an
    even offset, which the kernel turns into one config word write
    (``pci_user_write_config_word``). Raises OSError (EPERM under kernel
    lockdown, ENOENT when the device is gone).
    """
    if offset % 2 or not 0 <= offset <= PCI_CFG_SPACE_EXP_SIZE - 2:
        raise ValueError("config offset 0x%x is not an even offset inside the configuration space" % offset)
    fd = os.open(config_path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        written = os.pwrite(fd, struct.pack("<H", value), offset)
    finally:
        os.close(fd)
    if written != 2:
        raise OSError(errno.EIO, "short write (%d of 2 bytes) to %s at 0x%x" % (written, config_path, offset))
