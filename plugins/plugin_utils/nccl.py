# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NCCL environment derived from ``ansible_facts.rdma``.

Rules (each checked against NCCL itself; sources in docs/k8s_rdma_stack.md):

* ``NCCL_IB_HCA`` lists only ACTIVE ports, as ``=dev:port,dev:port``. The
  leading ``=`` makes NCCL match the names exactly (``mlx5_1`` does not also
  pick ``mlx5_10``); NCCL's net_ib init parses ``^`` (exclude) and ``=``
  (exact) prefixes and ``dev:port`` entries.
* ``NCCL_IB_GID_INDEX`` is set only when every selected RoCE port has the
  same ``roce_v2_ipv4_gid_index``. Otherwise it is left out and
  ``NCCL_IB_ROCE_VERSION_NUM=2`` with ``NCCL_IB_ADDR_FAMILY=AF_INET`` are set:
  with ``NCCL_IB_GID_INDEX`` unset (-1) NCCL walks each port's GID table and
  picks the entry of that address family and RoCE version
  (``ncclIbGetGidIndex`` in src/transport/net_ib/connect.cc), i.e. per port.
  InfiniBand ports need none of these (NCCL addresses them by LID).
* ``NCCL_IB_TC`` is the traffic class NCCL puts in the GRH of its RoCE QPs
  (``grh.traffic_class``); NCCL does not use rdma_cm, so the rdma_cm default
  ToS of the port does not reach it. It is set to the ports' lossless ToS
  (``roce.default_tos``, e.g. 106 = DSCP 26 << 2 | ECT(0)) when all selected
  RoCE ports agree on a non-zero value, or to an explicit ``tc``.
* ``NCCL_SOCKET_IFNAME`` lists the netdevs of the selected ports with the
  exact-match ``=`` prefix (bootstrap and socket traffic on the RDMA fabric).
* ``NCCL_IB_DISABLE=0`` whenever RDMA ports are selected.

:func:`pod_nccl_env` applies these rules to one node pool and sets the pod side
(``NCCL_SOCKET_IFNAME`` an interface inside the pod, ``NCCL_IB_DISABLE=1`` with an
empty ``NCCL_IB_HCA`` in a pool without RDMA); the k8s_rdma_stack role's ConfigMaps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math
import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import (
    RdmaFactsError,
    agreed_value,
    describe_ports,
    host_facts_list,
    natural_key,
    port_kind,
    port_netdev,
    select_ports,
)

GID_INDEX_MODES = ("auto", "omit")
ON_NO_RDMA = ("fail", "disable")
# An environment variable name as the shells, systemd's EnvironmentFile= and NCCL/UCX's own config files read
# it: a key of another form ("NCCL_X\nLD_PRELOAD", "X=$(reboot)") would add a line or another variable.
ENV_NAME_RE = re.compile(r"[A-Z_][A-Z0-9_]*")
ENV_NAME_RULE = "an environment variable name ([A-Z_][A-Z0-9_]*, such as NCCL_DEBUG)"
# NCCL_SOCKET_IFNAME: netdev names or prefixes, ',' between, an optional leading '=' (exact) or '^' (exclude).
SOCKET_IFNAME_RE = re.compile(r"[\^=]?[A-Za-z0-9_.:@-]{1,15}(,[A-Za-z0-9_.:@-]{1,15})*")
SOCKET_IFNAME_RULE = ("NCCL_SOCKET_IFNAME text such as =eth1, ^docker,lo or eth (netdev names, ',' between, an "
                      "optional leading = or ^)")


def check_tc(tc):
    if tc is None:
        return None
    if isinstance(tc, bool) or not isinstance(tc, int) or not 0 <= tc <= 255:
        raise RdmaFactsError("tc must be an integer 0-255 (the full ToS byte, e.g. 106 for DSCP 26 with ECN), got %r" % (tc,))
    return tc


def check_gid_index(gid_index):
    if isinstance(gid_index, bool):
        raise RdmaFactsError("gid_index must be one of %s or an integer >= 0, got %r" % (", ".join(GID_INDEX_MODES), gid_index))
    if isinstance(gid_index, int):
        if gid_index < 0:
            raise RdmaFactsError("gid_index must be one of %s or an integer >= 0, got %r" % (", ".join(GID_INDEX_MODES), gid_index))
        return gid_index
    if isinstance(gid_index, str) and gid_index.isdigit():
        return int(gid_index)
    if gid_index not in GID_INDEX_MODES:
        raise RdmaFactsError("gid_index must be one of %s or an integer >= 0, got %r" % (", ".join(GID_INDEX_MODES), gid_index))
    return gid_index


