# -*- coding: utf-8 -*-
"""Unit tests for module_utils/runtime/netlink_stats.py (DCB netlink PFC and ethtool statistics).

The requests go to this machine's real kernel (lo has no DCB and no driver
statistics; a missing netdev is refused). The DCB answers with PFC data are
BUILT here byte by byte in the layout of the kernel's ``struct ieee_pfc`` and
rtnetlink attributes (include/uapi/linux/dcbnl.h): no DCB device is at hand
outside the lab, where the rdma_metrics scenario reads dcbsim0's real answer.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import socket
import struct

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import netlink_stats as ns


def nlattr(kind, payload):
    data = struct.pack("=HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def reply(seq, payload, kind=ns.RTM_GETDCB):
    return struct.pack("=IHHII", 16 + len(payload), kind, 0, seq, 0) + payload


def dcb_reply(seq, pfc_en, requests, indications, nested_flag=True):
    """A kernel answer to DCB_CMD_IEEE_GET (test double of the bytes dcbnl_ieee_fill() puts out)."""
    pfc = ns.IEEE_PFC.pack(8, pfc_en, 0, 0, *(list(requests) + list(indications)))
    ieee = nlattr(ns.DCB_ATTR_IEEE | (0x8000 if nested_flag else 0), nlattr(1, b"\0" * 59) + nlattr(ns.DCB_ATTR_IEEE_PFC, pfc))
    return reply(seq, struct.pack("=BBH", socket.AF_UNSPEC, ns.DCB_CMD_IEEE_GET, 0) + nlattr(ns.DCB_ATTR_IFNAME, b"dcbsim0\0") + ieee)


def test_struct_ieee_pfc_layout_is_the_kernels():
    assert ns.IEEE_PFC.size == 136  # sizeof(struct ieee_pfc) on Linux


def test_request_bytes():
    data = ns.dcb_request("dcbsim0", seq=7)
    length, kind, flags, seq, pid = struct.unpack_from("=IHHII", data)
    assert (length, kind, flags, seq, pid) == (len(data), 78, 1, 7, 0)
    assert data[16:20] == struct.pack("=BBH", socket.AF_UNSPEC, 21, 0)
    assert data[20:24] == struct.pack("=HH", 12, 1) and data[24:32] == b"dcbsim0\0"


def test_pfc_from_the_answer():
    done, pfc = ns.parse_dcb_reply(dcb_reply(1, 0b00001000, range(8), range(10, 18)))
    assert done and pfc == {"enabled": [3], "requests": list(range(8)), "indications": list(range(10, 18))}
    done, pfc = ns.parse_dcb_reply(dcb_reply(1, 0b01001001, [0] * 8, [0] * 8, nested_flag=False))
    assert pfc["enabled"] == [0, 3, 6]


def test_answers_to_other_requests_are_skipped():
    assert ns.parse_dcb_reply(dcb_reply(2, 1, [0] * 8, [0] * 8), seq=1) == (False, None)


@pytest.mark.parametrize("code", [errno.EOPNOTSUPP, errno.ENODEV, errno.EINVAL])
def test_no_dcb_reads_as_none(code):
    assert ns.parse_dcb_reply(reply(1, struct.pack("=i", -code) + b"\0" * 16, ns.NLMSG_ERROR)) == (True, None)


def test_other_kernel_errors_raise():
    with pytest.raises(OSError) as e:
        ns.parse_dcb_reply(reply(1, struct.pack("=i", -errno.EPERM) + b"\0" * 16, ns.NLMSG_ERROR))
    assert e.value.errno == errno.EPERM


def test_an_answer_without_ieee_pfc_reads_as_none():
    payload = struct.pack("=BBH", socket.AF_UNSPEC, ns.DCB_CMD_IEEE_GET, 0) + nlattr(ns.DCB_ATTR_IFNAME, b"x\0")
    assert ns.parse_dcb_reply(reply(1, payload)) == (True, None)


def test_real_kernel_loopback_has_no_dcb_and_no_driver_statistics():
    assert ns.dcb_ieee_pfc("lo") is None
    assert ns.ethtool_stats("lo") is None


def test_real_kernel_missing_netdev_reads_as_none():
    assert ns.dcb_ieee_pfc("rdmafabric-nx0") is None
    assert ns.ethtool_stats("rdmafabric-nx0") is None
