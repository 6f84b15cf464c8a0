# -*- coding: utf-8 -*-
"""Unit tests for the rdma.fabric.perftest module (main(): validation, check mode, retries, verdicts).

``LabReplay`` is a test double for AnsibleModule.run_command: a real test needs
two RDMA hosts, so it replays the REAL outputs captured on the project's VM lab
(tests/unit/fixtures/perftest/README.md) and records the command lines. The
module's real run on Soft-RoCE is exercised by the rdma_validate role in the
lab (molecule/site).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.module_utils import basic

from ansible_collections.rdma.fabric.plugins.module_utils.common import perftest as pt
from ansible_collections.rdma.fabric.plugins.modules import perftest as module_under_test

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "perftest")


def capture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


class LabReplay(object):
    """Test double for run_command (see the module docstring): replies in order."""

    def __init__(self, replies):
        self.replies = list(replies)
        self.commands = []

    def run_command(self, argv):
        self.commands.append(list(argv))
        if not self.replies:
            raise AssertionError("unexpected command %r" % (argv,))
        return self.replies.pop(0)


@pytest.fixture(name="run")
def fixture_run(monkeypatch, run_main):
    missing = set()
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: None if name in missing else "/usr/bin/" + name)
    monkeypatch.setattr(pt.time, "sleep", lambda seconds: None)

    def run(replies=(), **args):
        replay = LabReplay(replies)
        monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: replay.run_command(argv))
        return run_main(module_under_test.main, args)[1], replay

    run.missing = missing
    return run


CLIENT = dict(test="ib_write_bw", mode="client", device="rxe0", gid_index=1, server_ip="192.0.2.11", duration=5,
              size=65536)


def test_client_parses_real_output_and_passes(run):
    result, replay = run([(0, capture("ib_write_bw_client_gbits.txt"), "")], min_bandwidth_gbps=0.01, **CLIENT)
    assert not result.get("failed") and result["changed"] is False
    assert result["passed"] is True
    assert result["message"] == "ib_write_bw client ok: 0.048 Gb/s"
    assert result["bandwidth_gbps"] == 0.0481 and result["info"]["gid_index"] == 1 and result["unit"] == "Gb/sec"
    assert result["cmd"] == ["ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-p", "18515", "-F", "--report_gbits",
                             "-s", "65536", "-D", "5", "192.0.2.11"]
    assert replay.commands == [["/usr/bin/timeout", "--kill-after=5", "60", "/usr/bin/ib_write_bw", "-d", "rxe0",
                                "-i", "1", "-x", "1", "-p", "18515", "-F", "--report_gbits", "-s", "65536",
                                "-D", "5", "192.0.2.11"]]
    assert len(result["results"]) == 1 and result["results"][0]["bandwidth_gbps"] == 0.0481


def test_client_retries_until_the_server_listens(run):
    noserver = capture("ib_write_bw_noserver.txt")
    result, replay = run([(1, "", noserver), (0, capture("ib_write_bw_client_gbits.txt"), "")], **CLIENT)
    assert result["passed"] is True and result["attempts"] == 2
    assert result["message"] == "ib_write_bw client ok: 0.048 Gb/s (after 2 connection attempts)"
    assert len(replay.commands) == 2


def test_below_threshold_fails_or_is_collected(run):
    result, dummy = run([(0, capture("ib_write_bw_client_gbits.txt"), "")], min_bandwidth_gbps=1.25, **CLIENT)
    assert result["failed"] is True
    assert result["msg"] == "ib_write_bw client failed: bandwidth 0.048 Gb/s below the threshold 1.250 Gb/s"
    result, dummy = run([(0, capture("ib_write_bw_client_gbits.txt"), "")], min_bandwidth_gbps=1.25,
                        assert_passed=False, **CLIENT)
    assert not result.get("failed") and result["passed"] is False and result["bandwidth_gbps"] == 0.0481


def test_several_tests_in_one_run(run):
    replies = [(0, capture("rping_client.txt"), ""), (0, capture("ib_write_bw_client_gbits.txt"), ""),
               (0, capture("ib_send_lat_client.txt"), "")]
    result, replay = run(replies, mode="client", device="rxe0", gid_index=1, server_ip="192.0.2.11", tests=[
        {"test": "rping", "count": 10}, {"test": "ib_write_bw", "duration": 5, "min_bandwidth_gbps": 0.0025},
        {"test": "ib_send_lat", "iterations": 100}])
    assert result["passed"] is True and result["test"] is None and result["bandwidth_gbps"] is None
    assert [(r["test"], r["tcp_port"], r["passed"]) for r in result["results"]] == [
        ("rping", 18515, True), ("ib_write_bw", 18516, True), ("ib_send_lat", 18517, True)]
    assert result["results"][0]["pings"] == 10
    assert result["results"][2]["latency_us"] == 27080.55
    assert [c[3:] for c in replay.commands] == [
        ["/usr/bin/rping", "-c", "-a", "192.0.2.11", "-p", "18515", "-C", "10", "-v"],
        ["/usr/bin/ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-p", "18516", "-F", "--report_gbits",
         "-D", "5", "192.0.2.11"],
        ["/usr/bin/ib_send_lat", "-d", "rxe0", "-i", "1", "-x", "1", "-p", "18517", "-F", "-n", "100", "192.0.2.11"]]
    assert result["message"] == ("rping client ok: 10 pings; ib_write_bw client ok: 0.048 Gb/s; "
                                 "ib_send_lat client ok: 27080.55 us")


def test_a_collected_failure_is_not_a_failed_task(run):
    """Ansible treats a result with a non-zero or null rc and no "failed" key as failed: say failed=False."""
    result, dummy = run([(1, "", capture("ib_write_bw_nodevice.txt"))], assert_passed=False, **CLIENT)
    assert result["rc"] == 1 and result["passed"] is False and result["failed"] is False
    result, dummy = run([(0, capture("rping_client.txt"), "")], tests=[{"test": "rping"}], mode="client",
                        server_ip="192.0.2.11")
    assert result["rc"] is None and result["passed"] is True and result["failed"] is False


def test_thresholds_judge_the_client_only(run):
    result, dummy = run([(0, capture("ib_write_bw_server_gbits.txt"), "")], test="ib_write_bw", mode="server",
                        device="rxe0", gid_index=1, min_bandwidth_gbps=1.25)
    assert result["passed"] is True and result["bandwidth_gbps"] == 0.0481
    assert result["message"] == "ib_write_bw server ok: 0.048 Gb/s"


def test_server_side_timeout_is_reported(run):
    result, replay = run([(124, capture("ib_write_bw_server_gbits.txt").split("---")[0], "")], test="ib_write_bw",
                         mode="server", device="rxe0", gid_index=1, duration=5, timeout=30, assert_passed=False)
    assert result["timed_out"] is True and result["passed"] is False
    assert result["message"].startswith("ib_write_bw server failed: timed out after 30s")
    assert replay.commands[0][:3] == ["/usr/bin/timeout", "--kill-after=5", "30"]


def test_check_mode_runs_nothing(run):
    result, replay = run([], _ansible_check_mode=True, **CLIENT)
    assert replay.commands == []
    assert result["changed"] is False and result["passed"] is None
    assert result["message"] == "check mode: ib_write_bw client not run"
    assert result["cmd"][-1] == "192.0.2.11"


def test_missing_tool_names_the_package(run):
    run.missing.add("rping")
    result, replay = run([], test="rping", server_ip="192.0.2.11")
    assert result["failed"] is True and replay.commands == []
    assert result["msg"] == "rping not found on this host: install rdmacm-utils (the rdma.fabric.mofed role does)"


@pytest.mark.parametrize("args,message", [
    (dict(CLIENT, device="rxe0 -x 9"), "device: 'rxe0 -x 9' is not a valid RDMA device name"),
    (dict(CLIENT, server_ip="$(reboot)"), "server_ip: '$(reboot)' is not an IPv4 or IPv6 address"),
    (dict(CLIENT, device=None), "device: required for ib_write_bw"),
    (dict(CLIENT, timeout=0), "timeout: 0 is out of range; allowed: 1-86400 seconds"),
    (dict(CLIENT, min_bandwidth_gbps=-1.0), "min_bandwidth_gbps: -1.0 is not allowed; allowed: a finite number, 0 or more"),
    # NaN made every comparison false: the threshold check was silently off.
    (dict(CLIENT, min_bandwidth_gbps="nan"), "min_bandwidth_gbps: nan is not allowed; allowed: a finite number, 0 or more"),
    (dict(CLIENT, max_latency_us="NaN"), "max_latency_us: nan is not allowed"),
    (dict(CLIENT, min_bandwidth_gbps="inf"), "min_bandwidth_gbps: inf is not allowed"),
    (dict([(k, v) for k, v in CLIENT.items() if k != "test"], tests=[{"test": "ib_write_bw", "min_bandwidth_gbps": float("nan")}]),
     "min_bandwidth_gbps: nan is not allowed"),
    (dict(CLIENT, retry_delay="nan"), "retry_delay: nan is out of range"),
    # "$" let a trailing newline through the device name check.
    (dict(CLIENT, device="rxe0\n"), "device: 'rxe0\\n' is not a valid RDMA device name"),
    (dict(CLIENT, tcp_port=22), "tcp_port: 22 is out of range; allowed: 1024-65535"),
])
def test_bad_input_fails_before_running_anything(run, args, message):
    result, replay = run([], **args)
    assert result["failed"] is True and replay.commands == []
    assert message in result["msg"]


def test_test_or_tests_required(run):
    result, replay = run([], mode="client", device="rxe0", server_ip="192.0.2.11")
    assert result["failed"] is True and "one of the following is required: test, tests" in result["msg"]
    result, replay = run([], test="rping", tests=[{"test": "rping"}], server_ip="192.0.2.11")
    assert result["failed"] is True and "mutually exclusive: test|tests" in result["msg"]


def test_rdma_cm_option_passes_dash_r_and_no_gid(run):
    args = dict(CLIENT, device="siw0", rdma_cm=True, _ansible_check_mode=True)
    result, replay = run([], **args)
    assert result["cmd"] == ["ib_write_bw", "-d", "siw0", "-i", "1", "-R", "-p", "18515", "-F", "--report_gbits",
                             "-s", "65536", "-D", "5", "192.0.2.11"]
    assert replay.commands == []
