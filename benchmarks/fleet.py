# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fleet scale: every controller stage over N hosts, beside Ansible's own floor.

    .venv/bin/python benchmarks/fleet.py [--n 10,100,1000,10000] [--stages noop,k8s,validate,nccl,report,groups]
        [--collection DIR] [--timeout 900] [--save FILE.json] [--compare BEFORE.json] [--work DIR]

What it does, for each N:

1. Host shapes from the project's sysfs fixture trees (tests/unit/fixtures/sysfs/*.json manifests,
   materialised by trees.py), each read ONCE through the collection's own facts gatherer
   (``rdma_facts.gather_rdma_facts`` for ``ansible_facts.rdma``, ``gpudirect.gather`` for
   ``ansible_facts.gpudirect``): RoCE (derived_roce_mlx5_ofed), RoCE with its port down (a copy of
   that tree with the port's state files set to DOWN/Disabled), InfiniBand (derived_ib_mlx5_ipoib),
   two-port InfiniBand (procfs_mlx4_0, a real capture), a GPU host with four NICs
   (derived_gpu_nic_topology), Soft-RoCE (lab_rxe_lab1, a real capture of the lab) and a host
   without RDMA (procfs_net_eth0_ecn).
2. N inventory hosts in contiguous blocks of one shape each, every host with its own name, node
   GUIDs, link-local GIDs (as if from its own MACs), IPv4 GIDs/addresses and, per block of 32, a
   ``rdma_validate_switch`` host variable (its leaf switch).
3. The facts written into Ansible's jsonfile fact cache THROUGH ANSIBLE'S OWN CACHE PLUGIN
   (``cache_loader.get('ansible.builtin.jsonfile')``: ansible-core 2.19 stores ``s1_<host>`` files
   holding ``{"__payload__": ...}``; plain per-host JSON would be ignored), a generated inventory and
   ansible.cfg, and, for the report, a validation.json of a ring over the hosts (pre-checks from
   the collection's planner; the test figures are a TEST DOUBLE: every 50th pair fails, the rest
   pass with made-up bandwidth and latency).
4. Each stage run alone as its own ansible-playbook, measured by a wrapper process: wall time, CPU
   seconds and peak RSS of the whole process tree (``getrusage(RUSAGE_CHILDREN)``: the largest
   process among the playbook and its forks):

   noop      Ansible's floor: one ``debug`` task over the N hosts (facts loaded from the cache)
   k8s       rdma.fabric.k8s_rdma_stack, render only (apply false), files written to a folder
   validate  playbooks/validate.yml in check mode (endpoints, pairs, pre-checks, plan; no traffic)
   nccl      NCCL settings of every host (per node pool where the collection has node pools,
             else the nccl_env filter per host)
   report    playbooks/report.yml with the facts as read (rdma_report_facts_current), no QoS or
             GPUDirect re-read: the controller side of the report over N hosts
   groups    inventories/example/02-constructed.yml (constructed groups from the fact cache) over
             the N hosts, with one no-op task on localhost

It prints one table per run (stage, N, wall, CPU, floor, ratio to the floor in wall and in CPU seconds,
peak RSS) and the growth exponent per stage between the two largest N it ran (log(t2/t1) / log(N2/N1)),
of wall and of CPU time. --save writes the
figures as JSON; --compare prints a before/after table against such a file. A stage that runs longer
than --timeout is stopped and shown as "> T". Machines shared with other jobs make seconds vary:
read the ratios to the floor and the CPU seconds.

--collection points at the ``ansible_collections`` parent folder of the collection under test
(default: build/collections of this checkout), so the same script measures an older tree:

    git archive HEAD | tar -x -C /tmp/before/ansible_collections/rdma/fabric
    .venv/bin/python benchmarks/fleet.py --collection /tmp/before --save before.json
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import copy
import json
import math
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(REPO, "tests", "unit", "fixtures", "sysfs")
STAGES = ("noop", "k8s", "validate", "nccl", "report", "groups")
SWITCH_SIZE = 32

# (shape, fixture tree, what to change in a copy of the tree before reading it)
SHAPES = (
    ("roce", "derived_roce_mlx5_ofed", None),
    ("roce_portdown", "derived_roce_mlx5_ofed", "port_down"),
    ("ib", "derived_ib_mlx5_ipoib", None),
    ("ib_2port", "procfs_mlx4_0", None),
    ("gpu", "derived_gpu_nic_topology", None),
    ("soft_roce", "lab_rxe_lab1", None),
    ("no_rdma", "procfs_net_eth0_ecn", None),
)


# --------------------------------------------------------------------------
# measuring one command (runs in a wrapper process of its own)
# --------------------------------------------------------------------------
def _descendants(pid):
    """Every process below pid (by parent PID, from /proc), deepest last."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (IOError, OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def measured_child(out_path, timeout, argv):
    """Run argv, write wall/CPU/peak RSS of its whole tree to out_path (JSON)."""
    start = time.time()
    proc = subprocess.Popen(argv, start_new_session=True, stdout=sys.stdout, stderr=subprocess.STDOUT)
    timed_out = False
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        # the process group, and every process below it (ansible-playbook's helpers may leave the group)
        for pid in [proc.pid] + _descendants(proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        rc = proc.wait()
    wall = time.time() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(out_path, "w") as f:
        json.dump({"wall": wall, "rc": rc, "timed_out": timed_out, "cpu": usage.ru_utime + usage.ru_stime,
                   "maxrss_mb": usage.ru_maxrss / 1024.0}, f)
    return 0


def measure(argv, env, cwd, log_path, timeout):
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        with open(log_path, "w") as log:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--_measure", out, str(timeout), "--"] + argv,
                           env=env, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, check=False)
        with open(out) as f:
            return json.load(f)
    finally:
        os.unlink(out)


# --------------------------------------------------------------------------
# host shapes and their facts (read once per shape)
# --------------------------------------------------------------------------
_LOADER = []


def _collection_imports(collection):
    if not _LOADER:
        # Ansible's collection loader owns the ansible_collections namespace (its cache plugins too).
        from ansible.plugins.loader import init_plugin_loader
        init_plugin_loader([collection])
        _LOADER.append(collection)
    from ansible_collections.rdma.fabric.plugins.module_utils.facts import rdma_facts, sysfs  # noqa
    from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gpudirect  # noqa
    from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate  # noqa
    return rdma_facts, gpudirect, sysfs, fabric_validate


def _port_down(root):
    """Set every port of every RDMA device in the tree to DOWN / Disabled (a derived shape)."""
    for dirpath, _dirnames, filenames in os.walk(os.path.join(root, "sys", "devices")):
        if os.path.basename(os.path.dirname(dirpath)) == "ports":
            if "state" in filenames:
                with open(os.path.join(dirpath, "state"), "w") as f:
                    f.write("1: DOWN\n")
            if "phys_state" in filenames:
                with open(os.path.join(dirpath, "phys_state"), "w") as f:
                    f.write("3: Disabled\n")


def read_shapes(collection, work):
    """{shape: {"rdma": ..., "gpudirect": ...}}, each read once through the collection's gatherers."""
    rdma_facts, gpudirect, sysfs, _fv = _collection_imports(collection)
    sys.path.insert(0, FIXTURES)
    import trees  # noqa: E402  (the fixture manifests' own loader)

    shapes = {}
    for name, tree, change in SHAPES:
        root = trees.materialise(tree)
        if change:
            copy_root = os.path.join(work, "tree-" + name)
            if os.path.exists(copy_root):
                shutil.rmtree(copy_root)
            shutil.copytree(root, copy_root, symlinks=True)
            _port_down(copy_root)
            root = copy_root
        sys_path = os.path.join(root, "sys")
        rdma = rdma_facts.gather_rdma_facts(sys_path)
        gd = gpudirect.gather(sysfs.SysfsTree(sys_path, os.path.join(root, "proc")), "audit")
        shapes[name] = {"rdma": rdma, "gpudirect": gd}
    return shapes


def _v4_gid(ip):
    a, b, c, d = (int(x) for x in ip.split("."))
    return "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % (a, b, c, d)


def personalise(shape_no, shape, index, name):
    """One host's facts from its shape's: own GUIDs, link-local GIDs, IPv4 addresses."""
    rdma = copy.deepcopy(shape["rdma"])
    hi, lo = (index >> 8) & 0xff, index & 0xff
    for d_no, dev in enumerate(rdma.get("devices") or []):
        guid = "%04x:%04x:%04x:%04x" % (0x0c42 + shape_no, 0xa100 + d_no, (index >> 16) & 0xffff, index & 0xffff)
        dev["node_guid"] = guid
        if dev.get("sys_image_guid"):
            dev["sys_image_guid"] = guid
        for p_no, port in enumerate(dev.get("ports") or []):
            ip = "10.%d.%d.%d" % (16 + d_no * 4 + p_no, hi, lo)
            for gid in port.get("gids") or []:
                if gid.get("ip_version") == 4:
                    gid["ip"] = ip
                    gid["gid"] = _v4_gid(ip)
                elif str(gid.get("gid", "")).startswith("fe80"):
                    eui = (0x0e42 + shape_no, 0xa1ff, 0xfe00 | (d_no * 4 + p_no), index & 0xffff)
                    gid["gid"] = "fe80:0000:0000:0000:%04x:%04x:%04x:%04x" % eui
                    gid["ip"] = "fe80::%x:%x:%x:%x" % eui
                elif gid.get("ip_version") == 6:
                    gid["gid"] = "2001:0db8:%04x:0000:0000:0000:%04x:%04x" % (16 + d_no * 4 + p_no, index >> 16, index & 0xffff)
                    gid["ip"] = "2001:db8:%x::%x:%x" % (16 + d_no * 4 + p_no, index >> 16, index & 0xffff)
    return {"rdma": rdma, "gpudirect": shape["gpudirect"], "nodename": name, "hostname": name,
            "os_family": "Debian", "distribution": "Debian", "distribution_major_version": "12"}


def host_names(n):
    return ["node%05d" % i for i in range(n)]


def host_shape(i, n):
    return SHAPES[i * len(SHAPES) // n][0]


def write_fleet(collection, work, n, shapes):
    """Fact cache (through Ansible's cache plugin), inventory, ansible.cfg and validation.json for N hosts."""
    base = os.path.join(work, "n%d" % n)
    if os.path.exists(base):
        shutil.rmtree(base)
    os.makedirs(base)
    cache_dir = os.path.join(base, "facts")
    os.makedirs(cache_dir)
    cfg = os.path.join(base, "ansible.cfg")
    with open(cfg, "w") as f:
        f.write("[defaults]\ncollections_path = %s\nhost_key_checking = False\nretry_files_enabled = False\n"
                "stdout_callback = default\ncallback_result_format = yaml\nforks = 8\ngathering = explicit\n"
                "interpreter_python = %s\nfact_caching = jsonfile\nfact_caching_connection = %s\n"
                "fact_caching_timeout = 0\nlocal_tmp = %s\n"
                % (collection, sys.executable, cache_dir, os.path.join(base, "tmp")))
    # Ansible's own cache plugin, configured like the playbook runs will be.
    os.environ["ANSIBLE_CONFIG"] = cfg
    from ansible.plugins.loader import cache_loader
    cache = cache_loader.get("ansible.builtin.jsonfile", _uri=cache_dir, _timeout=0)
    shape_names = [s[0] for s in SHAPES]
    names = host_names(n)
    hosts = {}
    facts_by_host = {}
    for i, name in enumerate(names):
        shape = host_shape(i, n)
        facts = personalise(shape_names.index(shape), shapes[shape], i, name)
        cache.set(name, facts)
        facts_by_host[name] = facts
        hosts[name] = {"rdma_validate_switch": "leaf%03d" % (i // SWITCH_SIZE)}
    inventory = {"all": {"children": {
        "rdma_nodes": {"hosts": hosts, "vars": {"ansible_connection": "local"}},
        "k8s_rdma_controller": {"hosts": {"localhost": {"ansible_connection": "local"}}},
    }}}
    inv = os.path.join(base, "hosts.json")
    with open(inv, "w") as f:
        json.dump(inventory, f)
    report_dir = os.path.join(base, "report")
    os.makedirs(report_dir)
    with open(os.path.join(report_dir, "validation.json"), "w") as f:
        json.dump(validation_double(collection, facts_by_host), f)
    return base, cfg, inv


def validation_double(collection, facts_by_host):
    """validation.json of a ring: real pre-checks from the collection's planner, TEST DOUBLE figures."""
    _rf, _gd, _sysfs, fv = _collection_imports(collection)
    names = sorted(facts_by_host)
    endpoints = dict((h, fv.select_endpoint(facts_by_host[h]["rdma"], host=h)) for h in names)
    plan = fv.plan(endpoints, names, topology="ring")
    results = list(plan["results"])
    for k, run in enumerate(plan["runs"]):
        ok = k % 50 != 7
        client = {"results": [{"test": spec["test"], "passed": ok,
                               "bandwidth_gbps": 91.5 if spec["test"].endswith("_bw") else None,
                               "latency_us": 2.4 if spec["test"].endswith("_lat") else None, "elapsed_s": 3.0,
                               "message": "ok" if ok else "below the threshold (test double)"}
                              for spec in run["tests"]]}
        results.extend(fv.run_result(run, client=client, server_start={"ansible_job_id": "1"},
                                     server={"finished": 1, "results": client["results"]}))
    return {"summary": fv.summarize(results), "validation": results}


# --------------------------------------------------------------------------
# the stages
# --------------------------------------------------------------------------
def _has(collection, *parts):
    return os.path.exists(os.path.join(collection, "ansible_collections", "rdma", "fabric", *parts))


def stage_command(stage, collection, base, inv):
    """(argv, variant) of one stage; playbooks written into the N folder."""
    playbooks = os.path.join(collection, "ansible_collections", "rdma", "fabric", "playbooks")
    ansible_playbook = os.path.join(os.path.dirname(sys.executable), "ansible-playbook")
    path = os.path.join(base, "stage-%s.yml" % stage)
    variant = "playbook"
    extra = []
    inventories = ["-i", inv]
    if stage == "noop":
        text = ("- name: No-op over the hosts (Ansible's floor)\n  hosts: rdma_nodes\n  gather_facts: false\n"
                "  tasks:\n    - name: Nothing\n      ansible.builtin.debug:\n        msg: ok\n")
    elif stage == "k8s":
        text = ("- name: Render the Kubernetes RDMA stack\n  hosts: k8s_rdma_controller\n  gather_facts: false\n"
                "  roles:\n    - role: rdma.fabric.k8s_rdma_stack\n      vars:\n"
                "        k8s_rdma_stack_apply: false\n        k8s_rdma_stack_node_group: rdma_nodes\n"
                "        k8s_rdma_stack_output_dir: %s\n" % os.path.join(base, "k8s"))
    elif stage == "validate":
        text = "- name: Validation plan\n  ansible.builtin.import_playbook: %s\n" % os.path.join(playbooks, "validate.yml")
        extra = ["--check", "-e", "rdma_validate_install_tools=false", "-e", "rdma_validate_refresh_facts=false",
                 "-e", "rdma_report_dir=%s" % os.path.join(base, "validate")]
    elif stage == "nccl":
        if _has(collection, "plugins", "action", "node_pools.py"):
            variant = "node_pools action (per pool)"
            text = ("- name: NCCL settings per node pool\n  hosts: localhost\n  gather_facts: false\n  tasks:\n"
                    "    - name: Node pools and their NCCL settings\n      rdma.fabric.node_pools:\n"
                    "        hosts: \"{{ groups['rdma_nodes'] }}\"\n        nccl: {on_no_rdma: disable}\n"
                    "      register: pools\n    - name: Show the pools\n      ansible.builtin.debug:\n"
                    "        msg: \"{{ pools.pools | length }} pools\"\n")
        else:
            variant = "nccl_env filter per host"
            text = ("- name: NCCL settings per host\n  hosts: rdma_nodes\n  gather_facts: false\n  tasks:\n"
                    "    - name: NCCL settings of the host\n      ansible.builtin.set_fact:\n"
                    "        rdma_nccl_env: \"{{ ansible_facts.rdma | rdma.fabric.nccl_env(on_no_rdma='disable') }}\"\n")
    elif stage == "report":
        text = "- name: Report\n  ansible.builtin.import_playbook: %s\n" % os.path.join(playbooks, "report.yml")
        extra = ["-e", "rdma_report_facts_current=true", "-e", "rdma_fabric_gpudirect_facts=false",
                 "-e", "rdma_report_qos_state=false", "-e", "rdma_report_dir=%s" % os.path.join(base, "report")]
    elif stage == "groups":
        constructed = os.path.join(collection, "ansible_collections", "rdma", "fabric", "inventories", "example",
                                   "02-constructed.yml")
        inv_dir = os.path.join(base, "inventory-groups")
        if os.path.exists(inv_dir):
            shutil.rmtree(inv_dir)
        os.makedirs(inv_dir)
        shutil.copy(inv, os.path.join(inv_dir, "01-hosts.json"))
        shutil.copy(constructed, os.path.join(inv_dir, "02-constructed.yml"))
        inventories = ["-i", inv_dir]
        text = ("- name: Constructed groups from the fact cache\n  hosts: localhost\n  gather_facts: false\n"
                "  tasks:\n    - name: Count the groups\n      ansible.builtin.debug:\n"
                "        msg: \"{{ groups | length }} groups\"\n")
    else:
        raise ValueError(stage)
    with open(path, "w") as f:
        f.write("---\n" + text)
    return [ansible_playbook] + inventories + extra + [path], variant


# --------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------
def exponent(rows, stage, key="wall"):
    """Growth exponent of wall (or CPU) time between the two largest N where the stage finished."""
    done = sorted((r["n"], r[key]) for r in rows if r["stage"] == stage and not r["timed_out"] and r["rc"] == 0)
    if len(done) < 2:
        return None
    (n1, t1), (n2, t2) = done[-2], done[-1]
    if t1 <= 0 or n1 == n2:
        return None
    return math.log(t2 / t1) / math.log(float(n2) / n1)


def _rss(r):
    return "-" if r["timed_out"] else "%.0f" % r["maxrss_mb"]


def _wall(r):
    if r["timed_out"]:
        return "> %.0f (stopped)" % r["wall"]
    return "%.1f%s" % (r["wall"], "" if r["rc"] == 0 else " (rc %d)" % r["rc"])


def table(rows, title):
    floors = dict((r["n"], r) for r in rows if r["stage"] == "noop" and not r["timed_out"] and r["rc"] == 0)
    lines = [title, "| stage | N | wall s | CPU s | floor wall / CPU s | ratio wall / CPU | peak RSS MB | variant |",
             "|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (STAGES.index(r["stage"]), r["n"])):
        floor = floors.get(r["n"])
        ratio = "-"
        if floor and r["stage"] != "noop":
            ratio = ("> %.1f / %.1f" if r["timed_out"] else "%.1f / %.1f") % (
                r["wall"] / floor["wall"], r["cpu"] / max(floor["cpu"], 0.01))
        lines.append("| %s | %d | %s | %.1f | %s | %s | %s | %s |" % (
            r["stage"], r["n"], _wall(r), r["cpu"], "%.1f / %.1f" % (floor["wall"], floor["cpu"]) if floor else "-",
            ratio, _rss(r), r.get("variant", "")))
    lines.append("")
    for key in ("wall", "cpu"):
        lines.append("growth exponent (%s) between the two largest N that finished: " % key + ", ".join(
            "%s %s" % (s, "%.2f" % e if e is not None else "-") for s in STAGES
            for e in [exponent(rows, s, key)] if any(r["stage"] == s for r in rows)))
    return "\n".join(lines)


def compare(before, after):
    b = dict(((r["stage"], r["n"]), r) for r in before)
    floors_b = dict((r["n"], r["wall"]) for r in before if r["stage"] == "noop" and r["rc"] == 0 and not r["timed_out"])
    floors_a = dict((r["n"], r["wall"]) for r in after if r["stage"] == "noop" and r["rc"] == 0 and not r["timed_out"])
    lines = ["| stage | N | before: wall s (ratio to floor), CPU s, RSS | after: wall s (ratio to floor), CPU s, RSS |",
             "|---|---|---|---|"]
    for r in sorted(after, key=lambda r: (STAGES.index(r["stage"]), r["n"])):
        old = b.get((r["stage"], r["n"]))

        def cell(x, floors):
            if x is None:
                return "not run"
            fl = floors.get(x["n"])
            ratio = "" if not fl or x["stage"] == "noop" else ", %s%.1fx" % ("> " if x["timed_out"] else "", x["wall"] / fl)
            return "%s (%s), %.1f CPU s, %s MB" % (_wall(x), ratio.lstrip(", ") or "floor", x["cpu"], _rss(x))
        lines.append("| %s | %d | %s | %s |" % (r["stage"], r["n"], cell(old, floors_b), cell(r, floors_a)))
    return "\n".join(lines)


# --------------------------------------------------------------------------
def main(argv):
    if len(argv) > 1 and argv[1] == "--_measure":
        return measured_child(argv[2], float(argv[3]), argv[5:])
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--n", default="10,100,1000,10000", help="host counts, comma-separated")
    ap.add_argument("--stages", default=",".join(STAGES), help="stages, comma-separated: %s" % ", ".join(STAGES))
    ap.add_argument("--collection", default=os.path.join(REPO, "build", "collections"),
                    help="ansible_collections parent folder of the collection under test")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before a stage is stopped")
    ap.add_argument("--skip-after-timeout", action="store_true",
                    help="do not run a stage at a larger N once it was stopped at a smaller one")
    ap.add_argument("--work", help="work folder (default: a temporary one, removed at the end)")
    ap.add_argument("--save", help="write the figures (JSON) here; appended to when it exists")
    ap.add_argument("--compare", help="figures of an earlier run (JSON from --save) for a before/after table")
    args = ap.parse_args(argv[1:])
    ns = [int(x) for x in args.n.split(",") if x]
    stages = [s for s in args.stages.split(",") if s]
    for s in stages:
        if s not in STAGES:
            ap.error("--stages: unknown stage %r; allowed: %s" % (s, ", ".join(STAGES)))
    if "noop" not in stages:
        stages.insert(0, "noop")
    collection = os.path.abspath(args.collection)
    if not _has(collection, "galaxy.yml"):
        ap.error("--collection: %s has no ansible_collections/rdma/fabric" % collection)
    work = os.path.abspath(args.work) if args.work else tempfile.mkdtemp(prefix="fleet-bench-")
    if not os.path.isdir(work):
        os.makedirs(work)
    rows = []
    if args.save and os.path.exists(args.save):
        with open(args.save) as f:
            rows = [r for r in json.load(f) if (r["stage"], r["n"]) not in set((s, n) for s in stages for n in ns)]
    stopped = set()
    try:
        shapes = read_shapes(collection, work)
        print("shapes: %s" % ", ".join("%s (%d devices, %d bytes of facts)" % (
            name, len(shapes[name]["rdma"]["devices"]), len(json.dumps(shapes[name])))
            for name, _t, _c in SHAPES), flush=True)
        for n in ns:
            t0 = time.time()
            base, cfg, inv = write_fleet(collection, work, n, shapes)
            size = sum(os.path.getsize(os.path.join(base, "facts", f)) for f in os.listdir(os.path.join(base, "facts")))
            print("N=%d: fact cache %.1f MB, prepared in %.1f s" % (n, size / 1e6, time.time() - t0), flush=True)
            env = dict(os.environ)
            env.update(ANSIBLE_CONFIG=cfg, ANSIBLE_NOCOLOR="1", ANSIBLE_DEPRECATION_WARNINGS="0")
            for stage in stages:
                if args.skip_after_timeout and stage in stopped:
                    print("  %-9s N=%-6d skipped (stopped at a smaller N)" % (stage, n), flush=True)
                    continue
                argv_, variant = stage_command(stage, collection, base, inv)
                r = measure(argv_, env, base, os.path.join(base, "stage-%s.log" % stage), args.timeout)
                r.update(stage=stage, n=n, variant=variant)
                rows.append(r)
                if r["timed_out"]:
                    stopped.add(stage)
                print("  %-9s N=%-6d wall %s  cpu %.1f s  rss %.0f MB  %s" % (
                    stage, n, _wall(r), r["cpu"], r["maxrss_mb"], variant), flush=True)
                if args.save:
                    with open(args.save, "w") as f:
                        json.dump(rows, f, indent=1)
            if not args.work:
                shutil.rmtree(base, ignore_errors=True)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(rows, "collection: %s" % collection))
    if args.compare:
        with open(args.compare) as f:
            before = json.load(f)
        print()
        print(compare(before, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
