# -*- coding: utf-8 -*-
"""The one QoS backend interface (module_utils/qos/backend.py) and its registry (engine.GROUPS).

Every backend is driven the same way (probe, read, target, plan, warnings);
the selector picks among a group's candidates by name or by probe, with no
knowledge of any particular backend. Commands are answered by the TEST
DOUBLES of qos_test_doubles.py (FakeDcbTool, FakeMlnxQos).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import inspect
import itertools
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model
from ansible_collections.rdma.fabric.plugins.module_utils.qos import backend, engine
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import PortRef
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    DcbPort,
    FakeDcbTool,
    FakeHost,
    FakeMlnxQos,
    FakeModule,
    make_tree,
    write,
)

BACKENDS = [cls for group in engine.GROUPS for cls in group.candidates]


def test_every_option_has_exactly_one_group_and_every_backend_the_interface():
    keys = [k for group in engine.GROUPS for k in group.keys]
    assert sorted(keys) == sorted(model.ALL_KEYS) and len(keys) == len(set(keys))
    for cls in BACKENDS:
        assert issubclass(cls, backend.QosBackend) and cls.name
        group = [g for g in engine.GROUPS if cls in g.candidates][0]
        assert set(cls.keys) == set(group.keys), cls
        for method in ("read", "plan"):
            assert getattr(cls, method) is not getattr(backend.QosBackend, method), (cls, method)
        # one constructor for all: (ctx, probe)
        assert list(inspect.signature(cls.__init__).parameters) == ["self", "ctx", "probe"]


def test_backend_choices_are_the_names_of_the_selectable_backends():
    names = set(cls.name for g in engine.GROUPS if g.selectable for cls in g.candidates)
    assert set(model.BACKEND_CHOICES) == names | {"auto"}


def _ctx(tmp_path, tools):
    tree = SysfsTree(make_tree(tmp_path, "lab_rxe_dcbsim_virtio"))
    runner = CommandRunner(FakeModule({}, FakeHost(tools)))
    return backend.PortContext(runner, tree, PortRef("dcbsim0", "rxe9", 1)), tree


def test_selector_uses_only_probes(tmp_path):
    class Never(backend.QosBackend):
        name = "never"

        @classmethod
        def probe(cls, ctx):
            return backend.Probe(False, reason="never usable")

    class Fits(backend.QosBackend):
        name = "fits"

        @classmethod
        def probe(cls, ctx):
            return backend.Probe(True, 5, "auto: it fits")

    ctx, _tree = _ctx(tmp_path, {})
    group = backend.BackendGroup("test tool", ("pfc",), (Never, Fits), "install one")
    chosen, why = backend.select_backend(ctx, group, "auto")
    assert isinstance(chosen, Fits) and why == "auto: it fits"
    # a name that is not a candidate of this group means auto here
    assert isinstance(backend.select_backend(ctx, group, "dcb")[0], Fits)
    nothing = backend.BackendGroup("test tool", ("pfc",), (Never,), "install one")
    with pytest.raises(QosError) as exc:
        backend.select_backend(ctx, nothing, "auto")
    assert str(exc.value) == "backend auto: no test tool found for dcbsim0: install one"


def test_dcb_group_probes(tmp_path):
    ctx, tree = _ctx(tmp_path, {"dcb": FakeDcbTool({"dcbsim0": DcbPort()}), "mlnx_qos": FakeMlnxQos({})})
    dcb_group = engine.GROUPS[0]
    assert backend.select_backend(ctx, dcb_group, "auto")[0].name == "dcb"
    # dcbsim0 plays NVIDIA's mlx5_core: mlnx_qos may serve it
    write(os.path.join(tree.sysfs, "class", "net", "dcbsim0", "dcbsim", "personality"), "mlx5\n")
    ctx = backend.PortContext(ctx.runner, tree, PortRef("dcbsim0", "rxe9", 1))
    assert backend.select_backend(ctx, dcb_group, "mlnx_qos")[1] == "backend: mlnx_qos was requested"
    write(os.path.join(tree.sysfs, "class", "net", "dcbsim0", "qos", "trust"), "pcp\n")
    chosen, why = backend.select_backend(ctx, dcb_group, "auto")
    assert chosen.name == "mlnx_qos" and chosen.app_trust is False and "qos/trust" in why


@pytest.mark.parametrize("driver", ["ice", "generic", "virtio_net", None])
def test_mlnx_qos_requested_on_a_driver_not_nvidias_is_refused_up_front(tmp_path, driver):
    """mlnx_qos reads the DCB buffers on every call; only mlx5_core has them (elsewhere: part of a change, then a
    traceback): a request for it is refused before anything is read, naming the driver and the backend to use; auto
    still chooses as before (dcb where it is installed, else mlnx_qos)."""
    ports = {"dcbsim0": DcbPort()}
    ctx, tree = _ctx(tmp_path, {"dcb": FakeDcbTool(ports), "mlnx_qos": FakeMlnxQos({})})
    netdev = tree.sys("class", "net", "dcbsim0")
    where = "no device driver link (%s/device/driver)" % netdev
    if driver in ("ice", "generic"):
        write(os.path.join(netdev, "dcbsim", "personality"), driver + "\n")
        where = "dcbsim personality %s (%s/dcbsim/personality)" % (driver, netdev)
    elif driver:
        os.makedirs(os.path.join(netdev, "device"))
        os.symlink("../../../bus/virtio/drivers/" + driver, os.path.join(netdev, "device", "driver"))
        where = "driver %s (%s/device/driver)" % (driver, netdev)
    ctx = backend.PortContext(ctx.runner, tree, PortRef("dcbsim0", "rxe9", 1))
    ctx.runner.module.host.calls[:] = []
    with pytest.raises(QosError) as exc:
        backend.select_backend(ctx, engine.GROUPS[0], "mlnx_qos")
    assert str(exc.value) == (
        "backend mlnx_qos: dcbsim0: %s, not NVIDIA's mlx5_core: mlnx_qos works on NVIDIA's driver only (elsewhere it "
        "applies part of a change, then stops with a traceback, exit 1, when it reads the DCB buffers the driver does "
        "not have); use backend: dcb (iproute2) or auto" % where)
    assert ctx.runner.module.host.calls == []
    assert backend.select_backend(ctx, engine.GROUPS[0], "auto")[0].name == "dcb"
    del ctx.runner.module.host.tools["dcb"]
    assert backend.select_backend(ctx, engine.GROUPS[0], "auto")[0].name == "mlnx_qos"


def test_remap_rule_orders_the_dcb_app_steps(tmp_path):
    """The port's DSCP remap rule decides the order of the APP steps; the backend only renders them."""
    ports = {"dcbsim0": DcbPort()}
    ports["dcbsim0"].apps = [(5, 5, 26)]
    ctx, _tree = _ctx(tmp_path, {"dcb": FakeDcbTool(ports)})
    assert ctx.remap_rule is backend.GENERIC_REMAP
    assert ctx.remap_reason.startswith("dcbsim0: no device driver link (") and ctx.remap_reason.endswith(
        "/class/net/dcbsim0/device/driver): the generic rule")
    desired = model.normalise({"dscp2prio": {26: 3}})
    for rule, verbs in ((backend.GENERIC_REMAP, ["add", "del"]), (backend.MLX5_REMAP, ["add"]),
                        (backend.ICE_REMAP, ["del", "add"])):
        ctx.remap_rule = rule
        dcb, _why = backend.select_backend(ctx, engine.GROUPS[0], "dcb")
        current = dcb.read(desired)
        steps = dcb.plan(current, desired)
        assert [s.description.split()[2] for s in steps] == verbs, rule.name
        # the first step restores the table read before the run (also when it fails); the others leave it to it
        assert steps[0].undo_after_failure and steps[0].undo_description == (
            "restore the DSCP table read before the run (%s rule): {26: 5}" % rule.name)
        assert [s.undo for s in steps[1:]] == [None] * (len(steps) - 1)


