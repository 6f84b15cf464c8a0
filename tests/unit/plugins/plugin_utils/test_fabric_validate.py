# -*- coding: utf-8 -*-
"""Unit tests for plugins/plugin_utils/fabric_validate.py.

Endpoints come from REAL ansible_facts.rdma of the two lab VMs
(tests/unit/fixtures/fabric/README.md); faults (port DOWN, MTU mismatch, no
IPv4 GID, an unreachable host) are made by editing copies of those facts.
Task results fed to run_result are real module results (the perftest module's
result shape) built from the real captures.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures", "fabric")


def lab_facts(host):
    with open(os.path.join(FIXTURES, "lab_%s_facts.json" % host)) as f:
        return json.load(f)["rdma"]


@pytest.fixture(name="facts")
def fixture_facts():
    return {"lab1": lab_facts("lab1"), "lab2": lab_facts("lab2")}


def port(rdma):
    return rdma["devices"][0]["ports"][0]


def test_endpoint_from_real_lab_facts(facts):
    ep = fv.select_endpoint(facts["lab1"], host="lab1")
    assert ep == {
        "host": "lab1", "device": "rxe0", "port": 1, "driver": "rdma_rxe", "soft": True, "link_layer": "Ethernet",
        "state": "ACTIVE", "phys_state": "LinkUp", "rate_gbps": 2.5, "netdev": "eth1", "mtu": 1500, "gid_index": 1,
        "gid": "0000:0000:0000:0000:0000:ffff:c000:020b", "ip": "192.0.2.11", "kind": "roce", "problems": [], "ok": True,
    }
    assert fv.select_endpoint(facts["lab2"], host="lab2", data_ip="198.51.100.12")["ip"] == "198.51.100.12"


def test_endpoint_problems_name_host_device_port_and_netdev(facts):
    down = copy.deepcopy(facts["lab2"])
    port(down).update(state="DOWN", phys_state="Disabled")
    ep = fv.select_endpoint(down, host="lab2")
    assert not ep["ok"]
    assert ep["problems"] == ["lab2: rxe0 port 1 (eth1) is DOWN, not ACTIVE",
                              "lab2: rxe0 port 1 (eth1) physical state is Disabled, not LinkUp"]

    no_v4 = copy.deepcopy(facts["lab2"])
    port(no_v4)["roce_v2_ipv4_gid_index"] = None
    port(no_v4)["gids"] = [g for g in port(no_v4)["gids"] if g["ip_version"] == 6]
    assert fv.select_endpoint(no_v4, host="lab2")["problems"] == [
        "lab2: rxe0 port 1 (eth1) has no RoCE v2 IPv4 GID (roce_v2_ipv4_gid_index is null): give eth1 an IPv4 address"]

    stale = copy.deepcopy(facts["lab1"])
    port(stale)["roce_v2_ipv4_gid_index"] = 5
    assert fv.select_endpoint(stale, host="lab1")["problems"] == [
        "lab1: rxe0 port 1 (eth1): roce_v2_ipv4_gid_index 5 is not in the GID table"]

    assert fv.select_endpoint(facts["lab1"], host="lab1", device="mlx5_0")["problems"] == [
        "lab1: RDMA device mlx5_0 not found (devices: rxe0)"]
    assert fv.select_endpoint(facts["lab1"], host="lab1", port=2)["problems"] == ["lab1: no RDMA device has a port 2"]
    assert fv.select_endpoint(facts["lab1"], host="lab1", device="rxe0", port=2)["problems"] == [
        "lab1: rxe0 has no port 2"]
    assert fv.select_endpoint({"devices": []}, host="lab3")["problems"] == [
        "lab3: no RDMA devices (load a driver or create a Soft-RoCE link)"]
    assert fv.select_endpoint(None, host="lab3")["problems"] == [
        "lab3: no RDMA facts (run rdma.fabric.rdma_device_facts)"]


def test_endpoint_prefers_a_usable_roce_port(facts):
    rdma = copy.deepcopy(facts["lab1"])
    broken = copy.deepcopy(rdma["devices"][0])
    broken["name"] = "rxe9"
    port({"devices": [broken]})["state"] = "DOWN"
    rdma["devices"].insert(0, broken)
    ep = fv.select_endpoint(rdma, host="lab1")
    assert ep["device"] == "rxe0" and ep["ok"]
    # pinning the broken one reports it
    assert fv.select_endpoint(rdma, host="lab1", device="rxe9")["problems"] == [
        "lab1: rxe9 port 1 (eth1) is DOWN, not ACTIVE"]


def test_iwarp_endpoint_needs_no_gid_but_a_data_ip(facts):
    """siw as Linux 6.1 shows it: node type RNIC, link layer Ethernet, no GID listed (zero interface ID)."""
    rdma = copy.deepcopy(facts["lab1"])
    dev = rdma["devices"][0]
    dev.update(name="siw0", driver="siw", node_type="RNIC")
    dev["ports"][0].update(gids=[], roce_v2_ipv4_gid_index=None)
    ep = fv.select_endpoint(rdma, host="lab1", data_ip="192.0.2.11")
    assert (ep["ok"], ep["kind"], ep["device"], ep["gid_index"], ep["ip"], ep["problems"]) == (
        True, "iwarp", "siw0", None, "192.0.2.11", [])
    assert fv.select_endpoint(rdma, host="lab1")["problems"] == [
        "lab1: siw0 port 1 (eth1) has no data IP: set rdma_validate_data_ip for this host"]


def test_pairs():
    assert fv.make_pairs(["a"], "ring") == []
    assert fv.make_pairs(["a", "b"], "ring") == [("a", "b")]
    assert fv.make_pairs(["a", "b", "c"], "ring") == [("a", "b"), ("b", "c"), ("c", "a")]
    assert fv.make_pairs(["a", "b", "c"], "all_pairs") == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(fv.make_pairs(["h%d" % i for i in range(8)], "all_pairs")) == 28
    with pytest.raises(fv.ValidateError, match="topology: unknown 'mesh'; allowed: ring, all_pairs"):
        fv.make_pairs(["a", "b"], "mesh")


def test_ring_with_neighbours_grows_linearly_and_tests_every_host():
    hosts = ["h%02d" % i for i in range(10)]
    assert fv.make_pairs(hosts, "ring", neighbours=2)[:3] == [("h00", "h01"), ("h01", "h02"), ("h02", "h03")]
    for n in (2, 3, 4, 10, 101):
        names = ["h%03d" % i for i in range(n)]
        for k in (1, 2, 3):
            pairs = fv.make_pairs(names, "ring", neighbours=k)
            assert len(pairs) == len(set(frozenset(p) for p in pairs))  # no pair twice
            assert len(pairs) <= k * n
            assert set(h for p in pairs for h in p) == set(names)  # every host tested
    assert fv.make_pairs(["a", "b"], "ring", neighbours=3) == [("a", "b")]  # the lab: the same one pair
    with pytest.raises(fv.ValidateError, match="neighbours: 0 is out of range; allowed: an integer >= 1"):
        fv.make_pairs(["a", "b"], "ring", neighbours=0)


def test_switches_order_the_ring_and_add_one_pair_per_switch():
    hosts = ["a1", "b1", "a2", "b2", "a3", "b3", "c1"]
    switch_of = {"a1": "leafA", "a2": "leafA", "a3": "leafA", "b1": "leafB", "b2": "leafB", "b3": "leafB", "c1": "leafC"}
    assert fv.ring_order(hosts, switch_of) == ["a1", "a2", "a3", "b1", "b2", "b3", "c1"]
    pairs = fv.make_pairs(hosts, "ring", switch_of=switch_of)
    ring = [("a1", "a2"), ("a2", "a3"), ("a3", "b1"), ("b1", "b2"), ("b2", "b3"), ("b3", "c1"), ("c1", "a1")]
    assert pairs[:7] == ring
    # one pair per switch between the switches' middle hosts: leafA -> leafB, leafB -> leafC, leafC -> leafA
    assert pairs[7:] == [("a2", "b2"), ("b2", "c1"), ("c1", "a2")]
    two = fv.make_pairs(["a1", "a2", "b1", "b2"], "ring", switch_of={"a1": "A", "a2": "A", "b1": "B", "b2": "B"})
    assert two == [("a1", "a2"), ("a2", "b1"), ("b1", "b2"), ("b2", "a1"), ("a2", "b2")]  # two switches: one extra pair
    assert fv.make_pairs(["a", "b"], "ring", switch_of={}) == [("a", "b")]


def test_waves_keep_hosts_apart_and_bound_the_concurrency():
    names = ["h%03d" % i for i in range(50)]
    runs = [{"server": {"host": s}, "client": {"host": c}} for s, c in fv.make_pairs(names, "ring", neighbours=2)]
    for limit in (0, 1, 4, 16):
        waves = fv.schedule_waves(runs, limit)
        assert sorted(i for w in waves for i in w["runs"]) == list(range(len(runs)))  # every run once
        for w in waves:
            hosts = [h for i in w["runs"] for h in (runs[i]["server"]["host"], runs[i]["client"]["host"])]
            assert len(hosts) == len(set(hosts))  # no host twice in a wave
            assert not limit or len(w["runs"]) <= limit
            assert w["servers"] == dict((runs[i]["server"]["host"], i) for i in w["runs"])
            assert w["clients"] == dict((runs[i]["client"]["host"], i) for i in w["runs"])
        if limit:
            assert len(waves) <= len(runs) // limit + 6
    assert len(fv.schedule_waves(runs, 0)) <= 6  # a 2-neighbour ring: a handful of waves, whatever its size
    assert fv.schedule_waves([], 4) == []
    with pytest.raises(fv.ValidateError, match="concurrency: -1 is out of range; allowed: an integer >= 0"):
        fv.schedule_waves(runs, -1)


@pytest.mark.parametrize("name, value, message", [
    ("min_bw_gbps", float("nan"), "min_bw_gbps: nan is not allowed; allowed: a finite number >= 0"),
    ("max_latency_us", float("inf"), "max_latency_us: inf is not allowed; allowed: a finite number >= 0"),
    ("max_latency_us_soft", -1.0, "max_latency_us_soft: -1.0 is not allowed"),
    ("min_bw_fraction", float("nan"), "min_bw_fraction: nan is out of range; allowed: 0.0-1.0"),
    ("min_bw_fraction_soft", float("-inf"), "min_bw_fraction_soft: -inf is out of range"),
    ("neighbours", 0, "neighbours: 0 is out of range; allowed: an integer 1-1000"),
    ("concurrency", -2, "concurrency: -2 is out of range; allowed: an integer 0-1000000"),
    ("topology", "mesh", "topology: unknown 'mesh'; allowed: ring, all_pairs"),
    ("timeout", 0, "timeout: 0 is out of range; allowed: an integer 1-86400"),
    ("connect_retries", -1, "connect_retries: -1 is out of range; allowed: an integer 0-1000"),
    ("results_dir", "/srv/re\nports", "results_dir: '/srv/re\\\\nports' is not allowed; allowed: empty, or a folder path"),
    ("results_dir", "rel/../x", "results_dir: 'rel/../x' is not allowed; allowed: empty, or a folder path"),
])
def test_options_reject_nan_inf_and_out_of_range(name, value, message):
    with pytest.raises(fv.ValidateError, match=message.replace("(", "\\(").replace(")", "\\)").replace(".", "\\.")):
        fv.check_options(**{name: value})


def test_host_vars_checks_name_the_variable_and_host():
    assert fv.check_host_vars("lab1", {"device": "mlx5_0", "port": 1, "data_ip": "192.0.2.11", "switch": "leaf1"}) == []
    assert fv.check_host_vars("lab1", {"device": "", "port": 0, "data_ip": "", "switch": ""}) == []
    errors = fv.check_host_vars("lab2", {"device": "mlx5_0\n", "port": 300, "data_ip": "192.0.2.300",
                                         "switch": ["leaf1"]})
    assert [e.split(":")[0] for e in errors] == ["rdma_validate_device of host lab2", "rdma_validate_port of host lab2",
                                                 "rdma_validate_data_ip of host lab2", "rdma_validate_switch of host lab2"]
    assert "allowed: an IPv4 or IPv6 address, or empty" in errors[2]
    # what perftest would take as options or a shell as syntax is refused here, before the role installs anything
    for device in ("mlx5_0; reboot", "-x", "mlx5_0 -x 9", "../mlx5_0"):
        (error,) = fv.check_host_vars("lab2", {"device": device})
        assert error.startswith("rdma_validate_device of host lab2: %r is not allowed" % device), error


def endpoints(facts):
    return dict((h, fv.select_endpoint(f, host=h)) for h, f in facts.items())


def test_collect_results_from_each_hosts_record(facts):
    plan = fv.validation_plan(endpoints(facts), ["lab1", "lab2"], tests=["ib_write_bw"])
    (run,) = plan["runs"]
    assert plan["waves"] == [{"runs": [0], "servers": {"lab1": 0}, "clients": {"lab2": 0}}]
    client = {"results": [{"test": "ib_write_bw", "passed": True, "bandwidth_gbps": 0.05, "message": "ok"}]}
    done = {"lab1": {run["id"]: {"server_start": {"ansible_job_id": "j1"}, "server": {"finished": 1}}},
            "lab2": {run["id"]: {"client": client}}}
    (entry,) = fv.collect_results(plan, done)
    assert entry["passed"] is True and entry["bandwidth_gbps"] == 0.05
    # a wave that never ran: the client did not run
    (missing,) = fv.collect_results(plan, {})
    assert missing["passed"] is False and missing["message"] == "client lab2 did not run"


def test_plan_on_the_lab(facts):
    plan = fv.validation_plan(endpoints(facts), ["lab1", "lab2"])
    assert plan["problems"] == []
    assert [(p["server"], p["client"], p["ok"]) for p in plan["pairs"]] == [("lab1", "lab2", True)]
    assert plan["pairs"][0]["thresholds"] == {"soft": True, "rate_gbps": 2.5, "fraction": 0.001,
                                              "min_bandwidth_gbps": 0.0025, "max_latency_us": None}
    assert len(plan["results"]) == 1
    pre = plan["results"][0]
    assert pre["test"] == "precheck" and pre["passed"] is True
    assert pre["message"] == ("pre-check ok: lab1 rxe0 port 1 and lab2 rxe0 port 1 ACTIVE, Ethernet, MTU 1500/1500, "
                              "GID index 1/1")
    assert pre["hosts"] == ["lab1", "lab2"] and pre["devices"] == ["rxe0", "rxe0"] and pre["gid_indices"] == [1, 1]
    (run,) = plan["runs"]
    assert run["id"] == "lab1-lab2"
    assert run["server"]["ip"] == "192.0.2.11"
    assert run["tests"] == [
        {"test": "rping", "tcp_port": 18515, "size": None, "iterations": None, "duration": None, "count": 10,
         "min_bandwidth_gbps": None, "max_latency_us": None},
        {"test": "ib_write_bw", "tcp_port": 18516, "size": 65536, "iterations": 300, "duration": None, "count": None,
         "min_bandwidth_gbps": 0.0025, "max_latency_us": None},
        {"test": "ib_send_lat", "tcp_port": 18517, "size": None, "iterations": 100, "duration": None, "count": None,
         "min_bandwidth_gbps": None, "max_latency_us": None},
    ]


def test_plan_hardware_thresholds(facts):
    hw = {}
    for host, rdma in facts.items():
        rdma = copy.deepcopy(rdma)
        rdma["devices"][0].update(soft=False, driver="mlx5_core", name="mlx5_0")
        port(rdma)["rate_gbps"] = 400.0
        hw[host] = rdma
    hw["lab2"]["devices"][0]["ports"][0]["rate_gbps"] = 200.0
    plan = fv.validation_plan(endpoints(hw), ["lab1", "lab2"], min_bw_fraction=0.6, min_bw_gbps=150, max_latency_us=10,
                              max_latency_us_soft=5000)
    limits = plan["pairs"][0]["thresholds"]
    # the slower port counts; the absolute floor wins when higher
    assert limits == {"soft": False, "rate_gbps": 200.0, "fraction": 0.6, "min_bandwidth_gbps": 150.0,
                      "max_latency_us": 10.0}
    lat = [t for t in plan["runs"][0]["tests"] if t["test"] == "ib_send_lat"][0]
    assert lat["iterations"] == 1000 and lat["max_latency_us"] == 10.0
    bw = [t for t in plan["runs"][0]["tests"] if t["test"] == "ib_write_bw"][0]
    assert bw["iterations"] == 5000 and bw["duration"] is None and bw["min_bandwidth_gbps"] == 150.0


def test_plan_mtu_mismatch_and_down_port_are_named(facts):
    bad = copy.deepcopy(facts)
    port(bad["lab2"])["mtu"] = 9000
    plan = fv.validation_plan(endpoints(bad), ["lab1", "lab2"])
    assert plan["runs"] == []
    assert plan["pairs"][0]["problems"] == ["MTU mismatch: lab1 eth1 has MTU 1500, lab2 eth1 has MTU 9000"]
    results = plan["results"]
    assert [(r["test"], r["passed"]) for r in results] == [
        ("precheck", False), ("rping", False), ("ib_write_bw", False), ("ib_send_lat", False)]
    assert results[1]["message"] == (
        "not run: pre-check failed: MTU mismatch: lab1 eth1 has MTU 1500, lab2 eth1 has MTU 9000")


def test_plan_marks_hosts_without_endpoint_as_unreachable(facts):
    eps = endpoints(facts)
    eps["lab3"] = fv.select_endpoint(copy.deepcopy(facts["lab2"]), host="lab3", data_ip="192.0.2.13")
    del eps["lab2"]
    plan = fv.validation_plan(eps, ["lab1", "lab2", "lab3"], tests=["ib_write_bw"])
    assert [(p["server"], p["client"], p["ok"]) for p in plan["pairs"]] == [
        ("lab1", "lab2", False), ("lab2", "lab3", False), ("lab3", "lab1", True)]
    assert plan["pairs"][0]["problems"] == ["lab2: unreachable or failed before validation"]
    # lab3 is a copy of lab2: same GID would be a problem, but its data IP differs and the GID is lab2's
    assert [r["id"] for r in plan["runs"]] == ["lab3-lab1"]


def four_hosts(facts):
    """lab1, lab2 (the real lab facts) and lab3, lab4 (copies of lab2's and lab1's with their own data IPs)."""
    eps = endpoints(facts)
    eps["lab3"] = fv.select_endpoint(copy.deepcopy(facts["lab2"]), host="lab3", data_ip="192.0.2.13")
    eps["lab4"] = fv.select_endpoint(copy.deepcopy(facts["lab1"]), host="lab4", data_ip="192.0.2.14")
    return eps


def test_a_slice_never_plans_a_pair_with_a_host_it_cannot_reach(facts):
    """Slice 1 of a sliced job (--limit lab1,lab3) is asked for every host (rdma_validate_hosts or
    reference hosts naming the other slice): lab2 and lab4 are left out before pairing, neither paired
    nor failed, and no run, result or wave names them; the slice's own hosts make their own ring."""
    eps = four_hosts(facts)
    plan = fv.validation_plan(eps, ["lab1", "lab2", "lab3", "lab4"], tests=["rping"], reachable=["lab1", "lab3"])
    assert plan["left_out"] == ["lab2", "lab4"]
    assert [(p["server"], p["client"]) for p in plan["pairs"]] == [("lab1", "lab3")]
    named = set()
    for entry in plan["results"] + [r["server"] for r in plan["runs"]] + [r["client"] for r in plan["runs"]]:
        named.update(entry.get("hosts") or [entry.get("host")])
    for wave in plan["waves"]:
        named.update(wave["servers"])
        named.update(wave["clients"])
    assert named == {"lab1", "lab3"}
    assert plan["problems"] == [] and all(r["passed"] for r in plan["results"])
    # even with the other slice's endpoints at hand (facts from the shared fact cache): still left out
    assert fv.validation_plan(eps, ["lab2", "lab1"], reachable=["lab1"])["pairs"] == []


