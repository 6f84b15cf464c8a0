# -*- coding: utf-8 -*-
"""The FakeMlnxQos TEST DOUBLE on each driver's DCB rules (MlnxPort ``personality``).

NVIDIA's mlnx_qos cannot run here (no registry has it) and no mlx5 or ice NIC
exists in CI: these tests pin the double's per-driver behaviour to what the
lab shows for real with tests/dcbsim's personalities and the netlink double
tests/unit/fixtures/mlnx_qos_double.py (its check_personalities.py
steps GQ*/MQ*/IQ*, same commands, same outcomes; that double was compared
with the real mlnx_qos there, tests/dcbsim/compare-mlnx-qos), so that backend
tests built on the double plan against the drivers' real rules. On ice (no
DCB buffer op) every mlnx_qos call dies with a traceback after its PFC,
dscp2prio and trust changes, exit 1, and never sets ETS: the ice driver's own
ETS/PFC rules are pinned through the driver model, as iproute2 dcb drives
them in the lab (check_personalities.py I*, IE*). The last tests run the lab
double's own control flow and output format.
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


# what check_personalities.py's Q1-Q3 steps show in the lab: (rc, table, trust) after each; on ice (no DCB buffer
# op) mlnx_qos dies after each change (the refused set stops before, with its own message)
REMAP = {
    "generic": [(0, [[26, 3]], "dscp"), (0, [[26, 3], [26, 5]], "dscp"), (0, [[26, 5]], "dscp")],
    "mlx5": [(0, [[26, 3]], "dscp"), (0, [[26, 5]], "dscp"), (1, [[26, 5]], "dscp")],
    "ice": [(1, [[26, 3]], "dscp"), (1, [[26, 3]], "dscp"), (1, [], "pcp")],
}
NO_BUFFER_DEATH = "AttributeError: 'KeyError' object has no attribute 'errno'\n"


@pytest.mark.parametrize("personality", sorted(REMAP))
def test_set_remap_del_per_driver(personality):
    port = MlnxPort(personality=personality)
    got = []
    for arg in ("set,26,3", "set,26,5", "del,26,3"):
        rc, out, err = run(port, "--dscp2prio", arg)
        got.append((rc, table(port), port.trust()))
        if rc:
            assert "dscp2prio command failed" in out or err.endswith(NO_BUFFER_DEATH), (out, err)
    assert got == REMAP[personality]


@pytest.mark.parametrize("personality", sorted(REMAP))
def test_trust_dscp_then_pcp_goes_through_app_entries(personality):
    port = MlnxPort(personality=personality)
    rc = 1 if personality == "ice" else 0   # ice: the change made, then the traceback
    assert run(port, "--trust", "dscp")[0] == rc
    assert table(port) == [[d, d >> 3] for d in range(64)] and port.trust() == "dscp"
    assert run(port, "--trust", "pcp")[0] == rc
    assert table(port) == [] and port.trust() == "pcp"


def test_remap_steps_per_driver():
    """The steps a remap of DSCP 26 from priority 3 to 5 takes, per driver, with 48 -> 6 also mapped (ice: each
    step's change made, each call exits 1 with the traceback)."""
    steps = {"mlx5": ["set,26,5"], "ice": ["del,26,3", "set,26,5"], "generic": ["set,26,5", "del,26,3"]}
    for personality, args in steps.items():
        port = MlnxPort(personality=personality)
        rc = 1 if personality == "ice" else 0
        for arg in ("set,26,3", "set,48,6"):
            assert run(port, "--dscp2prio", arg)[0] == rc
        history = []
        for arg in args:
            assert run(port, "--dscp2prio", arg)[0] == rc, (personality, arg)
            history.append(port.trust())
        assert table(port) == [[26, 5], [48, 6]] and history == ["dscp"] * len(args), personality


def test_ice_every_call_dies_after_its_change_and_never_sets_ets():
    """mlnx-tools 8fbfd9c on a driver without the DCB buffer op (the lab's real mlnx_qos on dcbsim's ice): the PFC,
    dscp2prio and trust changes are made, then the buffer read dies (KeyError 10, then AttributeError in mlnx_qos's
    handler), exit 1, nothing on stdout; the ETS step comes after it and never runs; ``-a`` dies the same way."""
    port = MlnxPort(personality="ice")
    rc, out, err = run(port, "-a")
    assert (rc, out) == (1, "") and err == FakeMlnxQos.NO_BUFFER_TRACEBACK
    assert "KeyError: 10\n\nDuring handling of the above exception" in err
    rc, out, err = run(port, "--pfc", "0,0,0,1,0,0,0,0", "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets",
                       "--tcbw", "100,0,0,0,0,0,0,0", "--prio_tc", "0,1,2,3,4,5,6,7")
    assert (rc, out, err) == (1, "", FakeMlnxQos.NO_BUFFER_TRACEBACK)
    assert port.pfc_en == 0x08 and (port.prio_tc, port.tsa) == ([0] * 8, [0] * 8)    # PFC's commit, no ETS
    # where a PFC refused by the driver stops it first: mlnx_qos's "Error setting pfc:" + error, a TypeError
    port.fail.add("pfc")
    rc, out, err = run(port, "--pfc", "0,0,0,1,1,0,0,0")
    assert (rc, out) == (1, "") and err.endswith('TypeError: can only concatenate str (not "OSError") to str\n')


def test_ice_first_and_last_dscp_entry_reset_ets_and_pfc():
    """check_personalities.py I0-I2, I5-I6: the default config, desired's ETS, the DSCP defaults, PFC back (the
    mlnx_qos calls die after each change: their changes are what the driver keeps)."""
    port = MlnxPort(personality="ice")
    assert (port.prio_tc, port.tsa, port.tcbw) == ([0] * 8, [2] + [0] * 7, [100] + [0] * 7)
    # the PFC set commits "desired", empty so far: its ETS (every TC strict) comes along
    assert run(port, "--pfc", "0,0,0,1,0,0,0,0")[0] == 1
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == ([0] * 8, [0] * 8, [100] + [0] * 7, 0x08)
    run(port, "--dscp2prio", "set,26,3")
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == (list(range(8)), [2] * 8, [100] + [0] * 7, 0x08)
    run(port, "--dscp2prio", "del,26,3")
    assert (port.prio_tc, port.tsa, port.tcbw, port.pfc_en) == ([0] * 8, [2] + [0] * 7, [100] + [0] * 7, 0)
    # the default config was local only: the next DSCP entry commits desired, PFC 3 included
    run(port, "--dscp2prio", "set,26,3")
    assert (port.prio_tc, port.pfc_en, port.trust()) == (list(range(8)), 0x08, "dscp")


def test_ice_refused_ets_stays_in_desired():
    """check_personalities.py IE1-IE5 (dcb there; mlnx_qos never sets ETS on ice): a refused ETS makes the next PFC
    commit fail too."""
    port = MlnxPort(personality="ice")
    assert port.setets([2, 2, 0, 0, 0, 0, 0, 0], [50, 50] + [0] * 6, [0, 0, 0, 1, 0, 0, 2, 0])
    assert not port.setets([2, 2, 0, 0, 0, 2, 0, 0], [50, 30, 0, 0, 0, 20, 0, 0], [0, 0, 0, 1, 0, 0, 1, 0])
    assert (port.prio_tc, port.tcbw) == ([0, 0, 0, 1, 0, 0, 2, 0], [50, 50] + [0] * 6)
    assert not port.setpfc(0x18) and port.pfc_en == 0
    # the PFC of the failed commit comes along with the next good ETS
    assert port.setets([2, 2, 0, 0, 0, 0, 0, 0], [50, 50] + [0] * 6, [0, 0, 0, 1, 0, 0, 2, 0]) and port.pfc_en == 0x18
    assert port.setpfc(0x08) and port.pfc_en == 0x08


def test_ice_refused_ets_fails_the_next_dscp_entry_which_stays():
    """check_personalities.py IQ9-IQ13's driver side (the ETS by the driver model): in DSCP mode prio_tc stays the
    identity, so all eight TCs must sum to 100; the refused ETS stays in desired and the next DSCP entry's commit
    fails (mlnx_qos: "dscp2prio command failed"), the entry stays; a good ETS commits it."""
    port = MlnxPort(personality="ice")
    assert run(port, "--dscp2prio", "set,26,3")[0] == 1 and table(port) == [[26, 3]]
    assert not port.setets([2] * 8, [50, 30] + [0] * 6, list(range(8)))
    rc, out, dummy = run(port, "--dscp2prio", "set,10,4")
    assert (rc, out, table(port)) == (1, "dscp2prio command failed\n", [[10, 4], [26, 3]])
    assert port.setets([2] * 8, [100] + [0] * 7, list(range(8)))
    assert run(port, "--dscp2prio", "flush")[0] == 1 and (table(port), port.trust()) == ([], "pcp")


def test_ets_bandwidth_rules_per_driver():
    """mlx5 and generic sum the ETS TCs (through mlnx_qos), ice the TCs that priorities use, whatever their TSA (the
    driver model, as dcb drives it)."""
    tsa = ("--tsa", "ets,ets,ets,strict,strict,strict,strict,strict")
    for personality in ("mlx5", "generic"):
        port = MlnxPort(personality=personality)
        # mlnx_qos itself refuses bandwidth on a strict TC, before any driver
        assert run(port, "--tsa", "ets,ets,strict,strict,strict,strict,strict,strict",
                   "--tcbw", "40,40,20,0,0,0,0,0")[:2] == (1, "ETS BW for a strict/vendor TC must be 0\n")
        # TCs 0-2 in use, 50 + 30 + 0: refused
        rc, out, dummy = run(port, "--prio_tc", "0,0,0,1,0,0,2,0", *(tsa + ("--tcbw", "50,30,0,0,0,0,0,0")))
        assert (rc, out.splitlines()[-1]) == (1, "Netlink error: Bad value. see dmesg."), personality
        # 20% on the ETS TC2 that no priority uses: the ETS sum is 100
        assert run(port, "--prio_tc", "0,0,0,1,0,0,1,0", *(tsa + ("--tcbw", "50,30,20,0,0,0,0,0")))[0] == 0
    ice = MlnxPort(personality="ice")
    ets3 = [2, 2, 2, 0, 0, 0, 0, 0]
    assert not ice.setets(ets3, [50, 30] + [0] * 6, [0, 0, 0, 1, 0, 0, 2, 0])
    # the sum of the TCs in use (0, 1) is 80: refused
    assert not ice.setets(ets3, [50, 30, 20] + [0] * 5, [0, 0, 0, 1, 0, 0, 1, 0])
    # non-contiguous TCs (0, 3, 6) are taken, then the default config replaces them
    ice = MlnxPort(personality="ice")
    assert ice.setpfc(0x08) and ice.setets([2, 0, 0, 2, 0, 0, 0, 0], [50, 0, 0, 50, 0, 0, 0, 0], [0, 0, 0, 3, 0, 0, 6, 0])
    assert (ice.prio_tc, ice.tcbw, ice.pfc_en) == ([0] * 8, [100] + [0] * 7, 0)


def _load_lab_double():
    spec = importlib.util.spec_from_file_location("mlnx_qos_double", LAB_DOUBLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lab_double_output_parses_and_no_maxrate_loses_the_tc_prefix():
    lab = _load_lab_double()
    state = {"dcbx": 0x9, "trust": "dscp", "dscp_pairs": [(26, 3), (48, 6)], "delay": 7, "pfc_en": 0x08,
             "prio_tc": [1, 0, 2, 3, 4, 5, 6, 7], "tsa": [255] * 8, "tc_bw": [0] * 8, "printall": True,
             "buffer": {"prio2buffer": [0] * 8, "buffer_size": [524288] + [0] * 7, "total_size": 524288},
             "ratelimit": [0] * 8}
    parsed = mq.parse(lab.pretty(state))
    assert parsed["trust"] == "dscp" and parsed["dscp2prio"] == {26: [3], 48: [6]} and parsed["pfc"] == [3]
    assert parsed["prio_tc"] == [1, 0, 2, 3, 4, 5, 6, 7] and sorted(parsed["ets"]) == list(range(8))
    # a driver without the maxrate op -> mlnx_qos prints the TC lines without "tc: N ratelimit: ..., tsa:"
    state.update(ratelimit=[])
    text = lab.pretty(state)
    assert "\nvendor\n" in text and "tc: " not in text
    parsed = mq.parse(text)
    assert parsed["ets"] == {} and parsed["prio_tc"] == [None] * 8


class KernelDcb(object):
    """TEST DOUBLE of the kernel's DCB netlink answers for the lab double's control flow (its DcbNetlink's methods):
    the state of a driver without the DCB buffer and maxrate ops (ice), or with them."""

    def __init__(self, buffer_op):
        self.apps = []
        self.pfc_en = 0
        self.ets_sets = []
        self.buffer_op = buffer_op

    def ieee(self):
        return {"ets": {"tc_tx_bw": [100] + [0] * 7, "tc_tsa": [2] + [0] * 7, "prio_tc": [0] * 8},
                "pfc": {"pfc_en": self.pfc_en, "delay": 0}, "apps": list(self.apps), "maxrate": None,
                "buffer": {"prio2buffer": [0] * 8, "buffer_size": [0] * 8, "total_size": 0} if self.buffer_op else None}

    def dcbx(self):
        return 0x9

    def set_pfc(self, pfc_en, delay):
        self.pfc_en = pfc_en

    def set_app(self, selector, priority, protocol):
        self.apps.append((selector, priority, protocol))

    def del_app(self, selector, priority, protocol):
        self.apps.remove((selector, priority, protocol))

    def set_ets(self, prio_tc, tsa, tc_bw):
        self.ets_sets.append((prio_tc, tsa, tc_bw))


def _lab_main(nl, *argv):
    lab = _load_lab_double()
    opts, dummy = lab._parser().parse_args(list(argv))
    lines = []
    sysfs = lab.Sysfs("/nonexistent-sysfs", "dcbsim2")
    try:
        rc = lab._main(opts, nl, sysfs, lines.append)
    except lab.Exit as e:
        rc = e.code
        lines.append(e.message)
    return rc, lines


def test_lab_double_dies_like_mlnx_qos_without_buffer_op():
    """The lab double's own flow: the dscp2prio change and the PFC made, then the buffer read's KeyError 10 meets
    mlnx_qos's check_privilege (e.errno): AttributeError raised from inside the handler (Python prints both tracebacks
    and exits 1); the ETS is never sent. With the buffer op it runs to the listing; ETS sent."""
    nl = KernelDcb(buffer_op=False)
    with pytest.raises(AttributeError) as exc:
        _lab_main(nl, "-i", "dcbsim2", "--pfc", "0,0,0,1,0,0,0,0", "--dscp2prio", "set,26,3")
    assert str(exc.value) == "'KeyError' object has no attribute 'errno'"
    assert isinstance(exc.value.__context__, KeyError) and exc.value.__context__.args == (10,)
    assert nl.apps == [(5, 3, 26)] and nl.pfc_en == 0x08
    with pytest.raises(AttributeError):
        _lab_main(nl, "-i", "dcbsim2", "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "100,0,0,0,0,0,0,0")
    assert nl.ets_sets == []
    nl = KernelDcb(buffer_op=True)
    rc, lines = _lab_main(nl, "-i", "dcbsim1", "--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "100,0,0,0,0,0,0,0")
    assert rc == 0 and nl.ets_sets and lines[0] == "Rate limit is not supported on your system!"
    assert lines[-1].startswith("DCBX mode: OS controlled")
    # a dscp2prio argument that is no number: ValueError, the same death in the handler
    with pytest.raises(AttributeError) as exc:
        _lab_main(nl, "-i", "dcbsim1", "--dscp2prio", "set,x,3")
    assert str(exc.value) == "'ValueError' object has no attribute 'errno'"
