# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters of the rdma_validate workload stage: workload_plan, workload_allreduce_result,
workload_perftest_result, workload_nccl_result.

Thin wrappers over plugins/plugin_utils/workload.py; documentation lives beside this file in <filter name>.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.module_utils.common.perftest import PerftestError
from ansible_collections.rdma.fabric.plugins.plugin_utils import workload as wl


def workload_plan(endpoints, hosts, envs, var_names=None, **kwargs):
    """The workload runs (mpirun argv, ucx_perftest runs, nccl-tests argv) for the hosts; an error names the option,
    and the variable it came from when ``var_names`` (option -> variable) says."""
    try:
        return wl.workload_plan(endpoints, hosts, envs, **kwargs)
    except (wl.WorkloadError, PerftestError, TypeError) as e:
        text = str(e)
        option = text.split(":", 1)[0]
        if option in (var_names or {}):
            text = "%s (%s)%s" % (var_names[option], option, text[len(option):])
        raise AnsibleFilterError("workload_plan: %s" % text)


def workload_allreduce_result(plan, run, before=None, after=None, check_mode=False):
    """The mpi_allreduce result entry."""
    if not isinstance(plan, dict) or not isinstance(plan.get("hosts"), list):
        raise AnsibleFilterError("workload_allreduce_result: the input must be a plan from workload_plan")
    return wl.allreduce_result(plan, run, before=before, after=after, check_mode=check_mode)


def workload_perftest_result(run, server_start=None, client=None, server=None, check_mode=False):
    """One ucx_perftest result entry."""
    if not isinstance(run, dict) or "client_argv" not in run:
        raise AnsibleFilterError("workload_perftest_result: the input must be a perftests entry of workload_plan")
    return wl.perftest_result(run, server_start=server_start, client=client, server=server, check_mode=check_mode)


def workload_nccl_result(plan, run, check_mode=False):
    """The nccl_allreduce result entry."""
    if not isinstance(plan, dict) or not isinstance(plan.get("hosts"), list):
        raise AnsibleFilterError("workload_nccl_result: the input must be a plan from workload_plan")
    return wl.nccl_result(plan, run, check_mode=check_mode)


class FilterModule(object):
    def filters(self):
        return {
            "workload_plan": workload_plan,
            "workload_allreduce_result": workload_allreduce_result,
            "workload_perftest_result": workload_perftest_result,
            "workload_nccl_result": workload_nccl_result,
        }
