# -*- coding: utf-8 -*-
"""Parsers of the QoS backends against REAL tool output (tests/unit/fixtures/qos/README.md).

mlnx_qos: four captures from public sources (three machines, three mlnx-tools
generations). dcb / ethtool: real refusals captured on a virtio-net interface
(Debian 12, iproute2 6.1.0, ethtool 6.1), other dcb JSON forms as quoted on
the netdev list; ``ethtool -a`` text as in the kernel docs. The full real
iproute2 6.1 lab capture is tested in test_qos_dcb_real.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs, dcb, mlnx_qos, netdev
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, default_dscp_table
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    FakeMlnxQos,
    MlnxPort,
    fixture_text,
)


# -- mlnx_qos ------------------------------------------------------------
def test_mlnx_qos_netarbiter_trust_dscp_default_table():
    s = mlnx_qos.parse(fixture_text("mlnx_qos", "netarbiter_eth4_trust_dscp.txt"))
    assert s["dcbx_mode"] == "OS controlled"
    assert s["trust"] == "dscp"
    assert s["dscp2prio"] == default_dscp_table()
    assert s["pfc"] == [3]
    assert s["cable_len"] == 7
    assert s["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]
    assert all(s["ets"][tc]["tsa"] == "vendor" and s["ets"][tc]["bw"] == 0 for tc in range(8))


def test_mlnx_qos_custom_mapping_wrapped_lines_and_buffers():
    s = mlnx_qos.parse(fixture_text("mlnx_qos", "ens14f0_dscp_custom_pfc3.txt"))
    assert s["trust"] == "dscp"
    # DSCP 30 was moved to priority 6; its line wrapped after 8 entries ("prio:6 dscp:48,")
    assert s["dscp2prio"][30] == [6]
    assert s["dscp2prio"][48] == [6]
    assert s["dscp2prio"][26] == [3]
    assert len(s["dscp2prio"]) == 64
    assert s["pfc"] == [3]


def test_mlnx_qos_trust_pcp_has_no_table():
    s = mlnx_qos.parse(fixture_text("mlnx_qos", "ens14f0_trust_pcp.txt"))
    assert s["trust"] == "pcp"
    assert s["dscp2prio"] == {}
    assert s["pfc"] == [3]


def test_mlnx_qos_ets_strict_and_bandwidths_from_nvidia_doc():
    s = mlnx_qos.parse(fixture_text("mlnx_qos", "mellanox_doc2792_eth2_ets.txt"))
    assert s["pfc"] == [0, 2, 6, 7]
    assert s["cable_len"] == 10
    assert s["ets"][6] == {"tsa": "strict", "bw": 0, "ratelimit": "unlimited"}
    assert s["ets"][7]["bw"] == 40
    assert sum(e["bw"] for e in s["ets"].values() if e["tsa"] == "ets") == 100
    assert s["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7]


def test_mlnx_qos_parse_rejects_unrelated_text():
    with pytest.raises(QosError):
        mlnx_qos.parse("ETS features are not supported on your system\n")


def test_fake_mlnx_qos_prints_what_the_real_parser_reads():
    """The test double's output (a port of mlnx_qos pretty_print) parses like the real captures."""
    port = MlnxPort()
    port.apps = [(5, 6, 30)] + [(5, i >> 3, i) for i in reversed(range(64)) if i != 30]
    port.pfc_en = 1 << 3
    rc, out, err = FakeMlnxQos({"ens14f0": port})(["mlnx_qos", "-i", "ens14f0"])
    assert rc == 0
    assert "\tprio:6 dscp:30,55,54,53,52,51,50,49,\n\tprio:6 dscp:48," in out
    assert mlnx_qos.parse(out)["dscp2prio"] == mlnx_qos.parse(fixture_text("mlnx_qos", "ens14f0_dscp_custom_pfc3.txt"))["dscp2prio"]


# -- dcb -----------------------------------------------------------------
@pytest.mark.parametrize("text", [
    '{"dscp_prio":[[26,3],[48,6]]}\n',                      # iproute2 6.1 (as captured in the lab)
    '{"dscp_prio":[[26,3," "],[48,6," "]]}\n',              # iproute2 6.4-6.13 stray " " element
    '{\n    "dscp_prio": [ [ 26,3," " ],[ 48,6," " ] ]\n}\n',  # -p pretty form, as quoted on netdev (2024)
])
def test_dcb_app_formats_of_all_iproute2_versions(text):
    assert dcb.parse_app(text) == {26: [3], 48: [6]}


def test_dcb_app_empty_and_multi_priority():
    assert dcb.parse_app("{}\n") == {}
    assert dcb.parse_app('{"default_prio":[0],"dscp_prio":[[26,5],[26,3]]}') == {26: [3, 5]}


def test_dcb_dcbx():
    assert dcb.parse_dcbx('{"host":true,"ieee":true}\n') == ["host", "ieee"]


@pytest.mark.parametrize("text", ['{"prio_pfc":[true]}', "not json", "[1,2]"])
def test_dcb_bad_output_is_an_error(text):
    with pytest.raises(dcb.DcbParseError):
        dcb.parse_pfc(text)


def test_real_dcb_refusal_on_virtio_is_detected_as_unsupported():
    out = fixture_text("dcb", "virtio_pfc_show.stdout")
    err = fixture_text("dcb", "virtio_pfc_show.stderr")
    assert fixture_text("dcb", "virtio_pfc_show.rc").strip() == "1"
    assert out == "\n" and err == "Attribute read: Operation not supported\n"
    assert dcb.NOT_SUPPORTED in err.lower()


# -- ethtool / configfs --------------------------------------------------
def test_ethtool_pause_text():
    # Documentation/networking/statistics.rst (tabs) and an older layout with negotiated lines.
    p = netdev.parse_pause("Pause parameters for eth0:\nAutonegotiate:\ton\nRX:\t\t\ton\nTX:\t\t\ton\n")
    assert p == {"autoneg": True, "rx": True, "tx": True}
    p = netdev.parse_pause("Pause parameters for eth0:\nAutonegotiate:  on\nRX:             off\nTX:             off\n"
                           "RX negotiated: on\nTX negotiated: on\n")
    assert p == {"autoneg": True, "rx": False, "tx": False}
    assert netdev.pause_value(p) is False
    assert netdev.pause_value({"rx": True, "tx": False}) == "rx on, tx off"


def test_real_ethtool_refusal_on_virtio():
    assert fixture_text("ethtool", "virtio_a.rc").strip() == "1"
    assert fixture_text("ethtool", "virtio_a.stdout") == ""
    assert "not supported" in fixture_text("ethtool", "virtio_a.stderr").lower()
    with pytest.raises(QosError):
        netdev.parse_pause(fixture_text("ethtool", "virtio_a.stdout"))


@pytest.mark.parametrize("text,mode", [("RoCE v2\n", "v2"), ("IB/RoCE v1\n", "v1"), ("RoCE v1", "v1"), ("junk", None)])
def test_configfs_mode_text(text, mode):
    assert configfs.parse_mode(text) == mode
