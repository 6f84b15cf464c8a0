# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.fabric_report module: files, idempotence, check and diff mode.

Inputs are the REAL lab facts in tests/unit/fixtures/fabric (README.md there).
The module writes into pytest's tmp_path, for real.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest


from ansible_collections.rdma.fabric.plugins.modules import fabric_report as module_under_test

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fabric")


def load(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return json.load(f)


@pytest.fixture(name="run")
def fixture_run(run_main):
    def run(**args):
        return run_main(module_under_test.main, args)[1]

    return run


def inputs():
    lab1, lab2 = load("lab_lab1_facts.json"), load("lab_lab2_facts.json")
    return {
        "lab1": {"reachable": True, "rdma": lab1["rdma"], "gpudirect": lab1["gpudirect"]},
        "lab2": {"reachable": True, "rdma": lab2["rdma"], "gpudirect": lab2["gpudirect"]},
    }


VALIDATION = [{"test": "ib_write_bw", "hosts": ["lab1", "lab2"], "server": "lab1", "client": "lab2",
               "devices": ["rxe0", "rxe0"], "ports": [1, 1], "gid_indices": [1, 1], "bandwidth_gbps": 0.0481,
               "latency_us": None, "min_bandwidth_gbps": 0.0025, "passed": True,
               "message": "ib_write_bw client ok: 0.048 Gb/s"}]
STAMP = "2026-11-21T01:00:00+00:00"


def test_writes_three_files_then_is_idempotent(run, tmp_path):
    dest = str(tmp_path / "reports")
    result = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    assert result["changed"] is True and result["changed_files"] == ["json", "md", "html"]
    assert result["paths"] == {"json": dest + "/fabric-report.json", "md": dest + "/fabric-report.md",
                               "html": dest + "/fabric-report.html"}
    for path in result["paths"].values():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o755
    with open(result["paths"]["json"]) as f:
        data = json.load(f)
    assert sorted(data["hosts"]) == ["lab1", "lab2"]
    assert data["validation"] == VALIDATION
    assert data["summary"]["ok"] is True and data["generated_at"] == STAMP
    assert result["summary_lines"][0] == "RDMA fabric report: %s/fabric-report.html" % dest
    assert result["problems"] == []
    # same input, same files: nothing to write
    again = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    assert again["changed"] is False and again["changed_files"] == []
    assert not [n for n in os.listdir(dest) if n.startswith(".")]


def test_check_mode_writes_nothing_and_diff_shows_the_json(run, tmp_path):
    dest = str(tmp_path / "reports")
    result = run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP,
                 _ansible_check_mode=True, _ansible_diff=True)
    assert result["changed"] is True and not os.path.exists(dest)
    assert result["diff"]["before"] == ""
    assert json.loads(result["diff"]["after"])["summary"]["hosts"] == 2
    run(dest=dest, hosts=inputs(), validation=VALIDATION, generated_at=STAMP)
    changed = dict(VALIDATION[0], passed=False, message="ib_write_bw client failed: exited with rc 1")
    result = run(dest=dest, hosts=inputs(), validation=[changed], generated_at=STAMP, _ansible_check_mode=True,
                 _ansible_diff=True)
    assert result["changed"] is True
    assert '"passed": true' in result["diff"]["before"] and '"passed": false' in result["diff"]["after"]
    with open(os.path.join(dest, "fabric-report.json")) as f:
        assert json.load(f)["validation"][0]["passed"] is True


def test_formats_basename_and_mode(run, tmp_path):
    result = run(dest=str(tmp_path), hosts=inputs(), formats=["html"], basename="lab", mode="0600", generated_at=STAMP)
    assert os.listdir(str(tmp_path)) == ["lab.html"]
    assert stat.S_IMODE(os.stat(result["paths"]["html"]).st_mode) == 0o600


@pytest.mark.parametrize("args,message", [
    (dict(basename="../x"), "basename: '../x' is not a plain file name"),
    (dict(mode="rwx"), "mode: 'rwx' is not an octal file mode"),
    (dict(formats=["pdf"]), "value of formats must be one or more of: json, md, html"),
    (dict(hosts={"lab1": "up"}), "hosts: the value for lab1 must be a dictionary"),
])
def test_bad_input_writes_nothing(run, tmp_path, args, message):
    params = dict(dest=str(tmp_path / "out"), hosts=inputs())
    params.update(args)
    result = run(**params)
    assert result["failed"] is True and message in result["msg"]
    assert not os.path.exists(str(tmp_path / "out"))


def test_dest_that_is_a_file(run, tmp_path):
    target = tmp_path / "file"
    target.write_text(u"x")
    result = run(dest=str(target), hosts=inputs())
    assert result["failed"] is True and result["msg"] == "dest: %s exists and is not a folder" % target