def test_a_slice_of_one_host_has_no_pair_and_says_why(facts):
    plan = fv.validation_plan(four_hosts(facts), ["lab1", "lab2", "lab3", "lab4"], reachable=["lab2"])
    assert plan["pairs"] == [] and plan["runs"] == [] and plan["results"] == []
    assert plan["left_out"] == ["lab1", "lab3", "lab4"]
    assert plan["problems"] == ["need at least two hosts to validate the fabric, got 1 (lab2)"]


def test_without_a_limit_every_host_is_planned_and_the_fleet_pairs_across_slices(facts):
    """The fleet job (no --limit): the ring crosses the slices (lab1-lab2, lab2-lab3, ...)."""
    eps = four_hosts(facts)
    hosts = ["lab1", "lab2", "lab3", "lab4"]
    plan = fv.validation_plan(eps, hosts, tests=["rping"])
    assert plan["left_out"] == [] and plan == fv.validation_plan(eps, hosts, tests=["rping"], reachable=hosts + ["other"])
    assert [(p["server"], p["client"]) for p in plan["pairs"]] == [
        ("lab1", "lab2"), ("lab2", "lab3"), ("lab3", "lab4"), ("lab4", "lab1")]
    assert fv.reachable_split(["b", "a", "c"], ["c", "b"]) == (["b", "c"], ["a"])
    assert fv.reachable_split(["b", "a"], None) == (["b", "a"], [])


