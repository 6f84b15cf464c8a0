# -*- coding: utf-8 -*-
"""roce_qos on each driver's DCB rules, with both DCB backends (issue 22).

The lab's dcbsim0 with its ``dcbsim/personality`` file saying generic, mlx5 or
ice; the commands are answered by the TEST DOUBLES of qos_test_doubles.py:
FakeDcbTool over :class:`DriverDcbPort` (iproute2 dcb) and FakeMlnxQos over the
same :class:`MlnxPort` (mlnx_qos), both on the personality's APP-table, trust
and ETS/PFC rules (the ones molecule/dcbsim_personalities proves on dcbsim).
Per personality and backend: a profile, a second run with nothing to do, the
remap of DSCP 26 (3 -> 5) and 46 (5 -> 3) together in the steps that driver
takes, the table down to none, a failure part-way with the port afterwards as
before, and a failed rollback that leaves no DSCP mapped twice. mlnx_qos
serves NVIDIA's driver only (mlx5): on the others it is refused before
anything runs (it would die reading the DCB buffers those drivers lack).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import ApplyError
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    SEL_DSCP,
    DriverDcbPort,
    FakeMlnxQos,
    LabEngine,
    write,
)

PERSONALITIES = ("generic", "mlx5", "ice")
# mlnx_qos on NVIDIA's driver only (the others: test_mlnx_qos_refused_on_a_driver_not_nvidias)
MATRIX = [(p, "dcb") for p in PERSONALITIES] + [("mlx5", "mlnx_qos")]
DCB = "/usr/sbin/dcb app %s dev dcbsim0 dscp-prio %s"
MQ = "/usr/sbin/mlnx_qos -i dcbsim0 --dscp2prio %s"
# The steps of the remap 26: 3 -> 5 and 46: 5 -> 3 (docs/DESIGN.md "DSCP remaps on each driver's DCB rules")
REMAP_COMMANDS = {
    ("generic", "dcb"): [DCB % ("add", "26:5 46:3"), DCB % ("del", "26:3 46:5")],
    ("mlx5", "dcb"): [DCB % ("add", "26:5 46:3")],
    ("ice", "dcb"): [DCB % ("del", "26:3"), DCB % ("add", "26:5"), DCB % ("del", "46:5"), DCB % ("add", "46:3")],
    ("mlx5", "mlnx_qos"): [MQ % "set,26,5", MQ % "set,46,3"],
}


def profile(personality, backend):
    """Trust DSCP (the 64 default entries, 26 -> 3 and 46 -> 5 among them), PFC on 3, ETS 50/50 on TC0 and TC3."""
    return {"trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 46: 5},
            "ets": [{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "tsa": "ets", "bw": 50}]}


class Port(LabEngine):
    """dcbsim0 of the lab tree (:class:`LabEngine`) on one personality, with dcb and mlnx_qos in front of the same
    driver double."""

    def __init__(self, tmp_path, monkeypatch, personality, backend):
        self.personality, self.backend = personality, backend
        self.dcb_port = DriverDcbPort(personality)
        self.driver = self.dcb_port.driver
        super(Port, self).__init__(tmp_path, monkeypatch, dcb_ports={"dcbsim0": self.dcb_port},
                                   tools={"mlnx_qos": FakeMlnxQos({"dcbsim0": self.driver})})
        write(os.path.join(self.sysfs, "class", "net", "dcbsim0", "dcbsim", "personality"), personality + "\n")

    def run(self, check_mode=False, **params):
        self.host.calls[:] = []
        return super(Port, self).run(check_mode, backend=self.backend, **params)

    def table(self):
        return sorted([a[2], a[1]] for a in self.driver.apps if a[0] == SEL_DSCP)

    def state(self):
        """Everything the driver keeps (ice: its "desired" config too), the APP table in dcb's sorted order."""
        d = self.driver
        return (self.table(), d.trust(), d.pfc_en, list(d.tsa), list(d.tcbw), list(d.prio_tc),
                dict(getattr(d, "desired", {})))

    def trust_flips(self):
        """The DSCP entry counts after each APP change that reached 0 (the port trusted PCP then)."""
        return [n for n in self.dcb_port.app_sizes if n == 0] + [t for t in self.driver.trust_history if t == "pcp"]

    def commands(self, result):
        return [c for c in result["commands"] if "dscp-prio" in c or "--dscp2prio" in c]


@pytest.fixture(params=MATRIX, ids=["%s-%s" % pb for pb in MATRIX])
def port(request, tmp_path, monkeypatch):
    return Port(tmp_path, monkeypatch, *request.param)


def test_profile_remap_and_down_to_none(port):
    pers, backend = port.personality, port.backend
    r, w = port.run(**profile(pers, backend))
    assert r["changed"] is True and r["backend"] == backend and w == []
    assert r["dscp_rule"]["name"] == pers and r["dscp_rule"]["notes"] == []
    assert r["dscp_rule"]["reason"].startswith("dcbsim0: dcbsim personality %s (" % pers)
    assert port.driver.trust() == "dscp" and len(port.table()) == 64 and port.driver.pfc_en == 1 << 3
    r, _w = port.run(**profile(pers, backend))
    assert r["changed"] is False and port.host.changing_calls() == []

    # 26: 3 -> 5 and 46: 5 -> 3 together, in the driver's steps, DSCP trust throughout
    port.dcb_port.app_sizes[:], port.driver.trust_history[:] = [], []
    r, w = port.run(dscp2prio={26: 5, 46: 3})
    assert r["commands"] == REMAP_COMMANDS[(pers, backend)]
    assert r["after"] == {"trust": "dscp", "dscp2prio": {"26": 5, "46": 3}} and w == []
    assert [26, 5] in port.table() and [46, 3] in port.table() and len(port.table()) == 64
    assert port.trust_flips() == [] and port.driver.pfc_en == 1 << 3
    r, _w = port.run(dscp2prio={26: 5, 46: 3})
    assert r["changed"] is False and port.host.changing_calls() == []

    # every entry removed: trust back to PCP
    r, _w = port.run(trust="pcp")
    assert r["changed"] is True and r["after"] == {"trust": "pcp"}
    assert port.table() == [] and port.driver.trust() == "pcp"
    r, _w = port.run(trust="pcp")
    assert r["changed"] is False and port.host.changing_calls() == []


