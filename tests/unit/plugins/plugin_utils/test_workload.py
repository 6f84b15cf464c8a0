# -*- coding: utf-8 -*-
"""Unit tests for plugin_utils/workload.py: the rdma_validate workload stage's plan and verdicts.

Endpoints and UCX settings come from the lab's real facts (tests/unit/fixtures/k8s/facts/lab1, lab2).
Tool output: the mpirun/ucx_perftest output captured on the lab by the workload scenario where present
(tests/unit/fixtures/workload/*.txt, see the README there); the nccl-tests output is a CLEARLY NAMED TEST
DOUBLE (no GPU here): rows written in all_reduce_perf's column layout (size count type redop root, then
time algbw busbw #wrong out-of-place and in-place), not captured from a GPU host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
from ansible_collections.rdma.fabric.plugins.plugin_utils import workload as wl
from ansible_collections.rdma.fabric.plugins.plugin_utils.ucx import ucx_env

HERE = os.path.dirname(__file__)
FACTS = os.path.join(HERE, "..", "..", "fixtures", "k8s", "facts")
CAPTURED = os.path.join(HERE, "..", "..", "fixtures", "workload")
SCRIPT = os.path.join(HERE, "..", "..", "..", "..", "roles", "rdma_validate", "files", "mpi_allreduce.py")


def facts(name):
    with open(os.path.join(FACTS, name + ".json")) as f:
        return json.load(f)


def captured(name):
    with open(os.path.join(CAPTURED, name)) as f:
        return f.read()


def lab_plan(**kw):
    eps = dict((h, fv.select_endpoint(facts(h), host=h)) for h in ("lab1", "lab2"))
    envs = dict((h, ucx_env(facts(h), devices=[eps[h]["device"]])) for h in eps)
    with open(SCRIPT) as f:
        script = f.read()
    return wl.workload_plan(eps, ["lab1", "lab2"], envs, script=script, **kw)


def test_plan_one_rank_per_host_each_with_its_own_ucx_settings():
    p = lab_plan(allow_run_as_root=True)
    assert p["hosts"] == ["lab1", "lab2"] and p["launcher"] == "lab1" and not p["problems"]
    argv = p["mpirun"]
    assert argv[:4] == ["timeout", "--kill-after=10", "300", "mpirun"]
    assert argv[argv.index("--mca") + 1:argv.index("--mca") + 3] == ["pml", "ucx"]
    assert "--allow-run-as-root" in argv and argv.count(":") == 1
    contexts = " ".join(argv).split(" : ")
    for ctx, ip in zip(contexts, ("192.0.2.11", "192.0.2.12")):
        assert ("-np 1 -H %s env UCX_IB_GID_INDEX=1 UCX_LOG_LEVEL=info UCX_NET_DEVICES=rxe0:1 UCX_TLS=rc,ud,sm,self "
                "UCX_UD_ETH_DGID_CHECK=n python3 -c" % ip) in ctx
        assert ctx.endswith("8,1024,65536,1048576,4194304 20 3")
    assert "oob_tcp_if_include eth1" in " ".join(argv)
    assert p["devices"] == {"lab1": ["rxe0", 1], "lab2": ["rxe0", 1]}
    lat, bw = p["perftests"]
    assert lat["test"] == "ucx_tag_lat" and bw["test"] == "ucx_tag_bw"
    assert lat["client_argv"][-13:] == ["ucx_perftest", "192.0.2.11", "-p", "18600", "-t", "tag_lat", "-n", "100",
                                        "-w", "10", "-s", "8", "-f"]
    assert bw["server_argv"][-11:] == ["-p", "18601", "-t", "tag_bw", "-n", "100", "-w", "10", "-s", "65536", "-f"]
    assert p["nccl"] is None


def test_plan_leaves_out_hosts_without_a_usable_endpoint():
    eps = {"lab1": fv.select_endpoint(facts("lab1"), host="lab1"),
           "lab2": fv.select_endpoint(facts("no-rdma"), host="lab2")}
    p = wl.workload_plan(eps, ["lab1", "lab2", "lab3"], {"lab1": {}}, script="pass")
    assert p["hosts"] == ["lab1"] and p["mpirun"] is None
    assert p["problems"][0].startswith("lab2: left out of the workload: lab2: no RDMA devices")
    assert p["problems"][1] == "lab3: left out of the workload: unreachable or failed before validation"
    assert "at least two hosts" in p["problems"][-1]


@pytest.mark.parametrize("kwargs, words", [
    ({"sizes": [2]}, "sizes: 2 is not a message size"),
    ({"sizes": []}, "sizes: give a list"),
    ({"iterations": 0}, "iterations: 0 is out of range"),
    ({"time_budget_s": "soon"}, "time_budget_s: 'soon' is out of range"),
    ({"script": ""}, "script: the allreduce benchmark's source is required"),
    ({"nccl_binary": "all_reduce_perf\nx"}, "nccl_binary: 'all_reduce_perf\\nx' is not allowed"),
    ({"nccl_binary": "/opt/../bin/sh"}, "nccl_binary: '/opt/../bin/sh' is not allowed"),
])
def test_plan_rejects_bad_input(kwargs, words):
    args = {"script": "pass"}
    args.update(kwargs)
    eps = dict((h, fv.select_endpoint(facts(h), host=h)) for h in ("lab1", "lab2"))
    with pytest.raises(wl.WorkloadError) as err:
        wl.workload_plan(eps, ["lab1", "lab2"], {"lab1": {}, "lab2": {}}, **args)
    assert words in str(err.value)


def test_plan_refuses_settings_a_command_line_would_misread():
    eps = dict((h, fv.select_endpoint(facts(h), host=h)) for h in ("lab1", "lab2"))
    with pytest.raises(wl.WorkloadError, match=r"envs\[lab1\]: UCX_TLS=rc;reboot is not a plain environment setting"):
        wl.workload_plan(eps, ["lab1", "lab2"], {"lab1": {"UCX_TLS": "rc;reboot"}, "lab2": {}}, script="pass")


def test_nccl_tests_on_gpu_hosts_only():
    eps = dict((h, fv.select_endpoint(facts(h), host=h)) for h in ("lab1", "lab2"))
    envs = {"lab1": {}, "lab2": {}}
    nccl_envs = {"lab1": {"NCCL_IB_HCA": "=rxe0:1"}, "lab2": {"NCCL_IB_HCA": "=rxe0:1"}}
    p = wl.workload_plan(eps, ["lab1", "lab2"], envs, script="pass", nccl_hosts=["lab1", "lab2"], nccl_envs=nccl_envs)
    text = " ".join(p["nccl"])
    assert "-H 192.0.2.11 env NCCL_IB_HCA==rxe0:1 all_reduce_perf -b 8 -e 4194304 -f 2 -g 1 -n 20" in text
    assert wl.workload_plan(eps, ["lab1", "lab2"], envs, script="pass", nccl_hosts=["lab1"])["nccl"] is None


# ---------------------------------------------------------------- parsers
UCX_INFO_13 = (
    "[1,0]<stdout>:[1700000000.123456] [lab1:2211 :0]     ucp_worker.c:1877 UCX  INFO  ep_cfg[0]: tag(self/memory cma/memory)\n"
    "[1,0]<stdout>:[1700000000.223456] [lab1:2211 :0]     ucp_worker.c:1877 UCX  INFO  ep_cfg[1]: "
    "tag(rc_verbs/rxe0:1) rma(rc_verbs/rxe0:1) am(rc_verbs/rxe0:1) ka(ud_verbs/rxe0:1)\n"
    "[1,1]<stdout>:[1700000000.223999] [lab2:1984 :0]     ucp_worker.c:1877 UCX  INFO  ep_cfg[1]: tag(rc_verbs/rxe0:1) ka(ud_verbs/rxe0:1)\n"
)


def test_ucx_transport_report_lines():
    """Lines in the layout UCX 1.13 logs at UCX_LOG_LEVEL=info (ucp_worker_print_used_tls), tagged by mpirun."""
    cfgs = wl.parse_ucx_transports(UCX_INFO_13)
    assert [(c["rank"], c["host"], c["index"]) for c in cfgs] == [(0, "lab1", 0), (0, "lab1", 1), (1, "lab2", 1)]
    assert cfgs[1]["lanes"]["ka"] == ["ud_verbs/rxe0:1"]
    assert [c["index"] for c in wl.remote_configs(cfgs)] == [1, 1]
    assert wl.check_transports(cfgs[:2], "rxe0", 1) == []
    assert wl.check_transports(cfgs[:2], "mlx5_0", 1) == [
        "ep_cfg[1] uses rc_verbs/rxe0:1, ud_verbs/rxe0:1, not a verbs transport on mlx5_0:1"]
    tcp = wl.parse_ucx_transports("[1,0]<stdout>:[1.0] [lab1:1 :0] ucp_worker.c:1 UCX INFO ep_cfg[1]: tag(tcp/eth1)\n")
    assert wl.check_transports(tcp, "rxe0", 1) == ["ep_cfg[1] uses tcp/eth1, not a verbs transport on rxe0:1"]
    assert "no endpoint to another host" in wl.check_transports(cfgs[:1], "rxe0", 1)[0]


def test_counters_and_deltas():
    before = wl.parse_counters("/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts:10\n"
                               "/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts:12\n"
                               "/sys/class/infiniband/rxe0/ports/1/hw_counters/link_downed:0\n")
    after = wl.parse_counters("/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts:4010\n"
                              "/sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts:4112\n"
                              "/sys/class/infiniband/rxe0/ports/1/hw_counters/link_downed:0\n")
    assert wl.counter_deltas(before, after) == {"rcvd_pkts": 4100, "sent_pkts": 4000}


def _run(stdout, rc=0):
    return {"rc": rc, "stdout": stdout, "stderr": "", "delta": "0:01:02.500000", "changed": False}


def _reads(**values):
    return dict((h, _run("".join("/sys/class/infiniband/rxe0/ports/1/hw_counters/%s:%d\n" % kv for kv in v.items())))
                for h, v in values.items())


REPORT = ('[1,0]<stdout>:RDMA_FABRIC_ALLREDUCE {"ranks": 2, "hosts": ["lab1", "lab2"], "rows": ['
          '{"bytes": 8, "iterations": 20, "time_us": 900.5, "algbw_gbps": 7.1e-05, "busbw_gbps": 7.1e-05, "correct": true}, '
          '{"bytes": 4194304, "iterations": 3, "time_us": 1500000.0, "algbw_gbps": 0.0224, "busbw_gbps": 0.0224, "correct": true}]}\n')


def test_allreduce_passes_with_verbs_transport_and_rising_counters():
    p = lab_plan()
    before = _reads(lab1={"sent_pkts": 1, "rcvd_pkts": 1}, lab2={"sent_pkts": 5, "rcvd_pkts": 5})
    after = _reads(lab1={"sent_pkts": 900, "rcvd_pkts": 950}, lab2={"sent_pkts": 955, "rcvd_pkts": 905})
    entry = wl.allreduce_result(p, _run(UCX_INFO_13 + REPORT), before=before, after=after)
    assert entry["passed"] is True, entry["message"]
    assert entry["test"] == "mpi_allreduce" and entry["hosts"] == ["lab1", "lab2"]
    assert entry["bandwidth_gbps"] == 0.0224 and entry["latency_us"] == 900.5
    assert [r["bytes"] for r in entry["sizes"]] == [8, 4194304]
    assert entry["counters"]["lab2"] == {"rcvd_pkts": 900, "sent_pkts": 950}
    assert entry["transports"]["lab1"] == ["rc_verbs/rxe0:1", "ud_verbs/rxe0:1"]
    assert entry["message"].startswith("mpi_allreduce ok: 2 ranks over rc_verbs/rxe0:1, ud_verbs/rxe0:1; 8 B 900.5 us")
    assert entry["elapsed_s"] == 62.5


def test_allreduce_fails_when_a_counter_stood_still_or_tcp_carried_it():
    p = lab_plan()
    still = _reads(lab1={"sent_pkts": 1, "rcvd_pkts": 1}, lab2={"sent_pkts": 5, "rcvd_pkts": 5})
    moved = _reads(lab1={"sent_pkts": 900, "rcvd_pkts": 950}, lab2={"sent_pkts": 5, "rcvd_pkts": 5})
    entry = wl.allreduce_result(p, _run(UCX_INFO_13 + REPORT), before=still, after=moved)
    assert entry["passed"] is False
    assert "lab2: no send counter of rxe0 rose" in entry["message"] and "lab2: no receive counter" in entry["message"]
    tcp = UCX_INFO_13.replace("rc_verbs/rxe0:1", "tcp/eth1").replace("ud_verbs/rxe0:1", "tcp/eth1")
    entry = wl.allreduce_result(p, _run(tcp + REPORT), before=still, after=_reads(
        lab1={"sent_pkts": 9, "rcvd_pkts": 9}, lab2={"sent_pkts": 9, "rcvd_pkts": 9}))
    assert "lab1: ep_cfg[1] uses tcp/eth1, not a verbs transport on rxe0:1" in entry["message"]


def test_allreduce_failure_and_check_mode():
    p = lab_plan()
    entry = wl.allreduce_result(p, _run("[1,0]<stderr>:No components were able to be opened in the pml framework.\n", rc=1))
    assert entry["passed"] is False
    assert entry["message"].startswith("mpi_allreduce failed: mpirun exited with rc 1: [1,0]<stderr>:No components")
    assert "no allreduce report from rank 0" in entry["message"]
    assert wl.allreduce_result(p, {}, check_mode=True)["passed"] is None
    assert "did not run" in wl.allreduce_result(p, {"skipped": True})["message"]


def test_nccl_tests_rows_test_double():
    """TEST DOUBLE (no GPU here): two rows in nccl-tests' all_reduce_perf layout, not captured output; the column
    widths and number formats those of nccl-tests 2.19.6's writeResultHeader / writeBenchmarkLine* (src/util.cu)."""
    text = ("#                                                              out-of-place                       in-place          \n"
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n"
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n"
            "           8             2     float     sum      -1    30.12    0.00    0.00       0    29.80    0.00    0.00       0\n"
            "     4194304       1048576     float     sum      -1   412.50   10.17   10.17       0   410.10   10.23   10.23       0\n")
    rows = wl.parse_nccl_tests(text)
    assert rows == [
        {"bytes": 8, "time_us": 30.12, "algbw_gbps": 0.0, "busbw_gbps": 0.0, "correct": True},
        {"bytes": 4194304, "time_us": 412.5, "algbw_gbps": 81.36, "busbw_gbps": 81.36, "correct": True}]
    p = lab_plan()
    entry = wl.nccl_result(p, _run(text))
    assert entry["passed"] is True and entry["bandwidth_gbps"] == 81.36
    assert wl.nccl_result(p, _run(text.replace("10.17       0", "10.17       3")))["passed"] is False


