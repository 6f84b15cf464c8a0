# -*- coding: utf-8 -*-
"""Unit tests for module_utils/facts/rdma_facts.py (ansible_facts.rdma, schema_version 1).

Inputs, all under tests/unit/fixtures/ (see sysfs/README.md for provenance):

* the shared sysfs trees (real procfs captures and derived trees), asserting
  the exact values each tree should give;
* the derived trees' ``_read_errors.json`` replayed through ``KernelRefusals``,
  a test double of the kernel's EINVAL (and EACCES, EOPNOTSUPP, EIO) reads;
* small trees written by ``SysfsBuilder`` in the kernel's print formats for
  what the shared trees do not show (SR-IOV, VLAN/macvlan, IPoIB children,
  representors, mlx4 dual port, siw, driver-stack markers);
* trees captured from the lab's real rxe devices (``sysfs/lab_*``, with the
  tools' output beside them), compared with ``rdma``/``ibv_devinfo``/``ip``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import errno
import glob
import importlib.util
import json
import os
import re
import shutil

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.facts import rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.common.gid import ZERO_GID, normalise_gid
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import (
    MODULE_NAMES,
    RdmaFactsError,
    gather_rdma_facts,
    natural_key,
    parse_id_text,
    parse_rate_gbps,
)
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.fixtures.read_faults import KernelRefusals
from ansible_collections.rdma.fabric.tests.unit.fixtures.sysfs.synthetic_host import build_host

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.normpath(os.path.join(HERE, "..", "..", "..", "fixtures"))
SYSFS_FIXTURES = os.path.join(FIXTURES, "sysfs")
SCHEMA_MODULES = ("ib_core", "ib_uverbs", "rdma_ucm", "rdma_cm", "mlx5_ib", "rdma_rxe", "siw", "nvidia_peermem", "nv_peer_mem")
DERIVED_WITH_ERRORS = ("derived_rxe", "derived_roce_mlx5_ofed", "derived_ib_mlx5_ipoib")
# lab_NAME.json manifests, materialised as lab_NAME/ folders by tests/unit/conftest.py
LAB_CAPTURES = sorted(p[:-len(".json")] for p in glob.glob(os.path.join(SYSFS_FIXTURES, "lab_*.json")))


def fixture_sys(name):
    return os.path.join(SYSFS_FIXTURES, name, "sys")


def copy_fixture(name, dest):
    """A writable copy of a fixture tree (symlinks kept); returns its sys path."""
    root = os.path.join(str(dest), name)
    shutil.copytree(os.path.join(SYSFS_FIXTURES, name), root, symlinks=True)
    return os.path.join(root, "sys")


def port_of(facts, device, number=1):
    dev = [d for d in facts["devices"] if d["name"] == device][0]
    return [p for p in dev["ports"] if p["number"] == number][0]


def materialise_read_errors(sys_root, decoys=None):
    """Create the files a fixture's _read_errors.json lists, with decoy content.

    Returns their paths. Content a reader must never see: a valid-looking
    type or netdev, so a reader that ignored the refusal would report it.
    """
    fixture_root = os.path.dirname(sys_root)
    with open(os.path.join(fixture_root, "_read_errors.json")) as f:
        listed = json.load(f)["paths"]
    paths = []
    for p in listed:
        assert p.startswith("/sys/")
        full = os.path.join(sys_root, p[len("/sys/"):])
        os.makedirs(os.path.dirname(full), exist_ok=True)
        kind = os.path.basename(os.path.dirname(full))
        with open(full, "w") as f:
            f.write((decoys or {}).get(kind, "RoCE v2\n" if kind == "types" else "decoy0\n"))
        paths.append(full)
    return paths


# --------------------------------------------------------------------------
# Builder for small trees in the kernel's print formats
# --------------------------------------------------------------------------
class SysfsBuilder(object):
    """Writes a sysfs tree like a live /sys: attributes as the kernel prints
    them (drivers/infiniband/core/sysfs.c, net-sysfs.c), class entries and
    ``device`` links as relative symlinks."""

    def __init__(self, sys_root):
        self.root = str(sys_root)
        os.makedirs(os.path.join(self.root, "class"), exist_ok=True)  # every sysfs has class/

    def path(self, rel):
        return os.path.join(self.root, rel)

    def file(self, rel, text):
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write("%s\n" % (text,))

    def link(self, rel, target_rel):
        full = self.path(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        os.symlink(os.path.relpath(self.path(target_rel), os.path.dirname(full)), full)

    def pci(self, bdf, parent="devices/pci0000:00/0000:00:02.0", vendor="0x15b3", device="0x1017", numa=0,
            driver="mlx5_core", totalvfs=None, numvfs=None, physfn=None):
        rel = "%s/%s" % (parent, bdf)
        self.file(rel + "/vendor", vendor)
        self.file(rel + "/device", device)
        self.file(rel + "/class", "0x020000")
        self.file(rel + "/numa_node", numa)
        self.link(rel + "/driver", "bus/pci/drivers/%s" % driver)
        self.link("bus/pci/devices/%s" % bdf, rel)
        if totalvfs is not None:
            self.file(rel + "/sriov_totalvfs", totalvfs)
            self.file(rel + "/sriov_numvfs", numvfs)
        if physfn is not None:
            self.link(rel + "/physfn", physfn)
        return rel

    def netdev(self, name, dev_rel=None, mtu=1500, ifindex=2, iflink=None, dev_port=0, dev_id="0x0",
               phys_port_name=None, lower=None):
        rel = ("%s/net/%s" % (dev_rel, name)) if dev_rel else ("devices/virtual/net/%s" % name)
        self.file(rel + "/mtu", mtu)
        self.file(rel + "/ifindex", ifindex)
        self.file(rel + "/iflink", ifindex if iflink is None else iflink)
        if dev_port is not None:
            self.file(rel + "/dev_port", dev_port)
        if dev_id is not None:
            self.file(rel + "/dev_id", dev_id)
        if phys_port_name:
            self.file(rel + "/phys_port_name", phys_port_name)
        if lower:
            self.link(rel + "/lower_%s" % lower, "class/net/%s" % lower)
        self.link("class/net/%s" % name, rel)
        return rel

    def ib(self, name, pci_rel=None, node_type="1: CA", guid="0c42:a103:005d:4db8", fw_ver="22.31.1014",
           board_id="MT_0000000359", hca_type="MT4125", parent=None):
        rel = ("%s/infiniband/%s" % (pci_rel, name)) if pci_rel else ("devices/virtual/infiniband/%s" % name)
        self.file(rel + "/node_type", node_type)
        self.file(rel + "/node_guid", guid)
        self.file(rel + "/sys_image_guid", guid)
        self.file(rel + "/fw_ver", fw_ver if fw_ver is not None else "")
        if board_id is not None:
            self.file(rel + "/board_id", board_id)
        if hca_type is not None:
            self.file(rel + "/hca_type", hca_type)
        if parent is not None:
            self.file(rel + "/parent", parent)
        if pci_rel:
            self.link(rel + "/device", pci_rel)
        self.link("class/infiniband/%s" % name, rel)
        return rel

    def port(self, ib_rel, number=1, link_layer="Ethernet", state="4: ACTIVE", phys_state="5: LinkUp",
             rate="100 Gb/sec (4X EDR)", lid="0x0", sm_lid="0x0", gids=(), slots=8):
        """gids: (index, gid, type, ndev); type/ndev None = the kernel refuses that read."""
        rel = "%s/ports/%d" % (ib_rel, number)
        for k, v in (("state", state), ("phys_state", phys_state), ("link_layer", link_layer), ("rate", rate),
                     ("lid", lid), ("sm_lid", sm_lid)):
            if v is not None:
                self.file("%s/%s" % (rel, k), v)
        used = dict((g[0], g) for g in gids)
        for i in range(max([slots] + [g[0] + 1 for g in gids])):
            if i not in used:
                self.file("%s/gids/%d" % (rel, i), "0000:0000:0000:0000:0000:0000:0000:0000")
                continue
            dummy, gid, gtype, ndev = used[i]
            self.file("%s/gids/%d" % (rel, i), gid)
            if gtype is not None:
                self.file("%s/gid_attrs/types/%d" % (rel, i), gtype)
            if ndev is not None:
                self.file("%s/gid_attrs/ndevs/%d" % (rel, i), ndev)
        return rel

    def modules(self, *names):
        for n in names:
            os.makedirs(self.path("module/%s" % n), exist_ok=True)


V4 = "0000:0000:0000:0000:0000:ffff:c000:020b"        # 192.0.2.11
V4_VLAN = "0000:0000:0000:0000:0000:ffff:c633:640b"   # 198.51.100.11
V4_MACVLAN = "0000:0000:0000:0000:0000:ffff:cb00:7107"  # 203.0.113.7
LL = "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db8"


# --------------------------------------------------------------------------
# Shared fixture trees: exact values
# --------------------------------------------------------------------------
def test_derived_rxe_exact_facts():
    facts = gather_rdma_facts(fixture_sys("derived_rxe"))
    expected_modules = dict((m, False) for m in MODULE_NAMES)
    assert facts == {
        "schema_version": 1,
        "devices": [{
            "name": "rxe0",
            "driver": "rdma_rxe",
            "soft": True,
            "node_type": "CA",
            "node_guid": "0250:56ff:fea7:129f",
            "sys_image_guid": "0250:56ff:fea7:129f",
            "fw_ver": None,            # rxe prints an empty fw_ver
            "board_id": None,
            "hca_type": None,
            "pci_address": None,
            "vendor_id": None,
            "device_id": None,
            "numa_node": None,
            "parent_netdev": "ens160",
            "sriov": None,
            "ports": [{
                "number": 1,
                "state": "ACTIVE",
                "state_id": 4,
                "phys_state": "LinkUp",
                "phys_state_id": 5,
                "link_layer": "Ethernet",
                "rate": "10 Gb/sec (1X QDR)",
                "rate_gbps": 10.0,
                "lid": None,
                "sm_lid": None,
                "netdev": "ens160",
                "mtu": 1500,
                "gids": [
                    {"index": 0, "gid": "fe80:0000:0000:0000:0250:56ff:fea7:129f", "type": "RoCE v2",
                     "netdev": "ens160", "ip": "fe80::250:56ff:fea7:129f", "ip_version": 6},
                    {"index": 1, "gid": "0000:0000:0000:0000:0000:ffff:0a01:103d", "type": "RoCE v2",
                     "netdev": "ens160", "ip": "10.1.16.61", "ip_version": 4},
                ],
                "roce_v2_ipv4_gid_index": 1,
                "roce": None,
            }],
        }],
        "netdevs": {"ens160": {"device": "rxe0", "port": 1}},
        "modules": expected_modules,
        # no module/ folder in this tree, but a device exists: the inbox stack
        "stack": {"flavor": "inbox", "version": None},
    }


def test_derived_roce_mlx5_ofed():
    facts = gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"))
    (dev,) = facts["devices"]
    assert dev["name"] == "mlx5_0"
    assert (dev["driver"], dev["soft"], dev["pci_address"], dev["vendor_id"], dev["device_id"], dev["numa_node"]) == \
        ("mlx5_core", False, "0000:3b:00.0", "0x15b3", "0x101d", 0)
    assert (dev["fw_ver"], dev["board_id"], dev["hca_type"], dev["node_guid"]) == \
        ("22.31.1014", "MT_0000000359", "MT4125", "0c42:a103:005d:4db8")
    assert dev["parent_netdev"] is None and dev["sriov"] is None
    port = port_of(facts, "mlx5_0")
    assert (port["netdev"], port["mtu"], port["link_layer"], port["rate_gbps"], port["lid"]) == ("ens1f0", 9000, "Ethernet", 100.0, None)
    # IB/RoCE v1 reads as RoCE v1 on Ethernet; slots 6-15 are empty (their attrs EINVAL)
    assert [(g["index"], g["type"], g["ip"]) for g in port["gids"]] == [
        (0, "RoCE v1", "fe80::e42:a1ff:fe5d:4db8"), (1, "RoCE v2", "fe80::e42:a1ff:fe5d:4db8"),
        (2, "RoCE v1", "fe80::1186:a6b1:3f0b:c441"), (3, "RoCE v2", "fe80::1186:a6b1:3f0b:c441"),
        (4, "RoCE v1", "172.19.0.60"), (5, "RoCE v2", "172.19.0.60"),
    ]
    assert all(g["netdev"] == "ens1f0" for g in port["gids"])
    assert port["roce_v2_ipv4_gid_index"] == 5
    assert port["roce"] == {"default_mode": "RoCE v2", "default_tos": 106}
    assert "counters" not in port and "hw_counters" not in port  # counters are off by default
    assert facts["netdevs"] == {"ens1f0": {"device": "mlx5_0", "port": 1}}


def test_derived_roce_counters_subset():
    facts = gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"), gather_subset=["counters"])
    port = port_of(facts, "mlx5_0")
    assert port["counters"]["port_rcv_data"] == 987654321
    assert port["counters"]["port_xmit_data"] == 123456789
    assert port["counters"]["unicast_rcv_packets"] == 2000
    assert len(port["counters"]) == 14
    assert port["hw_counters"]["lifespan"] == 10
    assert port["hw_counters"]["np_cnp_sent"] == 0
    assert len(port["hw_counters"]) == 11
    assert gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"), gather_subset=["all"]) == facts


def test_derived_ib_mlx5_ipoib():
    facts = gather_rdma_facts(fixture_sys("derived_ib_mlx5_ipoib"))
    port = port_of(facts, "mlx5_0")
    assert (port["link_layer"], port["lid"], port["sm_lid"], port["rate_gbps"]) == ("InfiniBand", 5, 1, 100.0)
    # IPoIB ib0 is the port's netdev (device/net/ib0, dev_port 0)
    assert (port["netdev"], port["mtu"]) == ("ib0", 4092)
    # the IB GID: type IB, no netdev (ndevs/0 is EINVAL); empty slots 1-7 skipped
    assert port["gids"] == [{"index": 0, "gid": "fe80:0000:0000:0000:9803:9b03:0087:f102", "type": "IB",
                             "netdev": None, "ip": "fe80::9803:9b03:87:f102", "ip_version": 6}]
    assert port["roce_v2_ipv4_gid_index"] is None
    assert facts["netdevs"] == {"ib0": {"device": "mlx5_0", "port": 1}}
    assert facts["devices"][0]["device_id"] == "0x1013"


def test_procfs_hfi1_real_capture():
    facts = gather_rdma_facts(fixture_sys("procfs_hfi1_0"), gather_subset=["counters"])
    (dev,) = facts["devices"]
    # procfs stores class entries as real folders: read in place
    assert dev["name"] == "hfi1_0"
    assert dev["board_id"] == "HPE 100Gb 1-port OP101 QSFP28 x16 PCIe Gen3 with Intel Omni-Path Adapter"
    assert dev["fw_ver"] == "1.27.0"
    assert (dev["hca_type"], dev["node_guid"], dev["node_type"], dev["driver"], dev["pci_address"], dev["soft"]) == \
        (None, None, None, None, None, False)
    port = dev["ports"][0]
    assert (port["state"], port["state_id"], port["phys_state"], port["link_layer"], port["rate_gbps"]) == \
        ("ACTIVE", 4, "LinkUp", "InfiniBand", 100.0)
    assert port["gids"] == [] and port["netdev"] is None
    assert port["counters"]["port_xmit_data"] == 273558326543
    assert port["counters"]["symbol_error"] == 0


def test_procfs_mlx4_two_ib_ports():
    facts = gather_rdma_facts(fixture_sys("procfs_mlx4_0"))
    (dev,) = facts["devices"]
    assert (dev["hca_type"], dev["board_id"], dev["fw_ver"]) == ("MT4099", "SM_1141000001000", "2.31.5050")
    assert [(p["number"], p["link_layer"], p["rate"], p["rate_gbps"]) for p in dev["ports"]] == [
        (1, "InfiniBand", "40 Gb/sec (4X QDR)", 40.0), (2, "InfiniBand", "40 Gb/sec (4X QDR)", 40.0)]


def test_procfs_mlx5_capture_values_as_read():
    facts = gather_rdma_facts(fixture_sys("procfs_mlx5_0"), gather_subset=["counters"])
    (dev,) = facts["devices"]
    assert dev["node_guid"] == "0a7f:bc12:45ef:d23b"
    port = dev["ports"][0]
    # that capture's phys_state reads "4: ACTIVE" (see README): reported as read
    assert (port["phys_state"], port["phys_state_id"], port["rate_gbps"]) == ("ACTIVE", 4, 25.0)
    assert port["hw_counters"]["duplicate_request"] == 41
    assert port["hw_counters"]["rx_read_requests"] == 175528982
    assert port["hw_counters"]["resp_cqe_error"] == 8109


@pytest.mark.parametrize("name", ["procfs_net_eth0_ecn", "procfs_pci_topology"])
def test_trees_without_rdma(name):
    facts = gather_rdma_facts(fixture_sys(name))
    assert facts["devices"] == [] and facts["netdevs"] == {}
    assert facts["stack"] == {"flavor": "none", "version": None}
    assert set(SCHEMA_MODULES) <= set(facts["modules"]) and not any(facts["modules"].values())


def test_gpu_nic_topology_nics_match_its_expected_json():
    facts = gather_rdma_facts(fixture_sys("derived_gpu_nic_topology"))
    with open(os.path.join(SYSFS_FIXTURES, "derived_gpu_nic_topology", "expected.json")) as f:
        expected = json.load(f)
    assert dict((d["name"], d["pci_address"]) for d in facts["devices"]) == expected["nics"]
    assert all(d["driver"] == "mlx5_core" and d["vendor_id"] == "0x15b3" for d in facts["devices"])
    assert [d["name"] for d in facts["devices"]] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]


# --------------------------------------------------------------------------
# Refused reads (EINVAL and friends)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("name", DERIVED_WITH_ERRORS)
def test_read_errors_replayed_give_the_same_facts(name, tmp_path, monkeypatch):
    """The files _read_errors.json lists exist on a real host and fail with EINVAL:
    materialised with decoy content and refused, they must change nothing."""
    expected = gather_rdma_facts(fixture_sys(name))
    sys_root = copy_fixture(name, tmp_path)
    refused = materialise_read_errors(sys_root)
    assert refused
    # Attributes of a non-empty GID (ndevs of an InfiniBand GID) are read, so without
    # the double their decoys would leak (the test can fail); those of empty slots
    # are never even opened (the reader skips all-zero GIDs first).
    of_used_gids = [p for p in refused if _gid_of_attr(p) != ZERO_GID]
    leaked = gather_rdma_facts(sys_root)
    assert (leaked != expected) == bool(of_used_gids)
    double = KernelRefusals(monkeypatch, refused, errno.EINVAL)
    assert gather_rdma_facts(sys_root) == expected
    assert len(double.refused) == len(of_used_gids)


def _gid_of_attr(path):
    """The GID (sysfs text) that a gid_attrs/{types,ndevs}/<i> path belongs to."""
    port_dir = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    with open(os.path.join(port_dir, "gids", os.path.basename(path))) as f:
        return f.read().strip()


@pytest.mark.parametrize("err", [errno.EINVAL, errno.ENOENT, errno.EACCES, errno.EOPNOTSUPP, errno.EIO])
def test_refused_attributes_become_null(err, tmp_path, monkeypatch):
    sys_root = copy_fixture("derived_roce_mlx5_ofed", tmp_path)
    ib = os.path.join(sys_root, "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/mlx5_0")
    refused = [os.path.join(ib, "ports/1/rate"), os.path.join(ib, "fw_ver"), os.path.join(ib, "ports/1/state"),
               os.path.join(ib, "ports/1/gid_attrs/ndevs/5"),   # a RoCE GID without netdev: being removed
               os.path.join(ib, "ports/1/gid_attrs/types/3"),   # no type: skipped
               os.path.join(ib, "ports/1/counters/port_rcv_data")]
    KernelRefusals(monkeypatch, refused, err)
    facts = gather_rdma_facts(sys_root, gather_subset=["counters"])
    dev = facts["devices"][0]
    port = dev["ports"][0]
    assert dev["fw_ver"] is None and dev["board_id"] == "MT_0000000359"
    assert (port["rate"], port["rate_gbps"], port["state"], port["state_id"]) == (None, None, None, None)
    assert [g["index"] for g in port["gids"]] == [0, 1, 2, 4]
    assert port["roce_v2_ipv4_gid_index"] is None  # index 5 is gone, 4 is RoCE v1
    assert port["counters"]["port_rcv_data"] is None and port["counters"]["port_xmit_data"] == 123456789


def test_malformed_attributes_become_null(tmp_path):
    sys_root = copy_fixture("derived_roce_mlx5_ofed", tmp_path)
    pci = os.path.join(sys_root, "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0")
    ib = os.path.join(pci, "infiniband/mlx5_0")
    for rel, text in (("ports/1/state", "ACTIVE"), ("ports/1/phys_state", ": \n"), ("ports/1/rate", "fast"),
                      ("node_type", "gibberish"), ("ports/1/gids/2", "not-a-gid"), ("ports/1/counters/symbol_error", "x")):
        with open(os.path.join(ib, rel), "w") as f:
            f.write(text)
    with open(os.path.join(pci, "numa_node"), "w") as f:
        f.write("-1\n")
    with open(os.path.join(pci, "net/ens1f0/mtu"), "w") as f:
        f.write("abc\n")
    facts = gather_rdma_facts(sys_root, gather_subset=["counters"])
    dev = facts["devices"][0]
    port = dev["ports"][0]
    assert (dev["node_type"], dev["numa_node"]) == (None, None)
    assert (port["state"], port["state_id"], port["phys_state"], port["phys_state_id"]) == (None, None, None, None)
    assert (port["rate"], port["rate_gbps"], port["mtu"], port["netdev"]) == ("fast", None, None, "ens1f0")
    assert [g["index"] for g in port["gids"]] == [0, 1, 3, 4, 5]
    assert port["counters"]["symbol_error"] is None


# --------------------------------------------------------------------------
# Built trees: what the shared fixtures do not show
# --------------------------------------------------------------------------
def _sriov_vlan_host(tmp_path, with_pf_net=True):
    b = SysfsBuilder(tmp_path / "sys")
    pf = b.pci("0000:3b:00.0", totalvfs=8, numvfs=2, numa=1)
    vf = b.pci("0000:3b:00.2", device="0x101e", physfn="devices/pci0000:00/0000:00:02.0/0000:3b:00.0", numa=1)
    b.link(pf + "/virtfn0", vf)
    if with_pf_net:
        b.netdev("ens1f0", pf, mtu=9000, ifindex=4, phys_port_name="p0")
    b.netdev("ens1f0.100", None, mtu=9000, ifindex=10, iflink=4, dev_port=None, dev_id=None, lower="ens1f0")
    b.netdev("mv0", None, mtu=9000, ifindex=11, iflink=4, dev_port=None, dev_id=None, lower="ens1f0")
    b.netdev("ens1f0v0", vf, mtu=1500, ifindex=12)
    ib0 = b.ib("mlx5_0", pf)
    gids = [(1, LL, "RoCE v2", "ens1f0"), (0, LL, "IB/RoCE v1", "ens1f0"),
            (2, V4_VLAN, "RoCE v2", "ens1f0.100"),     # lower index than the port's own IPv4 GID
            (3, V4, "IB/RoCE v1", "ens1f0"), (4, V4, "RoCE v2", "ens1f0"),
            (5, V4_MACVLAN, "RoCE v2", "mv0")]
    if not with_pf_net:
        gids = [(0, V4_VLAN, "RoCE v2", "ens1f0.100")] + [(i + 1, g, t, n) for i, g, t, n in gids if n != "ens1f0.100"]
    b.port(ib0, gids=gids)
    ib1 = b.ib("mlx5_1", vf, guid="0000:0000:0000:0000")
    b.port(ib1, gids=[(0, "fe80:0000:0000:0000:0000:00ff:fe00:0001", "RoCE v2", "ens1f0v0")])
    b.modules("ib_core", "mlx5_core", "mlx5_ib", "ib_uverbs")
    return b


def test_sriov_pf_vf_and_vlan_macvlan(tmp_path):
    b = _sriov_vlan_host(tmp_path)
    facts = gather_rdma_facts(b.root)
    pf, vf = facts["devices"]
    assert pf["sriov"] == {"totalvfs": 8, "numvfs": 2, "is_vf": False, "physfn": None}
    assert vf["sriov"] == {"totalvfs": None, "numvfs": None, "is_vf": True, "physfn": "0000:3b:00.0"}
    assert (vf["pci_address"], vf["device_id"], vf["numa_node"]) == ("0000:3b:00.2", "0x101e", 1)
    port = pf["ports"][0]
    # the VLAN / macvlan never replace the port's netdev ...
    assert (port["netdev"], port["mtu"]) == ("ens1f0", 9000)
    # ... and the NCCL GID index is the port's own IPv4 RoCE v2 GID, not the VLAN's (2) or macvlan's (5)
    assert port["roce_v2_ipv4_gid_index"] == 4
    assert [(g["index"], g["type"], g["netdev"], g["ip"]) for g in port["gids"]] == [
        (0, "RoCE v1", "ens1f0", "fe80::e42:a1ff:fe5d:4db8"), (1, "RoCE v2", "ens1f0", "fe80::e42:a1ff:fe5d:4db8"),
        (2, "RoCE v2", "ens1f0.100", "198.51.100.11"), (3, "RoCE v1", "ens1f0", "192.0.2.11"),
        (4, "RoCE v2", "ens1f0", "192.0.2.11"), (5, "RoCE v2", "mv0", "203.0.113.7")]
    # ... but they appear in netdevs
    assert facts["netdevs"] == {
        "ens1f0": {"device": "mlx5_0", "port": 1}, "ens1f0v0": {"device": "mlx5_1", "port": 1},
        "ens1f0.100": {"device": "mlx5_0", "port": 1}, "mv0": {"device": "mlx5_0", "port": 1}}
    assert vf["ports"][0]["netdev"] == "ens1f0v0" and vf["ports"][0]["roce_v2_ipv4_gid_index"] is None
    assert facts["stack"] == {"flavor": "inbox", "version": None}
    assert facts["modules"]["mlx5_ib"] is True and facts["modules"]["rdma_rxe"] is False


def test_port_netdev_from_gids_resolves_vlan_to_its_lower(tmp_path):
    """No device/net (e.g. the netdev sits in another netns view): the lowest GID is on
    a VLAN, whose lower_* link leads to the port's own netdev."""
    b = _sriov_vlan_host(tmp_path, with_pf_net=False)
    b.netdev("ens1f0", "devices/virtual/somewhere", mtu=9000, ifindex=4)  # visible in class/net only
    port = port_of(gather_rdma_facts(b.root), "mlx5_0")
    assert port["netdev"] == "ens1f0" and port["mtu"] == 9000
    assert port["gids"][0]["netdev"] == "ens1f0.100"
    assert port["roce_v2_ipv4_gid_index"] == 5  # the VLAN's IPv4 GID is index 0 here