def test_plan_same_ip_and_gid_detected(facts):
    eps = endpoints(facts)
    eps["lab2"] = dict(eps["lab1"], host="lab2")
    problems = fv.validation_plan(eps, ["lab1", "lab2"])["pairs"][0]["problems"]
    assert problems == ["lab1 and lab2 both use data IP 192.0.2.11",
                        "lab1 and lab2 have the same GID 0000:0000:0000:0000:0000:ffff:c000:020b"]


def test_plan_needs_two_hosts_and_rejects_bad_input(facts):
    assert fv.validation_plan(endpoints(facts), ["lab1"])["problems"] == [
        "need at least two hosts to validate the fabric, got 1 (lab1)"]
    with pytest.raises(fv.ValidateError, match="tests: unknown test 'iperf'"):
        fv.validation_plan({}, ["a", "b"], tests=["iperf"])
    with pytest.raises(fv.ValidateError, match="base_port: 80 is out of range"):
        fv.validation_plan({}, ["a", "b"], base_port=80)
    with pytest.raises(fv.ValidateError, match="min_bw_fraction: 1.5 is out of range; allowed: 0.0-1.0"):
        fv.validation_plan({}, ["a", "b"], min_bw_fraction=1.5)
    with pytest.raises(fv.ValidateError, match="lists a test twice"):
        fv.validation_plan({}, ["a", "b"], tests=["rping", "rping"])


