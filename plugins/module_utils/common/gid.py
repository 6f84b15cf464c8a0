# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""RDMA GID helpers: parse, normalise, classify and decode GIDs.

Pure functions, no I/O, standard library only, so that modules, filters
(``nccl_env``) and tests can share them.

A GID is 128 bits. The kernel prints it in sysfs (``ports/N/gids/I``) as eight
groups of four hex digits, never compressed
(``fe80:0000:0000:0000:ba59:9fff:fed3:6f12``); tools such as ``ibv_devinfo``
print it as IPv6 text (``fe80::ba59:9fff:fed3:6f12``, ``::ffff:192.0.2.11``).
:func:`normalise_gid` turns either form into the sysfs form, which is the
form the facts report.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
# Prefix of an IPv4-mapped GID (::ffff:a.b.c.d), the form RoCE v2 uses for IPv4.
_V4_MAPPED_PREFIX = "0000:0000:0000:0000:0000:ffff:"
# Used with re.fullmatch only ("$" would let a trailing newline through).
_SYSFS_GID_RE = re.compile(r"[0-9a-fA-F]{4}(?::[0-9a-fA-F]{4}){7}")
_HEX_RE = re.compile(r"[0-9a-fA-F]{1,4}")
_IPV4_RE = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})")

# Raw sysfs gid_attrs/types values -> normalised type, per link layer.
GID_TYPE_ROCE_V1 = "RoCE v1"
GID_TYPE_ROCE_V2 = "RoCE v2"
GID_TYPE_IB = "IB"
GID_TYPE_IWARP = "iWARP"
GID_TYPES = (GID_TYPE_IB, GID_TYPE_ROCE_V1, GID_TYPE_ROCE_V2, GID_TYPE_IWARP)


def _ipv4_groups(text):
    """Two 4-hex-digit groups for a dotted IPv4 string, else None."""
    m = _IPV4_RE.fullmatch(text)
    if not m:
        return None
    octets = [int(x) for x in m.groups()]
    if any(o > 255 for o in octets):
        return None
    return ["%02x%02x" % (octets[0], octets[1]), "%02x%02x" % (octets[2], octets[3])]


def _expand(text):
    """Eight 4-digit lowercase groups for IPv6 text (compressed or not), else None."""
    if "::" in text:
        if text.count("::") > 1:
            return None
        head, tail = text.split("::")
        head = head.split(":") if head else []
        tail = tail.split(":") if tail else []
    else:
        head, tail = text.split(":"), []
    # An embedded dotted IPv4 may end the address (::ffff:192.0.2.11).
    parts = tail if tail else head
    if parts and "." in parts[-1]:
        v4 = _ipv4_groups(parts[-1])
        if v4 is None:
            return None
        parts[-1:] = v4
    groups = head + tail
    if "::" in text:
        missing = 8 - len(groups)
        if missing < 1:
            return None
        groups = head + ["0"] * missing + tail
    if len(groups) != 8 or not all(_HEX_RE.fullmatch(g) for g in groups):
        return None
    return [g.lower().zfill(4) for g in groups]


def normalise_gid(text):
    """GID in the kernel's sysfs form (8 x 4 lowercase hex digits) or None.

    Accepts the sysfs form, compressed IPv6 text and IPv4-mapped text
    (``::ffff:192.0.2.11``). Returns None for anything that is not a GID.
    """
    if not isinstance(text, str):
        return None
    text = text.strip()
    if _SYSFS_GID_RE.fullmatch(text):
        return text.lower()
    groups = _expand(text)
    return ":".join(groups) if groups else None


def is_empty_gid(gid):
    """True for an all-zero (empty slot) or unparsable GID."""
    norm = normalise_gid(gid)
    return norm is None or norm == ZERO_GID


def is_unused_gid(gid):
    """True for a sysfs-form GID whose interface ID (the low 64 bits) is zero: not a GID.

    The kernel prints every slot of a port's GID table; an unused slot reads
    all zeros, or, on older kernels (2013 captures without ``gid_attrs``), the
    port's subnet prefix over a zero interface ID
    (``fe80:0000:0000:0000:0000:0000:0000:0000``). rdma-core's ``ibv_devinfo``
    and hwloc skip both by the same rule: a zero interface ID.
    """
    return gid is None or gid[20:] == ZERO_GID[20:]


def compress_ipv6(gid):
    """RFC 5952 text of a sysfs-form GID (longest zero run -> ``::``, first on ties)."""
    groups = [h.lstrip("0") or "0" for h in gid.split(":")]
    best_start, best_len, start, length = -1, 0, -1, 0
    for i, h in enumerate(groups):
        if h == "0":
            if start < 0:
                start, length = i, 1
            else:
                length += 1
            if length > best_len:
                best_start, best_len = start, length
        else:
            start, length = -1, 0
    if best_len < 2:
        return ":".join(groups)
    return ":".join(groups[:best_start]) + "::" + ":".join(groups[best_start + best_len:])


def gid_ip(gid):
    """``(ip, ip_version)`` a GID stands for, or ``(None, None)``.

    IPv4-mapped GIDs (``::ffff:a.b.c.d``, what RoCE v2 uses for IPv4) give
    dotted IPv4 and version 4; every other non-empty GID gives its compressed
    IPv6 text and version 6. Input may be in any form :func:`normalise_gid` accepts.
    """
    norm = gid if (isinstance(gid, str) and _SYSFS_GID_RE.fullmatch(gid)) else normalise_gid(gid)
    if norm is None:
        return None, None
    norm = norm.lower()
    if norm == ZERO_GID:
        return None, None
    if norm.startswith(_V4_MAPPED_PREFIX):
        hi, lo = norm[30:34], norm[35:39]
        return "%d.%d.%d.%d" % (int(hi[:2], 16), int(hi[2:], 16), int(lo[:2], 16), int(lo[2:], 16)), 4
    return compress_ipv6(norm), 6


def normalise_gid_type(raw, link_layer, iwarp=False):
    """Normalised GID type from a raw ``gid_attrs/types`` value.

    The kernel prints ``IB/RoCE v1`` for both InfiniBand GIDs and RoCE v1
    GIDs; the port's link layer tells them apart: ``IB`` on an InfiniBand port,
    ``RoCE v1`` on an Ethernet port (``iWARP`` on an iWARP device, whose GIDs
    the kernel also prints as ``IB/RoCE v1``). ``RoCE v2`` stays. Unknown text
    is returned unchanged; None stays None.
    """
    if raw is None:
        return None
    raw = raw.strip()
    if raw == "IB/RoCE v1" or raw in ("IB", "RoCE v1", "RoCE"):
        if iwarp:
            return GID_TYPE_IWARP
        if link_layer == "InfiniBand":
            return GID_TYPE_IB
        return GID_TYPE_ROCE_V1
    if raw in ("RoCE v2", "RoCEv2", "RoCE V2"):
        return GID_TYPE_ROCE_V2
    return raw or None
