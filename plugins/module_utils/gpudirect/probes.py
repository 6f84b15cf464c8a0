# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA probes: what a host has (GPUs, NVIDIA driver, DMA-BUF, peer memory, IOMMU, ACS, the
GPU-NIC matrix), read only from sysfs/procfs (through :class:`~..facts.sysfs.SysfsTree`) and the name of the
installed libibverbs library; :func:`gather` puts it together with the readiness (:mod:`.readiness`).

Sources of the rules (also in the module documentation):

* DMA-BUF: NVIDIA open kernel modules >= 515.43.04 (NCCL 2.13 dma-buf
  requirements, https://github.com/NVIDIA/nccl/pull/682), Linux >= 5.12
  (``ib_umem_dmabuf``, kernel commit bfe0cc6eb249, see
  https://github.com/aws/aws-ofi-nccl/pull/618), libibverbs ABI 1.12 =
  rdma-core 34 (``ibv_reg_dmabuf_mr``).
* ``nvidia_peermem`` ships with the NVIDIA driver since R470 and needs the
  MLNX_OFED/DOCA peer-memory API in ``ib_core`` (``ib_register_peer_memory_client``);
  without it the module's init returns -EINVAL.
* ACS: :mod:`.acs`.

The RDMA NICs are the facts gatherer's (``rdma_facts``, through
``rdma_schema.pci_nics``): the same devices every other part of the
collection sees.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import natural_key, pci_nics
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import RELATION_RANK, SHARED_SWITCH, PciTopology
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import RdmaFactsGatherer
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import acs_state
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs_boot import acs_boot_config
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.readiness import IOMMU_TRANSLATING, readiness


# The version of ansible_facts.gpudirect, its own: the RDMA facts' is rdma_schema.SCHEMA_VERSION.
GPUDIRECT_SCHEMA_VERSION = 1
NVIDIA_VENDOR = 0x10DE
PCI_BASE_CLASS_DISPLAY = 0x03
PCI_BASE_CLASS_NETWORK = 0x02

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")


NVIDIA_PEERMEM_SINCE = (470,)
DMABUF_MIN_DRIVER = (515, 43, 4)
DMABUF_MIN_DRIVER_TEXT = "515.43.04"
DMABUF_MIN_KERNEL = (5, 12)
DMABUF_MIN_IBVERBS_ABI = 12  # libibverbs.so.1.12.* = rdma-core v34, first with ibv_reg_dmabuf_mr


IOMMU_CMDLINE_KEYS = ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict")


IBVERBS_RE = re.compile(r"libibverbs\.so\.1\.(\d+)\.([0-9A-Za-z]+)\.\d+")  # re.fullmatch


def parse_version(text):
    """``"535.104.05"`` -> ``(535, 104, 5)``; None when no leading number."""
    if not text:
        return None
    match = re.match(r"\s*(\d+(?:\.\d+)*)", text)
    if not match:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def format_version(parts):
    return ".".join("%d" % p for p in parts)


# --------------------------------------------------------------------------
# probes
# --------------------------------------------------------------------------
def rdma_nics(rdma_facts, topo):
    """The RDMA devices on a PCI function (``rdma_schema.pci_nics`` of the facts): ``[{name, pci_address, ...}]``.

    Soft devices (rxe, siw) are left out: they cannot reach GPU memory. An
    auxiliary device (mlx5 sub-function) counts as the PCI function it sits
    below (the facts' ``pci_address``).
    """
    nics = []
    for dev in pci_nics(rdma_facts):
        pci = topo.get(dev["pci_address"])
        if pci is None:
            continue
        nics.append({
            "name": dev["name"],
            "pci_address": pci.address,
            "driver": pci.driver,
            "numa_node": topo.numa_node(pci.address),
            "is_vf": pci.is_vf,
            "physfn": pci.physfn,
        })
    nics.sort(key=lambda n: natural_key(n["name"]))
    return nics


def nic_matrix(topo):
    """Network PCI function -> {every other network PCI function -> relation}: the GPU-to-NIC engine
    (:meth:`PciTopology.relation`) between NICs, RDMA-capable or not (PCI base class 0x02)."""
    nics = [dev.address for dev in topo.find(base_class=PCI_BASE_CLASS_NETWORK)]
    return dict((a, dict((b, topo.relation(a, b)) for b in nics if b != a)) for a in nics)


def nvidia_gpus(topo):
    gpus = []
    for dev in topo.find(vendor=NVIDIA_VENDOR, base_class=PCI_BASE_CLASS_DISPLAY):
        gpus.append({
            "pci_address": dev.address,
            "device_id": "0x%04x" % dev.device if dev.device is not None else None,
            "class": "0x%06x" % dev.class_code,
            "driver": dev.driver,
            "numa_node": topo.numa_node(dev.address),
            "iommu_group": dev.iommu_group,
            "is_vf": dev.is_vf,
            "physfn": dev.physfn,
        })
    return gpus


def nvidia_driver(tree):
    """NVIDIA kernel driver: loaded, version, flavour (open | proprietary)."""
    text = tree.read(tree.proc("driver", "nvidia", "version"))
    module_version = tree.read(tree.sys("module", "nvidia", "version"))
    first = text.splitlines()[0] if text else ""
    flavour = None
    if "Open Kernel Module" in first:
        flavour = "open"
    elif "Kernel Module" in first:
        flavour = "proprietary"
    version = module_version or None
    if not version and first:
        match = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)", first)
        version = match.group(1) if match else None
    parsed = parse_version(version)
    return {
        "loaded": tree.isdir(tree.sys("module", "nvidia")) or text is not None,
        "version": version,
        "flavour": flavour,
        "ships_nvidia_peermem": None if parsed is None else parsed >= NVIDIA_PEERMEM_SINCE,
    }