# --- results of runs ---------------------------------------------------------
def client_result(**kw):
    """The shape rdma.fabric.perftest returns with `tests` (figures from the real lab captures)."""
    base = {"changed": False, "passed": True, "results": [
        {"test": "rping", "passed": True, "message": "rping client ok: 10 pings", "bandwidth_gbps": None,
         "latency_us": None, "elapsed_s": 2.1},
        {"test": "ib_write_bw", "passed": True, "message": "ib_write_bw client ok: 0.048 Gb/s",
         "bandwidth_gbps": 0.0481, "latency_us": None, "elapsed_s": 6.0},
        {"test": "ib_send_lat", "passed": True, "message": "ib_send_lat client ok: 27080.55 us",
         "bandwidth_gbps": None, "latency_us": 27080.55, "elapsed_s": 3.0},
    ]}
    base.update(kw)
    return base


@pytest.fixture(name="run")
def fixture_run(facts):
    return fv.validation_plan(endpoints(facts), ["lab1", "lab2"])["runs"][0]


def test_run_result_success(run):
    server = {"finished": 1, "passed": True, "results": [{"test": "rping", "passed": True}]}
    entries = fv.run_result(run, client=client_result(), server_start={"ansible_job_id": "1.2", "started": 1},
                            server=server)
    assert [(e["test"], e["passed"], e["bandwidth_gbps"], e["latency_us"]) for e in entries] == [
        ("rping", True, None, None), ("ib_write_bw", True, 0.0481, None), ("ib_send_lat", True, None, 27080.55)]
    bw = entries[1]
    assert bw["hosts"] == ["lab1", "lab2"] and bw["devices"] == ["rxe0", "rxe0"] and bw["tcp_port"] == 18516
    assert bw["min_bandwidth_gbps"] == 0.0025 and bw["message"] == "ib_write_bw client ok: 0.048 Gb/s"