def test_port_netdev_from_gids_when_netdev_not_visible(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    ib = b.ib("mlx5_0", b.pci("0000:3b:00.2"))
    b.port(ib, gids=[(0, LL, "RoCE v2", "net1"), (1, V4, "RoCE v2", "net1")])
    port = port_of(gather_rdma_facts(b.root), "mlx5_0")
    assert (port["netdev"], port["mtu"], port["roce_v2_ipv4_gid_index"]) == ("net1", None, 1)


def test_mlx4_dual_port_maps_netdevs_by_dev_port(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    pci = b.pci("0000:04:00.0", device="0x1007", driver="mlx4_core")
    b.netdev("eth3", pci, ifindex=4, dev_port=1)
    b.netdev("eth2", pci, ifindex=3, dev_port=0)
    ib = b.ib("mlx4_0", pci, hca_type="MT4099")
    b.port(ib, 1, gids=[(0, LL, "IB/RoCE v1", "eth2")])
    b.port(ib, 2, gids=[(0, "fe80:0000:0000:0000:0e42:a1ff:fe5d:4db9", "IB/RoCE v1", "eth3")])
    facts = gather_rdma_facts(b.root)
    assert [(p["number"], p["netdev"]) for p in facts["devices"][0]["ports"]] == [(1, "eth2"), (2, "eth3")]
    assert facts["devices"][0]["driver"] == "mlx4_core"


def test_old_kernel_without_dev_port_uses_dev_id(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    pci = b.pci("0000:04:00.0", driver="mlx4_core")
    b.netdev("eth2", pci, ifindex=3, dev_port=None, dev_id="0x0")
    b.netdev("eth3", pci, ifindex=4, dev_port=None, dev_id="0x1")
    ib = b.ib("mlx4_0", pci)
    b.port(ib, 1)
    b.port(ib, 2)
    facts = gather_rdma_facts(b.root)
    assert [p["netdev"] for p in facts["devices"][0]["ports"]] == ["eth2", "eth3"]


def test_ipoib_child_and_representors_never_become_the_port_netdev(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    ib_pci = b.pci("0000:04:00.0", device="0x1013")
    b.netdev("ib0.8001", ib_pci, mtu=2044, ifindex=6, iflink=5)   # IPoIB child (pkey 0x8001)
    b.netdev("ib0", ib_pci, mtu=4092, ifindex=5)
    ib = b.ib("mlx5_0", ib_pci)
    b.port(ib, link_layer="InfiniBand", lid="0x5", sm_lid="0x1",
           gids=[(0, "fe80:0000:0000:0000:9803:9b03:0087:f102", "IB/RoCE v1", None)])
    eth_pci = b.pci("0000:3b:00.0")
    b.netdev("eth_rep0", eth_pci, ifindex=20, phys_port_name="pf0vf0")   # switchdev representor
    b.netdev("ens1f0np0", eth_pci, ifindex=21, phys_port_name="p0")
    eib = b.ib("mlx5_1", eth_pci)
    b.port(eib, gids=[(0, LL, "RoCE v2", "ens1f0np0")])
    facts = gather_rdma_facts(b.root)
    assert port_of(facts, "mlx5_0")["netdev"] == "ib0" and port_of(facts, "mlx5_0")["mtu"] == 4092
    assert port_of(facts, "mlx5_0")["gids"][0]["type"] == "IB"
    assert port_of(facts, "mlx5_1")["netdev"] == "ens1f0np0"
    assert facts["netdevs"] == {"ib0": {"device": "mlx5_0", "port": 1}, "ens1f0np0": {"device": "mlx5_1", "port": 1}}


def test_siw_soft_iwarp_device(tmp_path):
    """siw as Linux 6.1 shows it (drivers/infiniband/sw/siw/siw_main.c, core/cache.c): node GUID = EUI-64 of the
    netdev's MAC, a one-slot GID table holding the MAC over a zero interface ID, no netdev on the GID (ndevs
    refused), no `parent` file. The GID is not listed (ibv_devinfo skips it too); the netdev comes from the GUID."""
    b = SysfsBuilder(tmp_path / "sys")
    b.netdev("eth0", b.pci("0000:00:03.0", vendor="0x1af4", device="0x1000", driver="virtio-pci"), ifindex=2)
    eth1 = b.netdev("eth1", b.pci("0000:00:04.0", vendor="0x1af4", device="0x1000", driver="virtio-pci"), ifindex=3)
    vlan = b.netdev("eth1.100", None, ifindex=4, iflink=3, lower="eth1")
    b.file("class/net/eth0/address", "52:54:00:00:01:01")
    b.file(eth1 + "/address", "52:54:00:00:02:01")
    b.file(vlan + "/address", "52:54:00:00:02:01")  # a VLAN shares its lower's MAC
    ib = b.ib("siw0", None, node_type="4: RNIC", guid="5054:00ff:fe00:0201", fw_ver="", board_id=None, hca_type=None)
    b.port(ib, rate="25 Gb/sec (1X EDR)", gids=[(0, "5254:0000:0201:0000:0000:0000:0000:0000", "IB/RoCE v1", None)], slots=1)
    facts = gather_rdma_facts(b.root)
    (dev,) = facts["devices"]
    assert (dev["driver"], dev["soft"], dev["node_type"], dev["pci_address"], dev["parent_netdev"]) == ("siw", True, "RNIC", None, None)
    port = dev["ports"][0]
    assert (port["netdev"], port["mtu"], port["link_layer"]) == ("eth1", 1500, "Ethernet")
    assert port["gids"] == []
    assert port["roce_v2_ipv4_gid_index"] is None
    assert facts["netdevs"] == {"eth1": {"device": "siw0", "port": 1}}


def test_siw_node_guid_matching_no_netdev_gives_none(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    eth0 = b.netdev("eth0", b.pci("0000:00:03.0", driver="virtio-pci"), ifindex=2)
    b.file(eth0 + "/address", "52:54:00:00:01:01")
    ib = b.ib("siw0", None, node_type="4: RNIC", guid="0c42:a103:005d:4db8", fw_ver="", board_id=None, hca_type=None)
    b.port(ib, gids=[], slots=1)
    assert gather_rdma_facts(b.root)["devices"][0]["ports"][0]["netdev"] is None


def test_rxe_on_top_of_a_hardware_netdev_netdevs_prefers_hardware(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    pci = b.pci("0000:3b:00.0")
    b.netdev("ens1f0", pci, ifindex=4)
    hw = b.ib("mlx5_0", pci)
    b.port(hw, gids=[(0, LL, "RoCE v2", "ens1f0")])
    rxe = b.ib("rxe0", None, fw_ver="", board_id=None, hca_type=None, parent="ens1f0")
    b.port(rxe, rate="10 Gb/sec (1X QDR)", gids=[(0, LL, "RoCE v2", "ens1f0"), (1, V4, "RoCE v2", "ens1f0")])
    facts = gather_rdma_facts(b.root)
    assert facts["netdevs"] == {"ens1f0": {"device": "mlx5_0", "port": 1}}
    assert port_of(facts, "rxe0")["netdev"] == "ens1f0" and port_of(facts, "rxe0")["roce_v2_ipv4_gid_index"] == 1


def test_rdma_cm_configfs_read_only_and_partial(tmp_path):
    sys_root = copy_fixture("derived_rxe", tmp_path)
    cm = os.path.join(sys_root, "kernel", "config", "rdma_cm")
    assert port_of(gather_rdma_facts(sys_root), "rxe0")["roce"] is None
    assert not os.path.exists(os.path.join(cm, "rxe0"))  # never created by the facts
    os.makedirs(os.path.join(cm, "rxe0", "ports", "1"))
    with open(os.path.join(cm, "rxe0", "ports", "1", "default_roce_mode"), "w") as f:
        f.write("RoCE v2\n")
    assert port_of(gather_rdma_facts(sys_root), "rxe0")["roce"] == {"default_mode": "RoCE v2", "default_tos": None}


def test_gid_attrs_missing_on_old_kernels(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    ib = b.ib("mlx4_0", b.pci("0000:04:00.0"))
    b.port(ib, link_layer="InfiniBand", lid="0x12", gids=[(0, "fe80:0000:0000:0000:0002:c903:0010:aabb", None, None)])
    port = port_of(gather_rdma_facts(b.root), "mlx4_0")
    assert port["lid"] == 18
    assert [(g["index"], g["type"], g["netdev"]) for g in port["gids"]] == [(0, "IB", None)]


def test_natural_device_order_and_globs(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    for i in (10, 2, 1):
        b.port(b.ib("mlx5_%d" % i, b.pci("0000:%02x:00.0" % (0x10 + i))))
    b.port(b.ib("rxe0", None, parent="eth1", fw_ver="", board_id=None, hca_type=None))
    assert [d["name"] for d in gather_rdma_facts(b.root)["devices"]] == ["mlx5_1", "mlx5_2", "mlx5_10", "rxe0"]
    assert [d["name"] for d in gather_rdma_facts(b.root, devices=["mlx5_1*"])["devices"]] == ["mlx5_1", "mlx5_10"]
    assert [d["name"] for d in gather_rdma_facts(b.root, devices=["rxe?", "mlx5_2"])["devices"]] == ["mlx5_2", "rxe0"]
    filtered = gather_rdma_facts(b.root, devices=["nothing*"])
    assert filtered["devices"] == [] and filtered["stack"]["flavor"] == "inbox"  # stack: whole host


def test_modules_reflect_sys_module(tmp_path):
    b = SysfsBuilder(tmp_path / "sys")
    b.modules("ib_core", "rdma_rxe", "ib_uverbs", "rdma_ucm")
    facts = gather_rdma_facts(b.root)
    assert set(SCHEMA_MODULES) <= set(facts["modules"])
    assert sorted(m for m, v in facts["modules"].items() if v) == ["ib_core", "ib_uverbs", "rdma_rxe", "rdma_ucm"]
    # RDMA core loaded but no device yet: inbox
    assert facts["devices"] == [] and facts["stack"] == {"flavor": "inbox", "version": None}


OFED_INFO_MLNX = """#!/bin/bash
usage()
{
\tcat <<EOF
Usage: $0 [options]
EOF
}
if [ "X$1" == "X-s" ]; then echo MLNX_OFED_LINUX-23.10-1.1.9.0:; exit 0; fi
if [ "X$1" == "X-n" ]; then echo 23.10-1.1.9.0; exit 0; fi
cat << EOF
MLNX_OFED_LINUX-23.10-1.1.9.0 (OFED-23.10-1.1.9):
EOF
"""


@pytest.mark.parametrize("setup, expected", [
    ({}, {"flavor": "none", "version": None}),
    ({"modules": ["ib_core"]}, {"flavor": "inbox", "version": None}),
    ({"ofed_info": OFED_INFO_MLNX, "modules": ["ib_core", "mlx_compat"]}, {"flavor": "mlnx_ofed", "version": "23.10-1.1.9.0"}),
    ({"modules": ["ib_core", "mlx_compat"], "compat_version": "5.8-1.0.1"}, {"flavor": "mlnx_ofed", "version": "5.8-1.0.1"}),
    ({"ofed_info": OFED_INFO_MLNX.replace("MLNX_OFED_LINUX-23.10-1.1.9.0", "OFED-internal-24.01-0.3.3")},
     {"flavor": "doca", "version": "24.01-0.3.3"}),
    ({"ofed_info": OFED_INFO_MLNX, "markers": ["opt/mellanox/doca"]}, {"flavor": "doca", "version": "23.10-1.1.9.0"}),
    ({"markers": ["usr/share/doc/doca-ofed"], "modules": ["ib_core"]}, {"flavor": "doca", "version": None}),
    ({"ofed_info": "#!/bin/sh\necho something else\n"}, {"flavor": "mlnx_ofed", "version": None}),
])
def test_stack_detection(tmp_path, setup, expected):
    host = tmp_path / "host"
    b = SysfsBuilder(host / "sys")
    b.modules(*setup.get("modules", []))
    if "compat_version" in setup:
        b.file("module/mlx_compat/version", setup["compat_version"])
    if "ofed_info" in setup:
        (host / "usr" / "bin").mkdir(parents=True)
        (host / "usr" / "bin" / "ofed_info").write_text(setup["ofed_info"])
    for marker in setup.get("markers", []):
        (host / marker).mkdir(parents=True)
    assert gather_rdma_facts(b.root)["stack"] == expected


# --------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, message", [
    ({"sysfs_path": "/nonexistent/sys"}, "sysfs_path: '/nonexistent/sys' is not a directory"),
    ({"sysfs_path": ""}, "sysfs_path: must be a path"),
    ({"sysfs_path": os.path.join(SYSFS_FIXTURES, "derived_rxe")}, "does not look like a sysfs root"),
    ({"sysfs_path": fixture_sys("derived_rxe"), "devices": ["mlx5_*", ""]}, "devices: every entry must be a non-empty"),
    ({"sysfs_path": fixture_sys("derived_rxe"), "devices": "mlx5_*"}, "devices: must be a list"),
    ({"sysfs_path": fixture_sys("derived_rxe"), "gather_subset": ["counters", "hardware"]},
     "gather_subset: 'hardware' not allowed; allowed values: all, min, counters"),
])
def test_bad_options_name_the_parameter(kwargs, message):
    with pytest.raises(RdmaFactsError) as exc:
        gather_rdma_facts(**kwargs)
    assert message in str(exc.value)


def test_parsers():
    assert parse_id_text("4: ACTIVE") == ("ACTIVE", 4)
    assert parse_id_text("5: LinkUp\n") == ("LinkUp", 5)
    assert parse_id_text("7: Phy Test") == ("Phy Test", 7)
    assert parse_id_text("ACTIVE") == (None, None)
    assert parse_id_text(None) == (None, None)
    assert parse_rate_gbps("2.5 Gb/sec (1X SDR)") == 2.5
    assert parse_rate_gbps("10 Gb/sec (4X)") == 10.0
    assert parse_rate_gbps("400 Gb/sec (4X NDR)") == 400.0
    assert parse_rate_gbps("") is None
    assert sorted(["mlx5_10", "mlx5_2", "hfi1_0", "mlx5_1"], key=natural_key) == ["hfi1_0", "mlx5_1", "mlx5_2", "mlx5_10"]


# --------------------------------------------------------------------------
# SysfsTree helpers added for this gatherer (read_attrs, readlink)
# --------------------------------------------------------------------------
def test_sysfs_read_attrs_and_readlink(tmp_path, monkeypatch):
    d = tmp_path / "port"
    d.mkdir()
    (d / "state").write_text("4: ACTIVE\n")
    (d / "big").write_text("x" * 10000)
    (d / "refused").write_text("decoy")
    os.symlink("../../devices/virtual/infiniband/rxe0", str(tmp_path / "rxe0"))
    tree = SysfsTree(str(tmp_path))
    KernelRefusals(monkeypatch, [str(d / "refused")], errno.EINVAL)
    assert tree.read_attrs(str(d), ["state", "missing", "refused", "big"]) == {
        "state": "4: ACTIVE", "missing": None, "refused": None, "big": "x" * 10000}
    assert tree.read_attrs(str(tmp_path / "nope"), ["a"]) == {"a": None}
    assert tree.read_attrs(str(d), ["state"], strip=False) == {"state": "4: ACTIVE\n"}
    assert tree.readlink(str(tmp_path / "rxe0")) == os.path.normpath(os.path.join(str(tmp_path), "../../devices/virtual/infiniband/rxe0"))
    assert tree.readlink(str(d / "state")) is None   # not a link
    assert tree.readlink(str(d / "absent")) is None


def test_port_numbers_are_read_without_listing_and_port_zero_still_found(tmp_path):
    """Ports 1..N are opened in turn up to the first missing number; a switch's port 0 is found by listing."""
    sys_root = copy_fixture("derived_rxe", tmp_path)
    ports = os.path.join(sys_root, "devices", "virtual", "infiniband", "rxe0", "ports")
    before = port_of(gather_rdma_facts(sys_root), "rxe0", 1)
    os.rename(os.path.join(ports, "1"), os.path.join(ports, "0"))
    (dev,) = [d for d in gather_rdma_facts(sys_root)["devices"] if d["name"] == "rxe0"]
    assert [p["number"] for p in dev["ports"]] == [0]
    assert dict(dev["ports"][0], number=1) == before
    shutil.copytree(os.path.join(ports, "0"), os.path.join(ports, "1"), symlinks=True)
    shutil.copytree(os.path.join(ports, "0"), os.path.join(ports, "2"), symlinks=True)
    shutil.rmtree(os.path.join(ports, "0"))
    (dev,) = [d for d in gather_rdma_facts(sys_root)["devices"] if d["name"] == "rxe0"]
    assert [p["number"] for p in dev["ports"]] == [1, 2]


def test_sysfs_read_at_and_read_series(tmp_path, monkeypatch):
    """Reads relative to one directory descriptor: sub-paths, refusals, and a numbered table's end."""
    port = tmp_path / "port"
    (port / "gids").mkdir(parents=True)
    (port / "gid_attrs" / "types").mkdir(parents=True)
    for i, text in enumerate(["fe80:0000:0000:0000:5054:00ff:fe00:0201\n", "empty-slot-decoy\n", "0000:0000:0000:0000:0000:0000:0000:0000\n"]):
        (port / "gids" / str(i)).write_text(text)
    (port / "gids" / "4").write_text("after a gap: never read\n")
    (port / "gid_attrs" / "types" / "0").write_text("RoCE v2\n")
    (port / "state").write_text("4: ACTIVE\n")
    tree = SysfsTree(str(tmp_path))
    double = KernelRefusals(monkeypatch, [str(port / "gids" / "1")], errno.EINVAL)
    dfd = tree.open_dir(str(port))
    try:
        # The table ends at the first slot that does not exist (3); slot 1 is refused (None).
        assert tree.read_series(dfd, "gids/") == [
            "fe80:0000:0000:0000:5054:00ff:fe00:0201", None, "0000:0000:0000:0000:0000:0000:0000:0000"]
        assert len(double.refused) == 1
        # One entry per name, in order; sub-paths; absent files read as None.
        assert tree.read_at(dfd, ["gid_attrs/types/0", "gid_attrs/types/7", "state"]) == ["RoCE v2", None, "4: ACTIVE"]
        assert tree.read_at(dfd, ["state"], strip=False) == ["4: ACTIVE\n"]
    finally:
        os.close(dfd)
    dfd = tree.open_dir(str(tmp_path))  # no gids/ folder at all: an empty table
    try:
        assert tree.read_series(dfd, "gids/") == []
    finally:
        os.close(dfd)
    assert tree.open_dir(str(tmp_path / "absent")) is None
    assert tree.open_dir(str(port / "state")) is None  # a file, not a folder
    # A folder that cannot be searched (EACCES at open): one refused open ends the series.
    monkeypatch.undo()
    real_open, calls = os.open, []

    def refusing_open(path, flags, mode=0o777, *, dir_fd=None):
        if str(path).startswith("gids/"):
            calls.append(path)
            raise OSError(errno.EACCES, os.strerror(errno.EACCES))
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", refusing_open)
    dfd = tree.open_dir(str(port))
    try:
        assert tree.read_series(dfd, "gids/") == [] and calls == ["gids/0"]
    finally:
        os.close(dfd)


# --------------------------------------------------------------------------
# The capture script (tests/unit/fixtures/capture_rdma_sysfs.py)
# --------------------------------------------------------------------------
def _load_capture():
    spec = importlib.util.spec_from_file_location("capture_rdma_sysfs", os.path.join(FIXTURES, "capture_rdma_sysfs.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", DERIVED_WITH_ERRORS + ("derived_gpu_nic_topology", "procfs_mlx5_0"))
def test_capture_reproduces_the_facts(name, tmp_path):
    """Capturing a tree (standing in for a live /sys) keeps every fact and every link."""
    capture = _load_capture()
    dest = tmp_path / "cap"
    assert capture.main(["--sysfs", fixture_sys(name), str(dest)]) == 0
    for subset in (["min"], ["counters"]):
        assert gather_rdma_facts(str(dest / "sys"), gather_subset=subset) == gather_rdma_facts(fixture_sys(name), gather_subset=subset)
    src = fixture_sys(name)
    for dirpath, dirnames, filenames in os.walk(str(dest / "sys")):
        for f in filenames + dirnames:
            p = os.path.join(dirpath, f)
            if os.path.islink(p):
                target = os.readlink(p)
                assert not os.path.isabs(target)
                assert target == os.readlink(os.path.join(src, os.path.relpath(p, str(dest / "sys"))))


def test_capture_records_read_errors(tmp_path, monkeypatch):
    capture = _load_capture()
    live = copy_fixture("derived_roce_mlx5_ofed", tmp_path / "live")
    refused = materialise_read_errors(live)
    KernelRefusals(monkeypatch, refused, errno.EINVAL)
    dest = tmp_path / "cap"
    capture.main(["--sysfs", live, str(dest)])
    with open(str(dest / "_read_errors.json")) as f:
        recorded = json.load(f)
    with open(os.path.join(SYSFS_FIXTURES, "derived_roce_mlx5_ofed", "_read_errors.json")) as f:
        shared = json.load(f)
    assert recorded["errno"] == "EINVAL"
    assert sorted(recorded["paths"]) == sorted(shared["paths"])
    assert recorded["by_errno"] == {"EINVAL": sorted(shared["paths"])}
    for p in recorded["paths"]:
        assert not os.path.lexists(os.path.join(str(dest), p.lstrip("/")))  # left out of the tree
    monkeypatch.undo()
    assert gather_rdma_facts(str(dest / "sys")) == gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"))


# --------------------------------------------------------------------------
# Trees captured in the lab from real rxe devices (tests/unit/fixtures/sysfs/lab_*)
# --------------------------------------------------------------------------
def _tool(capture_root, name):
    path = os.path.join(capture_root, "_tools", name)
    if not os.path.exists(path):
        pytest.skip("%s has no %s (capture with --with-tools)" % (os.path.basename(capture_root), name))
    with open(path) as f:
        return f.read()


def parse_ibv_devinfo(text):
    """{hca: {node_guid, sys_image_guid, fw_ver, ports: {n: {state_id, link_layer, gids: {i: (gid, type)}}}}}"""
    result, hca, port = {}, None, None
    for line in text.splitlines():
        m = re.match(r"^hca_id:\s*(\S+)", line)
        if m:
            hca = result.setdefault(m.group(1), {"ports": {}})
            continue
        m = re.match(r"^\s+port:\s+(\d+)", line)
        if m and hca is not None:
            port = hca["ports"].setdefault(int(m.group(1)), {"gids": {}})
            continue
        m = re.match(r"^\s+(node_guid|sys_image_guid|fw_ver):\s+(\S*)", line)
        if m and hca is not None and port is None:
            hca[m.group(1)] = m.group(2)
            continue
        if port is None:
            continue
        m = re.match(r"^\s+state:\s+\S+ \((\d+)\)", line)
        if m:
            port["state_id"] = int(m.group(1))
        m = re.match(r"^\s+link_layer:\s+(\S+)", line)
        if m:
            port["link_layer"] = m.group(1)
        m = re.fullmatch(r"\s+GID\[\s*(\d+)\]:\s+([^,\s]+)(?:, (.+))?", line)
        if m:
            port["gids"][int(m.group(1))] = (m.group(2), (m.group(3) or "").strip() or None)
    return result


def test_ibv_devinfo_parser_on_the_reference_output():
    """The parser the lab-capture tests use, on real ibv_devinfo -v output (shared/reference)."""
    with open(os.path.join(FIXTURES, "rdma_tools", "rxe_debian12_tools_output.txt")) as f:
        parsed = parse_ibv_devinfo(f.read())
    rxe = parsed["rxe0"]
    assert (rxe["node_guid"], rxe["fw_ver"]) == ("5054:00ff:fe12:3451", "0.0.0")
    assert rxe["ports"][1]["state_id"] == 4 and rxe["ports"][1]["link_layer"] == "Ethernet"
    assert rxe["ports"][1]["gids"][1] == ("::ffff:192.0.2.11", "RoCE v2")
    assert sorted(rxe["ports"][1]["gids"]) == [0, 1, 2, 3, 4]


if not LAB_CAPTURES:
    def test_lab_rxe_captures():
        pytest.skip("no lab capture yet: on a lab VM with rxe on eth1 (IPv4, IPv6, a VLAN), run "
                    "`python3 capture_rdma_sysfs.py --with-tools /tmp/lab_rxe_lab1`, copy the folder back and run "
                    "`python3 tests/unit/fixtures/sysfs/trees.py pack /path/lab_rxe_lab1`: these tests then run on it")


@pytest.mark.parametrize("capture_root", LAB_CAPTURES, ids=[os.path.basename(p) for p in LAB_CAPTURES])
def test_lab_capture_matches_rdma_link(capture_root):
    facts = gather_rdma_facts(os.path.join(capture_root, "sys"))
    links = json.loads(_tool(capture_root, "rdma_link.json"))
    assert links, "rdma link shows no device"
    for link in links:
        port = port_of(facts, link["ifname"], link["port"])
        assert port["state"] == link["state"]
        assert port["phys_state"].replace("_", "").lower() == link["physical_state"].replace("_", "").lower()
        assert port["netdev"] == link.get("netdev")
        dev = [d for d in facts["devices"] if d["name"] == link["ifname"]][0]
        assert dev["soft"] is True and dev["driver"] == "rdma_rxe" and dev["parent_netdev"] == link.get("netdev")


@pytest.mark.parametrize("capture_root", LAB_CAPTURES, ids=[os.path.basename(p) for p in LAB_CAPTURES])
def test_lab_capture_matches_ibv_devinfo(capture_root):
    facts = gather_rdma_facts(os.path.join(capture_root, "sys"))
    parsed = parse_ibv_devinfo(_tool(capture_root, "ibv_devinfo_v.txt"))
    assert sorted(parsed) == sorted(d["name"] for d in facts["devices"])
    for dev in facts["devices"]:
        info = parsed[dev["name"]]
        assert dev["node_guid"] == info["node_guid"] and dev["sys_image_guid"] == info["sys_image_guid"]
        assert dev["fw_ver"] == info["fw_ver"] or (dev["fw_ver"] is None and info["fw_ver"] in ("0.0.0", ""))
        for port in dev["ports"]:
            pinfo = info["ports"][port["number"]]
            assert (port["state_id"], port["link_layer"]) == (pinfo["state_id"], pinfo["link_layer"])
            assert dict((g["index"], (g["gid"], g["type"])) for g in port["gids"]) == dict(
                (i, (normalise_gid(gid), gtype)) for i, (gid, gtype) in pinfo["gids"].items())


@pytest.mark.parametrize("capture_root", LAB_CAPTURES, ids=[os.path.basename(p) for p in LAB_CAPTURES])
def test_lab_capture_matches_ip_addr(capture_root):
    facts = gather_rdma_facts(os.path.join(capture_root, "sys"))
    addrs = json.loads(_tool(capture_root, "ip_addr.json"))
    by_name = dict((a["ifname"], a) for a in addrs)
    checked = 0
    for dev in facts["devices"]:
        for port in dev["ports"]:
            own = by_name[port["netdev"]]
            assert port["mtu"] == own["mtu"]
            gids = set((g["netdev"], g["ip"]) for g in port["gids"] if g["type"] == "RoCE v2")
            for name, entry in by_name.items():
                if name != port["netdev"] and facts["netdevs"].get(name) != {"device": dev["name"], "port": port["number"]}:
                    continue
                for a in entry.get("addr_info", []):
                    if a.get("family") in ("inet", "inet6"):
                        assert (name, a["local"]) in gids, (name, a["local"])
                        checked += 1
            v4 = [a["local"] for a in own.get("addr_info", []) if a.get("family") == "inet"]
            if v4:
                index = port["roce_v2_ipv4_gid_index"]
                chosen = [g for g in port["gids"] if g["index"] == index][0]
                assert chosen["ip"] in v4 and chosen["netdev"] == port["netdev"]
            # every VLAN / macvlan above the port's netdev maps to this port, never replaces it
            for name, entry in by_name.items():
                if entry.get("link") == port["netdev"]:
                    assert facts["netdevs"][name] == {"device": dev["name"], "port": port["number"]}
    assert checked > 0


@pytest.mark.parametrize("capture_root", LAB_CAPTURES, ids=[os.path.basename(p) for p in LAB_CAPTURES])
def test_lab_capture_host_facts(capture_root):
    """What the rxe VMs show beyond the tools: soft device, loaded modules, inbox stack,
    VLAN and macvlan GIDs kept apart from the port's own netdev."""
    facts = gather_rdma_facts(os.path.join(capture_root, "sys"))
    links = json.loads(_tool(capture_root, "rdma_link.json"))
    addrs = json.loads(_tool(capture_root, "ip_addr.json"))
    assert facts["modules"]["rdma_rxe"] and facts["modules"]["ib_core"] and facts["modules"]["ib_uverbs"]
    assert not facts["modules"]["mlx5_ib"] and not facts["modules"]["mlx_compat"]
    assert facts["stack"] == {"flavor": "inbox", "version": None}
    for link in links:
        dev = [d for d in facts["devices"] if d["name"] == link["ifname"]][0]
        assert (dev["soft"], dev["driver"], dev["pci_address"], dev["fw_ver"], dev["sriov"]) == (True, "rdma_rxe", None, None, None)
        port = port_of(facts, link["ifname"], link["port"])
        uppers = [a["ifname"] for a in addrs if a.get("link") == link["netdev"]]
        assert uppers, "capture the lab with a VLAN/macvlan on the rxe netdev"
        for upper in uppers:
            assert facts["netdevs"][upper] == {"device": link["ifname"], "port": link["port"]}
            assert any(g["netdev"] == upper for g in port["gids"])
        own_v4 = [a["local"] for a in addrs if a["ifname"] == link["netdev"] for a in a["addr_info"] if a["family"] == "inet"]
        chosen = [g for g in port["gids"] if g["index"] == port["roce_v2_ipv4_gid_index"]][0]
        assert chosen["ip"] in own_v4 and chosen["netdev"] == link["netdev"] and chosen["type"] == "RoCE v2"


@pytest.mark.parametrize("capture_root", LAB_CAPTURES, ids=[os.path.basename(p) for p in LAB_CAPTURES])
def test_lab_capture_read_errors_replayed(capture_root, monkeypatch):
    """Every read the lab kernel refused (2030 EINVALs: empty slots of rxe's 1024-entry
    GID table) is refused again, in place: the facts stay the same."""
    sys_root = os.path.join(capture_root, "sys")
    expected = gather_rdma_facts(sys_root)
    with open(os.path.join(capture_root, "_read_errors.json")) as f:
        by_errno = json.load(f)["by_errno"]
    for name, paths in by_errno.items():
        KernelRefusals(monkeypatch, [os.path.join(sys_root, p[len("/sys/"):]) for p in paths], getattr(errno, name))
        assert gather_rdma_facts(sys_root) == copy.deepcopy(expected)
        monkeypatch.undo()


def test_gatherer_runs_no_subprocess(monkeypatch):
    """Facts come from files only."""
    import subprocess

    def forbidden(*args, **kwargs):
        raise AssertionError("the facts gatherer must not run commands")

    for name in ("Popen", "run", "call", "check_output"):
        monkeypatch.setattr(subprocess, name, forbidden)
    monkeypatch.setattr(os, "system", forbidden)
    assert gather_rdma_facts(fixture_sys("derived_roce_mlx5_ofed"))["devices"][0]["name"] == "mlx5_0"
    with open(rdma_facts.__file__) as f:
        assert not re.search(r"^\s*(import|from)\s+(subprocess|os\.system)", f.read(), re.M)


# --------------------------------------------------------------------------
# Big hosts: devices read by forked workers (real fork, real pipes)
# --------------------------------------------------------------------------
def _open_fds():
    return sorted(os.listdir("/proc/self/fd"))


def _no_children_left():
    """True when this process has no child (running or zombie) left."""
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.fixture(name="big_host", scope="module")
def fixture_big_host(tmp_path_factory):
    """The large synthetic host of benchmarks/facts.py (fixtures/sysfs/synthetic_host.py: 80 devices, SR-IOV VFs, VLANs, rdma_cm)."""
    sys_root = str(tmp_path_factory.mktemp("big") / "sys")
    build_host(sys_root)
    return sys_root


@pytest.mark.parametrize("workers", [2, 3, 7, 200])
def test_workers_give_the_same_facts(big_host, workers):
    fds = _open_fds()
    for subset in (["min"], ["counters"]):
        sequential = gather_rdma_facts(big_host, gather_subset=subset, workers=1)
        assert len(sequential["devices"]) == 80
        assert gather_rdma_facts(big_host, gather_subset=subset, workers=workers) == sequential
    assert _open_fds() == fds and _no_children_left()


def test_workers_on_a_small_tree():
    sys_root = fixture_sys("derived_gpu_nic_topology")
    assert gather_rdma_facts(sys_root, workers=4) == gather_rdma_facts(sys_root, workers=1)


def test_workers_see_the_kernel_refusals(big_host, monkeypatch):
    """The EINVAL double is in place in the forked workers too (they are copies of this process)."""
    clean = gather_rdma_facts(big_host, workers=1)
    last = clean["devices"][-1]["name"]  # read by the last worker
    refused = [os.path.join(big_host, "class", "infiniband", last, "ports", "1", "gid_attrs", "types", "0")]
    KernelRefusals(monkeypatch, refused, errno.EINVAL)
    facts = gather_rdma_facts(big_host, workers=4)
    assert facts == gather_rdma_facts(big_host, workers=1) != clean
    assert [g["index"] for g in port_of(facts, last)["gids"]] == [g["index"] for g in port_of(clean, last)["gids"]][1:]


def test_a_failing_worker_has_its_share_read_here(big_host, monkeypatch):
    sys_root = big_host
    expected = gather_rdma_facts(sys_root, workers=1)
    parent = os.getpid()
    real_device = rdma_facts.RdmaFactsGatherer._device

    def device_failing_in_workers(self, name):
        if os.getpid() != parent:
            raise RuntimeError("a worker dies")
        return real_device(self, name)

    monkeypatch.setattr(rdma_facts.RdmaFactsGatherer, "_device", device_failing_in_workers)
    fds = _open_fds()
    assert gather_rdma_facts(sys_root, workers=4) == expected
    assert _open_fds() == fds and _no_children_left()


def test_no_fork_means_reading_everything_here(big_host, monkeypatch):
    sys_root = big_host
    expected = gather_rdma_facts(sys_root, workers=1)

    def no_fork():
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    fds = _open_fds()
    assert gather_rdma_facts(sys_root, workers=4) == expected
    assert _open_fds() == fds


def test_no_pipe_means_reading_everything_here(big_host, monkeypatch):
    """EMFILE from os.pipe (a process out of descriptors) used to end the module: the share is read here instead."""
    expected = gather_rdma_facts(big_host, workers=1)

    def no_pipe():
        raise OSError(errno.EMFILE, os.strerror(errno.EMFILE))

    monkeypatch.setattr(os, "pipe", no_pipe)
    assert gather_rdma_facts(big_host, workers=4) == expected


def test_default_workers_follow_devices_and_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert [rdma_facts.default_workers(n) for n in (0, 1, 31, 63, 64, 80, 1000)] == [1, 1, 1, 1, 2, 2, 2]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)))
    assert [rdma_facts.default_workers(n) for n in (31, 96, 1000)] == [1, 3, 8]
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    assert rdma_facts.default_workers(1000) == 1


# --------------------------------------------------------------------------
# Faults: unexpected read errors and devices that disappear while read
# --------------------------------------------------------------------------
@pytest.mark.parametrize("err", [errno.ETIMEDOUT, errno.EBUSY, errno.EAGAIN])
def test_unexpected_read_errors_read_as_unknown_with_a_warning(tmp_path, monkeypatch, err):
    """These errnos used to end the module with a traceback; now the value is null and a warning names the file."""
    sys_root = copy_fixture("derived_roce_mlx5_ofed", tmp_path)
    clean = gather_rdma_facts(sys_root)
    dev_dir = os.path.realpath(os.path.join(sys_root, "class", "infiniband", "mlx5_0"))
    bad = [os.path.join(dev_dir, "fw_ver"), os.path.join(dev_dir, "ports", "1", "rate")]
    KernelRefusals(monkeypatch, bad, err)
    warnings = []
    facts = gather_rdma_facts(sys_root, warnings=warnings)
    (dev,) = facts["devices"]
    assert dev["fw_ver"] is None and dev["ports"][0]["rate"] is None and dev["ports"][0]["rate_gbps"] is None
    # everything else as before
    want = copy.deepcopy(clean)
    want["devices"][0]["fw_ver"] = None
    want["devices"][0]["ports"][0].update(rate=None, rate_gbps=None)
    assert facts == want
    assert warnings == ["could not read %s: %s (%s); reported as unknown" % (path, os.strerror(err), errno.errorcode[err])
                        for path in bad]


class VanishOnOpen(object):
    """FAULT INJECTION: removes an RDMA device's sysfs folder and class entry (as the kernel does on a driver unload
    or hot unplug) at the moment the gatherer opens one of its files, so the rest of that device's reads find it gone
    for real."""

    def __init__(self, monkeypatch, sys_root, device, trigger="ports/1/state"):
        self.class_link = os.path.join(sys_root, "class", "infiniband", device)
        self.dev_dir = os.path.realpath(self.class_link)
        self.trigger = trigger
        self.fired = False
        real_open = os.open
        double = self

        def vanishing_open(path, flags, mode=0o777, *, dir_fd=None):
            if not double.fired and dir_fd is not None and path == double.trigger.split("/", 2)[-1] and \
                    os.readlink("/proc/self/fd/%d" % dir_fd) == os.path.join(double.dev_dir, *double.trigger.split("/")[:-1]):
                double.fired = True
                shutil.rmtree(double.dev_dir)
                os.unlink(double.class_link)
            return real_open(path, flags, mode, dir_fd=dir_fd)

        monkeypatch.setattr(os, "open", vanishing_open)


def test_a_device_that_vanishes_mid_read_is_reported_gone(tmp_path, monkeypatch):
    sys_root = copy_fixture("derived_rxe", tmp_path)
    double = VanishOnOpen(monkeypatch, sys_root, "rxe0")
    warnings = []
    facts = gather_rdma_facts(sys_root, warnings=warnings)
    assert double.fired
    assert facts["devices"] == [] and facts["netdevs"] == {}
    assert warnings == ["RDMA device rxe0 disappeared while its facts were read (%s is gone or changed): left out"
                        % os.path.join(sys_root, "class", "infiniband", "rxe0")]


def test_a_listed_device_already_gone_is_left_out(tmp_path):
    sys_root = copy_fixture("derived_rxe", tmp_path)
    shutil.rmtree(os.path.realpath(os.path.join(sys_root, "class", "infiniband", "rxe0")))  # the class link dangles
    warnings = []
    assert gather_rdma_facts(sys_root, warnings=warnings)["devices"] == []
    assert len(warnings) == 1 and warnings[0].startswith("RDMA device rxe0 disappeared")


def test_workers_report_vanished_devices_and_read_errors(tmp_path, monkeypatch):
    """Forked workers send their warnings back with their devices; a vanished device is left out there too."""
    sys_root = str(tmp_path / "sys")
    build_host(sys_root)
    clean = gather_rdma_facts(sys_root, workers=1)
    names = [d["name"] for d in clean["devices"]]
    gone, flaky = names[-1], names[-2]  # both read by the last worker
    VanishOnOpen(monkeypatch, sys_root, gone)
    flaky_rate = os.path.join(os.path.realpath(os.path.join(sys_root, "class", "infiniband", flaky)), "ports", "1", "rate")
    KernelRefusals(monkeypatch, [flaky_rate], errno.ETIMEDOUT)
    parent = os.getpid()
    seen = tmp_path / "read-by"  # a file: the workers' memory is their own
    real_device = rdma_facts.RdmaFactsGatherer._device

    def device(self, name):
        if name == gone:
            with open(str(seen), "a") as handle:
                handle.write("%d\n" % os.getpid())
        return real_device(self, name)

    monkeypatch.setattr(rdma_facts.RdmaFactsGatherer, "_device", device)
    warnings = []
    facts = gather_rdma_facts(sys_root, workers=4, warnings=warnings)
    pids = [int(pid) for pid in seen.read_text().split()]
    assert pids and parent not in pids  # read (and found gone) in a worker
    assert [d["name"] for d in facts["devices"]] == names[:-1]
    assert port_of(facts, flaky)["rate"] is None
    assert sorted(warnings) == sorted([
        "could not read %s: %s (ETIMEDOUT); reported as unknown" % (flaky_rate, os.strerror(errno.ETIMEDOUT)),
        "RDMA device %s disappeared while its facts were read (%s is gone or changed): left out"
        % (gone, os.path.join(sys_root, "class", "infiniband", gone)),
    ])
    assert _no_children_left()


@pytest.mark.parametrize("bad", ["/sys\0/x", "/sys\n", "\0"])
def test_sysfs_path_with_nul_or_control_characters_is_refused_by_name(bad):
    with pytest.raises(RdmaFactsError, match=r"^sysfs_path: .* contains a (NUL byte|control character)"):
        gather_rdma_facts(bad)
