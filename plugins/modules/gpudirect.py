#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: gpudirect
short_description: GPUDirect RDMA readiness, enablement and the GPU-to-NIC PCIe topology
version_added: 0.1.0
description:
  - Finds the NVIDIA GPUs (PCI vendor C(0x10de), class C(0x03xx)) and the RDMA NICs (entries of
    C(class/infiniband) that sit on a PCI function; soft devices such as rxe and siw do not count) in sysfs,
    and tells whether GPUDirect RDMA can work between them, with every reason in plain words when not.
  - "It reads: the NVIDIA driver version and flavour (C(/proc/driver/nvidia/version): C(Open Kernel Module) is the
    open flavour; C(/sys/module/nvidia/version)); whether DMA-BUF can register GPU memory with the NIC (rule below);
    the peer-memory modules (C(nvidia_peermem), the legacy C(nv_peer_mem), the clients registered under
    C(/sys/kernel/mm/memory_peers), and whether C(ib_core) exports the MLNX_OFED/DOCA peer-memory API,
    C(ib_register_peer_memory_client) in C(/proc/kallsyms)); the IOMMU mode (C(/sys/kernel/iommu_groups/*/type),
    the kernel command line); and the PCIe ACS state of every bridge between a GPU and a NIC that share a PCIe
    switch, read from the ACS extended capability (ID C(0x000d)) of the bridge's configuration space."
  - "Reading the configuration space beyond its first 64 bytes needs root (CAP_SYS_ADMIN): run as a normal user, the
    module reports such a bridge's ACS state as C(unreadable) with that reason instead of guessing."
  - "The GPU-to-NIC relation matrix uses the C(nvidia-smi topo -m) legend and is computed from the sysfs PCI paths
    the way NCCL's topology detection walks them (each hop up rewinds two path components, so the upstream and
    downstream port of one PCIe switch count as one switch): C(PIX) at most one PCIe switch between the two,
    C(PXB) several switches but no host bridge, C(PHB) through a PCIe host bridge, C(NODE) between host bridges of
    one NUMA node, C(SYS) across NUMA nodes (a NUMA node of -1, as single-socket machines report, counts as the same
    node)."
  - "DMA-BUF rule: DMA-BUF GPUDirect RDMA is possible when the NVIDIA driver is the open kernel module flavour at
    version 515.43.04 or later (the first with dma-buf export, NCCL's requirements in
    U(https://github.com/NVIDIA/nccl/pull/682): CUDA 11.7+, driver 515.43.04+ with the open kernel modules, Turing
    or later), the Linux kernel is 5.12 or later (RDMA import of dma-buf, C(ib_umem_dmabuf), merged in 5.12, see
    U(https://github.com/aws/aws-ofi-nccl/pull/618)), and the installed libibverbs has ABI 1.12 or later (C(ibv_reg_dmabuf_mr),
    rdma-core v34; the version is read from the library name, for example C(libibverbs.so.1.14.44.0) is ABI 1.14 of
    rdma-core 44, under the filesystem root that holds O(sysfs_path)). The CUDA version of the applications cannot be
    seen from the host and is not checked. NVIDIA recommends DMA-BUF over C(nvidia_peermem) where it is supported
    (U(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-rdma.html))."
  - "Peer-memory module: C(nvidia_peermem) ships with the NVIDIA driver since R470
    (U(https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/1.8/gpu-operator-rdma.html)); older drivers use
    the separate C(nv_peer_mem) (U(https://github.com/Mellanox/nv_peer_memory)). Both need the peer-memory API of
    the MLNX_OFED/DOCA C(ib_core); on an inbox RDMA stack C(nvidia_peermem) refuses to load (its init returns
    -EINVAL), so the module neither loads it nor persists it there."
  - "Readiness: C(ready=true) when GPUs and PCI RDMA NICs exist, the nvidia driver is loaded and bound to every GPU,
    GPU memory can be registered (DMA-BUF possible, or a peer-memory module loaded and registered), no GPU or NIC sits
    behind a translating IOMMU (NVIDIA's GPUDirect RDMA guide asks for the IOMMU off or in passthrough,
    U(https://docs.nvidia.com/cuda/gpudirect-rdma/)), no bridge between a GPU and a NIC on a shared switch (C(PIX),
    C(PXB)) has ACS request redirect, completion redirect or egress control on (these send peer-to-peer traffic up to
    the root complex; U(https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)), and every
    GPU has an RDMA NIC under its own PCIe root complex (C(NODE) or C(SYS) only is a reason, C(PHB) a warning).
    A host without any GPU is not an error: it returns C(ready=false) with that reason."
  - "Known traps are named in the reasons: a peer-memory module loaded but not registered, a peer-memory module
    loaded while GPUDirect RDMA is still unusable for other reasons, and the legacy C(nv_peer_mem) loaded on a driver
    that ships C(nvidia_peermem)."
  - "Changes, only outside check mode: load (C(modprobe)) or unload (C(modprobe -r)) the peer-memory module, write or
    remove C(/etc/modules-load.d/rdma-fabric-gpudirect.conf) (mode 0644, atomically) with O(persist), and clear
    the ACS redirect bits on the bridges found (request redirect, completion redirect and egress control, the bits
    the kernel's own C(pci_disable_acs_redir) clears; other bits are kept). The ACS control word is written through
    the bridge's sysfs C(config) file, as C(setpci) does, after checking that the file still belongs to the planned
    bridge and holds the value read, and read back after."
  - "A failure part-way undoes what was already done and says what was left; so does a command that cannot be
    started (gone, not executable) and a stop signal (SIGTERM, SIGINT, SIGHUP: an Ansible timeout, a cancelled
    job). A signal during the undo waits for it to finish. Only SIGKILL leaves the changes unreported."
  - "Reads and writes go to the same host: O(sysfs_path) and O(procfs_path) redirect the reads, so when they are not
    C(<host_root>/sys) and C(<host_root>/proc) the module only reports (check mode or nothing to change) and refuses to
    change anything, naming both options. In a container with the host's root mounted at, for example, C(/host), set
    O(host_root=/host): then reads come from C(/host/sys), C(/host/proc) and libibverbs under C(/host), and writes go
    there too (C(modprobe -d /host), the modules-load.d file under C(/host/etc), ACS words through C(/host/sys))."
  - "ACS settings are lost at reboot: the C(rdma.fabric.gpudirect) role keeps them with a boot unit that finds each
    GPU-NIC pair again by identity (RV(ansible_facts.gpudirect.acs.boot_config)), never by a bus address fixed now."
  - "A read error is reported as unknown with a warning naming the file (never a traceback); an RDMA device that
    disappears while read is left out with a warning."
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.action_group.sysfs_group
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
    details: In check mode nothing is loaded, written or set; the facts describe the host as it is and C(actions) lists what would run.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
    details: Before and after of the loaded peer-memory modules, the modules-load.d file and the ACS control words.
options:
  peermem:
    description:
      - C(auto) loads the peer-memory module only where DMA-BUF cannot serve (and the host has GPUs and a loaded
        NVIDIA driver); where DMA-BUF serves it loads nothing and removes the module's own modules-load.d file.
      - C(present) loads it where the host has GPUs and a loaded NVIDIA driver; it fails, before changing anything,
        where C(ib_core) has no peer-memory API.
      - C(absent) unloads C(nvidia_peermem) and C(nv_peer_mem) and removes the modules-load.d file.
      - C(nv_peer_mem) is used instead of C(nvidia_peermem) with NVIDIA drivers older than R470; a loaded
        C(nv_peer_mem) is unloaded before C(nvidia_peermem) is loaded.
    type: str
    choices: [auto, present, absent]
    default: auto
  persist:
    description:
      - Also make the peer-memory choice survive a reboot through C(/etc/modules-load.d/rdma-fabric-gpudirect.conf)
        (written when the module should load, removed when it should not).
    type: bool
    default: true
  acs:
    description:
      - C(audit) reads the ACS state of the bridges between GPUs and NICs on a shared PCIe switch and reports it.
      - C(disable) also clears the redirect bits where they are set (runtime only). With O(acs_saved), the
        control words are kept in that file first, once (an existing file is left as it is).
      - C(enable) undoes C(disable) - each of those bridges gets the redirect bits kept in O(acs_saved) back
        (where the file names the bridge with the same vendor:device), else the ones the kernel sets at boot
        (request and completion redirect, where the bridge has them); the file is then removed. Other bits are
        kept.
      - C(ignore) reads no configuration space and gives no ACS reasons.
    type: str
    choices: [audit, disable, enable, ignore]
    default: audit
  acs_saved:
    description:
      - The file that keeps the ACS control words before the first clear (see O(acs)), on the host (under
        O(host_root)). Unset, nothing is kept and C(enable) restores the kernel's boot bits.
      - The C(rdma.fabric.gpudirect) role uses C(/var/lib/rdma-fabric/gpudirect-acs-before.json).
    type: path
  host_root:
    description:
      - Where the host's root file system is, as this process sees it - V(/) on the host; in a container that
        mounts the host's root, that mount point (container mode, see the description). Reads and writes both go
        under it.
    type: path
    default: /
  sysfs_path:
    description:
      - The directory that plays C(/sys); default C(<host_root>/sys).
      - Any other directory (a fixture tree, a copy) makes the module read-only - it refuses to change anything.
      - With another value, libibverbs is looked for under the folder that holds it.
    type: path
  procfs_path:
    description:
      - The directory that plays C(/proc); default C(<host_root>/proc). Any other directory makes the module read-only.
    type: path
requirements:
  - C(modprobe) (kmod) when a module has to be loaded or unloaded.
  - Root for changes and for reading ACS state.
notes:
  - The topology and ACS logic is tested on derived PCI trees (see tests/unit/fixtures/pci) and the no-GPU path on
    the project's Debian 12 VM lab. The facts, check mode and the removal ran on one real NVIDIA H200 host (open
    driver 580, DMA-BUF, no RDMA NIC, no ACS bridge; tests/unit/fixtures/device_h200); never yet on a host with a
    GPU and an RDMA NIC under one PCIe switch.
seealso:
  - name: nvidia-smi topo -m and NCCL topology
    description: NCCL troubleshooting, PCI Access Control Services.
    link: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html
  - name: GPUDirect RDMA
    description: NVIDIA's guide, supported systems and nvidia-peermem.
    link: https://docs.nvidia.com/cuda/gpudirect-rdma/
"""

EXAMPLES = r"""
- name: Audit GPUDirect RDMA readiness (changes nothing)
  rdma.fabric.gpudirect:
    peermem: auto
    persist: false
    acs: audit
  check_mode: true
  register: gdr

- name: Show why a host is not ready
  ansible.builtin.debug:
    var: ansible_facts.gpudirect.reasons
  when: not ansible_facts.gpudirect.ready

- name: Make GPUDirect RDMA ready (peer memory where DMA-BUF cannot serve, ACS redirect off)
  rdma.fabric.gpudirect:
    peermem: auto
    persist: true
    acs: disable

- name: Nearest NIC of every GPU, for NCCL_IB_HCA or a device plugin
  ansible.builtin.debug:
    msg: "{{ ansible_facts.gpudirect.topology.nearest_nic }}"

- name: From a container that mounts the host's root at /host (reads and writes both under /host)
  rdma.fabric.gpudirect:
    host_root: /host
    acs: disable

- name: Report on a copy of a host's sysfs (read-only; changes are refused)
  rdma.fabric.gpudirect:
    sysfs_path: /srv/captures/node17/sys
    procfs_path: /srv/captures/node17/proc
    acs: audit
  check_mode: true
"""

RETURN = r"""
actions:
  description: The changes made (or, in check mode, that would be made), in order.
  returned: always
  type: list
  elements: dict
  contains:
    action:
      description:
        - C(load_module), C(unload_module), C(write_file), C(remove_file), C(acs_disable), C(acs_enable),
          C(save_file) (the ACS words kept before the first clear) or C(remove_saved) (that file, once restored).
      type: str
      sample: acs_disable
    target:
      description: The module name, file path or bridge PCI address.
      type: str
      sample: "0000:16:00.0"
    command:
      description: The command line run (an argument list joined for display), C(write PATH)/C(remove PATH), or the ACS word written.
      type: str
      sample: write 0x0011 to the ACS control register of 0000:16:00.0 (config offset 0x14e, was 0x001d)
    done:
      description: Whether it was carried out (false in check mode and after a rollback).
      type: bool
      sample: true
interrupted:
  description: Whether a stop signal (SIGTERM, SIGINT, SIGHUP) ended the changes (they were undone as far as C(msg) says).
  returned: when a change failed
  type: bool
  sample: false
ansible_facts:
  description: Facts under C(gpudirect).
  returned: always
  type: complex
  contains:
    gpudirect:
      description: GPUDirect RDMA state of the host.
      returned: always
      type: dict
      contains:
        schema_version:
          description: Version of this layout.
          type: int
          sample: 1
        gpus:
          description: NVIDIA GPUs by PCI address.
          type: list
          elements: dict
          contains:
            pci_address:
              description: PCI address.
              type: str
              sample: "0000:19:00.0"
            device_id:
              description: PCI device id.
              type: str
              sample: "0x2330"
            class:
              description: PCI class code (C(0x0300xx) VGA, C(0x0302xx) 3D controller).
              type: str
              sample: "0x030200"
            driver:
              description: Bound kernel driver (C(nvidia), C(vfio-pci), ...); null when none.
              type: str
              sample: nvidia
            numa_node:
              description: NUMA node (its own, else its root port's); null when unknown.
              type: int
              sample: 0
            iommu_group:
              description: IOMMU group number; null without IOMMU.
              type: int
              sample: 27
            is_vf:
              description: Whether it is an SR-IOV virtual function.
              type: bool
              sample: false
            physfn:
              description: PCI address of the physical function of a VF; null otherwise.
              type: str
              sample: null
        nics:
          description: RDMA devices on PCI functions (soft devices such as rxe and siw are left out).
          type: list
          elements: dict
          contains:
            name:
              description: ibdev name.
              type: str
              sample: mlx5_0
            pci_address:
              description: PCI address of its function (an auxiliary device counts as the function below which it sits).
              type: str
              sample: "0000:1a:00.0"
            driver:
              description: Kernel driver of the PCI function.
              type: str
              sample: mlx5_core
            numa_node:
              description: NUMA node; null when unknown.
              type: int
              sample: 0
            is_vf:
              description: Whether it is an SR-IOV virtual function.
              type: bool
              sample: false
            physfn:
              description: PCI address of the physical function of a VF; null otherwise.
              type: str
              sample: null
        driver:
          description: The NVIDIA kernel driver.
          type: dict
          contains:
            loaded:
              description: Whether C(/sys/module/nvidia) or C(/proc/driver/nvidia/version) exists.
              type: bool
              sample: true
            version:
              description: Driver version; null when not loaded.
              type: str
              sample: "550.54.15"
            flavour:
              description: C(open) (open GPU kernel modules), C(proprietary), or null when not loaded.
              type: str
              sample: open
            ships_nvidia_peermem:
              description: Whether this driver version ships C(nvidia_peermem) (R470 and later); null when unknown.
              type: bool
              sample: true
        dmabuf:
          description: Whether DMA-BUF can register GPU memory with the NIC, and each condition.
          type: dict
          contains:
            possible:
              description: All conditions met.
              type: bool
              sample: true
            kernel_release:
              description: Running kernel release (C(/proc/sys/kernel/osrelease)).
              type: str
              sample: 6.1.0-18-amd64
            kernel_ok:
              description: Kernel 5.12 or later.
              type: bool
              sample: true
            driver_open:
              description: The NVIDIA driver is the open kernel module flavour.
              type: bool
              sample: true
            driver_ok:
              description: NVIDIA driver 515.43.04 or later.
              type: bool
              sample: true
            rdma_core_version:
              description: rdma-core release from the libibverbs library name; null when not found.
              type: str
              sample: "44"
            libibverbs:
              description: The libibverbs library file the version was read from.
              type: str
              sample: libibverbs.so.1.14.44.0
            rdma_core_ok:
              description: libibverbs ABI 1.12 or later (C(ibv_reg_dmabuf_mr), rdma-core 34).
              type: bool
              sample: true
            missing:
              description: Each unmet condition in plain words.
              type: list
              elements: str
              sample: ["Linux 5.10.0-28-amd64 is older than 5.12 (no ib_umem_dmabuf)"]
        peermem:
          description: Peer-memory modules.
          type: dict
          contains:
            nvidia_peermem:
              description: Whether C(nvidia_peermem) is loaded.
              type: bool
              sample: false
            nv_peer_mem:
              description: Whether the legacy C(nv_peer_mem) is loaded.
              type: bool
              sample: false
            loaded:
              description: The loaded ones, by name.
              type: list
              elements: str
              sample: []
            memory_peers:
              description: Clients registered under C(/sys/kernel/mm/memory_peers) (C(nv_mem) for NVIDIA); null when the folder does not exist.
              type: list
              elements: str
              sample: null
            module:
              description: The module that serves this driver (C(nvidia_peermem), or C(nv_peer_mem) before R470).
              type: str
              sample: nvidia_peermem
            needed:
              description: GPUs exist and DMA-BUF cannot serve.
              type: bool
              sample: false
            peer_memory_api:
              description:
                - Whether C(ib_core) exports C(ib_register_peer_memory_client) (MLNX_OFED/DOCA); null when unknown (no GPU or no PCI RDMA NIC, C(ib_core) not
                  loaded, C(/proc/kallsyms) unreadable).
              type: bool
              sample: true
        iommu:
          description: IOMMU state.
          type: dict
          contains:
            mode:
              description: C(off) (no IOMMU groups), C(passthrough), C(translated) (a group of type C(DMA) or C(DMA-FQ)) or C(unknown).
              type: str
              sample: passthrough
            group_types:
              description: Number of IOMMU groups by C(type).
              type: dict
              sample: {"identity": 112}
            cmdline:
              description: IOMMU settings on the kernel command line (C(intel_iommu), C(amd_iommu), C(iommu), C(iommu.passthrough), C(iommu.strict)).
              type: dict
              sample: {"iommu": "pt"}
            devices:
              description: IOMMU group and its type for every GPU and NIC, by PCI address.
              type: dict
              sample: {"0000:19:00.0": {"group": 27, "type": "identity"}}
        acs:
          description: PCIe ACS on the paths between GPUs and NICs that share a PCIe switch (C(PIX), C(PXB)).
          type: dict
          contains:
            mode:
              description: The O(acs) option.
              type: str
              sample: audit
            pairs:
              description: GPU-NIC pairs on a shared switch and the bridges between them (from the GPU up, then down to the NIC).
              type: list
              elements: dict
              sample: [{"gpu": "0000:19:00.0", "nic": "mlx5_0", "nic_address": "0000:1a:00.0", "relation": "PIX",
                        "bridges": ["0000:18:00.0", "0000:17:00.0", "0000:18:01.0"]}]
            boot_config:
              description:
                - The record the role's boot unit reads (C(rdma-fabric gpudirect-acs)) - each pair whose path has an ACS
                  capability, its GPU and NIC by identity (C(vendor_id), C(device_id), C(subsystem_vendor_id),
                  C(subsystem_device_id), C(serial) - the PCIe Device Serial Number, C(slot) - the physical slot) and
                  the path by the vendor:device of its bridges. Empty C(pairs) with O(acs=ignore).
              type: dict
              sample: {"schema": 1, "pairs": [{"gpu": {"vendor_id": "0x10de", "device_id": "0x2330", "subsystem_vendor_id": "0x10de",
                       "subsystem_device_id": "0x16c1", "serial": "48-2d-b0-ff-fe-1a-2b-3c", "slot": null},
                       "nic": {"vendor_id": "0x15b3", "device_id": "0x101d", "subsystem_vendor_id": "0x15b3",
                       "subsystem_device_id": "0x0016", "serial": "b8-59-9f-03-00-d3-6f-12", "slot": null},
                       "nic_name": "mlx5_0", "bridges": ["0x1000:0xc030", "0x1000:0xc030"]}]}
            boot_problems:
              description: Pairs left out of C(boot_config) because an endpoint's identity does not name exactly one device.
              type: list
              elements: str
              sample: []
            bridges:
              description: ACS state of each of those bridges (empty with O(acs=ignore)).
              type: list
              elements: dict
              contains:
                pci_address:
                  description: The bridge.
                  type: str
                  sample: "0000:18:00.0"
                state:
                  description:
                    - C(enabled) (request redirect, completion redirect or egress control on), C(disabled), C(absent) (no ACS capability or no extended
                      configuration space) or C(unreadable).
                  type: str
                  sample: enabled
                offset:
                  description: Offset of the ACS capability in the configuration space; null unless found.
                  type: str
                  sample: "0x148"
                capability:
                  description: ACS capability register; null unless found.
                  type: str
                  sample: "0x005f"
                control:
                  description: ACS control register; null unless found.
                  type: str
                  sample: "0x001d"
                flags:
                  description:
                    - The control bits by name (source_validation, translation_blocking, request_redirect, completion_redirect, upstream_forwarding,
                      egress_control, direct_translated_p2p); null unless found.
                  type: dict
                  sample: {"request_redirect": true, "completion_redirect": true}
                detail:
                  description: Why the state is C(absent) or C(unreadable); null otherwise.
                  type: str
                  sample: null
        topology:
          description: The C(nvidia-smi topo -m) view.
          type: dict
          contains:
            matrix:
              description: GPU PCI address -> {NIC ibdev name -> relation (PIX, PXB, PHB, NODE, SYS)}.
              type: dict
              sample: {"0000:19:00.0": {"mlx5_0": "PIX", "mlx5_1": "SYS"}}
            gpu_matrix:
              description: GPU PCI address -> {other GPU PCI address -> relation}.
              type: dict
              sample: {"0000:19:00.0": {"0000:3b:00.0": "NODE"}}
            nic_matrix:
              description:
                - Network PCI function (any NIC, PCI class 0x02) -> {every other one -> relation}, by the same rule as
                  RV(ansible_facts.gpudirect.topology.matrix).
              type: dict
              sample: {"0000:1a:00.0": {"0000:1a:00.1": "PIX", "0000:af:00.0": "SYS"}}
            nearest_nic:
              description:
                - GPU PCI address -> the nearest NIC (C(name), C(pci_address), C(relation)); a PF before its VFs at the same distance; null without NICs.
              type: dict
              sample: {"0000:19:00.0": {"name": "mlx5_0", "pci_address": "0000:1a:00.0", "relation": "PIX"}}
        ready:
          description: Whether GPUDirect RDMA can work on this host (see the description for the rule).
          type: bool
          sample: false
        reasons:
          description: Why not, in plain words (empty when ready).
          type: list
          elements: str
          sample: ["ACS request-redirect is on at 0000:16:00.0 between GPU 0000:19:00.0 and mlx5_0"]
        warnings:
          description: Findings that do not block GPUDirect RDMA (a PHB-only NIC, a needless peer-memory module, an unknown IOMMU mode).
          type: list
          elements: str
          sample: []
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import plan as gd_plan
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import runner as gd_runner
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError, check_path
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import PciTopology
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree


def main():
    module = AnsibleModule(
        argument_spec=dict(
            peermem=dict(type="str", default="auto", choices=["auto", "present", "absent"]),
            persist=dict(type="bool", default=True),
            acs=dict(type="str", default="audit", choices=["audit", "disable", "enable", "ignore"]),
            acs_saved=dict(type="path"),
            host_root=dict(type="path", default="/"),
            sysfs_path=dict(SYSFS_PATH, default=None),
            procfs_path=dict(type="path"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    try:
        roots = gd_plan.resolve_roots(p["host_root"], p["sysfs_path"], p["procfs_path"])
    except gd_plan.PlanError as exc:
        module.fail_json(msg=str(exc))

    tree = SysfsTree(roots["sysfs"], roots["procfs"])
    libroot = roots["host_root"] if roots["host_reads"] else None

    def read():
        topo = PciTopology(tree)
        return topo, gd_probes.gather(tree, p["acs"], root=libroot, topo=topo)

    def done(**result):
        for warning in tree.all_warnings():
            module.warn(warning)
        if result.get("failed"):
            del result["failed"]
            module.fail_json(**result)
        module.exit_json(**result)

    topo, facts = read()
    load_file = gd_plan.rooted(roots["host_root"], gd_plan.MODULES_LOAD_FILE)
    current_file = gd_plan.read_text_file(load_file, tree)
    try:
        if p["acs_saved"] is not None:
            check_path("acs_saved", p["acs_saved"])
    except PathError as exc:
        module.fail_json(msg=str(exc))
    saved_file = gd_plan.rooted(roots["host_root"], p["acs_saved"]) if p["acs_saved"] else None
    saved_content = gd_plan.read_text_file(saved_file, tree) if saved_file and p["acs"] in ("disable", "enable") else None
    try:
        actions = gd_plan.plan(facts, p["peermem"], p["persist"], p["acs"], current_file, host_root=roots["host_root"],
                               modules_load_file=load_file, topo=topo, saved_file=saved_file, saved_content=saved_content)
    except gd_plan.PlanError as exc:
        done(failed=True, msg=str(exc), actions=[], ansible_facts={"gpudirect": facts})

    before = gd_plan.state_view(facts, current_file)
    after = gd_plan.predicted_view(before, actions)
    if actions and not module.check_mode:
        if not roots["host_reads"]:
            done(failed=True, actions=[a.as_dict() for a in actions], ansible_facts={"gpudirect": facts},
                 msg="sysfs_path=%s and procfs_path=%s are not the sysfs and procfs of host_root=%s, so what was read "
                     "is not the host the changes would hit (modprobe, ACS words, %s); nothing was changed. Leave "
                     "sysfs_path and procfs_path unset (in a container: set host_root to where the host's root is "
                     "mounted), or run in check mode to only report."
                     % (roots["sysfs"], roots["procfs"], roots["host_root"], load_file))
        try:
            gd_runner.ChangeRunner(module).run(actions)
        except gd_runner.ChangeFailed as exc:
            done(failed=True, msg="GPUDirect change failed: %s" % exc, actions=[a.as_dict() for a in actions],
                 interrupted=exc.interrupted, ansible_facts={"gpudirect": read()[1]})
        topo, facts = read()
        after = gd_plan.state_view(facts, gd_plan.read_text_file(load_file, tree))

    result = dict(changed=bool(actions), actions=[a.as_dict() for a in actions], ansible_facts={"gpudirect": facts})
    if module._diff:
        result["diff"] = {"before": before, "after": after}
    done(**result)


if __name__ == "__main__":
    main()