def test_ucx_perftest_rows_captured_on_the_lab():
    """ucx_perftest -f rows of UCX 1.13 (no label before the figures): CAPTURED on the lab (fixtures/workload)."""
    lat = wl.parse_ucx_perftest(captured("ucx_tag_lat.txt"))
    assert lat["iterations"] == 100 and lat["latency_percentile_us"] == 21996.0 and lat["latency_us"] == 22091.175
    bw = wl.parse_ucx_perftest(captured("ucx_tag_bw.txt"))
    assert bw["iterations"] == 100 and bw["bandwidth_mbs"] == 11.07 and bw["msg_rate"] == 177.0
    assert bw["bandwidth_gbps"] == round(11.07 * 1024 * 1024 * 8 / 1e9, 6)
    # a label that is not a number is allowed; a ninth number or a short row is not a result row
    assert wl.parse_ucx_perftest("Final:  100 1 2 3 4 5 6 7")["iterations"] == 100
    assert wl.parse_ucx_perftest("[thread 0]  100 1 2 3 4 5 6 7")["iterations"] == 100
    assert wl.parse_ucx_perftest("9 100 1 2 3 4 5 6 7") is None and wl.parse_ucx_perftest("100 1 2 3") is None


def test_perftest_result_from_the_captured_rows_and_a_misread_count():
    p = lab_plan(allow_run_as_root=True)
    lat = p["perftests"][0]
    ep = ("[1732640000.123456] [lab2:4242:0]     ucp_worker.c:1888 UCX  INFO  ep_cfg[1]: tag(rc_verbs/rxe0:1);\n")
    client = {"rc": 0, "stdout": ep + captured("ucx_tag_lat.txt"), "stderr": "", "delta": "0:00:03.500000"}
    entry = wl.perftest_result(dict(lat, iterations=100), client=client, server={"finished": 1, "rc": 0})
    assert entry["passed"] is True and entry["latency_us"] == 22091.175 and entry["result"]["iterations"] == 100
    assert entry["output"][-1].split()[0] == "100" and not any("ep_cfg" in ln for ln in entry["output"])
    wrong = wl.perftest_result(dict(lat, iterations=1000), client=client, server={"finished": 1, "rc": 0})
    assert wrong["passed"] is False
    assert "the result row counts 100 iterations, 1000 were asked for" in wrong["message"]


def test_the_filter_names_the_variable_an_option_came_from():
    from ansible.errors import AnsibleFilterError
    from ansible_collections.rdma.fabric.plugins.filter.workload import workload_plan
    with pytest.raises(AnsibleFilterError) as err:
        workload_plan({}, [], {}, script="pass", timeout=10 ** 9,
                      var_names={"timeout": "rdma_validate_workload_timeout"})
    assert str(err.value).startswith("workload_plan: rdma_validate_workload_timeout (timeout): 1000000000 is out")
    assert workload_plan({}, [], {}, script="pass", nccl_binary="/opt/nccl-tests/build/all_reduce_perf")["hosts"] == []