def roce_gid_and_tos(roce_ports, gid_index="auto", tc=None):
    """``(gid_index, tos)`` for a job's RoCE ports: the one rule of ``nccl_env``, ``ucx_env`` and the node labels.

    ``roce_ports``: the selected RoCE port dicts of the facts. ``gid_index`` and ``tc`` as checked by
    :func:`check_gid_index` and :func:`check_tc`. The GID index is ``gid_index`` when it is an integer, with
    ``auto`` the ``roce_v2_ipv4_gid_index`` every port has, else None (``omit``, ports that disagree or do
    not know, no port). The ToS byte is ``tc`` when given, else the ``roce.default_tos`` every port has when
    non-zero, else None.
    """
    roce_ports = list(roce_ports)
    if isinstance(gid_index, int):
        gid = gid_index
    elif gid_index == "auto":
        gid = agreed_value(p.get("roce_v2_ipv4_gid_index") for p in roce_ports)
    else:
        gid = None
    if tc is None:
        tc = agreed_value((p.get("roce") or {}).get("default_tos") for p in roce_ports) or None
    return gid, tc


def nccl_env(data, link_layers=None, devices=None, include_soft=False, include_vfs=False,
             socket_ifname=None, gid_index="auto", tc=None, on_no_rdma="fail", extra=None):
    """Return ``{NCCL_*: str}`` for one host's facts or for many hosts (union of ports).

    See the module docstring for the rules. ``extra`` entries are merged last
    and win (a None value removes a variable). Raises :class:`RdmaFactsError` on bad input or (``on_no_rdma=fail``)
    when no ACTIVE RDMA port is selected.
    """
    gid_index = check_gid_index(gid_index)
    tc = check_tc(tc)
    if on_no_rdma not in ON_NO_RDMA:
        raise RdmaFactsError("on_no_rdma must be one of %s, got %r" % (", ".join(ON_NO_RDMA), on_no_rdma))
    if extra is not None and not isinstance(extra, dict):
        raise RdmaFactsError("extra must be a dict of environment variables, got %s" % type(extra).__name__)
    if socket_ifname is not None and (not isinstance(socket_ifname, str) or not SOCKET_IFNAME_RE.fullmatch(socket_ifname)):
        raise RdmaFactsError("socket_ifname must be %s, got %r" % (SOCKET_IFNAME_RULE, socket_ifname))

    hosts = host_facts_list(data)
    hcas = set()
    netdevs = set()
    roce_ports = []
    for _label, facts in hosts:
        for dev, port in select_ports(facts, link_layers, devices, include_soft, include_vfs):
            hcas.add((dev["name"], port.get("number") or 1))
            ndev = port_netdev(dev, port)
            if ndev:
                netdevs.add(ndev)
            if port_kind(dev, port) == "roce":
                roce_ports.append(port)

    env = {}
    if not hcas:
        if on_no_rdma == "fail":
            raise RdmaFactsError(
                "no ACTIVE RDMA port selected (link_layers=%s, devices=%s, include_soft=%s): %s"
                % (list(link_layers or []) or "any", list(devices or []) or "any", include_soft,
                   "; ".join("%s: %s" % (label, describe_ports(f)) for label, f in hosts)))
        env["NCCL_IB_DISABLE"] = "1"
        if socket_ifname:
            env["NCCL_SOCKET_IFNAME"] = socket_ifname
        return _merge_extra(env, extra)

    env["NCCL_IB_DISABLE"] = "0"
    ordered = sorted(hcas, key=lambda h: (natural_key(h[0]), h[1]))
    env["NCCL_IB_HCA"] = "=" + ",".join("%s:%d" % (name, num) for name, num in ordered)

    if socket_ifname:
        env["NCCL_SOCKET_IFNAME"] = socket_ifname
    elif netdevs:
        env["NCCL_SOCKET_IFNAME"] = "=" + ",".join(sorted(netdevs, key=natural_key))

    gid, tos = roce_gid_and_tos(roce_ports, gid_index, tc)
    if roce_ports:
        if gid is not None:
            env["NCCL_IB_GID_INDEX"] = str(gid)
        else:
            env["NCCL_IB_ROCE_VERSION_NUM"] = "2"
            env["NCCL_IB_ADDR_FAMILY"] = "AF_INET"
    if tos is not None:
        env["NCCL_IB_TC"] = str(tos)

    return _merge_extra(env, extra)