def test_check_mode_plans_the_drivers_steps_and_changes_nothing(port):
    port.run(**profile(port.personality, port.backend))
    before = port.state()
    r, _w = port.run(check_mode=True, dscp2prio={26: 5, 46: 3})
    assert r["commands"] == REMAP_COMMANDS[(port.personality, port.backend)]
    assert port.state() == before and port.host.changing_calls() == []


def test_remap_of_the_only_entry(port):
    """ice: the only DSCP entry must be deleted before its new one is added: the port trusts PCP for a moment, and
    the result says so; mlx5 replaces it in one set, generic adds the new entry first."""
    assert port.driver.setapp(26, 3) == 0
    r, w = port.run(dscp2prio={26: 5})
    assert port.table() == [[26, 5]] and port.driver.trust() == "dscp"
    if port.personality == "ice":
        assert len(w) == 1 and w[0].startswith("dcbsim0: DSCP 26 is the only DSCP entry: the ice rule deletes its old "
                                               "entry before adding the new one, so the port trusts PCP for a moment")
        assert r["dscp_rule"]["notes"] == w and port.trust_flips() != []
    else:
        assert w == [] and r["dscp_rule"]["notes"] == [] and port.trust_flips() == []
    assert len(r["commands"]) == {"generic": 2, "mlx5": 1, "ice": 2}[port.personality]


@pytest.mark.parametrize("where", ["table", "pfc"])
def test_failure_part_way_rolls_back_to_the_state_read_before(port, where):
    """A DSCP change refused part-way (46's), or the PFC refused after the whole remap: the table read before."""
    port.run(**profile(port.personality, port.backend))
    before = port.state()
    if where == "table":
        port.driver.fail_app.update([("add", 46), ("del", 46)])
    else:
        port.dcb_port.fail.add("pfc")
        port.driver.fail.add("pfc")
    with pytest.raises(ApplyError) as exc:
        port.run(dscp2prio={26: 5, 46: 3}, pfc=[3, 4])
    e = exc.value
    assert e.rollback_failed == [] and port.state() == before
    assert e.rolled_back[-1].startswith("restore the DSCP table read before the run (%s rule): " % port.personality)
    assert all(n for n in port.dcb_port.app_sizes) or port.personality == "ice"


def test_a_failed_rollback_leaves_no_dscp_mapped_twice(port):
    """The PFC is refused after the remap, and the rollback may not delete 46's entry: the rollback deletes a
    DSCP's extra entry before adding its old one (generic; ice must; mlx5 replaces), so 46 keeps one priority."""
    port.run(**profile(port.personality, port.backend))
    tools = port.host.tools
    real = dict(tools)

    def refuse_pfc_then_46s_deletes(name):
        def tool(argv):
            if argv[1:3] == ["pfc", "set"] or "--pfc" in argv:
                port.driver.fail_app.add(("del", 46))
                return (1, FakeMlnxQos.NETLINK_ERR, "") if name == "mlnx_qos" else (0, "", "")
            return real[name](argv)
        return tool
    tools["dcb"], tools["mlnx_qos"] = refuse_pfc_then_46s_deletes("dcb"), refuse_pfc_then_46s_deletes("mlnx_qos")
    with pytest.raises(ApplyError) as exc:
        port.run(dscp2prio={26: 5, 46: 3}, pfc=[3, 4])
    mapped = {}
    for d, p in port.table():
        mapped.setdefault(d, []).append(p)
    assert all(len(ps) == 1 for ps in mapped.values()), mapped
    assert mapped[26] == [3] and len(mapped) == 64
    if port.personality == "mlx5":         # no delete needed: 46 set back by a replacing add
        assert exc.value.rollback_failed == [] and mapped[46] == [5]
    else:
        assert mapped[46] == [3] and len(exc.value.rollback_failed) == 1
        assert "COULD NOT roll back" in str(exc.value)


@pytest.mark.parametrize("personality", ["generic", "ice"])
def test_mlnx_qos_refused_on_a_driver_not_nvidias(tmp_path, monkeypatch, personality):
    """backend: mlnx_qos on a port whose driver is not NVIDIA's fails before any command, naming the driver and
    the backend to use; nothing changed. auto still picks dcb there."""
    port = Port(tmp_path, monkeypatch, personality, "mlnx_qos")
    before = port.state()
    with pytest.raises(QosError) as exc:
        port.run(**profile(personality, "mlnx_qos"))
    assert "backend mlnx_qos: dcbsim0: dcbsim personality %s (" % personality in str(exc.value)
    assert "not NVIDIA's mlx5_core" in str(exc.value) and "use backend: dcb (iproute2) or auto" in str(exc.value)
    assert port.host.calls == [] and port.state() == before
    port.backend = "auto"
    r, _w = port.run(**profile(personality, "auto"))
    assert r["changed"] and r["backend"] == "dcb"
