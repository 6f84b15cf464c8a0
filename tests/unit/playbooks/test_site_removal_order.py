# -*- coding: utf-8 -*-
"""site.yml takes a host back in one run: the stages that configure the RDMA ports and GPUs
(lossless_ethernet, gpudirect) are removed before the driver stack and the links under them.

Read from ansible-playbook --list-tasks on site.yml itself (its plays and include tasks in the order
they run, both on the all-at-once path and inside a staged batch); that the removal really takes
lab hosts back to their state before anything is shown in the lab (molecule/site, its removal
step in one site.yml run).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))


def _listing(tmp_path):
    inventory = tmp_path / "inventory.yml"
    inventory.write_text("all:\n  children:\n    rdma_nodes:\n      hosts:\n        lab1:\n          ansible_connection: local\n")
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_HOST_PATTERN_MISMATCH="warning", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
                           "--list-tasks", os.path.join(REPO, "playbooks", "site.yml")],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                          check=False, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    return proc.stdout


def _plays(text):
    """[(play name, [task names])] in the order ansible-playbook lists them."""
    plays = []
    for line in text.splitlines():
        m = re.match(r"\s*play #\d+ \((.*?)\): (.*?)\tTAGS", line)
        if m:
            plays.append((m.group(2), []))
            continue
        m = re.match(r"\s{6}(\S.*?)\tTAGS", line)
        if m and plays:
            plays[-1][1].append(m.group(1).strip())
    return plays


def test_removal_of_the_port_and_gpu_stages_comes_before_the_driver_stack_and_links(tmp_path):
    plays = [play[0] for play in _plays(_listing(tmp_path))]
    order = [plays.index(p) for p in (
        "Remove GPUDirect RDMA first where gpudirect_state is absent",
        "Remove lossless Ethernet first where lossless_ethernet_state is absent",
        "Install the RDMA driver stack",
        "Create Soft-RoCE links where asked",
        "Lossless Ethernet on the RoCE ports",
        "GPUDirect RDMA on the hosts with GPUs")]
    assert order == sorted(order), plays


def test_inside_a_staged_batch_the_removals_also_come_first(tmp_path):
    tasks = dict(_plays(_listing(tmp_path)))["Staged rollout, batch by batch (rdma_fabric_serial)"]
    order = [tasks.index(t) for t in (
        "Remove GPUDirect RDMA first (gpudirect_state absent)",
        "Remove lossless Ethernet first (lossless_ethernet_state absent)",
        "Apply the mofed role",
        "Apply the soft_roce role on the hosts that ask for it",
        "Apply the lossless_ethernet role",
        "Apply the gpudirect role on the hosts with GPUs")]
    assert order == sorted(order), tasks
