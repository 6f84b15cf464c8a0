# -*- coding: utf-8 -*-
"""Unit tests for the host_state module.

The module runs in-process through AnsibleModule with patched arguments on
real files under pytest's tmp_path. The path_differs filter, checked against
the records this module returns, is in tests/unit/plugins/filter/test_path_differs.py
(ansible-test runs module tests where controller code cannot be imported).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest

from ansible_collections.rdma.fabric.plugins.modules import host_state


@pytest.fixture(name="run_module")
def fixture_run_module(run_main):
    """run_module(args) -> (ok, result), through the shared harness (conftest.py)."""
    return lambda args: run_main(host_state.main, args)


def test_reads_paths_and_changes_nothing(tmp_path, run_module):
    f = tmp_path / "x.conf"
    f.write_text(u"a=1\n")
    os.chmod(str(f), 0o644)
    before = sorted(os.listdir(str(tmp_path)))
    ok, result = run_module({"paths": [str(f), str(tmp_path), str(tmp_path / "gone")], "_ansible_check_mode": True,
                             "_ansible_diff": True})
    assert ok and result["changed"] is False and result["units"] == {}
    assert result["diff"] == {"before": {}, "after": {}}
    rec = result["paths"][str(f)]
    assert rec["sha1"] == hashlib.sha1(b"a=1\n").hexdigest() and rec["mode"] == "0644"
    assert result["paths"][str(tmp_path)]["entries"] == ["x.conf"]
    assert result["paths"][str(tmp_path / "gone")] == {"exists": False}
    assert sorted(os.listdir(str(tmp_path))) == before


def test_relative_path_rejected_before_reading(run_module):
    ok, result = run_module({"paths": ["etc/passwd"]})
    assert not ok and "paths" in result["msg"] and "absolute" in result["msg"] and "etc/passwd" in result["msg"]


def test_bad_unit_name_rejected(run_module):
    ok, result = run_module({"units": ["--root=/tmp"]})
    assert not ok and result["msg"].startswith("units:") and "--root=/tmp" in result["msg"]


@pytest.mark.parametrize("path,what", [
    ("/etc/rdma-fabric\0/x", "contains a NUL byte"),   # os.lstat raised ValueError: a traceback
    ("/etc/rdma-fabric/x.conf\n", "contains a control character"),
    ("/" + "a/" * 2500, "(5001 characters) is longer than Linux takes"),
    ("/etc/" + "x" * 256, "is longer than Linux takes; allowed: a path of at most 4095 characters, each part at most 255"),
])
def test_nul_or_control_character_in_a_path_rejected_by_name(run_module, path, what):
    ok, result = run_module({"paths": ["/etc/hostname", path]})
    assert not ok and result["msg"].startswith("paths: ") and what in result["msg"]


@pytest.mark.parametrize("unit", [
    "rdma-fabric.service\n",        # "$" let a trailing newline through before
    "rdma fabric.service",
    "rdma-fabric",                  # no type
    "-rdma.service",
    "x" * 250 + ".service",
])
def test_unit_names_full_match(run_module, unit):
    ok, result = run_module({"units": [unit]})
    assert not ok and result["msg"].startswith("units: ") and "allowed: NAME.TYPE" in result["msg"]


def test_unit_names_users_write_pass(run_module, monkeypatch):
    from ansible.module_utils import basic
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, required=False, opt_dirs=None: "/bin/systemctl")
    monkeypatch.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (1, "enabled\nnot-found\n", ""))
    ok, result = run_module({"units": ["rdma-fabric-rxe@eth1.service", "dev-disk-by\\x2duuid.device"]})
    assert ok and result["units"] == {"rdma-fabric-rxe@eth1.service": "enabled", "dev-disk-by\\x2duuid.device": "not-found"}


def test_content_of_a_record_in_the_same_call(tmp_path, run_module):
    """A role's record comes back as text with the rest of the read; anything else says why it has no text."""
    record = tmp_path / "record.json"
    record.write_text(u'{"schema": 1, "kernel": "6.1.0-28-amd64"}\n')
    big = tmp_path / "big"
    big.write_bytes(b"x" * (host_state.CONTENT_LIMIT + 1))
    binary = tmp_path / "binary"
    binary.write_bytes(b"\xff\xfe\x00")
    paths = [str(record), str(big), str(binary), str(tmp_path), str(tmp_path / "gone"), str(tmp_path / "other")]
    (tmp_path / "other").write_text(u"not asked for\n")
    ok, result = run_module({"paths": paths, "content": paths[:5]})
    assert ok and result["changed"] is False
    got = result["paths"]
    assert got[str(record)]["content"] == u'{"schema": 1, "kernel": "6.1.0-28-amd64"}\n'
    assert got[str(record)]["sha1"] == hashlib.sha1(record.read_bytes()).hexdigest()   # the rest of the record as before
    assert got[str(big)]["content_error"] == "larger than 65536 bytes" and "content" not in got[str(big)]
    assert got[str(binary)]["content_error"] == "not UTF-8 text"
    assert got[str(tmp_path)]["content_error"] == "not a regular file"
    assert got[str(tmp_path / "gone")] == {"exists": False, "content_error": "does not exist"}
    assert "content" not in got[str(tmp_path / "other")] and "content_error" not in got[str(tmp_path / "other")]


def test_content_of_a_path_not_read_is_rejected_by_name(tmp_path, run_module):
    ok, result = run_module({"paths": [str(tmp_path)], "content": ["/etc/hostname"]})
    assert not ok and result["msg"] == "content: every path must also be in paths; not in paths: /etc/hostname"


def test_marker_says_which_files_the_role_wrote_without_their_text(tmp_path, run_module):
    """The role's own file carries its marker line; a file it did not write (here standing for /etc/shadow) does not:
    only whether it does comes back, never the text."""
    mine = tmp_path / "nccl.conf"
    mine.write_text(u"# NCCL settings\n# Written by rdma.fabric.job_env; edits are overwritten.\nNCCL_IB_DISABLE=0\n")
    other = tmp_path / "shadow"
    other.write_text(u"root:$6$secret:19000:0:99999:7:::\n")
    ok, result = run_module({"paths": [str(mine), str(other), str(tmp_path), str(tmp_path / "gone")],
                             "marker": "# Written by rdma.fabric.job_env"})
    assert ok
    assert result["paths"][str(mine)]["marked"] is True and result["paths"][str(other)]["marked"] is False
    assert "marked" not in result["paths"][str(tmp_path)] and "marked" not in result["paths"][str(tmp_path / "gone")]
    assert "secret" not in repr(result)
    ok, result = run_module({"paths": [str(mine)], "marker": "#\nx"})
    assert not ok and result["msg"].startswith("marker: ")
