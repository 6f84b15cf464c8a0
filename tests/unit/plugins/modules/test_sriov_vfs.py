# -*- coding: utf-8 -*-
"""Unit tests for the sriov_vfs module and module_utils/sriov/pf.py and module_utils/common/sriov.py.

The PF is a small sysfs tree built per test (an igb PF as QEMU's 82576 shows
it: sriov_totalvfs 7). ``IpLinkDouble`` is a TEST DOUBLE for iproute2's
``ip -j -d link show`` / ``ip link set PF vf N ...`` (it keeps the VF settings
in memory and prints them in ip's JSON shape); ``MlxconfigDouble`` is a TEST
DOUBLE for NVIDIA's ``mlxconfig`` (no NVIDIA NIC in the lab): it answers
``-e q`` in mlxconfig's table layout and records ``set``. Real VFs are created
in the VM lab (Molecule ``fabric_kinds``, igb under QEMU 10).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.common import sriov as sriov_rules
from ansible_collections.rdma.fabric.plugins.module_utils.sriov import pf as sr
from ansible_collections.rdma.fabric.plugins.modules import sriov_vfs


def make_pf(root, netdev="eth2", pci="0000:00:06.0", totalvfs=7, numvfs=0):
    dev = root / "devices" / "pci0000:00" / pci
    (dev / "net" / netdev).mkdir(parents=True)
    (root / "bus" / "pci" / "drivers" / "igb").mkdir(parents=True)
    os.symlink(str(root / "bus" / "pci" / "drivers" / "igb"), str(dev / "driver"))
    (dev / "sriov_totalvfs").write_text("%d\n" % totalvfs)
    (dev / "sriov_numvfs").write_text("%d\n" % numvfs)
    (root / "class" / "net").mkdir(parents=True, exist_ok=True)
    os.symlink(str(dev / "net" / netdev), str(root / "class" / "net" / netdev))
    os.symlink(str(dev), str(dev / "net" / netdev / "device"))
    set_link(root, netdev, flags="0x1003", carrier="1", operstate="up")   # up, with its link (the lab's eth2)
    return dev


def set_link(root, netdev="eth2", **files):
    """Write the netdev's flags / carrier / operstate files (None: the file goes, as carrier does on a down netdev)."""
    for name, text in files.items():
        path = os.path.join(str(root), "class", "net", netdev, name)
        if text is None:
            if os.path.exists(path):
                os.unlink(path)
        else:
            with open(path, "w") as f:
                f.write(text + "\n")


class IpLinkDouble(object):
    """Test double for `ip -j -d link show dev PF` and `ip link set PF vf N ...` (VF settings in memory)."""

    def __init__(self, sysfs):
        self.sysfs = sysfs
        self.vfs = {}
        self.calls = []

    def run_command(self, argv, **kwargs):
        self.calls.append(list(argv))
        if argv[1:5] == ["-j", "-d", "link", "show"]:
            pf = argv[-1]
            with open(os.path.join(self.sysfs, "class", "net", pf, "device", "sriov_numvfs")) as f:
                n = int(f.read())
            vfs = [dict({"vf": i, "address": "00:00:00:00:00:00", "spoofchk": True, "trust": False,
                         "link_state": "auto"}, **self.vfs.get(i, {})) for i in range(n)]
            return 0, json.dumps([{"ifname": pf, "vfinfo_list": vfs}]), ""
        if argv[1:3] == ["link", "set"] and argv[4] == "vf":
            index, rest = int(argv[5]), argv[6:]
            vf = self.vfs.setdefault(index, {})
            for key, value in zip(rest[::2], rest[1::2]):
                if key == "mac":
                    vf["address"] = value
                elif key == "state":
                    vf["link_state"] = value
                else:
                    vf[key] = value == "on"
            return 0, "", ""
        raise AssertionError("unexpected %r" % (argv,))


