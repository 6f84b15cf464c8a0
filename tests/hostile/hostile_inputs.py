# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Try malformed inputs and faults on the host-side modules and the roles' variable checks; print the table.

Issue 16's figures, reproducible on any machine (no lab, no root needed but
for nothing; about ten seconds):

* malformed inputs per module and role: how many were tried, rejected before
  any change with the parameter named, accepted, and ended in a traceback;
* faults injected and survived (no traceback, the state left as it was or
  said).

Modules run in this process through their ``main()`` with AnsibleModule's
exit and fail turned into exceptions (as the unit tests do), on derived
sysfs trees written to a temporary folder; anything else that escapes is a
traceback. "Before any change" is checked: no command ran (the command
runner is a recording test double that fails the case if called) and the
trees' files (ACS control words, the modules-load.d file) are as before.
Roles: what a role runs before its first task that reads or changes the
host, on the role's own files - Ansible's argument-spec validation of
``meta/argument_specs.yml`` (``ArgumentSpecValidator``, what
``validate_argument_spec`` uses), then the role's tasks in order up to the
first task of another kind, its ``set_fact`` and ``assert`` templated with
Ansible's templar (see :func:`role_check`).

    cd build/collections/ansible_collections/rdma/fabric
    PYTHONPATH=$PWD/../../.. ../../../../.venv/bin/python tests/hostile/hostile_inputs.py   # or --json
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import importlib
import json
import os
import shutil
import signal
import struct
import sys
import tempfile
import traceback

import yaml

from ansible.module_utils import basic
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.testing import patch_module_args
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SYSFS = os.path.join(ROOT, "tests", "unit", "fixtures", "sysfs")

from ansible_collections.rdma.fabric.plugins.module_utils import gpudirect as gd  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.rdma_facts import gather_rdma_facts  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import ABSENT_ERRNOS, SysfsTree  # noqa: E402
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (  # noqa: E402
    ACS_CTRL_LINUX_DEFAULT,
    build_ready_host,
    set_acs_control,
)
from ansible_collections.rdma.fabric.tests.unit.fixtures.read_faults import KernelRefusals  # noqa: E402


class _Exit(Exception):
    pass


class _Fail(Exception):
    pass


class Patches(object):
    """A tiny monkeypatch (the KernelRefusals double takes one)."""

    def __init__(self):
        self._undo = []

    def setattr(self, target, name, value):
        self._undo.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def undo(self):
        while self._undo:
            target, name, value = self._undo.pop()
            setattr(target, name, value)


class Commands(object):
    """Recording test double of run_command; ``allow`` lets modprobe through (it edits the tree as the kernel would)."""

    def __init__(self, builder=None, allow=False, during=None):
        self.ran = []
        self.builder = builder
        self.allow = allow
        self.during = during

    def __call__(self, argv, **kwargs):
        self.ran.append(list(argv))
        if not self.allow:
            return 1, "", "not allowed in this case"
        name = argv[-1]
        if "-r" in argv:
            if os.path.isdir(os.path.join(self.builder.sys, "module", name)):
                self.builder.remove_module(name)
        else:
            self.builder.module(name)
        if self.during:
            self.during(argv)
        return 0, "", ""


def run_module(name, args, commands=None, bin_path=None):
    """(outcome, result): outcome ok | failed | traceback. ``commands=False``: AnsibleModule's own run_command."""
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    patches = Patches()

    def exit_json(self, **kwargs):
        raise _Exit(kwargs)

    def fail_json(self, **kwargs):
        raise _Fail(kwargs)

    patches.setattr(basic.AnsibleModule, "exit_json", exit_json)
    patches.setattr(basic.AnsibleModule, "fail_json", fail_json)
    if commands is not False:
        commands = commands or Commands()
        patches.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kwargs: commands(argv, **kwargs))
    patches.setattr(basic.AnsibleModule, "get_bin_path",
                    lambda self, tool, required=False, opt_dirs=None: bin_path or "/usr/sbin/" + tool)
    try:
        with patch_module_args(args):
            module.main()
        return "traceback", {"msg": "main() returned without exit_json"}
    except _Exit as done:
        return "ok", done.args[0]
    except _Fail as done:
        return "failed", done.args[0]
    except SystemExit as done:  # AnsibleModule's own exit on a bad argument type
        return "failed", {"msg": "exit %s" % done.code}
    except BaseException:  # pylint: disable=broad-except
        return "traceback", {"msg": traceback.format_exc(limit=3)}
    finally:
        patches.undo()


