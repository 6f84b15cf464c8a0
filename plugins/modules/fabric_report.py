#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: fabric_report
short_description: Write the RDMA fabric report (JSON, Markdown, self-contained HTML) on the controller
version_added: 0.1.0
description:
  - Builds the fleet report from per-host RDMA facts (M(rdma.fabric.rdma_device_facts)), GPUDirect facts
    (M(rdma.fabric.gpudirect)), QoS state and the validation results of the C(rdma.fabric.rdma_validate) role,
    and writes C(fabric-report.json), C(fabric-report.md) and C(fabric-report.html) into O(dest).
  - An action plugin that runs on the controller (the files are written where C(ansible-playbook) runs). With
    O(hosts) a list of inventory hosts it reads each host's facts and registered results from hostvars itself,
    once per host, and groups the hosts into node pools (M(rdma.fabric.node_pools)); nothing per host runs.
  - The JSON has a top-level C(hosts) dictionary keyed by host, a C(validation) list (one entry per test per host
    pair) and C(pools). Every host shows its devices, ports, link state, rate, RoCE v2 GID index, QoS state,
    GPUDirect readiness with reasons and the GPU-NIC topology matrix; unreachable hosts and other problems are marked.
  - "The HTML is one file with inline CSS and SVG, no scripts and no external resources. Up to 40 hosts it shows
    every host in full; above, it summarises: counts, every host in one table (failing hosts first), node pools,
    the host-pair heatmaps, the failed tests, and details only for the hosts with problems, collapsed.
    The Markdown does the same without collapsing; the JSON always holds everything."
  - "The HTML draws the host-pair matrix of the tests (passed, failed, not run) and heatmaps of the bandwidth (Gb/s)
    and latency (us) measured per host pair, each with its colour scale and a tooltip per cell; above about 120 hosts
    consecutive hosts share a row and column and a cell shows its worst pair. With the results of the
    C(rdma.fabric.rdma_validate) workload stage it adds a Workload section: allreduce bus bandwidth against message
    size (MPI, and NCCL where it ran), the figures per message size and those of C(ucx_perftest) (the Markdown has
    them as tables). Each GPU host's GPU-NIC topology matrix is drawn coloured like C(nvidia-smi topo -m)."
  - The report is built in one pass (validation entries indexed by host once). Files are written atomically, only
    when their content differs. The task returns a summary, never the report itself.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: full
    details: The diff shows the JSON report before and after.
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  dest:
    description: Folder to write the reports into; created (mode C(0755)) when missing.
    type: path
    required: true
  hosts:
    description:
      - Either a list of inventory host names, whose input is read from their hostvars (C(ansible_facts.rdma),
        C(ansible_facts.gpudirect), and the results report.yml registers, C(rdma_report_ping) and C(rdma_report_qos);
        see O(live_hosts) and O(reads)),
      - or the per-host input as a dictionary keyed by host. Each value may hold C(reachable) (bool, default true),
        C(failed_earlier) (bool, default false; a task failed on the host earlier in the run, so its later stages
        did not run, and the report marks it C(failed)),
        C(message) (why a host is unreachable or anything else worth saying), C(facts_source) (C(live) or C(cache)),
        C(rdma) (the C(ansible_facts.rdma) dictionary), C(gpudirect) (the C(ansible_facts.gpudirect) dictionary) and
        C(qos) (a dictionary keyed by netdev of QoS settings, each optionally with C(problems), a list of sentences).
    type: raw
    required: true
  live_hosts:
    description:
      - With O(hosts) a list, the hosts the collecting play ran on. The others dropped out earlier in the run; they are
        reported from O(reads) (C(failed)) or as C(unreachable). Default, every host of O(hosts).
    type: list
    elements: str
  reads:
    description:
      - With O(hosts) a list, the registered loop results (C(item) = host) of M(rdma.fabric.rdma_device_facts) run from
        the controller on the hosts that dropped out earlier.
    type: list
    elements: dict
    default: []
  validation:
    description:
      - Validation results, one dictionary per test per pair, as the C(rdma.fabric.rdma_validate) role returns them.
      - When omitted with O(hosts) a list, the C(rdma_validate_results) of the first of those hosts that has them, else
        the C(validation) list of O(validation_file) when it exists, else none.
    type: list
    elements: dict
  validation_file:
    description: A C(validation.json) written by the C(rdma.fabric.rdma_validate) role, read when O(validation) is omitted.
    type: path
  rollout:
    description:
      - The health gates of this run's staged rollout (site.yml's C(rdma_fabric_serial); the C(gates) of its
        C(rollout.json)), shown as a table with each batch's hosts, the host it was tested against, the verdict and
        why. A failed gate makes the report's overall verdict PROBLEMS.
    type: list
    elements: dict
  plan_file:
    description:
      - A C(fabric-plan.json) written by the C(rdma.fabric.fabric_plan) callback (C(playbooks/plan.yml), a check-mode
        run of site.yml), optional. When given and readable, the report carries it as its "Planned changes", what the
        run was planned to do beside what it did. The JSON has it under the key C(plan); the Markdown and the HTML show
        per host and stage what would change and the hosts the plan would drain, reboot or restart the driver stack of.
      - A plan file that is missing, not JSON or not a fabric plan gives a warning naming it and why, and the report
        without that section; the task does not fail.
      - C(playbooks/report.yml) passes site.yml's C(rdma_fabric_drain_plan) when it is set.
    type: path
  pools:
    description: With O(hosts) a list, group the hosts into node pools and show them.
    type: bool
    default: true
  formats:
    description: Which files to write.
    type: list
    elements: str
    choices: [json, md, html]
    default: [json, md, html]
  basename:
    description: File name without extension.
    type: str
    default: fabric-report
  title:
    description: Title of the report.
    type: str
    default: RDMA fabric report
  generated_at:
    description: Time stamp written into the report; the current UTC time (ISO 8601) when omitted.
    type: str
  mode:
    description: File mode of the written reports.
    type: raw
    default: "0644"
