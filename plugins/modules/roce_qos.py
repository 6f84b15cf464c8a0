#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: roce_qos
short_description: Configure lossless RoCE QoS (trust, PFC, ETS, DSCP, ECN, ToS, MTU) on RDMA ports
version_added: 0.1.0
description:
  - Configures RoCE ports for lossless RDMA over Converged Ethernet v2. Only the options given are managed;
    an option left out (or null) is left as it is on the host.
  - "One port (O(netdev), or O(device) and O(port), with the options at the top level) or a list of ports
    (O(ports), each entry with its own C(netdev) or C(device) and C(port) and any of the options; the top-level
    options are the defaults of every port), like the C(network_connections) of linux-system-roles. All ports
    are found with one read of the host's RDMA facts."
  - Reads the current state, computes the difference, applies only that and reports C(changed) honestly.
    Supports check mode (nothing is changed) and diff mode (C(before)/C(after) of the managed options, per port).
  - Every option of every port is validated before anything is read or changed; errors name the parameter
    (C(ports[N].option) in the list form) and the allowed values. A netdev must exist and be a RoCE port, that
    is listed by an RDMA device under C(/sys/class/infiniband) (in C(ports/*/gid_attrs/ndevs), the rxe C(parent)
    file, or C(device/net)) whose port is of kind C(roce) in the facts; iWARP and InfiniBand ports are refused.
  - Valid settings that defeat the profile are warned about before anything runs, naming the settings and the
    risk - PFC on all eight priorities; with DSCP trust, a O(roce_tos) whose DSCP maps (O(dscp2prio), else the
    default map DSCP >> 3) to a priority without PFC (C(roce_tos=0) included); CNPs (O(cnp)) on a priority with PFC.
  - If a step fails part-way (a command that fails or cannot be started), or the module is asked to stop
    (SIGTERM, SIGHUP, SIGINT; the step under way finishes first), the steps this run already applied, on every
    port, are undone in reverse order and the task fails saying which step failed, what was rolled back and what
    could not be. After applying a port, the module reads it back; a state that differs from the plan (for
    example a trust state the driver flipped) is treated the same way.
  - "O(sysfs_path) moves the reads only: the commands (C(dcb), C(mlnx_qos), C(ip), C(ethtool)) always change the
    ports of this process's network namespace. So with another value than C(/sys) the module changes something
    only when that tree is this namespace's sysfs (container mode - the host's network namespace with the host's
    C(/sys) mounted there - each port's netdev has the same ifindex in the tree as C(ip link) gives); otherwise
    it fails naming O(sysfs_path) before any change. Check mode only reads and is never refused."
  - The module holds the host's QoS lock (C(/run/rdma-fabric/qos.lock)) while it reads and changes ports, as
    the boot-time re-apply of C(rdma.fabric.lossless_ethernet) (C(rdma-fabric qos-apply)) does, so the two never
    change a port at the same time; see O(lock_timeout).
  - "Backends: DCB options (O(trust), O(pfc), O(prio_tc), O(ets), O(dscp2prio)) go through iproute2 C(dcb)
    (upstream DCB netlink) or NVIDIA C(mlnx_qos), see O(backend); O(ecn) and O(cnp) through the NVIDIA
    driver's C(/sys/class/net/IF/ecn) files; O(roce_tos) and O(roce_mode) through rdma_cm configfs; O(mtu)
    through sysfs and C(ip link); O(pause) through C(ethtool). The result says which backend handled each option."
  - "Trust on the C(dcb) backend: DCB netlink has no trust setting. A port trusts DSCP when its DCB APP table holds
    DSCP entries and PCP when it holds none (drivers such as mlx5 switch the hardware on the first added / last
    removed DSCP entry). So O(trust=dscp) means DSCP APP entries exist, O(trust=pcp) removes them all.
    The C(mlnx_qos) backend behaves the same where the kernel has no C(/sys/class/net/IF/qos/trust) file
    (upstream kernels); with the NVIDIA driver stack trust is a separate setting."
  - "O(trust=dscp) on a port that trusts PCP first installs the default table (priority = DSCP >> 3, what
    C(mlnx_qos --trust dscp) installs), then O(dscp2prio) on top."
  - "DSCP changes follow the DCB APP-table rule of the port's driver (both backends; the result's RV(dscp_rule)
    says which and where it was learned): V(mlx5) (driver C(mlx5_core)) adds the new entry only, as the add
    replaces the DSCP's mapping; V(ice) deletes the old entry before adding the new one (ice refuses to set a
    mapped DSCP), new DSCPs first and one DSCP at a time while other entries keep the port in DSCP trust;
    V(generic) (any other driver: the kernel's own table, which keeps both entries) adds the new entries, then
    deletes the old ones. The rule comes from the netdev's C(device/driver) link, the C(dcbsim/personality) file
    of the lab's dcbsim, or the RDMA device's driver in the facts. On ice, remapping the only DSCP entry passes
    through an empty table: the port trusts PCP for a moment, and a warning and RV(dscp_rule) say so. With the
    NVIDIA driver stack's C(qos/trust) file, C(mlnx_qos) sets its 64-entry DSCP table (a set replaces)."
  - "A rollback puts back the DSCP table read before the run, computed from the table it then reads, with the same
    rule; it deletes a DSCP's extra entry before adding its old one where the driver allows it, so a rollback that
    fails part-way leaves no DSCP mapped twice."
author:
  - rdma.fabric developers (@rdma-fabric)
extends_documentation_fragment:
  - rdma.fabric.action_group.sysfs_group
  - rdma.fabric.sysfs
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
    details:
      - Nothing is changed. Reading rdma_cm configfs values creates the device's configfs group and removes it
        again when it did not exist, as C(cma_roce_tos) does; that leaves the host as it was.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
  platform:
    description: Target OS/families that can be operated against.
    support: full
    platforms: linux
options:
  ports:
    description:
      - "The ports to configure, one mapping per port: C(netdev) (or C(device) and C(port)) and any option of this
        module that configures a port (O(trust), O(pfc), O(prio_tc), O(ets), O(dscp2prio), O(ecn), O(cnp),
        O(roce_tos), O(tos), O(roce_mode), O(mtu), O(pause), O(backend), O(on_unsupported)), with the same
        forms and values as at the top level."
      - The top-level options are the defaults of every port; a key given in an entry replaces the default for
        that port as a whole (a C(dscp2prio) map is not merged), and a key given as V(null) leaves that option of
        that port alone.
      - A port listed twice (by netdev, or once by netdev and once by device) is an error.
      - One of O(ports), O(netdev) or O(device) is required; O(ports) goes without O(netdev), O(device) and O(port).
    type: list
    elements: dict
  netdev:
    description:
      - "The RoCE port's netdev, for example C(ens1f0) or C(eth1). 1-15 characters of C(A-Z a-z 0-9 _ . : -)."
      - One of O(ports), O(netdev) or O(device) is required. When both O(netdev) and O(device) are given they must
        name the same port.
    type: str
  device:
    description:
      - RDMA device (ibdev) name, for example C(mlx5_0) or C(rxe0); its port O(port) is configured and its netdev
        looked up. Alternative to O(netdev).
    type: str
  port:
    description: Port number of O(device) (1-255). Defaults to 1 with O(device); with O(netdev) it is looked up.
    type: int
  trust:
    description:
      - Which header field classifies received packets into priorities. V(dscp) for RoCE v2 (routed, L3),
        V(pcp) for the VLAN priority. See the description for what trust means on the C(dcb) backend.
      - O(dscp2prio) implies V(dscp); O(trust=pcp) together with a non-empty O(dscp2prio) is an error.
    type: str
    choices: [pcp, dscp]
  pfc:
    description:
      - Priorities (0-7) on which Priority Flow Control is enabled; every other priority gets PFC off.
        V([]) turns PFC off. The common RoCE profile is V([3]).
      - "Two forms. A list of lossless priorities: V([3]), V([3, 4]), V([0, 1]) (repeats collapse). Or the 8 PFC
        flags of C(mlnx_qos --pfc) and NVIDIA's NicConfigurationTemplate C(qos.pfc), index = priority: exactly 8
        entries that are all 0 or 1, V([0,0,0,1,0,0,0,0]) or the string V(0,0,0,1,0,0,0,0); both mean priority 3
        lossless. A string is split at commas and a lone number is one entry, as for any list option (V(3,4) is
        priorities 3 and 4)."
      - A value that reads both ways is rejected with an error showing both forms, namely repeats among entries
        that are all 0 or 1 (V([0,0,0,1]), flags cut short or priorities 0 and 1 given twice) and repeats among 8 or
        more entries (V(0,0,0,2,0,0,0,0), flags with a typo or priorities 0 and 2).
    type: raw
  prio_tc:
    description:
      - "Priority to traffic-class map. Either a list of 8 traffic classes (index = priority 0..7, like
        C(mlnx_qos --prio_tc)), or a mapping C({priority: tc}) naming only the priorities to change.
        Priorities and traffic classes are 0-7."
    type: raw
  ets:
    description:
      - Transmission selection per traffic class. Traffic classes not listed keep their settings, except that the
        bandwidth of every non-ETS class becomes 0. The bandwidths of all V(ets) classes must then sum to 100.
      - A list of mappings with the keys below. Anything else (text such as the C(mlnx_qos --tcbw) list
        V(50,0,0,50,0,0,0,0), a single mapping, an entry that is not a mapping) is refused before anything runs,
        naming O(ets) and showing this form.
    type: raw
    suboptions:
      tc:
        description: Traffic class, 0-7.
        type: int
        required: true
      tsa:
        description: Transmission selection algorithm. V(strict) priority, V(ets) (weighted), V(vendor) (driver-specific).
        type: str
        choices: [ets, strict, vendor]
        default: ets
      bw:
        description: Guaranteed bandwidth in percent (0-100), required for V(ets), 0 or omitted otherwise.
        type: int
  dscp2prio:
    description:
      - "DSCP (0-63) to priority (0-7) mapping, for example C({26: 3, 48: 6}) (RoCE on 3, CNPs on 6). Listed DSCPs
        are mapped; DSCPs not listed keep their mapping. Implies O(trust=dscp)."
    type: dict
  ecn:
    description:
      - Per-priority ECN (DCQCN) enablement, NVIDIA driver stack only (C(/sys/class/net/IF/ecn)). C(np) lists the
        priorities where the port acts as notification point (sends CNPs), C(rp) where it acts as reaction point
        (slows down on CNPs); the other priorities are disabled. A part left out is not managed.
    type: dict
    suboptions:
      np:
        description: Priorities (0-7) with ECN notification point enabled.
        type: list
        elements: int
      rp:
        description: Priorities (0-7) with ECN reaction point enabled.
        type: list
        elements: int
  cnp:
    description:
      - Marking of the Congestion Notification Packets the port sends, NVIDIA driver stack only
        (C(ecn/roce_np/cnp_dscp), C(ecn/roce_np/cnp_802p_prio)). The common profile is DSCP 48 on priority 6.
    type: dict
    suboptions:
      dscp:
        description: DSCP of CNPs, 0-63.
        type: int
      priority:
        description: 802.1p priority of CNPs, 0-7.
        type: int
  roce_tos:
    description:
      - Default IP ToS byte (0-255) of RDMA-CM connections on this port (rdma_cm configfs C(default_roce_tos)),
        for example V(106) = DSCP 26 with ECN-capable transport.
    type: int
  tos:
    description:
      - Another name for O(roce_tos) (the ToS of C(cma_roce_tos -t)). When both are given they must have the
        same value; different values are an error.
    type: int
  roce_mode:
    description:
      - Default RoCE version of RDMA-CM connections on this port (rdma_cm configfs C(default_roce_mode)).
      - "V(v1) or V(v2); the forms of C(cma_roce_mode) are accepted too: V(1) and V(2) (its C(-m) values) and the
        kernel's texts V(IB/RoCE v1), V(RoCE v1), V(RoCE v2)."
    type: raw
  mtu:
    description: MTU of the netdev, 68-9978 (the driver may allow less).
    type: int
  pause:
    description:
      - Global (IEEE 802.3x) pause frames, RX and TX together. Lossless RoCE uses PFC, which drivers such as mlx5
        only run with global pause off, so the usual value is V(false). Autonegotiation is left as it is.
    type: bool
  backend:
    description:
      - Tool for the DCB options. V(dcb) is iproute2 C(dcb) (upstream DCB netlink), V(mlnx_qos) the NVIDIA tool.
      - V(auto) picks V(mlnx_qos) where the NVIDIA driver stack is loaded (C(/sys/class/net/IF/qos/trust) exists) and
        C(mlnx_qos) is installed, else V(dcb) if installed, else V(mlnx_qos); it fails when neither is installed.
        The result's RV(backend) and RV(backend_reason) say which was used and why.
      - "V(mlnx_qos) serves NVIDIA's driver only (C(mlx5_core), or a port with the NVIDIA driver stack's
        C(/sys/class/net/IF/qos/) files). C(mlnx_qos) reads the port's DCB buffers on every call, which no other driver
        has, and on another driver (such as C(ice)) it applies part of a change and then stops with a traceback. Asked
        for on such a port it fails before anything is read, naming the port's driver; use V(dcb) or V(auto) there."
    type: str
    choices: [auto, dcb, mlnx_qos]
    default: auto
  on_unsupported:
    description:
      - What to do when the driver cannot do what an option asks (no DCB netlink ops, as virtio; no ECN files, as
        upstream drivers and rxe; no pause support).
      - V(fail) fails before anything is changed. V(warn) warns, skips those options and applies the others
        (O(roce_tos), O(roce_mode), O(mtu)...). Skipped options are listed in RV(unsupported).
    type: str
    choices: [fail, warn]
    default: fail
  lock_timeout:
    description:
      - Seconds to wait for the host's QoS lock (C(/run/rdma-fabric/qos.lock)) while another run holds it (the
        boot-time re-apply, or another task). When it runs out the task fails, changing nothing, and the error
        names the holder (pid, what, since when). V(0) does not wait; at most V(86400) (a day), a negative value is
        an error.
      - In check mode a lock that cannot be created (no write access to C(/run)) only warns.
    type: int
    default: 120
  keep:
    description:
      - Files the module keeps for each port of O(ports) in the same call, for the C(rdma.fabric.lossless_ethernet)
        role (the list form only). Each is written atomically, 0644 in a 0755 folder, owned by root; the folders
        are the collection's own and cannot be changed. Check mode writes nothing; the result (RV(ports) C(kept))
        and the diff say what a run would write.
      - V(before) writes C(/var/lib/rdma-fabric/lossless-before/<netdev>.json), C({"netdev", "before"}) with what
        the port had before any change of this call (its C(before)), for each port that has none yet; it is never
        replaced (the role's C(lossless_ethernet_state=absent) puts it back). It is written before the first
        change; a run that fails then leaves it.
      - V(saved) writes C(/etc/rdma-fabric/lossless/<netdev>.json), the port's entry of O(ports) (each entry must
        give C(netdev)), which C(rdma-fabric qos-apply) re-applies at boot, once every port is configured;
        replaced when its content, mode or owner differs.
    type: list
    elements: str
    choices: [before, saved]
    default: []
    version_added: 0.2.0
notes:
  - Settings made here are runtime state of the driver; they are lost on reboot or driver reload. The
    C(rdma.fabric.lossless_ethernet) role re-applies them at boot and after a driver restart.
  - Requires iproute2 5.11 or later (C(dcb)) or NVIDIA mlnx-tools (C(mlnx_qos)) for DCB options, C(ethtool) for
    O(pause), C(ip) for O(mtu).
  - "Mapping keys that mean the same (C(dscp2prio: {26: 3, '26': 5})) are rejected on the controller, before the
    module runs (its action plugin), since the JSON that carries the arguments to the host keeps only one of them."
seealso:
  - name: dcb(8)
    description: iproute2 DCB tool (dcb-pfc, dcb-ets, dcb-app).
    link: https://man7.org/linux/man-pages/man8/dcb.8.html
  - name: mlnx-tools
    description: NVIDIA mlnx_qos and cma_roce_tos.
    link: https://github.com/Mellanox/mlnx-tools
"""

EXAMPLES = r"""
- name: Lossless RoCE v2 with the common switch profile (priority 3 lossless, RoCE DSCP 26, CNPs DSCP 48 on priority 6)
  rdma.fabric.roce_qos:
    netdev: ens1f0
    trust: dscp
    pfc: [3]
    dscp2prio: {26: 3, 48: 6}
    ecn: {np: [3], rp: [3]}
    cnp: {dscp: 48, priority: 6}
    roce_tos: 106
    roce_mode: v2
    mtu: 9000
    pause: false

- name: Every RoCE port of the host in one call, the profile as defaults and one port with its own MTU
  rdma.fabric.roce_qos:
    trust: dscp
    pfc: "0,0,0,1,0,0,0,0"     # the mlnx_qos --pfc form: priority 3 lossless
    dscp2prio: {26: 3, 48: 6}
    roce_tos: 106
    roce_mode: 2               # cma_roce_mode -m 2
    ports:
      - {netdev: ens1f0, mtu: 9000}
      - {device: mlx5_1, port: 1, mtu: 4200}
  register: qos_all

- name: Which options of which port differed
  ansible.builtin.debug:
    msg: "{{ qos_all.ports | dict2items | map(attribute='value.drift') }}"

- name: Same port addressed by RDMA device, ETS 50/50 between TC0 and TC3, CNP traffic class strict
  rdma.fabric.roce_qos:
    device: mlx5_0
    port: 1
    prio_tc: [0, 0, 0, 3, 0, 0, 6, 0]
    ets:
      - {tc: 0, tsa: ets, bw: 50}
      - {tc: 3, tsa: ets, bw: 50}
      - {tc: 6, tsa: strict}
    backend: mlnx_qos

- name: On a NIC without DCB (virtio + Soft-RoCE) set what can be set and warn about the rest
  rdma.fabric.roce_qos:
    netdev: eth1
    trust: dscp
    pfc: [3]
    roce_tos: 106
    roce_mode: v2
    mtu: 1500
    on_unsupported: warn
  register: qos

- name: Show which backend handled which option
  ansible.builtin.debug:
    var: qos.backends
"""

RETURN = r"""
ports:
  description:
    - Per port, keyed by netdev, that port's result with the keys the single-port form returns at the top level
      (C(changed), RV(netdev), RV(device), RV(port), RV(backend), RV(backend_reason), RV(backends), RV(dscp_rule),
      RV(before), RV(after), RV(changes), RV(drift), RV(commands), RV(unsupported)).
    - On a failure before anything was changed, a port that could not be configured has C(failed) and C(msg)
      instead.
    - With O(keep), a port's C(kept) maps each kept file's kind (C(before), C(saved)) to its C(path) and whether
      the call wrote it (or would, in check mode) (C(changed)).
  returned: always, except on bad input
  type: dict
  sample: {"dcbsim0": {"changed": true, "netdev": "dcbsim0", "device": "rxe9", "port": 1, "backend": "dcb",
           "before": {"pfc": []}, "after": {"pfc": [3]}, "changes": {"pfc": true},
           "drift": {"pfc": {"desired": [3], "actual": []}}}}
netdev:
  description: The port's netdev.
  returned: success, in the single-port form
  type: str
  sample: ens1f0
device:
  description: The port's RDMA device.
  returned: success, in the single-port form
  type: str
  sample: mlx5_0
port:
  description: The port number on O(device).
  returned: success, in the single-port form
  type: int
  sample: 1
backend:
  description: The DCB backend used for the DCB options (V(dcb) or V(mlnx_qos)); null when no DCB option was managed.
  returned: success, in the single-port form (per port in RV(ports))
  type: str
  sample: dcb
backend_reason:
  description: Why that DCB backend was chosen (null when none was needed).
  returned: success, in the single-port form (per port in RV(ports))
  type: str
  sample: "auto: iproute2 dcb is installed"
backends:
  description: For each managed option, the backend that handled it (V(dcb), V(mlnx_qos), V(sysfs_ecn), V(configfs), V(iproute2), V(ethtool)).
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  sample: {"trust": "dcb", "pfc": "dcb", "dscp2prio": "dcb", "roce_tos": "configfs", "mtu": "iproute2"}
dscp_rule:
  description:
    - How the DCB backend changed (or would change) the port's DSCP table; null when neither O(trust) nor O(dscp2prio)
      was managed.
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  contains:
    name:
      description: The driver's DCB APP-table rule.
      type: str
      choices: [generic, mlx5, ice]
      sample: ice
    reason:
      description: Where the rule was learned (the driver link, the dcbsim personality, the facts, the NVIDIA qos/trust file).
      type: str
      sample: "dcbsim2: dcbsim personality ice (/sys/class/net/dcbsim2/dcbsim/personality)"
    steps:
      description: The steps that rule takes, in words.
      type: str
      sample: "mlx5 (a set replaces the DSCP's mapping): one add per changed DSCP, no delete of the old entry"
    notes:
      description: What the plan could not avoid, also given as warnings (an ice remap of the only DSCP entry passes through PCP trust).
      type: list
      elements: str
      sample: []
  sample: {"name": "mlx5", "reason": "ens1f0: driver mlx5_core (/sys/class/net/ens1f0/device/driver)",
           "steps": "mlx5 (a set replaces the DSCP's mapping): one add per changed DSCP, no delete of the old entry",
           "notes": []}
before:
  description:
    - The managed options as they were. Same shapes as the options, in full for the DCB maps (C(prio_tc) as a list of 8,
      C(ets) as a list of 8 C({tc, tsa, bw})); C(dscp2prio) lists the requested DSCPs (a list where one DSCP has several
      priorities, null where it has none).
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  sample: {"trust": "pcp", "pfc": [], "dscp2prio": {"26": null, "48": null}, "roce_tos": 0}
after:
  description: The managed options after the run, read back from the host (planned values in check mode).
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  sample: {"trust": "dscp", "pfc": [3], "dscp2prio": {"26": 3, "48": 6}, "roce_tos": 106}
changes:
  description: For each managed option, whether it changed (or would change, in check mode).
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  sample: {"trust": true, "pfc": true, "dscp2prio": true, "roce_tos": false}
drift:
  description:
    - The managed options that differed from what was asked when the port was read, each with C(desired) and
      C(actual) (same shapes as RV(before) and RV(after)); empty when the port was as asked. In check mode this
      is the port's drift from the settings, option by option.
  returned: success, in the single-port form (per port in RV(ports))
  type: dict
  sample: {"pfc": {"desired": [3], "actual": []}}
commands:
  description:
    - The changes in the order they were applied (in check mode, would be applied), as command lines or
      C(write VALUE > PATH), of every port. On failure, the ones that ran, the failed one last.
  returned: always
  type: list
  elements: str
  sample: ["/usr/sbin/dcb app add dev dcbsim0 dscp-prio 26:3 48:6", "/usr/sbin/dcb pfc set dev dcbsim0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"]
unsupported:
  description: Options skipped with O(on_unsupported=warn) because the port cannot do them, and why.
  returned: success, in the single-port form (per port in RV(ports))
  type: list
  elements: dict
  sample: [{"option": "pfc", "reason": "eth1 has no DCB support (its driver has no DCB netlink ops)"}]
diff:
  description:
    - C(before) and C(after), in diff mode. In the list form a list with one such entry per port, the port's
      netdev as C(before_header) and C(after_header).
  returned: success, in diff mode
  type: raw
  sample: {"before": {"pfc": []}, "after": {"pfc": [3]}}
param:
  description: The parameter an input error is about (C(ports[N].option) in the list form).
  returned: failure, on bad input
  type: str
  sample: pfc
failed_step:
  description: The change that failed (C(read-back) when the state read back after applying differed from the plan).
  returned: failure, when a change failed
  type: str
  sample: "/usr/sbin/dcb ets set dev dcbsim0 tc-tsa 0:ets ..."
rolled_back:
  description:
    - The undo actions that ran, in the order they ran (reverse order of the changes). A port's DSCP table is
      undone whole, as C(restore the DSCP table read before the run (RULE rule)) with the commands it ran.
  returned: failure, when a change failed
  type: list
  elements: str
  sample: ["/usr/sbin/dcb pfc set dev dcbsim0 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off"]
rollback_failed:
  description: Undo actions that failed; those settings were left as they were after the failure.
  returned: failure, when a change failed
  type: list
  elements: str
  sample: []
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.rdma.fabric.plugins.module_utils.argspec.list_options import ListOptionError, list_of_dicts
from ansible_collections.rdma.fabric.plugins.module_utils.argspec.sysfs_path import SYSFS_PATH
from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model
from ansible_collections.rdma.fabric.plugins.module_utils.qos import engine, keep, lock
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import ApplyError, PortsError, QosRun
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, ValidationError


# ets: a list of mappings with these keys (declared raw, checked by list_of_dicts: a refusal names ets).
ETS_OPTIONS = dict(
    tc=dict(type="int", required=True),
    tsa=dict(type="str", choices=list(model.TSA_CHOICES), default="ets"),
    bw=dict(type="int"),
)
ETS_FORM = "[{tc: 0, tsa: ets, bw: 50}, {tc: 3, tsa: ets, bw: 50}]"


def argument_spec():
    return dict(
        ports=dict(type="list", elements="dict"),
        netdev=dict(type="str"),
        device=dict(type="str"),
        port=dict(type="int"),
        trust=dict(type="str", choices=list(model.TRUST_CHOICES)),
        pfc=dict(type="raw"),
        prio_tc=dict(type="raw"),
        ets=dict(type="raw"),
        dscp2prio=dict(type="dict"),
        ecn=dict(type="dict", options=dict(
            np=dict(type="list", elements="int"),
            rp=dict(type="list", elements="int"),
        )),
        cnp=dict(type="dict", options=dict(
            dscp=dict(type="int"),
            priority=dict(type="int"),
        )),
        roce_tos=dict(type="int"),
        tos=dict(type="int"),
        roce_mode=dict(type="raw"),
        mtu=dict(type="int"),
        pause=dict(type="bool"),
        backend=dict(type="str", default="auto", choices=list(model.BACKEND_CHOICES)),
        on_unsupported=dict(type="str", default="fail", choices=list(model.ON_UNSUPPORTED_CHOICES)),
        sysfs_path=SYSFS_PATH,
        lock_timeout=dict(type="int", default=120),
        keep=dict(type="list", elements="str", default=[], choices=list(keep.KINDS)),
    )


LOCK_TIMEOUT_MAX = 86400  # a day: a longer wait is no timeout (a run would hang on a lock that never frees)


def _warn_all(module, warnings):
    for w in warnings:
        module.warn(w)


def _diff(result, params):
    if params.get("ports") is None:
        return {"before": result["before"], "after": result["after"]}
    return [{"before_header": netdev, "after_header": netdev, "before": r["before"], "after": r["after"]}
            for netdev, r in sorted(result["ports"].items())]


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        required_one_of=[("ports", "netdev", "device")],
        mutually_exclusive=[("ports", "netdev"), ("ports", "device"), ("ports", "port")],
        supports_check_mode=True,
    )
    try:
        params = dict(module.params, ets=list_of_dicts("ets", module.params["ets"], ETS_OPTIONS, ETS_FORM))
    except ListOptionError as e:
        module.fail_json(msg=str(e), param=e.param, commands=[])
    qos = None
    try:
        if not 0 <= params["lock_timeout"] <= LOCK_TIMEOUT_MAX:
            raise ValidationError("lock_timeout", "%d is out of range; allowed: 0 (do not wait) to %d seconds"
                                  % (params["lock_timeout"], LOCK_TIMEOUT_MAX))
        kept = keep.Kept(keep.check_keep(params["keep"], params["ports"]), module.check_mode)
        tree, jobs = engine.plan_call(params)
        for request, _ref in jobs:  # valid but risky settings: said before anything runs
            _warn_all(module, model.risks(request.desired, request.prefix))
        with lock.held("roce_qos (Ansible)", params["lock_timeout"], required=not module.check_mode, warn=module.warn):
            if not module.check_mode:
                engine.check_host_sysfs(CommandRunner(module), tree, jobs)
            qos = QosRun(CommandRunner(module), tree, jobs, check_mode=module.check_mode)
            applied = qos.run(before_apply=kept.before)
            try:
                kept.saved(params["ports"] or [])
            except QosError as e:
                _warn_all(module, qos.warnings)
                module.fail_json(msg="the ports are configured, but saving their settings failed: %s" % e,
                                 ports=applied["ports"], changed=True, commands=applied["commands"])
            result = engine.flatten(applied, params)
        kept.report(result["ports"])
        result["changed"] = result["changed"] or kept.changed
    except ApplyError as e:
        _warn_all(module, qos.warnings)
        # Rolled back completely: the ports are as they were. Otherwise they were left changed.
        module.fail_json(msg=str(e), failed_step=e.failed_step, rolled_back=e.rolled_back,
                         rollback_failed=e.rollback_failed, commands=e.executed, changed=bool(e.rollback_failed))
    except PortsError as e:
        _warn_all(module, qos.warnings if qos else [])
        extra = {"param": e.param} if e.param else {}
        module.fail_json(msg=str(e), ports=e.results, commands=[], **extra)
    except ValidationError as e:
        module.fail_json(msg=str(e), param=e.param, commands=[])
    except QosError as e:
        _warn_all(module, qos.warnings if qos else [])
        module.fail_json(msg=str(e), commands=[])
    _warn_all(module, qos.warnings)
    if module._diff:
        result["diff"] = _diff(result, params)
        if params.get("ports") is not None:
            result["diff"] += kept.diff()
    module.exit_json(**result)


if __name__ == "__main__":
    main()
