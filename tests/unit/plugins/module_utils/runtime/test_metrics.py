# -*- coding: utf-8 -*-
"""Unit tests for module_utils/runtime/metrics.py (the RDMA metrics collector).

Trees: the sysfs fixtures (tests/unit/fixtures/sysfs): ``lab_rxe_lab1`` is a
REAL capture of a lab VM (rxe0 on eth1, its real hw_counters names),
``procfs_mlx5_0`` a REAL capture of an mlx5 port's counters, and
``derived_roce_mlx5_ofed`` a DERIVED mlx5 RoCE host (ECN files, rdma_cm
configfs, CNP counters). The drift check runs the real QoS engine in check
mode on them (reads only: sysfs, configfs). The text is checked with the real
``promtool check metrics`` (Debian's prometheus, tools/deps/apt-packages.txt).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import shutil
import stat
import subprocess

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "..", "fixtures", "sysfs")


def sysfs(name):
    return os.path.join(FIXTURES, name, "sys")


def config(tmp_path, tree, **over):
    raw = {"textfile": str(tmp_path / "text" / "rdma_fabric.prom"), "saved_dir": str(tmp_path / "saved"),
           "state_dir": str(tmp_path / "state"), "apply_lock": str(tmp_path / "apply.lock"),
           "sysfs": os.path.abspath(sysfs(tree)), "procfs": os.path.abspath(os.path.join(FIXTURES, tree, "proc"))}
    raw.update(over)
    return metrics.check_config(raw)


def samples(text):
    """``{(name, frozenset(labels)): value}`` of an exposition text (test reader for plain label values)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        if "{" in head:
            name, body = head[:-1].split("{", 1)
            labels = frozenset(tuple(part.split("=", 1)[0:1]) + (part.split("=", 1)[1].strip('"'),)
                               for part in body.split('",') if part)
        else:
            name, labels = head, frozenset()
        out[(name, labels)] = float(value)
    return out


def value(text, name, **labels):
    found = [v for (n, lab), v in samples(text).items() if n == name and set(labels.items()) <= set(lab)]
    assert len(found) == 1, (name, labels, found)
    return found[0]


def promtool_check(text):
    proc = subprocess.run(["promtool", "check", "metrics"], input=text.encode(), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, check=False)
    assert proc.returncode == 0, proc.stdout.decode()


# --------------------------------------------------------------------------
# configuration
# --------------------------------------------------------------------------
def test_defaults_fill_an_empty_configuration():
    cfg = metrics.check_config({})
    assert cfg["textfile"] == "/var/lib/prometheus/node-exporter/rdma_fabric.prom"
    assert cfg["gpudirect"] == "auto" and cfg["drift"] is True and cfg["expected_ports"] == []


def test_missing_configuration_file_means_defaults(tmp_path):
    assert metrics.load_config(str(tmp_path / "none.json")) == metrics.check_config({})


@pytest.mark.parametrize("raw, message", [
    ({"textfiel": "/x.prom"}, r"unknown key\(s\) textfiel; allowed: apply_lock, collection_version"),
    ({"textfile": "relative.prom"}, r"textfile: expected an absolute path"),
    ({"textfile": "/var/lib/x/rdma.txt"}, r"textfile: .* must name a file ending in \.prom"),
    ({"gpudirect": "yes"}, r"gpudirect: 'yes' is not allowed; choose one of auto, required, ignore"),
    ({"drift": "true"}, r"drift: expected true or false"),
    ({"expected_ports": "auto"}, r"expected_ports: expected a list of \{match, rate_gbps\}"),
    ({"expected_ports": [{"match": "mlx5_0/a"}]}, r"expected_ports\[0\]\.match: 'mlx5_0/a' is not allowed; allowed: an RDMA"),
    # a quote or brace would end the label value of a series (the textfile would not parse)
    ({"expected_ports": [{"match": 'mlx5"0}'}]}, r"expected_ports\[0\]\.match: 'mlx5\"0}' is not allowed"),
    ({"expected_ports": [{"match": "mlx5_0", "rate_gbps": -1}]}, r"expected_ports\[0\]\.rate_gbps: -1 is not allowed"),
    ({"expected_ports": [{"match": "mlx5_0/1"}, {"match": "mlx5_1", "rate_gbps": float("nan")}]},
     r"expected_ports\[1\]\.rate_gbps: nan is not allowed"),
    ({"expected_ports": [{"match": "mlx5_0", "rate_gbps": float("inf")}]}, r"expected_ports\[0\]\.rate_gbps: inf"),
    ({"expected_ports": [{"match": "mlx5_0", "speed": 1}]}, r"expected_ports\[0\]: each entry must be \{match: DEVICE"),
])
def test_bad_configuration_names_the_key(raw, message):
    with pytest.raises(metrics.ConfigError, match=message):
        metrics.check_config(raw)


