# -*- coding: utf-8 -*-
"""The FakeMlnxQos TEST DOUBLE on each driver's DCB rules (MlnxPort ``personality``).

NVIDIA's mlnx_qos cannot run here (no registry has it) and no mlx5 or ice NIC
exists in CI: these tests pin the double's per-driver behaviour to what the
lab shows for real with tests/dcbsim's personalities and the netlink double
tests/unit/fixtures/mlnx_qos_double.py (its check_personalities.py
steps GQ*/MQ*/IQ*, same commands, same outcomes), so that backend tests built
on the double plan against the drivers' real rules. The last test feeds the
lab double's own output format to the mlnx_qos backend's parser.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import mlnx_qos as mq
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    SEL_DSCP,
    FakeMlnxQos,
    MlnxPort,
)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", ".."))
LAB_DOUBLE = os.path.join(REPO, "tests", "unit", "fixtures", "mlnx_qos_double.py")


def run(port, *args):
    return FakeMlnxQos({"p0": port})(["mlnx_qos", "-i", "p0"] + list(args))


def table(port):
    return sorted([a[2], a[1]] for a in port.apps if a[0] == SEL_DSCP)


# what check_personalities.py's Q1-Q3 steps show in the lab: (rc, table, trust) after each
REMAP = {
    "generic": [(0, [[26, 3]], "dscp"), (0, [[26, 3], [26, 5]], "dscp"), (0, [[26, 5]], "dscp")],
    "mlx5": [(0, [[26, 3]], "dscp"), (0, [[26, 5]], "dscp"), (1, [[26, 5]], "dscp")],
    "ice": [(0, [[26, 3]], "dscp"), (1, [[26, 3]], "dscp"), (0, [], "pcp")],
}


@pytest.mark.parametrize("personality", sorted(REMAP))
def test_set_remap_del_per_driver(personality):
    port = MlnxPort(personality=personality)
    got = []
    for arg in ("set,26,3", "set,26,5", "del,26,3"):
        rc, out, dummy = run(port, "--dscp2prio", arg)
        got.append((rc, table(port), port.trust()))
        if rc:
            assert "dscp2prio command failed" in out
    assert got == REMAP[personality]


@pytest.mark.parametrize("personality", sorted(REMAP))
def test_trust_dscp_then_pcp_goes_through_app_entries(personality):
    port = MlnxPort(personality=personality)
    assert run(port, "--trust", "dscp")[0] == 0
    assert table(port) == [[d, d >> 3] for d in range(64)] and port.trust() == "dscp"
    assert run(port, "--trust", "pcp")[0] == 0
    assert table(port) == [] and port.trust() == "pcp"


def test_remap_steps_that_work_per_driver():
    """The steps a remap of DSCP 26 from priority 3 to 5 takes, per driver, with 48 -> 6 also mapped."""
    steps = {"mlx5": ["set,26,5"], "ice": ["del,26,3", "set,26,5"], "generic": ["set,26,5", "del,26,3"]}
    for personality, args in steps.items():
        port = MlnxPort(personality=personality)
        for arg in ("set,26,3", "set,48,6"):
            assert run(port, "--dscp2prio", arg)[0] == 0
        history = []
        for arg in args:
            assert run(port, "--dscp2prio", arg)[0] == 0, (personality, arg)
            history.append(port.trust())
        assert table(port) == [[26, 5], [48, 6]] and history == ["dscp"] * len(args), personality


def test_ice_first_and_last_dscp_entry_reset_ets_and_pfc():
    """check_personalities.py I0-I2, I5-I6: the default config, desired's ETS, the DSCP defaults, PFC back."""
    port = MlnxPort(personality="ice")
    assert (port.prio_tc, port.tsa, port.tcbw) == ([0] * 8, [2] + [0] * 7, [100] + [0] * 7)
    # the PFC set commits "desired", empty so far: its ETS (every TC strict) comes along
    assert run(port, "--pfc", "0,0,0,1,0,0,0,0")[0] == 0
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == ([0] * 8, [0] * 8, [100] + [0] * 7, 0x08)
    run(port, "--dscp2prio", "set,26,3")
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == (list(range(8)), [2] * 8, [100] + [0] * 7, 0x08)
    run(port, "--dscp2prio", "del,26,3")
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == ([0] * 8, [2] + [0] * 7, [100] + [0] * 7, 0)
    # the default config was local only: the next DSCP entry commits desired, PFC 3 included
    run(port, "--dscp2prio", "set,26,3")
    assert (port.prio_tc, port.pfc_en, port.trust()) == (list(range(8)), 0x08, "dscp")


