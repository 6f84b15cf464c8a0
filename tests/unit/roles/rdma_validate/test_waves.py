# -*- coding: utf-8 -*-
"""The rdma_validate role's orchestration, run by ansible-playbook on this machine.

Three inventory hosts on a local connection carry the REAL lab facts of lab1 and lab2 and a
copy of lab2's with its own address (tests/unit/fixtures/fabric); a first play is a TEST
DOUBLE for rdma.fabric.rdma_device_facts (it sets those facts). The role then really runs:
the checks and the plan on the controller, and each host's side of every wave with the real
rdma.fabric.perftest module. This machine has no RDMA device and no rping, so every test
fails with the module's own message: what is shown here is the orchestration (waves, each
host's record, the results in plan order, validation.json), not traffic. Traffic between
two hosts is proven in the lab (molecule/site).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re
import subprocess
import sys

import yaml

from ansible_collections.rdma.fabric.tests.unit.fixtures.fabric.lab_hosts import lab_facts

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", "..", ".."))

PLAY = """
- name: Load the lab facts (TEST DOUBLE for rdma_device_facts)
  hosts: rdma_nodes
  gather_facts: false
  tasks:
    - name: Set ansible_facts.rdma
      ansible.builtin.set_fact:
        rdma: "{{ lookup('ansible.builtin.file', facts_file) | from_json }}"
        os_family: Debian
        cacheable: true

- name: Validate
  hosts: rdma_nodes
  gather_facts: false
  roles:
    - role: rdma.fabric.rdma_validate
      vars:
        rdma_validate_tests: [rping]
        rdma_validate_install_tools: false
        rdma_validate_refresh_facts: false
        rdma_validate_timeout: 5
        rdma_validate_connect_retries: 1
        rdma_validate_results_dir: "{{ out }}"
        rdma_validate_fail_on_error: false
"""


# The second play as playbooks/validate.yml has it: the role imported without Ansible's check of its
# arguments per host, which the role then does once (tasks/main.yml).
PLAY_IMPORTED = PLAY.split("- name: Validate", 1)[0] + """- name: Validate
  hosts: rdma_nodes
  gather_facts: false
  tasks:
    - name: Validate the fabric
      ansible.builtin.import_role:
        name: rdma.fabric.rdma_validate
        rolespec_validate: false
      vars:
        rdma_validate_tests: [rping]
        rdma_validate_install_tools: false
        rdma_validate_refresh_facts: false
        rdma_validate_results_dir: "{{ out }}"
        rdma_validate_fail_on_error: false
        __rdma_validate_check_arguments_once: true