MLX_QUERY = """
Device #1:
----------

Device type:    ConnectX5
Name:           MCX556A-ECA_Ax
Device:         0000:3b:00.0

Configurations:                                      Default         Current         Next Boot
*        SRIOV_EN                                    False(0)        True(1)         %s
         NUM_OF_VFS                                  0               8               %d
"""


class MlxconfigDouble(object):
    """Test double for NVIDIA `mlxconfig -d DEV -e q SRIOV_EN NUM_OF_VFS` and `mlxconfig -y -d DEV set K=V ...`."""

    def __init__(self, sriov_en=1, num_vfs=8):
        self.next_boot = {"SRIOV_EN": sriov_en, "NUM_OF_VFS": num_vfs}
        self.sets = []

    def run_command(self, argv, **kwargs):
        if "q" in argv:
            en = "True(1)" if self.next_boot["SRIOV_EN"] else "False(0)"
            return 0, MLX_QUERY % (en, self.next_boot["NUM_OF_VFS"]), ""
        if "set" in argv:
            self.sets.append(argv[argv.index("set") + 1:])
            for kv in argv[argv.index("set") + 1:]:
                key, value = kv.split("=")
                self.next_boot[key] = int(value)
            return 0, "Applying... Done!\n-I- Please reboot machine to load new configurations.", ""
        raise AssertionError(argv)


@pytest.fixture(name="host")
def fixture_host(tmp_path, monkeypatch):
    root = tmp_path / "sys"
    make_pf(root)
    ip = IpLinkDouble(str(root))
    mlx = MlxconfigDouble()

    def run_command(self, argv, **kw):
        return (mlx if "mlxconfig" in argv[0] else ip).run_command(argv, **kw)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/bin/" + name)
    return str(root), ip, mlx


def run(run_main, sysfs, **args):
    args.setdefault("sysfs_path", sysfs)
    return run_main(sriov_vfs.main, args)


PF = {"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:10:00:01", "trust": True, "spoofchk": False}]}


def test_create_vfs_with_settings_then_idempotent(run_main, host):
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, pfs=[PF], _ansible_diff=True)
    assert ok and result["changed"], result
    numvfs_path = os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")
    assert result["commands"] == [["write", numvfs_path, "2"],
                                  ["/usr/bin/ip", "link", "set", "eth2", "vf", "0", "mac", "52:54:00:10:00:01", "trust", "on",
                                   "spoofchk", "off"]]
    assert open(numvfs_path).read() == "2"
    assert result["pfs"][0]["numvfs"] == 2 and result["pfs"][0]["totalvfs"] == 7 and result["pfs"][0]["driver"] == "igb"
    assert result["pfs"][0]["sriov"] == {"totalvfs": 7, "numvfs": 2, "is_vf": False, "physfn": None}
    assert result["pfs"][0]["settings"]["0"] == {"mac": "52:54:00:10:00:01", "trust": True, "spoofchk": False, "link_state": "auto"}
    assert result["diff"]["before"]["pfs"]["eth2"]["numvfs"] == 0 and result["diff"]["after"]["pfs"]["eth2"]["numvfs"] == 2
    ok, again = run(run_main, sysfs, pfs=[PF])
    assert ok and not again["changed"] and again["commands"] == [] and again["pf_link_waits"] == []


def test_check_mode_changes_nothing(run_main, host):
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, pfs=[PF], _ansible_check_mode=True, _ansible_diff=True)
    assert ok and result["changed"]
    assert open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")).read().strip() == "0"
    assert all(c[1:3] != ["link", "set"] for c in ip.calls)
    assert result["diff"]["after"]["pfs"]["eth2"]["numvfs"] == 2
    assert result["diff"]["after"]["pfs"]["eth2"]["vfs"]["0"]["mac"] == "52:54:00:10:00:01"


