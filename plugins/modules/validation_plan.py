#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: validation_plan
short_description: Plan the fabric validation of a whole fleet in one controller task
version_added: 0.2.0
description:
  - Reads, once per host and on the controller, each host's RDMA facts (C(ansible_facts.rdma)) and its
    C(rdma_validate_device), C(rdma_validate_port), C(rdma_validate_data_ip) and C(rdma_validate_switch) host
    variables, picks each host's test endpoint (P(rdma.fabric.validate_endpoint#filter)), pairs the hosts, pre-checks
    every pair and returns the test runs grouped into waves. Used by the C(rdma.fabric.rdma_validate) role.
  - "Pairs grow linearly with the hosts: a ring in O(hosts) order, each host with its next O(neighbours) hosts (two
    hosts make one pair), and when hosts have C(rdma_validate_switch) (the leaf switch, or the rail switch of a
    rail-optimized fabric, that the tested port is cabled to) the ring goes switch by switch and one more pair per
    switch joins its middle host to the middle host of the next switch, so every switch's uplinks carry a test.
    O(topology=all_pairs) tests every pair (N*(N-1)/2)."
  - "Waves: no host is in two runs of a wave and a wave has at most O(concurrency) runs; the role runs one wave at a
    time, the runs of a wave at once (also bounded by Ansible's forks). Every host is in at least one pair."
  - With O(check_only) it only checks the options and every host's variables (the role does this before its first
    change); errors name the variable (with O(var_prefix)) or the host variable and the allowed values.
  - An action plugin that runs on the controller only; it changes nothing.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  hosts:
    description: The hosts to validate, in ring order.
    type: list
    elements: str
    required: true
  live_hosts:
    description: The hosts that still take part; the others failed or dropped out earlier and fail their pairs' pre-check.
    type: list
    elements: str
  reachable_hosts:
    description:
      - The hosts this run can reach. Hosts of O(hosts) outside them are left out of the plan (listed in its
        C(left_out)) - never paired, pre-checked or failed, as if not named.
      - Default, the run's C(--limit) (C(ansible_limit)) resolved against the inventory as C(ansible-playbook)
        resolves it (patterns, groups, C(!) and C(&), C(@file)); every inventory host without a limit. So a slice of
        a sliced job (AWX job slicing, or runs with C(--limit)) never plans a pair with a host of another slice,
        even when O(hosts) names it (C(rdma_validate_hosts), C(rdma_validate_reference_hosts)); the pairs across
        slices are the fleet job's.
    type: list
    elements: str
  check_only:
    description: Only check the options and the hosts' variables.
    type: bool
    default: false
  var_prefix:
    description: Prefix of the option names in error messages (the role passes C(rdma_validate_)).
    type: str
    default: ""
  topology:
    description: C(ring) (linear) or C(all_pairs).
    type: str
    choices: [ring, all_pairs]
    default: ring
  neighbours:
    description: With C(ring), how many following hosts each host is paired with.
    type: int
    default: 1
  concurrency:
    description: At most this many runs (pairs) per wave; 0 means no limit (a ring then takes two or three waves).
    type: int
    default: 32
  tests:
    description: Tests per pair, in order.
    type: list
    elements: str
    default: [rping, ib_write_bw, ib_send_lat]
  base_port:
    description: TCP port of the first test; every test takes the next one.
    type: int
    default: 18515
  min_bw_fraction:
    description: Minimum bandwidth as a fraction (0-1) of the slower port's rate, hardware devices.
    type: float
    default: 0.5
  min_bw_fraction_soft:
    description: The same for pairs with a soft device (rxe, siw).
    type: float
    default: 0.001
  min_bw_gbps:
    description: Absolute minimum bandwidth in Gbit/s on top of the fraction; 0 means none. Must be finite.
    type: float
    default: 0.0
  max_latency_us:
    description: Maximum median latency in microseconds for hardware pairs; 0 means no limit. Must be finite.
    type: float
    default: 0.0
  max_latency_us_soft:
    description: The same for pairs with a soft device; 0 means no limit.
    type: float
    default: 0.0
  lat_iterations:
    description: Iterations of a latency test between hardware devices.
    type: int
    default: 1000
  lat_iterations_soft:
    description: Iterations of a latency test when an end is a soft device.
    type: int
    default: 100
  bw_iterations:
    description: Iterations of a bandwidth test between hardware devices.
    type: int
    default: 5000
  bw_iterations_soft:
    description: Iterations of a bandwidth test when an end is a soft device.
    type: int
    default: 300
  bw_size:
    description: Message size in bytes of the bandwidth tests.
    type: int
    default: 65536
  rping_count:
    description: Pings of each rping test.
    type: int
    default: 10
  timeout:
    description: Seconds after which either side of a test is killed (checked here, used by the role's test tasks).
    type: int
    default: 60
  connect_retries:
    description: How often a client retries while its server is not listening yet (checked here).
    type: int
    default: 10
  results_dir:
    description: Where the role writes C(validation.json) (checked here); empty means nowhere.
    type: str
    default: ""
seealso:
  - module: rdma.fabric.validation_results
  - module: rdma.fabric.perftest
"""

EXAMPLES = r"""
- name: Plan the validation of every RDMA node (a ring, 16 pairs at a time)
  rdma.fabric.validation_plan:
    hosts: "{{ groups['rdma_nodes'] }}"
    live_hosts: "{{ ansible_play_hosts }}"
    concurrency: 16
  register: validation
  run_once: true
"""

RETURN = r"""
plan:
  description:
    - C(pairs) (server, client, problems, ok, thresholds), C(runs) (C(id), the C(server) and C(client) endpoints and
      the C(tests) to run), C(results) (a C(precheck) entry per pair and a failed entry per test of a pair that failed
      its pre-check), C(waves) (C(runs), the run indices of the wave; C(servers) and C(clients), host to run index)
      C(problems) (plan-level) and C(left_out) (hosts of O(hosts) outside O(reachable_hosts), not planned).
  returned: unless O(check_only)
  type: dict
"""

from ansible.module_utils.basic import AnsibleModule

ARGUMENT_SPEC = dict(
    hosts=dict(type="list", elements="str", required=True),
    live_hosts=dict(type="list", elements="str"),
    reachable_hosts=dict(type="list", elements="str"),
    check_only=dict(type="bool", default=False),
    var_prefix=dict(type="str", default=""),
    topology=dict(type="str", choices=["ring", "all_pairs"], default="ring"),
    neighbours=dict(type="int", default=1),
    concurrency=dict(type="int", default=32),
    tests=dict(type="list", elements="str", default=["rping", "ib_write_bw", "ib_send_lat"]),
    base_port=dict(type="int", default=18515),
    min_bw_fraction=dict(type="float", default=0.5),
    min_bw_fraction_soft=dict(type="float", default=0.001),
    min_bw_gbps=dict(type="float", default=0.0),
    max_latency_us=dict(type="float", default=0.0),
    max_latency_us_soft=dict(type="float", default=0.0),
    lat_iterations=dict(type="int", default=1000),
    lat_iterations_soft=dict(type="int", default=100),
    bw_iterations=dict(type="int", default=5000),
    bw_iterations_soft=dict(type="int", default=300),
    bw_size=dict(type="int", default=65536),
    rping_count=dict(type="int", default=10),
    timeout=dict(type="int", default=60),
    connect_retries=dict(type="int", default=10),
    results_dir=dict(type="str", default=""),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.validation_plan runs on the controller (an action plugin); it cannot run as a module")


if __name__ == "__main__":
    main()