# --------------------------------------------------------------------------
# malformed inputs: (module or role, parameter that must be named, arguments)
# --------------------------------------------------------------------------
def module_cases(tmp):
    rxe = os.path.join(SYSFS, "derived_rxe", "sys")
    a_file = os.path.join(tmp, "a-file")
    with open(a_file, "w") as handle:
        handle.write("x")
    client = dict(test="ib_write_bw", mode="client", device="rxe0", server_ip="192.0.2.11", duration=5)
    cases = [
        ("rdma_device_facts", "sysfs_path", {"sysfs_path": "/sys\0"}),
        ("rdma_device_facts", "sysfs_path", {"sysfs_path": "/sys\n"}),
        ("rdma_device_facts", "sysfs_path", {"sysfs_path": a_file}),
        ("rdma_device_facts", "sysfs_path", {"sysfs_path": os.path.join(rxe, "class", "infiniband")}),
        ("rdma_device_facts", "sysfs_path", {"sysfs_path": os.path.join(tmp, "missing")}),
        ("rdma_device_facts", "devices", {"sysfs_path": rxe, "devices": [""]}),
        ("rdma_device_facts", "gather_subset", {"sysfs_path": rxe, "gather_subset": ["everything"]}),
        ("host_state", "paths", {"paths": ["etc/passwd"]}),
        ("host_state", "paths", {"paths": ["/etc/rdma\0fabric"]}),
        ("host_state", "paths", {"paths": ["/etc/rdma-fabric/x.conf\n"]}),
        ("host_state", "units", {"units": ["--root=/tmp"]}),
        ("host_state", "units", {"units": ["rdma-fabric.service\n"]}),
        ("host_state", "units", {"units": ["rdma fabric.service"]}),
        ("host_state", "checksum", {"checksum": "perhaps"}),
        ("perftest", "device", dict(client, device="rxe0 -x 9")),
        ("perftest", "device", dict(client, device="rxe0\n")),
        ("perftest", "server_ip", dict(client, server_ip="$(reboot)")),
        ("perftest", "min_bandwidth_gbps", dict(client, min_bandwidth_gbps=float("nan"))),
        ("perftest", "min_bandwidth_gbps", dict(client, min_bandwidth_gbps=float("inf"))),
        ("perftest", "max_latency_us", dict(client, max_latency_us=-1.0)),
        ("perftest", "tcp_port", dict(client, tcp_port=22)),
        ("perftest", "timeout", dict(client, timeout=0)),
        ("perftest", "retry_delay", dict(client, retry_delay=float("nan"))),
        ("perftest", "iterations", dict(client, iterations=10)),
        ("perftest", "test", dict(client, test="ib_write_bw; reboot")),
    ]
    return cases