def test_run_result_failures(run):
    unreachable = {"unreachable": True, "msg": "Failed to connect to the host via ssh"}
    entries = fv.run_result(run, server_start=unreachable)
    assert {e["message"] for e in entries} == {"server lab1 unreachable: Failed to connect to the host via ssh"}
    assert not any(e["passed"] for e in entries)

    entries = fv.run_result(run, client=unreachable, server_start={"ansible_job_id": "1"},
                            server={"finished": 0, "failed": True, "attempts": 90})
    assert entries[0]["message"] == ("client lab2 unreachable: Failed to connect to the host via ssh "
                                     "(server lab1 did not finish in time)")

    cli = client_result(passed=False)
    cli["results"][1] = dict(cli["results"][1], passed=False, bandwidth_gbps=0.001,
                             message="ib_write_bw client failed: bandwidth 0.001 Gb/s below the threshold 0.003 Gb/s")
    srv = {"finished": 1, "results": [{"test": "ib_write_bw", "passed": False,
                                       "message": "ib_write_bw server failed: exited with rc 1"}]}
    entries = fv.run_result(run, client=cli, server_start={"ansible_job_id": "1"}, server=srv)
    assert entries[1]["passed"] is False and entries[1]["bandwidth_gbps"] == 0.001
    assert entries[1]["message"] == ("ib_write_bw client failed: bandwidth 0.001 Gb/s below the threshold 0.003 Gb/s "
                                     "(server: ib_write_bw server failed: exited with rc 1)")
    assert entries[0]["passed"] is True

    module_failed = {"failed": True, "msg": "device: required for ib_write_bw"}
    entries = fv.run_result(run, client=module_failed, server_start={"ansible_job_id": "1"}, server={"finished": 1})
    assert entries[1]["message"] == "client lab2 failed: device: required for ib_write_bw"

    skipped = {"skipped": True, "changed": False}
    assert fv.run_result(run, client=skipped, server_start={"ansible_job_id": "1"})[0]["message"] == \
        "client lab2 did not run"


