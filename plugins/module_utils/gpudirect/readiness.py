# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""GPUDirect RDMA readiness: from the probes' facts, whether GPU memory can be registered with an RDMA NIC
here, every reason it cannot (and warnings that do not block it)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import OTHER_ROOT_COMPLEX
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import acs_words

IOMMU_TRANSLATING = ("DMA", "DMA-FQ")


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