def gpudirect_cases(tmp):
    """gpudirect on a GPU host tree that needs changes (peermem, ACS): nothing may change."""
    builder = build_ready_host(os.path.join(tmp, "gpu"), acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    base = {"host_root": builder.root, "acs": "disable"}
    cases = [
        ("peermem", dict(base, peermem="maybe")),
        ("acs", dict(base, acs="off")),
        ("persist", dict(base, persist="sometimes")),
        ("host_root", dict(base, host_root=builder.root + "\0")),
        ("host_root", dict(base, host_root="host")),
        ("sysfs_path", dict(base, sysfs_path=builder.sys + "\n")),
        ("sysfs_path", dict(base, sysfs_path=os.path.join(tmp, "missing"))),
        ("procfs_path", dict(base, procfs_path="/proc\0")),
        # reads redirected to a tree, changes planned: they would hit this machine
        ("sysfs_path", {"acs": "disable", "sysfs_path": builder.sys, "procfs_path": builder.proc}),
    ]
    return builder, cases


def role_spec(role):
    with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")) as handle:
        return yaml.safe_load(handle)["argument_specs"]["main"]["options"]


def role_defaults(role):
    with open(os.path.join(ROOT, "roles", role, "defaults", "main.yml")) as handle:
        return yaml.safe_load(handle)


FACTS = {"os_family": "Debian", "distribution": "Debian", "distribution_version": "12", "distribution_major_version": "12",
         "distribution_release": "bookworm", "architecture": "x86_64", "kernel": "6.1.0-18-amd64"}
# Modules a role's checks may use before its first task that reads or changes the host.
CHECK_MODULES = ("ansible.builtin.assert", "ansible.builtin.set_fact", "ansible.builtin.setup", "ansible.builtin.include_vars",
                 "ansible.builtin.include_tasks")


def _collection_loader():
    """Let the templar find this collection's filters (what ansible-playbook sets up at start), once.

    This process imported the collection as a plain package (PYTHONPATH); Ansible's collection finder wants the
    metadata it would have read from meta/runtime.yml on the package, so it is given that.
    """
    from ansible.plugins.loader import filter_loader, init_plugin_loader
    from ansible.utils.collection_loader import AnsibleCollectionConfig
    if AnsibleCollectionConfig.collection_finder is None:
        init_plugin_loader([os.path.normpath(os.path.join(ROOT, "..", "..", ".."))])
    package = sys.modules.get("ansible_collections.rdma.fabric")
    if package is not None and not hasattr(package, "_collection_meta"):
        with open(os.path.join(ROOT, "meta", "runtime.yml")) as handle:
            package._collection_meta = yaml.safe_load(handle) or {}
    if filter_loader.get("rdma.fabric.mofed_var_errors") is None:
        raise RuntimeError("the templar does not find this collection's filters")


def role_check(role, changes, check_mode=False):
    """Errors of what a role runs before it first reads or changes the host, run here on the role's own files.

    First Ansible's argument-spec validation of ``meta/argument_specs.yml``; then the role's tasks in order, from
    ``tasks/main.yml`` into the files it includes, templated with Ansible's templar: ``set_fact`` results are kept,
    each ``assert`` is evaluated (its ``when`` and ``vars`` too), ``setup`` is answered by a Debian 12 fact set and
    ``include_vars`` by ``vars/Debian.yml``; the first other module ends the checks. An exception raised by a
    filter (a role that checks through a filter that fails) counts as a rejection with its message.
    """
    values = role_defaults(role)
    values.update(changes)
    errors = [str(e) for e in ArgumentSpecValidator(role_spec(role)).validate(values).errors]
    if errors:
        return errors
    _collection_loader()
    loader = DataLoader()
    base = os.path.join(ROOT, "roles", role)
    variables = loader.load_from_file(os.path.join(base, "defaults", "main.yml"), trusted_as_template=True)
    variables.update(loader.load_from_file(os.path.join(base, "vars", "main.yml"), trusted_as_template=True))
    variables.update(dict((k, trust_as_template(v) if isinstance(v, str) else v) for k, v in changes.items()))
    variables.update(ansible_facts=FACTS, ansible_check_mode=check_mode, inventory_hostname="node1", role_path=base)

    def run(tasks_file):
        for task in loader.load_from_file(os.path.join(base, "tasks", tasks_file), trusted_as_template=True) or []:
            module = [k for k in task if k.startswith("ansible.builtin.") or k.startswith("rdma.fabric.")]
            module = module[0] if module else None
            if module not in CHECK_MODULES:
                return []  # the first task that reads or changes the host: every check has passed
            scope = dict(variables)
            templar = Templar(loader=loader, variables=scope)
            scope.update(dict((k, templar.template(v)) for k, v in (task.get("vars") or {}).items()))
            templar = Templar(loader=loader, variables=scope)
            when = task.get("when")
            if when is not None and not all(templar.template(trust_as_template("{{ %s }}" % w))
                                            for w in (when if isinstance(when, list) else [when])):
                continue
            args = task[module]
            if module == "ansible.builtin.include_vars":
                variables.update(loader.load_from_file(os.path.join(base, "vars", "Debian.yml"), trusted_as_template=True))
            elif module == "ansible.builtin.include_tasks":
                found = run(args if isinstance(args, str) else args["file"])
                if found is None or found:
                    return found
            elif module == "ansible.builtin.set_fact":
                variables.update(dict((k, templar.template(v)) for k, v in args.items()))
            elif module == "ansible.builtin.assert":
                that = args["that"] if isinstance(args["that"], list) else [args["that"]]
                for condition in that:
                    if not templar.template(trust_as_template("{{ %s }}" % condition)):
                        return [str(templar.template(args.get("fail_msg", condition)))]
        return None  # the file ended: the caller's next task decides

    try:
        return run("main.yml") or []
    except Exception as exc:  # pylint: disable=broad-except
        if "No filter named" in str(exc) or "is undefined" in str(exc):
            raise  # the checks themselves are broken: a traceback in the table, not a rejection
        return [str(exc)]  # a filter that refuses the input (AnsibleFilterError) is the role's check


PIN = "D5D11BF1DA28B94C29D2E8A8D8BE17AB4A0A3C53"
MIRROR = {"mofed_repo_url": "http://10.0.2.100/debian", "mofed_repo_key_url": "http://10.0.2.100/keys/lab-mirror.asc",
          "mofed_repo_key_fingerprints": [PIN]}
ROLE_CASES = [
    ("mofed", "mofed_flavor", {"mofed_flavor": "ofed"}),
    ("mofed", "mofed_repo_url", dict(MIRROR, mofed_repo_url="http://10.0.2.100/debian\nTrusted: yes")),
    ("mofed", "mofed_repo_url", dict(MIRROR, mofed_repo_url="http://10.0.2.100/debian\n Trusted: yes")),
    ("mofed", "mofed_repo_url", dict(MIRROR, mofed_repo_url="gopher://10.0.2.100/debian")),
    ("mofed", "mofed_repo_url", dict(MIRROR, mofed_repo_url="http://10.0.2.100/deb ian")),
    ("mofed", "mofed_repo_suite", dict(MIRROR, mofed_repo_suite="bookworm\nTrusted: yes")),
    ("mofed", "mofed_repo_components", dict(MIRROR, mofed_repo_components=["main\nSigned-By: /tmp/evil.gpg"])),
    ("mofed", "mofed_repo_components", dict(MIRROR, mofed_repo_suite="./", mofed_repo_components=["main"])),
    ("mofed", "mofed_repo_key_url", dict(MIRROR, mofed_repo_key_fingerprints=[])),
    ("mofed", "mofed_repo_key_url", {"mofed_flavor": "doca", "mofed_repo_key_url": "http://mirror/GPG-KEY.pub"}),
    ("mofed", "mofed_repo_key_url", dict(MIRROR, mofed_repo_key_url="ftp://10.0.2.100/key.asc")),
    ("mofed", "mofed_repo_key", dict(MIRROR, mofed_repo_key_url="", mofed_repo_key="-----BEGIN PGP PUBLIC KEY BLOCK-----\nx\n")),
    ("mofed", "mofed_repo_keyring", dict(MIRROR, mofed_repo_key_url="", mofed_repo_keyring="keyrings/x.gpg")),
    ("mofed", "mofed_repo_keyring", dict(MIRROR, mofed_repo_key_url="", mofed_repo_keyring="/etc/apt/x\0.gpg")),
    ("mofed", "mofed_repo_key_fingerprints", dict(MIRROR, mofed_repo_key_fingerprints=["ABCD"])),
    ("mofed", "mofed_repo_username", dict(MIRROR, mofed_repo_username="me\nmachine evil.example", mofed_repo_password="pw")),
    ("mofed", "mofed_repo_password", dict(MIRROR, mofed_repo_username="me", mofed_repo_password="pw with blanks")),
    ("mofed", "mofed_repo_password", dict(MIRROR, mofed_repo_username="me")),
    ("mofed", "mofed_proxy", {"mofed_proxy": "socks5://proxy:1080"}),
    ("mofed", "mofed_proxy", {"mofed_proxy": "http://proxy:3128\n"}),
    ("mofed", "mofed_inbox_packages", {"mofed_inbox_packages": ["rdma-core", "--allow-unauthenticated"]}),
    ("mofed", "mofed_kernel_modules", {"mofed_kernel_modules": ["ib_uverbs", "rdma_ucm\nevil"]}),
    ("mofed", "mofed_kernel_modules", {"mofed_kernel_modules": ["ib_uverbs\n"]}),
    ("mofed", "mofed_dkms_required_modules", {"mofed_dkms_required_modules": ["-x"]}),
    ("mofed", "mofed_doca_profile", {"mofed_doca_profile": "doca-ofed\n"}),
    ("mofed", "mofed_doca_version", {"mofed_doca_version": "../../evil"}),
    ("mofed", "mofed_doca_distro", {"mofed_doca_distro": "debian12/../x"}),
    ("mofed", "mofed_kernel_release", {"mofed_kernel_release": "6.1.0/../../etc"}),
    ("mofed", "mofed_mlnx_ofed_workdir", {"mofed_mlnx_ofed_workdir": "/"}),
    ("mofed", "mofed_mlnx_ofed_workdir", {"mofed_mlnx_ofed_workdir": "var/cache"}),
    ("mofed", "mofed_mlnx_ofed_extra_args", {"mofed_mlnx_ofed_extra_args": ["--with-fw-update"]}),
    ("mofed", "mofed_mlnx_ofed_url", {"mofed_mlnx_ofed_url": "gopher://x/MLNX_OFED_LINUX-1-a-b.tgz"}),
    ("mofed", "mofed_mlnx_ofed_install_timeout", {"mofed_mlnx_ofed_install_timeout": 0}),
    ("mofed", "mofed_reboot_timeout", {"mofed_reboot_timeout": -5}),
    ("mofed", "mofed_openibd_restart", {"mofed_openibd_restart": "sometimes"}),
    ("mofed", "mofed_allow_reboot", {"mofed_allow_reboot": "perhaps"}),
    ("mofed", "mofed_state", {"mofed_state": "gone"}),
    ("gpudirect", "gpudirect_peermem", {"gpudirect_peermem": "maybe"}),
    ("gpudirect", "gpudirect_acs", {"gpudirect_acs": "off"}),
    ("gpudirect", "gpudirect_state", {"gpudirect_state": "removed"}),
    ("gpudirect", "gpudirect_openibd", {"gpudirect_openibd": "sometimes"}),
    ("gpudirect", "gpudirect_persist", {"gpudirect_persist": "perhaps"}),
    ("gpudirect", "gpudirect_sysfs_path", {"gpudirect_sysfs_path": "/sys\n"}),
    ("gpudirect", "gpudirect_sysfs_path", {"gpudirect_sysfs_path": "/srv/copy/sys"}),
    ("gpudirect", "gpudirect_procfs_path", {"gpudirect_procfs_path": "proc"}),
    ("gpudirect", "gpudirect_procfs_path", {"gpudirect_procfs_path": "/proc\0"}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": [{"name": "rxe0\n", "netdev": "eth1"}]}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": [{"name": "rxe0", "netdev": "eth1\nExecStart=/bin/sh"}]}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": [{"name": "rxe0", "netdev": "eth1", "type": "roce"}]}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": [{"name": "rxe0", "netdev": "-eth1"}]}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": [{"name": "rxe0", "netdev": "eth1"}, {"name": "rxe0", "netdev": "eth2"}]}),
    ("soft_roce", "soft_roce_links", {"soft_roce_links": "rxe0"}),
    ("soft_roce", "soft_roce_state", {"soft_roce_state": "gone"}),
    ("soft_roce", "soft_roce_persist", {"soft_roce_persist": "perhaps"}),
]


