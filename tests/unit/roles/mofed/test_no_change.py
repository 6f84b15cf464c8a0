# -*- coding: utf-8 -*-
"""The mofed role's no-change path: one state read, then nothing (docs/DESIGN.md "The no-change path").

The real role, run by ansible-playbook on this machine (not in check mode: it writes, but only under the test's
folder), three times with the same settings:

1. no record of a last run: the whole install work runs (present.yml), and ends by writing the record;
2. nothing changed since: the one state read finds the record as wanted, the install work is skipped as a whole,
   and mofed_installed comes from the record; the tasks that run are counted;
3. a watched file changed (a package's dpkg file list went, as when someone removes it): the whole work again.

A setting that changes (another kernel module list) also means the whole work.

TEST DOUBLES, said so: the host's facts are test_absent.py's (tests/unit/fixtures/network/
constructed_mlx5_bond_facts.json, Debian 12, kernel 6.1.0-99-test); ``dpkg-query`` answers as Debian 12's does
for the inbox packages installed (version 44.0-2); ``modinfo`` answers as kmod 30 does for a module built for the
running kernel; dpkg's per-package files, the running kernel's modules.dep, the modules-load.d file, the apt
source, key and credential files and the role's records are files under the test's folder. The kernel module the
role wants loaded is ``block``, which this machine's kernel has in /sys/module (the real path the role reads).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

import pytest

from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import run
from ansible_collections.rdma.fabric.tests.unit.roles.mofed.test_absent import FACTS, FIXTURE_FACTS_MODULE

PLAY = """
- name: mofed, present
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Set the facts (TEST DOUBLE for setup)
      fixture_facts:
        path: "{{ facts_file }}"

    - name: Apply
      ansible.builtin.include_role:
        name: rdma.fabric.mofed
"""

PACKAGES = ("rdma-core", "ibverbs-providers", "libibverbs1", "ibverbs-utils", "rdmacm-utils", "infiniband-diags",
            "perftest")
# TEST DOUBLE for Debian 12's dpkg-query -W -f=... (name, version, status of each package asked for).
FAKE_QUERY = """#!/bin/sh
shift 2
for name in "$@"; do printf '%s\\t44.0-2\\tinstalled\\n' "$name"; done
"""
# TEST DOUBLE for kmod 30's modinfo -k KERNEL NAME...: one block per module, built for KERNEL.
FAKE_MODINFO = """#!/bin/sh
kernel=$2
shift 2
for name in "$@"; do
  printf 'filename:       /lib/modules/%s/kernel/%s.ko\\nname:           %s\\nvermagic:       %s SMP preempt mod_unload\\n' \\
    "$kernel" "$name" "$name" "$kernel"
