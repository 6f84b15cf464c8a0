# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA probes, readiness rules and the change plan.

Reads only sysfs/procfs (through :class:`~.sysfs.SysfsTree`) and the name of
the installed libibverbs library; changes state only through
:class:`ChangeRunner`, which the module runs outside check mode, and
:func:`cli_main`, the boot path of ACS (``rdma-fabric gpudirect-acs``).

Sources of the rules (also in the module documentation):

* DMA-BUF: NVIDIA open kernel modules >= 515.43.04 (NCCL 2.13 dma-buf
  requirements, https://github.com/NVIDIA/nccl/pull/682), Linux >= 5.12
  (``ib_umem_dmabuf``, kernel commit bfe0cc6eb249, see
  https://github.com/aws/aws-ofi-nccl/pull/618), libibverbs ABI 1.12 =
  rdma-core 34 (``ibv_reg_dmabuf_mr``).
* ``nvidia_peermem`` ships with the NVIDIA driver since R470 and needs the
  MLNX_OFED/DOCA peer-memory API in ``ib_core`` (``ib_register_peer_memory_client``);
  without it the module's init returns -EINVAL.
* ACS P2P redirect bits as the kernel's ``pci_disable_acs_redir`` clears them
  (request redirect, completion redirect, egress control).

The RDMA NICs are the facts gatherer's (``rdma_facts``, through
``rdma_schema.pci_nics``): the same devices every other part of the
collection sees.

ACS at boot: the kernel turns ACS redirect back on at every boot, and the bus
numbers the bridges had when the role ran may belong to other bridges after a
firmware update, a new card or a changed BIOS setting. So the boot record
(:func:`acs_boot_config`, written by the role) names no bridge: it names each
GPU-NIC pair by the endpoints' identities (vendor, device and subsystem IDs,
PCIe Device Serial Number, physical slot: ``PciTopology.identity``) and the
shape of the path between them (vendor:device of each bridge). At boot
:func:`cli_main` finds each endpoint again (exactly one device, or nothing is
done for that pair), recomputes the path between them, checks that they still
share a PCIe switch and that the path has the recorded shape, and only then
clears ACS redirect on that path's bridges.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import glob
import json
import os
import re
import signal
import sys
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils.pci import (
    IDENTITY_KEYS,
    RELATION_RANK,
    PciTopology,
    find_ext_capability,
    read_u16,
    write_config_u16,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_facts import RdmaFactsGatherer
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import SCHEMA_VERSION, natural_key, pci_nics
from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import PathError, SysfsTree, check_path, describe_error

NVIDIA_VENDOR = 0x10DE
PCI_BASE_CLASS_DISPLAY = 0x03
PCI_BASE_CLASS_NETWORK = 0x02

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")
MODULES_LOAD_FILE = "/etc/modules-load.d/rdma-fabric-gpudirect.conf"
# What the role writes for the boot unit (acs_boot_config) and cli_main reads.
ACS_BOOT_CONFIG = "/etc/rdma-fabric/gpudirect-acs.json"
ACS_BOOT_SCHEMA = 1
MODULES_LOAD_HEADER = "# Managed by rdma.fabric.gpudirect: GPUDirect RDMA peer-memory module\n"

NVIDIA_PEERMEM_SINCE = (470,)
DMABUF_MIN_DRIVER = (515, 43, 4)
DMABUF_MIN_DRIVER_TEXT = "515.43.04"
DMABUF_MIN_KERNEL = (5, 12)
DMABUF_MIN_IBVERBS_ABI = 12  # libibverbs.so.1.12.* = rdma-core v34, first with ibv_reg_dmabuf_mr

# PCIe ACS extended capability (PCIe base spec; kernel include/uapi/linux/pci_regs.h)
PCI_EXT_CAP_ID_ACS = 0x000D
ACS_CAP_REG = 4
ACS_CTRL_REG = 6
ACS_FLAGS = (
    ("source_validation", 0x0001),
    ("translation_blocking", 0x0002),
    ("request_redirect", 0x0004),
    ("completion_redirect", 0x0008),
    ("upstream_forwarding", 0x0010),
    ("egress_control", 0x0020),
    ("direct_translated_p2p", 0x0040),
)
ACS_P2P_REDIRECT = 0x0004 | 0x0008 | 0x0020  # what pci_disable_acs_redir() clears
ACS_WORDS = {0x0004: "request-redirect", 0x0008: "completion-redirect", 0x0020: "egress-control"}
# What acs=enable sets where no word was kept before the first clear: the redirect bits the kernel's own
# pci_std_enable_acs() turns on at boot (request and completion redirect, where the bridge has them; it
# never sets egress control), so the bridge ends as after a boot without the role's oneshot.
ACS_KERNEL_REDIRECT = 0x0004 | 0x0008
# The ACS control words kept before the first clear (the role passes it as acs_saved).
ACS_SAVED_FILE = "/var/lib/rdma-fabric/gpudirect-acs-before.json"
ACS_SAVED_SCHEMA = 1

IOMMU_TRANSLATING = ("DMA", "DMA-FQ")
IOMMU_CMDLINE_KEYS = ("intel_iommu", "amd_iommu", "iommu", "iommu.passthrough", "iommu.strict")

SHARED_SWITCH = ("PIX", "PXB")
OTHER_ROOT_COMPLEX = ("NODE", "SYS")

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


def acs_state(topo, address):
    """ACS of one bridge from its configuration space (extended capability 0x000d)."""
    entry = {"pci_address": address, "state": None, "offset": None, "capability": None,
             "control": None, "flags": None, "detail": None}
    config = topo.read_config(address)
    if config is None:
        entry.update(state="unreadable", detail="the configuration space of %s cannot be read" % address)
        return entry
    if len(config) < 256:
        entry.update(state="unreadable",
                     detail="only the first %d bytes of the configuration space of %s are readable: "
                            "the extended capabilities (offset 0x100 and up) need root (CAP_SYS_ADMIN)"
                            % (len(config), address))
        return entry
    if len(config) == 256:
        entry.update(state="absent", detail="%s has no PCIe extended configuration space" % address)
        return entry
    offset = find_ext_capability(config, PCI_EXT_CAP_ID_ACS)
    if offset is None:
        entry.update(state="absent", detail="%s has no ACS extended capability" % address)
        return entry
    cap = read_u16(config, offset + ACS_CAP_REG)
    ctrl = read_u16(config, offset + ACS_CTRL_REG)
    if ctrl is None:
        entry.update(state="unreadable", detail="the ACS capability of %s is truncated" % address)
        return entry
    entry.update(
        state="enabled" if ctrl & ACS_P2P_REDIRECT else "disabled",
        offset="0x%03x" % offset,
        capability="0x%04x" % cap,
        control="0x%04x" % ctrl,
        flags=dict((name, bool(ctrl & bit)) for name, bit in ACS_FLAGS),
    )
    return entry


def acs_words(entry):
    ctrl = int(entry["control"], 16)
    return [word for bit, word in sorted(ACS_WORDS.items()) if ctrl & bit]


# --------------------------------------------------------------------------
# the whole picture
# --------------------------------------------------------------------------
def root_of(sysfs_path):
    """The filesystem root that holds ``sysfs_path`` (``/`` for ``/sys``)."""
    return os.path.dirname(os.path.abspath(sysfs_path).rstrip(os.sep)) or os.sep


def resolve_roots(host_root="/", sysfs_path=None, procfs_path=None):
    """``{host_root, sysfs, procfs, host_reads}`` from the module's options; PlanError naming the option.

    ``sysfs_path``/``procfs_path`` default to ``<host_root>/sys`` and
    ``<host_root>/proc``. ``host_reads`` is true when they are those (after
    resolving links): only then do the reads describe the host that the
    changes (modprobe, ACS words, the modules-load.d file, all under
    ``host_root``) would touch.
    """
    try:
        check_path("host_root", host_root)
        for name, value in (("sysfs_path", sysfs_path), ("procfs_path", procfs_path)):
            if value is not None:
                check_path(name, value, absolute=False)
    except PathError as exc:
        raise PlanError(str(exc))
    roots = {
        "host_root": host_root,
        "sysfs": sysfs_path if sysfs_path is not None else rooted(host_root, "/sys"),
        "procfs": procfs_path if procfs_path is not None else rooted(host_root, "/proc"),
    }
    for name in ("host_root", "sysfs", "procfs"):
        if not os.path.isdir(roots[name]):
            option = {"sysfs": "sysfs_path", "procfs": "procfs_path"}.get(name, name)
            raise PlanError("%s: %s is not a directory" % (option, roots[name]))
    roots["host_reads"] = (os.path.realpath(roots["sysfs"]) == os.path.realpath(rooted(host_root, "/sys"))
                           and os.path.realpath(roots["procfs"]) == os.path.realpath(rooted(host_root, "/proc")))
    return roots


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
        "schema_version": SCHEMA_VERSION,
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


def acs_boot_config(topo, pairs, bridges):
    """(config, problems): the record the ACS boot unit reads, and the pairs it cannot carry.

    A pair is recorded when a bridge on its path has an ACS capability; each
    endpoint by its identity, which must name exactly one device now (else
    the pair goes to ``problems``: after a renumbering it could not be found
    again for sure), and the path by the vendor:device of its bridges.
    """
    records, problems = [], []
    for pair in pairs:
        if not any((bridges.get(b) or {}).get("state") in ("enabled", "disabled") for b in pair["bridges"]):
            continue
        ends = {"gpu": pair["gpu"], "nic": pair["nic_address"]}
        record, why = {}, []
        for end, address in sorted(ends.items()):
            identity = topo.identity(address)
            found, reason = topo.find_by_identity(identity)
            if found != address:
                why.append("%s %s: %s" % ("GPU" if end == "gpu" else "NIC " + pair["nic"], address,
                                          reason or "its identity names %s" % found))
            record[end] = identity
        if why:
            problems.append("ACS between GPU %s and %s cannot be kept across reboots: %s (no PCIe serial number or "
                            "physical slot tells the devices apart)" % (pair["gpu"], pair["nic"], "; ".join(why)))
            continue
        record["nic_name"] = pair["nic"]
        record["bridges"] = topo.bridge_ids(pair["bridges"])
        records.append(record)
    return {"schema": ACS_BOOT_SCHEMA, "pairs": records}, problems


def readiness(facts, tree):
    """(ready, reasons, warnings): reasons block GPUDirect RDMA, warnings do not."""
    reasons, warnings = [], []
    gpus, nics, driver = facts["gpus"], facts["nics"], facts["driver"]
    peermem, dmabuf = facts["peermem"], facts["dmabuf"]
    if not gpus:
        reasons.append("no NVIDIA GPU (PCI vendor 0x10de, class 0x03xx) under %s"
                       % tree.sys("bus", "pci", "devices"))
    if not nics:
        reasons.append("no RDMA NIC on a PCI device under %s (soft RDMA such as rxe or siw cannot reach GPU memory)"
                       % tree.sys("class", "infiniband"))
    if not gpus:
        return False, reasons, warnings

    if not driver["loaded"]:
        reasons.append("the NVIDIA kernel driver is not loaded (%s is missing)" % tree.sys("module", "nvidia"))
    for gpu in gpus:
        if gpu["driver"] != "nvidia":
            reasons.append("GPU %s is bound to %s, not to the nvidia driver"
                           % (gpu["pci_address"], gpu["driver"] or "no driver"))

    registered = bool(peermem["memory_peers"])
    loaded = peermem["loaded"]
    if loaded and not registered:
        reasons.append("%s is loaded but no peer-memory client is registered under %s: the NIC cannot pin GPU memory through it"
                       % (" and ".join(loaded), tree.sys("kernel", "mm", "memory_peers")))
    if peermem["nv_peer_mem"] and driver["ships_nvidia_peermem"]:
        reasons.append("the legacy nv_peer_mem module is loaded although NVIDIA driver %s ships nvidia_peermem (since R470): "
                       "unload nv_peer_mem, remove the nvidia-peer-memory package and use nvidia_peermem" % driver["version"])
    if not dmabuf["possible"] and not (loaded and registered):
        why = "; ".join(dmabuf["missing"])
        if peermem["peer_memory_api"] is False:
            reasons.append("GPU memory cannot be registered with the NIC: DMA-BUF is not possible (%s) and ib_core has no "
                           "peer-memory API (ib_register_peer_memory_client is missing, an inbox RDMA stack), so %s cannot load"
                           % (why, peermem["module"]))
        elif not loaded:
            reasons.append("GPU memory cannot be registered with the NIC: DMA-BUF is not possible (%s) and %s is not loaded"
                           % (why, peermem["module"]))
    if dmabuf["possible"] and loaded:
        warnings.append("DMA-BUF can register GPU memory here; %s is not needed" % " and ".join(loaded))

    for address, info in sorted(facts["iommu"]["devices"].items()):
        if info["type"] in IOMMU_TRANSLATING:
            kind = "GPU" if any(g["pci_address"] == address for g in gpus) else "NIC"
            reasons.append("the IOMMU translates DMA for %s %s (group %s, type %s): GPUDirect RDMA needs the IOMMU "
                           "off or in passthrough (iommu=pt)" % (kind, address, info["group"], info["type"]))
    if facts["iommu"]["mode"] == "unknown":
        warnings.append("the IOMMU mode is unknown (no iommu_groups/*/type and no iommu=pt on the kernel command line)")

    acs = facts["acs"]
    if acs["mode"] != "ignore":
        by_address = dict((b["pci_address"], b) for b in acs["bridges"])
        seen = []  # (bridge, gpu) in path order, with the NICs behind them
        nics_of = {}
        for pair in acs["pairs"]:
            for address in pair["bridges"]:
                key = (address, pair["gpu"])
                if key not in nics_of:
                    seen.append(key)
                    nics_of[key] = []
                nics_of[key].append(pair["nic"])
        for address, gpu in seen:
            entry = by_address.get(address)
            nic_list = ", ".join(nics_of[(address, gpu)])
            if entry is None:
                continue
            if entry["state"] == "enabled":
                words = acs_words(entry)
                reasons.append("ACS %s %s on at %s between GPU %s and %s"
                               % (" and ".join(words), "is" if len(words) == 1 else "are", address, gpu, nic_list))
            elif entry["state"] == "unreadable":
                reasons.append("the ACS state at %s between GPU %s and %s is unknown: %s"
                               % (address, gpu, nic_list, entry["detail"]))

    for gpu in gpus:
        near = facts["topology"]["nearest_nic"].get(gpu["pci_address"])
        if near is None:
            continue
        if near["relation"] in OTHER_ROOT_COMPLEX:
            reasons.append("GPU %s has no RDMA NIC under its PCIe root complex (nearest: %s, %s): GPUDirect RDMA needs "
                           "both devices under the same root complex" % (gpu["pci_address"], near["name"], near["relation"]))
        elif near["relation"] == "PHB":
            warnings.append("the nearest RDMA NIC of GPU %s is %s through the host bridge (PHB): GPUDirect RDMA works "
                            "but slower than through a PCIe switch" % (gpu["pci_address"], near["name"]))

    if loaded and reasons:
        reasons.append("%s is loaded but GPUDirect RDMA is still unusable for the reasons above" % " and ".join(loaded))
    return not reasons, reasons, warnings


# --------------------------------------------------------------------------
# the change plan
# --------------------------------------------------------------------------
class Action(object):
    """One change, with its undo: a command (argv list), a file write/removal, or an ACS control word write.

    ``acs`` (for ``acs_disable`` and ``acs_enable``): ``{"config": path, "offset": int, "old": int, "new": int,
    "ids": [vendor, device]}``. ``save_file``/``remove_saved``: the record of the ACS words before the first clear.
    """

    def __init__(self, kind, target, argv=None, undo_argv=None, path=None, content=None, old_content=None, acs=None):
        self.kind = kind
        self.target = target
        self.argv = argv
        self.undo_argv = undo_argv
        self.path = path
        self.content = content
        self.old_content = old_content
        self.acs = acs
        self.done = False

    def describe(self):
        if self.argv:
            return " ".join(self.argv)
        if self.kind in ("acs_disable", "acs_enable"):
            return "write 0x%04x to the ACS control register of %s (config offset 0x%03x, was 0x%04x)" % (
                self.acs["new"], self.target, self.acs["offset"], self.acs["old"])
        if self.kind in ("write_file", "save_file"):
            return "write %s" % self.path
        return "remove %s" % self.path

    def as_dict(self):
        return {"action": self.kind, "target": self.target, "command": self.describe(), "done": self.done}


def modules_load_content(module):
    return "%s%s\n" % (MODULES_LOAD_HEADER, module)


class PlanError(Exception):
    """The requested state cannot be reached here (told before touching anything)."""


def rooted(host_root, path):
    """``path`` (absolute, on the host) as this process sees it when the host's root is at ``host_root``."""
    return os.path.join(host_root, path.lstrip("/")) if host_root not in ("/", "") else path


def saved_acs_record(facts, topo):
    """The ACS control word of every bridge read, keyed by address with its vendor:device (JSON text)."""
    bridges = {}
    for entry in facts["acs"]["bridges"]:
        if entry["control"]:
            bridges[entry["pci_address"]] = {
                "control": entry["control"],
                "ids": list(topo.identity_ids(entry["pci_address"])[:2]) if topo is not None else None}
    return json.dumps({"schema": ACS_SAVED_SCHEMA, "bridges": bridges}, indent=2, sort_keys=True) + "\n"


def parse_saved_acs(text, path):
    """``{address: {"control": int, "ids": [...]}}`` from the record; PlanError naming ``path`` when unusable."""
    try:
        record = json.loads(text)
        if record.get("schema") != ACS_SAVED_SCHEMA or not isinstance(record.get("bridges"), dict):
            raise ValueError("not schema %d with bridges" % ACS_SAVED_SCHEMA)
        saved = {}
        for address, entry in record["bridges"].items():
            saved[address] = {"control": int(entry["control"], 16), "ids": entry.get("ids")}
        return saved
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise PlanError("%s (the ACS words kept before the first clear) is not usable: %s; nothing was changed. "
                        "Remove it to restore the kernel's boot default (request and completion redirect) instead"
                        % (path, exc))


def plan(facts, peermem, persist, acs, current_file, host_root="/", modules_load_file=None, topo=None,
         saved_file=None, saved_content=None):
    """Ordered :class:`Action` list that brings the host to the requested state.

    ``current_file`` is the content of the modules-load.d file (None if absent).
    Commands are argv lists with bare tool names; the runner resolves them.
    ``host_root`` other than ``/`` (a container with the host's root mounted
    there): ``modprobe -d host_root`` loads the host's module files, the
    modules-load.d file is written below it. ``topo`` gives the configuration
    space paths of the ACS writes (those under the tree that was read).

    ``saved_file`` (with ``saved_content``, its text or None when absent): with
    ``acs=disable``, the ACS words are kept there before the first clear
    (once: an existing record is left as it is); with ``acs=enable``, each
    bridge on a GPU-NIC path gets its kept redirect bits back (where the
    record names it with the same vendor:device), or else the kernel's boot
    default (:data:`ACS_KERNEL_REDIRECT`), and the record is removed.
    """
    actions = []
    pm = facts["peermem"]
    gpus_ok = bool(facts["gpus"]) and facts["driver"]["loaded"]
    modprobe = ["modprobe"] + (["-d", host_root] if host_root not in ("/", "") else [])
    load_file = modules_load_file or rooted(host_root, MODULES_LOAD_FILE)

    wanted = None
    decided = True
    if peermem == "absent":
        wanted = None
    elif not facts["gpus"]:
        decided = peermem == "auto"  # auto: nothing to serve; present: leave things alone
    elif not facts["driver"]["loaded"]:
        decided = False
    elif peermem == "present" or pm["needed"]:
        wanted = pm["module"]
        if pm["peer_memory_api"] is False:
            if peermem == "present":
                raise PlanError(
                    "peermem=present: %s cannot load here: ib_core has no peer-memory API "
                    "(ib_register_peer_memory_client is not in /proc/kallsyms), which is the case on inbox RDMA stacks; "
                    "install MLNX_OFED/DOCA-OFED or meet the DMA-BUF requirements (%s)"
                    % (wanted, "; ".join(facts["dmabuf"]["missing"]) or "met"))
            wanted = None
            decided = False  # do not persist a module that fails at every boot

    if peermem == "absent":
        for name in reversed(PEERMEM_MODULES):
            if pm[name]:
                actions.append(Action("unload_module", name, argv=modprobe + ["-r", name], undo_argv=modprobe + [name]))
    elif wanted and gpus_ok and not pm[wanted]:
        other = [n for n in PEERMEM_MODULES if n != wanted and pm[n]]
        for name in other:
            actions.append(Action("unload_module", name, argv=modprobe + ["-r", name], undo_argv=modprobe + [name]))
        actions.append(Action("load_module", wanted, argv=modprobe + [wanted], undo_argv=modprobe + ["-r", wanted]))

    if persist and decided:
        if wanted:
            content = modules_load_content(wanted)
            if current_file != content:
                actions.append(Action("write_file", load_file, path=load_file, content=content, old_content=current_file))
        elif current_file is not None:
            actions.append(Action("remove_file", load_file, path=load_file, old_content=current_file))

    def acs_action(kind, entry, old, new):
        return Action(kind, entry["pci_address"], acs={
            "config": topo.config_path(entry["pci_address"]) if topo is not None else None,
            "offset": int(entry["offset"], 16) + ACS_CTRL_REG,
            "old": old,
            "new": new,
            "ids": topo.identity_ids(entry["pci_address"])[:2] if topo is not None else None,
        })

    if acs == "disable":
        clears = [acs_action("acs_disable", entry, int(entry["control"], 16), int(entry["control"], 16) & ~ACS_P2P_REDIRECT)
                  for entry in facts["acs"]["bridges"] if entry["state"] == "enabled"]
        if clears and saved_file and saved_content is None:
            actions.append(Action("save_file", saved_file, path=saved_file, content=saved_acs_record(facts, topo)))
        actions.extend(clears)
    elif acs == "enable":
        saved = parse_saved_acs(saved_content, saved_file) if saved_content is not None else {}
        for entry in facts["acs"]["bridges"]:
            if entry["state"] not in ("enabled", "disabled"):
                continue
            old = int(entry["control"], 16)
            kept = saved.get(entry["pci_address"])
            ids = list(topo.identity_ids(entry["pci_address"])[:2]) if topo is not None else None
            if kept is not None and (kept["ids"] is None or ids is None or list(kept["ids"]) == ids):
                new = (old & ~ACS_P2P_REDIRECT) | (kept["control"] & ACS_P2P_REDIRECT)
            else:
                new = old | (int(entry["capability"], 16) & ACS_KERNEL_REDIRECT)
            if new != old:
                actions.append(acs_action("acs_enable", entry, old, new))
        if saved_content is not None:
            actions.append(Action("remove_saved", saved_file, path=saved_file, old_content=saved_content))
    return actions


def state_view(facts, file_content):
    """What diff mode shows: loaded peer-memory modules, the file, ACS control words."""
    return {
        "peermem_loaded": list(facts["peermem"]["loaded"]),
        "modules_load_file": file_content,
        "acs_control": dict((b["pci_address"], b["control"]) for b in facts["acs"]["bridges"] if b["control"]),
    }


def predicted_view(before, actions):
    after = {
        "peermem_loaded": list(before["peermem_loaded"]),
        "modules_load_file": before["modules_load_file"],
        "acs_control": dict(before["acs_control"]),
    }
    for action in actions:
        if action.kind == "load_module" and action.target not in after["peermem_loaded"]:
            after["peermem_loaded"].append(action.target)
        elif action.kind == "unload_module" and action.target in after["peermem_loaded"]:
            after["peermem_loaded"].remove(action.target)
        elif action.kind == "write_file":
            after["modules_load_file"] = action.content
        elif action.kind == "remove_file":
            after["modules_load_file"] = None
        elif action.kind in ("acs_disable", "acs_enable"):
            after["acs_control"][action.target] = "0x%04x" % action.acs["new"]
    return after


def read_text_file(path, tree=None):
    """Text of ``path``; None when absent (or unreadable: with ``tree``, an unexpected error adds a warning)."""
    reader = tree if tree is not None else SysfsTree()
    return reader.read(path, strip=False)


# --------------------------------------------------------------------------
# carrying out a plan: rollback on failure, on a command that cannot start,
# and on SIGTERM/SIGINT/SIGHUP
# --------------------------------------------------------------------------
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGINT", "SIGHUP") if hasattr(signal, name))


class Interrupted(Exception):
    """A stop signal arrived while changes were being made."""

    def __init__(self, signum):
        self.signum = signum
        super(Interrupted, self).__init__("interrupted by %s" % signal_name(signum))


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except ValueError:
        return "signal %d" % signum


class _StopSignals(object):
    """While active, a stop signal raises :class:`Interrupted` (``defer=False``) or is only remembered
    (``defer=True``: a rollback runs to its end). The previous handlers come back on exit."""

    def __init__(self, defer=False):
        self.defer = defer
        self.received = []
        self._old = {}

    def _handler(self, signum, frame):
        self.received.append(signum)
        if not self.defer:
            raise Interrupted(signum)

    def __enter__(self):
        for signum in STOP_SIGNALS:
            try:
                self._old[signum] = signal.signal(signum, self._handler)
            except (ValueError, OSError):  # not the main thread: nothing to catch with
                pass
        return self

    def __exit__(self, *exc):
        for signum, old in self._old.items():
            signal.signal(signum, old)
        return False


class ChangeRunner(object):
    """Runs a plan; undoes what it did when a step fails, cannot start, or the run is told to stop.

    ``module`` needs ``get_bin_path``, ``run_command`` and ``atomic_move``
    (an AnsibleModule); ACS words are written through the configuration space
    file of the tree that was read, so no tool is involved.
    """

    def __init__(self, module):
        self.module = module
        self._bins = {}

    def _bin(self, name):
        if name not in self._bins:
            self._bins[name] = self.module.get_bin_path(name, required=True)
        return self._bins[name]

    def _argv(self, argv):
        return [self._bin(argv[0])] + list(argv[1:])

    def _command(self, argv):
        # handle_exceptions=False: a command that cannot start (gone, not executable) raises here, inside the
        # rollback's reach, instead of ending the module in run_command with the changes left in place.
        rc, out, err = self.module.run_command(self._argv(argv), handle_exceptions=False)
        if rc != 0:
            raise RuntimeError("%s failed (rc=%d): %s" % (" ".join(argv), rc, (err or out).strip()))

    def _write(self, path, content):
        directory = os.path.dirname(path)
        if not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        fd, tmp = tempfile.mkstemp(prefix=".rdma-fabric-", dir=directory)
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(content)
            os.chmod(tmp, 0o644)
            self.module.atomic_move(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _do(self, action):
        if action.argv:
            self._command(action.argv)
        elif action.kind in ("acs_disable", "acs_enable"):
            set_acs_control(action.acs, action.acs["old"], action.acs["new"])
        elif action.kind in ("write_file", "save_file"):
            self._write(action.path, action.content)
        elif action.kind in ("remove_file", "remove_saved"):
            os.unlink(action.path)

    def _undo(self, action):
        if action.undo_argv:
            self._command(action.undo_argv)
        elif action.kind in ("acs_disable", "acs_enable"):
            set_acs_control(action.acs, action.acs["new"], action.acs["old"])
        elif action.old_content is None:
            if os.path.exists(action.path):
                os.unlink(action.path)
        else:
            self._write(action.path, action.old_content)

    def run(self, actions):
        """Apply every action; on failure undo the done ones and raise :class:`ChangeFailed` with the story.

        Every tool is looked up first, so a missing one fails before any change.
        A stop signal (SIGTERM, SIGINT, SIGHUP) during the changes undoes them
        too, the step it interrupted included (its undo is harmless where the
        step had not taken effect); signals during the rollback wait for it.
        """
        for action in actions:
            for argv in (action.argv, action.undo_argv):
                if argv:
                    self._bin(argv[0])
        with _StopSignals():
            for index, action in enumerate(actions):
                try:
                    self._do(action)
                    action.done = True
                except BaseException as exc:  # pylint: disable=broad-except
                    undo = actions[:index + 1] if isinstance(exc, Interrupted) else actions[:index]
                    with _StopSignals(defer=True) as later:
                        restored, left = self._rollback(undo, current=action if isinstance(exc, Interrupted) else None)
                    raise ChangeFailed(action, exc, restored, left, [signal_name(s) for s in later.received])

    def _rollback(self, actions, current=None):
        restored, left = [], []
        for done in reversed(actions):
            try:
                self._undo(done)
                done.done = False
                restored.append(done.describe())
            except Exception as undo_exc:  # pylint: disable=broad-except
                if done is current:
                    left.append("%s (interrupted: may or may not have taken effect; undo failed: %s)"
                                % (done.describe(), undo_exc))
                else:
                    left.append("%s (undo failed: %s)" % (done.describe(), undo_exc))
        return restored, left


class ChangeFailed(Exception):
    def __init__(self, action, cause, restored, left, signals_during_rollback=()):
        self.action = action
        self.cause = cause
        self.restored = restored
        self.left = left
        self.interrupted = isinstance(cause, Interrupted)
        reason = describe_error(cause) if isinstance(cause, OSError) else str(cause) or type(cause).__name__
        if isinstance(cause, OSError):
            reason = "cannot run: %s" % reason if action.argv else reason
        message = "%s: %s" % (action.describe(), reason)
        if restored:
            message += "; restored: %s" % ", ".join(restored)
        if left:
            message += "; left changed: %s" % ", ".join(left)
        if signals_during_rollback:
            message += "; %s arrived during the rollback, which ran to its end" % ", ".join(signals_during_rollback)
        super(ChangeFailed, self).__init__(message)


def set_acs_control(acs, expect, value):
    """Write the ACS control word ``value`` where it reads ``expect`` (or already ``value``); read back to check.

    Refuses (RuntimeError) when the configuration space no longer belongs to
    the planned device (other vendor:device), has no ACS control word at the
    planned offset, or holds a third value (someone else changed it).
    """
    path, offset = acs["config"], acs["offset"]
    reader = SysfsTree()
    config = reader.read_bytes(path)
    if config is None or len(config) < offset + 2:
        raise RuntimeError("cannot read the configuration space %s up to offset 0x%03x%s"
                           % (path, offset, (": " + "; ".join(reader.warnings)) if reader.warnings else ""))
    ids = ["0x%04x" % read_u16(config, 0), "0x%04x" % read_u16(config, 2)]
    if acs.get("ids") and ids != list(acs["ids"]):
        raise RuntimeError("%s now belongs to %s:%s, not the planned %s:%s" % (path, ids[0], ids[1], acs["ids"][0], acs["ids"][1]))
    current = read_u16(config, offset)
    if current == value:
        return
    if current != expect:
        raise RuntimeError("the ACS control word at 0x%03x of %s reads 0x%04x, not 0x%04x: changed by someone else"
                           % (offset, path, current, expect))
    write_config_u16(path, offset, value)
    after = read_u16(reader.read_bytes(path), offset)
    if after != value:
        raise RuntimeError("the ACS control word at 0x%03x of %s reads 0x%04x after writing 0x%04x"
                           % (offset, path, -1 if after is None else after, value))


# --------------------------------------------------------------------------
# the boot path: rdma-fabric gpudirect-acs (host runtime, no Ansible)
# --------------------------------------------------------------------------
def check_boot_config(config):
    """The boot record's problems in words ([] when usable)."""
    if not isinstance(config, dict) or config.get("schema") != ACS_BOOT_SCHEMA or not isinstance(config.get("pairs"), list):
        return ["not an ACS boot record of schema %d (a JSON object with schema and pairs)" % ACS_BOOT_SCHEMA]
    problems = []
    for i, pair in enumerate(config["pairs"]):
        if not isinstance(pair, dict):
            problems.append("pairs[%d] is not an object" % i)
            continue
        for end in ("gpu", "nic"):
            ident = pair.get(end)
            if not isinstance(ident, dict) or set(ident) != set(IDENTITY_KEYS) or not ident.get("vendor_id"):
                problems.append("pairs[%d].%s is not a device identity (%s)" % (i, end, ", ".join(IDENTITY_KEYS)))
        if not isinstance(pair.get("bridges"), list) or not all(isinstance(b, str) for b in pair["bridges"]):
            problems.append("pairs[%d].bridges is not a list of vendor:device" % i)
    return problems


def apply_boot_config(tree, config, check=False):
    """Clear ACS redirect on the paths of the recorded pairs, found again by identity. ``(ok, lines)``."""
    topo = PciTopology(tree)
    lines, ok = [], True
    for pair in config["pairs"]:
        label = "GPU %s / NIC %s" % (pair["gpu"].get("serial") or pair["gpu"]["device_id"], pair.get("nic_name") or "?")
        found = {}
        for end in ("gpu", "nic"):
            found[end], why = topo.find_by_identity(pair[end])
            if found[end] is None:
                lines.append("%s: skipped, the %s is not found for sure: %s" % (label, end.upper(), why))
        if None in found.values():
            ok = False
            continue
        gpu, nic = found["gpu"], found["nic"]
        label = "GPU %s / NIC %s" % (gpu, nic)
        relation = topo.relation(gpu, nic)
        path = topo.path_bridges(gpu, nic)
        if relation not in SHARED_SWITCH:
            lines.append("%s: skipped, they no longer share a PCIe switch (%s)" % (label, relation))
            ok = False
            continue
        if topo.bridge_ids(path) != pair["bridges"]:
            lines.append("%s: skipped, the path between them changed (now %s, recorded %s)"
                         % (label, " ".join(topo.bridge_ids(path)) or "none", " ".join(pair["bridges"]) or "none"))
            ok = False
            continue
        for address in path:
            entry = acs_state(topo, address)
            if entry["state"] in ("absent", "disabled"):
                lines.append("%s: %s ACS %s" % (label, address, "already off" if entry["state"] == "disabled" else "absent"))
                continue
            if entry["state"] != "enabled":
                lines.append("%s: %s ACS unknown: %s" % (label, address, entry["detail"]))
                ok = False
                continue
            old = int(entry["control"], 16)
            acs = {"config": topo.config_path(address), "offset": int(entry["offset"], 16) + ACS_CTRL_REG,
                   "old": old, "new": old & ~ACS_P2P_REDIRECT, "ids": topo.identity_ids(address)[:2]}
            if check:
                lines.append("%s: %s ACS 0x%04x would become 0x%04x" % (label, address, old, acs["new"]))
                continue
            try:
                set_acs_control(acs, old, acs["new"])
                lines.append("%s: %s ACS 0x%04x -> 0x%04x" % (label, address, old, acs["new"]))
            except (OSError, RuntimeError, ValueError) as exc:
                lines.append("%s: %s ACS not changed: %s" % (label, address, describe_error(exc) if isinstance(exc, OSError) else exc))
                ok = False
    for warning in tree.all_warnings():
        lines.append("warning: %s" % warning)
    return ok, lines


def cli_main(argv=None, out=None):
    """``rdma-fabric gpudirect-acs [--config PATH] [--sysfs-path DIR] [--check]``: exit 0 when every recorded
    pair was found and its path's ACS redirect is off, 1 when a pair or bridge was skipped, 2 on a bad record."""
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="rdma-fabric gpudirect-acs",
        description="Clear PCIe ACS redirect between the GPU-NIC pairs recorded by the rdma.fabric.gpudirect role, "
                    "finding each device again by its identity (never by a bus address fixed at apply time).")
    parser.add_argument("--config", default=ACS_BOOT_CONFIG, help="the record the role wrote (default %(default)s)")
    parser.add_argument("--sysfs-path", default="/sys", help="the sysfs root (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="say what would change, change nothing")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as handle:
            config = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        out.write("gpudirect-acs: cannot read %s: %s\n" % (args.config, exc))
        return 2
    problems = check_boot_config(config)
    if problems:
        out.write("gpudirect-acs: %s: %s\n" % (args.config, "; ".join(problems)))
        return 2
    ok, lines = apply_boot_config(SysfsTree(args.sysfs_path), config, check=args.check)
    for line in lines:
        out.write("gpudirect-acs: %s\n" % line)
    return 0 if ok else 1
