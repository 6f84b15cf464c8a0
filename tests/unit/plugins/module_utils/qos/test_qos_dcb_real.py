# -*- coding: utf-8 -*-
"""The dcb backend's parsers and its test double against REAL output captured
in the VM lab: iproute2 6.1 / ethtool 6.1 on Debian 12 (kernel 6.1), the
dcbsim DCB driver and virtio-net (tests/unit/fixtures/qos/dcb_real_lab).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs, dcb, netdev
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import default_dscp_table
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    FIXTURES,
    DcbPort,
    FakeDcbTool,
    FakeEthtool,
)

with open(os.path.join(FIXTURES, "dcb_real_lab", "captures.json")) as _f:
    CAPTURES = dict((c["name"], c) for c in json.load(_f)["captures"])


def out(name):
    return CAPTURES[name]["stdout"]


def test_capture_versions_are_the_lab_stack():
    text = out("info_versions")
    assert "dcb utility, iproute2-6.1.0" in text and "ethtool version 6.1" in text and "6.1.0-56-amd64" in text


def test_real_pfc():
    assert dcb.parse_pfc(out("pfc_initial")) == {"pfc": [], "delay": 0}
    assert dcb.parse_pfc(out("pfc_prio3")) == {"pfc": [3], "delay": 0}
    assert dcb.parse_pfc(out("pfc_prio3_6")) == {"pfc": [3, 6], "delay": 4096}
    assert dcb.parse_pfc(out("pfc_initial_stats"))["pfc"] == []


def test_real_ets():
    e = dcb.parse_ets(out("ets_initial"))
    assert e["prio_tc"] == [0] * 8 and all(e["ets"][tc] == {"tsa": "strict", "bw": 0} for tc in range(8))
    e = dcb.parse_ets(out("ets_valid"))
    assert e["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert e["ets"][0] == {"tsa": "ets", "bw": 50} and e["ets"][3] == {"tsa": "ets", "bw": 50}
    assert e["ets"][6] == {"tsa": "strict", "bw": 0}
    assert dcb.parse_ets(out("num_tc4_ets"))["prio_tc"] == [0] * 8


def test_real_app():
    assert dcb.parse_app(out("app_initial")) == {}
    assert dcb.parse_app(out("app_dscp")) == {26: [3], 48: [6]}
    assert dcb.parse_app(out("app_dscp_two_prios")) == {26: [3, 5], 48: [6]}
    assert dcb.parse_app(out("app_mixed")) == {26: [3], 48: [6]}       # other selectors ignored
    assert dcb.parse_app(out("app_full_table")) == default_dscp_table()
    assert dcb.parse_app(out("app_after_flush")) == {}


def test_real_dcbx():
    assert dcb.parse_dcbx(out("dcbx_initial")) == ["host", "ieee"]


@pytest.mark.parametrize("name", ["virtio_dcb_pfc", "virtio_dcb_ets", "virtio_dcb_app"])
def test_real_virtio_refusal_is_recognised(name):
    c = CAPTURES[name]
    assert c["rc"] == 1 and dcb.NOT_SUPPORTED in c["stderr"].lower()


def test_real_ethtool_text_and_why_json_is_not_used():
    assert netdev.parse_pause(out("pause_show")) == {"autoneg": False, "rx": False, "tx": False}
    assert netdev.parse_pause(out("pause_on")) == {"autoneg": False, "rx": True, "tx": True}
    # ethtool 6.1 --json -a prints true for everything (pause was off): only the text is trustworthy
    assert json.loads(out("pause_show_json"))[0]["rx"] is True
    c = CAPTURES["virtio_pause_show"]
    assert c["rc"] == 1 and c["stderr"] == FakeEthtool.UNSUPPORTED


def test_real_configfs_values():
    tos, mode = out("configfs").splitlines()[:2]
    assert int(tos) == 0 and configfs.parse_mode(mode) == "v2"


# Real command sequence replayed against FakeDcbTool: every answer must match
# the capture byte for byte (rc, stdout, stderr). ("!" lines change the
# double's fault injection the way the capture changed dcbsim's ``fail``.)
REPLAY = [
    "pfc_initial", "ets_initial", "app_initial", "dcbx_initial",
    "pfc_set_prio3", "pfc_prio3",
    "app_add_dscp", "app_dscp", "app_add_duplicate", "app_add_second_prio", "app_dscp_two_prios",
    "!replace", "app_add_partly_existing", "app_after_partly_existing", "app_del_10", "app_after_replace",
    "app_del_missing",
    "ets_set_valid", "ets_valid", "ets_set_bad_sum", "ets_set_bad_tsa", "ets_after_rejects",
    "!fail=ets", "ets_set_injected", "!fail=pfc,app", "pfc_set_injected", "app_add_injected", "!fail=",
    "virtio_dcb_pfc", "virtio_dcb_ets", "virtio_dcb_app", "virtio_dcb_pfc_set", "virtio_dcb_app_add",
    "missing_dev_dcb",
]


def test_fake_dcb_tool_replays_the_real_lab_capture():
    port = DcbPort()
    tool = FakeDcbTool({"dcbsim0": port, "eth1": DcbPort(supported=False)})
    compared = 0
    for name in REPLAY:
        if name == "!replace":                     # `dcb app replace dev dcbsim0 dscp-prio 26:3`
            port.apps.remove((5, 5, 26))
            continue
        if name.startswith("!fail="):
            port.fail = set(x for x in name[6:].split(",") if x)
            continue
        c = CAPTURES[name]
        got = tool(c["command"].split())
        assert got == (c["rc"], c["stdout"], c["stderr"]), name
        compared += 1
    assert compared == len([n for n in REPLAY if not n.startswith("!")])
    assert port.pfc_en == 1 << 3 and port.prio_tc == [0, 0, 0, 3, 0, 0, 6, 0]
