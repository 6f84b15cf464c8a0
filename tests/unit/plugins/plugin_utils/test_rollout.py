# -*- coding: utf-8 -*-
"""site.yml's staged rollout settings, batches and gate verdicts (plugins/plugin_utils/rollout.py)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

import pytest

from ansible.utils.helpers import pct_to_int

from ansible_collections.rdma.fabric.plugins.plugin_utils import rollout

HOSTS = ["n%02d" % i for i in range(1, 11)]


@pytest.mark.parametrize("value,expected", [
    (None, []),
    (1, [1]),
    ("5", [5]),
    ("25%", ["25%"]),
    ("100%", ["100%"]),
    ([1, 5, "25%"], [1, 5, "25%"]),
    (["2", "50%"], [2, "50%"]),
])
def test_serial_accepted_forms(value, expected):
    assert rollout.check_serial(value) == expected


@pytest.mark.parametrize("value,why", [
    (0, "all hosts at once"),
    (-3, "all hosts at once"),
    ("0", "all hosts at once"),
    ("150%", "1% to 100%"),
    ("0%", "1% to 100%"),
    (1.5, "accepted"),
    (True, "accepted"),
    ("abc", "accepted"),
    ("5\n", "accepted"),
    ("25%\n", "accepted"),
    (" 25% ", "accepted"),
    ([], "empty list"),
    ([1, "x"], "entry 2"),
    ([1, [2]], "entry 2"),
    ("[1, 5]", "not a list"),
    ({"a": 1}, "accepted"),
])
def test_serial_rejected_naming_the_variable_and_the_forms(value, why):
    with pytest.raises(rollout.RolloutError) as e:
        rollout.check_serial(value)
    text = str(e.value)
    assert text.startswith("rdma_fabric_serial: ")
    assert why in text
    assert '[1, 5, "25%"]' in text


@pytest.mark.parametrize("value,expected", [(None, 0), (0, 0), ("10", 10), ("10%", 10), (100, 100)])
def test_max_fail_accepted(value, expected):
    assert rollout.check_max_fail(value) == expected


@pytest.mark.parametrize("value", [-1, 101, "x", 1.5, True, "10 %", "5\n", [1]])
def test_max_fail_rejected(value):
    with pytest.raises(rollout.RolloutError, match=r"^rdma_fabric_max_fail_percentage: .*0 to 100"):
        rollout.check_max_fail(value)


@pytest.mark.parametrize("serial", [[1], [3], ["25%"], [1, 5, "25%"], ["10%", 2], [20], ["1%"], [1, 2, 3]])
def test_batches_match_ansible_serial(serial):
    """The same cut as ansible-core's PlaybookExecutor._get_serialized_batches (pct_to_int, last entry repeats)."""
    expected, left, i = [], list(HOSTS), 0
    while left:
        size = pct_to_int(serial[min(i, len(serial) - 1)], len(HOSTS))
        expected.append(left[:size])
        left = left[size:]
        i += 1
    assert rollout.make_batches(HOSTS, serial) == expected


def test_settings_unset_is_not_staged():
    assert rollout.settings(None, None, HOSTS) == {"job": "whole", "host_stages": True, "fleet_stages": True,
                                                   "staged": False, "all_at_once": True, "serial": [],
                                                   "max_fail_percentage": 0, "batches": [], "batch_reboot": False,
                                                   "batch_reboot_timeout": 900, "k8s_drain_timeout": 600,
                                                   "warnings": []}


@pytest.mark.parametrize("job,host_stages,fleet_stages", [
    (None, True, True), ("whole", True, True), ("slice", True, False), ("fleet", False, True),
])
def test_settings_job_says_which_stages_run(job, host_stages, fleet_stages):
    for serial in (None, [1, "50%"]):
        s = rollout.settings(serial, None, HOSTS, job=job)
        assert (s["job"], s["host_stages"], s["fleet_stages"]) == (job or "whole", host_stages, fleet_stages)
        # batches cut the host stages: a run without them (the fleet job) has none, whatever the serial
        # (and nothing to warn about: a one-batch serial or max_fail_percentage 100 is the slices' business)
        assert s["staged"] is (bool(serial) and host_stages)
        assert s["all_at_once"] is (host_stages and not serial)
        assert [len(b) for b in s["batches"]] == ([1, 5, 4] if s["staged"] else [])
    fleet = rollout.settings("100%", 100, HOSTS, job="fleet")
    assert fleet["batches"] == [] and fleet["warnings"] == []
    with pytest.raises(rollout.RolloutError, match="rdma_fabric_serial: '100%' puts all 10 hosts in one batch"):
        rollout.settings("100%", 100, HOSTS, job="slice")