def acs_words(builder):
    return [struct.unpack_from("<H", builder.read_config(a), 0x14E)[0] for a in ("0000:17:00.0", "0000:17:01.0")]


def malformed(tmp):
    rows = {}

    def count(target, outcome, named):
        row = rows.setdefault(target, {"tried": 0, "rejected": 0, "accepted": 0, "traceback": 0})
        row["tried"] += 1
        if outcome == "traceback":
            row["traceback"] += 1
        elif outcome == "rejected" and named:
            row["rejected"] += 1
        else:
            row["accepted"] += 1

    details = []
    for name, param, args in module_cases(tmp):
        commands = Commands()
        outcome, result = run_module(name, args, commands)
        named = param in str(result.get("msg", "")) and not commands.ran
        outcome = "rejected" if outcome == "failed" else outcome
        count("module " + name, outcome, named)
        details.append((name, param, outcome, named, str(result.get("msg", ""))[:200]))
    builder, cases = gpudirect_cases(tmp)
    for param, args in cases:
        before = (acs_words(builder), sorted(os.listdir(os.path.join(builder.sys, "module"))))
        commands = Commands(builder, allow=True)
        outcome, result = run_module("gpudirect", args, commands)
        unchanged = before == (acs_words(builder), sorted(os.listdir(os.path.join(builder.sys, "module")))) and not commands.ran \
            and not os.path.exists(os.path.join(builder.root, "etc"))
        named = param in str(result.get("msg", "")) and unchanged
        outcome = "rejected" if outcome == "failed" else outcome
        count("module gpudirect", outcome, named)
        details.append(("gpudirect", param, outcome, named, str(result.get("msg", ""))[:200]))
    for role, param, changes in ROLE_CASES:
        try:
            errors = role_check(role, changes)
        except BaseException:  # pylint: disable=broad-except
            count("role " + role, "traceback", False)
            details.append((role, param, "traceback", False, traceback.format_exc(limit=2)))
            continue
        named = any(param in e for e in errors)
        count("role " + role, "rejected" if errors else "accepted", named)
        details.append((role, param, "rejected" if errors else "accepted", named, "; ".join(errors)[:200]))
    return rows, details