def test_count_change_goes_through_zero_and_absent_removes(run_main, host):
    sysfs, ip, mlx = host
    assert run(run_main, sysfs, pfs=[PF])[0]
    ok, result = run(run_main, sysfs, pfs=[dict(PF, numvfs=4)])
    path = os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")
    assert ok and [c for c in result["commands"] if c[0] == "write"] == [["write", path, "0"], ["write", path, "4"]]
    # the VF's settings are applied again after the VFs were recreated
    assert any(c[4:6] == ["vf", "0"] for c in result["commands"])
    ok, result = run(run_main, sysfs, pfs=[{"netdev": "eth2", "state": "absent"}])
    assert ok and result["commands"] == [["write", path, "0"]] and result["pfs"][0]["numvfs"] == 0


def hold_probe_tree(sysfs):
    """The PF with sriov_drivers_autoprobe 1, the bus's drivers_probe (a plain file here: it keeps the last write)
    and two VF folders with their virtfnN links, as the kernel makes them on the count write (the module writes only
    the count file of this tree): VF 0 without a driver, VF 1 bound to igbvf."""
    dev = os.path.join(sysfs, "class", "net", "eth2", "device")
    with open(os.path.join(dev, "sriov_drivers_autoprobe"), "w") as f:
        f.write("1\n")
    probe = os.path.join(sysfs, "bus", "pci", "drivers_probe")
    open(probe, "w").close()
    os.makedirs(os.path.join(sysfs, "bus", "pci", "drivers", "igbvf"))
    for i, addr in enumerate(("0000:00:11.0", "0000:00:11.2")):
        vf = os.path.join(sysfs, "devices", "pci0000:00", addr)
        os.makedirs(vf)
        if i:
            os.symlink(os.path.join(sysfs, "bus", "pci", "drivers", "igbvf"), os.path.join(vf, "driver"))
        os.symlink(vf, os.path.join(dev, "virtfn%d" % i))
    return dev, probe


def test_vf_drivers_bind_after_the_settings(run_main, host):
    """igbvf takes a VF's MAC address from the PF when it binds (the lab's fabric_kinds: the MAC set after it had
    bound never reached the VF's netdev): the drivers are held back while the VFs are made and set, then probed."""
    sysfs, ip, mlx = host
    dev, probe = hold_probe_tree(sysfs)
    autoprobe = os.path.join(dev, "sriov_drivers_autoprobe")
    ok, result = run(run_main, sysfs, pfs=[PF])
    assert ok and result["changed"], result
    assert result["commands"] == [["write", autoprobe, "0"], ["write", os.path.join(dev, "sriov_numvfs"), "2"],
                                  ["/usr/bin/ip", "link", "set", "eth2", "vf", "0", "mac", "52:54:00:10:00:01", "trust", "on",
                                   "spoofchk", "off"],
                                  ["write", autoprobe, "1"], ["probe", probe, "eth2"]]
    assert open(autoprobe).read() == "1" and open(probe).read() == "0000:00:11.0"   # VF 1 had its driver
    assert result["pfs"][0]["autoprobe"] == 1
    # new VFs without settings, or settings of VFs that exist: nothing held back
    ok, result = run(run_main, sysfs, pfs=[{"netdev": "eth2", "numvfs": 3}])
    assert ok and [c[2] for c in result["commands"] if c[0] == "write"] == ["0", "3"]
    assert [c[0] for c in result["commands"]] == ["write", "write"]


TWO_VFS = {"netdev": "eth2", "numvfs": 2, "vfs": [
    {"index": 0, "mac": "52:54:00:10:00:01", "trust": True}, {"index": 1, "mac": "52:54:00:10:00:02", "trust": True}]}


def fail_on_vf(ip, index):
    """``run_command`` of the IpLinkDouble, except that ``ip link set PF vf INDEX ...`` fails as a driver refuses it
    (the fault is injected on that VF only; every other command, undo commands included, runs)."""
    def run_command(self, argv, **kw):
        if argv[1:3] == ["link", "set"] and argv[4:6] == ["vf", str(index)]:
            ip.calls.append(list(argv))
            return 2, "", "RTNETLINK answers: Operation not supported"
        return ip.run_command(argv, **kw)
    return run_command


