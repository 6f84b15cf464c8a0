# -*- coding: utf-8 -*-
"""site.yml as a sliced job (rdma_fabric_job: slice / fleet), run by ansible-playbook on this machine.

Three inventory hosts on a local connection carry the REAL lab facts of lab1 and lab2 and a copy of
lab2's with its own address (tests/unit/fixtures/fabric). A first play is a TEST DOUBLE for the facts
stage in the runs that have one (it sets those facts, cacheable, into a jsonfile fact cache); the host
stages' roles are skipped by tag (they would change this machine). What really runs is site.yml's own
orchestration of a sliced job: two slices (--limit) that run the facts and host stages only, sharing one
fact cache, then the fleet job, which has no facts stage and no facts double, so that everything it
knows of the hosts comes from that cache: the Kubernetes render (manifests for the three nodes), the
validation (pairs across the slices; rdma.fabric.perftest on each side, which fails here without rping),
the report and the verdict. Its render, validation and report are compared with one unsliced run's.
The same on the lab, with real RDMA traffic, inside the execution environment image: molecule/ee_slices.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import subprocess
import sys

import yaml

from ansible_collections.rdma.fabric.plugins.plugin_utils.report_model import comparable
from ansible_collections.rdma.fabric.tests.unit.fixtures.fabric.lab_hosts import lab_facts
from ansible_collections.rdma.fabric.tests.unit.playbooks.site_double import FACTS_DOUBLE, REPO, SITE

# the host stages' roles change the host they run on (here: this machine)
SKIP = "facts,mofed,soft_roce,lossless_ethernet,gpudirect"


SETTINGS = {
    "rdma_validate_tests": ["rping"], "rdma_validate_install_tools": False, "rdma_validate_refresh_facts": False,
    "rdma_validate_timeout": 5, "rdma_validate_connect_retries": 1,
    # the report re-reads each host (this machine) with the real facts module; no GPU or QoS read
    "rdma_fabric_gpudirect_facts": False, "rdma_report_qos_state": False,
    # the Kubernetes stack rendered on the controller for the three nodes (no cluster)
    "rdma_fabric_k8s_hosts": "localhost", "k8s_rdma_stack_apply": False, "k8s_rdma_stack_node_group": "rdma_nodes",
    "k8s_rdma_stack_include_soft_devices": True,
}


def setup(tmp_path):
    facts = lab_facts()
    hosts = {}
    for name in ("lab1", "lab2", "lab3"):
        path = tmp_path / ("%s.json" % name)
        path.write_text(json.dumps(facts[name]))
        hosts[name] = {"facts_file": str(path)}
    inventory = {"all": {"children": {"rdma_nodes": {"hosts": hosts, "vars": {
        "ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    (tmp_path / "with-facts-double.yml").write_text("---" + FACTS_DOUBLE)


def run(tmp_path, name, playbook, cache, extra=(), skip=SKIP, **settings):
    """One ansible-playbook run (a job) with its own report folder, the fact cache ``cache``."""
    reports = tmp_path / name
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_CACHE_PLUGIN="jsonfile",
               ANSIBLE_CACHE_PLUGIN_CONNECTION=str(cache), ANSIBLE_HOST_PATTERN_MISMATCH="warning",
               ANSIBLE_NOCOLOR="1", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"),
               ANSIBLE_COLLECTIONS_PATH=os.path.abspath(os.path.join(REPO, "..", "..", "..")))
    variables = dict(SETTINGS, rdma_report_dir=str(reports), k8s_rdma_stack_output_dir=str(reports / "k8s"), **settings)
    args = ["-i", str(tmp_path / "inventory.yml"), "-e", json.dumps(variables)] + list(extra)
    if skip:
        args += ["--skip-tags", skip]
    proc = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ansible-playbook")] + args + [str(playbook)],
                          env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, check=False, timeout=900)
    return proc, reports


def play(out, name):
    """The output of one play (up to the next play or the recap)."""
    return out.split("PLAY [%s]" % name, 1)[1].split("PLAY [", 1)[0].split("PLAY RECAP", 1)[0]


def cached_hosts(cache):
    """The hosts with facts in a jsonfile cache (ansible-core 2.19 names their files s1_<host>)."""
    return sorted(name.split("_", 1)[1] if name.startswith("s1_") else name for name in os.listdir(str(cache)))


def files(folder):
    out = {}
    for root, _dirs, names in os.walk(str(folder)):
        for name in names:
            path = os.path.join(root, name)
            with open(path) as f:
                out[os.path.relpath(path, str(folder))] = f.read()
    return out


def test_two_slices_then_the_fleet_job_give_the_unsliced_runs_render_validation_and_report(tmp_path):
    setup(tmp_path)
    double = tmp_path / "with-facts-double.yml"
    whole, whole_dir = run(tmp_path, "whole", double, tmp_path / "whole-cache")
    shared = tmp_path / "fact-cache"
    slice1, slice1_dir = run(tmp_path, "slice1", double, shared, ["--limit", "lab1,lab3"], rdma_fabric_job="slice")
    assert slice1.returncode == 0, slice1.stdout[-5000:]
    assert cached_hosts(shared) == ["lab1", "lab3"]
    slice2 = run(tmp_path, "slice2", double, shared, ["--limit", "lab2"], rdma_fabric_job="slice")[0]
    assert slice2.returncode == 0, slice2.stdout[-5000:]
    assert cached_hosts(shared) == ["lab1", "lab2", "lab3"]
    # the fleet job: site.yml alone, no facts double, no tag skipped: the hosts' facts come from the
    # slices' cache (a facts stage would read this machine's, without RDMA, and fail every pre-check)
    fleet, fleet_dir = run(tmp_path, "fleet", SITE, shared, skip="", rdma_fabric_job="fleet")

    for proc in (slice1, slice2):
        out = proc.stdout
        assert "PLAY [Gather RDMA and GPUDirect facts]" in out and "PLAY [Install the RDMA driver stack]" in out
        for name in ("Kubernetes RDMA stack", "Validate the fabric", "Fail the run when the validation failed"):
            assert "skipping: no hosts matched" in play(out, name), name
        assert "TASK [rdma.fabric.k8s_rdma_stack" not in out and "TASK [rdma.fabric.rdma_validate" not in out
        assert "TASK [Write fabric-report.json, .md and .html]" not in out  # the fleet job writes it
        assert not os.path.exists(str(slice1_dir))
    assert "ok: [lab2]" not in slice1.stdout and "ok: [lab1]" not in slice2.stdout

    out = fleet.stdout
    # validation fails here (no rping), after the report: the verdict's exit status, as in the unsliced run
    assert fleet.returncode == whole.returncode == 2, out[-5000:]
    facts_play = play(out, "Gather RDMA and GPUDirect facts")
    assert "ok: [" not in facts_play and "changed: [" not in facts_play and "skipping: [lab1]" in facts_play
    for name in ("Install the RDMA driver stack", "Lossless Ethernet on the RoCE ports", "Create Soft-RoCE links where asked"):
        assert "skipping: no hosts matched" in play(out, name), name
    # the pairs cross the slices (lab1 and lab3 were one slice, lab2 the other)
    assert "3 pairs, 0 pre-checks failed, 3 runs" in out
    for pair in ("rping lab1 -> lab2", "rping lab2 -> lab3", "rping lab3 -> lab1"):
        assert pair in out.replace("\\u003e", ">"), pair
    assert "Fabric validation failed" in out

    # the same render (from the cached facts), the same validation and the same report as the unsliced run
    rendered = files(fleet_dir / "k8s")
    assert rendered and rendered == files(whole_dir / "k8s")
    assert all(node in " ".join(rendered.values()) for node in ("lab1", "lab2", "lab3"))
    fleet_report = json.loads((fleet_dir / "fabric-report.json").read_text())
    whole_report = json.loads((whole_dir / "fabric-report.json").read_text())
    assert sorted(fleet_report["hosts"]) == ["lab1", "lab2", "lab3"]
    assert comparable(fleet_report) == comparable(whole_report)
    assert (json.loads((fleet_dir / "validation.json").read_text())["validation"]
            == json.loads((whole_dir / "validation.json").read_text())["validation"])


def test_a_whole_run_under_a_limit_never_pairs_a_host_outside_it(tmp_path):
    """site.yml run as-is on a slice (--limit lab1,lab2) while rdma_validate_hosts names every host:
    lab3, outside the run, is left out of the validation plan (neither paired nor failed)."""
    setup(tmp_path)
    proc, reports = run(tmp_path, "limited", tmp_path / "with-facts-double.yml", tmp_path / "cache",
                        ["--limit", "lab1,lab2"], rdma_validate_hosts=["lab1", "lab2", "lab3"])
    out = proc.stdout
    assert "1 pairs, 0 pre-checks failed, 1 runs in 1 waves" in out, out[-5000:]
    assert "left out, outside this run (its --limit: another slice of a sliced job): lab3" in out
    results = json.loads((reports / "validation.json").read_text())["validation"]
    assert results and all(sorted(r["hosts"]) == ["lab1", "lab2"] for r in results)