# --------------------------------------------------------------------------
# faults: (what, function returning (survived, detail))
# --------------------------------------------------------------------------
def _facts_with_read_error(tmp, err):
    root = os.path.join(tmp, "facts-%d" % err)
    shutil.copytree(os.path.join(SYSFS, "derived_roce_mlx5_ofed"), root, symlinks=True)
    dev = os.path.realpath(os.path.join(root, "sys", "class", "infiniband", "mlx5_0"))
    patches = Patches()
    KernelRefusals(patches, [os.path.join(dev, "ports", "1", "rate"), os.path.join(dev, "fw_ver")], err)
    try:
        warnings = []
        facts = gather_rdma_facts(os.path.join(root, "sys"), warnings=warnings)
    finally:
        patches.undo()
    port = facts["devices"][0]["ports"][0]
    expected = 0 if err in ABSENT_ERRNOS else 2  # the kernel's ordinary refusals are quiet
    return port["rate"] is None and port["state"] == "ACTIVE" and len(warnings) == expected, "%d warnings" % len(warnings)


def _facts_vanishing_device(tmp):
    root = os.path.join(tmp, "vanish")
    shutil.copytree(os.path.join(SYSFS, "derived_rxe"), root, symlinks=True)
    link = os.path.join(root, "sys", "class", "infiniband", "rxe0")
    dev = os.path.realpath(link)
    real_open = os.open
    fired = []

    def vanishing_open(path, flags, mode=0o777, *, dir_fd=None):
        if not fired and dir_fd is not None and path == "state":
            fired.append(path)
            shutil.rmtree(dev)
            os.unlink(link)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    os.open = vanishing_open
    try:
        warnings = []
        facts = gather_rdma_facts(os.path.join(root, "sys"), warnings=warnings)
    finally:
        os.open = real_open
    return bool(fired) and facts["devices"] == [] and "disappeared" in " ".join(warnings), "; ".join(warnings)[:100]