def test_a_failure_on_the_second_new_vf_leaves_the_pf_as_it_was(run_main, host, monkeypatch):
    """0 -> 2 VFs with settings, drivers held back: the setting of VF 1 fails; the rollback writes the VF count and
    sriov_drivers_autoprobe back (the VFs, VF 0's settings with them, are gone) and binds no driver."""
    sysfs, ip, mlx = host
    dev, probe = hold_probe_tree(sysfs)
    before = {name: open(os.path.join(dev, name)).read() for name in ("sriov_numvfs", "sriov_drivers_autoprobe")}
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fail_on_vf(ip, 1))
    ok, result = run(run_main, sysfs, pfs=[TWO_VFS])
    assert not ok and result["failed"]
    assert {name: open(os.path.join(dev, name)).read().strip() for name in before} == {
        "sriov_numvfs": "0", "sriov_drivers_autoprobe": "1"} == {k: v.strip() for k, v in before.items()}
    assert open(probe).read() == ""                         # no VF driver was bound
    numvfs, autoprobe = os.path.join(dev, "sriov_numvfs"), os.path.join(dev, "sriov_drivers_autoprobe")
    assert result["rolled_back"] == ["write %s 0" % numvfs, "write %s 1" % autoprobe]
    assert result["rollback_failed"] == []
    assert result["msg"] == ("/usr/bin/ip link set eth2 vf 1 mac 52:54:00:10:00:02 trust on failed: RTNETLINK answers: "
                             "Operation not supported; rolled back, in reverse order: write %s 0; write %s 1"
                             % (numvfs, autoprobe))
    # the same request once the driver takes it: the PF ends as asked, and a second run changes nothing
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: ip.run_command(argv, **kw))
    assert run(run_main, sysfs, pfs=[TWO_VFS])[1]["changed"]
    assert not run(run_main, sysfs, pfs=[TWO_VFS])[1]["changed"]


def test_a_failure_on_the_second_vf_puts_the_first_vfs_settings_back(run_main, host, monkeypatch):
    """The VFs exist (no count change): VF 0's new settings are applied, VF 1's fail; VF 0 gets its settings back."""
    sysfs, ip, mlx = host
    assert run(run_main, sysfs, pfs=[TWO_VFS])[0]
    settings_before = json.loads(ip.run_command(["ip", "-j", "-d", "link", "show", "dev", "eth2"])[1])[0]["vfinfo_list"]
    monkeypatch.setattr(basic.AnsibleModule, "run_command", fail_on_vf(ip, 1))
    changed = {"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:10:00:11", "trust": False},
                                                      {"index": 1, "mac": "52:54:00:10:00:12"}]}
    ok, result = run(run_main, sysfs, pfs=[changed])
    assert not ok
    assert ["/usr/bin/ip", "link", "set", "eth2", "vf", "0", "mac", "52:54:00:10:00:11", "trust", "off"] in ip.calls
    assert result["rolled_back"] == ["/usr/bin/ip link set eth2 vf 0 mac 52:54:00:10:00:01 trust on"]
    assert json.loads(ip.run_command(["ip", "-j", "-d", "link", "show", "dev", "eth2"])[1])[0]["vfinfo_list"] == settings_before
    assert open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")).read().strip() == "2"


def test_a_pf_that_does_not_read_back_as_planned_is_rolled_back(run_main, host, monkeypatch):
    """The driver answers 0 but keeps its own value (a trust it does not allow): the read-back fails the run."""
    sysfs, ip, mlx = host

    def trust_ignored(self, argv, **kw):
        if argv[1:3] == ["link", "set"] and "trust" in argv:
            argv = argv[:argv.index("trust")] + argv[argv.index("trust") + 2:]
        return ip.run_command(argv, **kw)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", trust_ignored)
    ok, result = run(run_main, sysfs, pfs=[PF])
    assert not ok and result["msg"].startswith("SR-IOV not as wanted after the changes: eth2 vf 0: ['trust'] not as asked")
    assert open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")).read().strip() == "0"


