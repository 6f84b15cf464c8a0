# -*- coding: utf-8 -*-
"""Unit tests for plugins/module_utils/common/perftest.py.

The outputs are REAL captures from the project's VM lab (perftest 4.5+0.17-1,
rdmacm-utils 44.0-2, Soft-RoCE rxe0 under QEMU TCG), see
tests/unit/fixtures/perftest/README.md; one file is derived (named so there).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import perftest as pt

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "perftest")


def capture(name):
    with open(os.path.join(FIXTURES, name)) as f:
        return f.read()


# --- bandwidth -------------------------------------------------------------
def test_write_bw_gbits_client_real():
    res = pt.parse_perftest(capture("ib_write_bw_client_gbits.txt"))
    assert res["kind"] == "bw"
    assert res["title"] == "RDMA_Write BW Test"
    assert res["unit"] == "Gb/sec"
    assert res["rows"] == [{"bytes": 65536, "iterations": 279, "bw_peak": 0.0, "bw_average": 0.048078,
                            "msg_rate_mpps": 0.000092}]
    assert res["bandwidth_gbps"] == 0.0481
    assert res["bandwidth_peak_gbps"] == 0.0
    assert res["msg_rate_mpps"] == 0.000092
    info = res["info"]
    assert info["device"] == "rxe0"
    assert info["link_type"] == "Ethernet"
    assert info["gid_index"] == 1
    assert info["mtu"] == 1024
    assert info["connection_type"] == "RC"
    assert info["number_of_qps"] == 1
    assert info["transport_type"] == "IB"
    assert info["tx_depth"] == 128
    assert info["data_ex_method"] == "Ethernet"
    # the QP lines after the parameter block are not parameters
    assert "local_address" not in info and "gid" not in info
    assert res["errors"] == [] and res["warnings"] == []


def test_write_bw_server_side_prints_the_same_figures():
    res = pt.parse_perftest(capture("ib_write_bw_server_gbits.txt"))
    assert res["bandwidth_gbps"] == 0.0481
    assert res["info"]["gid_index"] == 1
    # "Waiting for client to connect..." is not an error
    assert res["errors"] == []


def test_write_bw_mb_per_sec_is_converted_to_gbits():
    res = pt.parse_perftest(capture("ib_write_bw_mb_client.txt"))
    assert res["unit"] == "MB/sec"
    assert res["rows"][0]["bw_average"] == 4.12
    assert res["rows"][0]["bw_peak"] == 5.53
    # perftest's MB is 2^20 bytes: 4.12 * 1048576 * 8 / 1e9
    assert res["bandwidth_gbps"] == pytest.approx(0.0346, abs=1e-4)
    assert res["bandwidth_peak_gbps"] == pytest.approx(0.0464, abs=1e-4)


def test_cpu_frequency_warning_between_header_and_row_is_skipped():
    res = pt.parse_perftest(capture("derived_hw_bw_cpufreq.txt"))
    assert res["bandwidth_gbps"] == 91.87
    assert res["info"]["gid_index"] == 3 and res["info"]["mtu"] == 4096 and res["info"]["device"] == "mlx5_0"
    assert res["warnings"] == [
        "Conflicting CPU frequency values detected: 2200.000000 != 1040.353000. CPU Frequency is not max."]
    assert res["errors"] == []


# --- latency ---------------------------------------------------------------
def test_send_lat_iterations_real():
    res = pt.parse_perftest(capture("ib_send_lat_client.txt"))
    assert res["kind"] == "lat" and res["unit"] == "usec"
    assert res["title"] == "Send Latency Test"
    assert res["latency"] == {
        "bytes": 2, "iterations": 1000, "t_min_us": 2951.11, "t_max_us": 52131.11, "t_typical_us": 27080.55,
        "t_avg_us": 27428.14, "t_stdev_us": 4752.99, "p99_us": 40389.44, "p99_9_us": 52131.11}
    assert res["latency_us"] == 27080.55
    assert res["bandwidth_gbps"] is None


def test_send_lat_duration_mode_reports_average_only():
    res = pt.parse_perftest(capture("ib_send_lat_dur_client.txt"))
    assert res["latency"] == {"bytes": 2, "iterations": 55, "t_avg_us": 27299.47, "tps_average": 18.32}
    assert res["latency_us"] == 27299.47


def test_send_lat_server_side():
    res = pt.parse_perftest(capture("ib_send_lat_server.txt"))
    assert res["latency_us"] == 27204.23


# --- rping -----------------------------------------------------------------
def test_rping_client_and_server_real():
    client = pt.parse_rping(capture("rping_client.txt"))
    assert client["pings"] == 10 and client["server_pings"] == 0 and client["errors"] == []
    server = pt.parse_rping(capture("rping_server.txt"))
    assert server["pings"] == 0 and server["server_pings"] == 10


# --- failures --------------------------------------------------------------
@pytest.mark.parametrize("name,test,rc,expected", [
    ("ib_write_bw_noserver.txt", "ib_write_bw", 1, "Couldn't connect to 192.0.2.11:18600"),
    ("ib_send_lat_noserver.txt", "ib_send_lat", 1, "Couldn't connect to 192.0.2.11:18602"),
    ("rping_noserver.txt", "rping", 255, "cma event RDMA_CM_EVENT_REJECTED, error 8"),
])
def test_no_server_is_a_connect_failure(name, test, rc, expected):
    text = capture(name)
    assert pt.is_connect_failure(text)
    parsed = pt.parse(test, text)
    assert expected in parsed["errors"]
    passed, message = pt.evaluate(test, "client", parsed, rc, count=3 if test == "rping" else None)
    assert passed is False
    assert message.startswith("%s client failed: exited with rc %d" % (test, rc))
    assert expected in message


def test_unknown_device_is_not_retried():
    text = capture("ib_write_bw_nodevice.txt")
    assert not pt.is_connect_failure(text)
    parsed = pt.parse_perftest(text)
    assert parsed["errors"] == ["IB device mlx5_9 not found", "Unable to find the Infiniband/RoCE device"]
    passed, message = pt.evaluate("ib_write_bw", "client", parsed, 1)
    assert not passed
    assert "IB device mlx5_9 not found" in message


def test_empty_gid_slot_fails_with_perftest_message():
    parsed = pt.parse_perftest(capture("ib_write_bw_badgid.txt"))
    assert parsed["info"]["gid_index"] == 7
    assert parsed["rows"] == []
    assert "Found Incompatibility issue with GID types." in parsed["errors"]
    passed, message = pt.evaluate("ib_write_bw", "client", parsed, 1)
    assert not passed and "no bandwidth result" in message and "Incompatibility" in message


def test_garbage_and_empty_output_do_not_crash():
    for text in ("", None, "\x00\xff random\n #bytes #iterations\n 12 x y", "#bytes BW average[Gb/sec]\n 1 2 nan 3 4"):
        res = pt.parse_perftest(text)
        assert res["bandwidth_gbps"] is None or res["bandwidth_gbps"] == 3.0


# --- thresholds ------------------------------------------------------------
def test_thresholds():
    bw = pt.parse_perftest(capture("ib_write_bw_client_gbits.txt"))
    assert pt.evaluate("ib_write_bw", "client", bw, 0, min_bandwidth_gbps=0.01) == (
        True, "ib_write_bw client ok: 0.048 Gb/s")
    passed, message = pt.evaluate("ib_write_bw", "client", bw, 0, min_bandwidth_gbps=1.25)
    assert not passed
    assert message == "ib_write_bw client failed: bandwidth 0.048 Gb/s below the threshold 1.250 Gb/s"
    lat = pt.parse_perftest(capture("ib_send_lat_client.txt"))
    assert pt.evaluate("ib_send_lat", "client", lat, 0, max_latency_us=50000)[0] is True
    passed, message = pt.evaluate("ib_send_lat", "client", lat, 0, max_latency_us=10)
    assert message == "ib_send_lat client failed: latency 27080.55 us above the threshold 10.00 us"
    ping = pt.parse_rping(capture("rping_client.txt"))
    assert pt.evaluate("rping", "client", ping, 0, count=10) == (True, "rping client ok: 10 pings")
    assert pt.evaluate("rping", "client", ping, 0, count=20)[1] == "rping client failed: 10 of 20 pings completed"
    assert pt.evaluate("ib_write_bw", "server", bw, 124, timed_out=True, timeout=30)[1].startswith(
        "ib_write_bw server failed: timed out after 30s")


# --- command lines ---------------------------------------------------------
def test_build_argv_perftest_client_and_server():
    assert pt.build_argv("ib_write_bw", "client", device="rxe0", ib_port=1, gid_index=1, tcp_port=18515,
                         server_ip="192.0.2.11", size=65536, duration=5) == [
        "ib_write_bw", "-d", "rxe0", "-i", "1", "-x", "1", "-p", "18515", "-F", "--report_gbits",
        "-s", "65536", "-D", "5", "192.0.2.11"]
    assert pt.build_argv("ib_send_lat", "server", device="mlx5_0", gid_index=0, tcp_port=18600, iterations=1000) == [
        "ib_send_lat", "-d", "mlx5_0", "-i", "1", "-x", "0", "-p", "18600", "-F", "-n", "1000"]
    # no GID index: perftest's own choice (InfiniBand)
    assert "-x" not in pt.build_argv("ib_write_bw", "server", device="mlx5_1")
    assert pt.build_argv("ib_write_bw", "client", device="mlx5_0", server_ip="2001:db8:0::11")[-1] == "2001:db8::11"


def test_build_argv_rping():
    assert pt.build_argv("rping", "server", server_ip="192.0.2.11", tcp_port=18519, count=10) == [
        "rping", "-s", "-a", "192.0.2.11", "-p", "18519", "-C", "10", "-v"]
    assert pt.build_argv("rping", "client", server_ip="192.0.2.11", tcp_port=18519, count=3) == [
        "rping", "-c", "-a", "192.0.2.11", "-p", "18519", "-C", "3", "-v"]


@pytest.mark.parametrize("kwargs,message", [
    (dict(test="ib_write_bw", mode="client", device="rxe0;reboot", server_ip="192.0.2.11"), "device: 'rxe0;reboot'"),
    (dict(test="ib_write_bw", mode="client", device="-d", server_ip="192.0.2.11"), "device: '-d' is not a valid"),
    (dict(test="ib_write_bw", mode="client", device="rxe0", server_ip="node1.example"), "server_ip: 'node1.example'"),
    (dict(test="ib_write_bw", mode="client", device="rxe0", server_ip="1.2.3.4 -x 9"), "not an IPv4 or IPv6"),
    (dict(test="ib_write_bw", mode="client", device="rxe0"), "server_ip: required in client mode"),
    (dict(test="ib_write_bw", mode="client", device="rxe0", server_ip="192.0.2.1", tcp_port=80), "tcp_port: 80 is out"),
    (dict(test="ib_write_bw", mode="client", device="rxe0", server_ip="192.0.2.1", ib_port=0), "ib_port: 0 is out"),
    (dict(test="ib_write_bw", mode="server", device="rxe0", iterations=10, duration=3), "mutually exclusive"),
    (dict(test="ib_write_bw", mode="server", device="rxe0", iterations=2), "iterations: 2 is out of range; allowed: 5-"),
    (dict(test="ib_write_bw", mode="peer", device="rxe0"), "mode: unknown mode 'peer'; allowed: server, client"),
    (dict(test="ib_atomic_bw", mode="server", device="rxe0"), "test: unknown test 'ib_atomic_bw'; allowed: "),
    (dict(test="rping", mode="server"), "server_ip: required for rping"),
    (dict(test="ib_write_bw", mode="server", device="rxe0", gid_index=True), "gid_index: True is not an integer"),
])
def test_build_argv_rejects_bad_input(kwargs, message):
    with pytest.raises(pt.PerftestError) as err:
        pt.build_argv(**kwargs)
    assert message in str(err.value)


# --- specs and the run loop ---------------------------------------------------
def params(**kw):
    base = dict(test=None, tests=None, tcp_port=18515, size=None, iterations=None, duration=None, count=10,
                min_bandwidth_gbps=None, max_latency_us=None)
    base.update(kw)
    return base


def test_normalize_specs_single_and_list():
    assert pt.normalize_specs(params(test="ib_write_bw", duration=5)) == [dict(
        test="ib_write_bw", tcp_port=18515, size=None, iterations=None, duration=5, count=10,
        min_bandwidth_gbps=None, max_latency_us=None)]
    specs = pt.normalize_specs(params(duration=5, tests=[
        {"test": "rping"}, {"test": "ib_write_bw", "min_bandwidth_gbps": 1.5},
        {"test": "ib_send_lat", "iterations": 100, "tcp_port": 19000}]))
    assert [(s["test"], s["tcp_port"], s["duration"], s["iterations"], s["min_bandwidth_gbps"]) for s in specs] == [
        ("rping", 18515, 5, None, None), ("ib_write_bw", 18516, 5, None, 1.5), ("ib_send_lat", 19000, None, 100, None)]
    with pytest.raises(pt.PerftestError, match="same tcp_port"):
        pt.normalize_specs(params(tests=[{"test": "rping"}, {"test": "ib_write_bw", "tcp_port": 18515}]))


class ScriptedRunCommand(object):
    """Test double for AnsibleModule.run_command: replays (rc, out, err) in order.

    The real tools need two RDMA hosts; the replayed outputs are the real lab
    captures. It also records every argv and advances a fake clock.
    """

    def __init__(self, replies, seconds_per_call=1.0):
        self.replies = list(replies)
        self.calls = []
        self.now = 1000.0
        self.seconds_per_call = seconds_per_call

    def __call__(self, argv):
        self.calls.append(list(argv))
        self.now += self.seconds_per_call
        return self.replies.pop(0)

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


def test_run_test_retries_until_the_server_listens():
    noserver = capture("ib_write_bw_noserver.txt")
    fake = ScriptedRunCommand([(1, "", noserver), (1, "", noserver), (0, capture("ib_write_bw_client_gbits.txt"), "")])
    rc, out, err, attempts, timed_out, elapsed = pt.run_test(
        fake, ["ib_write_bw", "-d", "rxe0"], "/usr/bin/timeout", 60, "client", retries=5, retry_delay=2,
        clock=fake.clock, sleep=fake.sleep)
    assert (rc, attempts, timed_out) == (0, 3, False)
    assert elapsed == 7.0  # 3 calls of 1 s + 2 waits of 2 s
    # every attempt is bounded by what is left of the same budget
    assert [c[:3] for c in fake.calls] == [["/usr/bin/timeout", "--kill-after=5", "60"],
                                           ["/usr/bin/timeout", "--kill-after=5", "57"],
                                           ["/usr/bin/timeout", "--kill-after=5", "54"]]
    assert fake.calls[0][3:] == ["ib_write_bw", "-d", "rxe0"]


def test_run_test_does_not_retry_other_failures_or_servers():
    fake = ScriptedRunCommand([(1, "", capture("ib_write_bw_nodevice.txt"))])
    assert pt.run_test(fake, ["ib_write_bw"], "timeout", 60, "client", retries=5, clock=fake.clock,
                       sleep=fake.sleep)[3] == 1
    fake = ScriptedRunCommand([(1, "", capture("ib_write_bw_noserver.txt"))])
    assert pt.run_test(fake, ["ib_write_bw"], "timeout", 60, "server", retries=5, clock=fake.clock,
                       sleep=fake.sleep)[3] == 1


def test_run_test_stops_at_the_deadline_and_reports_timeouts():
    noserver = capture("rping_noserver.txt")
    fake = ScriptedRunCommand([(255, "", noserver)] * 100, seconds_per_call=4)
    rc, _out, _err, attempts, timed_out, _elapsed = pt.run_test(
        fake, ["rping"], "timeout", 10, "client", retries=100, retry_delay=1, clock=fake.clock, sleep=fake.sleep)
    assert rc == 255 and attempts == 2 and not timed_out
    fake = ScriptedRunCommand([(124, "", "")])
    assert pt.run_test(fake, ["ib_write_bw"], "timeout", 10, "server", clock=fake.clock, sleep=fake.sleep)[4] is True


def test_build_argv_rdma_cm_for_iwarp():
    """iWARP (siw) needs rdma_cm: -R, and no GID index."""
    assert pt.build_argv("ib_write_bw", "client", device="siw0", gid_index=0, tcp_port=18515, server_ip="192.0.2.12",
                         iterations=300, rdma_cm=True) == [
        "ib_write_bw", "-d", "siw0", "-i", "1", "-R", "-p", "18515", "-F", "--report_gbits", "-n", "300", "192.0.2.12"]
    assert pt.build_argv("ib_send_lat", "server", device="siw0", rdma_cm=True)[:5] == ["ib_send_lat", "-d", "siw0", "-i", "1"]
    assert "-R" in pt.build_argv("ib_send_lat", "server", device="siw0", rdma_cm=True)
    assert "-R" not in pt.build_argv("rping", "client", server_ip="192.0.2.12", rdma_cm=True)


def test_a_result_row_with_nan_latency_names_what_the_tool_printed():
    """perftest prints -nan/inf when its clock conversion fails: no latency, and the message shows the row."""
    text = capture("ib_send_lat_client.txt")
    header = [line for line in text.splitlines() if "#bytes" in line][0]
    bad = header + "\n 2       100          -nan        -nan        -nan  \t       -nan     \t-nan\t\t-nan \t\t-nan\n"
    parsed = pt.parse_perftest(bad)
    assert parsed["latency_us"] is None
    passed, message = pt.evaluate("ib_send_lat", "client", parsed, 0)
    assert not passed
    assert message.startswith("ib_send_lat client failed: no latency result in the output; output ends: ")
    assert "2       100          -nan" in message


def test_no_output_at_all_says_so():
    passed, message = pt.evaluate("ib_send_lat", "client", pt.parse_perftest(""), 0)
    assert not passed and message == "ib_send_lat client failed: no latency result in the output; no output"