def _fifo(tmp):
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        tree = SysfsTree(tmp)
        value = tree.read(fifo)
    finally:
        os.close(writer)
    return value is None and "EAGAIN" in " ".join(tree.warnings), "; ".join(tree.warnings)[:100]


def _proc_mem_and_zero(tmp):
    tree = SysfsTree(tmp)
    os.symlink("/dev/zero", os.path.join(tmp, "zero"))
    return tree.read("/proc/self/mem") is None and len(tree.read_bytes(os.path.join(tmp, "zero"))) > 0, "EIO read quietly; /dev/zero cut"


def _host_state_unreadable(tmp):
    outcome, result = run_module("host_state", {"paths": ["/proc/self/mem", os.path.join(tmp, "absent")]})
    rec = result.get("paths", {}).get("/proc/self/mem", {})
    return outcome == "ok" and rec.get("readable") is False, "readable: %s" % rec.get("readable")


def _gpudirect_change(tmp, name, during=None, config_gone=False, bin_path=None, allow=True):
    builder = build_ready_host(os.path.join(tmp, name), acs_ctrl=ACS_CTRL_LINUX_DEFAULT, driver_flavour="proprietary")
    if config_gone:
        def during(argv):  # noqa: F811 - someone else changes the second bridge while modprobe runs
            builder.write_config("0000:17:01.0", set_acs_control(builder.read_config("0000:17:01.0"), 0x0005))
    commands = Commands(builder, allow=allow, during=during)
    if bin_path:
        commands = False  # the real run_command: a real execve of a file that cannot be run
    outcome, result = run_module("gpudirect", {"host_root": builder.root, "acs": "disable"}, commands, bin_path=bin_path)
    restored = acs_words(builder)[0] == ACS_CTRL_LINUX_DEFAULT and not os.path.isdir(os.path.join(builder.sys, "module", "nvidia_peermem")) \
        and not os.path.exists(os.path.join(builder.root, "etc", "modules-load.d", "rdma-fabric-gpudirect.conf"))
    return outcome == "failed" and restored, str(result.get("msg", ""))[:120]