def libibverbs(root):
    """(abi_minor, rdma_core_version, file name) of the newest installed libibverbs."""
    patterns = (
        os.path.join(root, "usr", "lib*", "libibverbs.so.1.*"),
        os.path.join(root, "usr", "lib*", "*", "libibverbs.so.1.*"),
        os.path.join(root, "lib*", "libibverbs.so.1.*"),
        os.path.join(root, "lib*", "*", "libibverbs.so.1.*"),
    )
    best = None
    for pattern in patterns:
        for path in glob.glob(pattern):
            match = IBVERBS_RE.fullmatch(os.path.basename(path))
            if not match:
                continue
            digits = re.match(r"\d+", match.group(2))
            found = (int(match.group(1)), digits.group(0) if digits else match.group(2), os.path.basename(path))
            if best is None or found[:1] > best[:1]:
                best = found
    return best


def dmabuf_state(driver, kernel_release, ibverbs):
    """Whether DMA-BUF GPUDirect RDMA is possible, with every unmet condition."""
    missing = []
    driver_version = parse_version(driver.get("version"))
    flavour = driver.get("flavour")
    driver_ok = driver_version is not None and driver_version >= DMABUF_MIN_DRIVER
    if flavour is None and driver_version is None:
        missing.append("the NVIDIA driver is not loaded")
    else:
        if flavour != "open":
            missing.append("the NVIDIA driver is %s, DMA-BUF export needs the open kernel modules" % (flavour or "of unknown flavour"))
        if not driver_ok:
            missing.append("NVIDIA driver %s is older than %s" % (driver.get("version"), DMABUF_MIN_DRIVER_TEXT)
                           if driver_version else "the NVIDIA driver version is unknown")
    kernel = parse_version(kernel_release)
    kernel_ok = kernel is not None and kernel[:2] >= DMABUF_MIN_KERNEL
    if not kernel_ok:
        missing.append("Linux %s is older than %s (no ib_umem_dmabuf)" % (kernel_release, format_version(DMABUF_MIN_KERNEL))
                       if kernel else "the kernel release is unknown")
    abi = ibverbs[0] if ibverbs else None
    rdma_core_ok = abi is not None and abi >= DMABUF_MIN_IBVERBS_ABI
    if not rdma_core_ok:
        missing.append("libibverbs %s has no ibv_reg_dmabuf_mr (needs rdma-core 34 or later)" % ibverbs[2]
                       if ibverbs else "libibverbs (rdma-core) was not found")
    return {
        "possible": not missing,
        "kernel_release": kernel_release,
        "kernel_ok": kernel_ok,
        "driver_open": driver.get("flavour") == "open",
        "driver_ok": driver_ok,
        "rdma_core_version": ibverbs[1] if ibverbs else None,
        "libibverbs": ibverbs[2] if ibverbs else None,
        "rdma_core_ok": rdma_core_ok,
        "missing": missing,
    }


def peer_memory_api(tree):
    """True when ib_core exports the MLNX peer-memory API, False when ib_core
    is loaded without it (inbox stack), None when unknown."""
    if not tree.isdir(tree.sys("module", "ib_core")):
        return None
    symbols = tree.read(tree.proc("kallsyms"), strip=False)
    if not symbols:
        return None
    return re.search(r"\sib_register_peer_memory_client(?!\S)", symbols) is not None


def peermem_state(tree, driver):
    loaded = dict((name, tree.isdir(tree.sys("module", name))) for name in PEERMEM_MODULES)
    peers_dir = tree.sys("kernel", "mm", "memory_peers")
    memory_peers = tree.listdir(peers_dir) if tree.isdir(peers_dir) else None
    ships = driver.get("ships_nvidia_peermem")
    return {
        "nvidia_peermem": loaded["nvidia_peermem"],
        "nv_peer_mem": loaded["nv_peer_mem"],
        "loaded": [name for name in PEERMEM_MODULES if loaded[name]],
        "memory_peers": memory_peers,
        "module": "nv_peer_mem" if ships is False else "nvidia_peermem",
    }


