# -*- coding: utf-8 -*-
"""The QoS engine end to end against a fixture sysfs tree and the scripted
TEST DOUBLES of qos_test_doubles.py (FakeDcbTool, FakeMlnxQos, FakeIpLink,
FakeEthtool, FakeRdmaCmConfigfs): plan, apply, idempotence, check mode,
rollback on injected failures, the mlnx_qos trust trap, backend selection.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import engine
from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import ApplyError
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    DcbPort,
    FakeMlnxQos,
    FakeModule,
    LabEngine,
    write,
)

PROFILE = {"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6},
           "prio_tc": {3: 3, 6: 6}, "ets": [{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "tsa": "ets", "bw": 50}]}


class Lab(LabEngine):
    """The real lab sysfs: rxe9 on dcbsim0 (DCB) and rxe0 on virtio eth1 (no DCB), rdma_cm configfs."""

    def snapshot(self):
        p = self.dcb_ports["dcbsim0"]
        tree = SysfsTree(self.sysfs)
        return (p.pfc_en, list(p.tc_tsa), list(p.tc_tx_bw), list(p.prio_tc), sorted(p.apps),
                tree.read_int(tree.sys("class", "net", "dcbsim0", "mtu")), self.ethtool.rx, self.ethtool.tx,
                self.cfs.kernel_values("rxe9"), self.cfs.kernel_values("rxe0"))


@pytest.fixture
def lab(tmp_path, monkeypatch):
    return Lab(tmp_path, monkeypatch)


# -- dcb backend ---------------------------------------------------------
def test_dcb_applies_profile_then_is_idempotent(lab):
    r, w = lab.run(roce_tos=106, roce_mode="v2", mtu=9000, pause=False, **PROFILE)
    assert r["changed"] is True and w == []
    assert r["backend"] == "dcb" and r["backend_reason"] == "auto: iproute2 dcb is installed"
    assert r["backends"] == {"trust": "dcb", "dscp2prio": "dcb", "pfc": "dcb", "prio_tc": "dcb", "ets": "dcb",
                             "roce_tos": "configfs", "roce_mode": "configfs", "mtu": "iproute2", "pause": "ethtool"}
    p = lab.dcb_ports["dcbsim0"]
    assert p.pfc_en == 1 << 3
    assert (5, 3, 26) in p.apps and (5, 6, 48) in p.apps and p.dscp_count() == 64
    assert p.prio_tc == [0, 0, 0, 3, 0, 0, 6, 0]
    assert p.tc_tsa == [2, 0, 0, 2, 0, 0, 0, 0] and p.tc_tx_bw == [50, 0, 0, 50, 0, 0, 0, 0]
    assert lab.cfs.values[("rxe9", 1)]["default_roce_tos"] == "106"
    assert r["after"]["dscp2prio"] == {"26": 3, "48": 6} and r["after"]["mtu"] == 9000
    assert r["changes"] == {"trust": True, "dscp2prio": True, "pfc": True, "prio_tc": True, "ets": True,
                            "roce_tos": True, "roce_mode": False, "mtu": True, "pause": True}
    # configfs group created for the run and removed again (cma_roce_tos behaviour)
    assert lab.cfs.mkdirs and len(lab.cfs.mkdirs) == len(lab.cfs.rmdirs)
    assert not os.path.exists(os.path.join(lab.sysfs, "kernel", "config", "rdma_cm", "rxe9"))

    lab.host.calls[:] = []
    r2, _w = lab.run(roce_tos=106, roce_mode="v2", mtu=9000, pause=False, **PROFILE)
    assert r2["changed"] is False and r2["commands"] == []
    assert lab.host.changing_calls() == []
    assert r2["before"] == r2["after"] == r["after"]


def test_dcb_check_mode_changes_nothing_and_predicts(lab):
    before = lab.snapshot()
    r, _w = lab.run(check_mode=True, roce_tos=106, mtu=9000, **PROFILE)
    assert r["changed"] is True
    assert lab.snapshot() == before
    assert lab.host.changing_calls() == []
    assert r["commands"][0].startswith("/usr/sbin/dcb app add dev dcbsim0 dscp-prio 0:0 ")
    assert r["commands"][1] == "/usr/sbin/dcb pfc set dev dcbsim0 prio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off"
    assert r["before"]["pfc"] == [] and r["after"]["pfc"] == [3]
    assert r["after"]["roce_tos"] == 106 and r["before"]["roce_tos"] == 0


def test_dcb_rollback_when_ets_fails_part_way(lab):
    lab.run(pfc=[4])
    before = lab.snapshot()
    lab.dcb_ports["dcbsim0"].fail.add("ets")            # like dcbsim's fail=ets
    with pytest.raises(ApplyError) as exc:
        lab.run(roce_tos=106, **PROFILE)
    e = exc.value
    assert lab.snapshot() == before
    msg = str(e)
    assert "dcbsim0: step 3 of 4 (ets) failed: /usr/sbin/dcb ets set dev dcbsim0 tc-tsa 0:ets" in msg
    # iproute2 6.1 exits 0 when the driver refuses: the read-back after the set catches it
    assert "failed (rc=0): it exited 0 but the driver did not apply it: `dcb -j ets show`: tc-tsa/tc-bw read 0:strict/0" in msg
    assert "Rolled back, in reverse order:" in msg
    assert e.rolled_back == [
        "/usr/sbin/dcb pfc set dev dcbsim0 prio-pfc 0:off 1:off 2:off 3:off 4:on 5:off 6:off 7:off",
        e.rolled_back[1]]
    # the DSCP table is restored whole, from the table read then (the generic rule: dcbsim0 has no personality)
    assert e.rolled_back[1].startswith("restore the DSCP table read before the run (generic rule): /usr/sbin/dcb app del dev dcbsim0 dscp-prio 0:0 ")
    assert e.rollback_failed == []
    assert e.failed_step.startswith("/usr/sbin/dcb ets set")


def test_dcb_rollback_reports_what_could_not_be_undone(lab):
    lab.dcb_ports["dcbsim0"].fail.add("ets")
    orig = lab.host.tools["dcb"]

    def dcb_refusing_app_del(argv):
        if argv[1:3] == ["app", "del"]:
            return 1, "", "Attribute write: Input/output error\n"
        return orig(argv)
    lab.host.tools["dcb"] = dcb_refusing_app_del
    with pytest.raises(ApplyError) as exc:
        lab.run(**PROFILE)
    assert len(exc.value.rolled_back) == 1 and len(exc.value.rollback_failed) == 1
    assert ("COULD NOT roll back (left as they are now): restore the DSCP table read before the run (generic rule): {}: "
            "/usr/sbin/dcb app del dev dcbsim0 dscp-prio 0:0 ") in str(exc.value)


def test_dcb_changing_a_mapping_adds_before_deleting(lab):
    """Trap guard: the DSCP table never passes through empty (mlx5 would flip to PCP)."""
    lab.dcb_ports["dcbsim0"].apps = [(5, 5, 26)]
    r, _w = lab.run(dscp2prio={26: 3})
    assert r["commands"] == ["/usr/sbin/dcb app add dev dcbsim0 dscp-prio 26:3",
                             "/usr/sbin/dcb app del dev dcbsim0 dscp-prio 26:5"]
    assert lab.dcb_ports["dcbsim0"].app_sizes == [2, 1]
    assert lab.dcb_ports["dcbsim0"].apps == [(5, 3, 26)]


def test_dcb_trust_pcp_removes_all_dscp_entries(lab):
    lab.run(trust="dscp")
    assert lab.dcb_ports["dcbsim0"].dscp_count() == 64
    r, _w = lab.run(trust="pcp")
    assert r["before"]["trust"] == "dscp" and r["after"]["trust"] == "pcp"
    assert lab.dcb_ports["dcbsim0"].apps == []


def test_ets_merge_error_is_raised_before_anything_changes(lab):
    lab.dcb_ports["dcbsim0"].tc_tsa = [2, 0, 0, 0, 0, 2, 0, 0]
    lab.dcb_ports["dcbsim0"].tc_tx_bw = [70, 0, 0, 0, 0, 30, 0, 0]
    with pytest.raises(ValidationError) as exc:
        lab.run(pfc=[3], ets=[{"tc": 0, "bw": 50}, {"tc": 3, "bw": 50}])
    assert exc.value.param == "ets" and "summing to 130%" in str(exc.value)
    assert lab.host.changing_calls() == []


def test_mtu_failure_rolls_back_dcb_and_configfs(lab):
    before = lab.snapshot()
    with pytest.raises(ApplyError) as exc:
        lab.run(pfc=[3], roce_tos=106, mtu=9500)        # dcbsim-like max MTU 9216
    assert "mtu greater than device maximum" in str(exc.value)
    assert lab.snapshot() == before
    assert [s.split(" > ")[0] for s in exc.value.rolled_back] == [
        "write '0'", "/usr/sbin/dcb pfc set dev dcbsim0 prio-pfc 0:off 1:off 2:off 3:off 4:off 5:off 6:off 7:off"]


# -- no DCB (virtio) -----------------------------------------------------
def test_unsupported_fail_changes_nothing(lab):
    before = lab.snapshot()
    with pytest.raises(QosError) as exc:
        lab.run(netdev="eth1", roce_tos=106, mtu=9000, **PROFILE)
    msg = str(exc.value)
    assert msg.startswith("eth1 cannot do what was asked, nothing was changed: unsupported: "
                          "trust, dscp2prio, pfc, prio_tc, ets (eth1 has no DCB support")
    assert "Attribute read: Operation not supported" in msg
    assert "on_unsupported: warn" in msg
    assert lab.host.changing_calls() == [] and lab.snapshot() == before


def test_unsupported_warn_applies_tos_mode_mtu(lab):
    r, w = lab.run(netdev="eth1", on_unsupported="warn", roce_tos=106, roce_mode="v1", mtu=9000,
                   ecn={"np": [3]}, **PROFILE)
    assert r["changed"] is True
    assert [s["option"] for s in r["unsupported"]] == ["trust", "dscp2prio", "pfc", "prio_tc", "ets", "ecn"]
    assert len(w) == 2
    assert w[0].startswith("eth1: skipped trust, dscp2prio, pfc, prio_tc, ets: eth1 has no DCB support")
    assert w[1].startswith("eth1: skipped ecn: eth1 has no ECN/CNP settings")
    assert r["backend"] is None
    assert r["backends"] == {"roce_tos": "configfs", "roce_mode": "configfs", "mtu": "iproute2"}
    assert lab.cfs.values[("rxe0", 1)] == {"default_roce_mode": "IB/RoCE v1", "default_roce_tos": "106"}
    assert SysfsTree(lab.sysfs).read_int(SysfsTree(lab.sysfs).sys("class", "net", "eth1", "mtu")) == 9000
    r2, _w = lab.run(netdev="eth1", on_unsupported="warn", roce_tos=106, roce_mode="v1", mtu=9000, **PROFILE)
    assert r2["changed"] is False


def test_netdev_in_sysfs_but_not_on_the_host_is_said_so(tmp_path, monkeypatch):
    """sysfs_path lists eth1 but dcb's network namespace has no such netdev (a sysfs copy, a container without the
    host's network): the DCB options are reported as not doable there, naming why, never as a DCB read error."""
    lab = Lab(tmp_path, monkeypatch, dcb_ports={"dcbsim0": DcbPort()})
    with pytest.raises(QosError) as exc:
        lab.run(netdev="eth1", roce_tos=106, **PROFILE)
    msg = str(exc.value)
    assert msg.startswith("eth1 cannot do what was asked, nothing was changed: unsupported: trust, dscp2prio, pfc, "
                          "prio_tc, ets (eth1 is not a network interface of this host: `dcb pfc show` says "
                          "'Attribute read: No such device', although %s/class/net/eth1 lists it" % lab.sysfs), msg
    assert "on_unsupported: warn" in msg and lab.host.changing_calls() == []
    r, w = lab.run(netdev="eth1", on_unsupported="warn", check_mode=True, roce_tos=106, **PROFILE)
    assert [s["option"] for s in r["unsupported"]] == ["trust", "dscp2prio", "pfc", "prio_tc", "ets"]
    assert len(w) == 1 and w[0].startswith("eth1: skipped trust, dscp2prio, pfc, prio_tc, ets: eth1 is not a "
                                           "network interface of this host")
    assert r["backends"] == {"roce_tos": "configfs"}