def test_ice_refused_ets_stays_in_desired():
    """check_personalities.py IE1-IE5 (with dcb there): a refused ETS makes the next PFC commit fail too."""
    port = MlnxPort(personality="ice")
    good = ("--prio_tc", "0,0,0,1,0,0,2,0", "--tsa", "ets,ets,strict,strict,strict,strict,strict,strict",
            "--tcbw", "50,50,0,0,0,0,0,0")
    assert run(port, *good)[0] == 0
    bad = ("--prio_tc", "0,0,0,1,0,0,1,0", "--tsa", "ets,ets,strict,strict,strict,ets,strict,strict",
           "--tcbw", "50,30,0,0,0,20,0,0")
    assert run(port, *bad)[0] == 1
    assert (port.prio_tc, port.tcbw) == ([0, 0, 0, 1, 0, 0, 2, 0], [50, 50] + [0] * 6)
    rc, out, dummy = run(port, "--pfc", "0,0,0,1,1,0,0,0")
    assert (rc, out, port.pfc_en) == (1, "Netlink error: Bad value. see dmesg.\n", 0)
    assert run(port, *good)[0] == 0 and port.pfc_en == 0x18     # the PFC of the failed commit comes along
    assert run(port, "--pfc", "0,0,0,1,0,0,0,0")[0] == 0 and port.pfc_en == 0x08


def test_ice_refused_ets_fails_the_next_dscp_entry_which_stays():
    """check_personalities.py IQ9-IQ13, with the netlink double there."""
    port = MlnxPort(personality="ice")
    assert run(port, "--dscp2prio", "set,26,3")[0] == 0
    # DSCP mode: prio_tc stays the identity, so all eight TCs must sum to 100
    assert run(port, "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "50,30,0,0,0,0,0,0")[0] == 1
    rc, out, dummy = run(port, "--dscp2prio", "set,10,4")
    assert (rc, out, table(port)) == (1, "dscp2prio command failed\n", [[10, 4], [26, 3]])
    assert run(port, "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "100,0,0,0,0,0,0,0")[0] == 0
    assert run(port, "--dscp2prio", "flush")[0] == 0 and (table(port), port.trust()) == ([], "pcp")


def test_ets_bandwidth_rules_per_driver():
    """mlx5 and generic sum the ETS TCs, ice the TCs that priorities use, whatever their TSA."""
    tsa = ("--tsa", "ets,ets,ets,strict,strict,strict,strict,strict")
    for personality in ("mlx5", "generic", "ice"):
        port = MlnxPort(personality=personality)
        # mlnx_qos itself refuses bandwidth on a strict TC, before any driver
        assert run(port, "--tsa", "ets,ets,strict,strict,strict,strict,strict,strict",
                   "--tcbw", "40,40,20,0,0,0,0,0")[:2] == (1, "ETS BW for a strict/vendor TC must be 0\n")
        # TCs 0-2 in use, 50 + 30 + 0: refused by all three
        rc, out, dummy = run(port, "--prio_tc", "0,0,0,1,0,0,2,0", *(tsa + ("--tcbw", "50,30,0,0,0,0,0,0")))
        assert (rc, out.splitlines()[-1]) == (1, "Netlink error: Bad value. see dmesg."), personality
        # 20% on the ETS TC2 that no priority uses: the ETS sum is 100, the sum of the TCs in use 80
        rc = run(port, "--prio_tc", "0,0,0,1,0,0,1,0", *(tsa + ("--tcbw", "50,30,20,0,0,0,0,0")))[0]
        assert rc == (1 if personality == "ice" else 0), personality
    # ice: non-contiguous TCs (0, 3, 6) are taken, then the default config replaces them
    port = MlnxPort(personality="ice")
    assert run(port, "--pfc", "0,0,0,1,0,0,0,0", "--prio_tc", "0,0,0,3,0,0,6,0",
               "--tsa", "ets,strict,strict,ets,strict,strict,strict,strict", "--tcbw", "50,0,0,50,0,0,0,0")[0] == 0
    assert (port.prio_tc, port.tcbw, port.pfc_en) == ([0] * 8, [100] + [0] * 7, 0)


def _load_lab_double():
    spec = importlib.util.spec_from_file_location("mlnx_qos_double", LAB_DOUBLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lab_double_output_parses_and_ice_loses_the_tc_lines():
    lab = _load_lab_double()
    state = {"dcbx": 0x9, "trust": "dscp", "dscp_pairs": [(26, 3), (48, 6)], "delay": 7, "pfc_en": 0x08,
             "prio_tc": [1, 0, 2, 3, 4, 5, 6, 7], "tsa": [255] * 8, "tc_bw": [0] * 8, "printall": True,
             "buffer": {"prio2buffer": [0] * 8, "buffer_size": [524288] + [0] * 7, "total_size": 524288},
             "ratelimit": [0] * 8}
    parsed = mq.parse(lab.pretty(state))
    assert parsed["trust"] == "dscp" and parsed["dscp2prio"] == {26: [3], 48: [6]} and parsed["pfc"] == [3]
    assert parsed["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7] and sorted(parsed["ets"]) == list(range(8))
    # ice: no buffer, no maxrate op -> mlnx_qos prints the TC lines without "tc: N ratelimit: ..., tsa:"
    state.update(buffer=None, ratelimit=[])
    text = lab.pretty(state)
    assert "\nvendor\n" in text and "tc: " not in text
    parsed = mq.parse(text)
    assert parsed["ets"] == {} and parsed["prio_tc"] == [None] * 8
