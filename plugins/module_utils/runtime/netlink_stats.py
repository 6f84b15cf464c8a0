# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Read-only kernel queries the metrics collector needs beyond sysfs: DCB PFC and ethtool statistics.

Both are GET requests that need no privilege and change nothing; both are
made from the standard library (a netlink socket, an ioctl), so the host
runtime reads them without starting ``dcb`` or ``ethtool`` for each port:

* :func:`dcb_ieee_pfc`: ``RTM_GETDCB`` / ``DCB_CMD_IEEE_GET`` over rtnetlink,
  the request iproute2's ``dcb -s pfc show dev IF`` makes; its
  ``DCB_ATTR_IEEE_PFC`` attribute is the kernel's ``struct ieee_pfc``
  (``include/uapi/linux/dcbnl.h``): the PFC-enabled priorities and, per
  priority, ``requests`` (PFC pause frames sent) and ``indications`` (PFC
  pause frames received) as the driver counts them (mlx5, ice and bnxt fill
  them; ``dcb -s pfc show`` prints them as "requests" and "indications").
* :func:`ethtool_stats`: ``SIOCETHTOOL`` with ``ETHTOOL_GSSET_INFO``,
  ``ETHTOOL_GSTRINGS`` and ``ETHTOOL_GSTATS``, what ``ethtool -S IF`` prints.

A netdev without the feature (no DCB ops, no driver statistics) or one that
vanished gives None; other failures raise :class:`OSError`.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import array
import errno
import fcntl
import os
import socket
import struct

# rtnetlink / DCB netlink (include/uapi/linux/{netlink,rtnetlink,dcbnl}.h)
NETLINK_ROUTE = 0
NLMSG_ERROR = 2
NLMSG_DONE = 3
NLM_F_REQUEST = 1
RTM_GETDCB = 78
DCB_CMD_IEEE_GET = 21
DCB_ATTR_IFNAME = 1
DCB_ATTR_IEEE = 13
DCB_ATTR_IEEE_PFC = 2
NLA_TYPE_MASK = 0x3FFF  # without NLA_F_NESTED / NLA_F_NET_BYTEORDER
# struct ieee_pfc: u8 pfc_cap, pfc_en, mbc; u16 delay; u64 requests[8]; u64 indications[8] (natural alignment)
IEEE_PFC = struct.Struct("=BBBxH2x8Q8Q")
_NLMSGHDR = struct.Struct("=IHHII")
_NLATTR = struct.Struct("=HH")

# ethtool ioctl (include/uapi/linux/{sockios,ethtool}.h)
SIOCETHTOOL = 0x8946
ETHTOOL_GSTRINGS = 0x1B
ETHTOOL_GSTATS = 0x1D
ETHTOOL_GSSET_INFO = 0x37
ETH_SS_STATS = 1
ETH_GSTRING_LEN = 32
IFNAMSIZ = 16
_IFREQ_SIZE = 40

# What "this netdev has no such feature / is gone" looks like.
ABSENT = frozenset((errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP), errno.ENODEV, errno.EINVAL,
                    errno.ENOENT, errno.ENXIO))


def _align4(n):
    return (n + 3) & ~3


def _attrs(data):
    """``{type: payload}`` of the netlink attributes packed in ``data`` (the last one of a type wins)."""
    out = {}
    pos = 0
    while pos + _NLATTR.size <= len(data):
        length, kind = _NLATTR.unpack_from(data, pos)
        if length < _NLATTR.size or pos + length > len(data):
            break
        out[kind & NLA_TYPE_MASK] = data[pos + _NLATTR.size:pos + length]
        pos += _align4(length)
    return out


def dcb_request(ifname, seq=1):
    """The bytes of an ``RTM_GETDCB`` / ``DCB_CMD_IEEE_GET`` request for ``ifname``."""
    name = ifname.encode("utf-8") + b"\0"
    attr = _NLATTR.pack(_NLATTR.size + len(name), DCB_ATTR_IFNAME) + name
    attr += b"\0" * (_align4(len(attr)) - len(attr))
    body = struct.pack("=BBH", socket.AF_UNSPEC, DCB_CMD_IEEE_GET, 0) + attr
    return _NLMSGHDR.pack(_NLMSGHDR.size + len(body), RTM_GETDCB, NLM_F_REQUEST, seq, 0) + body