def test_pause_unsupported(lab):
    lab.ethtool.supported = False
    with pytest.raises(QosError) as exc:
        lab.run(pause=False)
    assert "netlink error: Operation not supported" in str(exc.value)
    r, w = lab.run(pause=False, mtu=1500, on_unsupported="warn")
    assert r["unsupported"][0]["option"] == "pause" and r["changed"] is False


# -- backend selection ---------------------------------------------------
def test_select_backend(lab):
    tree = SysfsTree(lab.sysfs)
    runner = engine.CommandRunner(FakeModule({}, lab.host))
    b, why = engine.select_backend(runner, tree, "dcbsim0", "auto")
    assert b.name == "dcb"
    lab.host.tools["mlnx_qos"] = FakeMlnxQos({})
    b, why = engine.select_backend(runner, tree, "dcbsim0", "auto")
    assert b.name == "dcb"       # no NVIDIA driver files: upstream dcb
    write(os.path.join(lab.sysfs, "class", "net", "dcbsim0", "qos", "trust"), "pcp\n")
    b, why = engine.select_backend(runner, tree, "dcbsim0", "auto")
    assert b.name == "mlnx_qos" and "qos/trust" in why
    del lab.host.tools["dcb"]
    with pytest.raises(QosError) as exc:
        engine.select_backend(runner, tree, "dcbsim0", "dcb")
    assert "backend dcb: the dcb command is not installed" in str(exc.value)
    del lab.host.tools["mlnx_qos"]
    with pytest.raises(QosError) as exc:
        engine.select_backend(runner, tree, "dcbsim0", "auto")
    assert "no DCB tool found for dcbsim0" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        engine.select_backend(runner, tree, "dcbsim0", "lldptool")
    assert exc.value.param == "backend"