@pytest.mark.parametrize("value", ["Slice", "all", "", " fleet", "fleet\n", True, 1, ["slice"], {"job": "slice"}])
def test_job_rejected_naming_the_variable_and_the_kinds(value):
    with pytest.raises(rollout.RolloutError) as e:
        rollout.settings(None, None, HOSTS, job=value)
    text = str(e.value)
    assert text.startswith("rdma_fabric_job: %r is not accepted; accepted: \"whole\"" % (value,))
    assert '"slice"' in text and '"fleet"' in text


@pytest.mark.parametrize("value,expected", [
    (None, False), (True, True), (False, False), ("true", True), ("True", True), ("yes", True),
    ("NO", False), ("false", False),
])
def test_batch_reboot_accepted(value, expected):
    assert rollout.check_batch_reboot(value) is expected


@pytest.mark.parametrize("value", ["perhaps", 1, 0, "1", "on", "10m", 5, "", " true", "true\n", 1.0, [True], {"a": 1}])
def test_batch_reboot_rejected_naming_the_variable_and_the_forms(value):
    with pytest.raises(rollout.RolloutError) as e:
        rollout.check_batch_reboot(value)
    text = str(e.value)
    assert text.startswith("rdma_fabric_batch_reboot: %r is not accepted; accepted: true or false" % (value,))
    assert '"yes" or "no"' in text


@pytest.mark.parametrize("value,expected", [(None, 900), (60, 60), ("900", 900), (999999, 999999), ("3600", 3600)])
def test_batch_reboot_timeout_accepted(value, expected):
    assert rollout.check_batch_reboot_timeout(value) == expected


@pytest.mark.parametrize("value,why", [
    ("10m", "not accepted"), (5, "too short"), ("59", "too short"), (0, "too short"), (-1, "not accepted"),
    ("-900", "not accepted"), (1.5, "not accepted"), (900.0, "not accepted"), (True, "not accepted"),
    ("", "not accepted"), ("900\n", "not accepted"), (" 900", "not accepted"), (1000000, "not accepted"),
    ("1000000", "not accepted"), ([900], "not accepted"),
])
def test_batch_reboot_timeout_rejected_naming_the_variable_and_the_forms(value, why):
    with pytest.raises(rollout.RolloutError) as e:
        rollout.check_batch_reboot_timeout(value)
    text = str(e.value)
    assert text.startswith("rdma_fabric_batch_reboot_timeout: %r is %s" % (value, why))
    assert "accepted: a whole number of seconds from 60 to 999999" in text


def test_settings_checks_the_batch_reboot_whether_staged_or_not():
    s = rollout.settings(1, None, HOSTS, "yes", "600")
    assert s["batch_reboot"] is True and s["batch_reboot_timeout"] == 600
    for serial in (None, 1):
        with pytest.raises(rollout.RolloutError, match="rdma_fabric_batch_reboot: 'perhaps'"):
            rollout.settings(serial, None, HOSTS, "perhaps")
        with pytest.raises(rollout.RolloutError, match="rdma_fabric_batch_reboot_timeout: '10m'"):
            rollout.settings(serial, None, HOSTS, True, "10m")


def test_settings_staged():
    s = rollout.settings([1, "50%"], "10", HOSTS)
    assert s["staged"] and s["max_fail_percentage"] == 10
    assert [len(b) for b in s["batches"]] == [1, 5, 4]


@pytest.mark.parametrize("value,expected", [(None, 600), (1, 1), ("600", 600), (86400, 86400)])
def test_k8s_drain_timeout_accepted(value, expected):
    assert rollout.settings(None, None, HOSTS, k8s_drain_timeout=value)["k8s_drain_timeout"] == expected


