# -*- coding: utf-8 -*-
"""ECN/CNP backend against the REAL NVIDIA-driver ecn/ tree of prometheus/procfs (eth0).

The capture (tests/unit/fixtures/qos/sysfs/procfs_net_eth0_ecn) has
roce_np/enable = 1 1 0 1 1 0 1 1, roce_rp/enable = 1 1 0 1 1 0 1 0,
cnp_dscp 48, cnp_802p_prio 6. Writes go to a tmp copy of the tree.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model
from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import PortContext
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, UnsupportedError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import PortRef
from ansible_collections.rdma.fabric.plugins.module_utils.qos.sysfs_ecn import SysfsEcn
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import make_tree


def ecn_backend(tree, netdev):
    """The backend on ``netdev`` of ``tree`` (it runs no commands: no runner)."""
    return SysfsEcn(PortContext(None, tree, PortRef(netdev, None, None)))


@pytest.fixture
def tree(tmp_path):
    return SysfsTree(make_tree(tmp_path, "procfs_net_eth0_ecn"))


def test_reads_the_real_capture(tree):
    desired = model.normalise({"ecn": {"np": [3], "rp": [3]}, "cnp": {"dscp": 48, "priority": 6}})
    state = ecn_backend(tree, "eth0").read(desired)
    assert state == {"ecn": {"np": [0, 1, 3, 4, 6, 7], "rp": [0, 1, 3, 4, 6]}, "cnp": {"dscp": 48, "priority": 6}}


def test_plan_apply_undo_and_idempotence(tree):
    ecn = ecn_backend(tree, "eth0")
    desired = model.normalise({"ecn": {"np": [3], "rp": [3]}, "cnp": {"dscp": 46, "priority": 6}})
    before = ecn.read(desired)
    steps = ecn.plan(before, desired)
    # np: 0 1 4 6 7 off; rp: 0 1 4 6 off; cnp_dscp 48 -> 46; cnp_802p_prio unchanged
    assert len(steps) == 5 + 4 + 1
    assert steps[-1].description.startswith("write 46 > ") and steps[-1].description.endswith("roce_np/cnp_dscp")
    for s in steps:
        s.do()
    after = ecn.read(desired)
    assert after == {"ecn": {"np": [3], "rp": [3]}, "cnp": {"dscp": 46, "priority": 6}}
    assert ecn.plan(after, desired) == []
    for s in reversed(steps):
        s.undo()
    assert ecn.read(desired) == before
    with open(tree.sys("class", "net", "eth0", "ecn", "roce_np", "enable", "7")) as f:
        assert f.read() == "1\n"


def test_only_the_requested_part_is_managed(tree):
    ecn = ecn_backend(tree, "eth0")
    desired = model.normalise({"ecn": {"rp": [0, 1, 3, 4, 6]}})
    state = ecn.read(desired)
    assert state == {"ecn": {"rp": [0, 1, 3, 4, 6]}}
    assert ecn.plan(state, desired) == []


def test_absent_ecn_folder_is_unsupported(tmp_path):
    tree = SysfsTree(make_tree(tmp_path, "derived_rxe"))
    with pytest.raises(UnsupportedError) as exc:
        ecn_backend(tree, "ens160").read(model.normalise({"ecn": {"np": [3]}}))
    assert exc.value.keys == ("ecn",)
    assert "NVIDIA" in str(exc.value)


def test_write_failure_is_a_qos_error(tree, monkeypatch):
    ecn = ecn_backend(tree, "eth0")
    desired = model.normalise({"cnp": {"dscp": 26}})
    step = ecn.plan(ecn.read(desired), desired)[0]
    path = tree.sys("class", "net", "eth0", "ecn", "roce_np", "cnp_dscp")
    os.remove(path)
    os.mkdir(path)      # writing to a directory fails like a refused sysfs write
    with pytest.raises(QosError) as exc:
        step.do()
    assert "cnp_dscp" in str(exc.value)
