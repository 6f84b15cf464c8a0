# -*- coding: utf-8 -*-
"""``rdma-fabric qos-apply`` (module_utils/qos/reapply.py), in-process, on the
real lab sysfs capture (rxe9 on dcbsim0, rxe0 on virtio eth1), with the
commands answered by the TEST DOUBLES of qos_test_doubles.py (FakeDcbTool,
FakeIpLink, FakeEthtool, FakeRdmaCmConfigfs) in place of the host's tools.
The same file run from the real zip, without Ansible, is tested in
tests/unit/plugins/plugin_utils/test_host_runtime.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import signal

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import host_cli
from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs, lock, reapply
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    DcbPort,
    FakeDcbTool,
    FakeEthtool,
    FakeHost,
    FakeIpLink,
    FakeRdmaCmConfigfs,
    make_tree,
)

DCBSIM0 = {"netdev": "dcbsim0", "trust": "dscp", "pfc": "0,0,0,1,0,0,0,0", "dscp2prio": {"26": 3, "48": 6},
           "roce_tos": 106, "roce_mode": "v2", "mtu": 9000, "backend": "auto", "on_unsupported": "fail"}
ETH1 = {"netdev": "eth1", "pfc": [3], "roce_tos": 106, "mtu": 4200, "on_unsupported": "warn"}


class Host(object):
    def __init__(self, tmp_path, monkeypatch):
        self.sysfs = make_tree(tmp_path, "lab_rxe_dcbsim_virtio")
        self.cfs = FakeRdmaCmConfigfs()
        monkeypatch.setattr(configfs, "_mkdir", self.cfs.mkdir)
        monkeypatch.setattr(configfs, "_rmdir", self.cfs.rmdir)
        self.dcb_ports = {"dcbsim0": DcbPort(), "eth1": DcbPort(supported=False)}
        self.ip = FakeIpLink(self.sysfs)
        self.host = FakeHost({"dcb": FakeDcbTool(self.dcb_ports), "ip": self.ip, "ethtool": FakeEthtool()})
        monkeypatch.setattr(reapply, "HostProcess", lambda: self.host)
        self.saved = tmp_path / "saved"
        self.saved.mkdir()
        self.lock = str(tmp_path / "run" / "qos.lock")

    def save(self, entry, text=None):
        (self.saved / (entry["netdev"] + ".json")).write_text(text or json.dumps(entry, sort_keys=True, indent=4))

    def run(self, capsys, *args):
        rc = host_cli.main(["qos-apply", "--dir", str(self.saved), "--sysfs", self.sysfs, "--lock", self.lock]
                           + list(args))
        out, err = capsys.readouterr()
        return rc, out.splitlines(), err


@pytest.fixture
def host(tmp_path, monkeypatch):
    return Host(tmp_path, monkeypatch)


def test_applies_every_saved_port_then_changes_nothing(host, capsys):
    host.save(DCBSIM0)
    host.save(ETH1)
    rc, out, err = host.run(capsys)
    assert rc == 0, (out, err)
    assert out[0] == "dcbsim0: changed (dscp2prio, mtu, pfc, roce_tos, trust) backend=dcb"
    assert out[1].startswith("eth1: warning: eth1: skipped pfc: eth1 has no DCB support")
    assert out[2] == "eth1: changed (mtu, roce_tos)"
    assert host.dcb_ports["dcbsim0"].pfc_en == 8 and host.cfs.kernel_values("rxe0")["default_roce_tos"] == "106"
    host.host.calls[:] = []
    rc, out, err = host.run(capsys)
    assert rc == 0 and out[0] == "dcbsim0: ok backend=dcb" and out[2] == "eth1: ok"
    assert host.host.changing_calls() == []


def test_check_mode_and_one_port_by_name(host, capsys):
    host.save(DCBSIM0)
    host.save(ETH1)
    rc, out, err = host.run(capsys, "--check", "dcbsim0")
    assert rc == 0 and out == ["dcbsim0: changed (dscp2prio, mtu, pfc, roce_tos, trust) backend=dcb (check mode)"]
    assert host.host.changing_calls() == [] and host.dcb_ports["dcbsim0"].pfc_en == 0
    rc, out, err = host.run(capsys, "eth9")
    assert rc == 2 and "no saved settings for eth9" in err


def test_ports_that_are_not_there_yet_are_skipped(host, capsys):
    host.save({"netdev": "eth7", "pfc": [3]})
    os.makedirs(os.path.join(host.sysfs, "class", "net", "eth8"))
    host.save({"netdev": "eth8", "mtu": 9000})
    rc, out, err = host.run(capsys)
    assert rc == 0
    assert out == ["eth7: skipped, not ready: netdev eth7 does not exist (yet)",
                   "eth8: skipped, not ready: eth8.netdev: interface 'eth8' is not an RDMA port: no RDMA device under "
                   "%s has it as its netdev or in its GID table. Create the RDMA link first (e.g. "
                   "rdma.fabric.soft_roce or the NIC driver)" % os.path.join(host.sysfs, "class", "infiniband")]


def test_a_failing_port_is_rolled_back_and_the_others_are_configured(host, capsys):
    host.save(DCBSIM0)
    host.save(dict(ETH1, mtu=9500))     # above the device maximum (9216)
    rc, out, err = host.run(capsys)
    assert rc == 1
    assert out[0].startswith("dcbsim0: changed")
    assert out[-1].startswith("eth1: FAILED: eth1: step 2 of 2 (mtu) failed: /usr/sbin/ip link set dev eth1 mtu 9500")
    assert "Rolled back, in reverse order: write '0' > " in out[-1]
    assert host.cfs.kernel_values("rxe0")["default_roce_tos"] == "0"
    assert host.dcb_ports["dcbsim0"].pfc_en == 8


@pytest.mark.parametrize("text,needle", [
    # the input that triggered the defect: two keys meaning DSCP 26 (json keeps the last one silently)
    ('{"netdev": "dcbsim0", "dscp2prio": {"26": 3, "26": 5}}', "the key '26' is given twice"),
    ('{"netdev": "dcbsim0", "pfc": [0, 0, 0, 1]}', "dcbsim0.pfc: [0, 0, 0, 1] reads two ways"),
    ('{"netdev": "eth2", "pfc": [3]}', "expected one port's settings {\"netdev\": \"dcbsim0\""),
    ('{"netdev": "dcbsim0", "speed": 1}', "dcbsim0: unknown option(s) speed"),
    ('{"ANSIBLE_MODULE_ARGS": {"netdev": "dcbsim0"}}', "expected one port's settings"),
    ("not json", "Expecting value"),
])
def test_unusable_saved_settings_are_reported_and_the_rest_applied(host, capsys, text, needle):
    host.save({"netdev": "dcbsim0"}, text)
    host.save(ETH1)
    rc, out, err = host.run(capsys)
    assert rc == 2
    assert out[0].startswith("dcbsim0: FAILED: unusable saved settings ") and needle in out[0]
    assert out[-1] == "eth1: changed (mtu, roce_tos)"
    assert host.host.calls and all("dcbsim0" not in " ".join(c) for c in host.host.changing_calls())


def test_the_lock_held_by_an_ansible_run(host, capsys):
    host.save(DCBSIM0)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:    # pragma: no cover - the child
        try:
            with lock.held("roce_qos (Ansible)", 5, path=host.lock):
                os.write(ready_w, b"x")
                signal.pause()
        finally:
            os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"x"
        rc, out, err = host.run(capsys, "--lock-timeout", "1")
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert rc == 1 and out == []
    assert ("rdma-fabric qos-apply: another QoS run holds the lock %s: pid %d (roce_qos (Ansible), since " % (host.lock, pid)) in err
    assert host.host.calls == []


def test_sigterm_rolls_back_the_port_under_way_and_stops(host, capsys):
    """udev restarts the service (SIGTERM) while dcbsim0's PFC is being set."""
    host.save(DCBSIM0)
    host.save(ETH1)
    real = host.host.tools["dcb"]

    def dcb_then_sigterm(argv):
        out = real(argv)
        if argv[1:3] == ["pfc", "set"]:
            os.kill(os.getpid(), signal.SIGTERM)
        return out
    host.host.tools["dcb"] = dcb_then_sigterm
    before = signal.getsignal(signal.SIGTERM)
    rc, out, err = host.run(capsys)
    assert rc == 1
    assert out[0].startswith("dcbsim0: FAILED: dcbsim0: stopped by SIGTERM after step 2 of 4 (pfc). Rolled back")
    assert out[1] == "stopping before eth1: asked to stop by SIGTERM (a restarted run re-applies every port)"
    assert host.dcb_ports["dcbsim0"].pfc_en == 0 and host.dcb_ports["dcbsim0"].apps == []
    assert signal.getsignal(signal.SIGTERM) == before
