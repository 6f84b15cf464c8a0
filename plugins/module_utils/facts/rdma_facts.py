# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gather ``ansible_facts.rdma`` (schema_version 1) from sysfs.

No subprocess, no tool output: every value comes from a file the kernel
exposes, read once through :class:`SysfsTree`: a read that fails becomes None
("unknown"); one that fails in an unexpected way (ETIMEDOUT, EBUSY, EAGAIN,
...) also adds a warning naming the file (:attr:`RdmaFactsGatherer.warnings`).
A device that disappears while it is read (driver unload, hot unplug, an rxe
link deleted) is left out with a warning, not reported half-read.

Layout read, relative to ``sysfs_path`` (``/sys`` on a host):

* ``class/infiniband/<dev>``: a symlink into ``devices/...`` on real hosts
  (followed lexically), or a real folder (procfs-style captures);
* ``<dev>/device``: the PCI function (absent for rxe/siw, which live under
  ``devices/virtual/infiniband``); its ``driver`` link, ``vendor``, ``device``,
  ``numa_node``, ``sriov_*`` files, ``physfn`` link and ``net/`` folder;
* ``<dev>/ports/<n>/``: state, phys_state, link_layer, rate, lid, sm_lid,
  ``gids/<i>``, ``gid_attrs/types/<i>``, ``gid_attrs/ndevs/<i>``, counters;
* ``class/net/<netdev>/``: mtu, ifindex, iflink, dev_port, phys_port_name;
* ``kernel/config/rdma_cm/<dev>/ports/<n>/``: rdma_cm configfs (read only);
* ``module/<name>``: loaded kernel modules.

