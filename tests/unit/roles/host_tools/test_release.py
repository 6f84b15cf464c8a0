# -*- coding: utf-8 -*-
"""host_tools' `release` entry: the host runtime goes with the last systemd unit that runs it.

A real ansible-playbook run of the entry on this machine, with the role's paths (the runtime's folder and
command, the units folder) pointed at a temporary tree laid out like a host's (-e overrides role vars).
The units are the ones the roles write, reduced to the line that matters (ExecStart of the runtime).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run

PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  tasks:
    - name: Release
      ansible.builtin.include_role:
        name: rdma.fabric.host_tools
        tasks_from: release
"""


def _host(tmp_path, units):
    lib = tmp_path / "usr" / "lib" / "rdma-fabric"
    lib.mkdir(parents=True)
    (lib / "rdma-fabric.pyz").write_text("zip")
    sbin = tmp_path / "usr" / "sbin"
    sbin.mkdir(parents=True)
    (sbin / "rdma-fabric").write_text("#!/bin/sh\n")
    units_dir = tmp_path / "etc" / "systemd" / "system"
    units_dir.mkdir(parents=True)
    for name, text in units.items():
        path = units_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    values = {"host_tools_dir": str(lib), "host_tools_pyz": str(lib / "rdma-fabric.pyz"),
              "host_tools_wrapper": str(sbin / "rdma-fabric"), "__host_tools_units_dir": str(units_dir)}
    return lib, sbin / "rdma-fabric", values


def test_the_last_user_gone_removes_the_runtime(tmp_path):
    lib, wrapper, values = _host(tmp_path, {
        "sshd.service": "[Service]\nExecStart=/usr/sbin/sshd -D\n",
        # another tool of the same name prefix is no user of the runtime
        "health.service": "[Service]\nExecStart=%s-health-check\n" % (tmp_path / "usr" / "sbin" / "rdma-fabric")})
    rc, tasks, text = run(tmp_path, PLAYBOOK, values)
    assert rc == 0, text[-3000:]
    assert not lib.exists() and not wrapper.exists()
    assert tasks["rdma.fabric.host_tools : Remove the host runtime (no unit runs it any more)"]["localhost"]["changed"]


def test_a_unit_or_drop_in_that_runs_it_keeps_it(tmp_path):
    for units in ({"rdma-fabric-metrics.service": "[Service]\nExecStart=/usr/bin/python3 -E -s %s metrics\n"},
                  {"rdma-fabric-lossless.service.d/50-rdma-fabric-metrics.conf": "[Service]\nExecStartPost=%s\n"}):
        case = tmp_path / str(len(list(tmp_path.iterdir())))
        case.mkdir()
        lib, wrapper, values = _host(case, {})
        target = values["host_tools_pyz"] if "python3" in list(units.values())[0] else values["host_tools_wrapper"] + " metrics"
        for name, text in units.items():
            path = case / "etc" / "systemd" / "system" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text % target)
        rc, tasks, text = run(case, PLAYBOOK, values)
        assert rc == 0, text[-3000:]
        assert lib.exists() and wrapper.exists(), units
        assert tasks["rdma.fabric.host_tools : Remove the host runtime (no unit runs it any more)"]["localhost"]["skipped"]