def test_undo_commands_follow_the_plan(tmp_path):
    """Each command's undo from the PF read before: counts through 0, autoprobe, VF settings of existing VFs."""
    sysfs = str(tmp_path / "sys")
    make_pf(tmp_path / "sys", numvfs=2)
    have = dict(sr.read_pf(sysfs, "eth2"), autoprobe=1)
    settings = {0: {"mac": "00:00:00:00:00:00", "trust": False, "spoofchk": True, "link_state": "auto"}}
    want = sriov_rules.normalise_pfs([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "trust": True}]}])[0]
    steps, changes = sr.plan_pf(want, have, settings)
    commands = sr.pf_commands(sysfs, want, have, steps, changes, "ip")
    assert sr.undo_commands(want, have, settings, commands, "ip") == [["ip", "link", "set", "eth2", "vf", "0", "trust", "off"]]
    want = sriov_rules.normalise_pfs([{"netdev": "eth2", "numvfs": 3, "vfs": [{"index": 0, "trust": True}]}])[0]
    steps, changes = sr.plan_pf(want, have, settings)
    commands = sr.pf_commands(sysfs, want, have, steps, changes, "ip")
    numvfs = os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")
    autoprobe = os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_drivers_autoprobe")
    assert [c[:3] for c in commands] == [["write", autoprobe, "0"], ["write", numvfs, "0"], ["write", numvfs, "3"],
                                         ["ip", "link", "set"], ["write", autoprobe, "1"], ["probe", commands[-1][1], "eth2"]]
    assert sr.undo_commands(want, have, settings, commands, "ip") == [
        ["write", autoprobe, "1"], ["write", numvfs, "2"], ["write", numvfs, "0"], None, ["write", autoprobe, "0"], None]


@pytest.mark.parametrize("pfs, needle", [
    ([{"netdev": "eth2", "numvfs": 8}], "numvfs 8 is more than the PF's sriov_totalvfs 7; allowed: 0-7"),
    ([{"netdev": "nosuch0", "numvfs": 1}], "pfs (nosuch0): no such netdev on this host"),
    ([{"netdev": "eth2;x", "numvfs": 1}], "netdev 'eth2;x' is not an interface name"),
    ([{"netdev": "eth2"}], "numvfs is required when state is present"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 2}]}], "index 2 is not a VF of this PF (0-1)"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"mac": "53:54:00:00:00:01"}]}], "is not a unicast MAC address"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"link_state": "up"}]}], "value of link_state must be one of: auto, enable, disable"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0}, {"index": 0}]}], "a VF index is given twice"),
    ([{"netdev": "eth2", "numvfs": 1}, {"netdev": "eth2", "numvfs": 1}], "PF netdev(s) given twice: eth2"),
    # vfs in another form than a list of mappings: refused naming pfs[N].vfs, showing the form
    ([{"netdev": "eth2", "numvfs": 2, "vfs": "0"}],
     "pfs[0].vfs: got the text '0'; allowed: a list of mappings (keys: index, mac, trust, spoofchk, link_state), "
     "e.g. [{index: 0, mac: '52:54:00:10:00:01', trust: true}, {index: 1, link_state: enable}]"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": "index=0 trust=yes"}], "pfs[0].vfs: got the text 'index=0 trust=yes'; allowed"),
    ([{"netdev": "eth3", "numvfs": 1}, {"netdev": "eth2", "numvfs": 2, "vfs": {"index": 0}}],
     "pfs[1].vfs: got dict {'index': 0}; allowed: a list of mappings"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0}, "1"]}], "pfs[0].vfs[1]: got the text '1', not a mapping"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "vlan": 5}]}], "pfs[0].vfs.vlan. Supported parameters include"),
    ([{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": "first"}]}], "pfs[0].vfs: argument 'index' is of type "),  # then str (2.19) or <class 'str'> (2.17)
])
def test_bad_input_fails_before_anything(run_main, host, pfs, needle):
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, pfs=pfs)
    assert not ok and needle in result["msg"], result["msg"]
    assert all(c[1:3] != ["link", "set"] for c in ip.calls)
    assert open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")).read().strip() == "0"