def test_unreadable_json_is_a_configuration_error(tmp_path):
    path = tmp_path / "metrics.json"
    path.write_text("{not json")
    with pytest.raises(metrics.ConfigError, match="not valid JSON"):
        metrics.load_config(str(path))


def test_expectation_matches_device_globs_and_ports():
    cfg = metrics.check_config({"expected_ports": [{"match": "mlx5_0/2", "rate_gbps": 100},
                                                   {"match": "mlx5_*", "rate_gbps": 400}, {"match": "rxe0"}]})
    assert metrics.expectation(cfg, "mlx5_0", 2) == (True, 100.0)
    assert metrics.expectation(cfg, "mlx5_0", 1) == (True, 400.0)
    assert metrics.expectation(cfg, "rxe0", 1) == (True, None)
    assert metrics.expectation(cfg, "siw0", 1) == (False, None)


# --------------------------------------------------------------------------
# reading real captures
# --------------------------------------------------------------------------
def test_lab_capture_rxe_port_and_its_counters(tmp_path):
    cfg = config(tmp_path, "lab_rxe_lab1", expected_ports=[{"match": "rxe0/1", "rate_gbps": 2.5}])
    snap = metrics.collect(cfg)
    assert snap.errors == {"ports": 0, "pfc": 0, "drift": 0, "gpudirect": 0, "apply": 0}
    text = metrics.render(snap)
    promtool_check(text)
    info = [lab for (name, lab) in samples(text) if name == "rdma_fabric_port_info"]
    assert dict(info[0]) == {"device": "rxe0", "port": "1", "netdev": "eth1", "link_layer": "Ethernet", "kind": "roce",
                             "driver": "rdma_rxe", "soft": "true"}
    assert value(text, "rdma_fabric_port_state", device="rxe0") == 4
    assert value(text, "rdma_fabric_port_up", device="rxe0") == 1
    assert value(text, "rdma_fabric_port_physical_state", device="rxe0") == 5
    assert value(text, "rdma_fabric_port_rate_bytes_per_second", device="rxe0") == 2.5e9 / 8
    assert value(text, "rdma_fabric_port_expected_rate_bytes_per_second", device="rxe0") == 2.5e9 / 8
    assert value(text, "rdma_fabric_port_mtu_bytes", device="rxe0") == 1500
    # rxe has no counters/ folder: its hw_counters give packets and transport errors
    hw = os.path.join(sysfs("lab_rxe_lab1"), "devices", "virtual", "infiniband", "rxe0", "ports", "1", "hw_counters")
    with open(os.path.join(hw, "sent_pkts")) as f:
        assert value(text, "rdma_fabric_port_transmit_packets_total", device="rxe0") == int(f.read())
    for name in ("receive_packets", "out_of_sequence", "packet_sequence_errors", "retransmits", "link_downed",
                 "retry_exceeded_errors", "duplicate_requests"):
        assert ("rdma_fabric_port_%s_total" % name) in text
    assert "rdma_fabric_port_symbol_errors_total" not in text  # no such file on rxe: no metric, no error
    assert "lifespan" not in text


def test_real_mlx5_counters_in_base_units(tmp_path):
    snap = metrics.collect(config(tmp_path, "procfs_mlx5_0"))
    text = metrics.render(snap)
    promtool_check(text)
    counters = os.path.join(sysfs("procfs_mlx5_0"), "class", "infiniband", "mlx5_0", "ports", "1", "counters")
    with open(os.path.join(counters, "port_rcv_data")) as f:
        words = int(f.read())
    assert value(text, "rdma_fabric_port_receive_bytes_total", device="mlx5_0") == words * 4
    for name in ("symbol_errors", "link_downed", "receive_errors", "transmit_discards", "out_of_sequence",
                 "packet_sequence_errors", "retransmits", "ack_timeouts", "out_of_buffer"):
        assert ("rdma_fabric_port_%s_total" % name) in text, name


def test_derived_mlx5_roce_host_congestion_counters(tmp_path):
    text = metrics.render(metrics.collect(config(tmp_path, "derived_roce_mlx5_ofed")))
    for name in ("cnp_sent", "cnp_handled", "cnp_ignored", "ecn_marked_packets"):
        assert value(text, "rdma_fabric_port_%s_total" % name, device="mlx5_0") >= 0


