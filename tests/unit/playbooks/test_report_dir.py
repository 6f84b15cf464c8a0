# -*- coding: utf-8 -*-
"""The playbooks' report folder: by default under the user's ~/.cache, never inside the collection.

Each playbook that writes the report or the validation results (site.yml,
validate.yml, report.yml) computes ``rdma_fabric_report_dir`` from
``rdma_report_dir``; the expression is read from the playbooks and evaluated
by ansible-core itself (``ansible localhost -m debug``) with HOME pointing at a
temporary folder, with and without ``rdma_report_dir`` set.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import pytest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTION = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
COLLECTIONS_PATH = os.path.abspath(os.path.join(COLLECTION, "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
PLAYBOOKS = ["site.yml", "validate.yml", "report.yml"]


def report_dir_expressions(name):
    with open(os.path.join(COLLECTION, "playbooks", name)) as f:
        plays = yaml.safe_load(f)
    return [play["vars"]["rdma_fabric_report_dir"] for play in plays
            if "rdma_fabric_report_dir" in (play.get("vars") or {})]


def evaluate(expr, tmp_path, extra_vars=None):
    env = dict(os.environ, HOME=str(tmp_path / "home"), ANSIBLE_COLLECTIONS_PATH=COLLECTIONS_PATH,
               ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), ANSIBLE_NOCOLOR="1", ANSIBLE_LOAD_CALLBACK_PLUGINS="1",
               ANSIBLE_STDOUT_CALLBACK="ansible.builtin.minimal", ANSIBLE_LOCALHOST_WARNING="false")
    env.pop("ANSIBLE_CONFIG", None)
    args = [os.path.join(BIN, "ansible"), "localhost", "-c", "local", "-m", "ansible.builtin.debug",
            "-a", "msg={{ %s }}" % expr[3:-3].strip()]
    if extra_vars:
        args += ["-e", json.dumps(extra_vars)]
    proc = subprocess.run(args, env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return json.loads(proc.stdout[proc.stdout.index("{"):])["msg"]


def test_one_expression_in_every_playbook():
    found = dict((name, report_dir_expressions(name)) for name in PLAYBOOKS)
    assert all(found.values()), found
    assert len(set(e for exprs in found.values() for e in exprs)) == 1, found
    assert "playbook_dir" not in found["site.yml"][0] and "role_path" not in found["site.yml"][0]


@pytest.mark.parametrize("extra_vars, expected", [
    (None, "home/.cache/rdma-fabric/reports"),
    ({"rdma_report_dir": "/srv/reports"}, "/srv/reports"),
])
def test_default_is_under_home_and_a_setting_wins(tmp_path, extra_vars, expected):
    (tmp_path / "home").mkdir()
    got = evaluate(report_dir_expressions("site.yml")[0], tmp_path, extra_vars)
    want = expected if expected.startswith("/") else str(tmp_path / expected)
    assert got == want
    assert not got.startswith(COLLECTION)
