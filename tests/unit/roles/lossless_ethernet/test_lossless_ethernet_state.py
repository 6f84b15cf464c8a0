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
import shutil

import pytest

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


@pytest.fixture
def host(tmp_path, monkeypatch):
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
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))

    def play(**values):
        values.setdefault("sysfs", str(sysfs))
        rc, tasks, text = run(tmp_path, PLAYBOOK, values, "--check", "--diff")
        return rc, dict((k.split(" : ", 1)[-1], v) for k, v in tasks.items()), text
    return play


def _files(tmp_path, name, content):
    folder = tmp_path / name
    folder.mkdir()
    for base, data in content.items():
        (folder / base).write_text(json.dumps(data))
    return str(folder)


def test_present_keeps_the_values_before_the_first_apply(host):
    # (persistence off: enabling a unit needs systemd, which this machine lacks; the values before the first
    # apply are kept either way)
    rc, tasks, text = host(lossless_ethernet_persist=False)
    assert rc == 0, text[-4000:]
    read = tasks["Read what the ports not configured before have now (one call, changes nothing)"]["localhost"]
    assert read["ports"]["eth1"]["before"] == {"roce_mode": "v2", "roce_tos": 106}
    (written,) = tasks["Write each port's values before the first apply"]["localhost"]["results"]
    assert written["changed"] is True and written["item"]["key"] == "eth1"
    assert json.loads(written["diff"][0]["after"]) == {"netdev": "eth1", "before": {"roce_mode": "v2", "roce_tos": 106}}


def test_a_port_with_its_values_kept_costs_no_extra_call(host, tmp_path):
    before = _files(tmp_path, "before", {"eth1.json": {"netdev": "eth1", "before": {"roce_mode": "v1"}}})
    rc, tasks, text = host(__lossless_ethernet_before_dir=before, lossless_ethernet_persist=False)
    assert rc == 0, text[-4000:]
    skipped = tasks["Read what the ports not configured before have now (one call, changes nothing)"]["localhost"]
    assert skipped.get("skipped") is True


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


def test_persist_false_applies_now_and_nothing_at_boot(host):
    rc, tasks, text = host(lossless_ethernet_persist=False)
    assert rc == 0, text[-4000:]
    assert "Configure lossless RoCE on every port (one call)" in tasks
    assert "Write each port's values before the first apply" in tasks
    assert "Save each port's settings (its entry of roce_qos's ports list)" not in tasks
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
