# -*- coding: utf-8 -*-
"""lossless_ethernet_state (present keeps each port's values before the first apply; absent puts them back)
and lossless_ethernet_persist: false, run by a real ansible-playbook on localhost, in check mode.

The role reads a copy of the REAL lab sysfs tree of lab1 (tests/unit/fixtures/sysfs/lab_rxe_lab1: rxe0
on the virtio NIC eth1) through module_defaults (group rdma.fabric.sysfs); the tree gets the rdma_cm
configfs files of rxe0's port (what the kernel shows once the group exists). `dcb` on PATH is a TEST
DOUBLE answering as iproute2 does for a driver without DCB ("Operation not supported"), so roce_qos
manages the rdma_cm ToS and mode and warns for the rest, as on the lab's virtio NIC. Everything runs
in check mode (nothing on this machine changes); the folders of saved settings and of the values
before the first apply are pointed at temporary folders where a test needs them to hold files. The
writes themselves, a reboot and the real DCB device are shown in the lab (molecule/lossless_ethernet).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import pathlib
import shutil

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "sysfs", "lab_rxe_lab1",
                       "sys")

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  module_defaults:
    group/rdma.fabric.sysfs:
      sysfs_path: "{{ sysfs }}"
  tasks:
    - name: Lossless
      ansible.builtin.include_role:
        name: rdma.fabric.lossless_ethernet
      vars:
        lossless_ethernet_on_unsupported: warn
        lossless_ethernet_manage_packages: false
"""


def _make_host(tmp_path):
    """The copy of lab1's tree with rxe0's rdma_cm files, and the folder of the dcb TEST DOUBLE: (sysfs, bin)."""
    sysfs = tmp_path / "sys"
    shutil.copytree(FIXTURE, str(sysfs), symlinks=True)
    port = sysfs / "kernel" / "config" / "rdma_cm" / "rxe0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "default_roce_mode").write_text("RoCE v2\n")
    (port / "default_roce_tos").write_text("106\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dcb").write_text('#!/bin/sh\necho "Attribute read: Operation not supported" >&2\nexit 1\n')
    (bin_dir / "dcb").chmod(0o755)
    return sysfs, bin_dir


def _play(tmp_path, sysfs, values):
    values.setdefault("sysfs", str(sysfs))
    rc, tasks, text = run(tmp_path, PLAYBOOK, values, "--check", "--diff")
    return rc, dict((k.split(" : ", 1)[-1], v) for k, v in tasks.items()), text


@pytest.fixture
def host(tmp_path, monkeypatch):
    sysfs, bin_dir = _make_host(tmp_path)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))

    def play(**values):
        return _play(tmp_path, sysfs, values)
    return play


@pytest.fixture(name="persist_false")
def fixture_persist_false(shared, monkeypatch):
    """The run with lossless_ethernet_persist: false and nothing else set, made once for the two tests that read it
    (shared: conftest.py)."""
    def build(folder):
        folder = pathlib.Path(folder)
        sysfs, bin_dir = _make_host(folder)
        with monkeypatch.context() as patch:
            patch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
            return _play(folder, sysfs, {"lossless_ethernet_persist": False})
    return shared.once("lossless_ethernet_persist_false", build)


def _files(tmp_path, name, content):
    folder = tmp_path / name
    folder.mkdir()
    for base, data in content.items():
        (folder / base).write_text(json.dumps(data))
    return str(folder)


def test_present_keeps_the_values_before_the_first_apply(persist_false):
    # (persistence off: enabling a unit needs systemd, which this machine lacks; the values before the first
    # apply are kept either way) The roce_qos call keeps them (keep: before; written, never replaced, by the module:
    # tests/unit/plugins/module_utils/qos/test_qos_keep.py); in check mode it says what it would write.
    rc, tasks, text = persist_false
    assert rc == 0, text[-4000:]
    configured = tasks["Configure lossless RoCE on every port (one call)"]["localhost"]
    assert configured["invocation"]["module_args"]["keep"] == ["before"]
    path = paths.LOSSLESS_BEFORE_DIR + "/eth1.json"
    assert configured["ports"]["eth1"]["kept"] == {"before": {"path": path, "changed": True}}
    assert configured["changed"] is True
    (written,) = [d for d in configured["diff"] if d.get("after_header") == path]
    assert written["before"] == ""
    assert json.loads(written["after"]) == {"netdev": "eth1", "before": {"roce_mode": "v2", "roce_tos": 106}}
    assert not os.path.exists(path)   # check mode


