# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Measure what one Ansible module call costs on a lab VM, with and without the lab's zip bytecode cache.

    python3 benchmarks/module_call.py [--inventory .lab/NAME/inventory.yml] [--calls 12] [--rounds 2]

Boots a one-VM lab of its own (RDMA_LAB_NAME=bench-module-call, unless
--inventory names a running one). Each round runs a playbook of --calls
`ansible.builtin.command: true` tasks and --calls `rdma.fabric.rdma_device_facts`
tasks on lab1 twice: once with the guest's rdma_lab_zip_pyc hook (lab image:
tools/lab/guest/usr/local/lib/python3.11/dist-packages) switched off, once with
it on and its cache warm. Prints the mean seconds per task of each kind, as
the profile of the playbook run sees them (controller, SSH and guest
together), and, for reference, a raw `python3 -c pass` over the same
connection. Stops the lab it booted.

A measurement, not a pass/fail test: the exit status is 0 when the runs
completed, whatever the figures. TCG emulation and a shared machine make the
absolute times vary; compare the two columns of the same round.
"""

from __future__ import absolute_import, division, print_function

import argparse
import json
import os
import subprocess
import sys
import tempfile

# The playbook runner and the json callback's durations are converge.py's.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from converge import LAB, ROOT, playbook, seconds  # noqa: E402  pylint: disable=wrong-import-position

HOOK = "/usr/local/lib/python3.11/dist-packages/rdma_lab_zip_pyc.pth"
KINDS = ("command", "rdma_device_facts", "raw python3")


def playbook_text(calls, hook_on):
    """One play: switch the hook, warm it, then the timed tasks (named by kind)."""
    switch = ("test -e {0} || mv {0}.off {0}" if hook_on else "test -e {0}.off || mv {0} {0}.off").format(HOOK)
    tasks = [
        {"name": "switch the hook %s" % ("on" if hook_on else "off"), "ansible.builtin.raw": switch},
        {"name": "warm-up command", "ansible.builtin.command": "true", "changed_when": False},
        {"name": "warm-up rdma_device_facts", "rdma.fabric.rdma_device_facts": {}},
    ]
    for i in range(calls):
        tasks.append({"name": "command %d" % i, "ansible.builtin.command": "true", "changed_when": False})
    for i in range(calls):
        tasks.append({"name": "rdma_device_facts %d" % i, "rdma.fabric.rdma_device_facts": {}})
    for i in range(calls):
        tasks.append({"name": "raw python3 %d" % i, "ansible.builtin.raw": "python3 -c pass", "changed_when": False})
    return json.dumps([{"hosts": "lab1", "gather_facts": False, "tasks": tasks}])


def run_round(inventory, calls, hook_on):
    """Mean seconds per task of each kind, from the ansible.posix.json callback's task durations."""
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        f.write(playbook_text(calls, hook_on))
        path = f.name
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, "build", "collections"))
    try:
        _wall, rc, data, output = playbook(inventory, path, env, json_out=True)
    finally:
        os.unlink(path)
    if rc != 0 or data is None:
        sys.exit("playbook failed (rc %d):\n%s" % (rc, output[-6000:]))
    per_kind = dict((kind, []) for kind in KINDS)
    for task in data["plays"][0]["tasks"]:
        kind = task["task"]["name"].rsplit(" ", 1)[0]
        if kind in per_kind:
            per_kind[kind].append(seconds(task["task"]["duration"]))
    return dict((kind, sum(v) / len(v)) for kind, v in per_kind.items() if v)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inventory", help="inventory of a running lab (default: boot one)")
    parser.add_argument("--calls", type=int, default=12, help="timed tasks of each kind per run")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()

    lab_env = dict(os.environ, RDMA_LAB_NAME="bench-module-call", RDMA_LAB_VMS="1")
    inventory = args.inventory
    if not inventory:
        subprocess.run([LAB, "up", "--vms", "1"], env=lab_env, check=True)
        inventory = os.path.join(ROOT, ".lab", "bench-module-call", "inventory.yml")
    try:
        print("%-6s %-6s %s" % ("round", "hook", "  ".join("%-18s" % k for k in KINDS)))
        for rnd in range(1, args.rounds + 1):
            for hook_on in (False, True):
                means = run_round(inventory, args.calls, hook_on)
                print("%-6d %-6s %s" % (rnd, "on" if hook_on else "off",
                                        "  ".join("%-18s" % ("%.2f s" % means[k]) for k in KINDS)))
    finally:
        if not args.inventory:
            subprocess.run([LAB, "down"], env=lab_env, check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