def _sigterm(tmp):
    previous = signal.getsignal(signal.SIGTERM)
    try:
        return _gpudirect_change(tmp, "sigterm", during=lambda argv: "-r" in argv or os.kill(os.getpid(), signal.SIGTERM))
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exec_failure(tmp):
    tool = os.path.join(tmp, "modprobe-not-executable")
    with open(tool, "w") as handle:
        handle.write("#!/bin/sh\nexit 0\n")
    os.chmod(tool, 0o644)
    return _gpudirect_change(tmp, "exec", bin_path=tool)


def _boot(tmp, name, change):
    before = build_ready_host(os.path.join(tmp, name + "-before"), acs_ctrl=ACS_CTRL_LINUX_DEFAULT)
    facts = gd.gather(SysfsTree(before.sys, before.proc), "audit")
    record = os.path.join(tmp, name + ".json")
    with open(record, "w") as handle:
        json.dump(facts["acs"]["boot_config"], handle)
    kwargs = {"renumbered": dict(bus=0x25), "swapped": dict(gpu_serial=0x99)}[change]
    after = build_ready_host(os.path.join(tmp, name + "-after"), acs_ctrl=ACS_CTRL_LINUX_DEFAULT, **kwargs)
    out = open(os.devnull, "w")
    try:
        code = gd.cli_main(["--config", record, "--sysfs-path", after.sys], out=out)
    finally:
        out.close()
    words = [struct.unpack_from("<H", after.read_config(a), 0x14E)[0] for a in sorted(after.paths)
             if after.read_config(a)[0x148:0x14A] == b"\x0d\x00"]
    if change == "renumbered":
        return code == 0 and words == [ACS_CTRL_LINUX_DEFAULT, 0x0011, 0x0011], "exit %d, ACS %s" % (code, words)
    return code == 1 and ACS_CTRL_LINUX_DEFAULT in words and 0x0011 not in words, "exit %d, nothing cleared" % code