def iommu_state(tree, topo, addresses):
    groups_dir = tree.sys("kernel", "iommu_groups")
    groups = [g for g in tree.listdir(groups_dir) if g.isdigit()]
    types = {}
    for group in groups:
        gtype = tree.read(os.path.join(groups_dir, group, "type"))
        if gtype:
            types[gtype] = types.get(gtype, 0) + 1
    cmdline = {}
    for token in (tree.read(tree.proc("cmdline")) or "").split():
        key, _sep, value = token.partition("=")
        if key in IOMMU_CMDLINE_KEYS:
            cmdline[key] = value
    devices = {}
    for address in addresses:
        dev = topo.get(address)
        group = dev.iommu_group if dev is not None else None
        gtype = tree.read(os.path.join(groups_dir, str(group), "type")) if group is not None else None
        devices[address] = {"group": group, "type": gtype}
    if not groups:
        mode = "off"
    elif any(t in IOMMU_TRANSLATING for t in types):
        mode = "translated"
    elif types.get("identity"):
        mode = "passthrough"
    elif cmdline.get("iommu") == "pt" or cmdline.get("iommu.passthrough") == "1":
        mode = "passthrough"
    else:
        mode = "unknown"
    return {"mode": mode, "group_types": types, "cmdline": cmdline, "devices": devices}


# --------------------------------------------------------------------------
# the whole picture
# --------------------------------------------------------------------------
def root_of(sysfs_path):
    """The filesystem root that holds ``sysfs_path`` (``/`` for ``/sys``)."""
    return os.path.dirname(os.path.abspath(sysfs_path).rstrip(os.sep)) or os.sep


def gather(tree, acs_mode, root=None, topo=None):
    """Every GPUDirect fact (``ansible_facts.gpudirect``) plus readiness.

    Read errors become unknown values and land in ``tree.warnings``. ``root``:
    where libibverbs is looked for (default: the folder holding the sysfs
    root); ``topo``: the :class:`PciTopology` of ``tree`` when the caller has
    one (the module plans ACS writes with it).
    """
    topo = topo if topo is not None else PciTopology(tree)
    gpus = nvidia_gpus(topo)
    nics = rdma_nics(RdmaFactsGatherer(tree.sysfs, tree=tree).gather(), topo)
    driver = nvidia_driver(tree)
    kernel_release = tree.read(tree.proc("sys", "kernel", "osrelease"))
    ibverbs = libibverbs(root if root is not None else root_of(tree.sysfs))
    dmabuf = dmabuf_state(driver, kernel_release, ibverbs)
    peermem = peermem_state(tree, driver)
    peermem["needed"] = bool(gpus) and not dmabuf["possible"]
    peermem["peer_memory_api"] = peer_memory_api(tree) if nics and gpus else None

    matrix, gpu_matrix, nearest = {}, {}, {}
    for gpu in gpus:
        g = gpu["pci_address"]
        matrix[g] = dict((nic["name"], topo.relation(g, nic["pci_address"])) for nic in nics)
        gpu_matrix[g] = dict((o["pci_address"], topo.relation(g, o["pci_address"])) for o in gpus if o is not gpu)
        ranked = sorted(nics, key=lambda n: (RELATION_RANK[matrix[g][n["name"]]], n["is_vf"], natural_key(n["name"])))
        nearest[g] = {"name": ranked[0]["name"], "pci_address": ranked[0]["pci_address"],
                      "relation": matrix[g][ranked[0]["name"]]} if ranked else None

    pairs = []
    for gpu in gpus:
        for nic in nics:
            relation = matrix[gpu["pci_address"]][nic["name"]]
            if relation in SHARED_SWITCH:
                pairs.append({"gpu": gpu["pci_address"], "nic": nic["name"], "nic_address": nic["pci_address"],
                              "relation": relation,
                              "bridges": topo.path_bridges(gpu["pci_address"], nic["pci_address"])})
    bridges = {}
    if acs_mode != "ignore":
        for pair in pairs:
            for address in pair["bridges"]:
                if address not in bridges:
                    bridges[address] = acs_state(topo, address)

    addresses = [g["pci_address"] for g in gpus] + [n["pci_address"] for n in nics]
    facts = {
        "schema_version": GPUDIRECT_SCHEMA_VERSION,
        "gpus": gpus,
        "nics": nics,
        "driver": driver,
        "dmabuf": dmabuf,
        "peermem": peermem,
        "iommu": iommu_state(tree, topo, addresses),
        "acs": {"mode": acs_mode, "pairs": pairs,
                "bridges": [bridges[a] for a in sorted(bridges)]},
        "topology": {"matrix": matrix, "gpu_matrix": gpu_matrix, "nearest_nic": nearest, "nic_matrix": nic_matrix(topo)},
    }
    facts["acs"]["boot_config"], facts["acs"]["boot_problems"] = acs_boot_config(topo, pairs, bridges)
    facts["ready"], facts["reasons"], facts["warnings"] = readiness(facts, tree)
    return facts