def test_absent_puts_the_kept_values_back_after_removing_the_persistence(host, tmp_path):
    before = _files(tmp_path, "before", {"eth1.json": {"netdev": "eth1", "before": {
        "roce_mode": "v1", "roce_tos": 0, "trust": None, "pfc": None}}})
    rc, tasks, text = host(lossless_ethernet_state="absent", __lossless_ethernet_before_dir=before)
    assert rc == 0, text[-4000:]
    names = list(tasks)
    assert names.index("Remove the service, the udev rule, the saved settings and any re-apply tool of earlier "
                       "versions") < names.index("Put every port back (one call)")
    back = tasks["Put every port back (one call)"]["localhost"]
    assert back["changed"] is True
    assert back["ports"]["eth1"]["after"] == {"roce_mode": "v1", "roce_tos": 0}
    removed = tasks["Remove the values kept before the first apply"]["localhost"]
    assert removed["changed"] is True and removed["path"] == before
    assert tasks["Configure lossless RoCE on every port (one call)"]["localhost"]["skipped"] is True
    assert os.path.exists(os.path.join(before, "eth1.json"))  # check mode


def test_absent_without_kept_values_goes_to_the_driver_defaults_of_what_was_saved(host, tmp_path):
    saved = _files(tmp_path, "saved", {"eth1.json": {"netdev": "eth1", "roce_tos": 106, "roce_mode": "v2",
                                                     "pfc": [3], "ets": None, "on_unsupported": "warn"}})
    rc, tasks, text = host(lossless_ethernet_state="absent", __lossless_ethernet_saved_dir=saved,
                           __lossless_ethernet_before_dir=str(tmp_path / "none"))
    assert rc == 0, text[-4000:]
    back = tasks["Put every port back (one call)"]["localhost"]
    assert back["ports"]["eth1"]["after"] == {"roce_mode": "v2", "roce_tos": 0}
    assert any("pfc" in w for w in back.get("warnings", []))


def test_persist_false_applies_now_and_nothing_at_boot(persist_false):
    rc, tasks, text = persist_false
    assert rc == 0, text[-4000:]
    configured = tasks["Configure lossless RoCE on every port (one call)"]["localhost"]
    assert sorted(configured["ports"]["eth1"]["kept"]) == ["before"]
    assert "Install the re-apply service" not in tasks and "Enable the re-apply service (boot, and openibd restarts)" not in tasks
    assert "Disable the re-apply service" in tasks


def test_a_plan_on_a_host_without_the_service_reports_it_and_asks_systemd_nothing(host, tmp_path):
    # The plan of a bare host (site.yml --check): the re-apply service is not on this machine, so its install
    # reports a change and the enable is left to the real run (systemd cannot enable a unit check mode did not
    # write: the rollout plan failed on exactly that in the lab).
    assert not os.path.exists("/etc/systemd/system/rdma-fabric-lossless.service")
    rc, tasks, text = host(__lossless_ethernet_saved_dir=str(tmp_path / "saved"),
                           __lossless_ethernet_before_dir=str(tmp_path / "before"))
    assert rc == 0, text[-4000:]
    assert tasks["Install the re-apply service"]["localhost"]["changed"] is True
    assert tasks["Enable the re-apply service (boot, and openibd restarts)"]["localhost"]["skipped"] is True


def test_a_bad_state_fails_naming_the_variable(host):
    rc, tasks, text = host(lossless_ethernet_state="gone")
    assert rc != 0 and "lossless_ethernet_state" in text and "present, absent" in text