def check_extra(extra, what="extra"):
    """The problems of an ``extra`` mapping (environment name -> value): one sentence each, naming ``what[key]``.

    Keys must full-match :data:`ENV_NAME_RE`; values are None (removes the variable), a boolean, a whole or a
    finite number, or one line of text (no control character: a newline would add a line to the file).
    """
    if extra is None:
        return []
    if not isinstance(extra, dict):
        return ["%s must be a dict of environment variables, got %s" % (what, type(extra).__name__)]
    errors = []
    for key in sorted(extra, key=str):
        value = extra[key]
        if not isinstance(key, str) or not ENV_NAME_RE.fullmatch(key):
            errors.append("%s: the key %r is not allowed; allowed: %s" % (what, key, ENV_NAME_RULE))
        elif isinstance(value, float) and not math.isfinite(value):
            errors.append("%s[%s]: %r is not allowed; allowed: a finite number" % (what, key, value))
        elif value is not None and not isinstance(value, (str, int, float)):
            errors.append("%s[%s]: %r is not allowed; allowed: text, a number, true/false, or null" % (what, key, value))
        elif isinstance(value, str) and any(ord(c) < 32 or ord(c) == 127 for c in value):
            errors.append("%s[%s]: %r is not allowed; allowed: one line of text without control characters"
                          % (what, key, value))
    return errors


def _merge_extra(env, extra):
    """Merge user entries (checked by :func:`check_extra`): values become strings (booleans 1/0), None removes a key."""
    errors = check_extra(extra)
    if errors:
        raise RdmaFactsError("; ".join(errors))
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
            continue
        if isinstance(value, bool):
            value = "1" if value else "0"
        env[key] = str(value)
    return env


def nccl_conf(env):
    """``/etc/nccl.conf`` text (``KEY=value`` lines, sorted) for an env dict."""
    return "".join("%s=%s\n" % (k, env[k]) for k in sorted(env))


_POD_IFNAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,14}")


def check_pod_ifname(name, what="pod_interface"):
    """A pod-side network interface name (a Linux netdev name: 1-15 of A-Z a-z 0-9 _ . -, not starting with . or -)."""
    if not isinstance(name, str) or not _POD_IFNAME.fullmatch(name):
        raise RdmaFactsError("%s must be a network interface name inside the pod (1-15 characters of A-Z, a-z, 0-9, "
                             "'_', '.', '-', such as eth0 or net1), got %r" % (what, name))
    return name


def pod_nccl_env(data, pod_interface="eth0", rdma_pod_interface=None, socket_ifname=None, link_layers=None,
                 devices=None, include_soft=False, include_vfs=False, gid_index="auto", tc=None, extra=None,
                 host_network=False):
    """``{NCCL_*: str}`` for the pods of ONE node pool (one host's facts stand for the pool).

    The HCA, GID index and traffic class rules are :func:`nccl_env`'s, over the pool's ports. What differs is
    the pod side: the host netdevs of the ports do not exist inside a pod, so ``NCCL_SOCKET_IFNAME`` is the
    pod's interface with the exact-match ``=`` prefix: ``rdma_pod_interface`` (the interface of a Multus
    attachment NCCL should use) when the pool has an ACTIVE RDMA port and it is given, else
    ``pod_interface`` (``eth0``, the pod's primary interface). ``socket_ifname`` overrides both, verbatim.
    A pool without an ACTIVE RDMA port gets ``NCCL_IB_DISABLE=1`` and an empty ``NCCL_IB_HCA`` (sockets
    only, over ``pod_interface``). ``extra`` is merged last, as in :func:`nccl_env`.

    ``host_network``: for pods with ``hostNetwork: true``, which see the host's netdevs and no ``eth0`` of
    their own: ``NCCL_SOCKET_IFNAME`` is :func:`nccl_env`'s (the host netdevs of the pool's RDMA ports),
    and is left out in a pool without RDMA (NCCL then picks a host interface itself).
    """
    check_pod_ifname(pod_interface, "pod_interface")
    if rdma_pod_interface is not None:
        check_pod_ifname(rdma_pod_interface, "rdma_pod_interface")
    if extra is not None and not isinstance(extra, dict):
        raise RdmaFactsError("extra must be a dict of environment variables, got %s" % type(extra).__name__)
    if len(host_facts_list(data)) != 1:
        raise RdmaFactsError("pod NCCL settings are computed per node pool: give one host's facts, got %d"
                             % len(host_facts_list(data)))
    env = nccl_env(data, link_layers=link_layers, devices=devices, include_soft=include_soft, include_vfs=include_vfs,
                   socket_ifname=socket_ifname, gid_index=gid_index, tc=tc, on_no_rdma="disable")
    rdma = env["NCCL_IB_DISABLE"] == "0"
    if not rdma:
        env["NCCL_IB_HCA"] = ""
    if not socket_ifname and not host_network:
        env["NCCL_SOCKET_IFNAME"] = "=" + (rdma_pod_interface if rdma and rdma_pod_interface else pod_interface)
    return _merge_extra(env, extra)