# -- the list form: several ports in one call --------------------------------
def run_ports(lab, ports, check_mode=False, **params):
    params = dict(params, ports=ports, sysfs_path=lab.sysfs)
    module = FakeModule(params, lab.host, check_mode=check_mode)
    module.params["netdev"] = None
    return engine.run(module)


EVERY_PORT = [dict(PROFILE, netdev="dcbsim0", roce_tos=106, mtu=9000),
              {"netdev": "eth1", "on_unsupported": "warn", "roce_tos": 106, "mtu": 4200, "pfc": [3]}]


def test_ports_in_one_call_with_one_facts_read(lab, monkeypatch):
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import port as port_mod
    reads = []
    real = port_mod.RdmaFactsGatherer.gather

    def counting_gather(self):
        reads.append(self.tree.sysfs)
        return real(self)
    monkeypatch.setattr(port_mod.RdmaFactsGatherer, "gather", counting_gather)
    r, w = run_ports(lab, EVERY_PORT, roce_mode="v2")
    assert reads == [lab.sysfs]
    assert r["changed"] is True and sorted(r["ports"]) == ["dcbsim0", "eth1"]
    d, e = r["ports"]["dcbsim0"], r["ports"]["eth1"]
    assert (d["device"], d["backend"], d["after"]["pfc"], d["after"]["mtu"]) == ("rxe9", "dcb", [3], 9000)
    assert (e["device"], e["backend"], e["after"]) == ("rxe0", None, {"roce_tos": 106, "roce_mode": "v2", "mtu": 4200})
    assert [s["option"] for s in e["unsupported"]] == ["pfc"] and w[0].startswith("eth1: skipped pfc")
    assert r["commands"] == d["commands"] + e["commands"]
    assert lab.cfs.kernel_values("rxe0")["default_roce_tos"] == "106"
    r2, _w = run_ports(lab, EVERY_PORT, roce_mode="v2")
    assert r2["changed"] is False and all(not p["changed"] and p["drift"] == {} for p in r2["ports"].values())


