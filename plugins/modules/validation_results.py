#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: validation_results
short_description: Collect the results of a fabric validation and write validation.json, in one controller task
version_added: 0.2.0
description:
  - Turns a plan of M(rdma.fabric.validation_plan) and what each host recorded of its runs (the host variable
    O(record_var), read once per host of the plan) into the validation results, one entry per test per pair, the
    pre-checks first, and their summary. In check mode the tests are recorded as not run.
  - With O(dest) it writes C(validation.json) there (C({summary, validation}), what C(playbooks/report.yml) reads),
    atomically. The file is a record of measurements, so the task never reports a change.
  - Used by the C(rdma.fabric.rdma_validate) role. An action plugin that runs on the controller.
author:
  - rdma.fabric developers (@rdma-fabric)
attributes:
  check_mode:
    description: Can run in check mode and return changed status prediction without modifying target.
    support: full
    details: The tests are recorded as not run and validation.json is not written.
  diff_mode:
    description: Will return details on what has changed (or possibly needs changing in check_mode), when in diff mode.
    support: none
  action:
    description: Indicates this has a corresponding action plugin so some parts of the options can be executed on the controller.
    support: full
options:
  plan:
    description: The C(plan) returned by M(rdma.fabric.validation_plan).
    type: dict
    required: true
  record_var:
    description: The host variable holding each host's record of its runs (keyed by run id).
    type: str
    default: __rdma_validate_done
  dest:
    description: Folder to write C(validation.json) into (created, mode C(0755)); empty writes nothing.
    type: path
    default: ""
  extra:
    description:
      - Results of a later stage, already judged (the workload stage of C(rdma.fabric.rdma_validate), whose
        entries are C(mpi_allreduce), C(ucx_tag_lat), C(ucx_tag_bw) and C(nccl_allreduce)), kept after the pair tests
        in the file of O(dest), in RV(results) and in RV(summary).
      - Each a dict with a C(test) name and C(passed) (true, false or null for not run).
    type: list
    elements: dict
    default: []
seealso:
  - module: rdma.fabric.validation_plan
"""

EXAMPLES = r"""
- name: Collect the results and write validation.json
  rdma.fabric.validation_results:
    plan: "{{ planned.plan }}"
    dest: /srv/reports
  register: validation
  run_once: true
"""

RETURN = r"""
results:
  description:
    - One entry per test per pair, then the O(extra) entries (C(test), C(hosts), C(devices), C(bandwidth_gbps),
      C(latency_us), C(passed), C(message), ...).
  returned: always
  type: list
  elements: dict
summary:
  description: C(total), C(passed), C(failed), C(not_run), C(by_test) and C(ok) (nothing failed and something ran).
  returned: always
  type: dict
path:
  description: The file written (or, in check mode, that would be), or null without O(dest).
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule

ARGUMENT_SPEC = dict(
    plan=dict(type="dict", required=True),
    record_var=dict(type="str", default="__rdma_validate_done"),
    dest=dict(type="path", default=""),
    extra=dict(type="list", elements="dict", default=[]),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    module.fail_json(msg="rdma.fabric.validation_results runs on the controller (an action plugin); it cannot run as a module")


if __name__ == "__main__":
    main()