def test_vf_keys_are_read_as_ansible_reads_them(run_main, host):
    """pfs[].vfs (declared raw) is checked with Ansible's own suboption rules, as when it was declared a list of
    dicts: "1" is VF 1, "yes" is true."""
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, pfs=[{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": "1", "trust": "yes"}]}],
                     _ansible_check_mode=True)
    assert ok and ["link", "set", "eth2", "vf", "1", "trust", "on"] in [c[1:] for c in result["commands"]], result


def test_not_sriov_capable(run_main, tmp_path, monkeypatch, host):
    sysfs, ip, mlx = host
    os.unlink(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_totalvfs"))
    ok, result = run(run_main, sysfs, pfs=[{"netdev": "eth2", "numvfs": 1}])
    assert not ok and "not SR-IOV capable" in result["msg"]


def test_firmware_planned_not_applied_without_the_flag(run_main, host):
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, firmware=[{"device": "0000:3b:00.0", "num_vfs": 16}], _ansible_diff=True)
    assert ok and not result["changed"] and not result["reboot_required"]
    assert result["firmware"] == [{"device": "0000:3b:00.0", "current": {"SRIOV_EN": 1, "NUM_OF_VFS": 8},
                                   "changes": {"NUM_OF_VFS": 16}, "applied": False}]
    assert mlx.sets == []


def test_firmware_applied_with_the_flag_then_idempotent(run_main, host):
    sysfs, ip, mlx = host
    mlx.next_boot = {"SRIOV_EN": 0, "NUM_OF_VFS": 0}
    args = dict(firmware=[{"device": "/dev/mst/mt4119_pciconf0", "num_vfs": 4}], firmware_apply=True)
    ok, result = run(run_main, sysfs, **args)
    assert ok and result["changed"] and result["reboot_required"]
    assert mlx.sets == [["SRIOV_EN=1", "NUM_OF_VFS=4"]]
    ok, again = run(run_main, sysfs, **args)
    assert ok and not again["changed"] and not again["reboot_required"]


@pytest.mark.parametrize("device", ["mlx5_0; reboot", "/dev/mst/..", "/dev/mst/.", "/dev/mst/../sda", "/dev/mst/"])
def test_firmware_bad_device(device):
    with pytest.raises(sriov_rules.SriovError) as err:
        sr.check_firmware([{"device": device, "num_vfs": 1}])
    assert "is not a PCI address" in str(err.value)
    sr.check_firmware([{"device": "/dev/mst/mt4119_pciconf0.1", "num_vfs": 1}])


def test_firmware_device_given_twice_fails_before_anything(run_main, host):
    """Two entries for one device (which num_vfs?): refused before mlxconfig sets anything."""
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, firmware=[{"device": "0000:3b:00.0", "num_vfs": 4}, {"device": "0000:3b:00.0", "num_vfs": 8}],
                     firmware_apply=True)
    assert not ok and "Invalid firmware[1]: device 0000:3b:00.0 is given twice" in result["msg"], result["msg"]
    assert mlx.sets == []


def test_parse_mlxconfig_query_takes_the_next_boot_column():
    assert sr.parse_mlxconfig_query(MLX_QUERY % ("False(0)", 0)) == {"SRIOV_EN": 0, "NUM_OF_VFS": 0}
    assert sr.parse_mlxconfig_query("Configurations:   Next Boot\n   SRIOV_EN   True(1)\n   NUM_OF_VFS   16\n") == {
        "SRIOV_EN": 1, "NUM_OF_VFS": 16}
    assert sr.firmware_plan({"SRIOV_EN": 1, "NUM_OF_VFS": 8}, 0) == {"SRIOV_EN": 0}