def test_ports_check_mode_reports_each_options_drift(lab):
    before = lab.snapshot()
    r, _w = run_ports(lab, EVERY_PORT, check_mode=True)
    assert lab.snapshot() == before and lab.host.changing_calls() == []
    drift = r["ports"]["dcbsim0"]["drift"]
    assert drift["pfc"] == {"desired": [3], "actual": []}
    assert drift["roce_tos"] == {"desired": 106, "actual": 0}
    assert drift["ets"]["actual"][0] == {"tc": 0, "tsa": "strict", "bw": 0}
    assert "trust" in drift and "mtu" in drift
    assert r["ports"]["eth1"]["drift"] == {"roce_tos": {"desired": 106, "actual": 0},
                                           "mtu": {"desired": 4200, "actual": 1500}}


def test_a_failure_on_the_second_port_rolls_back_the_first(lab):
    before = lab.snapshot()
    rxe0_before = lab.cfs.kernel_values("rxe0")
    ports = [EVERY_PORT[0], dict(EVERY_PORT[1], mtu=9500)]     # eth1: more than the device maximum (9216)
    with pytest.raises(ApplyError) as exc:
        run_ports(lab, ports)
    e = exc.value
    assert e.netdev == "eth1" and "eth1: step 2 of 2 (mtu) failed" in str(e)
    assert "mtu greater than device maximum" in str(e) and e.rollback_failed == []
    # eth1's ToS and every dcbsim0 change undone, newest first
    assert e.rolled_back[0].startswith("write '0' > ") and "rxe0" in e.rolled_back[0]
    assert e.rolled_back[-1].startswith("restore the DSCP table read before the run (generic rule): /usr/sbin/dcb app del dev dcbsim0 dscp-prio 0:0 ")
    assert lab.snapshot() == before and lab.cfs.kernel_values("rxe0") == rxe0_before


