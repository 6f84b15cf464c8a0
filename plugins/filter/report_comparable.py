# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: report_comparable
short_description: The fabric report without what differs between two runs over the same fabric
version_added: 0.2.0
author: rdma.fabric developers
description:
  - Takes the report data of M(rdma.fabric.fabric_report) (the content of C(fabric-report.json)) and returns a copy
    without what two runs over the same fabric in the same state give differently, so that two reports can be
    compared with C(==) - a sliced job's report against an unsliced run's, or a run against the one before.
  - Taken out, and only this - the time stamp C(generated_at); in every C(validation) entry the measured figures
    C(bandwidth_gbps), C(latency_us), C(elapsed_s) and C(sizes) (the workload stage's rows), set to null; and each
    measured figure quoted in a validation C(message) or a C(problems) sentence (the report's and each host's; a
    failed test's message is quoted there), such as V(0.052 Gb/s) or V(812.40 us), written V(<measured> Gb/s);
    and the note of how many connection attempts a client needed (V(after 2 connection attempts) in parentheses,
    when its server was slow to listen), dropped. Thresholds (V(the threshold 10.00 us)) stay.
  - Everything else is kept - the hosts, their devices, ports, GIDs, QoS and GPUDirect state, problems, node pools,
    which tests ran and passed, their thresholds, the summary.
options:
  _input:
    description: The report data, as C(fabric-report.json) holds it.
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: The sliced job's report equals the unsliced run's
  ansible.builtin.assert:
    that: >-
      (lookup('ansible.builtin.file', sliced ~ '/fabric-report.json') | from_json | rdma.fabric.report_comparable)
      == (lookup('ansible.builtin.file', whole ~ '/fabric-report.json') | from_json | rdma.fabric.report_comparable)
"""

RETURN = r"""
_value:
  description: A copy of the report data with the time stamp and the measured figures taken out.
  type: dict
"""

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils.report_model import comparable


def report_comparable(report):
    """See DOCUMENTATION."""
    if not isinstance(report, dict) or not isinstance(report.get("hosts"), dict):
        raise AnsibleFilterError("report_comparable: the input must be the report data of rdma.fabric.fabric_report "
                                 "(fabric-report.json, a dict with 'hosts'), got %s" % type(report).__name__)
    return comparable(report)


class FilterModule(object):
    def filters(self):
        return {"report_comparable": report_comparable}
