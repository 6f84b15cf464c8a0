# -*- coding: utf-8 -*-
"""Runs tests/hostile/hostile_inputs.py (the hostile-input table of issues 16 and 31) and holds its figures: every
malformed input tried on a module, a controller action, a playbook's checks or a role's checks is rejected before
any change with its parameter named, every valid but harmful setting is rejected or warned about naming it, but for
the known defects listed in KNOWN (each says why it is still there); none ends in an uncaught exception; every
injected fault is survived.

The script itself documents each case and its test doubles (a recording command runner, the KernelRefusals read
double, a HostVars double for the controller actions, a recorder of Ansible's warnings). It runs in a process of
its own: it installs Ansible's collection loader to template the roles' own checks, which this test session must
not inherit. Its counts (tried / rejected naming the variable / warned / accepted / exceptions, per target and in
all) are printed here too (``pytest -s``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hostile", "hostile_inputs.py")
OUTCOMES = ("rejected", "warned", "accepted", "exceptions")

# (target, parameter) of the inputs not yet handled as their kind asks; a case fixed leaves this list (and the test
# then fails until it is taken out here).
KNOWN = sorted([
    # (none: a netdev the host's facts do not have as a RoCE port is refused by the role's filter, on the facts the
    # role reads, with the resolver roce_qos runs on the host: common/qos_ports.py)
])
ROWS = ["action fabric_report", "action k8s_manifests", "action node_pools", "action validation_plan",
        "action validation_results",
        "module gpudirect", "module host_state", "module perftest", "module rdma_device_facts", "module rdma_link",
        "module roce_qos", "module sriov_vfs",
        "playbook check_pod.yml", "playbook site.yml",
        "role gpudirect", "role host_tools", "role job_env", "role k8s_rdma_stack", "role lossless_ethernet",
        "role mofed", "role rdma_metrics", "role rdma_validate", "role soft_roce", "role sriov"]


def handled(detail):
    """A malformed input rejected naming its parameter; a harmful one rejected or warned about naming it."""
    _target, _param, outcome, named, _msg, kind = detail
    return named and outcome in (("rejected", "warned") if kind == "harmful" else ("rejected",))


def test_the_table_has_only_the_known_defects_no_exception_and_no_lost_fault():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.run([sys.executable, SCRIPT, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = json.loads(proc.stdout)
    rows, faults, details = table["malformed"], table["faults"], table["details"]
    assert sorted(rows) == ROWS
    total = dict.fromkeys(("tried",) + OUTCOMES, 0)
    for target, row in rows.items():
        assert row["exceptions"] == 0, (target, row, [d for d in details if d[2] == "exceptions"])
        assert row["tried"] > 0 and row["tried"] == sum(row[k] for k in OUTCOMES), (target, row)
        for key in total:
            total[key] += row[key]
    print("hostile inputs: tried %(tried)d, rejected naming the variable %(rejected)d, warned %(warned)d, "
          "accepted %(accepted)d, exceptions %(exceptions)d" % total)
    assert sorted((d[0], d[1]) for d in details if not handled(d)) == KNOWN, [d for d in details if not handled(d)]
    assert total["tried"] == len(details) >= 400
    assert sum(1 for d in details if d[5] == "harmful") >= 12
    assert len(faults) >= 20 and [f for f in faults if not f[1]] == []