HOST_MODULES = ("rdma.fabric.rdma_device_facts", "rdma.fabric.host_state", "rdma.fabric.roce_qos")


def port_crossings(tasks):
    """The remote module calls of a run that touch the port: the facts read, the state read, roce_qos, and file
    or copy calls on the port's kept files (the values before the first apply, the saved settings); one per loop
    item."""
    kept = (paths.LOSSLESS_BEFORE_DIR, paths.LOSSLESS_SAVED_DIR)
    calls = []
    for name, hosts in tasks.items():
        result = hosts.get("localhost") or {}
        for item in result.get("results") or [result]:
            if item.get("skipped") or result.get("skipped"):
                continue
            action = result.get("action")
            args = (item.get("invocation") or {}).get("module_args") or {}
            target = args.get("dest") or args.get("path") or ""
            if action in HOST_MODULES or (action in ("ansible.builtin.file", "ansible.builtin.copy")
                                          and target.startswith(kept)):
                calls.append(name)
    return calls


def test_a_first_apply_crosses_to_the_host_three_times_for_a_port(host):
    # The default settings (persistence on) on a host where nothing of the role is yet: the facts read, the one
    # state read, and one roce_qos call that reads the port, keeps its values before the first apply, applies and
    # saves its settings (8 calls before roce_qos kept the files itself: facts, state, a check-mode roce_qos read,
    # the folder and file of the values before, roce_qos, the folder and file of the saved settings).
    rc, tasks, text = host()
    assert rc == 0, text[-4000:]
    assert port_crossings(tasks) == ["Read the RDMA facts",
                                     "Read the tools, the saved settings, the re-apply files and unit, and openibd "
                                     "(one call)",
                                     "Configure lossless RoCE on every port (one call)"]
    configured = tasks["Configure lossless RoCE on every port (one call)"]["localhost"]
    assert configured["ports"]["eth1"]["kept"] == {
        "before": {"path": paths.LOSSLESS_BEFORE_DIR + "/eth1.json", "changed": True},
        "saved": {"path": paths.LOSSLESS_SAVED_DIR + "/eth1.json", "changed": True}}
    (saved,) = [d for d in configured["diff"] if d.get("after_header") == paths.LOSSLESS_SAVED_DIR + "/eth1.json"]
    assert json.loads(saved["after"])["netdev"] == "eth1" and json.loads(saved["after"])["roce_tos"] == 106


# site.yml runs soft_roce just before this role: its rdma_link call returns the RDMA facts after its changes,
# and site.yml passes __lossless_ethernet_facts_current so that the role does not read them again.
PLAYBOOK_AFTER_A_READ = PLAYBOOK.replace("  tasks:\n", """  tasks:
    - name: The RDMA facts read earlier in the run
      rdma.fabric.rdma_device_facts:

""", 1) + """        __lossless_ethernet_facts_current: "{{ facts_current }}"
"""


@pytest.mark.parametrize("facts_current", [True, False])
def test_facts_read_after_the_last_change_are_not_read_again(tmp_path, monkeypatch, facts_current):
    sysfs, bin_dir = _make_host(tmp_path)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    rc, tasks, text = run(tmp_path, PLAYBOOK_AFTER_A_READ, {"sysfs": str(sysfs), "facts_current": facts_current},
                          "--check", "--diff")
    assert rc == 0, text[-4000:]
    tasks = dict((k.split(" : ", 1)[-1], v) for k, v in tasks.items())
    assert port_crossings(tasks) == (
        ["The RDMA facts read earlier in the run"] + ([] if facts_current else ["Read the RDMA facts"])
        + ["Read the tools, the saved settings, the re-apply files and unit, and openibd (one call)",
           "Configure lossless RoCE on every port (one call)"])
    # the same port, configured the same way, on the facts at hand
    assert list(tasks["Configure lossless RoCE on every port (one call)"]["localhost"]["ports"]) == ["eth1"]
