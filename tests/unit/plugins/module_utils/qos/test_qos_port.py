# -*- coding: utf-8 -*-
"""Unit tests for module_utils/qos/port.py: netdev <-> RDMA port lookup on fixture sysfs trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import find_port
from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    add_netdev,
    add_rxe,
    make_tree,
    write,
)


@pytest.fixture
def mlx5(tmp_path):
    return SysfsTree(make_tree(tmp_path, "derived_roce_mlx5_ofed"))


@pytest.fixture
def lab(tmp_path):
    """rxe0 on ens160 (fixture) plus rxe9 on a virtual dcbsim0, like the lab's dcbsim set-up."""
    sysfs = make_tree(tmp_path, "derived_rxe")
    add_netdev(sysfs, "dcbsim0")
    add_rxe(sysfs, "rxe9", "dcbsim0")
    add_netdev(sysfs, "eth9")
    return SysfsTree(sysfs)


def test_mlx5_by_netdev_via_device_net(mlx5):
    ref = find_port(mlx5, netdev="ens1f0")
    assert (ref.netdev, ref.device, ref.port, ref.link_layer, ref.soft) == ("ens1f0", "mlx5_0", 1, "Ethernet", False)


def test_mlx5_by_device_and_port(mlx5):
    ref = find_port(mlx5, device="mlx5_0")
    assert (ref.netdev, ref.port) == ("ens1f0", 1)
    assert find_port(mlx5, device="mlx5_0", port=1).netdev == "ens1f0"


def test_rxe_by_parent_both_ways(lab):
    assert find_port(lab, netdev="ens160").as_dict() == {"netdev": "ens160", "device": "rxe0", "port": 1}
    ref = find_port(lab, netdev="dcbsim0")
    assert (ref.device, ref.soft) == ("rxe9", True)
    assert find_port(lab, device="rxe9").netdev == "dcbsim0"


def test_gid_ndevs_only_match(tmp_path):
    """A device that only lists the netdev in its GID table (no parent, no device/net)."""
    sysfs = make_tree(tmp_path, "derived_rxe")
    add_netdev(sysfs, "vlan100")
    dev = os.path.join(sysfs, "devices", "virtual", "infiniband", "siw0")
    write(os.path.join(dev, "ports", "1", "gids", "0"), "0000:0000:0000:0000:0000:ffff:c000:0264\n")
    write(os.path.join(dev, "ports", "1", "gid_attrs", "types", "0"), "RoCE v2\n")
    write(os.path.join(dev, "ports", "1", "gid_attrs", "ndevs", "0"), "vlan100\n")
    write(os.path.join(dev, "ports", "1", "link_layer"), "Ethernet\n")
    os.symlink("../../devices/virtual/infiniband/siw0", os.path.join(sysfs, "class", "infiniband", "siw0"))
    assert find_port(SysfsTree(sysfs), netdev="vlan100").device == "siw0"


def test_missing_netdev(lab):
    with pytest.raises(ValidationError) as exc:
        find_port(lab, netdev="eth7")
    assert exc.value.param == "netdev"
    assert "interface 'eth7' does not exist" in str(exc.value)


def test_netdev_that_is_not_an_rdma_port(lab):
    with pytest.raises(ValidationError) as exc:
        find_port(lab, netdev="eth9")
    assert exc.value.param == "netdev"
    assert "is not an RDMA port" in str(exc.value)


def test_shell_metacharacters_rejected_before_any_lookup(lab):
    with pytest.raises(ValidationError) as exc:
        find_port(lab, netdev="eth0;rm -rf /")
    assert exc.value.param == "netdev" and "shell metacharacters" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        find_port(lab, device="rxe0 && x")
    assert exc.value.param == "device"


def test_unknown_device_and_port(lab):
    with pytest.raises(ValidationError) as exc:
        find_port(lab, device="mlx5_9")
    assert exc.value.param == "device" and "present: rxe0, rxe9" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        find_port(lab, device="rxe0", port=2)
    assert exc.value.param == "port" and "ports: 1" in str(exc.value)


def test_netdev_and_device_must_agree(lab):
    with pytest.raises(ValidationError) as exc:
        find_port(lab, netdev="dcbsim0", device="rxe0")
    assert exc.value.param == "device"


def test_infiniband_link_layer_is_refused(tmp_path):
    sysfs = make_tree(tmp_path, "derived_roce_mlx5_ofed")
    ll = os.path.join(sysfs, "class", "infiniband", "mlx5_0", "ports", "1", "link_layer")
    with open(ll, "w") as f:
        f.write("InfiniBand\n")
    with pytest.raises(ValidationError) as exc:
        find_port(SysfsTree(sysfs), netdev="ens1f0")
    assert "link layer InfiniBand" in str(exc.value)


def test_real_lab_tree(tmp_path):
    """sysfs captured in the VM lab: rxe9 on dcbsim0, rxe0 on virtio eth1 (tests/unit/fixtures/qos/README.md)."""
    tree = SysfsTree(make_tree(tmp_path, "lab_rxe_dcbsim_virtio"))
    ref = find_port(tree, netdev="dcbsim0")
    assert (ref.device, ref.port, ref.link_layer, ref.soft) == ("rxe9", 1, "Ethernet", True)
    assert find_port(tree, netdev="eth1").device == "rxe0"
    assert find_port(tree, device="rxe0").netdev == "eth1"