"""


def run(tmp_path, hosts, extra=(), host_vars=None, play=PLAY):
    facts = lab_facts()
    tmp_path.mkdir(parents=True, exist_ok=True)
    inv_hosts = {}
    for name in hosts:
        path = tmp_path / ("%s.json" % name)
        path.write_text(json.dumps(facts[name]))
        inv_hosts[name] = dict({"facts_file": str(path)}, **(host_vars or {}).get(name, {}))
    inventory = {"all": {"children": {"rdma_nodes": {"hosts": inv_hosts, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "play.yml").write_text("---" + play)
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="memory",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    out = tmp_path / "out"
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i",
                           str(tmp_path / "inventory.yml"), "-e", "out=%s" % out] + list(extra) + [str(tmp_path / "play.yml")],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=600)
    result = json.loads((out / "validation.json").read_text()) if (out / "validation.json").exists() else None
    return proc, result


def test_waves_run_every_side_and_collect_every_result(tmp_path):
    proc, result = run(tmp_path, ["lab1", "lab2", "lab3"], extra=["-e", "rdma_validate_concurrency=1"])
    assert proc.returncode == 0, proc.stdout[-5000:]
    # a host with no side in a wave skips that side's tasks; none fails them (the lab showed "...ignoring"
    # when delegate_to was templated for a side the host does not have)
    assert "...ignoring" not in proc.stdout, proc.stdout[-5000:]
    assert "3 pairs, 0 pre-checks failed, 3 runs in 3 waves (at most 1 pairs at a time)" in proc.stdout
    for wave in (1, 2, 3):
        assert "TASK [rdma.fabric.rdma_validate : Run the client side (wave %d)]" % wave in proc.stdout
    tests = [r for r in result["validation"] if r["test"] == "rping"]
    assert [(r["server"], r["client"]) for r in tests] == [("lab1", "lab2"), ("lab2", "lab3"), ("lab3", "lab1")]
    # both sides ran and reported (no "did not run"): the module's own message from each side
    for r in tests:
        assert r["passed"] is False
        assert r["message"].startswith("rping not found on this host") and "(server: rping not found" in r["message"]
    assert result["summary"]["by_test"]["precheck"]["passed"] == 3


def test_two_hosts_one_pair_one_wave_as_before(tmp_path):
    proc, result = run(tmp_path, ["lab1", "lab2"])
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "1 pairs, 0 pre-checks failed, 1 runs in 1 waves" in proc.stdout
    assert [(r["test"], r["server"], r["client"]) for r in result["validation"]] == [
        ("precheck", "lab1", "lab2"), ("rping", "lab1", "lab2")]


def test_check_mode_runs_no_test_and_writes_nothing(tmp_path):
    proc, result = run(tmp_path, ["lab1", "lab2", "lab3"], extra=["--check"])
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert result is None
    assert "Run the client side" not in proc.stdout
    assert "3 passed, 0 failed, 3 not run" in proc.stdout


def test_bad_values_stop_before_anything_runs(tmp_path):
    # with the tool install on (the role's one change), the check runs first and stops the role before it
    proc, result = run(tmp_path / "nan", ["lab1", "lab2"],
                       extra=["-e", '{"rdma_validate_max_latency_us": NaN, "rdma_validate_install_tools": true}'])
    assert proc.returncode == 2 and result is None
    assert "rdma_validate_max_latency_us: nan is not allowed; allowed: a finite number >= 0" in proc.stdout
    assert "Prepare the hosts" not in proc.stdout
    proc, result = run(tmp_path / "ip", ["lab1", "lab2"], host_vars={"lab2": {"rdma_validate_data_ip": "192.0.2.999"}})
    assert proc.returncode == 2 and result is None
    assert "rdma_validate_data_ip of host lab2: '192.0.2.999' is not allowed; allowed: an IPv4 or IPv6 address" in proc.stdout
    assert "Run the client side" not in proc.stdout


def test_imported_as_validate_yml_checks_the_arguments_once(tmp_path):
    # planning only (check mode, no install, no fact refresh): the one check, then the plan, nothing per host
    proc, result = run(tmp_path / "ok", ["lab1", "lab2", "lab3"], extra=["--check"], play=PLAY_IMPORTED)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert "Validating arguments against arg spec" not in proc.stdout
    assert proc.stdout.count("TASK [rdma.fabric.rdma_validate : Check the role's arguments once") == 1
    assert "3 passed, 0 failed, 3 not run" in proc.stdout
    # the same spec as Ansible's own check: a value outside the choices stops the play before the plan
    proc, result = run(tmp_path / "bad", ["lab1", "lab2"], extra=["--check", "-e", "rdma_validate_topology=mesh"],
                       play=PLAY_IMPORTED)
    assert proc.returncode == 2 and result is None
    assert "value of rdma_validate_topology must be one of: ring, all_pairs, got: mesh" in proc.stdout
    assert "Pair the hosts" not in proc.stdout
    # a host variable checked per host: every host's, by the plan's check
    proc, result = run(tmp_path / "ip", ["lab1", "lab2"], host_vars={"lab2": {"rdma_validate_data_ip": "192.0.2.999"}},
                       extra=["--check"], play=PLAY_IMPORTED)
    assert proc.returncode == 2 and result is None
    assert "rdma_validate_data_ip of host lab2: '192.0.2.999' is not allowed" in proc.stdout


def test_a_plan_says_which_test_tools_a_real_run_would_install(tmp_path):
    # check mode on a host without the tools: the package manager is not asked to simulate (apt cannot
    # without python3-apt, which failed the rollout lab's plan); the plan says what a real run installs
    empty = tmp_path / "no-tools"
    empty.mkdir(parents=True)
    proc, result = run(tmp_path, ["lab1", "lab2"], extra=["--check", "-e", json.dumps(
        {"rdma_validate_install_tools": True, "__rdma_validate_tool_dir": str(empty)})])
    assert proc.returncode == 0, proc.stdout[-5000:]
    text = " ".join(proc.stdout.split())
    # both hosts report the planned install, in whichever order they finish
    said = re.search(r"Say which test tools a real run would install\] \**\s*(.*?)TASK \[", text)
    assert said and sorted(re.findall(r"changed: \[(lab\d)\]", said.group(1))) == ["lab1", "lab2"], text[-3000:]
    assert "would install" in text and "(a test tool is missing)" in text
    # the install itself did not run (before, apt failed it in check mode on a host without python3-apt)
    assert not re.search(r"Install the test tools when one is missing\] \**\s*(ok|changed|fatal|failed)", text)


# site.yml's validation play: the facts refresh asked for (the default), and __rdma_validate_facts_current
# where the site's stages read the facts after the host's last change.
PLAY_SITE = PLAY_IMPORTED.replace("        rdma_validate_refresh_facts: false\n", "        rdma_validate_refresh_facts: true\n"
                                  "        __rdma_validate_facts_current: \"{{ facts_current }}\"\n")


def facts_read_outcomes(out):
    """The outcome per host of the role's facts read, from ansible-playbook's default output."""
    section = out.split("TASK [rdma.fabric.rdma_validate : Read the RDMA facts]", 1)[1].split("TASK [", 1)[0]
    return dict((m.group(2), m.group(1)) for m in re.finditer(r"^(\w+): \[(\w+)\]", section, re.M))


def test_facts_read_after_the_last_change_are_not_read_again(tmp_path):
    assert "__rdma_validate_facts_current" in PLAY_SITE and "rdma_validate_refresh_facts: true" in PLAY_SITE
    proc, result = run(tmp_path / "current", ["lab1", "lab2"], extra=["-e", "facts_current=true"], play=PLAY_SITE)
    assert proc.returncode == 0, proc.stdout[-5000:]
    assert facts_read_outcomes(proc.stdout) == {"lab1": "skipping", "lab2": "skipping"}
    # the plan is made from the facts at hand: both hosts' endpoints pass the pre-check
    assert result["summary"]["by_test"]["precheck"]["passed"] == 1
    # not current (a stage changed the host after the last read): read again, as without site.yml
    proc, _result = run(tmp_path / "stale", ["lab1", "lab2"], extra=["-e", "facts_current=false"], play=PLAY_SITE)
    assert facts_read_outcomes(proc.stdout) == {"lab1": "ok", "lab2": "ok"}, proc.stdout[-5000:]