done
"""
SKIP = pytest.mark.skipif(os.geteuid() != 0 or not os.path.isdir("/sys/module/block"),
                          reason="the role writes its files root-owned, as on a host; the module it wants loaded is "
                                 "/sys/module/block")


def setup(tmp_path):
    """The test doubles and the folder that stands for the host's files; returns the extra variables."""
    (tmp_path / "library").mkdir()
    (tmp_path / "library" / "fixture_facts.py").write_text(FIXTURE_FACTS_MODULE)
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in (("dpkg-query", FAKE_QUERY), ("modinfo", FAKE_MODINFO)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    host = tmp_path / "host"
    info = host / "var" / "lib" / "dpkg" / "info"
    info.mkdir(parents=True)
    for name in PACKAGES:
        (info / (name + ".list")).write_text(u"/.\n/usr/share/doc/%s\n" % name)
        (info / (name + ".md5sums")).write_text(u"0123456789abcdef0123456789abcdef  usr/share/doc/%s/copyright\n" % name)
    (host / "lib" / "modules").mkdir(parents=True)
    (host / "lib" / "modules" / "modules.dep").write_text(u"kernel/block.ko:\n")
    (host / "etc").mkdir()
    (host / "var" / "lib" / "rdma-fabric").mkdir()
    h = str(host)
    return {
        "facts_file": os.path.abspath(FACTS), "ansible_host": "198.51.100.7",
        "mofed_kernel_modules": ["block"],
        "__mofed_pkg_query": [str(tools / "dpkg-query"), "-W", "-f=x"],
        "__mofed_pkg_watch": [os.path.join(str(info), n + ext) for n in PACKAGES for ext in (".list", ".md5sums")],
        "__mofed_modules_dep": h + "/lib/modules/modules.dep",
        "__mofed_modules_load_file": h + "/etc/rdma-fabric-mofed.conf",
        "__mofed_key_file": {"asc": h + "/etc/rdma-fabric-mofed.asc", "gpg": h + "/etc/rdma-fabric-mofed.gpg"},
        "__mofed_keyring_dir": h + "/etc",
        "__mofed_source_file": h + "/etc/rdma-fabric-mofed.sources",
        "__mofed_auth_file": h + "/etc/rdma-fabric-mofed-auth.conf",
        "__mofed_repo_files": [h + "/etc/rdma-fabric-mofed.sources", h + "/etc/rdma-fabric-mofed-auth.conf"],
        "__mofed_python_debian": h + "/deb822.py",
        "__mofed_added_file": h + "/var/lib/rdma-fabric/mofed-added.json",
        "__mofed_record_file": h + "/var/lib/rdma-fabric/mofed-applied.json",
    }


def apply(tmp_path, extra):
    env_path = "%s:%s" % (tmp_path / "bin", os.environ.get("PATH", ""))
    old = os.environ.get("PATH")
    os.environ["PATH"] = env_path          # the role runs modinfo by name (the local connection keeps this PATH)
    try:
        return run(tmp_path, PLAY, extra)
    finally:
        os.environ["PATH"] = old


def role_tasks(tasks):
    """{name: result} of the role's task results on this host, and the names of those that ran (not skipped)."""
    results = dict((name.split(" : ", 1)[1], hosts["localhost"]) for name, hosts in tasks.items()
                   if name.startswith("rdma.fabric.mofed : "))
    return results, sorted(n for n, r in results.items() if not r.get("skipped"))


@SKIP
def test_a_host_as_the_last_run_left_it_costs_one_state_read(tmp_path):
    extra = setup(tmp_path)
    record = tmp_path / "host" / "var" / "lib" / "rdma-fabric" / "mofed-applied.json"

    # 1. No record: the whole work, then the record of what it left.
    rc, tasks, out = apply(tmp_path, extra)
    assert rc == 0, out[-4000:]
    results, ran = role_tasks(tasks)
    assert results["Decide whether the host is as the last run left it"]["ansible_facts"]["__mofed_applied"] is None
    assert "Check the installed kernel modules against the running kernel" in ran
    assert results["Load the modules at boot"]["changed"] is True
    assert results["Write the record of this run"]["changed"] is True
    data = json.loads(record.read_text())
    assert oct(record.stat().st_mode & 0o777) == "0o600"
    assert data["kernel"] == "6.1.0-99-test" and data["schema"] == 1 and len(data["settings"]) == 64
    assert data["installed"]["version"] == "44.0-2" and data["installed"]["restart_required"] is False
    assert data["watched"][extra["__mofed_modules_load_file"]]["exists"] is True    # as this run left it
    first = results["Set mofed_installed"]["ansible_facts"]["mofed_installed"]

    # 2. Nothing changed: one state read, then nothing but the decision and the facts.
    rc, tasks, out = apply(tmp_path, extra)
    assert rc == 0, out[-4000:]
    results, ran = role_tasks(tasks)
    assert results["Decide whether the host is as the last run left it"]["ansible_facts"]["__mofed_applied"] == data
    assert results["Install, check, load and activate the driver stack of flavour inbox"].get("skipped") is True
    assert results["Record what this run left, for the next run's no-change path"].get("skipped") is True
    assert ran == sorted([
        "Validating arguments against arg spec 'main' - Install the RDMA driver stack (inbox, DOCA-OFED or MLNX_OFED) "
        "safely", "Refuse an OS family this role has no settings for", "Load the OS family's settings",
        "Check the settings before touching anything", "Check the variables before touching anything",
        "Work out the effective settings",
        "Read the files, packages and kernel modules the role manages, and the record of its last run (one call)",
        "Decide whether the host is as the last run left it", "Report what is installed", "Set mofed_installed"])
    remote = [n for n in ran if "invocation" in results[n]]
    assert remote == ["Read the files, packages and kernel modules the role manages, and the record of its last run "
                      "(one call)"]
    assert not any(r.get("changed") for r in results.values())
    assert results["Set mofed_installed"]["ansible_facts"]["mofed_installed"] == first

    # 3. A package's file list went: the whole work again.
    os.remove(extra["__mofed_pkg_watch"][2])
    rc, tasks, out = apply(tmp_path, extra)
    assert rc == 0, out[-4000:]
    results, ran = role_tasks(tasks)
    assert results["Decide whether the host is as the last run left it"]["ansible_facts"]["__mofed_applied"] is None
    assert "Read which of the packages are installed" in ran
    assert json.loads(record.read_text())["watched"][extra["__mofed_pkg_watch"][2]] == {"exists": False}


@SKIP
def test_other_settings_mean_the_whole_work(tmp_path):
    extra = setup(tmp_path)
    rc, tasks, out = apply(tmp_path, extra)
    assert rc == 0, out[-4000:]
    rc, tasks, out = apply(tmp_path, dict(extra, mofed_kernel_modules_persist=False))
    assert rc == 0, out[-4000:]
    results, ran = role_tasks(tasks)
    assert results["Decide whether the host is as the last run left it"]["ansible_facts"]["__mofed_applied"] is None
    assert results["Do not load them at boot"]["changed"] is True
