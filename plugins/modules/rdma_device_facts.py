#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: rdma_device_facts
short_description: Structured RDMA device, port, GID and driver-stack facts from sysfs
version_added: 0.1.0
description:
  - Reads the host's RDMA devices from sysfs and returns them as C(ansible_facts.rdma) (schema_version 1),
    the single source of truth the other roles of this collection consume.
  - Reads files only; it runs no command (no C(ibv_devinfo), C(rdma), C(show_gids) or C(ofed_info) call).
  - Every device under C(class/infiniband) is reported, whether that entry is a symlink into C(devices/...)
    (live hosts) or a real folder (some captured trees). This covers PCI HCAs (mlx4, mlx5, hfi1, ...),
    InfiniBand and RoCE ports, SR-IOV physical and virtual functions, and the soft devices rxe
    (Soft-RoCE, driver C(rdma_rxe)) and siw (soft iWARP, driver C(siw)).
  - A host without RDMA devices gives an empty C(devices) list, not an error. An attribute the kernel
    refuses to read (EINVAL, ENOENT, EACCES, EOPNOTSUPP, EIO) or that is malformed is reported as null.
    Any other read error (ETIMEDOUT, EBUSY, EAGAIN, ...) is reported as null too, with a warning that names
    the file and the error; no read error ends the module.
  - A device that disappears while it is read (driver unload, hot unplug, a deleted rxe link) is left out of
    C(devices), with a warning, instead of being reported with null attributes.
  - "Port netdev: rxe's C(parent) file; for PCI devices the netdev in C(device/net/) whose C(dev_port)
    (older kernels: C(dev_id)) is the port number minus one (this maps IPoIB interfaces to their
    InfiniBand port too); else the netdev of the port's lowest GID. A VLAN, macvlan or IPoIB child
    netdev is never taken as the port's netdev, but appears in C(netdevs) when a GID uses it."
  - "GIDs: empty (all-zero) slots are skipped, and so are entries whose C(gid_attrs/types) read fails,
    and RoCE entries whose C(gid_attrs/ndevs) read fails (the kernel answers EINVAL for a slot that is
    empty or being removed). InfiniBand GIDs keep a null netdev (the kernel has none for them).
    The kernel's C(IB/RoCE v1) type reads as C(RoCE v1) on an Ethernet port, C(IB) on an InfiniBand
    port and C(iWARP) on an iWARP device."
  - "Driver stack (C(stack.flavor)), first rule that matches:
    C(doca) when a DOCA-OFED marker exists (C(opt/mellanox/doca), C(usr/share/doc/doca-ofed),
    C(var/lib/dpkg/info/doca-ofed.list) under the host root, or an C(ofed_info) script whose version
    line reads C(OFED-internal-<version>));
    C(mlnx_ofed) when C(usr/bin/ofed_info) exists (C(MLNX_OFED_LINUX-<version>)) or the
    C(mlx_compat) module is loaded;
    C(inbox) when the RDMA core (C(ib_core)) is loaded or any RDMA device exists;
    C(none) otherwise. C(stack.version) is the numeric version from C(ofed_info), else
    C(/sys/module/mlx_compat/version), else null (always null for C(inbox) and C(none)).
    The host root is the parent folder of O(sysfs_path)."
  - The rdma_cm configfs values (C(kernel/config/rdma_cm/<device>/ports/<n>/)) are reported where that
    folder exists; the module never creates it.
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.sysfs
  - ansible.builtin.action_common_attributes
  - ansible.builtin.action_common_attributes.facts
  - rdma.fabric.action_group.sysfs_group
attributes:
  check_mode:
    support: full
    details: The module only reads; check mode returns the same facts.
  diff_mode:
    support: full
    details: The module changes nothing; in diff mode it returns an empty before/after diff.
  facts:
    support: full
  platform:
    platforms: posix
    details: Linux sysfs.
