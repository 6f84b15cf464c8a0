# -*- coding: utf-8 -*-
"""Unit tests for the rdma_link module, on a copy of the derived_rxe sysfs tree.

``KernelLinkDouble`` is a TEST DOUBLE for the kernel and its tools (iproute2
``rdma link``, ``modprobe``, ``modinfo``): it answers the module's
``run_command`` calls and makes the sysfs copy look as the kernel would after
the command (a soft device folder with a class link, ``/sys/module/<name>``),
so the module's read-back after its changes is real reading of a tree. The
real commands run in the VM lab (Molecule ``site``: rxe; ``fabric_kinds``:
siw and rxe on an SR-IOV VF).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import shutil

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.modules import rdma_link

SYSFS_FIXTURES = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "sysfs"))


class KernelLinkDouble(object):
    """Test double for `rdma link add/delete`, `modprobe` and `modinfo` acting on a sysfs copy."""

    def __init__(self, sysfs, available=("rdma_rxe", "siw")):
        self.sysfs = sysfs
        self.available = set(available)
        self.calls = []
        self.fail_on = None

    def _device(self, name, ltype, netdev):
        dev = os.path.join(self.sysfs, "devices", "virtual", "infiniband", name)
        os.makedirs(os.path.join(dev, "ports", "1", "gids"))
        files = {"node_type": "4: RNIC\n" if ltype == "siw" else "1: CA\n", "ports/1/state": "4: ACTIVE\n",
                 "ports/1/phys_state": "5: LinkUp\n", "ports/1/link_layer": "Ethernet\n"}
        if ltype == "rxe":
            files["parent"] = netdev + "\n"
        else:  # siw (Linux 6.1): node GUID = EUI-64 of the netdev's MAC, one GID = the MAC over a zero interface ID
            with open(os.path.join(self.sysfs, "class", "net", netdev, "address")) as f:
                mac = [int(x, 16) for x in f.read().strip().split(":")]
            eui = [mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]]
            files["node_guid"] = ":".join("%02x%02x" % (eui[i], eui[i + 1]) for i in range(0, 8, 2)) + "\n"
            files["ports/1/gids/0"] = "%02x%02x:%02x%02x:%02x%02x:0000:0000:0000:0000:0000\n" % tuple(mac)
        for rel, text in files.items():
            with open(os.path.join(dev, rel), "w") as f:
                f.write(text)
        os.symlink("../../devices/virtual/infiniband/" + name, os.path.join(self.sysfs, "class", "infiniband", name))

    def run_command(self, argv, **kwargs):
        self.calls.append(list(argv))
        tool = os.path.basename(argv[0])
        if self.fail_on and self.fail_on == argv[1:]:
            return 1, "", "error: operation not permitted"
        if tool == "modinfo":
            return (0, "/lib/modules/x/%s.ko\n" % argv[-1], "") if argv[-1] in self.available else (1, "", "not found")
        if tool == "modprobe":
            os.makedirs(os.path.join(self.sysfs, "module", argv[1]), exist_ok=True)
            return 0, "", ""
        if argv[1:3] == ["link", "delete"]:
            name = argv[3]
            os.unlink(os.path.join(self.sysfs, "class", "infiniband", name))
            shutil.rmtree(os.path.join(self.sysfs, "devices", "virtual", "infiniband", name))
            return 0, "", ""
        if argv[1:3] == ["link", "add"]:
            self._device(argv[3], argv[5], argv[7])
            return 0, "", ""
        raise AssertionError("unexpected command %r" % (argv,))


@pytest.fixture(name="host")
def fixture_host(tmp_path, monkeypatch):
    """A copy of derived_rxe (rxe0 on ens160, rdma_rxe loaded) with a second netdev eth1, and the double."""
    root = tmp_path / "root"
    shutil.copytree(os.path.join(SYSFS_FIXTURES, "derived_rxe"), str(root), symlinks=True)
    sysfs = str(root / "sys")
    os.makedirs(os.path.join(sysfs, "class", "net", "eth1"))
    with open(os.path.join(sysfs, "class", "net", "eth1", "address"), "w") as f:
        f.write("52:54:00:00:02:01\n")
    os.makedirs(os.path.join(sysfs, "module", "rdma_rxe"), exist_ok=True)
    double = KernelLinkDouble(sysfs)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: double.run_command(argv, **kw))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/usr/sbin/" + name)
    return sysfs, double


def run(run_main, sysfs, **args):
    args.setdefault("sysfs_path", sysfs)
    return run_main(rdma_link.main, args)


def test_existing_link_changes_nothing_and_runs_nothing(run_main, host):
    sysfs, double = host
    ok, result = run(run_main, sysfs, name="rxe0", netdev="ens160", _ansible_diff=True)
    assert ok and not result["changed"]
    assert result["links"] == [{"name": "rxe0", "type": "rxe", "netdev": "ens160"}]
    assert result["commands"] == [] and double.calls == []
    assert result["diff"]["before"] == result["diff"]["after"] == {"rxe0": "rxe on ens160"}
    assert result["ansible_facts"]["rdma"]["devices"][0]["name"] == "rxe0"


def test_create_siw_loads_module_then_is_idempotent(run_main, host):
    sysfs, double = host
    ok, result = run(run_main, sysfs, name="siw0", type="siw", netdev="eth1", _ansible_diff=True)
    assert ok and result["changed"], result
    assert double.calls == [["/usr/sbin/modinfo", "-F", "filename", "siw"], ["/usr/sbin/modprobe", "siw"],
                            ["/usr/sbin/rdma", "link", "add", "siw0", "type", "siw", "netdev", "eth1"]]
    assert result["created"] == ["siw0"] and result["deleted"] == []
    assert result["links"] == [{"name": "rxe0", "type": "rxe", "netdev": "ens160"}, {"name": "siw0", "type": "siw", "netdev": "eth1"}]
    assert result["diff"] == {"before": {"rxe0": "rxe on ens160"}, "after": {"rxe0": "rxe on ens160", "siw0": "siw on eth1"}}
    # the read-back saw the new device (facts of the tree after the command)
    names = [d["name"] for d in result["ansible_facts"]["rdma"]["devices"]]
    assert names == ["rxe0", "siw0"]
    assert result["ansible_facts"]["rdma"]["modules"]["siw"] is True
    double.calls[:] = []
    ok, again = run(run_main, sysfs, links=[{"name": "siw0", "type": "siw", "netdev": "eth1"}])
    assert ok and not again["changed"] and double.calls == []


def test_check_mode_plans_and_touches_nothing(run_main, host):
    sysfs, double = host
    ok, result = run(run_main, sysfs, links=[{"name": "rxe0", "netdev": "eth1"}, {"name": "siw0", "type": "siw", "netdev": "eth1"}],
                     _ansible_check_mode=True, _ansible_diff=True)
    assert ok and result["changed"]
    assert result["deleted"] == ["rxe0"] and result["created"] == ["rxe0", "siw0"]
    assert result["commands"] == [["modprobe", "siw"], ["rdma", "link", "delete", "rxe0"],
                                  ["rdma", "link", "add", "rxe0", "type", "rxe", "netdev", "eth1"],
                                  ["rdma", "link", "add", "siw0", "type", "siw", "netdev", "eth1"]]
    assert result["diff"] == {"before": {"rxe0": "rxe on ens160"}, "after": {"rxe0": "rxe on eth1", "siw0": "siw on eth1"}}
    # only the read-only modinfo ran; the tree is as before
    assert double.calls == [["/usr/sbin/modinfo", "-F", "filename", "siw"]]
    assert sorted(os.listdir(os.path.join(sysfs, "class", "infiniband"))) == ["rxe0"]


def test_move_and_remove(run_main, host):
    sysfs, double = host
    ok, result = run(run_main, sysfs, name="rxe0", netdev="eth1")
    assert ok and result["changed"] and result["deleted"] == ["rxe0"] and result["created"] == ["rxe0"]
    assert result["links"] == [{"name": "rxe0", "type": "rxe", "netdev": "eth1"}]
    ok, result = run(run_main, sysfs, name="rxe0", state="absent")
    assert ok and result["changed"] and result["links"] == []
    assert os.listdir(os.path.join(sysfs, "class", "infiniband")) == []
    ok, result = run(run_main, sysfs, name="rxe0", state="absent")
    assert ok and not result["changed"]


@pytest.mark.parametrize("args, needle", [
    ({"name": "rxe9", "netdev": "eth1;reboot"}, "Invalid link (rxe9): netdev 'eth1;reboot' is not an interface name"),
    ({"name": "bad name", "netdev": "eth1"}, "Invalid link: name 'bad name' is not an RDMA device name"),
    ({"name": "rxe9"}, "Invalid link (rxe9): netdev '' is not an interface name"),
    ({"links": [{"name": "a", "netdev": "eth1"}, {"name": "a", "netdev": "ens160"}]}, "Invalid links: link name(s) given twice: a"),
    ({"name": "rxe9", "netdev": "nosuch0"}, "netdev: no such netdev on this host: nosuch0"),
    ({"name": "rxe9", "netdev": "eth1", "type": "roce"}, "value of type must be one of: rxe, siw, got: roce"),
    ({"name": "rxe9", "netdev": "eth1", "state": "up"}, "value of state must be one of: present, absent, got: up"),
    ({"name": "a", "links": [{"name": "b", "netdev": "eth1"}]}, "mutually exclusive: name|links"),
    ({}, "one of the following is required: name, links"),
    # links in another form than a list of mappings: refused naming links, showing the form
    ({"links": "rxe9"}, "links: got the text 'rxe9'; allowed: a list of mappings (keys: name, type, netdev, state), "
                        "e.g. [{name: siw0, type: siw, netdev: eth1}, {name: rxe_old, state: absent}]"),
    ({"links": "name=rxe9 netdev=eth1"}, "links: got the text 'name=rxe9 netdev=eth1'; allowed: a list of mappings"),
    ({"links": {"name": "rxe9", "netdev": "eth1"}}, "links: got dict {'name': 'rxe9', 'netdev': 'eth1'}; allowed: a list"),
    ({"links": ["rxe9"]}, "links[0]: got the text 'rxe9', not a mapping; allowed: a list of mappings"),
    ({"links": [{"name": "a", "netdev": "eth1"}, 5]}, "links[1]: got int 5, not a mapping; allowed: a list of mappings"),
    # the keys, as Ansible checks suboptions
    ({"links": [{"netdev": "eth1"}]}, "links: missing required arguments: name found in links"),
    ({"links": [{"name": "a", "netdev": "eth1", "type": "roce"}]}, "value of type must be one of: rxe, siw, got: roce found in links"),
    ({"links": [{"name": "a", "netdev": "eth1", "colour": "red"}]}, "links.colour. Supported parameters include: name, netdev, state, type"),
])
def test_bad_input_fails_before_anything_runs(run_main, host, args, needle):
    sysfs, double = host
    ok, result = run(run_main, sysfs, **args)
    assert not ok and needle in result["msg"], result["msg"]
    assert double.calls == []


def test_kernel_without_the_module_fails_naming_it(run_main, host):
    sysfs, double = host
    double.available = {"rdma_rxe"}
    ok, result = run(run_main, sysfs, name="siw0", type="siw", netdev="eth1")
    assert not ok
    assert "has no siw module" in result["msg"] and "CONFIG_RDMA_SIW" in result["msg"]
    assert double.calls == [["/usr/sbin/modinfo", "-F", "filename", "siw"]]


def test_a_failing_command_says_what_was_done_and_what_was_left(run_main, host):
    sysfs, double = host
    double.fail_on = ["link", "add", "rxe0", "type", "rxe", "netdev", "eth1"]
    ok, result = run(run_main, sysfs, name="rxe0", netdev="eth1")
    assert not ok
    assert "rdma link add rxe0 type rxe netdev eth1 failed (rc 1): error: operation not permitted" in result["msg"]
    assert "done before it: ['/usr/sbin/rdma link delete rxe0']" in result["msg"]
    assert "not done: nothing" in result["msg"]


def test_a_link_that_replaces_another_says_which_one_goes(run_main, host, monkeypatch):
    """rxe1 on ens160, which carries rxe0: the plan deletes rxe0 (a netdev carries one rxe link), and says so."""
    sysfs, double = host
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))
    ok, result = run(run_main, sysfs, name="rxe1", netdev="ens160", _ansible_check_mode=True)
    assert ok and result["changed"] and result["deleted"] == ["rxe0"] and double.calls == []
    assert warnings == ["name: rxe1 replaces rxe0 on ens160 (a netdev carries one rxe link): rdma link delete rxe0 runs "
                        "first, and whatever uses rxe0 (a job, a device plugin) loses it"]
    warnings[:] = []
    ok, result = run(run_main, sysfs, links=[{"name": "rxe0", "state": "absent"}, {"name": "rxe1", "netdev": "ens160"}],
                     _ansible_check_mode=True)
    assert ok and warnings == []  # the request names rxe0 itself: nothing unexpected goes
