# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""UCX (and so MPI) environment derived from one host's ``ansible_facts.rdma``.

UCX reads ``UCX_*`` variables (or the same names from its ``ucx.conf``); the
names and meanings below are UCX's own (checked in the UCX source, v1.13.1 as
Debian 12 ships it and the current master: ``src/ucp/core/ucp_context.c``,
``src/uct/ib/base/ib_iface.c``, ``src/uct/ib/base/ib_device.c``):

* ``UCX_NET_DEVICES``: the network devices UCX may use, ``dev:port`` for RDMA
  ports (``mlx5_0:1``), a netdev name for TCP (``eth0``); default ``all``.
  Here: every ACTIVE RDMA port whose kind (``rdma_schema.port_kind``) is
  ``roce`` or ``infiniband``, naturally sorted, through ``select_ports``.
* iWARP: UCX's verbs transports refuse iWARP devices (``uct_ib_device_is_supported``
  accepts only ``IBV_TRANSPORT_IB`` devices, "iWarp device ... is not
  supported" in 1.13), so an iWARP port never goes into ``UCX_NET_DEVICES``
  as ``dev:port``. A host whose only RDMA ports are iWARP gets the TCP shape
  below on the iWARP ports' netdevs (the NIC still carries TCP).
* ``UCX_TLS``: the transports. With RDMA ports: ``rc,ud,sm,self`` (RC for
  data, UD for wire-up and as UCX's scalable fallback, shared memory and
  loop-back inside the node), plus ``cuda`` on GPU hosts (``cuda_copy``,
  ``cuda_ipc``, ``gdr_copy``: without them UCX cannot move GPU buffers).
  ``tcp`` is left out on purpose: a job then fails instead of running slowly
  over TCP when RDMA breaks. ``rc`` and ``ud`` are UCX aliases that take the
  accelerated mlx5 transports where present and the verbs ones otherwise
  (rxe, other vendors).
* No RDMA port (or only iWARP): ``UCX_TLS=tcp,sm,self`` and
  ``UCX_NET_DEVICES`` = the given TCP netdevs (``tcp_netdevs``), else the
  iWARP ports' netdevs, else left out (UCX then uses every netdev).
* ``UCX_IB_GID_INDEX``: the ports' ``roce_v2_ipv4_gid_index`` when every
  selected RoCE port has the same one; left out when they differ (UCX's
  ``auto`` then picks the RoCE v2 GID on each port) or when there is no RoCE
  port (InfiniBand uses LIDs). ``gid_index``: ``auto``, ``omit`` or a number.
* ``UCX_IB_TRAFFIC_CLASS``: the full ToS byte of RoCE v2 packets
  (``ah_attr.grh.traffic_class``; UCX's own ``auto`` is 106 on RoCE v2), so
  the same value as the QoS profile's RoCE ToS (``lossless_ethernet_roce_tos``)
  and ``NCCL_IB_TC``: ``tc`` when given, else the ToS all selected RoCE ports
  agree on in the facts (``roce.default_tos``) when non-zero; RoCE only.

* ``UCX_UD_ETH_DGID_CHECK=n`` when a selected RoCE port is a soft device
  (Soft-RoCE ``rxe``). UCX's UD transport (its wire-up path, also under
  ``rc``) drops every received packet on Ethernet whose destination GID in
  the receive buffer's GRH is not one of the port's GIDs (its ``ETH_DGID_CHECK``,
  default ``y``: "mismatched packets are silently dropped"); on rxe that check
  drops them all. Measured in the lab (UCX 1.13.1, two rxe VMs, ``ucx_perftest
  -t tag_lat``): with the default every UD wire-up packet arrives (rxe0's
  ``rcvd_pkts`` rise) yet the endpoint times out after 30 s ("UD endpoint
  ... unhandled timeout error"), with ``UCX_TLS=rc`` and with ``ud_v`` alone;
  with the check off both pass. Hardware RoCE ports keep UCX's default.

``extra`` is merged last (``None`` removes a variable), as in ``nccl_env``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    host_facts_list,
    natural_key,
    port_kind,
    port_netdev,
    select_ports,
)
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import (
    _merge_extra,
    check_gid_index,
    check_tc,
    roce_gid_and_tos,
)

# Port kinds UCX can drive as dev:port (its verbs/mlx5 transports).
UCX_RDMA_KINDS = ("roce", "infiniband")
TLS_RDMA = ("rc", "ud", "sm", "self")
TLS_TCP = ("tcp", "sm", "self")
TLS_CUDA = ("cuda",)
# Transport names and aliases UCX accepts in UCX_TLS (1.13 and later), for validating an explicit list.
TLS_NAMES = (
    "all", "sm", "shm", "mm", "posix", "sysv", "xpmem", "knem", "cma", "self", "tcp",
    "ib", "rc", "rc_v", "rc_x", "rc_verbs", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_verbs", "ud_mlx5",
    "dc", "dc_x", "dc_mlx5", "cuda", "cuda_copy", "cuda_ipc", "gdr_copy", "rocm", "rocm_copy", "rocm_ipc",
    "rocm_gdr", "ugni", "ze_copy",
)
_NETDEV_RE = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")