options:
  devices:
    description:
      - Report only RDMA devices whose name matches one of these shell-style globs (C(fnmatch), case-sensitive),
        for example V(mlx5_*) or V(rxe0).
      - Default is every device. C(modules) and C(stack) always describe the whole host.
    type: list
    elements: str
  gather_subset:
    description:
      - What to gather beyond the base facts.
      - V(min) is the base facts only (the default).
      - V(counters) adds each port's C(counters) (standard port counters) and C(hw_counters)
        (driver-specific counters), read at the moment the module runs.
      - V(all) is everything, currently the same as V(counters).
    type: list
    elements: str
    choices: [all, min, counters]
    default: [min]
notes:
  - Reading a GID table costs one file read per slot (mlx5 has 255 slots per port, rxe 1024); the
    module reads each file once and opens files relative to their folder.
  - On hosts with many RDMA devices (SR-IOV VFs) and several CPUs, shares of the devices are read by forked
    copies of the module process at once (one per CPU and per 32 devices, at most 8), each sending its devices
    back through a pipe; a copy that fails has its share read again by the module. Nothing else is run.
  - "C(roce_v2_ipv4_gid_index) is the lowest GID index whose type is RoCE v2, whose address is IPv4 and
    whose netdev is the port's own netdev: the value C(NCCL_IB_GID_INDEX) needs."
seealso:
  - name: Linux InfiniBand sysfs ABI
    description: The files this module reads.
    link: https://www.kernel.org/doc/Documentation/ABI/stable/sysfs-class-infiniband
"""

EXAMPLES = r"""
- name: Gather RDMA facts
  rdma.fabric.rdma_device_facts:

- name: Show each RoCE port's netdev and the GID index NCCL needs
  ansible.builtin.debug:
    msg: "{{ item.0.name }}/{{ item.1.number }} {{ item.1.netdev }} gid {{ item.1.roce_v2_ipv4_gid_index }}"
  loop: "{{ ansible_facts.rdma.devices | subelements('ports') }}"
  when: item.1.link_layer == 'Ethernet'

- name: Only the mlx5 devices, with port counters
  rdma.fabric.rdma_device_facts:
    devices: ['mlx5_*']
    gather_subset: [counters]

- name: In a container that mounts the host's root at /host
  rdma.fabric.rdma_device_facts:
    sysfs_path: /host/sys
"""

RETURN = r"""
diff:
  description: Empty before/after (the module changes nothing).
  returned: in diff mode
  type: dict
  sample: {"before": {}, "after": {}}
