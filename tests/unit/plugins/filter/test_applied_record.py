# -*- coding: utf-8 -*-
"""Unit tests for the applied_record filter, on records the host_state module reads (with content) from real files.

The mofed role's own use of it (the no-change path) is tested in tests/unit/roles/mofed/test_no_change.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest
import yaml

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter import applied_record as flt
from ansible_collections.rdma.fabric.plugins.module_utils.facts.host_state import read_path
from ansible_collections.rdma.fabric.plugins.modules.host_state import read_content

EXPECTED = {"schema": 1, "settings": "ab12", "kernel": "6.1.0-28-amd64",
            "watched": {"/etc/modules-load.d/rdma-fabric-mofed.conf": {"exists": False}}}


def read(path):
    """One record as host_state returns it for a path in its content option."""
    rec = read_path(str(path))
    rec.update(read_content(str(path), rec))
    return rec


def test_registered_and_documented():
    assert list(flt.FilterModule().filters()) == ["applied_record"]
    doc = yaml.safe_load(flt.DOCUMENTATION)
    assert doc["name"] == "applied_record" and sorted(doc["options"]) == ["_input", "expected"]


def test_a_record_that_holds_what_is_expected_is_returned(tmp_path):
    path = tmp_path / "applied.json"
    data = dict(EXPECTED, installed={"flavor": "inbox", "version": "44.0-2"})
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    assert flt.applied_record(read(path), EXPECTED) == data
    # what expected does not name is not compared; tuples compare as the lists JSON gives back
    assert flt.applied_record(read(path), {"schema": 1, "watched": {k: dict(v) for k, v in EXPECTED["watched"].items()}})


@pytest.mark.parametrize("change", [
    {"settings": "cd34"},                                                    # a setting changed
    {"kernel": "6.1.0-29-amd64"},                                            # booted into another kernel
    {"watched": {"/etc/modules-load.d/rdma-fabric-mofed.conf": {"exists": True, "sha1": "0" * 40}}},  # a file changed
])
def test_a_record_of_other_settings_kernel_or_files_is_none(tmp_path, change):
    path = tmp_path / "applied.json"
    path.write_text(json.dumps(EXPECTED))
    assert flt.applied_record(read(path), dict(EXPECTED, **change)) is None


@pytest.mark.parametrize("text", [None, "", "{", "[1, 2]", '"text"', '{"schema": 1}'])
def test_missing_truncated_or_foreign_records_are_none_not_errors(tmp_path, text):
    path = tmp_path / "applied.json"
    if text is not None:
        path.write_text(text)
    assert flt.applied_record(read(path), EXPECTED) is None


def test_a_record_that_is_not_text_is_none(tmp_path):
    path = tmp_path / "applied.json"
    path.write_bytes(b"\xff\xfe{}")
    assert flt.applied_record(read(path), EXPECTED) is None


def test_bad_arguments_name_the_filter():
    with pytest.raises(AnsibleFilterError, match="applied_record: the input must be one record of host_state's paths"):
        flt.applied_record("x", EXPECTED)
    with pytest.raises(AnsibleFilterError, match="applied_record: expected must be a dictionary"):
        flt.applied_record({"exists": False}, [])