@pytest.mark.parametrize("value", ["abc", 0, -1, 10 ** 9, "86401", 1.5, True, "600\n", [600]])
def test_k8s_drain_timeout_rejected_before_any_batch_whether_staged_or_not(value):
    """The drain's own wait_timeout would fail at batch 1's drain, after the pre-batch hook ran."""
    for serial in (None, 1):
        with pytest.raises(rollout.RolloutError) as e:
            rollout.settings(serial, None, HOSTS, k8s_drain_timeout=value)
        assert str(e.value) == ("rdma_fabric_k8s_drain_timeout: %r is not accepted; accepted: a whole number of "
                                "seconds from 1 to 86400 (e.g. 600 or \"600\"); unset: 600" % (value,))


@pytest.mark.parametrize("serial", ["100%", 1000, 10, [10], [1000, 1], "10"])
def test_one_batch_for_the_whole_fleet_needs_the_explicit_flag(serial):
    with pytest.raises(rollout.RolloutError) as e:
        rollout.settings(serial, None, HOSTS)
    assert str(e.value).startswith("rdma_fabric_serial: %r puts all 10 hosts in one batch" % (serial,))
    assert "rdma_fabric_allow_single_batch: true to accept it" in str(e.value)
    s = rollout.settings(serial, None, HOSTS, allow_single_batch=True)
    assert s["batches"] == [HOSTS] and s["warnings"] == [
        "rdma_fabric_serial: %r puts all 10 hosts in one batch (accepted with rdma_fabric_allow_single_batch: true): "
        "every host changes at once" % (serial,)]
    with pytest.raises(rollout.RolloutError, match="rdma_fabric_allow_single_batch: 'perhaps' is not accepted"):
        rollout.settings(serial, None, HOSTS, allow_single_batch="perhaps")
    # one host is one batch whatever the serial; unset serial is the all-at-once path (not staged)
    assert rollout.settings(serial, None, ["n01"])["warnings"] == []
    assert rollout.settings(None, None, HOSTS)["batches"] == []


@pytest.mark.parametrize("value", ["ture", 1, "on", "perhaps"])
def test_the_drain_and_validation_flags_are_checked_strictly(value):
    """rdma_fabric_slurm_drain: "ture" would read as false (Ansible's bool filter): no drain, on a busy node."""
    with pytest.raises(rollout.RolloutError) as e:
        rollout.settings(1, None, HOSTS, flags={"rdma_fabric_slurm_drain": value, "rdma_fabric_k8s_drain": None})
    assert str(e.value).startswith("rdma_fabric_slurm_drain: %r is not accepted; accepted: true or false" % (value,))
    assert rollout.settings(1, None, HOSTS, flags={"rdma_fabric_slurm_drain": "yes", "rdma_fabric_k8s_drain": None})


def test_max_fail_percentage_of_100_is_a_warning():
    s = rollout.settings([1, "100%"], 100, HOSTS)
    assert [len(b) for b in s["batches"]] == [1, 9]
    assert s["warnings"] == ["rdma_fabric_max_fail_percentage: 100 stops the rollout only where every host of a batch "
                             "failed (as Ansible does): the next batch runs after one in which all hosts but one failed "
                             "their health gate"]
    assert rollout.settings([1, "100%"], 99, HOSTS)["warnings"] == []
    assert rollout.settings(None, 100, HOSTS)["warnings"] == []  # not staged: no batch to stop


def test_the_filter_shows_the_warnings(monkeypatch):
    from ansible_collections.rdma.fabric.plugins.filter import rollout as rollout_filter
    shown = []
    monkeypatch.setattr(rollout_filter.Display, "warning", lambda self, msg, *a, **kw: shown.append(msg))
    result = rollout_filter.rollout_settings([1, "100%"], 100, HOSTS)
    assert shown == ["rdma.fabric rollout: " + w for w in result["warnings"]] and len(shown) == 1