def test_run_result_check_mode_and_summary(run):
    entries = fv.run_result(run, check_mode=True)
    assert [e["passed"] for e in entries] == [None, None, None]
    assert entries[0]["message"] == "not run in check mode"
    ok = fv.run_result(run, client=client_result(), server_start={"ansible_job_id": "1"}, server={"finished": 1})
    summary = fv.summarize([{"test": "precheck", "passed": True}] + ok + entries)
    assert summary == {"total": 7, "passed": 4, "failed": 0, "not_run": 3, "ok": True, "by_test": {
        "precheck": {"total": 1, "passed": 1, "failed": 0, "not_run": 0},
        "rping": {"total": 2, "passed": 1, "failed": 0, "not_run": 1},
        "ib_write_bw": {"total": 2, "passed": 1, "failed": 0, "not_run": 1},
        "ib_send_lat": {"total": 2, "passed": 1, "failed": 0, "not_run": 1}}}
    assert fv.summarize([])["ok"] is False
    assert fv.summarize([{"test": "rping", "passed": False}])["ok"] is False


def _runs(pairs):
    return [{"id": "%s-%s" % (s, c), "server": {"host": s}, "client": {"host": c}} for s, c in pairs]


def test_wave_sides_run_a_reference_hosts_side_from_its_partner():
    """A staged rollout's gate: batch b1, b2 and the reference host r (outside the play)."""
    runs = _runs(fv.make_pairs(["b1", "b2", "r"], "ring"))
    plan = {"runs": runs, "waves": fv.schedule_waves(runs)}
    seen = {}
    for w in range(len(plan["waves"])):
        sides = dict((h, fv.wave_sides(plan, w, h, ["r"])) for h in ("b1", "b2"))
        for host, side in sides.items():
            for kind in ("server", "client"):
                if side[kind] is not None:
                    run = runs[side[kind]["run"]]
                    assert run[kind]["host"] == side[kind]["host"]
                    assert host in (run["server"]["host"], run["client"]["host"])
                    seen.setdefault(run["id"], set()).add(kind)
            if side["client"] is not None:
                run = runs[side["client"]["run"]]
                starter = run["client"]["host"] if run["server"]["host"] == "r" else run["server"]["host"]
                assert side["peer_start"] == starter
    # every side of every run, the reference host's included, is run by a host of the play
    assert seen == dict((r["id"], {"server", "client"}) for r in runs)