def faults(tmp):
    cases = [
        ("facts: ETIMEDOUT on port and device attributes", lambda: _facts_with_read_error(tmp, errno.ETIMEDOUT)),
        ("facts: EBUSY on port and device attributes", lambda: _facts_with_read_error(tmp, errno.EBUSY)),
        ("facts: EAGAIN on port and device attributes", lambda: _facts_with_read_error(tmp, errno.EAGAIN)),
        ("facts: ENOMEM on port and device attributes", lambda: _facts_with_read_error(tmp, errno.ENOMEM)),
        ("facts: EIO on port and device attributes (quiet: the kernel's ordinary refusal)",
         lambda: _facts_with_read_error(tmp, errno.EIO)),
        ("facts: a device vanishes mid-read", lambda: _facts_vanishing_device(tmp)),
        ("sysfs: a FIFO with a silent writer (real EAGAIN)", lambda: _fifo(tmp)),
        ("sysfs: /proc/self/mem (real EIO), /dev/zero (never ends)", lambda: _proc_mem_and_zero(tmp)),
        ("host_state: a file whose read fails (real EIO)", lambda: _host_state_unreadable(tmp)),
        ("gpudirect: ACS word changed by someone else mid-run", lambda: _gpudirect_change(tmp, "raced", config_gone=True)),
        ("gpudirect: SIGTERM while modprobe runs", lambda: _sigterm(tmp)),
        ("gpudirect: modprobe cannot be started (EACCES)", lambda: _exec_failure(tmp)),
        ("gpudirect boot: bus renumbered", lambda: _boot(tmp, "renum", "renumbered")),
        ("gpudirect boot: a GPU swapped (other serial number)", lambda: _boot(tmp, "swap", "swapped")),
    ]
    out = []
    for what, case in cases:
        try:
            survived, detail = case()
        except BaseException:  # pylint: disable=broad-except
            survived, detail = False, "traceback: " + traceback.format_exc(limit=2).replace("\n", " | ")
        out.append((what, bool(survived), detail))
    return out


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    tmp = tempfile.mkdtemp(prefix="rdma-fabric-hostile-")
    try:
        rows, details = malformed(tmp)
        fault_rows = faults(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "--json" in argv:
        print(json.dumps({"malformed": rows, "details": details, "faults": fault_rows}, indent=1))
        return rows, fault_rows
    print("| target | malformed inputs tried | rejected before any change, parameter named | accepted | tracebacks |")
    print("| --- | --- | --- | --- | --- |")
    total = dict.fromkeys(("tried", "rejected", "accepted", "traceback"), 0)
    for target in sorted(rows):
        row = rows[target]
        print("| %s | %d | %d | %d | %d |" % (target, row["tried"], row["rejected"], row["accepted"], row["traceback"]))
        for key in total:
            total[key] += row[key]
    print("| all | %(tried)d | %(rejected)d | %(accepted)d | %(traceback)d |" % total)
    print()
    print("| fault injected | survived | detail |")
    print("| --- | --- | --- |")
    for what, survived, detail in fault_rows:
        print("| %s | %s | %s |" % (what, "yes" if survived else "NO", detail.replace("|", "/")))
    print()
    print("faults injected: %d, survived: %d" % (len(fault_rows), sum(1 for r in fault_rows if r[1])))
    for name, param, outcome, named, msg in details:
        if outcome != "rejected" or not named:
            print("NOTE %s %s: %s (named: %s) %s" % (name, param, outcome, named, msg.replace("\n", " ")))
    return rows, fault_rows


if __name__ == "__main__":
    main()