def parse_dcb_reply(data, seq=1):
    """``(done, pfc)`` from one datagram of the kernel's answer.

    ``pfc``: ``{"enabled": [priorities], "requests": [8], "indications": [8]}``,
    or None when the driver has no DCB or reports no IEEE PFC. ``done``:
    whether the answer to ``seq`` was in ``data``. Raises :class:`OSError` for
    an error the kernel returned that does not mean "no DCB here".
    """
    pos = 0
    while pos + _NLMSGHDR.size <= len(data):
        length, kind, dummy, mseq, dummy = _NLMSGHDR.unpack_from(data, pos)
        if length < _NLMSGHDR.size or pos + length > len(data):
            break
        payload = data[pos + _NLMSGHDR.size:pos + length]
        pos += _align4(length)
        if mseq != seq:
            continue
        if kind == NLMSG_ERROR:
            code = -struct.unpack_from("=i", payload)[0] if len(payload) >= 4 else errno.EIO
            if code == 0:
                continue  # an acknowledgement
            if code in ABSENT:
                return True, None
            raise OSError(code, os.strerror(code))
        if kind == NLMSG_DONE:
            return True, None
        if kind != RTM_GETDCB or len(payload) < 4:
            continue
        ieee = _attrs(payload[4:]).get(DCB_ATTR_IEEE)
        raw = _attrs(ieee).get(DCB_ATTR_IEEE_PFC) if ieee is not None else None
        if raw is None or len(raw) < IEEE_PFC.size:
            return True, None
        values = IEEE_PFC.unpack_from(raw)
        pfc_en = values[1]
        return True, {"enabled": [p for p in range(8) if pfc_en >> p & 1],
                      "requests": list(values[4:12]), "indications": list(values[12:20])}
    return False, None


def dcb_ieee_pfc(ifname, timeout=2.0):
    """IEEE PFC state and counters of ``ifname`` (see :func:`parse_dcb_reply`); None without DCB."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    try:
        sock.settimeout(timeout)
        sock.bind((0, 0))
        sock.send(dcb_request(ifname))
        while True:
            done, pfc = parse_dcb_reply(sock.recv(65536))
            if done:
                return pfc
    finally:
        sock.close()


def _ethtool(sock, ifname, buf):
    """One SIOCETHTOOL ioctl whose ``struct ethtool_*`` is the array ``buf`` (filled in place)."""
    name = ifname.encode("utf-8")[:IFNAMSIZ - 1]
    ifreq = struct.pack("16sP", name, buf.buffer_info()[0])  # native: ifr_data is a pointer
    ifreq += b"\0" * (_IFREQ_SIZE - len(ifreq))
    fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)


def ethtool_stats(ifname):
    """``{name: value}`` of ``ethtool -S ifname``; None when the driver has no statistics or the netdev is gone."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        try:
            info = array.array("B", struct.pack("=IIQI", ETHTOOL_GSSET_INFO, 0, 1 << ETH_SS_STATS, 0))
            _ethtool(sock, ifname, info)
            mask = struct.unpack_from("=Q", info, 8)[0]
            count = struct.unpack_from("=I", info, 16)[0] if mask & (1 << ETH_SS_STATS) else 0
            if not count:
                return None
            strings = array.array("B", struct.pack("=III", ETHTOOL_GSTRINGS, ETH_SS_STATS, count)
                                  + b"\0" * (count * ETH_GSTRING_LEN))
            _ethtool(sock, ifname, strings)
            stats = array.array("B", struct.pack("=II", ETHTOOL_GSTATS, count) + b"\0" * (count * 8))
            _ethtool(sock, ifname, stats)
        except (IOError, OSError) as e:
            if e.errno in ABSENT:
                return None
            raise
    finally:
        sock.close()
    n_strings = min(count, struct.unpack_from("=I", strings, 8)[0])
    n_stats = min(count, struct.unpack_from("=I", stats, 4)[0])
    raw = strings.tobytes()[12:]
    names = [raw[i * ETH_GSTRING_LEN:(i + 1) * ETH_GSTRING_LEN].split(b"\0", 1)[0].decode("utf-8", "replace")
             for i in range(n_strings)]
    values = struct.unpack_from("=%dQ" % n_stats, stats, 8)
    return dict(zip(names, values))
