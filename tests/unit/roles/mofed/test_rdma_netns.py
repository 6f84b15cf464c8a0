# -*- coding: utf-8 -*-
"""mofed_rdma_netns: the RDMA network namespace mode, the real tasks of roles/mofed/tasks/modules.yml run by
ansible-playbook on this machine.

TEST DOUBLES, said so: the ib_core option file and the kernel's ``netns_mode`` parameter are files under the test's
folder (``__mofed_modprobe_file``, ``__mofed_netns_param``; the parameter reads ``Y`` in shared mode, ``N`` in
exclusive mode, as /sys/module/ib_core/parameters/netns_mode does); ``rdma`` is a script on PATH standing for
iproute2's ``rdma system set netns MODE`` (iproute2 6.1): it records its arguments and exits 0, or, as the kernel
refuses the change while another network namespace exists, prints an error and exits 1. The role's state read is
the real ``rdma.fabric.host_state``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

PLAY = """
- name: The RDMA netns mode of rdma.fabric.mofed
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Read the files (as the role's main.yml does, one host_state call)
      rdma.fabric.host_state:
        paths: ["{{ __mofed_modprobe_file }}", "{{ __mofed_netns_param }}", "{{ __mofed_modules_load_dir }}/x.conf"]
      register: __mofed_state

    - name: Run the modules step
      ansible.builtin.include_role:
        name: rdma.fabric.mofed
        tasks_from: modules.yml
"""

RDMA_DOUBLE = """#!/bin/sh
echo "$*" >> "%(log)s"
if [ -n "%(error)s" ]; then echo "%(error)s" >&2; exit 1; fi
exit 0
"""


def netns(tmp_path, monkeypatch, mode, kernel="Y", error="", check=False):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "rdma.log"
    (bin_dir / "rdma").write_text(RDMA_DOUBLE % {"log": log, "error": error})
    (bin_dir / "rdma").chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (bin_dir, os.environ["PATH"]))
    param = tmp_path / "netns_mode"
    param.write_text(kernel + "\n")
    values = {"mofed_rdma_netns": mode, "mofed_kernel_modules": [], "mofed_kernel_modules_persist": False,
              "__mofed_loaded": [], "__mofed_modules_load_dir": str(tmp_path), "__mofed_modules_load_file": str(tmp_path / "x.conf"),
              "__mofed_modprobe_file": str(tmp_path / "rdma-fabric-mofed.conf"), "__mofed_netns_param": str(param)}
    rc, tasks, out = run(tmp_path, PLAY, values, *(["--check"] if check else []))
    assert rc == 0, out[-4000:]
    calls = log.read_text().splitlines() if log.exists() else []
    return tasks, out, calls


def task(tasks, name):
    return tasks["rdma.fabric.mofed : " + name]["localhost"]


def test_exclusive_is_kept_by_the_ib_core_option_and_set_now_where_the_kernel_allows(tmp_path, monkeypatch):
    tasks, _out, calls = netns(tmp_path, monkeypatch, "exclusive")
    option = (tmp_path / "rdma-fabric-mofed.conf").read_text()
    assert option.splitlines()[-1] == "options ib_core netns_mode=0" and option.startswith("# ")
    assert oct((tmp_path / "rdma-fabric-mofed.conf").stat().st_mode & 0o777) == "0o644"
    assert calls == ["system set netns exclusive"]
    assert task(tasks, "Set the RDMA network namespace mode now")["changed"] is True
    assert task(tasks, "Say that the RDMA network namespace mode applies at the next boot").get("skipped") is True


def test_a_refused_change_says_it_applies_at_the_next_boot(tmp_path, monkeypatch):
    tasks, _out, calls = netns(tmp_path, monkeypatch, "exclusive", error="error: Device or resource busy")
    assert calls == ["system set netns exclusive"]
    assert task(tasks, "Set the RDMA network namespace mode now")["changed"] is False
    msg = " ".join(task(tasks, "Say that the RDMA network namespace mode applies at the next boot")["msg"].split())
    assert msg.startswith("WARNING rdma.fabric.mofed: the RDMA network namespace mode stays as it is until the next boot")
    assert "said error: Device or resource busy" in msg and str(tmp_path / "rdma-fabric-mofed.conf") in msg
    assert (tmp_path / "rdma-fabric-mofed.conf").exists()


def test_already_in_the_mode_runs_nothing_and_a_second_run_changes_nothing(tmp_path, monkeypatch):
    netns(tmp_path, monkeypatch, "exclusive", kernel="N")
    tasks, _out, calls = netns(tmp_path, monkeypatch, "exclusive", kernel="N")
    assert calls == []
    assert task(tasks, "Keep the RDMA network namespace mode exclusive at every ib_core load").get("skipped") is True
    assert task(tasks, "Set the RDMA network namespace mode now").get("skipped") is True


def test_shared_removes_the_option_and_empty_leaves_everything(tmp_path, monkeypatch):
    netns(tmp_path, monkeypatch, "exclusive", kernel="N")
    assert not (tmp_path / "rdma.log").exists()  # the kernel was in that mode already
    _tasks, _out, calls = netns(tmp_path, monkeypatch, "", kernel="N")
    assert calls == [] and (tmp_path / "rdma-fabric-mofed.conf").exists()
    _tasks, _out, calls = netns(tmp_path, monkeypatch, "shared", kernel="N")
    assert calls == ["system set netns shared"] and not (tmp_path / "rdma-fabric-mofed.conf").exists()


def test_check_mode_changes_nothing(tmp_path, monkeypatch):
    tasks, _out, calls = netns(tmp_path, monkeypatch, "exclusive", check=True)
    assert calls == [] and not (tmp_path / "rdma-fabric-mofed.conf").exists()
    assert task(tasks, "Keep the RDMA network namespace mode exclusive at every ib_core load")["changed"] is True
    assert json.dumps(task(tasks, "Set the RDMA network namespace mode now")).count("skip") >= 1