class LinkClockDouble(object):
    """TEST DOUBLE for the clock and the sleep of sriov_vfs's wait for a PF's link (no test sleeps): ``sleep`` moves
    the clock on; after ``up_after`` sleeps it brings the PF's link back (carrier 1, operstate up), as igb does about
    2 s after the count write reset it (None: never). It records whether a VF was probed before the link came back."""

    def __init__(self, sysfs, probe, up_after=None):
        self.sysfs, self.probe, self.up_after = sysfs, probe, up_after
        self.now, self.sleeps, self.probed_while_down = 1000.0, [], False

    def clock(self):
        return self.now

    def sleep(self, seconds):
        assert seconds > 0
        self.sleeps.append(seconds)
        self.now += seconds
        self.probed_while_down = self.probed_while_down or os.path.getsize(self.probe) > 0
        if self.up_after is not None and len(self.sleeps) >= self.up_after:
            set_link(self.sysfs, carrier="1", operstate="up")


@pytest.fixture(name="reset_pf")
def fixture_reset_pf(host, monkeypatch):
    """The hold/probe tree, its PF administratively up with its link down (the count write's reset), the clock and
    sleep of the wait replaced by a LinkClockDouble (its up_after set by the test), warnings recorded."""
    sysfs, ip, mlx = host
    dev, probe = hold_probe_tree(sysfs)
    set_link(sysfs, flags="0x1003", carrier="0", operstate="down")
    double = LinkClockDouble(sysfs, probe)
    monkeypatch.setattr(sriov_vfs, "CLOCK", double.clock)
    monkeypatch.setattr(sriov_vfs, "SLEEP", double.sleep)
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, text: warnings.append(text))
    return sysfs, probe, double, warnings


def test_vfs_are_probed_once_the_pf_link_is_back(run_main, reset_pf):
    """The lab's fabric_kinds: igb's link came back about 2 s after the count write; igbvf bound in the gap took a
    random MAC and stayed without carrier. The probe waits for the PF's carrier."""
    sysfs, probe, double, warnings = reset_pf
    double.up_after = 3
    ok, result = run(run_main, sysfs, pfs=[PF])
    assert ok and result["changed"], result
    assert len(double.sleeps) == 3 and not double.probed_while_down
    assert open(probe).read() == "0000:00:11.0"
    assert result["pf_link_waits"] == [{"netdev": "eth2", "admin_up": True, "timeout": 30, "waited": 0.6, "link_up": True}]
    assert warnings == []


def test_a_stale_operstate_up_does_not_end_the_wait(run_main, reset_pf):
    """Right after the reset carrier reads 0 while operstate still says up (the kernel's link watch follows later):
    carrier decides; operstate counts only where carrier cannot be read."""
    sysfs, probe, double, warnings = reset_pf
    set_link(sysfs, operstate="up")
    double.up_after = 2
    ok, result = run(run_main, sysfs, pfs=[PF])
    assert ok and len(double.sleeps) == 2 and not double.probed_while_down and result["pf_link_waits"][0]["link_up"]
    assert sr.link_is_up({"admin_up": True, "carrier": None, "operstate": "up"})
    assert not sr.link_is_up({"admin_up": True, "carrier": False, "operstate": "up"})