ansible_facts:
  description: Facts added to the host.
  returned: always
  type: dict
  contains:
    rdma:
      description: RDMA facts, schema_version 1.
      returned: always
      type: dict
      contains:
        schema_version:
          description: Version of this layout; changes only when a key changes meaning or goes away.
          returned: always
          type: int
          sample: 1
        devices:
          description: RDMA devices (those matching O(devices)), sorted by name (mlx5_2 before mlx5_10).
          returned: always
          type: list
          elements: dict
          contains:
            name:
              description: The RDMA (ibdev) name.
              type: str
              returned: always
              sample: mlx5_0
            driver:
              description:
                - Kernel driver; the basename of C(device/driver) for PCI devices, C(rdma_rxe) for rxe,
                  C(siw) for siw; null when unknown.
              type: str
              returned: always
              sample: mlx5_core
            soft:
              description: True for software devices (rxe, siw) that have no PCI function.
              type: bool
              returned: always
              sample: false
            node_type:
              description: Text after C(N:) in C(node_type) (C(CA), C(RNIC), C(switch), ...); null when absent.
              type: str
              returned: always
              sample: CA
            node_guid:
              description: Node GUID as the kernel prints it; null when absent.
              type: str
              returned: always
              sample: "b859:9f03:00d3:6f12"
            sys_image_guid:
              description: System image GUID; null when absent.
              type: str
              returned: always
              sample: "b859:9f03:00d3:6f12"
            fw_ver:
              description: Firmware version; null when absent or empty (rxe, siw).
              type: str
              returned: always
              sample: "16.35.2000"
            board_id:
              description: Board (PSID) identifier; null when absent.
              type: str
              returned: always
              sample: MT_0000000010
            hca_type:
              description: HCA type; null when absent.
              type: str
              returned: always
              sample: MT4119
            pci_address:
              description:
                - PCI address of the device's PCI function (for an auxiliary device such as an mlx5
                  sub-function, the PCI function it sits on); null for soft devices.
              type: str
              returned: always
              sample: "0000:3b:00.0"
            vendor_id:
              description: PCI vendor ID of that function; null for soft devices.
              type: str
              returned: always
              sample: "0x15b3"
            device_id:
              description: PCI device ID of that function; null for soft devices.
              type: str
              returned: always
              sample: "0x1017"
            numa_node:
              description: NUMA node of the PCI function; null when absent or -1.
              type: int
              returned: always
              sample: 0
            parent_netdev:
              description: For rxe, the netdev it runs on (its C(parent) file); null otherwise.
              type: str
              returned: always
              sample: null
            sriov:
              description: SR-IOV role; null when the PCI function is neither SR-IOV capable nor a VF.
              type: dict
              returned: always
              contains:
                totalvfs:
                  description: C(sriov_totalvfs) of a PF; null on a VF.
                  type: int
                  returned: always
                  sample: 8
                numvfs:
                  description: C(sriov_numvfs) of a PF (VFs now enabled); null on a VF.
                  type: int
                  returned: always
                  sample: 0
                is_vf:
                  description: True for a virtual function.
                  type: bool
                  returned: always
                  sample: false
                physfn:
                  description: PCI address of a VF's physical function; null on a PF.
                  type: str
                  returned: always
                  sample: null
            ports:
              description: The device's ports, by number.
              type: list
              elements: dict
              returned: always
              contains:
                number:
                  description: Port number (from 1).
                  type: int
                  returned: always
                  sample: 1
                state:
                  description: Logical port state text (C(DOWN), C(INIT), C(ARMED), C(ACTIVE), C(ACTIVE_DEFER)); null when unreadable.
                  type: str
                  returned: always
                  sample: ACTIVE
                state_id:
                  description: Numeric logical state (4 = ACTIVE).
                  type: int
                  returned: always
                  sample: 4
                phys_state:
                  description: Physical state text (C(Sleep), C(Polling), C(Disabled), C(LinkUp), ...).
                  type: str
                  returned: always
                  sample: LinkUp
                phys_state_id:
                  description: Numeric physical state (5 = LinkUp).
                  type: int
                  returned: always
                  sample: 5
                link_layer:
                  description: C(Ethernet), C(InfiniBand) or C(Unknown); null when unreadable.
                  type: str
                  returned: always
                  sample: Ethernet
                rate:
                  description: The kernel's rate text; null when unreadable.
                  type: str
                  returned: always
                  sample: "100 Gb/sec (4X EDR)"
                rate_gbps:
                  description: Rate in Gb/s, parsed from RV(ansible_facts.rdma.devices[].ports[].rate).
                  type: float
                  returned: always
                  sample: 100.0
                lid:
                  description: Port LID on InfiniBand ports; null on other link layers.
                  type: int
                  returned: always
                  sample: null
                sm_lid:
                  description: Subnet manager LID on InfiniBand ports; null on other link layers.
                  type: int
                  returned: always
                  sample: null
                netdev:
                  description:
                    - The port's own netdev (never a VLAN or macvlan on top of it); null if none.
                    - For InfiniBand ports, the IPoIB interface.
                  type: str
                  returned: always
                  sample: ens1f0
                mtu:
                  description: MTU of that netdev; null when there is none.
                  type: int
                  returned: always
                  sample: 9000
                gids:
                  description: Valid GID table entries by index (empty and unreadable slots skipped).
                  type: list
                  elements: dict
                  returned: always
                  contains:
                    index:
                      description: GID index (what C(NCCL_IB_GID_INDEX) and C(ib_write_bw -x) take).
                      type: int
                      returned: always
                      sample: 3
                    gid:
                      description: The GID, eight groups of four lowercase hex digits.
                      type: str
                      returned: always
                      sample: "0000:0000:0000:0000:0000:ffff:c000:020b"
                    type:
                      description: C(RoCE v2), C(RoCE v1), C(IB) or C(iWARP) (normalised, see the description).
                      type: str
                      returned: always
                      sample: RoCE v2
                    netdev:
                      description: Netdev the GID belongs to (may be a VLAN or macvlan); null for InfiniBand GIDs.
                      type: str
                      returned: always
                      sample: ens1f0
                    ip:
                      description: Dotted IPv4 for IPv4-mapped GIDs, compressed IPv6 text otherwise.
                      type: str
                      returned: always
                      sample: 192.0.2.11
                    ip_version:
                      description: 4 or 6.
                      type: int
                      returned: always
                      sample: 4
                roce_v2_ipv4_gid_index:
                  description:
                    - Lowest GID index with type RoCE v2, an IPv4 address and the port's own netdev; null if none.
                  type: int
                  returned: always
                  sample: 3
                roce:
                  description: rdma_cm configfs defaults of the port; null when its configfs folder does not exist.
                  type: dict
                  returned: always
                  contains:
                    default_mode:
                      description: C(default_roce_mode) (C(RoCE v2), C(IB/RoCE v1)).
                      type: str
                      returned: always
                      sample: RoCE v2
                    default_tos:
                      description: C(default_roce_tos) (0-255).
                      type: int
                      returned: always
                      sample: 106
                counters:
                  description:
                    - "Standard port counters (C(ports/<n>/counters/)): name -> integer, null when unreadable.
                      C(port_xmit_data) and C(port_rcv_data) count 4-octet units, as the kernel reports them."
                  type: dict
                  returned: when O(gather_subset) includes V(counters) or V(all)
                  sample: {"port_rcv_data": 987654321, "symbol_error": 0}
                hw_counters:
                  description: "Driver counters (C(ports/<n>/hw_counters/)): name -> integer, null when unreadable."
                  type: dict
                  returned: when O(gather_subset) includes V(counters) or V(all)
                  sample: {"np_cnp_sent": 0, "out_of_buffer": 0}
        netdevs:
          description:
            - Every netdev seen as a port's netdev or in a GID, mapped to the device and port it serves.
            - Port netdevs win over GID netdevs; hardware devices over soft ones.
          returned: always
          type: dict
          sample: {"ens1f0": {"device": "mlx5_0", "port": 1}, "ens1f0.100": {"device": "mlx5_0", "port": 1}}
        modules:
          description:
            - Kernel module name -> loaded (present under C(/sys/module)), for C(ib_core), C(ib_uverbs),
              C(rdma_ucm), C(rdma_cm), C(mlx5_ib), C(rdma_rxe), C(siw), C(nvidia_peermem), C(nv_peer_mem),
              C(ib_ipoib), C(ib_umad), C(mlx5_core), C(mlx4_ib), C(mlx4_core), C(irdma), C(bnxt_re), C(hfi1),
              C(efa) and C(mlx_compat).
          returned: always
          type: dict
          sample: {"ib_core": true, "rdma_rxe": true, "nvidia_peermem": false}
        stack:
          description: The RDMA driver stack (rule in the description).
          returned: always
          type: dict
          contains:
            flavor:
              description: C(inbox), C(mlnx_ofed), C(doca) or C(none).
              type: str
              returned: always
              sample: inbox
            version:
              description: Stack version where the host shows one; null otherwise.
              type: str
              returned: always
              sample: null
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import (
    DEFAULT_GATHER_SUBSET,
    GATHER_SUBSETS,
    RdmaFactsError,
    gather_rdma_facts,
)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            sysfs_path=SYSFS_PATH,
            devices=dict(type="list", elements="str"),
            gather_subset=dict(type="list", elements="str", choices=list(GATHER_SUBSETS), default=list(DEFAULT_GATHER_SUBSET)),
        ),
        supports_check_mode=True,
    )
    warnings = []
    try:
        facts = gather_rdma_facts(
            sysfs_path=module.params["sysfs_path"],
            devices=module.params["devices"],
            gather_subset=module.params["gather_subset"],
            warnings=warnings,
        )
    except RdmaFactsError as e:
        module.fail_json(msg=str(e))
    for warning in warnings:
        module.warn(warning)
    result = dict(changed=False, ansible_facts={"rdma": facts})
    if module._diff:
        result["diff"] = {"before": {}, "after": {}}
    module.exit_json(**result)


if __name__ == "__main__":
    main()