def test_batch_number_and_reference():
    s = rollout.settings([1, 3], 0, HOSTS)
    assert rollout.batch(s, ["n01"], []) == {"number": 1, "of": 4, "hosts": ["n01"], "reference": None}
    b = rollout.batch(s, ["n02", "n03", "n04"], ["n01"])
    assert (b["number"], b["reference"]) == (2, "n01")
    assert rollout.batch(s, ["n05", "n06"], ["n01", "n02", "n03", "n04"])["reference"] == "n04"


def test_gate_names_batch_host_and_reason():
    b = {"number": 2, "of": 3, "hosts": ["n02", "n03"], "reference": "n01"}
    results = [
        {"test": "rping", "hosts": ["n02", "n03"], "passed": True, "message": "ok"},
        {"test": "ib_write_bw", "hosts": ["n03", "n01"], "passed": False, "message": "0.1 Gb/s below 50"},
        {"test": "precheck", "hosts": ["n01", "n02"], "passed": None, "message": "not run"},
    ]
    v = rollout.gate(b, results, live_hosts=["n02", "n03"])
    assert not v["ok"]
    assert v["failed"] == {"n03": ["ib_write_bw: 0.1 Gb/s below 50"], "n02": ["precheck: not run"]}
    assert v["message"].startswith("Rollout stopped at batch 2 of 3 (n02, n03): the health gate failed for ")
    assert "n03: ib_write_bw: 0.1 Gb/s below 50" in v["message"]


def test_gate_dropped_host_and_pass():
    b = {"number": 1, "of": 2, "hosts": ["n01", "n02"], "reference": None}
    v = rollout.gate(b, [{"test": "precheck", "hosts": ["n01", "n02"], "passed": False, "message": "n02: failed"}],
                     live_hosts=["n01"])
    assert v["failed"] == {"n02": ["failed or unreachable during the batch"]} and v["passed"] == ["n01"]
    ok = rollout.gate(dict(b, reference="n00"), [], live_hosts=["n01", "n02"])
    assert ok["ok"] and ok["message"] == "batch 1 of 2 (n01, n02) passed its health gate (tested against n00)"


def test_drain_plan_drains_only_hosts_that_change_and_every_unknown(tmp_path):
    path = tmp_path / "fabric-plan.json"
    path.write_text(json.dumps({"check_mode": True, "failed": {"n4": [{"stage": "s", "task": "t", "message": "m"}]},
                                "unreachable": ["n5"], "hosts": {
                                    "n1": {"changes": 0, "stages": {}}, "n2": {"changes": 3, "stages": {}},
                                    "n4": {"changes": 0, "stages": {}}, "n5": {"changes": 0, "stages": {}}}}))
    assert rollout.drain_decisions(str(path), ["n1", "n2", "n3", "n4", "n5"]) == {
        "n1": {"drain": False, "why": "the plan shows nothing to change"},
        "n2": {"drain": True, "why": "3 changes planned"},
        "n3": {"drain": True, "why": "not in the plan"},
        "n4": {"drain": True, "why": "failed in the plan"},
        "n5": {"drain": True, "why": "unreachable in the plan"},
    }
    assert rollout.drain_decisions(None, ["n1"]) is None and rollout.drain_decisions("", ["n1"]) is None


@pytest.mark.parametrize("content,words", [
    (None, "cannot read"),
    ("{", "cannot read"),
    ('{"check_mode": false, "hosts": {}}', "is not the plan of a check-mode run"),
    ('{"check_mode": true}', "is not the plan of a check-mode run"),
    ("[]", "is not the plan of a check-mode run"),
    # a negative count would read as "nothing to change": the host would not be drained
    ('{"check_mode": true, "hosts": {"n1": {"changes": -1, "stages": {}}}}', "hosts.n1.changes is -1, not a count"),
    ('{"check_mode": true, "hosts": {"n1": {"changes": true, "stages": {}}}}', "hosts.n1.changes is True, not a count"),
])
def test_drain_plan_refuses_what_is_not_a_check_mode_plan(tmp_path, content, words):
    path = tmp_path / "plan.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(rollout.RolloutError) as err:
        rollout.drain_decisions(str(path), ["n1"])
    assert str(err.value).startswith("rdma_fabric_drain_plan: ") and words in str(err.value)
