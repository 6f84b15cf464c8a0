# -*- coding: utf-8 -*-
"""The mlnx_qos backend end to end with the FakeMlnxQos TEST DOUBLE (mlnx_qos
itself and an mlx5 NIC cannot run in a unit test) on the mlx5 fixture tree,
including the trust trap: on upstream kernels mlnx_qos derives trust from the
DCB APP table, so removing the last dscp2prio entry switches the port to PCP.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.qos import engine
from ansible_collections.rdma.fabric.plugins.module_utils.qos.engine import ApplyError
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    FakeEthtool,
    FakeHost,
    FakeIpLink,
    FakeMlnxQos,
    FakeModule,
    MlnxPort,
    make_tree,
    write,
)

DEFAULTS = [(5, i >> 3, i) for i in reversed(range(64))]   # what `mlnx_qos --trust dscp` leaves, newest first


class Host(object):
    def __init__(self, tmp_path, sysfs_trust=False):
        self.sysfs = make_tree(tmp_path, "derived_roce_mlx5_ofed")
        if sysfs_trust:
            write(os.path.join(self.sysfs, "class", "net", "ens1f0", "qos", "trust"), "pcp\n")
        self.port = MlnxPort(sysfs_trust=sysfs_trust)
        self.mq = FakeMlnxQos({"ens1f0": self.port})
        self.host = FakeHost({"mlnx_qos": self.mq, "ip": FakeIpLink(self.sysfs), "ethtool": FakeEthtool()})

    def run(self, check_mode=False, **params):
        params.setdefault("sysfs_path", self.sysfs)
        params.setdefault("netdev", "ens1f0")
        return engine.run(FakeModule(params, self.host, check_mode=check_mode))

    def table(self):
        if self.port.sysfs_trust:
            return dict(self.port.sysfs_table)
        return dict((a[2], a[1]) for a in self.port.apps if a[0] == 5)

    def mq_calls(self):
        return [c[3:] for c in self.host.changing_calls() if c[0].endswith("mlnx_qos")]


@pytest.fixture
def mlx(tmp_path):
    return Host(tmp_path)


def test_profile_from_pcp_then_idempotent(mlx):
    r, w = mlx.run(trust="dscp", pfc=[3], dscp2prio={26: 3, 48: 6, 30: 6},
                   ets=[{"tc": 0, "bw": 40}, {"tc": 3, "bw": 60}, {"tc": 6, "tsa": "strict"}],
                   prio_tc=[0, 0, 0, 3, 0, 0, 6, 0], ecn={"np": [3], "rp": [3]}, cnp={"dscp": 48, "priority": 6})
    assert r["changed"] and r["backend"] == "mlnx_qos"
    assert r["backend_reason"] == "auto: mlnx_qos is installed (no iproute2 dcb)"
    assert r["backends"]["ecn"] == "sysfs_ecn" and r["backends"]["cnp"] == "sysfs_ecn"
    assert mlx.mq_calls() == [
        ["--trust", "dscp"],
        ["--dscp2prio", "set,30,6"],                     # 26->3 and 48->6 are already the defaults
        ["--pfc", "0,0,0,1,0,0,0,0"],
        ["--tsa", "ets,vendor,vendor,ets,vendor,vendor,strict,vendor", "--tcbw", "40,0,0,60,0,0,0,0",
         "--prio_tc", "0,0,0,3,0,0,6,0"],
    ]
    assert mlx.port.trust() == "dscp" and mlx.table()[30] == 6 and len(mlx.table()) == 64
    assert mlx.port.pfc_en == 8 and mlx.port.tsa == [2, 255, 255, 2, 255, 255, 0, 255]
    assert r["changes"]["ecn"] is False          # the fixture already has np/rp on priority 3 only
    mlx.host.calls[:] = []
    r2, _w = mlx.run(trust="dscp", pfc=[3], dscp2prio={26: 3, 48: 6, 30: 6},
                     ets=[{"tc": 0, "bw": 40}, {"tc": 3, "bw": 60}, {"tc": 6, "tsa": "strict"}],
                     prio_tc=[0, 0, 0, 3, 0, 0, 6, 0], ecn={"np": [3], "rp": [3]}, cnp={"dscp": 48, "priority": 6})
    assert r2["changed"] is False and mlx.host.changing_calls() == []


def test_the_double_models_the_trap(mlx):
    """Deleting the last DSCP entry with mlnx_qos silently switches trust to pcp."""
    mlx.port.apps = [(5, 5, 26)]
    assert mlx.port.trust() == "dscp"
    rc, out, _err = mlx.mq(["mlnx_qos", "-i", "ens1f0", "--dscp2prio", "del,26,5"])
    assert rc == 0 and "Priority trust state: pcp" in out


def test_changing_the_only_entry_never_passes_through_pcp(mlx):
    mlx.port.apps = [(5, 5, 26)]
    r, _w = mlx.run(dscp2prio={26: 3})
    assert mlx.mq_calls() == [["--dscp2prio", "set,26,3"]]    # set replaces; no del that would empty the table
    assert mlx.port.trust_history == ["dscp", "dscp"]
    assert mlx.table() == {26: 3} and r["after"] == {"trust": "dscp", "dscp2prio": {"26": 3}}


def test_rollback_restores_entries_without_flipping_trust(mlx):
    mlx.port.apps = [(5, 6, 48), (5, 5, 26)]
    mlx.port.fail.add("pfc")
    with pytest.raises(ApplyError) as exc:
        mlx.run(dscp2prio={26: 3, 10: 1}, pfc=[3])
    assert mlx.table() == {26: 5, 48: 6}
    assert "pcp" not in mlx.port.trust_history
    # the table read before the run, by the mlx5 rule (ens1f0's driver): 26's priority set back (it replaces),
    # then 10 dropped (the table keeps 26 and 48)
    assert exc.value.rolled_back == ["restore the DSCP table read before the run (mlx5 rule): "
                                     "/usr/sbin/mlnx_qos -i ens1f0 --dscp2prio set,26,5; "
                                     "/usr/sbin/mlnx_qos -i ens1f0 --dscp2prio del,10,1"]
    assert "Netlink error: Bad value. see dmesg." in str(exc.value)


def test_rollback_of_trust_pcp_restores_the_whole_custom_table(mlx):
    mlx.port.apps = [(5, 6, 30)] + [a for a in DEFAULTS if a[2] != 30]
    before = mlx.table()
    mlx.port.fail.add("pfc")
    with pytest.raises(ApplyError):
        mlx.run(trust="pcp", pfc=[3])
    assert mlx.port.trust() == "dscp" and mlx.table() == before


def test_trust_pcp_on_app_trust_deletes_all_entries(mlx):
    mlx.port.apps = list(DEFAULTS)
    r, _w = mlx.run(trust="pcp")
    assert mlx.mq_calls() == [["--trust", "pcp"]] and mlx.port.apps == []
    assert r["after"] == {"trust": "pcp"}


def test_read_back_catches_a_mapping_the_driver_did_not_take(mlx):
    mlx.port.apps = list(DEFAULTS)
    real = mlx.host.tools["mlnx_qos"]

    def firmware_ignoring_dscp_30(argv):
        if "set,30,6" in argv:
            return 0, FakeMlnxQos.pretty(mlx.port, False), ""   # prints success, changes nothing
        return real(argv)
    mlx.host.tools["mlnx_qos"] = firmware_ignoring_dscp_30
    with pytest.raises(ApplyError) as exc:
        mlx.run(dscp2prio={30: 6}, pfc=[3])
    msg = str(exc.value)
    assert "does not read back as planned (dscp2prio: expected {'30': 6}, reads {'30': 3})" in msg
    assert exc.value.failed_step == "read-back"
    assert mlx.port.pfc_en == 0          # the pfc change was rolled back too


def test_mlnx_ofed_sysfs_trust_is_independent_of_the_table(tmp_path):
    h = Host(tmp_path, sysfs_trust=True)
    r, _w = h.run(dscp2prio={26: 5})
    assert r["backend"] == "mlnx_qos"
    assert h.mq_calls() == [["--trust", "dscp"], ["--dscp2prio", "set,26,5"]]
    r, _w = h.run(trust="pcp")
    assert h.port.trust() == "pcp" and h.table()[26] == 5 and len(h.table()) == 64


def test_auto_prefers_mlnx_qos_on_nvidia_driver_even_with_dcb_installed(tmp_path):
    h = Host(tmp_path, sysfs_trust=True)

    def dcb_must_not_run(argv):
        raise AssertionError("dcb must not be used: %r" % (argv,))
    h.host.tools["dcb"] = dcb_must_not_run
    r, _w = h.run(pfc=[3])
    assert r["backend"] == "mlnx_qos" and "qos/trust" in r["backend_reason"]


def test_unsupported_port_and_firmware_dcbx_warning(mlx):
    mlx.host.tools["mlnx_qos"] = lambda argv: (1, "ETS features are not supported on your system\n", "")
    with pytest.raises(QosError) as exc:
        mlx.run(pfc=[3])
    assert "nothing was changed" in str(exc.value) and "ETS features are not supported" in str(exc.value)
    mlx.host.tools["mlnx_qos"] = mlx.mq
    mlx.port.dcbx_host = False
    _r, w = mlx.run(pfc=[3])
    assert len(w) == 1 and "DCBX mode: Firmware controlled" in w[0]


def test_explicit_backend_dcb_missing_fails_before_change(mlx):
    with pytest.raises(QosError) as exc:
        mlx.run(pfc=[3], backend="dcb")
    assert "the dcb command is not installed" in str(exc.value)
    assert mlx.host.changing_calls() == []


def test_mtu_on_mlx5_tree(mlx):
    r, _w = mlx.run(mtu=1500)
    tree = SysfsTree(mlx.sysfs)
    assert r["before"] == {"mtu": 9000} and r["after"] == {"mtu": 1500}
    assert tree.read_int(tree.sys("class", "net", "ens1f0", "mtu")) == 1500
