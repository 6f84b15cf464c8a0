# -*- coding: utf-8 -*-
"""Unit tests for module_utils/qos/port.py: netdev <-> RDMA port lookup on fixture sysfs trees."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import find_port
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
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


def _add_siw(sysfs, parent):
    """Soft-iWARP siw0 on ``parent`` as the siw driver shows it: node type RNIC, link layer Ethernet."""
    add_rxe(sysfs, "siw0", parent)
    dev = os.path.join(sysfs, "devices", "virtual", "infiniband", "siw0")
    write(os.path.join(dev, "node_type"), "4: RNIC\n")


def test_iwarp_port_is_refused_with_its_name(tmp_path):
    sysfs = make_tree(tmp_path, "derived_rxe")
    add_netdev(sysfs, "eth2")
    _add_siw(sysfs, "eth2")
    tree = SysfsTree(sysfs)
    with pytest.raises(ValidationError) as exc:
        find_port(tree, netdev="eth2")
    assert exc.value.param == "netdev"
    assert "siw0 port 1 (eth2) has link layer Ethernet: an iWARP port (node type RNIC); roce_qos configures RoCE ports only" in str(exc.value)
    with pytest.raises(ValidationError) as exc:
        find_port(tree, device="siw0")
    assert exc.value.param == "device" and "an iWARP port" in str(exc.value)


def test_rxe_and_siw_on_one_netdev_resolve_to_the_roce_port(tmp_path):
    sysfs = make_tree(tmp_path, "derived_rxe")
    _add_siw(sysfs, "ens160")      # siw0 beside rxe0 on ens160
    ref = find_port(SysfsTree(sysfs), netdev="ens160")
    assert (ref.device, ref.port) == ("rxe0", 1)


def test_many_ports_with_one_facts_read(lab, monkeypatch):
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import port as port_mod
    from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import port_requests
    reads = []
    real = port_mod.RdmaFactsGatherer.gather

    def counting_gather(self):
        reads.append(1)
        return real(self)
    monkeypatch.setattr(port_mod.RdmaFactsGatherer, "gather", counting_gather)
    reqs = port_requests({"ports": [{"netdev": "dcbsim0"}, {"device": "rxe0"}, {"netdev": "ens160", "device": "rxe0"}]})
    with pytest.raises(ValidationError) as exc:
        port_mod.resolve_ports(lab, reqs)
    assert exc.value.param == "ports" and "ens160 is listed twice (ports[1] and ports[2])" in str(exc.value)
    refs = port_mod.resolve_ports(lab, reqs[:2])
    assert [r.as_dict() for r in refs] == [{"netdev": "dcbsim0", "device": "rxe9", "port": 1},
                                           {"netdev": "ens160", "device": "rxe0", "port": 1}]
    assert reads == [1, 1]      # one read per call, whatever the number of ports
    with pytest.raises(ValidationError) as exc:
        port_mod.resolve_ports(lab, port_requests({"ports": [{"netdev": "dcbsim0"}, {"netdev": "eth7"}]}))
    assert exc.value.param == "ports[1].netdev" and reads == [1, 1]      # missing netdev: found before any read
