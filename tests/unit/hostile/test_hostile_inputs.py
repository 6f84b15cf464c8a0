# -*- coding: utf-8 -*-
"""Runs tests/hostile/hostile_inputs.py (issue 16's table) and holds its figures: every malformed input tried is
rejected before any change with its parameter named, none ends in a traceback, every injected fault is survived.

The script itself documents each case and its test doubles (a recording command runner, the KernelRefusals
read double). It runs in a process of its own: it installs Ansible's collection loader to template the roles'
own checks, which this test session must not inherit.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile", "hostile_inputs.py")


def test_the_table_has_no_accepted_input_no_traceback_and_no_lost_fault():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, SCRIPT, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = json.loads(proc.stdout)
    rows, faults = table["malformed"], table["faults"]
    assert sorted(rows) == ["module gpudirect", "module host_state", "module perftest", "module rdma_device_facts",
                            "role gpudirect", "role mofed", "role soft_roce"]
    for target, row in rows.items():
        assert row["traceback"] == 0 and row["accepted"] == 0, (target, row, [d for d in table["details"] if d[2] != "rejected"])
        assert row["rejected"] == row["tried"] > 0, (target, row)
    assert len(faults) >= 14 and [f for f in faults if not f[1]] == []
