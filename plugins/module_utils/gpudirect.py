# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA probes, readiness rules and the change plan.

Reads only sysfs/procfs (through :class:`~.sysfs.SysfsTree`) and the name of
the installed libibverbs library; changes state only through
:class:`ChangeRunner`, which the module runs outside check mode.

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

The RDMA NIC list here is deliberately minimal (ibdev name -> PCI address from
``class/infiniband/*/device``); the full RDMA facts live in the facts gatherer
(``rdma_device_facts``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re
import tempfile

from ansible_collections.rdma.fabric.plugins.module_utils.pci import (
    RELATION_RANK,
    PciTopology,
    find_ext_capability,
    is_pci_address,
    read_u16,
)
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_schema import SCHEMA_VERSION, natural_key

NVIDIA_VENDOR = 0x10DE
PCI_BASE_CLASS_DISPLAY = 0x03
PCI_BASE_CLASS_NETWORK = 0x02

PEERMEM_MODULES = ("nvidia_peermem", "nv_peer_mem")
MODULES_LOAD_FILE = "/etc/modules-load.d/rdma-fabric-gpudirect.conf"
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
# setpci value:mask write: clears only the three redirect bits, keeps the rest
SETPCI_ACS_CLEAR = "ECAP_ACS+0x6.w=0000:%04x" % ACS_P2P_REDIRECT

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
def rdma_nics(tree, topo):
    """RDMA devices that sit on a PCI function: ``[{name, pci_address, ...}]``.

    Soft devices (rxe, siw) have no ``device`` link and are left out: they
    cannot reach GPU memory.
    """
    nics = []
    for name in tree.listdir(tree.sys("class", "infiniband")):
        class_path = tree.sys("class", "infiniband", name)
        dev_dir = tree.readlink(class_path) or class_path
        address = _pci_function(tree, tree.readlink(os.path.join(dev_dir, "device")))
        if address is None or topo.get(address) is None:
            continue
        dev = topo.get(address)
        nics.append({
            "name": name,
            "pci_address": address,
            "driver": dev.driver,
            "numa_node": topo.numa_node(address),
            "is_vf": dev.is_vf,
            "physfn": dev.physfn,
        })
    nics.sort(key=lambda n: natural_key(n["name"]))
    return nics


def _pci_function(tree, device_dir):
    """PCI address a ``device`` link leads to; an auxiliary device (mlx5
    sub-function) counts as the PCI function it sits below."""
    path = device_dir
    while path and len(path) > len(tree.sysfs):
        if is_pci_address(os.path.basename(path)):
            return os.path.basename(path)
        path = os.path.dirname(path)
    return None


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


def gather(tree, acs_mode, root=None):
    """Every GPUDirect fact (``ansible_facts.gpudirect``) plus readiness."""
    topo = PciTopology(tree)
    gpus = nvidia_gpus(topo)
    nics = rdma_nics(tree, topo)
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
                pairs.append({"gpu": gpu["pci_address"], "nic": nic["name"], "relation": relation,
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
    facts["ready"], facts["reasons"], facts["warnings"] = readiness(facts, tree)
    return facts


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
    """One change: a command (argv list) or a file write/removal, with its undo."""

    def __init__(self, kind, target, argv=None, undo_argv=None, path=None, content=None, old_content=None):
        self.kind = kind
        self.target = target
        self.argv = argv
        self.undo_argv = undo_argv
        self.path = path
        self.content = content
        self.old_content = old_content
        self.done = False

    def describe(self):
        if self.argv:
            return " ".join(self.argv)
        if self.kind == "write_file":
            return "write %s" % self.path
        return "remove %s" % self.path

    def as_dict(self):
        return {"action": self.kind, "target": self.target, "command": self.describe(), "done": self.done}


def modules_load_content(module):
    return "%s%s\n" % (MODULES_LOAD_HEADER, module)


class PlanError(Exception):
    """The requested state cannot be reached here (told before touching anything)."""


def plan(facts, peermem, persist, acs, current_file):
    """Ordered :class:`Action` list that brings the host to the requested state.

    ``current_file`` is the content of the modules-load.d file (None if absent).
    Commands are argv lists with bare tool names; the runner resolves them.
    """
    actions = []
    pm = facts["peermem"]
    gpus_ok = bool(facts["gpus"]) and facts["driver"]["loaded"]

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
                actions.append(Action("unload_module", name, argv=["modprobe", "-r", name], undo_argv=["modprobe", name]))
    elif wanted and gpus_ok and not pm[wanted]:
        other = [n for n in PEERMEM_MODULES if n != wanted and pm[n]]
        for name in other:
            actions.append(Action("unload_module", name, argv=["modprobe", "-r", name], undo_argv=["modprobe", name]))
        actions.append(Action("load_module", wanted, argv=["modprobe", wanted], undo_argv=["modprobe", "-r", wanted]))

    if persist and decided:
        if wanted:
            content = modules_load_content(wanted)
            if current_file != content:
                actions.append(Action("write_file", MODULES_LOAD_FILE, path=MODULES_LOAD_FILE,
                                      content=content, old_content=current_file))
        elif current_file is not None:
            actions.append(Action("remove_file", MODULES_LOAD_FILE, path=MODULES_LOAD_FILE, old_content=current_file))

    if acs == "disable":
        for entry in facts["acs"]["bridges"]:
            if entry["state"] == "enabled":
                actions.append(Action(
                    "acs_disable", entry["pci_address"],
                    argv=["setpci", "-s", entry["pci_address"], SETPCI_ACS_CLEAR],
                    undo_argv=["setpci", "-s", entry["pci_address"], "ECAP_ACS+0x6.w=%s" % entry["control"][2:]],
                ))
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
        elif action.kind == "acs_disable":
            old = int(after["acs_control"][action.target], 16)
            after["acs_control"][action.target] = "0x%04x" % (old & ~ACS_P2P_REDIRECT)
    return after


def read_text_file(path):
    try:
        with open(path, "r") as handle:
            return handle.read()
    except (IOError, OSError):
        return None


class ChangeRunner(object):
    """Runs a plan through an AnsibleModule; undoes what it did when a step fails."""

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
        rc, out, err = self.module.run_command(self._argv(argv))
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
        elif action.kind == "write_file":
            self._write(action.path, action.content)
        elif action.kind == "remove_file":
            os.unlink(action.path)

    def _undo(self, action):
        if action.undo_argv:
            self._command(action.undo_argv)
        elif action.old_content is None:
            if os.path.exists(action.path):
                os.unlink(action.path)
        else:
            self._write(action.path, action.old_content)

    def run(self, actions):
        """Apply every action; on failure undo the done ones and raise with the story.

        Every tool is looked up first, so a missing one fails before any change.
        """
        for action in actions:
            for argv in (action.argv, action.undo_argv):
                if argv:
                    self._bin(argv[0])
        for index, action in enumerate(actions):
            try:
                self._do(action)
                action.done = True
            except Exception as exc:  # pylint: disable=broad-except
                restored, left = [], []
                for done in reversed(actions[:index]):
                    try:
                        self._undo(done)
                        done.done = False
                        restored.append(done.describe())
                    except Exception as undo_exc:  # pylint: disable=broad-except
                        left.append("%s (undo failed: %s)" % (done.describe(), undo_exc))
                raise ChangeFailed(action, exc, restored, left)


class ChangeFailed(Exception):
    def __init__(self, action, cause, restored, left):
        self.action = action
        self.restored = restored
        self.left = left
        message = "%s: %s" % (action.describe(), cause)
        if restored:
            message += "; restored: %s" % ", ".join(restored)
        if left:
            message += "; left changed: %s" % ", ".join(left)
        super(ChangeFailed, self).__init__(message)