notes:
  - The report is a controller-side artifact. Its content includes measurements that differ between runs, so
    C(changed) is true whenever a figure moved; playbooks that count changes on managed hosts mark the task
    C(changed_when=false).
seealso:
  - module: rdma.fabric.rdma_device_facts
  - module: rdma.fabric.gpudirect
  - module: rdma.fabric.perftest
  - module: rdma.fabric.node_pools
"""

EXAMPLES = r"""
- name: Write the fabric report from the hosts' facts (read from hostvars on the controller)
  rdma.fabric.fabric_report:
    dest: "{{ playbook_dir }}/../reports"
    hosts: "{{ groups['rdma_nodes'] }}"
    validation_file: "{{ playbook_dir }}/../reports/validation.json"
  register: report
  run_once: true

- name: Print the summary
  ansible.builtin.debug:
    msg: "{{ report.summary_lines }}"
  run_once: true
"""

RETURN = r"""
paths:
  description: Paths of the report files by format.
  returned: always
  type: dict
  sample: {json: /srv/reports/fabric-report.json, md: /srv/reports/fabric-report.md, html: /srv/reports/fabric-report.html}
changed_files:
  description: Formats whose file was (or in check mode would be) written.
  returned: always
  type: list
  elements: str
  sample: [json, md, html]
summary:
  description:
    - Counts over the fleet. C(hosts), C(reachable), C(unreachable) (host names), C(failed) (names of the hosts that
      failed earlier in the run), C(hosts_with_problems) (host names),
      C(devices), C(ports), C(ports_active), C(gpu_hosts), C(gpudirect_ready), C(pools), C(validation) (C(total),
      C(passed), C(failed), C(not_run)) and C(ok) (no problem and no failed test).
  returned: always
  type: dict
  sample: {hosts: 2, reachable: 2, unreachable: [], failed: [], ports: 2, ports_active: 2, ok: true}
summary_lines:
  description:
    - A one-screen text summary (report path, hosts, node pools, test results, the first problems); every host and
      test up to 40 hosts, else the failing ones.
  returned: always
  type: list
  elements: str
problems:
  description: The first 100 problems, as sentences prefixed with the host name (all of them are in the JSON).
  returned: always
  type: list
  elements: str
  sample: ["lab2: rxe0 port 1 (eth1) is DOWN, not ACTIVE"]
problem_count:
  description: How many problems the report lists.
  returned: always
  type: int
"""

from ansible.module_utils.basic import AnsibleModule

FORMATS = ["json", "md", "html"]
ARGUMENT_SPEC = dict(
    dest=dict(type="path", required=True),
    hosts=dict(type="raw", required=True),
    live_hosts=dict(type="list", elements="str"),
    reads=dict(type="list", elements="dict", default=[]),
    validation=dict(type="list", elements="dict"),
    validation_file=dict(type="path"),
    rollout=dict(type="list", elements="dict"),
    plan_file=dict(type="path"),
    pools=dict(type="bool", default=True),
    formats=dict(type="list", elements="str", choices=FORMATS, default=FORMATS),
    basename=dict(type="str", default="fabric-report"),
    title=dict(type="str", default="RDMA fabric report"),
    generated_at=dict(type="str"),
    mode=dict(type="raw", default="0644"),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.fabric_report runs on the controller (an action plugin); it cannot run as a module")


if __name__ == "__main__":
    main()
