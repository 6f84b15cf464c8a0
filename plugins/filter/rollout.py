# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for site.yml's staged rollout: rollout_settings, rollout_batch, rollout_gate, rollout_drain.

Thin wrappers over plugins/plugin_utils/rollout.py; documentation lives beside this file in
<filter name>.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible.utils.display import Display

from ansible_collections.rdma.fabric.plugins.plugin_utils import rollout


def rollout_settings(serial, max_fail_percentage=None, hosts=None, batch_reboot=None, batch_reboot_timeout=None,
                     k8s_drain_timeout=None, allow_single_batch=None, flags=None, job=None):
    """The rollout settings and rdma_fabric_job checked (risky ones shown as warnings), and the batches."""
    try:
        result = rollout.settings(serial, max_fail_percentage, hosts or [], batch_reboot, batch_reboot_timeout,
                                  k8s_drain_timeout, allow_single_batch, flags, job)
    except rollout.RolloutError as e:
        raise AnsibleFilterError(str(e))
    for text in result["warnings"]:
        Display().warning("rdma.fabric rollout: %s" % text)
    return result


def rollout_batch(settings, batch_hosts, done_hosts=None):
    """Which batch the hosts are and the already-done host it is tested against."""
    return rollout.batch(settings, batch_hosts, done_hosts or [])


def rollout_drain(plan_path, hosts=None):
    """Which hosts a batch's drain covers, from a check-mode plan (None: all of them)."""
    try:
        return rollout.drain_decisions(plan_path, hosts or [])
    except rollout.RolloutError as e:
        raise AnsibleFilterError(str(e))


def rollout_gate(batch, results, live_hosts=None):
    """A batch's health-gate verdict per host from its validation results."""
    return rollout.gate(batch, results, live_hosts)


class FilterModule(object):
    def filters(self):
        return {
            "rollout_settings": rollout_settings,
            "rollout_batch": rollout_batch,
            "rollout_gate": rollout_gate,
            "rollout_drain": rollout_drain,
        }
