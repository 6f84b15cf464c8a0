# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters for fabric validation: perftest_parse, validate_endpoint, validate_plan,
validate_result, validate_summary,
validate_wave_sides.

Thin wrappers over plugins/module_utils/common/perftest.py and plugins/plugin_utils/fabric_validate.py;
documentation lives beside this file in <filter name>.yml.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.module_utils.common import perftest as pt


def perftest_parse(text, test="ib_write_bw", min_bandwidth_gbps=None, max_latency_us=None, count=None, rc=0):
    """Parse perftest/rping output text; adds ``passed`` and ``message``."""
    if isinstance(text, dict):
        rc = text.get("rc", rc)
        text = "%s\n%s" % (text.get("stdout") or "", text.get("stderr") or "")
    try:
        parsed = pt.parse(test, text if text is not None else "")
    except pt.PerftestError as e:
        raise AnsibleFilterError("perftest_parse: %s" % e)
    passed, message = pt.evaluate(test, "client", parsed, rc, min_bandwidth_gbps=min_bandwidth_gbps,
                                  max_latency_us=max_latency_us, count=count)
    parsed["passed"] = passed
    parsed["message"] = message
    return parsed


def validate_endpoint(rdma, host=None, device=None, port=None, data_ip=None):
    """The device/port/GID/IP a host tests with, and what is wrong with it."""
    return fv.select_endpoint(rdma, host=host, device=device or None,
                              port=(int(port) or None) if port not in (None, "") else None, data_ip=data_ip or None)


def validate_plan(endpoints, hosts, topology="ring", tests=None, base_port=18515, min_bw_fraction=0.5,
                  min_bw_fraction_soft=0.001, min_bw_gbps=None, max_latency_us=None, max_latency_us_soft=None,
                  lat_iterations=1000, lat_iterations_soft=100, bw_iterations=5000, bw_iterations_soft=300,
                  bw_size=65536, rping_count=10):
    """Pairs, pre-checks and the test runs for a set of hosts."""
    try:
        return fv.validation_plan(endpoints, hosts, topology=topology, tests=tests if tests is not None else fv.DEFAULT_TESTS,
                                  base_port=int(base_port), min_bw_fraction=min_bw_fraction,
                                  min_bw_fraction_soft=min_bw_fraction_soft, min_bw_gbps=min_bw_gbps,
                                  max_latency_us=max_latency_us, max_latency_us_soft=max_latency_us_soft,
                                  lat_iterations=int(lat_iterations), lat_iterations_soft=int(lat_iterations_soft),
                                  bw_iterations=int(bw_iterations), bw_iterations_soft=int(bw_iterations_soft),
                                  bw_size=int(bw_size), rping_count=int(rping_count))
    except (TypeError, ValueError) as e:
        raise AnsibleFilterError("validate_plan: %s" % e)


def validate_result(run, client=None, server_start=None, server=None, check_mode=False):
    """The validation result entries (one per test) of a run and its task results."""
    if not isinstance(run, dict) or not isinstance(run.get("tests"), list):
        raise AnsibleFilterError("validate_result: the input must be a run from validate_plan")
    return fv.run_result(run, client=client, server_start=server_start, server=server, check_mode=check_mode)


def validate_summary(results):
    """Counts of passed / failed / not-run results, overall and per test."""
    return fv.summarize(results)


def validate_wave_sides(plan, wave, host, reference_hosts=None):
    """The sides of a wave a host runs (its own, or a reference partner's by delegation)."""
    try:
        return fv.wave_sides(plan, wave, host, reference_hosts or [])
    except (KeyError, IndexError, TypeError, ValueError) as e:
        raise AnsibleFilterError("validate_wave_sides: not a wave of this plan: %s" % e)


class FilterModule(object):
    def filters(self):
        return {
            "perftest_parse": perftest_parse,
            "validate_endpoint": validate_endpoint,
            "validate_plan": validate_plan,
            "validate_result": validate_result,
            "validate_summary": validate_summary,
            "validate_wave_sides": validate_wave_sides,
        }
