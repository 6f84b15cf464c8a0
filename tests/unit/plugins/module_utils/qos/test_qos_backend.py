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
import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import backend, engine, model
from ansible_collections.rdma.fabric.plugins.module_utils.qos.common import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import QosError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import PortRef
from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import SysfsTree
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
    assert backend.select_backend(ctx, dcb_group, "mlnx_qos")[1] == "backend: mlnx_qos was requested"
    write(os.path.join(tree.sysfs, "class", "net", "dcbsim0", "qos", "trust"), "pcp\n")
    chosen, why = backend.select_backend(ctx, dcb_group, "auto")
    assert chosen.name == "mlnx_qos" and chosen.app_trust is False and "qos/trust" in why


def test_remap_rule_slot_orders_the_dcb_app_steps(tmp_path):
    """The port's DSCP remap rule (the slot for per-driver rules) decides the order of the APP steps."""
    ports = {"dcbsim0": DcbPort()}
    ports["dcbsim0"].apps = [(5, 5, 26)]
    ctx, _tree = _ctx(tmp_path, {"dcb": FakeDcbTool(ports)})
    assert ctx.remap_rule is backend.GENERIC_REMAP
    dcb, _why = backend.select_backend(ctx, engine.GROUPS[0], "dcb")
    desired = model.normalise({"dscp2prio": {26: 3}})
    current = dcb.read(desired)
    assert [s.description.split()[2] for s in dcb.plan(current, desired)] == ["add", "del"]

    class DeleteFirst(backend.DscpRemapRule):
        name = "delete-first"

        def ops(self, to_add, to_del):
            return list(reversed(super(DeleteFirst, self).ops(to_add, to_del)))
    ctx.remap_rule = DeleteFirst()
    steps = dcb.plan(current, desired)
    assert [s.description for s in steps] == ["/usr/sbin/dcb app del dev dcbsim0 dscp-prio 26:5",
                                              "/usr/sbin/dcb app add dev dcbsim0 dscp-prio 26:3"]
    assert steps[0].undo_description == "/usr/sbin/dcb app add dev dcbsim0 dscp-prio 26:5"
