# -*- coding: utf-8 -*-
"""Runs tests/hostile/hostile_inputs.py (issue 16's table) and holds its figures: every malformed input tried is
rejected before any change with its parameter named, none ends in a traceback, every injected fault is survived.

The script itself documents each case and its test doubles (a recording command runner, the KernelRefusals
read double); this test only keeps the table from regressing.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import importlib.util
import io
import os

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile", "hostile_inputs.py")


def test_the_table_has_no_accepted_input_no_traceback_and_no_lost_fault():
    spec = importlib.util.spec_from_file_location("hostile_inputs", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    with contextlib.redirect_stdout(io.StringIO()):
        rows, faults = script.main(["--json"])
    assert sorted(rows) == ["module gpudirect", "module host_state", "module perftest", "module rdma_device_facts",
                            "role gpudirect", "role mofed", "role soft_roce"]
    for target, row in rows.items():
        assert row["traceback"] == 0 and row["accepted"] == 0, (target, row)
        assert row["rejected"] == row["tried"] > 0, (target, row)
    assert len(faults) >= 14 and [f for f in faults if not f[1]] == []