_TREES = itertools.count()


def _rule_of(tmp_path, tree_name, netdev, personality=None, driver=None, soft=False):
    tree = SysfsTree(make_tree(tmp_path / ("tree%d" % next(_TREES)), tree_name))
    if personality:
        write(os.path.join(tree.sysfs, "class", "net", netdev, "dcbsim", "personality"), personality + "\n")
    return backend.remap_rule_for(tree, PortRef(netdev, "rdev0", 1, soft=soft, driver=driver))


def test_remap_rule_learned_from_the_ports_driver(tmp_path):
    rule, why = _rule_of(tmp_path, "derived_roce_mlx5_ofed", "ens1f0")
    assert rule is backend.MLX5_REMAP and why.startswith("ens1f0: driver mlx5_core (") and why.endswith("device/driver)")
    for personality, expected in (("mlx5", backend.MLX5_REMAP), ("ice", backend.ICE_REMAP),
                                  ("generic", backend.GENERIC_REMAP)):
        rule, why = _rule_of(tmp_path, "lab_rxe_dcbsim_virtio", "dcbsim0", personality)
        assert rule is expected and why.startswith("dcbsim0: dcbsim personality %s (" % personality), why
    # a netdev without a device link on a hardware RDMA device: the facts' driver; a soft one (rxe): generic
    assert _rule_of(tmp_path, "lab_rxe_dcbsim_virtio", "dcbsim0", driver="ice")[0] is backend.ICE_REMAP
    assert _rule_of(tmp_path, "lab_rxe_dcbsim_virtio", "dcbsim0", driver="ice", soft=True)[0] is backend.GENERIC_REMAP
    rule, why = _rule_of(tmp_path, "lab_rxe_dcbsim_virtio", "eth1")
    assert rule is backend.GENERIC_REMAP and why.startswith("eth1: no device driver link (") and why.endswith(": the generic rule")
    # a driver with no rule of its own: the generic one
    tree = SysfsTree(make_tree(tmp_path / "other", "lab_rxe_dcbsim_virtio"))
    os.symlink("../../../bus/virtio/drivers/virtio_net", os.path.join(tree.sysfs, "class", "net", "eth1", "device", "driver"))
    rule, why = backend.remap_rule_for(tree, PortRef("eth1", "rxe0", 1, soft=True))
    assert rule is backend.GENERIC_REMAP and why.startswith("eth1: driver virtio_net (") and why.endswith(": the generic rule")


