# -*- coding: utf-8 -*-
"""The files roce_qos keeps for lossless_ethernet (keep: before, saved) hold, byte for byte, what the role wrote
with Ansible's to_nice_json before the module kept them, so a host the role set up earlier keeps its files.

The role wrote the saved settings from its resolved entry (YAML values) and the values before the first apply
from roce_qos's result as the controller received it (JSON). The module gets the entry after the JSON transport
and makes its result itself.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible.plugins.filter.core import to_nice_json

from ansible_collections.rdma.fabric.plugins.module_utils.qos import keep

# the role's default profile (defaults/main.yml) on one port, as the role resolved it (DSCP keys are numbers)
PROFILE = {"netdev": "dcbsim0", "trust": "dscp", "pfc": [3], "dscp2prio": {26: 3, 48: 6},
           "cnp": {"dscp": 48, "priority": 6}, "roce_tos": 106, "roce_mode": "v2", "backend": "auto",
           "on_unsupported": "fail", "ets": None, "ecn": None}
# DSCP keys given as text, ETS, ECN
OTHER = {"netdev": "ens1f0", "dscp2prio": {"8": 1, "26": 3, "10": 2},
         "ets": [{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "tsa": "ets", "bw": 50}],
         "ecn": {"np": [3], "rp": [3]}, "mtu": 9000, "pause": False, "prio_tc": [0, 0, 0, 3, 0, 0, 6, 0]}


def _transported(value):
    return json.loads(json.dumps(value))


def test_saved_settings_are_what_the_role_wrote():
    for entry in (PROFILE, OTHER):
        assert keep.text(_transported(entry)) == to_nice_json(entry, sort_keys=True) + "\n", entry["netdev"]


def test_values_before_are_what_the_role_wrote():
    before = {"dscp2prio": {8: [1], 26: [3], 10: [1]}, "pfc": [], "roce_tos": 0, "roce_mode": "v1", "mtu": 1500}
    # the role: {'netdev': item.key, 'before': item.value.before} | to_nice_json(sort_keys=true) on the result
    role = to_nice_json(_transported({"netdev": "ens1f0", "before": before}), sort_keys=True) + "\n"
    assert keep.text({"netdev": "ens1f0", "before": before}) == role