def check_transports(transports):
    """``auto`` or a list (or comma string) of UCX transport names; ``^`` first excludes."""
    if transports in (None, "auto"):
        return None
    items = transports.split(",") if isinstance(transports, str) else transports
    if not isinstance(items, (list, tuple)) or not items:
        raise RdmaFactsError("transports must be 'auto' or a list of UCX transports (allowed: %s), got %r"
                             % (", ".join(TLS_NAMES), transports))
    out = []
    for i, name in enumerate(items):
        name = str(name).strip()
        bare = name[1:] if i == 0 and name.startswith("^") else name
        if bare.endswith(":aux"):
            bare = bare[:-4]
        if bare not in TLS_NAMES:
            raise RdmaFactsError("transports: unknown UCX transport %r; allowed: %s (a leading ^ on the first "
                                 "excludes)" % (name, ", ".join(TLS_NAMES)))
        out.append(name)
    return ",".join(out)


def check_tcp_netdevs(netdevs):
    if netdevs is None:
        return []
    if isinstance(netdevs, str):
        netdevs = [n for n in netdevs.split(",") if n]
    if not isinstance(netdevs, (list, tuple)):
        raise RdmaFactsError("tcp_netdevs must be a list of netdev names such as ['eth0'], got %r" % (netdevs,))
    for name in netdevs:
        if not isinstance(name, str) or not _NETDEV_RE.fullmatch(name):
            raise RdmaFactsError("tcp_netdevs: %r is not a netdev name (letters, digits and _ . : @ -, "
                                 "at most 15 characters)" % (name,))
    return list(netdevs)


def ucx_env(data, tc=None, gid_index="auto", transports="auto", devices=None, include_soft=True,
            include_vfs=False, cuda=False, tcp_netdevs=None, extra=None):
    """Return ``{UCX_*: str}`` for ONE host's facts (see the module docstring for the rules).

    ``devices``: ibdev name globs (empty = all). ``include_soft``: rxe/siw
    count (a host-level setting: nothing here goes through a device plugin).
    ``cuda``: the host has GPUs (adds UCX's ``cuda`` transports).
    Raises :class:`RdmaFactsError` on bad input.
    """
    hosts = host_facts_list(data)
    if len(hosts) != 1:
        raise RdmaFactsError("ucx_env takes one host's facts (ansible_facts.rdma), got %d hosts" % len(hosts))
    facts = hosts[0][1]
    tc = check_tc(tc)
    gid_index = check_gid_index(gid_index)
    tls = check_transports(transports)
    tcp = check_tcp_netdevs(tcp_netdevs)
    if extra is not None and not isinstance(extra, dict):
        raise RdmaFactsError("extra must be a dict of environment variables, got %s" % type(extra).__name__)
    if not isinstance(cuda, bool):
        raise RdmaFactsError("cuda must be true or false, got %r" % (cuda,))

    selected = select_ports(facts, devices=devices, include_soft=include_soft, include_vfs=include_vfs)
    rdma = [(dev, port) for dev, port in selected if port_kind(dev, port) in UCX_RDMA_KINDS]
    env = {}
    if not rdma:
        iwarp = [port_netdev(dev, port) for dev, port in selected if port_kind(dev, port) == "iwarp"]
        netdevs = tcp or sorted(set(n for n in iwarp if n), key=natural_key)
        env["UCX_TLS"] = tls or ",".join(TLS_TCP + (TLS_CUDA if cuda else ()))
        if netdevs:
            env["UCX_NET_DEVICES"] = ",".join(netdevs)
        return _merge_extra(env, extra)

    env["UCX_NET_DEVICES"] = ",".join("%s:%d" % (dev["name"], port.get("number") or 1) for dev, port in rdma)
    env["UCX_TLS"] = tls or ",".join(TLS_RDMA + (TLS_CUDA if cuda else ()))
    roce = [port for dev, port in rdma if port_kind(dev, port) == "roce"]
    if roce:
        gid, tos = roce_gid_and_tos(roce, gid_index, tc)
        if gid is not None:
            env["UCX_IB_GID_INDEX"] = str(gid)
        if tos is not None:
            env["UCX_IB_TRAFFIC_CLASS"] = str(tos)
        if any(dev.get("soft") for dev, port in rdma if port_kind(dev, port) == "roce"):
            env["UCX_UD_ETH_DGID_CHECK"] = "n"
    return _merge_extra(env, extra)