def test_wave_sides_without_reference_hosts_are_each_hosts_own():
    runs = _runs(fv.make_pairs(["a", "b", "c", "d"], "ring"))
    plan = {"runs": runs, "waves": fv.schedule_waves(runs)}
    for w, wave in enumerate(plan["waves"]):
        for h in "abcd":
            sides = fv.wave_sides(plan, w, h)
            assert (sides["server"] or {}).get("host") in (None, h)
            assert (sides["client"] or {}).get("host") in (None, h)
            assert (sides["server"] is not None) == (h in wave["servers"])


def test_collect_results_reads_a_reference_side_from_its_partner(facts):
    """lab2 as a reference host: lab1 ran both sides of the run and keeps both in its record."""
    plan = fv.validation_plan(endpoints(facts), ["lab1", "lab2"], tests=["ib_write_bw"])
    (run,) = plan["runs"]
    client = {"results": [{"test": "ib_write_bw", "passed": True, "bandwidth_gbps": 0.05, "message": "ok"}]}
    done = {"lab1": {run["id"]: {"server_start": {"ansible_job_id": "j1"}, "server": {"finished": 1},
                                 "client": client}},
            "lab2": {"lab0-lab2": {"client": {"failed": True}}}}
    (entry,) = fv.collect_results(plan, done)
    assert entry["passed"] is True and entry["bandwidth_gbps"] == 0.05
