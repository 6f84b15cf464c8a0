# -*- coding: utf-8 -*-
"""Unit tests for module_utils/common/qos_model.py: validation, normalisation, merge, render."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError


def norm(**params):
    return model.normalise(params)


@pytest.mark.parametrize("params,param,needle", [
    ({"pfc": [3, 8]}, "pfc", "priority 8 is out of range; allowed 0-7"),
    ({"pfc": [-1]}, "pfc", "allowed 0-7"),
    ({"pfc": "3"}, "pfc", "expected a list of priorities 0-7"),
    ({"pfc": [True]}, "pfc", "is a boolean"),
    ({"dscp2prio": {64: 3}}, "dscp2prio", "DSCP 64 is out of range; allowed 0-63"),
    ({"dscp2prio": {"26": 9}}, "dscp2prio", "priority 9 is out of range; allowed 0-7"),
    ({"dscp2prio": {"x": 1}}, "dscp2prio", "is not an integer; allowed 0-63"),
    ({"dscp2prio": [26, 3]}, "dscp2prio", "expected a mapping"),
    ({"roce_tos": 256}, "roce_tos", "ToS 256 is out of range; allowed 0-255"),
    ({"roce_tos": -1}, "roce_tos", "allowed 0-255"),
    ({"mtu": 67}, "mtu", "MTU 67 is out of range; allowed 68-9978"),
    ({"mtu": 10000}, "mtu", "allowed 68-9978"),
    ({"trust": "cos"}, "trust", "choose one of pcp, dscp"),
    ({"roce_mode": "v3"}, "roce_mode", "choose one of v1, v2"),
    ({"prio_tc": [0, 1, 2]}, "prio_tc", "must have 8 entries"),
    ({"prio_tc": {8: 1}}, "prio_tc", "priority 8 is out of range"),
    ({"prio_tc": {1: 8}}, "prio_tc", "traffic class 8 is out of range; allowed 0-7"),
    ({"ets": [{"tc": 9, "tsa": "ets", "bw": 100}]}, "ets", "traffic class 9 is out of range"),
    ({"ets": [{"tc": 0, "tsa": "wrr", "bw": 100}]}, "ets", "choose one of ets, strict, vendor"),
    ({"ets": [{"tc": 0, "tsa": "ets"}]}, "ets", "has tsa ets but no bw"),
    ({"ets": [{"tc": 0, "tsa": "strict", "bw": 10}]}, "ets", "bw must be 0 or omitted"),
    ({"ets": [{"tc": 0, "bw": 60}, {"tc": 1, "bw": 60}]}, "ets", "sum to 120%"),
    ({"ets": [{"tc": 0, "bw": 50}, {"tc": 0, "bw": 50}]}, "ets", "listed twice"),
    ({"ets": [{"tc": 0, "bw": 50, "weight": 1}]}, "ets", "unknown key(s) weight"),
    ({"ets": [{"tsa": "ets", "bw": 50}]}, "ets", "has no tc"),
    ({"ecn": {"np": [3], "xx": [1]}}, "ecn", "allowed keys: np (notification point), rp (reaction point)"),
    ({"ecn": {"np": [3, 9]}}, "ecn", "allowed 0-7"),
    ({"cnp": {"dscp": 64}}, "cnp", "allowed 0-63"),
    ({"cnp": {"priority": 8}}, "cnp", "allowed 0-7"),
    ({"cnp": {"pcp": 6}}, "cnp", "allowed keys: dscp (0-63), priority (0-7)"),
    ({"pause": "yes"}, "pause", "allowed true, false"),
    ({"trust": "pcp", "dscp2prio": {26: 3}}, "dscp2prio", "needs trust: dscp"),
])
def test_bad_input_names_parameter_and_allowed_values(params, param, needle):
    with pytest.raises(ValidationError) as exc:
        model.normalise(params)
    assert exc.value.param == param
    assert str(exc.value).startswith(param + ": ")
    assert needle in str(exc.value)


@pytest.mark.parametrize("name", ["eth0;reboot", "eth0 x", "$(id)", "a|b", "`x`", "e/th0", "x" * 16, "", "..", "eth0\n"])
def test_netdev_names_with_shell_metacharacters_are_rejected(name):
    with pytest.raises(ValidationError) as exc:
        model.check_netdev_name("netdev", name)
    assert "no spaces or shell metacharacters" in str(exc.value)


@pytest.mark.parametrize("name", ["eth0", "ens1f0np0", "dcbsim0", "bond0.100", "eth1:1", "veth-a_b"])
def test_real_netdev_names_are_accepted(name):
    assert model.check_netdev_name("netdev", name) == name


def test_normalise_forms():
    d = norm(trust="dscp", pfc=[3, 3, 0], prio_tc=[0, 0, 0, 3, 0, 0, 6, 0], dscp2prio={"26": "3", 48: 6},
             ets=[{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "bw": "50"}, {"tc": 6, "tsa": "strict"}],
             ecn={"np": [3], "rp": None}, cnp={"dscp": 48, "priority": 6}, roce_tos="106", roce_mode="v2",
             mtu=9000, pause=False)
    assert d["pfc"] == [0, 3]
    assert d["prio_tc"] == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}
    assert d["dscp2prio"] == {26: 3, 48: 6}
    assert d["ets"] == {0: {"tsa": "ets", "bw": 50}, 3: {"tsa": "ets", "bw": 50}, 6: {"tsa": "strict", "bw": 0}}
    assert d["ecn"] == {"np": [3]}
    assert d["cnp"] == {"dscp": 48, "priority": 6}
    assert d["roce_tos"] == 106 and d["mtu"] == 9000 and d["pause"] is False


def test_unset_options_are_not_managed():
    assert model.normalise({"netdev": "eth1", "pfc": None, "trust": None}) == {}
    assert norm(pfc=[]) == {"pfc": []}          # [] is "PFC off", not "unset"
    assert norm(prio_tc={"3": 3}) == {"prio_tc": {3: 3}}


def test_dscp2prio_implies_trust_dscp():
    assert norm(dscp2prio={26: 3})["trust"] == "dscp"


def _dcb_state(trust="pcp", table=None):
    return {"trust": trust, "pfc": [], "prio_tc": [0] * 8,
            "ets": dict((tc, {"tsa": "strict", "bw": 0}) for tc in range(8)),
            "dscp2prio": table if table is not None else {}}


def test_merge_trust_dscp_installs_default_table_then_overrides():
    tgt = model.merge_dcb(_dcb_state(), norm(trust="dscp", dscp2prio={26: 5}), app_trust=True)
    assert tgt["trust"] == "dscp"
    assert len(tgt["dscp2prio"]) == 64
    assert tgt["dscp2prio"][26] == [5]
    assert tgt["dscp2prio"][48] == [6] and tgt["dscp2prio"][7] == [0]


def test_merge_keeps_unlisted_dscps_and_replaces_multi_priority_entries():
    cur = _dcb_state("dscp", {10: [1], 26: [3, 5]})
    tgt = model.merge_dcb(cur, norm(dscp2prio={26: 3}), app_trust=True)
    assert tgt["dscp2prio"] == {10: [1], 26: [3]}
    assert model.app_table_diff(cur["dscp2prio"], tgt["dscp2prio"]) == ([], [(26, 5)])


def test_merge_trust_pcp_removes_dscp_entries_only_where_trust_is_app_based():
    cur = _dcb_state("dscp", {26: [3]})
    assert model.merge_dcb(cur, norm(trust="pcp"), app_trust=True)["dscp2prio"] == {}
    assert model.merge_dcb(cur, norm(trust="pcp"), app_trust=False)["dscp2prio"] == {26: [3]}


def test_merge_ets_keeps_unlisted_classes_zeroes_non_ets_bw_and_checks_sum():
    cur = _dcb_state()
    cur["ets"][1] = {"tsa": "vendor", "bw": 12}
    tgt = model.merge_dcb(cur, norm(ets=[{"tc": 0, "bw": 60}, {"tc": 3, "bw": 40}]), app_trust=True)
    assert tgt["ets"][0] == {"tsa": "ets", "bw": 60}
    assert tgt["ets"][1] == {"tsa": "vendor", "bw": 0}
    cur["ets"][5] = {"tsa": "ets", "bw": 30}
    with pytest.raises(ValidationError) as exc:
        model.merge_dcb(cur, norm(ets=[{"tc": 0, "bw": 60}, {"tc": 3, "bw": 40}]), app_trust=True)
    assert exc.value.param == "ets"
    assert "[0, 3, 5]" in str(exc.value) and "summing to 130%" in str(exc.value)


def test_merge_prio_tc_partial():
    tgt = model.merge_dcb(_dcb_state(), norm(prio_tc={3: 3, 6: 6}), app_trust=True)
    assert tgt["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]


def test_render_restricts_to_managed_options():
    state = _dcb_state("dscp", {26: [3], 48: [5, 6]})
    state.update({"roce_tos": 106, "mtu": 1500, "ecn": {"np": [3], "rp": [3]}})
    desired = norm(dscp2prio={26: 3, 48: 6, 10: 1}, roce_tos=106, ecn={"rp": [3]})
    view = model.render(state, desired)
    assert view == {"trust": "dscp", "dscp2prio": {"10": None, "26": 3, "48": [5, 6]},
                    "ecn": {"rp": [3]}, "roce_tos": 106}


# -- forms users know (issue 16) ----------------------------------------
@pytest.mark.parametrize("value,expected", [
    # the 8 PFC flags of `mlnx_qos --pfc` / NicConfigurationTemplate qos.pfc: priority 3 lossless
    ([0, 0, 0, 1, 0, 0, 0, 0], [3]),
    ("0,0,0,1,0,0,0,0", [3]),
    (" 0, 0, 0, 1, 0, 0, 0, 0 ", [3]),
    (["0", "0", "0", "1", "0", "0", "0", "0"], [3]),
    ([0, 0, 0, 1, 1, 0, 0, 0], [3, 4]),
    ([0] * 8, []),
    ([1] * 8, list(range(8))),
    # lists of priorities (strings and a lone integer as Ansible reads a list option)
    ([3], [3]),
    ([0, 1], [0, 1]),
    ([1], [1]),
    ([0], [0]),
    ([3, 4], [3, 4]),
    ([3, 3, 0], [0, 3]),
    ([7, 6, 5, 4, 3, 2, 1, 0], list(range(8))),
    ([], []),
    ("3", [3]),
    ("3,4", [3, 4]),
    (3, [3]),
])
def test_pfc_forms(value, expected):
    assert model.normalise_input({"pfc": value}) == {"pfc": expected}


@pytest.mark.parametrize("value,needle", [
    # fewer than 8 flags with repeats: cut-short flags or priorities 0 and 1 twice
    ([0, 0, 0, 1], "it has 4 entries, not 8; as a list of lossless priorities it names priority 0 more than once"),
    ("0,0,0,1", "it has 4 entries, not 8"),
    ([1, 1], "it has 2 entries, not 8"),
    ([0, 0, 0, 1, 0, 0, 0], "it has 7 entries, not 8"),
    ([0, 0, 0, 1, 0, 0, 0, 0, 0], "it has 9 entries, not 8"),
    # 8 entries with repeats that are not all 0/1: flags with a typo, or priorities 0 and 2
    ("0,0,0,2,0,0,0,0", "its entries must be 0 or 1, not 2; as a list of lossless priorities it names priority 0"),
    ([3] * 8, "its entries must be 0 or 1, not 3"),
])
def test_pfc_forms_that_read_both_ways_are_rejected_showing_both(value, needle):
    with pytest.raises(ValidationError) as exc:
        model.normalise_input({"pfc": value})
    msg = str(exc.value)
    assert exc.value.param == "pfc" and "reads two ways" in msg and needle in msg
    assert "[3]" in msg and "0,0,0,1,0,0,0,0" in msg      # both forms shown


@pytest.mark.parametrize("value", ["three", "3;4", {"3": True}, [9], [True]])
def test_pfc_other_values_are_rejected(value):
    with pytest.raises(ValidationError) as exc:
        model.normalise_input({"pfc": value})
    assert exc.value.param == "pfc"


@pytest.mark.parametrize("value,expected", [
    ("v2", "v2"), ("v1", "v1"), (2, "v2"), (1, "v1"), ("2", "v2"), ("1", "v1"),
    ("RoCE v2", "v2"), ("IB/RoCE v1", "v1"), ("RoCE v1", "v1"),
])
def test_roce_mode_accepts_the_cma_roce_mode_forms(value, expected):
    assert norm(roce_mode=value) == {"roce_mode": expected}


@pytest.mark.parametrize("value", [3, 0, True, "RoCE v3", "roce v2", ["v2"], "2\n"])
def test_roce_mode_other_values_are_rejected(value):
    with pytest.raises(ValidationError) as exc:
        norm(roce_mode=value)
    assert exc.value.param == "roce_mode"
    assert "choose one of v1, v2" in str(exc.value) and "'IB/RoCE v1'" in str(exc.value)


def test_tos_is_roce_tos_only_with_the_same_value():
    assert norm(tos=106) == {"roce_tos": 106}
    assert norm(tos="106", roce_tos=106) == {"roce_tos": 106}
    with pytest.raises(ValidationError) as exc:
        norm(tos=96, roce_tos=106)
    assert exc.value.param == "tos" and "tos 96 and roce_tos 106 differ" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        norm(tos=300)
    assert exc.value.param == "tos" and "allowed 0-255" in str(exc.value)


@pytest.mark.parametrize("params,param", [
    ({"dscp2prio": {26: 3, "26": 5}}, "dscp2prio"),
    ({"dscp2prio": {26: 3, " 26": 3}}, "dscp2prio"),
    ({"prio_tc": {3: 3, "3": 4}}, "prio_tc"),
    ({"cnp": {"dscp": 48, " dscp": 46}}, "cnp"),
])
def test_keys_with_one_meaning_given_twice_are_rejected(params, param):
    with pytest.raises(ValidationError) as exc:
        model.normalise(params)
    assert exc.value.param == param and "given twice" in str(exc.value)


def test_duplicate_keys_found_in_a_whole_call_and_in_json():
    with pytest.raises(ValidationError) as exc:
        model.check_unique_keys_in({"ports": [{"netdev": "eth1"}, {"netdev": "eth2", "dscp2prio": {26: 3, "26": 5}}]})
    assert exc.value.param == "ports[1].dscp2prio" and "the values 3 and 5" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        model.check_unique_keys_in({"dscp2prio": {26: 3, "26": 5}})
    assert exc.value.param == "dscp2prio"
    model.check_unique_keys_in({"dscp2prio": {26: 3, 48: 6}, "ports": [{"netdev": "eth1", "pfc": [3]}]})
    with pytest.raises(ValueError) as verr:
        model.loads_json('{"netdev": "eth1", "dscp2prio": {"26": 3, "26": 5}}')
    assert "'26' is given twice" in str(verr.value)


# -- the ports of a call ---------------------------------------------------
def test_single_port_form():
    (req,) = model.port_requests({"netdev": "eth1", "pfc": [3], "backend": "auto", "on_unsupported": "warn"})
    assert (req.label, req.netdev, req.desired, req.on_unsupported) == ("", "eth1", {"pfc": [3]}, "warn")


def test_list_form_defaults_overrides_and_null():
    reqs = model.port_requests({
        "trust": "dscp", "pfc": [3], "cnp": {"dscp": 48}, "backend": "dcb", "on_unsupported": "fail",
        "ports": [{"netdev": "eth1", "pfc": "0,0,0,0,1,0,0,0", "cnp": None},
                  {"device": "mlx5_0", "port": 1, "on_unsupported": "warn", "tos": 106}]})
    a, b = reqs
    assert (a.label, a.prefix, a.netdev) == ("ports[0]", "ports[0].", "eth1")
    assert a.desired == {"trust": "dscp", "pfc": [4]} and a.backend == "dcb"
    assert (b.device, b.port, b.on_unsupported) == ("mlx5_0", 1, "warn")
    assert b.desired == {"trust": "dscp", "pfc": [3], "cnp": {"dscp": 48}, "roce_tos": 106}


@pytest.mark.parametrize("params,param,needle", [
    ({"ports": [{"netdev": "eth1", "pfc": [9]}]}, "ports[0].pfc", "priority 9 is out of range"),
    ({"ports": [{"netdev": "eth1"}, {"netdev": "eth2", "mtu": 20}]}, "ports[1].mtu", "allowed 68-9978"),
    ({"ports": [{"pfc": [3]}]}, "ports[0].netdev", "give netdev, or device"),
    ({"ports": [{"netdev": "eth1", "speed": 10}]}, "ports[0]", "unknown option(s) speed"),
    ({"ports": ["eth1"]}, "ports[0]", "each port must be a mapping"),
    ({"ports": {"netdev": "eth1"}}, "ports", "expected a list of port mappings"),
    ({"ports": [{"netdev": "eth1;x"}]}, "ports[0].netdev", "shell metacharacters"),
    ({"ports": [{"netdev": "eth1", "backend": "lldptool"}]}, "ports[0].backend", "choose one of auto, dcb, mlnx_qos"),
    ({"ports": [{"netdev": "eth1", "trust": "pcp", "dscp2prio": {26: 3}}]}, "ports[0].dscp2prio", "needs trust: dscp"),
    ({"pfc": [9], "ports": [{"netdev": "eth1"}]}, "pfc", "priority 9 is out of range"),
    ({"netdev": "eth1", "ports": [{"netdev": "eth1"}]}, "ports", "not both"),
])
def test_list_form_errors_name_the_port(params, param, needle):
    with pytest.raises(ValidationError) as exc:
        model.port_requests(params)
    assert exc.value.param == param and needle in str(exc.value)


@pytest.mark.parametrize("options, words", [
    # PFC on priority 3, RoCE's DSCP 26 mapped to priority 4: RoCE traffic is lossy
    (dict(trust="dscp", pfc=[3], dscp2prio={26: 4}, roce_tos=106),
     "roce_tos: 106 is DSCP 26, which dscp2prio maps to priority 4, but pfc is on priority 3"),
    # roce_tos 0: DSCP 0, priority 0 by the default map
    (dict(trust="dscp", pfc=[3], roce_tos=0), "roce_tos: 0 is DSCP 0, which the default DSCP map (DSCP >> 3) maps to "
                                              "priority 0, but pfc is on priority 3"),
    (dict(pfc=[0, 1, 2, 3, 4, 5, 6, 7]), "pfc: PFC on all eight priorities makes every traffic class lossless"),
    (dict(trust="dscp", pfc=[3], dscp2prio={26: 3}, roce_tos=106, cnp={"priority": 3}),
     "cnp: congestion notifications (CNPs) go on priority 3, which pfc makes lossless"),
    (dict(trust="dscp", pfc=[3], dscp2prio={26: 3, 48: 3}, roce_tos=106, cnp={"dscp": 48}),
     "cnp: congestion notifications (CNPs) go on priority 3"),
])
def test_valid_but_risky_settings_are_named_with_the_risk(options, words):
    warnings = model.risks(model.normalise(options), "ports[1].")
    assert len(warnings) == 1 and warnings[0].startswith("ports[1]." + words), warnings


def test_the_common_profile_has_no_risk():
    assert model.risks(model.normalise(dict(trust="dscp", pfc=[3], dscp2prio={26: 3, 48: 6}, roce_tos=106,
                                            cnp={"dscp": 48, "priority": 6}))) == []
    assert model.risks(model.normalise(dict(trust="dscp", pfc=[3], roce_tos=106))) == []   # DSCP 26 >> 3 = 3
    assert model.risks(model.normalise(dict(trust="pcp", pfc=[3], roce_tos=0))) == []      # PCP: not known here


@pytest.mark.parametrize("key", [" 26", "26 ", "\t26", "+26"])
def test_a_dscp_key_with_a_blank_or_sign_is_refused(key):
    with pytest.raises(model.ValidationError) as e:
        model.normalise(dict(dscp2prio={key: 3}))
    assert e.value.param == "dscp2prio" and "is not an integer" in str(e.value)