def test_a_pf_link_that_never_comes_back_is_waited_for_at_most_the_timeout(run_main, reset_pf):
    sysfs, probe, double, warnings = reset_pf
    ok, result = run(run_main, sysfs, pfs=[PF], pf_link_timeout=2)
    assert ok and result["changed"], result
    assert abs(sum(double.sleeps) - 2) < 1e-9 and not double.probed_while_down
    # probed all the same (the VFs may still come up with the PF's link), said in a warning and in the result
    assert open(probe).read() == "0000:00:11.0"
    assert result["pf_link_waits"] == [{"netdev": "eth2", "admin_up": True, "timeout": 2, "waited": 2.0, "link_up": False}]
    assert len(warnings) == 1 and warnings[0].startswith("pfs (eth2): the PF's link was not up after 2.0 s (pf_link_timeout 2)")
    assert "probed anyway" in warnings[0]


def test_a_pf_that_is_administratively_down_is_not_waited_for(run_main, reset_pf):
    sysfs, probe, double, warnings = reset_pf
    set_link(sysfs, flags="0x1002", carrier=None, operstate="down")   # no IFF_UP: the kernel offers no carrier file
    ok, result = run(run_main, sysfs, pfs=[PF])
    assert ok and result["changed"] and double.sleeps == [] and open(probe).read() == "0000:00:11.0"
    assert result["pf_link_waits"] == [{"netdev": "eth2", "admin_up": False, "timeout": 30, "waited": 0.0, "link_up": False}]
    assert len(warnings) == 1 and "pfs (eth2): the PF was administratively down (no IFF_UP" in warnings[0]


def test_no_wait_with_timeout_0_in_check_mode_or_without_a_probe(run_main, reset_pf):
    sysfs, probe, double, warnings = reset_pf
    ok, result = run(run_main, sysfs, pfs=[PF], _ansible_check_mode=True)
    assert ok and result["changed"] and result["pf_link_waits"] == [] and os.path.getsize(probe) == 0
    ok, result = run(run_main, sysfs, pfs=[{"netdev": "eth2", "numvfs": 3}])   # no settings: nothing held back
    assert ok and result["changed"] and result["pf_link_waits"] == [] and os.path.getsize(probe) == 0
    ok, result = run(run_main, sysfs, pfs=[PF], pf_link_timeout=0)
    assert ok and open(probe).read() == "0000:00:11.0"
    assert result["pf_link_waits"] == [{"netdev": "eth2", "admin_up": True, "timeout": 0, "waited": 0.0, "link_up": False}]
    assert double.sleeps == [] and warnings == []


@pytest.mark.parametrize("value, needle", [
    (-1, "Invalid pf_link_timeout: -1; allowed: a whole number of seconds from 0 (do not wait) to 3600"),
    (10 ** 9, "Invalid pf_link_timeout: 1000000000; allowed: a whole number of seconds from 0 (do not wait) to 3600"),
    ("soon", "argument 'pf_link_timeout' is of type"),
    (1.5, "argument 'pf_link_timeout' is of type"),
])
def test_bad_pf_link_timeout_fails_before_anything(run_main, host, value, needle):
    sysfs, ip, mlx = host
    ok, result = run(run_main, sysfs, pfs=[PF], pf_link_timeout=value)
    assert not ok and needle in result["msg"], result["msg"]
    assert all(c[1:3] != ["link", "set"] for c in ip.calls)
    assert open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")).read().strip() == "0"


def test_read_link_and_check_link_timeout(tmp_path):
    root = tmp_path / "sys"
    make_pf(root)
    assert sr.read_link(str(root), "eth2") == {"admin_up": True, "carrier": True, "operstate": "up"}
    set_link(root, flags="0x1002", carrier=None, operstate="down")
    assert sr.read_link(str(root), "eth2") == {"admin_up": False, "carrier": None, "operstate": "down"}
    assert sr.read_link(str(root), "nosuch0") == {"admin_up": None, "carrier": None, "operstate": None}
    assert sr.check_link_timeout(0) == 0
    for bad in (True, -5, "30", 2.5):
        with pytest.raises(sriov_rules.SriovError) as err:
            sr.check_link_timeout(bad, param="sriov_pf_link_timeout")
        assert "Invalid sriov_pf_link_timeout" in str(err.value)