REMAP_FROM = {26: [3], 46: [5], 48: [6]}
REMAP_TO = {26: [5], 46: [3], 48: [6]}


@pytest.mark.parametrize("rule,ops,restore", [
    (backend.GENERIC_REMAP, [("add", [(26, 5), (46, 3)]), ("del", [(26, 3), (46, 5)])],
     [("del", [(26, 5)]), ("add", [(26, 3)]), ("del", [(46, 3)]), ("add", [(46, 5)])]),
    (backend.MLX5_REMAP, [("add", [(26, 5), (46, 3)])], [("add", [(26, 3), (46, 5)])]),
    (backend.ICE_REMAP, [("del", [(26, 3)]), ("add", [(26, 5)]), ("del", [(46, 5)]), ("add", [(46, 3)])],
     [("del", [(26, 5)]), ("add", [(26, 3)]), ("del", [(46, 3)]), ("add", [(46, 5)])]),
])
def test_rule_ops_of_a_remap_and_its_rollback(rule, ops, restore):
    """26: 3 -> 5 and 46: 5 -> 3 together; a rollback deletes a DSCP's extra entry before adding its old one."""
    assert rule.ops(REMAP_FROM, REMAP_TO) == ops
    assert rule.restore_ops(REMAP_TO, REMAP_FROM) == restore
    table = REMAP_FROM
    for verb, pairs in ops:
        table = rule.apply(table, verb, pairs)
        assert table and all(len(ps) <= (1 if rule.name != "generic" else 2) for ps in table.values())
    assert table == REMAP_TO and rule.passes_through_empty(REMAP_FROM, ops) == []
    # a generic table where the remap left a DSCP mapped twice: its extra entry goes first
    assert backend.GENERIC_REMAP.restore_ops({26: [3, 5], 48: [6]}, {26: [3], 48: [6]}) == [("del", [(26, 5)])]


def test_rule_ops_add_new_dscps_first_and_delete_leaving_ones_last():
    current, target = {26: [3], 10: [1]}, {26: [5], 48: [6]}
    assert backend.ICE_REMAP.ops(current, target) == [
        ("add", [(48, 6)]), ("del", [(26, 3)]), ("add", [(26, 5)]), ("del", [(10, 1)])]
    assert backend.MLX5_REMAP.ops(current, target) == [("add", [(26, 5), (48, 6)]), ("del", [(10, 1)])]
    assert backend.GENERIC_REMAP.ops(current, target) == [("add", [(26, 5), (48, 6)]), ("del", [(10, 1), (26, 3)])]
    # down to none: the deletes only; the table ends empty (trust pcp), which is no passage through empty
    for rule in (backend.GENERIC_REMAP, backend.MLX5_REMAP, backend.ICE_REMAP):
        ops = rule.ops(current, {})
        assert ops == [("del", [(10, 1), (26, 3)])] and rule.passes_through_empty(current, ops) == []


def test_only_entry_remap_passes_through_empty_on_ice_only():
    current, target = {26: [3]}, {26: [5]}
    assert backend.ICE_REMAP.passes_through_empty(current, backend.ICE_REMAP.ops(current, target)) == [26]
    for rule in (backend.GENERIC_REMAP, backend.MLX5_REMAP):
        assert rule.passes_through_empty(current, rule.ops(current, target)) == []
