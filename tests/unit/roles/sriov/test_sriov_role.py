# -*- coding: utf-8 -*-
"""Tests of the rdma.fabric.sriov role.

* meta/argument_specs.yml mirrors defaults/main.yml.
* The boot unit (templates/sriov.service.j2), rendered as the role renders it (the ``sriov_pfs`` filter's PF), waits
  for the PF's link before it probes the held-back VFs, as sriov_vfs does: its wait line runs here with /bin/sh on a
  fake sysfs net folder, with ``SleepDouble``, a TEST DOUBLE for ``sleep`` put first on PATH (it returns at once,
  counts its calls, and brings the PF's carrier back after a given number of them), so no test sleeps.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import stat
import subprocess

import jinja2

from ansible_collections.rdma.fabric.plugins.filter.sriov_pfs import sriov_pfs
from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import ROLES, assert_specs_mirror_defaults, role_yaml

PF = {"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:10:00:01", "trust": True}]}


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults("sriov")


def render(pf, timeout=None):
    """The boot unit of ``pf`` (a PF request), with trim_blocks as Ansible's template lookup renders it."""
    with open(os.path.join(ROLES, "sriov", "templates", "sriov.service.j2")) as handle:
        template = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined).from_string(handle.read())
    if timeout is None:
        timeout = role_yaml("sriov", "defaults", "main.yml")["sriov_pf_link_timeout"]
    (wanted,) = sriov_pfs([pf], param="sriov_pfs")
    return template.render(__sriov_pf=wanted, sriov_pf_link_timeout=timeout, ansible_managed="managed")


def exec_lines(unit):
    return [line[len("ExecStart="):] for line in unit.splitlines() if line.startswith("ExecStart=")]


def wait_line(unit):
    lines = [line for line in exec_lines(unit) if "carrier" in line]
    assert len(lines) <= 1, lines
    return lines[0] if lines else None


def test_the_unit_waits_for_the_link_between_the_settings_and_the_probe():
    lines = exec_lines(render(PF))
    tee = lines.index("tee /sys/class/net/eth2/device/sriov_numvfs")
    wait = [i for i, line in enumerate(lines) if "carrier" in line]
    probe = [i for i, line in enumerate(lines) if "drivers_probe" in line]
    settings = [i for i, line in enumerate(lines) if line.startswith("ip link set eth2 vf 0")]
    assert tee < settings[0] < wait[0] < probe[0] and len(wait) == 1 and len(probe) == 1
    assert "-ge 150 ]" in lines[wait[0]]   # 30 s in 0.2 s steps
    # no wait: sriov_pf_link_timeout 0, or no VF held back (no settings: the kernel binds the VFs on the count write)
    assert wait_line(render(PF, timeout=0)) is None and "drivers_probe" in render(PF, timeout=0)
    assert wait_line(render({"netdev": "eth2", "numvfs": 2})) is None


class SleepDouble(object):
    """TEST DOUBLE for ``sleep``: a script first on PATH that returns at once, counts its calls in a file, and writes
    carrier 1 and operstate up into the PF's folder at the call given by ``up_after`` (0: never)."""

    def __init__(self, folder, net, up_after):
        self.count = os.path.join(folder, "sleeps")
        self.bin = os.path.join(folder, "bin")
        os.makedirs(self.bin)
        script = os.path.join(self.bin, "sleep")
        with open(script, "w") as handle:
            handle.write('#!/bin/sh\necho "$1" >> %s\nn=$(wc -l < %s)\n[ %d -gt 0 ] && [ "$n" -ge %d ] && '
                         '{ echo 1 > %s/carrier; echo up > %s/operstate; }\nexit 0\n'
                         % (self.count, self.count, up_after, up_after, net, net))
        os.chmod(script, stat.S_IRWXU)

    def calls(self):
        if not os.path.exists(self.count):
            return []
        with open(self.count) as handle:
            return handle.read().split()


def run_wait(tmp_path, flags, carrier, operstate, up_after=0, timeout=30):
    """The unit's wait line, its ``$$`` as systemd passes ``$``, /sys/class/net/eth2 a folder under tmp_path."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    net = tmp_path / "net" / "eth2"
    net.mkdir(parents=True)
    for name, text in (("flags", flags), ("carrier", carrier), ("operstate", operstate)):
        if text is not None:
            (net / name).write_text(text + "\n")
    sleep = SleepDouble(str(tmp_path), str(net), up_after)
    line = wait_line(render(PF, timeout=timeout)).replace("$$", "$").replace("/sys/class/net/eth2", str(net))
    assert line.startswith("/bin/sh -c '") and line.endswith("'")
    env = dict(os.environ, PATH=sleep.bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"))
    proc = subprocess.run(["/bin/sh", "-c", line[len("/bin/sh -c '"):-1]], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=60, check=False)
    return proc, sleep.calls()


def test_the_wait_ends_when_the_carrier_is_back(tmp_path):
    proc, sleeps = run_wait(tmp_path, "0x1003", "0", "down", up_after=10)
    assert proc.returncode == 0 and proc.stderr == "" and sleeps == ["0.2"] * 10


def test_carrier_decides_and_operstate_counts_only_without_it(tmp_path):
    proc, sleeps = run_wait(tmp_path / "stale", "0x1003", "0", "up", up_after=3)   # operstate lags behind the reset
    assert proc.returncode == 0 and proc.stderr == "" and len(sleeps) == 3
    proc, sleeps = run_wait(tmp_path / "nocarrier", "0x1003", None, "up")
    assert proc.returncode == 0 and proc.stderr == "" and sleeps == []


def test_a_link_already_up_is_not_waited_for(tmp_path):
    proc, sleeps = run_wait(tmp_path, "0x1003", "1", "up")
    assert proc.returncode == 0 and proc.stderr == "" and sleeps == []


def test_the_wait_is_bounded_and_says_so(tmp_path):
    proc, sleeps = run_wait(tmp_path, "0x1003", "0", "down", timeout=2)
    assert proc.returncode == 0 and len(sleeps) == 10   # 2 s in 0.2 s steps, then the VFs are probed all the same
    assert proc.stderr.strip() == "rdma.fabric.sriov: the link of eth2 was not up after 2 s; probing its VFs anyway"


def test_an_administratively_down_pf_is_not_waited_for(tmp_path):
    proc, sleeps = run_wait(tmp_path, "0x1002", None, "down")   # no IFF_UP: the kernel offers no carrier file
    assert proc.returncode == 0 and sleeps == []
    assert "eth2 is administratively down; probing its VFs without waiting for its link" in proc.stderr