Files outside sysfs (``usr/bin/ofed_info``, DOCA markers) are read under the
parent folder of ``sysfs_path`` (``/`` for ``/sys``; ``/host`` for a
container's ``/host/sys``; the fixture root for a fixture's ``sys``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch
import json
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.gid import (
    GID_TYPE_ROCE_V1,
    GID_TYPE_ROCE_V2,
    ZERO_GID,
    gid_ip,
    is_unused_gid,
    normalise_gid,
    normalise_gid_type,
)
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import is_pci_address
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (  # noqa: F401 (re-exported)
    IWARP_NODE_TYPE,
    SCHEMA_VERSION,
    RdmaFactsError,
    natural_key,
)
from ansible_collections.rdma.fabric.plugins.module_utils.common.numbers import parse_int
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree, check_sysfs_root

GATHER_SUBSETS = ("all", "min", "counters")
DEFAULT_GATHER_SUBSET = ["min"]

# Kernel modules reported in ``modules`` (present under /sys/module = loaded,
# or built in). The first nine are the schema's; the rest are the common RDMA
# NIC drivers and the MLNX_OFED/DOCA compat layer.
MODULE_NAMES = (
    "ib_core", "ib_uverbs", "rdma_ucm", "rdma_cm", "mlx5_ib", "rdma_rxe", "siw",
    "nvidia_peermem", "nv_peer_mem",
    "ib_ipoib", "ib_umad", "mlx5_core", "mlx4_ib", "mlx4_core", "irdma", "bnxt_re",
    "hfi1", "efa", "mlx_compat",
)

# Markers of NVIDIA DOCA-OFED (DOCA-Host), relative to the host root.
DOCA_MARKERS = (
    "opt/mellanox/doca",
    "usr/share/doc/doca-ofed",
    "var/lib/dpkg/info/doca-ofed.list",
)
OFED_INFO_PATHS = ("usr/bin/ofed_info", "usr/local/bin/ofed_info")
# ofed_info is a shell script with its version baked in, e.g.
# `echo MLNX_OFED_LINUX-23.10-1.1.9.0:` (MLNX_OFED) or
# `echo OFED-internal-24.01-0.3.3:` (DOCA-OFED builds).
_OFED_INFO_RE = re.compile(r"\b(MLNX_OFED_LINUX|OFED-internal|OFED)-(\d[0-9A-Za-z.\-]*?)(?=[:\s])")

_DEVICE_ATTRS = ("node_type", "node_guid", "sys_image_guid", "fw_ver", "board_id", "hca_type")
_PORT_ATTRS = ("state", "phys_state", "link_layer", "rate")
_IB_PORT_ATTRS = ("lid", "sm_lid")
_PCI_ATTRS = ("vendor", "device", "numa_node", "sriov_totalvfs")
# The same, read from the RDMA device's folder through its `device` link.
_PCI_VIA_DEVICE_LINK = tuple("device/" + a for a in _PCI_ATTRS)
# Read for every netdev the gatherer looks at; the rest only to tell several
# netdevs of one PCI function apart.
_NETDEV_ATTRS = ("mtu", "dev_port")
_NETDEV_EXTRA_ATTRS = ("ifindex", "iflink", "dev_id", "phys_port_name")
_ROCE_ATTRS = ("default_roce_mode", "default_roce_tos")

_ID_TEXT_RE = re.compile(r"\s*(\d+)\s*:\s*(.*?)\s*")  # re.fullmatch
# A node GUID made from a MAC (EUI-48 -> EUI-64: ff:fe in the middle), as 16 hex digits.
_EUI64_RE = re.compile(r"[0-9a-f]{6}fffe[0-9a-f]{6}")
_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec")
# phys_port_name of switchdev representors (pf0vf3, c1pf0sf2, pf0hpf); uplinks are p0/p1.
_REPRESENTOR_RE = re.compile(r"(?:pf|vf|sf)\d")

# Big hosts (SR-IOV: hundreds of VF devices) are read by several processes at
# once, one contiguous share of the devices each: the time goes into system
# calls, which run in parallel on several CPUs (Python threads would serialise
# on the interpreter lock around each of the thousands of calls). Below this
# many devices per process, forking costs more than it saves.
PARALLEL_MIN_DEVICES_PER_WORKER = 32
PARALLEL_MAX_WORKERS = 8


def parse_id_text(text):
    """``"4: ACTIVE"`` -> ``("ACTIVE", 4)``; malformed/absent -> ``(None, None)``."""
    if text is None:
        return None, None
    m = _ID_TEXT_RE.fullmatch(text)
    if not m or not m.group(2):
        return None, None
    return m.group(2), int(m.group(1))


def parse_rate_gbps(text):
    """``"100 Gb/sec (4X EDR)"`` -> 100.0; malformed/absent -> None."""
    if text is None:
        return None
    m = _RATE_RE.match(text)
    return float(m.group(1)) if m else None


def _text(value):
    """Stripped text or None for absent/empty."""
    if value is None:
        return None
    value = value.strip()
    return value or None


def validate_options(sysfs_path, devices=None, gather_subset=None):
    """Raise :class:`RdmaFactsError` for bad input, before anything is read."""
    try:
        check_sysfs_root(sysfs_path)
    except PathError as e:
        raise RdmaFactsError(str(e))
    if devices is not None:
        if not isinstance(devices, (list, tuple)):
            raise RdmaFactsError("devices: must be a list of RDMA device name globs such as ['mlx5_*', 'rxe0'] (got %r)" % (devices,))
        for pattern in devices:
            if not isinstance(pattern, str) or not pattern.strip():
                raise RdmaFactsError("devices: every entry must be a non-empty device name glob such as 'mlx5_*' (got %r)" % (pattern,))
    if gather_subset is not None:
        bad = [s for s in gather_subset if s not in GATHER_SUBSETS]
        if bad:
            raise RdmaFactsError("gather_subset: %s not allowed; allowed values: %s" % (", ".join(repr(b) for b in bad), ", ".join(GATHER_SUBSETS)))


class RdmaFactsGatherer(object):
    """Read one host's RDMA facts. Use :meth:`gather` once per instance."""

    def __init__(self, sysfs_path="/sys", devices=None, gather_subset=None, workers=None, tree=None):
        """``workers``: processes reading the devices; None = by device and CPU count (:func:`default_workers`).

        ``tree``: a :class:`SysfsTree` to read through (its warnings then hold this gatherer's too).
        """
        self.tree = tree if tree is not None else SysfsTree(sysfs_path)
        self.workers = workers
        self.root = os.path.dirname(self.tree.sysfs) or "/"
        self.patterns = list(devices) if devices else None
        subset = set(gather_subset or DEFAULT_GATHER_SUBSET)
        self.counters = "counters" in subset or "all" in subset
        self._netdev_cache = {}
        self._pci_netdev_cache = {}
        self._ip_cache = {}
        self._rdma_cm_devices = set()
        self._rdma_cm_fd = None

    # -- entry point -------------------------------------------------------
    def gather(self):
        tree = self.tree
        all_names = tree.listdir(tree.sys("class", "infiniband"))
        names = sorted((n for n in all_names if self._wanted(n)), key=natural_key)
        # rdma_cm configfs (read only): one descriptor for the gather; most hosts have none.
        cm_dir = tree.sys("kernel", "config", "rdma_cm")
        self._rdma_cm_devices = set(tree.listdir(cm_dir))
        self._rdma_cm_fd = tree.open_dir(cm_dir) if self._rdma_cm_devices else None
        try:
            devices = [d for d in self._devices(names) if d is not None]
        finally:
            if self._rdma_cm_fd is not None:
                tree.close_dir(self._rdma_cm_fd)
                self._rdma_cm_fd = None
        modules = self._modules()
        return {
            "schema_version": SCHEMA_VERSION,
            "devices": devices,
            "netdevs": self._netdev_map(devices),
            "modules": modules,
            "stack": self._stack(modules, bool(all_names)),
        }

    @property
    def warnings(self):
        """Reads that failed unexpectedly and devices that disappeared, in words."""
        return self.tree.all_warnings()

    def _devices(self, names):
        """The facts of the devices ``names``, in order (None for one that disappeared); shares read by
        forked workers on big hosts.

        Each worker (a fork of this process: same state, no new interpreter)
        reads its share and sends it back as JSON through a pipe; this process
        reads the first share meanwhile. A worker that fails, for any reason,
        has its share read again here, so the result never depends on it.
        """
        workers = self.workers if self.workers is not None else default_workers(len(names))
        workers = max(1, min(workers, len(names)))
        if workers == 1 or not hasattr(os, "fork"):
            return [self._device(n) for n in names]
        size = -(-len(names) // workers)
        shares = [names[i:i + size] for i in range(0, len(names), size)]
        children = []  # (share, pid, read end of its pipe), not collected yet
        try:
            local = [shares[0]]
            for share in shares[1:]:
                child = self._fork_worker(share)
                if child is None:  # no fork (process limit): read that share here
                    local.append(share)
                else:
                    children.append((share,) + child)
            results = [(n, self._device(n)) for share in local for n in share]
            while children:
                share, pid, rfd = children.pop(0)
                results.extend(self._collect_worker(share, pid, rfd))
        finally:
            for dummy, pid, rfd in children:  # only after an error above
                _close_quietly(rfd)
                _reap(pid)
        by_name = dict(results)
        return [by_name[n] for n in names]

    def _fork_worker(self, share):
        """Start a worker reading ``share``; (pid, read end of its pipe), or None when it cannot (no pipe, no fork)."""
        try:
            rfd, wfd = os.pipe()
        except OSError:  # out of descriptors: read that share here
            return None
        try:
            pid = os.fork()
        except OSError:
            os.close(rfd)
            os.close(wfd)
            return None
        if pid == 0:  # the worker: read the share, write JSON, exit without cleanup handlers
            status = 1  # whatever fails (it raises), the worker exits 1 and its share is read again
            try:
                os.close(rfd)
                devices = [self._device(n) for n in share]
                data = json.dumps({"devices": devices, "warnings": self.tree.warnings}).encode("utf-8")
                view = memoryview(data)
                while view:
                    view = view[os.write(wfd, view):]
                status = 0
            finally:
                os._exit(status)  # pylint: disable=protected-access
        os.close(wfd)
        return pid, rfd

    def _collect_worker(self, share, pid, rfd):
        """A worker's ``(name, device or None)`` pairs, its warnings added here; its share read here instead when it failed."""
        chunks = []
        try:
            while True:
                chunk = os.read(rfd, 1 << 16)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(rfd)
            status = _reap(pid)
        if status == 0:
            try:
                data = json.loads(b"".join(chunks).decode("utf-8"))
                devices, warnings = data["devices"], data["warnings"]
                if len(devices) == len(share) and all(d is None or d.get("name") == n for d, n in zip(devices, share)):
                    for warning in warnings:
                        self.tree.warn(warning)
                    return list(zip(share, devices))
            except (ValueError, AttributeError, KeyError, TypeError):
                pass
        return [(n, self._device(n)) for n in share]

    def _wanted(self, name):
        if self.patterns is None:
            return True
        return any(fnmatch.fnmatchcase(name, p) for p in self.patterns)

    # -- devices -----------------------------------------------------------
    def _device(self, name):
        """One device's facts; None (with a warning) when it disappeared before or while it was read."""
        tree = self.tree
        class_path = tree.sys("class", "infiniband", name)
        # Real hosts: a symlink into devices/...; procfs-style captures: a folder.
        dev_dir = tree.readlink(class_path) or class_path
        if not tree.isdir(dev_dir):
            return self._gone(name, class_path)
        pci_dir = tree.readlink(os.path.join(dev_dir, "device"))
        # One descriptor for the device folder: its attributes, and those of
        # its PCI function through the `device` link, are opened relative to it.
        # rxe names its netdev in `parent`; PCI devices have no such file.
        extra = ("parent",) if pci_dir is None else _PCI_VIA_DEVICE_LINK
        attrs = tree.read_attrs(dev_dir, _DEVICE_ATTRS + extra)
        node_type, dummy = parse_id_text(attrs["node_type"])
        virtual = (os.sep + os.path.join("devices", "virtual") + os.sep) in dev_dir
        parent = _text(attrs.get("parent"))

        driver = None
        soft = False
        if pci_dir is None:
            if parent is not None:
                driver, soft = "rdma_rxe", True
            elif virtual:
                soft = True
                if node_type == IWARP_NODE_TYPE or name.startswith("siw"):
                    driver = "siw"
                elif name.startswith("rxe"):
                    driver = "rdma_rxe"

        info = {
            "name": name,
            "driver": driver,
            "soft": soft,
            "node_type": node_type,
            "node_guid": _text(attrs["node_guid"]),
            "sys_image_guid": _text(attrs["sys_image_guid"]),
            "fw_ver": _text(attrs["fw_ver"]),
            "board_id": _text(attrs["board_id"]),
            "hca_type": _text(attrs["hca_type"]),
            "pci_address": None,
            "vendor_id": None,
            "device_id": None,
            "numa_node": None,
            "parent_netdev": parent,
            "sriov": None,
        }
        if pci_dir is not None:
            self._pci_info(info, pci_dir, attrs)

        iwarp = node_type == IWARP_NODE_TYPE
        # The netdev a soft device runs on: rxe names it in `parent`; siw has
        # no such file (and its GID names no netdev), but takes its node GUID
        # from the netdev's MAC.
        carrier = parent
        if carrier is None and soft and iwarp:
            carrier = self._netdev_of_eui64(info["node_guid"])
        # The kernel numbers ports from 1 without gaps: the first number
        # without a folder ends them (no listing). A switch has port 0 only;
        # that, or any other layout, falls back to listing the folder.
        ports_dir = os.path.join(dev_dir, "ports")
        ports = info["ports"] = []
        number = 1
        pfd = tree.open_dir(os.path.join(ports_dir, "1"))
        while pfd is not None:
            ports.append(self._port(name, dev_dir, number, pfd, pci_dir, carrier, iwarp))
            number += 1
            pfd = tree.open_dir(os.path.join(ports_dir, str(number)))
        if not ports:
            numbers = sorted(int(p) for p in tree.listdir(ports_dir) if p.isdigit())
            for number in numbers:
                pfd = tree.open_dir(os.path.join(ports_dir, str(number)))
                ports.append(self._port(name, dev_dir, number, pfd, pci_dir, carrier, iwarp))
        # Gone now (its folder, or its class entry moved on to another device): what was read is
        # a mix of the device and of nothing, not the device.
        if not tree.isdir(dev_dir) or (tree.readlink(class_path) or class_path) != dev_dir:
            return self._gone(name, class_path)
        return info

    def _gone(self, name, class_path):
        self.tree.warn("RDMA device %s disappeared while its facts were read (%s is gone or changed): left out"
                       % (name, class_path))
        return None

    def _pci_info(self, info, pci_dir, dev_attrs):
        """PCI facts; ``dev_attrs`` holds the PCI attributes read through the device's ``device`` link."""
        tree = self.tree
        info["driver"] = tree.link_basename(os.path.join(pci_dir, "driver"))
        # The device link names the PCI function; an auxiliary device (mlx5
        # sub-function) sits below the PCI function it belongs to.
        pci_fn = pci_dir
        while pci_fn and not is_pci_address(os.path.basename(pci_fn)):
            up = os.path.dirname(pci_fn)
            if up == pci_fn or len(up) <= len(tree.sysfs):
                pci_fn = None
                break
            pci_fn = up
        if pci_fn is None:
            return
        info["pci_address"] = os.path.basename(pci_fn).lower()
        if pci_fn == pci_dir:
            attrs = dict(zip(_PCI_ATTRS, (dev_attrs[a] for a in _PCI_VIA_DEVICE_LINK)))
        else:  # auxiliary device: the PCI function is a folder above its `device` link
            attrs = tree.read_attrs(pci_fn, _PCI_ATTRS)
        info["vendor_id"] = _text(attrs["vendor"])
        info["device_id"] = _text(attrs["device"])
        numa = parse_int(attrs["numa_node"])
        info["numa_node"] = numa if numa is not None and numa >= 0 else None
        physfn = tree.link_basename(os.path.join(pci_fn, "physfn"))
        if physfn is not None:
            info["sriov"] = {"totalvfs": None, "numvfs": None, "is_vf": True, "physfn": physfn}
        elif attrs["sriov_totalvfs"] is not None:
            info["sriov"] = {
                "totalvfs": parse_int(attrs["sriov_totalvfs"]),
                "numvfs": parse_int(tree.read(os.path.join(pci_fn, "sriov_numvfs"))),
                "is_vf": False,
                "physfn": None,
            }

    # -- ports -------------------------------------------------------------
    def _port(self, dev_name, dev_dir, number, pfd, pci_dir, parent, iwarp):
        """One port's facts; ``pfd``: a descriptor of its folder (or None), which this closes."""
        tree = self.tree
        port_dir = os.path.join(dev_dir, "ports", str(number))
        # The port's attributes and GID table are opened relative to its folder's descriptor.
        attrs, lids, gids = dict.fromkeys(_PORT_ATTRS), dict.fromkeys(_IB_PORT_ATTRS), []
        link_layer = None
        if pfd is not None:
            try:
                attrs = dict(zip(_PORT_ATTRS, tree.read_at(pfd, _PORT_ATTRS)))
                link_layer = _text(attrs["link_layer"])
                if link_layer == "InfiniBand":
                    lids = dict(zip(_IB_PORT_ATTRS, tree.read_at(pfd, _IB_PORT_ATTRS)))
                gids = self._gids(pfd, port_dir, link_layer, iwarp)
            finally:
                tree.close_dir(pfd)
        state, state_id = parse_id_text(attrs["state"])
        phys_state, phys_state_id = parse_id_text(attrs["phys_state"])
        rate = _text(attrs["rate"])

        netdev = self._port_netdev(number, pci_dir, parent, gids)
        mtu = None
        if netdev is not None:
            mtu = self._netdev(netdev).get("mtu")

        roce_index = None
        if netdev is not None:
            for g in gids:
                if g["type"] == GID_TYPE_ROCE_V2 and g["ip_version"] == 4 and g["netdev"] == netdev:
                    roce_index = g["index"]
                    break

        roce = None
        if self._rdma_cm_fd is not None and dev_name in self._rdma_cm_devices:
            prefix = "%s/ports/%d/" % (dev_name, number)
            mode, tos = tree.read_at(self._rdma_cm_fd, [prefix + a for a in _ROCE_ATTRS])
            if mode is not None or tos is not None:
                roce = {"default_mode": _text(mode), "default_tos": parse_int(tos)}

        port = {
            "number": number,
            "state": state,
            "state_id": state_id,
            "phys_state": phys_state,
            "phys_state_id": phys_state_id,
            "link_layer": link_layer,
            "rate": rate,
            "rate_gbps": parse_rate_gbps(rate),
            "lid": parse_int(lids["lid"], 0),
            "sm_lid": parse_int(lids["sm_lid"], 0),
            "netdev": netdev,
            "mtu": mtu,
            "gids": gids,
            "roce_v2_ipv4_gid_index": roce_index,
            "roce": roce,
        }
        if self.counters:
            port["counters"] = self._counters(os.path.join(port_dir, "counters"))
            port["hw_counters"] = self._counters(os.path.join(port_dir, "hw_counters"))
        return port

    def _gids(self, pfd, port_dir, link_layer, iwarp):
        """Valid GID entries of a port (``pfd``: its folder's descriptor), in index order.

        Kept: non-zero GIDs whose type reads, and - for RoCE types - whose
        netdev reads (the kernel refuses both with EINVAL on empty or
        vanishing slots). InfiniBand/iWARP GIDs may have no netdev (the
        kernel refuses ``ndevs`` on InfiniBand ports). On kernels without
        ``gid_attrs`` the type comes from the link layer alone.
        """
        tree = self.tree
        # gids/0 .. gids/<table length - 1>: the kernel numbers every slot.
        present = []
        for i, gid in enumerate(tree.read_series(pfd, "gids/")):
            if gid is None or gid == ZERO_GID:  # most slots: empty, in the kernel's exact text
                continue
            gid = normalise_gid(gid)
            if is_unused_gid(gid):  # zero interface ID: an unused slot (old kernels print the prefix too)
                continue
            present.append((i, gid))
        if not present:
            return []
        types = tree.read_at(pfd, ["gid_attrs/types/%d" % i for i, dummy in present])
        ndevs = tree.read_at(pfd, ["gid_attrs/ndevs/%d" % i for i, dummy in present])
        attrs_dir = port_dir + "/gid_attrs"
        no_attrs = None  # computed lazily: kernels before gid_attrs existed
        gids = []
        for (index, gid), gtype_text, ndev_text in zip(present, types, ndevs):
            gtype = normalise_gid_type(gtype_text, link_layer, iwarp)
            if gtype is None:
                if no_attrs is None:
                    no_attrs = not tree.isdir(attrs_dir)
                if not no_attrs:
                    continue  # refused (EINVAL): empty or vanishing slot
                gtype = "IB" if link_layer == "InfiniBand" else None
            netdev = _text(ndev_text)
            if netdev is None and gtype in (GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2):
                continue  # a RoCE GID without a netdev is being deleted
            decoded = self._ip_cache.get(gid)
            if decoded is None:
                decoded = self._ip_cache[gid] = gid_ip(gid)  # RoCE v1/v2 pairs share a GID
            ip, ip_version = decoded
            gids.append({
                "index": index,
                "gid": gid,
                "type": gtype,
                "netdev": netdev,
                "ip": ip,
                "ip_version": ip_version,
            })
        return gids

    def _counters(self, path):
        tree = self.tree
        names = tree.listdir(path)
        if not names:
            return {}
        values = tree.read_attrs(path, names)
        return dict((n, parse_int(values[n])) for n in names)

    # -- netdevs -----------------------------------------------------------
    def _netdev(self, name, path=None):
        """Cached attributes of a netdev: mtu and dev_port (see :meth:`_netdev_extra`)."""
        info = self._netdev_cache.get(name)
        if info is None:
            path = path or self.tree.sys("class", "net", name)
            attrs = self.tree.read_attrs(path, _NETDEV_ATTRS)
            info = {"mtu": parse_int(attrs["mtu"]), "dev_port": parse_int(attrs["dev_port"]), "path": path}
            self._netdev_cache[name] = info
        return info

    def _netdev_extra(self, name, path=None):
        """:meth:`_netdev` plus ifindex, iflink, dev_id and phys_port_name."""
        info = self._netdev(name, path)
        if "ifindex" not in info:
            attrs = self.tree.read_attrs(info["path"], _NETDEV_EXTRA_ATTRS)
            info.update({
                "ifindex": parse_int(attrs["ifindex"]),
                "iflink": parse_int(attrs["iflink"]),
                "dev_id": parse_int(attrs["dev_id"], 0),
                "phys_port_name": _text(attrs["phys_port_name"]),
            })
        return info

    def _netdev_of_eui64(self, guid):
        """The netdev whose MAC gives ``guid`` as EUI-64 (how siw sets its node GUID), else None.

        A VLAN shares its lower's MAC: a netdev that is not an upper wins.
        """
        digits = (guid or "").replace(":", "").lower()
        if not _EUI64_RE.fullmatch(digits):
            return None
        mac = ":".join(["%02x" % (int(digits[0:2], 16) ^ 0x02), digits[2:4], digits[4:6],
                        digits[10:12], digits[12:14], digits[14:16]])
        net = self.tree.sys("class", "net")
        found = [n for n in sorted(self.tree.listdir(net)) if _text(self.tree.read(os.path.join(net, n, "address"))) == mac]
        for name in found:
            if not self._is_upper(self._netdev_extra(name)):
                return name
        return found[0] if found else None

    @staticmethod
    def _is_upper(info):
        """VLAN, macvlan, IPoIB child: its iflink names another netdev."""
        return info["ifindex"] is not None and info["iflink"] is not None and info["ifindex"] != info["iflink"]

    def _lower_of(self, name, depth=0):
        """``name`` itself, or the netdev below it when it is an upper (``lower_<name>`` links)."""
        info = self._netdev_extra(name)
        if not self._is_upper(info):
            return name
        if depth > 8:
            return None
        for entry in self.tree.listdir(info["path"]):
            if entry.startswith("lower_"):
                return self._lower_of(entry[len("lower_"):], depth + 1)
        return None

    def _pci_netdevs(self, pci_dir):
        cached = self._pci_netdev_cache.get(pci_dir)
        if cached is None:
            net_dir = os.path.join(pci_dir, "net")
            cached = [(n, os.path.join(net_dir, n)) for n in self.tree.listdir(net_dir)]
            self._pci_netdev_cache[pci_dir] = cached
        return cached

    def _port_netdev(self, number, pci_dir, parent, gids):
        """The port's own netdev (never a VLAN/macvlan/IPoIB child on top of it).

        1. rxe: its ``parent`` file;
        2. PCI devices: ``device/net/<n>`` whose ``dev_port`` (older kernels:
           ``dev_id``) is ``port - 1`` (Ethernet netdevs and IPoIB interfaces
           alike); when several match, uppers (iflink != ifindex: IPoIB
           children) and switchdev representors are skipped;
        3. else the netdev of the lowest-index GID that has one, or the netdev
           below it when that one is an upper (VLAN, macvlan).
        """
        if parent is not None:
            return parent
        if pci_dir is not None:
            matches = []
            for name, path in self._pci_netdevs(pci_dir):
                info = self._netdev(name, path)
                port_idx = info["dev_port"]
                if port_idx is None:
                    port_idx = self._netdev_extra(name, path)["dev_id"]
                if (port_idx or 0) == number - 1:
                    matches.append((name, path))
            if len(matches) == 1:
                return matches[0][0]
            for name, path in matches:
                info = self._netdev_extra(name, path)
                if self._is_upper(info):
                    continue
                if info["phys_port_name"] and _REPRESENTOR_RE.search(info["phys_port_name"]):
                    continue
                return name
        seen = set()
        for g in gids:
            nd = g["netdev"]
            if nd is None or nd in seen:
                continue
            seen.add(nd)
            if self._netdev_extra(nd)["ifindex"] is None:
                return nd  # not visible here (other netns): trust the kernel's GID table
            lower = self._lower_of(nd)
            if lower is not None:
                return lower
        return None

    @staticmethod
    def _netdev_map(devices):
        """``{netdev: {device, port}}``: port netdevs first (hardware before soft), then GID netdevs."""
        result = {}
        ordered = [d for d in devices if not d["soft"]] + [d for d in devices if d["soft"]]
        for dev in ordered:
            for port in dev["ports"]:
                if port["netdev"] is not None and port["netdev"] not in result:
                    result[port["netdev"]] = {"device": dev["name"], "port": port["number"]}
        for dev in ordered:
            for port in dev["ports"]:
                for g in port["gids"]:
                    if g["netdev"] is not None and g["netdev"] not in result:
                        result[g["netdev"]] = {"device": dev["name"], "port": port["number"]}
        return result

    # -- host-level facts --------------------------------------------------
    def _modules(self):
        tree = self.tree
        return dict((m, tree.isdir(tree.sys("module", m))) for m in MODULE_NAMES)

    def _ofed_info(self):
        """(prefix, version) from an ofed_info script, else (None, None)."""
        for rel in OFED_INFO_PATHS:
            data = self.tree.read_bytes(os.path.join(self.root, rel), 16384)
            if data is None:
                continue
            m = _OFED_INFO_RE.search(data.decode("utf-8", "replace"))
            if m:
                return m.group(1), m.group(2)
            return "unknown", None
        return None, None

    def _stack(self, modules, have_devices):
        """Driver stack flavour (see the module documentation for the rule)."""
        tree = self.tree
        prefix, version = self._ofed_info()
        compat_version = _text(tree.read(tree.sys("module", "mlx_compat", "version")))
        doca = prefix == "OFED-internal" or any(tree.exists(os.path.join(self.root, m)) for m in DOCA_MARKERS)
        if doca:
            return {"flavor": "doca", "version": version or compat_version}
        if prefix is not None or modules.get("mlx_compat"):
            return {"flavor": "mlnx_ofed", "version": version or compat_version}
        if have_devices or modules.get("ib_core"):
            return {"flavor": "inbox", "version": None}
        return {"flavor": "none", "version": None}


def default_workers(device_count):
    """Processes for reading ``device_count`` devices: one per CPU this process may use, and per
    :data:`PARALLEL_MIN_DEVICES_PER_WORKER` devices, at most :data:`PARALLEL_MAX_WORKERS`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, device_count // PARALLEL_MIN_DEVICES_PER_WORKER, PARALLEL_MAX_WORKERS))


def _close_quietly(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def _reap(pid):
    """Wait for a worker; its exit status, or None when it was already reaped."""
    try:
        dummy, status = os.waitpid(pid, 0)
    except OSError:
        return None
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def gather_rdma_facts(sysfs_path="/sys", devices=None, gather_subset=None, workers=None, warnings=None):
    """Validate the options and return the ``rdma`` facts dict.

    ``warnings``: a list that gets the gatherer's warnings (unexpected read errors, devices that disappeared).
    """
    validate_options(sysfs_path, devices, gather_subset)
    gatherer = RdmaFactsGatherer(sysfs_path, devices, gather_subset, workers)
    facts = gatherer.gather()
    if warnings is not None:
        warnings.extend(gatherer.warnings)
    return facts
