# -*- coding: utf-8 -*-
"""rdma.fabric.roce_qos as Ansible runs it (AnsibleModule, argument_spec,
check mode, diff mode, exit/fail JSON) on a fixture sysfs tree (tmp copy).

Commands go to the scripted TEST DOUBLES of
tests/unit/plugins/module_utils/qos/qos_test_doubles.py (FakeDcbTool for
iproute2 dcb, FakeMlnxQos for NVIDIA mlnx_qos, FakeIpLink, FakeEthtool,
FakeRdmaCmConfigfs), which keep state and answer in the real output formats;
the real lab test (dcbsim) runs through Molecule.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic
from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs, engine, lock
from ansible_collections.rdma.fabric.plugins.modules import roce_qos
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (
    DcbPort,
    FakeDcbTool,
    FakeEthtool,
    FakeHost,
    FakeIpLink,
    FakeMlnxQos,
    FakeRdmaCmConfigfs,
    MlnxPort,
    make_tree,
)

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core < 2.19
    import contextlib
    import json

    from ansible.module_utils.common.text.converters import to_bytes

    @contextlib.contextmanager
    def patch_module_args(args):
        old = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = to_bytes(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = old


ORIGINAL_IS_SYSFS_MOUNT = engine._is_sysfs_mount


class Exited(Exception):
    def __init__(self, result):
        super(Exited, self).__init__(result)
        self.result = result


class Failed(Exited):
    pass


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """The real lab sysfs (rxe9 on dcbsim0 with DCB, rxe0 on virtio eth1 without); doubles installed."""
    sysfs = make_tree(tmp_path, "lab_rxe_dcbsim_virtio")
    cfs = FakeRdmaCmConfigfs()
    monkeypatch.setattr(configfs, "_mkdir", cfs.mkdir)
    monkeypatch.setattr(configfs, "_rmdir", cfs.rmdir)
    monkeypatch.setattr(lock, "LOCK_PATH", str(tmp_path / "run" / "qos.lock"))
    # TEST SEAM: the fixture trees play mounted sysfs (test_a_copy_of_sysfs_changes_nothing undoes it)
    monkeypatch.setattr(engine, "_is_sysfs_mount", lambda path: True)
    ports = {"dcbsim0": DcbPort(), "eth1": DcbPort(supported=False)}
    host = FakeHost({"dcb": FakeDcbTool(ports), "ip": FakeIpLink(sysfs), "ethtool": FakeEthtool()})

    class Lab(object):
        pass
    lab = Lab()
    lab.sysfs, lab.cfs, lab.ports, lab.host = sysfs, cfs, ports, host
    lab.warnings = []

    def exit_json(self, **kw):
        raise Exited(kw)

    def fail_json(self, **kw):
        raise Failed(kw)

    def get_bin_path(self, name, required=False, opt_dirs=None):
        path = host.get_bin_path(name)
        if required and not path:
            self.fail_json(msg="Failed to find required executable %s" % name)
        return path

    def run_command(self, args, **kw):
        return host.run_command(args, **kw)

    def warn(self, msg):
        lab.warnings.append(msg)

    for name, fn in (("exit_json", exit_json), ("fail_json", fail_json), ("get_bin_path", get_bin_path),
                     ("run_command", run_command), ("warn", warn)):
        monkeypatch.setattr(basic.AnsibleModule, name, fn)

    def run(check=False, diff=False, **args):
        args.setdefault("sysfs_path", sysfs)
        if check:
            args["_ansible_check_mode"] = True
        if diff:
            args["_ansible_diff"] = True
        del lab.warnings[:]
        with patch_module_args(args):
            with pytest.raises(Exited) as exc:
                roce_qos.main()
        return exc.value
    lab.run = run
    return lab


PROFILE = dict(netdev="dcbsim0", trust="dscp", pfc=[3], dscp2prio={"26": 3, "48": 6},
               prio_tc={"3": 3, "6": 6}, ets=[{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "tsa": "ets", "bw": 50}],
               roce_tos=106, roce_mode="v2", mtu=9000, pause=False)


def test_apply_then_idempotent(lab):
    res = lab.run(**PROFILE)
    assert not isinstance(res, Failed), res.result
    r = res.result
    assert r["changed"] is True
    assert (r["netdev"], r["device"], r["port"], r["backend"]) == ("dcbsim0", "rxe9", 1, "dcb")
    assert r["after"]["trust"] == "dscp" and r["after"]["pfc"] == [3]
    assert r["after"]["dscp2prio"] == {"26": 3, "48": 6}
    assert r["after"]["ets"][3] == {"tc": 3, "tsa": "ets", "bw": 50}
    assert r["after"]["prio_tc"] == [0, 0, 0, 3, 0, 0, 6, 0]
    assert r["after"]["roce_tos"] == 106 and r["after"]["mtu"] == 9000 and r["after"]["pause"] is False
    assert "diff" not in r
    assert lab.ports["dcbsim0"].pfc_en == 8
    res2 = lab.run(**PROFILE)
    assert res2.result["changed"] is False
    assert res2.result["commands"] == []
    assert all(v is False for v in res2.result["changes"].values())


def test_check_mode_with_diff_changes_nothing(lab):
    res = lab.run(check=True, diff=True, **PROFILE)
    r = res.result
    assert r["changed"] is True
    assert r["diff"]["before"]["pfc"] == [] and r["diff"]["after"]["pfc"] == [3]
    assert r["diff"]["before"]["trust"] == "pcp" and r["diff"]["after"]["trust"] == "dscp"
    assert r["diff"]["before"]["roce_tos"] == 0 and r["diff"]["after"]["roce_tos"] == 106
    assert len(r["commands"]) == 6
    assert lab.host.changing_calls() == []
    p = lab.ports["dcbsim0"]
    assert (p.pfc_en, p.apps, p.prio_tc) == (0, [], [0] * 8)
    assert lab.cfs.kernel_values("rxe9") == {"default_roce_mode": "RoCE v2", "default_roce_tos": "0"}
    # a real run afterwards does what check mode predicted
    r2 = lab.run(diff=True, **PROFILE).result
    assert r2["commands"] == r["commands"] and r2["diff"] == r["diff"]


def test_failure_part_way_rolls_back_and_fails(lab):
    lab.ports["dcbsim0"].fail.add("ets")
    res = lab.run(**PROFILE)
    assert isinstance(res, Failed)
    r = res.result
    assert "step 3 of 6 (ets) failed: /usr/sbin/dcb ets set" in r["msg"] and "Rolled back, in reverse order:" in r["msg"]
    assert len(r["rolled_back"]) == 2 and r["rollback_failed"] == []
    assert r["changed"] is False       # everything was restored
    assert r["failed_step"].startswith("/usr/sbin/dcb ets set dev dcbsim0")
    assert len(r["commands"]) == 3
    p = lab.ports["dcbsim0"]
    assert (p.pfc_en, p.apps) == (0, [])
    assert lab.cfs.kernel_values("rxe9")["default_roce_tos"] == "0"


@pytest.mark.parametrize("args,param,needle", [
    ({"netdev": "dcbsim0", "pfc": [9]}, "pfc", "pfc: priority 9 is out of range; allowed 0-7"),
    ({"netdev": "dcbsim0", "dscp2prio": {"64": 1}}, "dscp2prio", "DSCP 64 is out of range; allowed 0-63"),
    ({"netdev": "dcbsim0", "roce_tos": 300}, "roce_tos", "ToS 300 is out of range; allowed 0-255"),
    ({"netdev": "dcbsim0", "mtu": 20}, "mtu", "allowed 68-9978"),
    ({"netdev": "dcbsim0; reboot", "pfc": [3]}, "netdev", "no spaces or shell metacharacters"),
    ({"netdev": "$(reboot)", "pfc": [9]}, "netdev", "no spaces or shell metacharacters"),
    ({"device": "rxe9`id`", "pfc": [3]}, "device", "no spaces or shell metacharacters"),
    ({"netdev": "eth42", "pfc": [3]}, "netdev", "interface 'eth42' does not exist"),
    ({"device": "rxe9", "port": 2, "pfc": [3]}, "port", "rxe9 has no port 2"),
    ({"netdev": "dcbsim0", "ets": [{"tc": 0, "tsa": "strict", "bw": 5}]}, "ets", "bw must be 0 or omitted"),
    ({"netdev": "dcbsim0", "pfc": [3], "lock_timeout": -1}, "lock_timeout", "-1 is out of range; allowed: 0 (do not wait) to 86400"),
    ({"netdev": "dcbsim0", "pfc": [3], "lock_timeout": 10 ** 9}, "lock_timeout", "1000000000 is out of range; allowed: 0"),
    # ets in another form than a list of mappings: refused naming ets, showing the form
    ({"netdev": "dcbsim0", "ets": "50,0,0,50,0,0,0,0"}, "ets",
     "ets: got the text '50,0,0,50,0,0,0,0'; allowed: a list of mappings (keys: tc, tsa, bw), "
     "e.g. [{tc: 0, tsa: ets, bw: 50}, {tc: 3, tsa: ets, bw: 50}]"),
    ({"netdev": "dcbsim0", "ets": "tc=3 bw=100"}, "ets", "ets: got the text 'tc=3 bw=100'; allowed: a list of mappings"),
    ({"netdev": "dcbsim0", "ets": {"tc": 3, "bw": 100}}, "ets", "ets: got dict {'tc': 3, 'bw': 100}; allowed: a list"),
    ({"netdev": "dcbsim0", "ets": [{"tc": 3, "bw": 100}, "tc=0"]}, "ets", "ets[1]: got the text 'tc=0', not a mapping"),
    ({"netdev": "dcbsim0", "ets": [{"tsa": "ets", "bw": 100}]}, "ets", "ets: missing required arguments: tc found in ets"),
    ({"netdev": "dcbsim0", "ets": [{"tc": 3, "tsa": "wrr", "bw": 100}]}, "ets",
     "value of tsa must be one of: ets, strict, vendor, got: wrr found in ets"),
])
def test_bad_input_fails_before_anything_is_touched(lab, args, param, needle):
    res = lab.run(**args)
    assert isinstance(res, Failed)
    assert res.result["param"] == param
    assert needle in res.result["msg"]
    assert lab.host.calls == [] and lab.cfs.mkdirs == []


def test_ets_wrong_with_the_ports_state_fails_before_configfs_is_touched(lab):
    """ETS bandwidths that only fail with the classes not listed (read from the port): refused after the DCB read,
    before the rdma_cm configfs group is created to read roce_tos."""
    res = lab.run(netdev="dcbsim0", roce_tos=106, ets=[{"tc": 3, "tsa": "ets", "bw": 60}])
    assert isinstance(res, Failed)
    assert res.result["param"] == "ets" and "summing to 60%" in res.result["msg"]
    assert lab.host.changing_calls() == [] and lab.cfs.mkdirs == []


@pytest.mark.parametrize("args,needle", [
    ({"netdev": "dcbsim0", "backend": "lldptool"}, "backend"),
    ({"netdev": "dcbsim0", "on_unsupported": "ignore"}, "on_unsupported"),
    ({"netdev": "dcbsim0", "trust": "cos"}, "trust"),
    ({"netdev": "dcbsim0", "pfc": ["three"]}, "pfc"),
    ({"netdev": "dcbsim0", "ets": [{"tc": 0, "tsa": "ets", "bw": 50, "weight": 2}]}, "weight"),
    ({"pfc": [3]}, "netdev, device"),
])
def test_argument_spec_rejects_before_anything_is_touched(lab, args, needle):
    res = lab.run(**args)
    assert isinstance(res, Failed)
    assert needle in res.result["msg"]
    assert lab.host.calls == []


def test_virtio_fail_and_warn(lab):
    args = dict(netdev="eth1", trust="dscp", pfc=[3], roce_tos=106, roce_mode="v2", mtu=9000)
    res = lab.run(**args)
    assert isinstance(res, Failed)
    assert "nothing was changed" in res.result["msg"] and "Operation not supported" in res.result["msg"]
    assert lab.host.changing_calls() == []
    res = lab.run(on_unsupported="warn", **args)
    r = res.result
    assert r["changed"] is True and r["backend"] is None
    assert "skipped" not in r      # Ansible would show a result with a true "skipped" key as a skipped task
    assert [s["option"] for s in r["unsupported"]] == ["trust", "pfc"]
    assert len(lab.warnings) == 1 and lab.warnings[0].startswith("eth1: skipped trust, pfc: eth1 has no DCB support")
    assert r["after"] == {"roce_tos": 106, "roce_mode": "v2", "mtu": 9000}
    assert lab.cfs.kernel_values("rxe0")["default_roce_tos"] == "106"


def test_device_and_port_addressing_with_mlnx_qos(lab, tmp_path):
    sysfs = make_tree(tmp_path / "mlx", "derived_roce_mlx5_ofed")
    port = MlnxPort()
    lab.host.tools["mlnx_qos"] = FakeMlnxQos({"ens1f0": port})
    lab.host.tools["ip"] = FakeIpLink(sysfs)     # this host's links are those of that tree
    r = lab.run(device="mlx5_0", port=1, backend="mlnx_qos", trust="dscp", pfc=[3], sysfs_path=sysfs,
                cnp={"dscp": 46}, roce_tos=106).result
    assert r["netdev"] == "ens1f0" and r["backend"] == "mlnx_qos" and r["backend_reason"] == "backend: mlnx_qos was requested"
    assert r["backends"] == {"trust": "mlnx_qos", "pfc": "mlnx_qos", "cnp": "sysfs_ecn", "roce_tos": "configfs"}
    assert port.trust() == "dscp" and port.pfc_en == 8
    assert r["changes"] == {"trust": True, "pfc": True, "cnp": True, "roce_tos": False}
    with open(os.path.join(sysfs, "class", "net", "ens1f0", "ecn", "roce_np", "cnp_dscp")) as f:
        assert f.read() == "46\n"
    # the configfs group existed before the run: read in place, not created, not removed
    assert lab.cfs.mkdirs == [] and lab.cfs.rmdirs == []
    assert os.path.isdir(os.path.join(sysfs, "kernel", "config", "rdma_cm", "mlx5_0", "ports", "1"))


def test_mlnx_qos_refused_where_the_driver_is_not_nvidias(lab):
    """The lab's dcbsim0 (no device driver; the real mlnx_qos would die on its missing DCB buffer op): backend
    mlnx_qos is refused before any command, with the driver and the backend to use; the port is untouched."""
    lab.host.tools["mlnx_qos"] = FakeMlnxQos({"dcbsim0": MlnxPort()})
    res = lab.run(netdev="dcbsim0", backend="mlnx_qos", trust="dscp", pfc=[3])
    assert isinstance(res, Failed)
    assert res.result["msg"].startswith("backend mlnx_qos: dcbsim0: no device driver link (")
    assert "not NVIDIA's mlx5_core" in res.result["msg"] and res.result["msg"].endswith("use backend: dcb (iproute2) or auto")
    assert [c for c in lab.host.calls if "mlnx_qos" in c[0] or c[1:2] != ["-j"]] == []
    assert lab.ports["dcbsim0"].apps == [] and lab.ports["dcbsim0"].pfc_en == 0


# -- the list form ---------------------------------------------------------
def test_ports_list_per_port_results_and_diff(lab):
    args = dict(trust="dscp", pfc="0,0,0,1,0,0,0,0", roce_tos=106, roce_mode=2,
                ports=[{"netdev": "dcbsim0", "mtu": 9000}, {"device": "rxe0", "port": 1, "on_unsupported": "warn",
                                                            "pfc": None, "trust": None, "tos": 96}])
    res = lab.run(diff=True, check=True, **args)
    assert not isinstance(res, Failed), res.result
    r = res.result
    assert r["changed"] is True and "netdev" not in r and sorted(r["ports"]) == ["dcbsim0", "eth1"]
    assert r["ports"]["dcbsim0"]["after"]["pfc"] == [3] and r["ports"]["dcbsim0"]["after"]["roce_mode"] == "v2"
    assert r["ports"]["eth1"]["after"] == {"roce_tos": 96, "roce_mode": "v2"}
    assert r["ports"]["eth1"]["drift"] == {"roce_tos": {"desired": 96, "actual": 0}}
    assert [d["before_header"] for d in r["diff"]] == ["dcbsim0", "eth1"]
    assert r["diff"][1] == {"before_header": "eth1", "after_header": "eth1",
                            "before": {"roce_tos": 0, "roce_mode": "v2"}, "after": {"roce_tos": 96, "roce_mode": "v2"}}
    assert lab.host.changing_calls() == []
    r = lab.run(**args).result
    assert r["changed"] is True and lab.ports["dcbsim0"].pfc_en == 8
    assert lab.cfs.kernel_values("rxe0")["default_roce_tos"] == "96"
    assert lab.run(**args).result["changed"] is False


@pytest.mark.parametrize("args,param,needle", [
    ({"ports": [{"netdev": "dcbsim0", "pfc": [0, 0, 0, 1]}]}, "ports[0].pfc", "reads two ways"),
    ({"ports": [{"netdev": "dcbsim0"}, {"netdev": "eth1", "roce_mode": "v3"}]}, "ports[1].roce_mode", "choose one of v1, v2"),
    ({"ports": [{"netdev": "dcbsim0", "roce_tos": 106, "tos": 96}]}, "ports[0].tos", "differ"),
    ({"ports": [{"netdev": "dcbsim0"}, {"netdev": "eth42"}]}, "ports[1].netdev", "interface 'eth42' does not exist"),
    ({"ports": [{"netdev": "dcbsim0", "color": "red"}]}, "ports[0]", "unknown option(s) color"),
    ({"netdev": "dcbsim0", "pfc": "0,0,0,1"}, "pfc", "reads two ways"),
    ({"netdev": "dcbsim0", "pfc": "0,0,0,2,0,0,0,0"}, "pfc", "its entries must be 0 or 1, not 2"),
    ({"netdev": "dcbsim0", "tos": 96, "roce_tos": 106}, "tos", "tos 96 and roce_tos 106 differ"),
])
def test_list_form_bad_input_fails_before_anything_is_touched(lab, args, param, needle):
    res = lab.run(**args)
    assert isinstance(res, Failed)
    assert res.result["param"] == param and needle in res.result["msg"]
    assert lab.host.calls == [] and lab.cfs.mkdirs == []


def test_ports_and_netdev_are_exclusive(lab):
    res = lab.run(netdev="dcbsim0", ports=[{"netdev": "eth1"}])
    assert isinstance(res, Failed) and "mutually exclusive: ports|netdev" in res.result["msg"]


def test_a_port_that_cannot_be_configured_returns_every_ports_result(lab):
    res = lab.run(check=True, ports=[{"netdev": "dcbsim0", "pfc": [3]}, {"netdev": "eth1", "pfc": [3]}])
    assert isinstance(res, Failed)
    r = res.result
    assert r["ports"]["eth1"]["failed"] is True and "no DCB support" in r["ports"]["eth1"]["msg"]
    assert r["ports"]["dcbsim0"]["drift"] == {"pfc": {"desired": [3], "actual": []}}
    assert "param" not in r


def test_the_lock_held_by_the_boot_time_reapply(lab, monkeypatch):
    """rdma-fabric qos-apply (another process) holds the lock: the module waits, then fails naming it."""
    import time
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import lock as lock_mod
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:    # pragma: no cover - the child
        try:
            with lock_mod.held("rdma-fabric qos-apply", 5):
                os.write(ready_w, b"x")
                time.sleep(30)
        finally:
            os._exit(0)
    try:
        assert os.read(ready_r, 1) == b"x"
        res = lab.run(netdev="dcbsim0", pfc=[3], lock_timeout=1)
        assert isinstance(res, Failed)
        assert "another QoS run holds the lock" in res.result["msg"]
        assert "pid %d (rdma-fabric qos-apply, since " % pid in res.result["msg"]
        assert lab.host.calls == []
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    assert lab.run(netdev="dcbsim0", pfc=[3], lock_timeout=1).result["changed"] is True


def test_check_mode_runs_without_a_lock_it_cannot_create(lab, monkeypatch, tmp_path):
    from ansible_collections.rdma.fabric.plugins.module_utils.qos import lock as lock_mod
    (tmp_path / "afile").write_text("")
    monkeypatch.setattr(lock_mod, "LOCK_PATH", str(tmp_path / "afile" / "qos.lock"))
    r = lab.run(check=True, netdev="dcbsim0", pfc=[3]).result
    assert r["changed"] is True and lab.warnings[0].startswith("running without the QoS lock")
    res = lab.run(netdev="dcbsim0", pfc=[3])
    assert isinstance(res, Failed) and "cannot create the QoS lock" in res.result["msg"]
    assert lab.host.changing_calls() == []


def test_restore_puts_the_snapshot_back(lab):
    """lossless_ethernet_state absent: the check-mode `before` taken ahead of the first apply, turned into a
    port entry (plugin_utils/qos_restore.py), takes the port back to exactly that state."""
    from ansible_collections.rdma.fabric.plugins.plugin_utils import qos_restore as restore
    before = lab.run(check=True, **PROFILE).result["before"]
    assert lab.run(**PROFILE).result["changed"] is True
    entry, notes = restore.restore_entry("dcbsim0", before)
    res = lab.run(**entry)
    assert not isinstance(res, Failed), res.result
    assert res.result["changed"] is True
    again = lab.run(check=True, **PROFILE).result
    assert again["before"] == before
    # restoring twice changes nothing
    assert lab.run(**entry).result["changed"] is False
    assert all("had no entry before" in n for n in notes)


def test_driver_defaults_where_no_snapshot_was_taken(lab):
    from ansible_collections.rdma.fabric.plugins.plugin_utils import qos_restore as restore
    assert lab.run(**PROFILE).result["changed"] is True
    entry, notes = restore.default_entry("dcbsim0", [k for k in PROFILE if k != "netdev"])
    res = lab.run(**entry)
    assert not isinstance(res, Failed), res.result
    after = res.result["after"]
    assert (after["trust"], after["pfc"], after["prio_tc"], after["roce_tos"], after["roce_mode"], after["mtu"]) == (
        "pcp", [], [0] * 8, 0, "v2", 1500)
    assert sorted(n.split(" for ")[1].split(";")[0] for n in notes) == ["dscp2prio", "ets", "pause"]


def test_a_sysfs_that_is_not_this_hosts_changes_nothing(lab):
    # sysfs_path on a copy: the reads come from the copy, but dcb/ip/ethtool would change this host's ports.
    # Here `ip -j link show` (the TEST DOUBLE) gives other ifindexes than the tree, as on a real host whose
    # sysfs the tree is not: refused before any command that changes something
    lab.host.tools["ip"].ifindex_offset = 7
    res = lab.run(**PROFILE)
    assert isinstance(res, Failed), res.result
    r = res.result
    assert r["param"] == "sysfs_path" and "nothing was changed" in r["msg"]
    assert "dcbsim0: ifindex" in r["msg"] and "container mode" in r["msg"]
    assert lab.host.changing_calls() == []
    # check mode only reads: it reports what would change
    res = lab.run(check=True, **PROFILE)
    assert not isinstance(res, Failed), res.result
    assert res.result["changed"] is True


def test_the_same_namespace_sysfs_mounted_elsewhere_is_container_mode(lab):
    # the tree has the same ifindexes as `ip` gives (the host's /sys mounted at sysfs_path): changes go ahead
    res = lab.run(**PROFILE)
    assert not isinstance(res, Failed), res.result
    assert res.result["changed"] is True


def test_a_copy_of_sysfs_changes_nothing(lab, monkeypatch):
    # the tree is no mounted sysfs (the real check: /proc/self/mountinfo has no sysfs at the fixture's folder):
    # a copy of this host's /sys has this host's ifindexes, but writing ECN and configfs there changes no kernel
    monkeypatch.setattr(engine, "_is_sysfs_mount", ORIGINAL_IS_SYSFS_MOUNT)
    res = lab.run(**PROFILE)
    assert isinstance(res, Failed), res.result
    assert res.result["param"] == "sysfs_path" and "is not a mounted sysfs" in res.result["msg"]
    assert lab.host.calls == [] and lab.cfs.mkdirs == []
    assert lab.run(check=True, **PROFILE).result["changed"] is True


def test_the_mount_check_reads_mountinfo(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text("22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
                    "98 97 0:21 / /host/sys\\040x rw,relatime - sysfs sysfs rw\n"
                    "99 97 0:50 / /srv/copy rw,relatime - ext4 /dev/sda1 rw\n")
    assert engine._is_sysfs_mount("/host/sys x", str(info)) is True
    assert engine._is_sysfs_mount("/srv/copy", str(info)) is False
    assert engine._is_sysfs_mount("/nowhere", str(info)) is False
    assert engine._is_sysfs_mount("/sys", str(tmp_path / "gone")) is False
