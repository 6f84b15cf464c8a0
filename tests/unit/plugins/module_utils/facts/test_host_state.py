# -*- coding: utf-8 -*-
"""Unit tests for module_utils/facts/host_state.py: path records, the differs test and unit states.

Paths are real files made under pytest's tmp_path. ``systemctl`` is not run:
``CapturedSystemctl`` is a test double that replays what systemd 252 (Debian
12, the lab VM) printed for ``systemctl is-enabled`` (captured with
``tools/lab/lab ssh lab1 -- systemctl is-enabled ssh.service nosuch.service
systemd-udevd.service``: it prints ``enabled`` and stops at the unknown unit,
exit 1, with ``Failed to get unit file state for nosuch.service: No such file
or directory`` on stderr).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import grp
import hashlib
import os
import pwd

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common.host_state import path_differs
from ansible_collections.rdma.fabric.plugins.module_utils.facts.host_state import read_path, unit_states

ME = pwd.getpwuid(os.getuid()).pw_name
MY_GROUP = grp.getgrgid(os.getgid()).gr_name


def test_missing_path(tmp_path):
    assert read_path(str(tmp_path / "nope")) == {"exists": False}
    assert read_path(str(tmp_path / "nope" / "deeper")) == {"exists": False}


def test_file_record(tmp_path):
    f = tmp_path / "unit.service"
    f.write_bytes(b"[Unit]\nDescription=x\n")
    os.chmod(str(f), 0o640)
    rec = read_path(str(f))
    assert rec == {"exists": True, "readable": True, "type": "file", "mode": "0640", "owner": ME, "group": MY_GROUP,
                   "sha1": hashlib.sha1(b"[Unit]\nDescription=x\n").hexdigest()}
    assert "sha1" not in read_path(str(f), checksum=False)


def test_big_file_checksum_in_chunks(tmp_path):
    data = os.urandom(200000)
    f = tmp_path / "blob"
    f.write_bytes(data)
    assert read_path(str(f), chunk=4096)["sha1"] == hashlib.sha1(data).hexdigest()


def test_folder_and_link_records(tmp_path):
    (tmp_path / "b.json").write_text(u"{}")
    (tmp_path / "a.json").write_text(u"{}")
    os.symlink("a.json", str(tmp_path / "l"))
    rec = read_path(str(tmp_path))
    assert rec["type"] == "directory" and rec["entries"] == ["a.json", "b.json", "l"]
    link = read_path(str(tmp_path / "l"))
    assert link["type"] == "link" and link["target"] == "a.json" and "sha1" not in link


def test_unreadable_file_is_reported():
    # /proc/self/mem is a regular file whose read at offset 0 fails (EIO: the
    # page is not mapped) for every user, root included: a real read error.
    rec = read_path("/proc/self/mem")
    assert rec["exists"] and rec["type"] == "file" and rec["readable"] is False and rec["error"]
    assert "sha1" not in rec
    assert path_differs(rec, sha1=hashlib.sha1(b"").hexdigest())


def test_path_differs_file():
    rec = {"exists": True, "readable": True, "type": "file", "mode": "0644", "owner": "root", "group": "root",
           "sha1": "ab" * 20}
    assert not path_differs(rec, sha1="AB" * 20, mode="0644", owner="root", group="root")
    assert not path_differs(rec, sha1="ab" * 20, mode="644")
    assert path_differs(rec, sha1="cd" * 20)
    assert path_differs(rec, mode="0600")
    assert path_differs(rec, owner="nobody")
    assert path_differs(rec, group="adm")
    assert path_differs(rec, state="directory")
    assert path_differs({"exists": False}, sha1="ab" * 20)
    assert path_differs(dict(rec, type="link"), sha1="ab" * 20)


def test_path_differs_directory_and_absent():
    d = {"exists": True, "readable": True, "type": "directory", "mode": "0755", "owner": "root", "group": "root",
         "entries": []}
    assert not path_differs(d, state="directory", mode="0755", owner="root", group="root")
    assert path_differs(d, state="directory", mode="0700")
    assert path_differs(d, state="file")
    assert path_differs(d, state="absent")
    assert not path_differs({"exists": False}, state="absent")
    with pytest.raises(ValueError):
        path_differs(d, state="link")


class CapturedSystemctl(object):
    """Test double for run_command: replays systemd 252's ``systemctl is-enabled`` output."""

    def __init__(self, states):
        self.states = states
        self.calls = []

    def __call__(self, argv):
        self.calls.append(argv)
        assert argv[:2] == ["/usr/bin/systemctl", "is-enabled"]
        out = []
        for unit in argv[2:]:
            if unit not in self.states:
                return 1, "".join(out), "Failed to get unit file state for %s: No such file or directory\n" % unit
            out.append(self.states[unit] + "\n")
        return (0 if all(self.states[u] == "enabled" for u in argv[2:]) else 1), "".join(out), ""


def test_unit_states_one_run():
    run = CapturedSystemctl({"a.service": "enabled", "b.service": "disabled", "c.service": "masked"})
    assert unit_states(run, "/usr/bin/systemctl", ["a.service", "b.service", "c.service"]) == {
        "a.service": "enabled", "b.service": "disabled", "c.service": "masked"}
    assert len(run.calls) == 1


def test_unit_states_unknown_unit_asks_each():
    run = CapturedSystemctl({"ssh.service": "enabled", "systemd-udevd.service": "static"})
    states = unit_states(run, "/usr/bin/systemctl", ["ssh.service", "nosuch.service", "systemd-udevd.service"])
    assert states == {"ssh.service": "enabled", "nosuch.service": "not-found", "systemd-udevd.service": "static"}
    assert len(run.calls) == 4


def test_unit_states_none():
    assert unit_states(None, "/usr/bin/systemctl", []) == {}