def test_unreadable_sysfs_degrades_to_an_error_count_not_a_traceback(tmp_path):
    (tmp_path / "notsys").write_text("a file, not a sysfs folder")
    cfg = config(tmp_path, "lab_rxe_lab1", sysfs=str(tmp_path / "notsys"))
    snap = metrics.collect(cfg)
    assert snap.errors["ports"] == 1 and snap.ports == []
    assert "sysfs_path" in snap.messages[0][1]
    text = metrics.render(snap)
    promtool_check(text)
    assert value(text, "rdma_fabric_collector_errors", section="ports") == 1
    assert "rdma_fabric_port_up" not in text


# --------------------------------------------------------------------------
# drift: the QoS engine in check mode on saved lossless settings
# --------------------------------------------------------------------------
def save(cfg, netdev, args):
    os.makedirs(cfg["saved_dir"], exist_ok=True)
    with open(os.path.join(cfg["saved_dir"], netdev + ".json"), "w") as f:
        json.dump(dict(args, netdev=netdev), f)


def test_drift_per_option_from_the_saved_settings(tmp_path):
    cfg = config(tmp_path, "derived_roce_mlx5_ofed")
    # the fixture's ens1f0: MTU 9000, CNP DSCP 48 on priority 6, rdma_cm ToS as captured
    save(cfg, "ens1f0", {"mtu": 9000, "cnp": {"dscp": 48, "priority": 5}, "on_unsupported": "fail"})
    snap = metrics.collect(cfg)
    assert snap.errors["drift"] == 0, snap.messages
    assert snap.drift == [{"netdev": "ens1f0", "device": "mlx5_0", "port": 1, "ok": True, "error": None,
                           "options": {"mtu": False, "cnp": True}, "unsupported": []}]
    text = metrics.render(snap)
    promtool_check(text)
    assert value(text, "rdma_fabric_qos_drift", netdev="ens1f0", option="cnp") == 1
    assert value(text, "rdma_fabric_qos_drift", netdev="ens1f0", option="mtu") == 0
    assert value(text, "rdma_fabric_qos_drift_check_success", netdev="ens1f0") == 1


def test_drift_check_changes_nothing(tmp_path):
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(FIXTURES, "derived_roce_mlx5_ofed"), str(tree), symlinks=True)
    cfg = config(tmp_path, "derived_roce_mlx5_ofed", sysfs=str(tree / "sys"))
    save(cfg, "ens1f0", {"mtu": 1500, "cnp": {"dscp": 40, "priority": 5}})

    def snapshot():
        out = {}
        for dirpath, dirnames, filenames in os.walk(str(tree)):
            for name in dirnames + filenames:
                path = os.path.join(dirpath, name)
                st = os.lstat(path)
                content = None
                if stat.S_ISREG(st.st_mode):
                    with open(path, "rb") as f:
                        content = f.read()
                out[path] = (st.st_mode, content)
        return out

    before = snapshot()
    snap = metrics.collect(cfg)
    assert snap.drift[0]["options"] == {"mtu": True, "cnp": True}
    assert snapshot() == before


def test_saved_port_that_is_gone_or_unreadable(tmp_path):
    cfg = config(tmp_path, "lab_rxe_lab1")
    save(cfg, "eth7", {"mtu": 9000})
    os.makedirs(cfg["saved_dir"], exist_ok=True)
    with open(os.path.join(cfg["saved_dir"], "eth8.json"), "w") as f:
        f.write("{broken")
    snap = metrics.collect(cfg)
    by_netdev = dict((d["netdev"], d) for d in snap.drift)
    assert by_netdev["eth7"]["ok"] is False and "does not exist" in by_netdev["eth7"]["error"]
    assert by_netdev["eth8"]["ok"] is False and "unreadable saved settings" in by_netdev["eth8"]["error"]
    text = metrics.render(snap)
    assert value(text, "rdma_fabric_qos_drift_check_success", netdev="eth7") == 0
    assert value(text, "rdma_fabric_collector_errors", section="drift") == 1  # the unreadable file