def test_a_port_that_cannot_be_configured_fails_the_call_before_any_change(lab):
    before = lab.snapshot()
    with pytest.raises(engine.PortsError) as exc:
        run_ports(lab, [EVERY_PORT[0], {"netdev": "eth1", "pfc": [3]}])
    e = exc.value
    assert str(e).startswith("1 of 2 ports cannot be configured, nothing was changed on any port: ports[1] (eth1): "
                             "eth1 cannot do what was asked")
    assert e.results["eth1"]["failed"] is True and "no DCB support" in e.results["eth1"]["msg"]
    assert e.results["dcbsim0"]["changed"] is True          # planned, not applied
    assert lab.host.changing_calls() == [] and lab.snapshot() == before


def test_a_port_listed_twice_is_rejected(lab):
    with pytest.raises(ValidationError) as exc:
        run_ports(lab, [{"netdev": "dcbsim0", "pfc": [3]}, {"device": "rxe9", "pfc": [4]}])
    assert exc.value.param == "ports" and "dcbsim0 is listed twice (ports[0] and ports[1])" in str(exc.value)
    assert lab.host.calls == []


def test_an_ets_merge_error_names_the_port(lab):
    lab.dcb_ports["dcbsim0"].tc_tsa = [2, 0, 0, 0, 0, 2, 0, 0]
    lab.dcb_ports["dcbsim0"].tc_tx_bw = [70, 0, 0, 0, 0, 30, 0, 0]
    with pytest.raises(engine.PortsError) as exc:
        run_ports(lab, [{"netdev": "dcbsim0", "ets": [{"tc": 0, "bw": 50}, {"tc": 3, "bw": 50}]}])
    assert exc.value.param == "ports[0].ets" and "summing to 130%" in str(exc.value)


# -- rollback when a command cannot be started, or the run is stopped (issue 16) --
def test_a_command_that_cannot_be_started_is_rolled_back(lab):
    """The dcb binary vanishes mid-run (package removed): exec fails with ENOENT."""
    before = lab.snapshot()
    real = lab.host.tools["dcb"]

    def dcb_gone_for_ets(argv):
        if argv[1:3] == ["ets", "set"]:
            raise OSError(2, "No such file or directory")
        return real(argv)
    lab.host.tools["dcb"] = dcb_gone_for_ets
    with pytest.raises(ApplyError) as exc:
        lab.run(roce_tos=106, **PROFILE)
    assert "(ets) failed: /usr/sbin/dcb ets set dev dcbsim0" in str(exc.value)
    assert "it could not be started: No such file or directory" in str(exc.value)
    assert len(exc.value.rolled_back) == 2 and lab.snapshot() == before


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_rolls_back_after_the_step_under_way(lab, signame):
    """SIGTERM (systemd stop, a udev restart of the re-apply service) arrives while pfc is being set."""
    import signal
    before = lab.snapshot()
    handlers = dict((s, signal.getsignal(getattr(signal, s))) for s in ("SIGTERM", "SIGHUP", "SIGINT"))
    real = lab.host.tools["dcb"]

    def dcb_then_signal(argv):
        out = real(argv)
        if argv[1:3] == ["pfc", "set"]:
            os.kill(os.getpid(), getattr(signal, signame))
        return out
    lab.host.tools["dcb"] = dcb_then_signal
    with pytest.raises(ApplyError) as exc:
        lab.run(roce_tos=106, **PROFILE)
    e = exc.value
    assert str(e).startswith("dcbsim0: stopped by %s after step 2 of 4 (pfc). Rolled back, in reverse order:" % signame)
    assert e.failed_step == signame and len(e.rolled_back) == 2
    assert lab.snapshot() == before
    assert dict((s, signal.getsignal(getattr(signal, s))) for s in handlers) == handlers
