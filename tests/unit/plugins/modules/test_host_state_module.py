# -*- coding: utf-8 -*-
"""Unit tests for the host_state module and the path_differs filter.

The module runs in-process through AnsibleModule with patched arguments on
real files under pytest's tmp_path; the filter is checked against the records
the module returned, so the pair is tested as the roles use it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.path_differs import path_differs
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
    # As the roles use it: the record says the same content and mode need no write...
    assert not path_differs(rec, sha1=hashlib.sha1(b"a=1\n").hexdigest(), mode="0644")
    # ...and other content, a missing file, or a file where a folder is wanted do.
    assert path_differs(rec, sha1=hashlib.sha1(b"a=2\n").hexdigest(), mode="0644")
    assert path_differs(result["paths"][str(tmp_path / "gone")], sha1=rec["sha1"])
    assert path_differs(rec, state="directory")


def test_relative_path_rejected_before_reading(run_module):
    ok, result = run_module({"paths": ["etc/passwd"]})
    assert not ok and "paths" in result["msg"] and "absolute" in result["msg"] and "etc/passwd" in result["msg"]


def test_bad_unit_name_rejected(run_module):
    ok, result = run_module({"units": ["--root=/tmp"]})
    assert not ok and result["msg"].startswith("units:") and "--root=/tmp" in result["msg"]


@pytest.mark.parametrize("path,what", [
    ("/etc/rdma-fabric\0/x", "contains a NUL byte"),   # os.lstat raised ValueError: a traceback
    ("/etc/rdma-fabric/x.conf\n", "contains a control character"),
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


def test_filter_rejects_bad_input():
    with pytest.raises(AnsibleFilterError, match="state must be one of file, directory, absent"):
        path_differs({"exists": False}, state="link")
    with pytest.raises(AnsibleFilterError, match="one record of host_state"):
        path_differs("/etc/x")
    with pytest.raises(AnsibleFilterError, match="octal"):
        path_differs({"exists": True, "type": "file", "mode": "0644"}, mode="rw-r--r--")