def test_drift_check_waits_for_no_running_reapply(tmp_path):
    """A re-apply holding its lock (as apply-lossless does, LOCK_EX) makes the run leave drift out."""
    import fcntl
    cfg = config(tmp_path, "derived_roce_mlx5_ofed")
    save(cfg, "ens1f0", {"mtu": 9000})
    with open(cfg["apply_lock"], "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        snap = metrics.collect(cfg)
    assert snap.drift == [] and "re-apply is running" in snap.drift_skipped
    assert value(metrics.render(snap), "rdma_fabric_qos_drift_check_skipped") == 1
    assert metrics.collect(cfg).drift[0]["ok"] is True  # lock released: checked


# --------------------------------------------------------------------------
# PFC: ethtool names per driver
# --------------------------------------------------------------------------
def test_ethtool_pause_counter_names_of_each_driver():
    """Names as mlx5, ice and bnxt_en print them in ``ethtool -S`` (hand-written sample, not a capture)."""
    stats = {"rx_prio3_pause": 7, "tx_prio3_pause": 9, "rx_prio3_pause_duration": 2500000, "rx_prio3_pause_transition": 4,
             "rx_priority_5_xoff.nic": 11, "tx_pfc_ena_frames_pri6": 13, "rx_bytes": 1, "tx_pause_storm_error_events": 2}
    ethtool, storm = metrics.pfc_from_ethtool(stats)
    assert ethtool == {("frames", "rx", 3): 7, ("frames", "tx", 3): 9, ("duration", "rx", 3): 2.5,
                       ("frames", "rx", 5): 11, ("frames", "tx", 6): 13}
    assert storm == {"error": 2}


def test_pfc_metrics_prefer_driver_counters_then_dcb(tmp_path):
    snap = metrics.Snapshot()
    dcb = {"enabled": [3], "requests": [0, 0, 0, 5, 0, 0, 0, 0], "indications": [0, 0, 0, 6, 0, 0, 0, 0]}
    snap.pfc[("mlx5_0", 1)] = {"netdev": "ens1f0", "dcb": dcb, "storm": {"warning": 1},
                               "ethtool": {("frames", "rx", 3): 60, ("duration", "rx", 3): 1.5}}
    text = metrics.render(snap)
    promtool_check(text)
    assert value(text, "rdma_fabric_pfc_enabled", priority="3") == 1
    assert value(text, "rdma_fabric_pfc_enabled", priority="4") == 0
    assert value(text, "rdma_fabric_pfc_pause_frames_total", priority="3", direction="rx") == 60  # ethtool
    assert value(text, "rdma_fabric_pfc_pause_frames_total", priority="3", direction="tx") == 5   # DCB requests
    assert value(text, "rdma_fabric_pfc_pause_duration_seconds_total", priority="3", direction="rx") == 1.5
    assert value(text, "rdma_fabric_pfc_storm_events_total", level="warning") == 1


# --------------------------------------------------------------------------
# the textfile and the command line
# --------------------------------------------------------------------------
def test_infinity_in_the_exposition_format():
    w = metrics._Writer()
    w.add("x", "gauge", "help", (("a", "1"),), float("inf"))
    w.add("x", "gauge", "help", (("a", "2"),), float("-inf"))
    w.add("x", "gauge", "help", (("a", "3"),), float("nan"))
    assert w.text().splitlines()[2:] == ['x{a="1"} +Inf', 'x{a="2"} -Inf', 'x{a="3"} NaN']
    promtool_check(w.text())


def test_a_port_folder_that_vanishes_mid_read_says_so(tmp_path):
    """The port's state file is gone when the collector reads it (the device went away between the listing and
    the read): the expected port is reported down and the read error counted, not left without port_up."""
    tree = tmp_path / "tree"
    shutil.copytree(os.path.join(FIXTURES, "lab_rxe_lab1"), str(tree), symlinks=True)
    port = os.path.join(str(tree), "sys", "devices", "virtual", "infiniband", "rxe0", "ports", "1")
    os.unlink(os.path.join(port, "state"))
    cfg = config(tmp_path, "lab_rxe_lab1", sysfs=str(tree / "sys"), expected_ports=[{"match": "rxe0/1"}])
    snap = metrics.collect(cfg)
    text = metrics.render(snap)
    promtool_check(text)
    assert value(text, "rdma_fabric_port_up", device="rxe0") == 0
    assert value(text, "rdma_fabric_port_expected_up", device="rxe0") == 1
    assert value(text, "rdma_fabric_collector_errors", section="ports") == 1
    assert "rxe0/1: the port state could not be read" in snap.messages[0][1]


def test_an_expected_port_or_device_that_is_gone_is_reported_down(tmp_path):
    """An exact expected port that is not there gets port_up 0 and port_expected_up 1 (RdmaPortDown fires); an entry
    that is a glob or a device without a port reports how many ports it found (RdmaExpectedPortsMissing at 0). The
    health check says the same."""
    from ansible_collections.rdma.fabric.plugins.module_utils.runtime import health_check
    cfg = config(tmp_path, "lab_rxe_lab1", expected_ports=[{"match": "rxe0/1"}, {"match": "mlx5_0/1", "rate_gbps": 100},
                                                           {"match": "mlx5_*"}, {"match": "rxe*"}])
    snap = metrics.collect(cfg)
    text = metrics.render(snap)
    promtool_check(text)
    assert value(text, "rdma_fabric_port_up", device="rxe0") == 1
    assert value(text, "rdma_fabric_port_up", device="mlx5_0", port="1") == 0
    assert value(text, "rdma_fabric_port_expected_up", device="mlx5_0", port="1") == 1
    assert value(text, "rdma_fabric_port_expected_rate_bytes_per_second", device="mlx5_0") == 100 * 1.25e8
    assert not [n for (n, lab) in samples(text) if n == "rdma_fabric_port_info" and ("device", "mlx5_0") in lab]
    assert value(text, "rdma_fabric_expected_ports_found", match="mlx5_*") == 0
    assert value(text, "rdma_fabric_expected_ports_found", match="rxe*") == 1
    assert not [n for (n, lab) in samples(text) if n == "rdma_fabric_expected_ports_found" and ("match", "rxe0/1") in lab]
    problems, _summary = health_check.evaluate(snap, cfg)
    assert problems == ["expected RDMA port mlx5_0/1 is missing", "expected RDMA port mlx5_* is missing"]


def test_label_values_are_escaped():
    w = metrics._Writer()
    w.add("x_info", "gauge", "help", (("a", 'q"u\\o\nte'),), 1)
    assert 'x_info{a="q\\"u\\\\o\\nte"} 1' in w.text()


def test_cli_writes_the_textfile_atomically_and_records_the_apply(tmp_path):
    cfg_path = tmp_path / "metrics.json"
    text_dir = tmp_path / "text"
    text_dir.mkdir()
    cfg = {"textfile": str(text_dir / "rdma_fabric.prom"), "state_dir": str(tmp_path / "state"),
           "saved_dir": str(tmp_path / "saved"), "sysfs": os.path.abspath(sysfs("lab_rxe_lab1")),
           "collection_version": "9.8.7"}
    cfg_path.write_text(json.dumps(cfg))
    (text_dir / "rdma_fabric.prom").write_text("old\n")
    assert metrics.cli_main(["--config", str(cfg_path), "--record-apply"]) == 0
    assert sorted(os.listdir(str(text_dir))) == ["rdma_fabric.prom"]  # no temporary file left
    text = (text_dir / "rdma_fabric.prom").read_text()
    assert stat.S_IMODE(os.stat(str(text_dir / "rdma_fabric.prom")).st_mode) == 0o644
    assert value(text, "rdma_fabric_build_info", version="9.8.7") == 1
    with open(str(tmp_path / "state" / metrics.APPLY_STAMP)) as f:
        assert value(text, "rdma_fabric_lossless_last_apply_timestamp_seconds") == pytest.approx(float(f.read()), abs=0.001)
    promtool_check(text)


def test_cli_bad_configuration_exits_2(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"gpudirect": "maybe"}))
    assert metrics.cli_main(["--config", str(path), "--textfile", "-"]) == 2
    assert "gpudirect: 'maybe' is not allowed" in capsys.readouterr().err


def test_cli_unwritable_textfile_exits_1_and_leaves_no_file(tmp_path, capsys):
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps({"textfile": str(tmp_path / "missing" / "rdma_fabric.prom"),
                                "sysfs": os.path.abspath(sysfs("lab_rxe_lab1")), "saved_dir": str(tmp_path / "s")}))
    assert metrics.cli_main(["--config", str(path)]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()


def test_drift_with_the_runs_facts_is_the_same_as_reading_them_again(tmp_path):
    """The collector hands the facts it read to the engine (no gather per port): same answer."""
    from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
    tree = os.path.abspath(sysfs("derived_roce_mlx5_ofed"))
    from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import port_request
    args = port_request({"netdev": "ens1f0", "mtu": 1500, "cnp": {"dscp": 48, "priority": 6}})
    facts = gather_rdma_facts(tree, gather_subset=["counters"])
    assert metrics.check_drift("ens1f0", args, tree, facts) == metrics.check_drift("ens1f0", args, tree)
    assert metrics.check_drift("ens1f0", args, tree, facts)["options"] == {"mtu": True, "cnp": False}
