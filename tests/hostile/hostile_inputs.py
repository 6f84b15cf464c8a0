# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Try malformed inputs and faults on the host-side modules and the roles' variable checks; print the table.

Issue 16's figures, reproducible on any machine (no lab, no root; well under a minute):

* malformed inputs per module and role: how many were tried, rejected before
  any change with the parameter named, accepted (or rejected without the
  parameter named, or only after a change), and ended in a traceback;
* faults injected and survived (no traceback, the state left as it was or
  said).

Modules run in this process through their ``main()`` with AnsibleModule's
exit and fail turned into exceptions (as the unit tests do), on derived
sysfs trees written to a temporary folder; anything else that escapes is a
traceback. "Before any change" is checked per module:

* gpudirect, host_state, perftest, rdma_device_facts: no command ran (the
  command runner is a recording test double that fails the case if called)
  and the trees' files (ACS control words, the modules-load.d file) are as
  before;
* roce_qos: run as Ansible runs the task, its action plugin first (the
  controller-side check of keys given twice) then the module, on the set-up
  of its unit tests' ``lab`` fixture (the lab sysfs tree via ``make_tree``
  and the TEST DOUBLES of
  tests/unit/plugins/module_utils/qos/qos_test_doubles.py: dcb, ip, ethtool,
  rdma_cm configfs): no changing command ran, no configfs group was created,
  every DCB setting, rdma_cm value and file of the tree is as before;
* rdma_link, sriov_vfs: the set-ups and TEST DOUBLES of their unit tests
  (KernelLinkDouble; the igb PF with IpLinkDouble and MlxconfigDouble): no
  command ran (rdma_link), no VF count written, no ``ip link set`` and no
  ``mlxconfig set`` (sriov_vfs).

Roles: what a role runs before its first task that reads or changes the
host, on the role's own files - Ansible's argument-spec validation of
``meta/argument_specs.yml`` (``ArgumentSpecValidator``, what
``validate_argument_spec`` uses), then the role's tasks in order up to the
first task of another kind, its ``set_fact`` and ``assert`` templated with
Ansible's templar, skipped tasks skipped, the facts reads answered, and the
controller-side ``rdma.fabric.validation_plan`` check run as its action
plugin runs it (see :func:`role_check`). The sriov role's ``sriov_firmware``
is checked by sriov_vfs itself (its module rows), after the role reads its
boot units, so the role rows do not try it.

    cd build/collections/ansible_collections/rdma/fabric
    PYTHONPATH=$PWD/../../.. ../../../../.venv/bin/python tests/hostile/hostile_inputs.py   # or --json
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import importlib
import importlib.util
import json
import os
import pathlib
import shutil
import signal
import struct
import sys
import tempfile
import time
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

from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import acs_boot as gd_acs_boot  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect import probes as gd_probes  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import ABSENT_ERRNOS, SysfsTree  # noqa: E402
from ansible_collections.rdma.fabric.tests.unit.fixtures.pci.pci_tree import (  # noqa: E402
    ACS_CTRL_LINUX_DEFAULT,
    build_ready_host,
    set_acs_control,
)
from ansible_collections.rdma.fabric.tests.unit.fixtures.read_faults import KernelRefusals  # noqa: E402
from ansible_collections.rdma.fabric.plugins.action.roce_qos import ActionModule as RoceQosAction  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs as qos_configfs, lock as qos_lock  # noqa: E402
from ansible_collections.rdma.fabric.plugins.module_utils.qos import engine as qos_engine  # noqa: E402
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.qos.qos_test_doubles import (  # noqa: E402
    DcbPort,
    FakeDcbTool,
    FakeEthtool,
    FakeHost,
    FakeIpLink,
    FakeRdmaCmConfigfs,
    make_tree,
)
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_rdma_link_module import KernelLinkDouble  # noqa: E402
from ansible_collections.rdma.fabric.tests.unit.plugins.modules.test_sriov_vfs import IpLinkDouble, MlxconfigDouble, make_pf  # noqa: E402


def _materialise_sysfs_trees():
    """The sysfs fixture folders from their manifests (what tests/unit/conftest.py does before the unit tests)."""
    path = os.path.join(SYSFS, "trees.py")
    spec = importlib.util.spec_from_file_location("rdma_fabric_sysfs_trees", path)
    trees = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trees)
    trees.materialise_all()


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


def run_module(name, args, commands=None, bin_path=None, install=None):
    """(outcome, result): outcome ok | failed | traceback. ``commands=False``: AnsibleModule's own run_command.

    ``install(patches)``: further test doubles to put in place for this run (undone afterwards).
    """
    module = importlib.import_module("ansible_collections.rdma.fabric.plugins.modules." + name)
    patches = Patches()

    def exit_json(self, **kwargs):
        raise _Exit(kwargs)

    def fail_json(self, **kwargs):
        raise _Fail(kwargs)

    warned = []
    patches.setattr(basic.AnsibleModule, "exit_json", exit_json)
    patches.setattr(basic.AnsibleModule, "fail_json", fail_json)
    patches.setattr(basic.AnsibleModule, "warn", lambda self, msg: warned.append(msg))
    if commands is not False:
        commands = commands or Commands()
        patches.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kwargs: commands(argv, **kwargs))
    patches.setattr(basic.AnsibleModule, "get_bin_path",
                    lambda self, tool, required=False, opt_dirs=None: bin_path or "/usr/sbin/" + tool)
    if install is not None:
        install(patches)
    try:
        with patch_module_args(args):
            module.main()
        return "traceback", {"msg": "main() returned without exit_json"}
    except _Exit as done:
        return "ok", dict(done.args[0], warnings=warned + list(done.args[0].get("warnings") or []))
    except _Fail as done:
        return "failed", dict(done.args[0], warnings=warned)
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
        ("host_state", "paths", {"paths": ["/" + "a/" * 2500]}),                        # 5001 characters
        ("host_state", "paths", {"paths": ["/etc/" + "x" * 256]}),                      # a part over NAME_MAX
        ("host_state", "marker", {"paths": ["/etc/hostname"], "marker": "#\nx"}),
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
        ("sysfs_path", dict(base, sysfs_path="/etc")),                                 # a folder, but no sysfs
        ("procfs_path", dict(base, procfs_path="/proc\0")),
        # reads redirected to a tree, changes planned: they would hit this machine
        ("sysfs_path", {"acs": "disable", "sysfs_path": builder.sys, "procfs_path": builder.proc}),
    ]
    return builder, cases


# --------------------------------------------------------------------------
# roce_qos: the set-up of tests/unit/plugins/modules/test_roce_qos.py (its ``lab`` fixture), without pytest
# --------------------------------------------------------------------------
class QosLab(object):
    """The lab sysfs (rxe9 on dcbsim0 with DCB, rxe0 on virtio eth1 without) and the TEST DOUBLES of
    tests/unit/plugins/module_utils/qos/qos_test_doubles.py: FakeDcbTool, FakeIpLink, FakeEthtool,
    FakeRdmaCmConfigfs, routed by FakeHost, which logs every command."""

    def __init__(self, folder):
        self.folder = folder
        self.sysfs = make_tree(folder, "lab_rxe_dcbsim_virtio")
        self.cfs = FakeRdmaCmConfigfs()
        self.ports = {"dcbsim0": DcbPort(), "eth1": DcbPort(supported=False)}
        self.host = FakeHost({"dcb": FakeDcbTool(self.ports), "ip": FakeIpLink(self.sysfs), "ethtool": FakeEthtool()})
        self.lock_path = os.path.join(folder, "run", "qos.lock")
        self.warnings = []

    def install(self, patches):
        host = self.host
        patches.setattr(qos_configfs, "_mkdir", self.cfs.mkdir)
        patches.setattr(qos_configfs, "_rmdir", self.cfs.rmdir)
        patches.setattr(qos_lock, "LOCK_PATH", self.lock_path)
        # TEST SEAM: this tree plays the host's mounted sysfs (any other folder, a copy included, is no sysfs mount)
        tree = os.path.realpath(self.sysfs)
        patches.setattr(qos_engine, "_is_sysfs_mount", lambda path: os.path.realpath(path) == tree)
        patches.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kwargs: host.run_command(argv, **kwargs))
        patches.setattr(basic.AnsibleModule, "get_bin_path",
                        lambda self, name, required=False, opt_dirs=None: host.get_bin_path(name))
        warnings = self.warnings
        patches.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))

    def state(self):
        """What a change could touch: the DCB ports, the rdma_cm values, every file of the tree."""
        files = {}
        for dirpath, dirnames, filenames in os.walk(self.sysfs):
            for name in filenames:
                path = os.path.join(dirpath, name)
                if not os.path.islink(path):
                    with open(path, "rb") as handle:
                        files[path] = handle.read()
        ports = dict((n, (p.pfc_en, list(p.apps), list(p.prio_tc), list(p.tc_tsa), list(p.tc_tx_bw)))
                     for n, p in self.ports.items())
        return ports, dict(self.cfs.values), files

    def run(self, args):
        """The task as Ansible runs it: the action plugin (its controller-side check), then the module.
        ``_written``: the task written as ``key=value`` text (parsed as Ansible parses it)."""
        args = dict(args)
        written = args.pop("_written", None)
        args.setdefault("sysfs_path", self.sysfs)
        return _action(RoceQosAction, args, lambda module_args: run_module("roce_qos", module_args, install=self.install),
                       written=written)

    def unchanged(self, before):
        return self.host.changing_calls() == [] and self.cfs.mkdirs == [] and self.state() == before


class _Shell(object):
    tmpdir = "remote-tmp"  # set: the action plugin makes no temporary folder


class _Connection(object):
    _shell = _Shell()
    has_native_async = False


class _Task(object):
    """TEST DOUBLE of Ansible's Task (what the action plugins use): ``written``, when given, is the
    ``key=value`` text the task was written with (Ansible parses it into ``args``, a key given twice keeping
    its last value, as ansible.parsing.splitter.parse_kv does)."""

    def __init__(self, args, written=None, action="rdma.fabric.roce_qos"):
        self.args = args
        self.action = action
        self.async_val = 0
        self.check_mode = bool(args.get("_ansible_check_mode"))
        self.written = written

    def get_ds(self):
        return {"name": "hostile case", self.action: self.written if self.written is not None else dict(self.args)}


def _action(plugin, args, execute, written=None):
    """Run an action plugin's ``run`` with the module call answered in this process: (outcome, result)."""
    if written is not None:
        from ansible.parsing.splitter import parse_kv
        args = dict(parse_kv(written), **args)
    action = plugin(_Task(args, written), _Connection(), None, None, None)
    action._remove_tmp_path = lambda path, force=False: None
    ran = []

    def execute_module(module_name=None, module_args=None, task_vars=None, **kwargs):
        outcome, result = execute(action._task.args if module_args is None else module_args)
        ran.append(outcome)
        if outcome == "failed":
            result = dict(result, failed=True)
        return result
    action._execute_module = execute_module
    try:
        result = action.run(task_vars={})
    except BaseException:  # pylint: disable=broad-except
        return "traceback", {"msg": traceback.format_exc(limit=3)}
    if ran and ran[0] == "traceback":
        return "traceback", result
    return ("failed" if result.get("failed") else "ok"), result


QOS_GOOD = dict(netdev="dcbsim0", trust="dscp", pfc=[3], dscp2prio={"26": 3, "48": 6}, roce_tos=106, mtu=9000)
QOS_PROFILE = dict(netdev="dcbsim0", trust="dscp", pfc=[3], dscp2prio={"26": 3, "48": 6}, prio_tc={"3": 3, "6": 6},
                   ets=[{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 3, "tsa": "ets", "bw": 50}],
                   roce_tos=106, roce_mode="v2", mtu=9000, pause=False)
NAN = float("nan")


def roce_qos_cases(tmp):
    """Malformed roce_qos calls, each with changes to make on the good parts; (parameter, arguments)."""
    copy = os.path.join(tmp, "sys-copy")
    good = dict(QOS_GOOD)
    return [
        # the mlnx_qos / NicConfigurationTemplate forms that read two ways or are wrong
        ("pfc", dict(good, pfc="0,0,0,1")),                      # flags cut short, or priorities 0 and 1 twice
        ("pfc", dict(good, pfc=[0, 0, 0, 2, 0, 0, 0, 0])),       # flags with a typo
        ("pfc", dict(good, pfc="0,0,0,1,0,0,0,0,0")),            # 9 flags
        ("pfc", dict(good, pfc={"3": True})),                    # a mapping
        ("pfc", dict(good, pfc="3;reboot")),
        ("pfc", dict(good, pfc=[9])),
        ("pfc", dict(good, pfc=[NAN])),
        ("pfc", dict(good, pfc=[True])),
        ("prio_tc", dict(good, prio_tc="0,0,0,3,0,0,6,0")),     # mlnx_qos --prio_tc text: the list form is wanted
        ("prio_tc", dict(good, prio_tc=[0, 0, 0, 3])),
        ("prio_tc", dict(good, prio_tc={"8": 1})),
        ("prio_tc", dict(good, prio_tc={"3": 3, "03": 4})),       # two keys, one meaning
        ("ets", dict(good, ets="50,0,0,50,0,0,0,0")),            # mlnx_qos --tcbw text
        ("ets", dict(good, ets=[{"tc": 0, "tsa": "ets", "bw": 60}, {"tc": 3, "tsa": "ets", "bw": 60}])),
        ("ets", dict(good, ets=[{"tc": 0, "tsa": "strict", "bw": 5}])),
        ("ets", dict(good, ets=[{"tc": 8, "tsa": "ets", "bw": 100}])),
        ("ets", dict(good, ets=[{"tc": 0, "tsa": "ets", "bw": 50}, {"tc": 0, "tsa": "ets", "bw": 50}])),
        ("ets", dict(good, ets=[{"tc": 3, "tsa": "ets"}])),
        ("ets", dict(good, ets=[{"tc": 3, "tsa": "ets", "bw": 60}])),  # with the classes not listed: sums to 60
        ("ets", dict(good, ets=[{"tc": 3, "tsa": "ets", "bw": NAN}])),
        ("dscp2prio", dict(good, dscp2prio={"64": 1})),
        ("dscp2prio", dict(good, dscp2prio={"26": NAN})),
        ("dscp2prio", dict(good, dscp2prio={26: 3, "26": 5})),   # two keys, one meaning
        ("dscp2prio", dict(good, dscp2prio={"26": 3, " 26": 5})),
        ("dscp2prio", dict(good, dscp2prio={" 26": 3, "48": 6})),                  # a blank in the key
        # a key written twice (ansible -m rdma.fabric.roce_qos -a "... mtu=9000 mtu=1500"): the parser keeps the last
        ("mtu", {"_written": "netdev=dcbsim0 trust=dscp roce_tos=106 mtu=9000 mtu=1500"}),
        # valid but harmful (the warning must name the setting and the risk): RoCE's DSCP 26 on priority 4 while PFC
        # is on 3, or the RoCE ToS 0 (priority 0): RoCE traffic lossy; PFC on every priority; CNPs on the lossless one
        ("roce_tos: 106 is DSCP 26, which dscp2prio maps to priority 4", dict(good, dscp2prio={"26": 4, "48": 6}), "harmful"),
        ("roce_tos: 0 is DSCP 0", dict(good, roce_tos=0), "harmful"),
        ("pfc: PFC on all eight priorities", dict(good, pfc=[0, 1, 2, 3, 4, 5, 6, 7]), "harmful"),
        ("cnp: congestion notifications (CNPs) go on priority 3", dict(good, cnp={"priority": 3}, on_unsupported="warn"),
         "harmful"),
        ("dscp2prio", dict(good, trust="pcp")),
        ("trust", dict(good, trust="TRUST_DSCP")),               # NicConfigurationTemplate's spelling
        ("roce_tos", dict(good, roce_tos=300)),
        ("roce_tos", dict(good, roce_tos=-1)),
        ("roce_tos", dict(good, roce_tos=NAN)),
        ("tos", dict(good, tos=96)),
        ("roce_mode", dict(good, roce_mode="v3")),
        ("roce_mode", dict(good, roce_mode="RoCE v3")),
        ("roce_mode", dict(good, roce_mode=True)),
        ("mtu", dict(good, mtu=20)),
        ("mtu", dict(good, mtu=65536)),
        ("mtu", dict(good, mtu=NAN)),
        ("ecn", dict(good, ecn={"np": [3], "xp": [3]})),
        ("ecn", dict(good, ecn={"np": [8]})),
        ("cnp", dict(good, cnp={"dscp": 64})),
        ("cnp", dict(good, cnp={"priority": NAN})),
        ("pause", dict(good, pause="sometimes")),
        ("backend", dict(good, backend="lldptool")),
        ("on_unsupported", dict(good, on_unsupported="ignore")),
        ("netdev", dict(good, netdev="dcbsim0; reboot")),
        ("netdev", dict(good, netdev="$(reboot)")),
        ("netdev", dict(good, netdev="dcbsim0\n")),
        ("netdev", dict(good, netdev="dcbsim0\0")),
        ("netdev", dict(good, netdev="..")),
        ("netdev", dict(good, netdev="dcbsim0dcbsim0dcb")),       # 17 characters
        ("netdev", dict(good, netdev="eth42")),
        ("device", dict(good, netdev=None, device="rxe9`id`")),
        ("device", dict(good, netdev=None, device="rxe9\n")),
        ("device", dict(good, netdev=None, device="rxe42")),
        ("device", dict(good, device="rxe0")),                    # netdev and device name different ports
        ("port", dict(good, netdev=None, device="rxe9", port=2)),
        ("port", dict(good, netdev=None, device="rxe9", port=0)),
        # the list form: a bad entry among good ones -> nothing applied to the good ones either
        ("ports[1].pfc", {"ports": [dict(good), {"netdev": "eth1", "pfc": [9]}]}),
        ("ports[1].netdev", {"ports": [dict(good), {"netdev": "eth1;reboot", "roce_tos": 96}]}),
        ("ports[1].netdev", {"ports": [dict(good), {"netdev": "eth42", "roce_tos": 96}]}),
        ("ports[1]", {"ports": [dict(good), {"netdev": "eth1", "roce_tos": 96, "colour": "red"}]}),
        ("ports[1].prio_tc", {"ports": [dict(good), {"netdev": "eth1", "prio_tc": {3: 3, "03": 4}}]}),
        ("ports[1]", {"ports": [dict(good), dict(good)]}),                      # the same port twice
        ("ports[1]", {"ports": [dict(good), {"device": "rxe9", "port": 1, "roce_tos": 96}]}),  # by device too
        ("ports", {"ports": [dict(good), "eth1"]}),
        ("ports", {"netdev": "dcbsim0", "ports": [dict(good)]}),
        ("pfc", {"pfc": "0,0,0,1", "ports": [dict(good, pfc=None), {"netdev": "eth1", "roce_tos": 96}]}),
        # where the module reads and writes
        ("sysfs_path", dict(good, sysfs_path="/sys\n")),
        ("sysfs_path", dict(good, sysfs_path="sys")),
        ("sysfs_path", dict(good, sysfs_path=os.path.join(copy, "class", "net"))),
        # reads and configfs/ECN writes redirected to a copy of the tree, while dcb and ip change this host
        ("sysfs_path", dict(good, sysfs_path=copy)),
        ("lock_timeout", dict(good, lock_timeout=-1)),
        ("lock_timeout", dict(good, lock_timeout=NAN)),
        ("lock_timeout", dict(good, lock_timeout=10 ** 9)),                       # a wait that never ends
    ], copy


# --------------------------------------------------------------------------
# rdma_link and sriov_vfs: the set-ups of their unit tests (test_rdma_link_module.py, test_sriov_vfs.py)
# --------------------------------------------------------------------------
def link_host(folder):
    """A copy of derived_rxe (rxe0 on ens160, rdma_rxe loaded) with a second netdev eth1, and the TEST DOUBLE
    KernelLinkDouble (rdma link, modprobe, modinfo acting on the copy)."""
    root = os.path.join(folder, "root")
    shutil.copytree(os.path.join(SYSFS, "derived_rxe"), root, symlinks=True)
    sysfs = os.path.join(root, "sys")
    os.makedirs(os.path.join(sysfs, "class", "net", "eth1"))
    with open(os.path.join(sysfs, "class", "net", "eth1", "address"), "w") as handle:
        handle.write("52:54:00:00:02:01\n")
    os.makedirs(os.path.join(sysfs, "module", "rdma_rxe"), exist_ok=True)
    return sysfs, KernelLinkDouble(sysfs)


RDMA_LINK_CASES = [
    ("name", {"name": "rxe9;reboot", "netdev": "eth1"}),
    ("name", {"name": "rxe9\n", "netdev": "eth1"}),
    ("name", {"name": "rxe9\0", "netdev": "eth1"}),
    ("name", {"name": "", "netdev": "eth1"}),
    ("name", {"name": "r" * 64, "netdev": "eth1"}),
    ("name", {"name": "../rxe9", "netdev": "eth1"}),
    ("netdev", {"name": "rxe9", "netdev": "eth1;reboot"}),
    ("netdev", {"name": "rxe9", "netdev": "eth1\n"}),
    ("netdev", {"name": "rxe9", "netdev": "-eth1"}),
    ("netdev", {"name": "rxe9", "netdev": "eth1eth1eth1eth1"}),
    ("netdev", {"name": "rxe9", "netdev": "nosuch0"}),
    ("netdev", {"name": "rxe9"}),
    ("type", {"name": "rxe9", "netdev": "eth1", "type": "roce"}),
    ("state", {"name": "rxe9", "netdev": "eth1", "state": "up"}),
    ("links", {"links": [{"name": "rxe9", "netdev": "eth1"}, {"name": "rxe9", "netdev": "ens160"}]}),
    ("links", {"links": "rxe9"}),
    ("name", {"links": [{"name": "rxe9", "netdev": "eth1"}, {"name": "bad name", "netdev": "ens160"}]}),
    ("netdev", {"links": [{"name": "rxe9", "netdev": "eth1"}, {"name": "siw9", "type": "siw", "netdev": "eth1\nx"}]}),
    ("name", {"links": [{"name": "rxe9", "netdev": "eth1"}, {"netdev": "ens160"}]}),
    ("links", {"name": "rxe9", "netdev": "eth1", "links": [{"name": "siw9", "netdev": "eth1"}]}),
    ("sysfs_path", {"name": "rxe9", "netdev": "eth1", "sysfs_path": "/sys\0"}),
    ("sysfs_path", {"name": "rxe9", "netdev": "eth1", "sysfs_path": "sys"}),
    # valid but harmful: rxe1 on ens160, which carries rxe0 (in use, as far as the module knows): rxe0 is deleted
    ("name: rxe1 replaces rxe0", {"name": "rxe1", "netdev": "ens160"}, "harmful"),
]


def sriov_host(folder):
    """The igb PF of test_sriov_vfs.py (eth2, sriov_totalvfs 7) and its TEST DOUBLES IpLinkDouble and MlxconfigDouble."""
    root = pathlib.Path(folder) / "sys"
    make_pf(root)
    ip, mlx = IpLinkDouble(str(root)), MlxconfigDouble()

    def install(patches):
        patches.setattr(basic.AnsibleModule, "run_command",
                        lambda self, argv, **kw: (mlx if "mlxconfig" in argv[0] else ip).run_command(argv, **kw))
    return str(root), ip, mlx, install


PF2 = {"netdev": "eth2", "numvfs": 2}
SRIOV_CASES = [
    ("numvfs", [dict(PF2, numvfs=8)]),
    ("numvfs", [dict(PF2, numvfs=-1)]),
    ("numvfs", [dict(PF2, numvfs=NAN)]),
    ("numvfs", [dict(PF2, numvfs="2; reboot")]),
    ("numvfs", [{"netdev": "eth2"}]),
    ("netdev", [dict(PF2, netdev="eth2;x")]),
    ("netdev", [dict(PF2, netdev="eth2\n")]),
    ("netdev", [dict(PF2, netdev="eth2\0")]),
    ("netdev", [dict(PF2, netdev="nosuch0")]),
    ("netdev", [dict(PF2), dict(PF2)]),
    ("netdev", [dict(PF2), dict(PF2, netdev="nosuch0", numvfs=1)]),   # a bad PF among good ones: nothing applied
    ("state", [dict(PF2, state="gone")]),
    ("index", [dict(PF2, vfs=[{"index": 2}])]),
    ("index", [dict(PF2, vfs=[{"index": -1}])]),
    ("index", [dict(PF2, vfs=[{"index": 0}, {"index": 0}])]),
    ("mac", [dict(PF2, vfs=[{"index": 0, "mac": "53:54:00:00:00:01"}])]),
    ("mac", [dict(PF2, vfs=[{"index": 0, "mac": "52:54:00:10:00:01\n"}])]),
    ("mac", [dict(PF2, vfs=[{"index": 0, "mac": "52:54:00:10:00:01 trust on"}])]),
    ("link_state", [dict(PF2, vfs=[{"index": 0, "link_state": "up"}])]),
    ("trust", [dict(PF2, vfs=[{"index": 0, "trust": "perhaps"}])]),
    ("vfs", [dict(PF2, vfs="0")]),
]
SRIOV_FIRMWARE_CASES = [
    ("device", {"firmware": [{"device": "mlx5_0; reboot", "num_vfs": 4}], "firmware_apply": True}),
    ("device", {"firmware": [{"device": "0000:3b:00.0\n", "num_vfs": 4}], "firmware_apply": True}),
    ("device", {"firmware": [{"device": "/dev/mst/..", "num_vfs": 4}], "firmware_apply": True}),
    ("num_vfs", {"firmware": [{"device": "0000:3b:00.0", "num_vfs": -1}], "firmware_apply": True}),
    ("num_vfs", {"firmware": [{"device": "0000:3b:00.0", "num_vfs": 100000}], "firmware_apply": True}),
    ("num_vfs", {"firmware": [{"device": "0000:3b:00.0", "num_vfs": NAN}], "firmware_apply": True}),
    ("firmware_apply", {"firmware": [{"device": "0000:3b:00.0", "num_vfs": 4}], "firmware_apply": "perhaps"}),
    ("device", {"firmware": [{"device": "0000:3b:00.0", "num_vfs": 4}, {"device": "0000:3b:00.0", "num_vfs": 8}],
                "firmware_apply": True}),
    ("pf_link_timeout", {"pfs": [{"netdev": "eth2", "numvfs": 2}], "pf_link_timeout": -1}),
    ("pf_link_timeout", {"pfs": [{"netdev": "eth2", "numvfs": 2}], "pf_link_timeout": "30; reboot"}),
    ("pf_link_timeout", {"pfs": [{"netdev": "eth2", "numvfs": 2}], "pf_link_timeout": NAN}),
    ("pf_link_timeout", {"pfs": [{"netdev": "eth2", "numvfs": 2}], "pf_link_timeout": 10 ** 9}),
]


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
                 "ansible.builtin.include_tasks", "rdma.fabric.rdma_device_facts", "rdma.fabric.validation_plan")
_ROLE_RDMA_FACTS = []


def role_rdma_facts():
    """The RDMA facts a role's facts read gets here: those of the roce_qos lab tree (dcbsim0 with DCB, virtio eth1)."""
    if not _ROLE_RDMA_FACTS:
        folder = tempfile.mkdtemp(prefix="rdma-fabric-hostile-facts-")
        try:
            _ROLE_RDMA_FACTS.append(gather_rdma_facts(make_tree(folder, "lab_rxe_dcbsim_virtio")))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _ROLE_RDMA_FACTS[0]


def _validation_plan_check(args, variables):
    """rdma.fabric.validation_plan with check_only, as its action plugin runs it on the controller (ControllerAction:
    its argument spec, then make_plan), this host's rdma_validate_* host variables taken from the role's variables."""
    from ansible_collections.rdma.fabric.plugins.action.validation_plan import HOST_VAR_PREFIX, make_plan
    from ansible_collections.rdma.fabric.plugins.modules.validation_plan import ARGUMENT_SPEC
    from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_validate as fv
    result = ArgumentSpecValidator(ARGUMENT_SPEC).validate(args)
    if result.error_messages:
        return ["rdma.fabric.validation_plan: %s" % e for e in result.error_messages]
    values = dict((name, variables.get(HOST_VAR_PREFIX + name)) for name in fv.HOST_VARS)
    try:
        make_plan(result.validated_parameters, dict((host, values) for host in result.validated_parameters["hosts"]))
    except (fv.ValidateError, ValueError) as exc:
        return ["rdma.fabric.validation_plan: %s" % exc]
    return []


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
    if filter_loader.get("rdma.fabric.role_var_errors") is None:
        raise RuntimeError("the templar does not find this collection's filters")


def role_check(role, changes, check_mode=False):
    """Errors of what a role runs before it first reads or changes the host, run here on the role's own files.

    First Ansible's argument-spec validation of ``meta/argument_specs.yml``; then the role's tasks in order, from
    ``tasks/main.yml`` into the files it includes, templated with Ansible's templar: ``set_fact`` results are kept,
    each ``assert`` is evaluated (its ``when`` and ``vars`` too), ``setup`` is answered by a Debian 12 fact set and
    ``include_vars`` by ``vars/Debian.yml``, a ``block``'s tasks run in order; the first other module ends the
    checks. An exception raised by a
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
    if os.path.exists(os.path.join(base, "vars", "main.yml")):
        variables.update(loader.load_from_file(os.path.join(base, "vars", "main.yml"), trusted_as_template=True))
    variables.update(dict((k, trust_as_template(v) if isinstance(v, str) else v) for k, v in changes.items()))
    variables.update(ansible_facts=dict(FACTS, rdma=role_rdma_facts()), ansible_check_mode=check_mode, inventory_hostname="node1",
                     role_path=base, ansible_play_hosts_all=["node1"])

    def run(tasks_file):
        return run_tasks(loader.load_from_file(os.path.join(base, "tasks", tasks_file), trusted_as_template=True) or [])

    def run_tasks(tasks):
        for task in tasks:
            if "block" in task:  # a block's tasks in order, under its when (its rescue/always: not checks)
                when = task.get("when")
                templar = Templar(loader=loader, variables=dict(variables, **(task.get("vars") or {})))
                if when is not None and not all(templar.template(trust_as_template("{{ %s }}" % w) if isinstance(w, str)
                                                                 else w) for w in (when if isinstance(when, list) else [when])):
                    continue
                found = run_tasks(task["block"])
                if found is None:
                    continue
                return found
            module = [k for k in task if k.startswith("ansible.builtin.") or k.startswith("rdma.fabric.")]
            module = module[0] if module else None
            scope = dict(variables)
            scope.update(task.get("vars") or {})  # templated when used, as Ansible does (one may use another)
            templar = Templar(loader=loader, variables=scope)
            when = task.get("when")
            if when is not None and not all(templar.template(trust_as_template("{{ %s }}" % w) if isinstance(w, str) else w)
                                            for w in (when if isinstance(when, list) else [when])):
                continue  # a skipped task neither reads nor changes the host
            if module not in CHECK_MODULES:
                return []  # the first task that reads or changes the host: every check has passed
            args = task[module]
            if module == "rdma.fabric.rdma_device_facts":
                continue  # answered: ansible_facts.rdma holds the facts of a RoCE lab host
            if module == "rdma.fabric.validation_plan":
                errors = _validation_plan_check(templar.template(args), scope)
                if errors:
                    return errors
                continue
            if module == "ansible.builtin.include_vars":
                variables.update(loader.load_from_file(os.path.join(base, "vars", "Debian.yml"), trusted_as_template=True))
            elif module == "ansible.builtin.include_tasks":
                if task.get("loop") is not None:
                    return []  # steps that prepare and read each host (rdma_validate): the checks are behind us
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
# lossless_ethernet: its ports named (the checks run on the facts of the roce_qos lab tree, which the role's facts read gets).
LE = {"lossless_ethernet_ports": [{"netdev": "dcbsim0"}]}
ROLE_CASES += [
    ("lossless_ethernet", "lossless_ethernet_pfc", dict(LE, lossless_ethernet_pfc="0,0,0,1")),
    ("lossless_ethernet", "lossless_ethernet_pfc", dict(LE, lossless_ethernet_pfc=[9])),
    ("lossless_ethernet", "lossless_ethernet_pfc", dict(LE, lossless_ethernet_pfc=[float("nan")])),
    ("lossless_ethernet", "lossless_ethernet_dscp2prio", dict(LE, lossless_ethernet_dscp2prio={26: 3, "26": 5})),
    ("lossless_ethernet", "lossless_ethernet_dscp2prio", dict(LE, lossless_ethernet_dscp2prio={64: 3})),
    ("lossless_ethernet", "lossless_ethernet_trust", dict(LE, lossless_ethernet_trust="TRUST_DSCP")),
    ("lossless_ethernet", "lossless_ethernet_roce_tos", dict(LE, lossless_ethernet_roce_tos=300)),
    ("lossless_ethernet", "lossless_ethernet_roce_mode", dict(LE, lossless_ethernet_roce_mode="v3")),
    ("lossless_ethernet", "lossless_ethernet_mtu", dict(LE, lossless_ethernet_mtu=20)),
    ("lossless_ethernet", "lossless_ethernet_ets", dict(LE, lossless_ethernet_ets=[{"tc": 0, "tsa": "ets", "bw": 60},
                                                                                   {"tc": 3, "tsa": "ets", "bw": 60}])),
    ("lossless_ethernet", "lossless_ethernet_cnp", dict(LE, lossless_ethernet_cnp={"dscp": 64})),
    ("lossless_ethernet", "lossless_ethernet_backend", dict(LE, lossless_ethernet_backend="lldptool")),
    ("lossless_ethernet", "lossless_ethernet_state", dict(LE, lossless_ethernet_state="gone")),
    ("lossless_ethernet", "lossless_ethernet_openibd", dict(LE, lossless_ethernet_openibd="sometimes")),
    ("lossless_ethernet", "lossless_ethernet_manage_packages", dict(LE, lossless_ethernet_manage_packages="")),
    ("lossless_ethernet", "lossless_ethernet_ports", {"lossless_ethernet_ports": [{"netdev": "dcbsim0; reboot"}]}),
    ("lossless_ethernet", "lossless_ethernet_ports", {"lossless_ethernet_ports": [{"netdev": "dcbsim0\n"}]}),
    ("lossless_ethernet", "lossless_ethernet_ports", {"lossless_ethernet_ports": [{"netdev": "dcbsim0"}, {"netdev": "eth42"}]}),
    ("lossless_ethernet", "lossless_ethernet_ports", {"lossless_ethernet_ports": [{"netdev": "dcbsim0"}, {"netdev": "dcbsim0"}]}),
    ("lossless_ethernet", "lossless_ethernet_ports", {"lossless_ethernet_ports": [{"netdev": "dcbsim0", "colour": "red"}]}),
    ("lossless_ethernet", "lossless_ethernet_port_settings", dict(LE, lossless_ethernet_port_settings={"dcbsim0": {"pfc": [9]}})),
    ("lossless_ethernet", "lossless_ethernet_port_settings", dict(LE, lossless_ethernet_port_settings={"dcbsim0": "pfc=3"})),
    ("lossless_ethernet", "lossless_ethernet_port_settings",
     dict(LE, lossless_ethernet_port_settings={"dcbsim0": {"device": "mlx5_1", "port": 2}})),
    # a typo (dcbsim0 as dcbsimO): settings that apply to nothing here, legitimate in group variables for other hosts
    ("lossless_ethernet", "lossless_ethernet_port_settings.dcbsimO",
     dict(LE, lossless_ethernet_port_settings={"dcbsimO": {"mtu": 9000}}), "harmful"),
    ("k8s_rdma_stack", "k8s_rdma_stack_method", {"k8s_rdma_stack_method": "helm"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_namespace", {"k8s_rdma_stack_namespace": "Kube System"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_namespace", {"k8s_rdma_stack_namespace": "kube-system\n"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_rdma_shared_dev_plugin_version", {"k8s_rdma_stack_rdma_shared_dev_plugin_version": "v1.5.3\n"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_multus_image", {"k8s_rdma_stack_multus_image": "ghcr.io/x/multus cni"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_shared_devices",
     {"k8s_rdma_stack_shared_devices": [{"resourceName": "rdma shared", "rdmaHcaMax": 63}]}),
    ("k8s_rdma_stack", "k8s_rdma_stack_shared_devices",
     {"k8s_rdma_stack_shared_devices": [{"resourceName": "rdma_shared_device_a", "rdmaHcaMax": -1}]}),
    ("k8s_rdma_stack", "k8s_rdma_stack_wait_timeout", {"k8s_rdma_stack_wait_timeout": -5}),
    ("k8s_rdma_stack", "k8s_rdma_stack_wait_timeout", {"k8s_rdma_stack_wait_timeout": 10 ** 9}),
    ("k8s_rdma_stack", "k8s_rdma_stack_shared_dev_plugin_periodic_update_interval",
     {"k8s_rdma_stack_shared_dev_plugin_periodic_update_interval": 10 ** 9}),
    ("k8s_rdma_stack", "k8s_rdma_stack_nccl_tc", {"k8s_rdma_stack_nccl_tc": 300}),
    ("k8s_rdma_stack", "k8s_rdma_stack_nccl_gid_index", {"k8s_rdma_stack_nccl_gid_index": "three"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_node_label_prefix", {"k8s_rdma_stack_node_label_prefix": "rdma fabric"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_nccl_extra_env", {"k8s_rdma_stack_nccl_extra_env": {"NCCL IB HCA": "mlx5_0"}}),
    ("k8s_rdma_stack", "k8s_rdma_stack_image_pull_secrets", {"k8s_rdma_stack_image_pull_secrets": ["Bad_Secret"]}),
    ("k8s_rdma_stack", "k8s_rdma_stack_output_dir", {"k8s_rdma_stack_output_dir": "manifests\n"}),
    ("k8s_rdma_stack", "k8s_rdma_stack_image_pull_policy", {"k8s_rdma_stack_image_pull_policy": "always"}),
    ("rdma_validate", "rdma_validate_topology", {"rdma_validate_topology": "mesh"}),
    ("rdma_validate", "rdma_validate_tests", {"rdma_validate_tests": ["ib_write_bw; reboot"]}),
    ("rdma_validate", "rdma_validate_base_port", {"rdma_validate_base_port": 70000}),
    ("rdma_validate", "rdma_validate_base_port", {"rdma_validate_base_port": 22}),
    ("rdma_validate", "rdma_validate_min_bw_fraction", {"rdma_validate_min_bw_fraction": 1.5}),
    ("rdma_validate", "rdma_validate_min_bw_fraction", {"rdma_validate_min_bw_fraction": float("nan")}),
    ("rdma_validate", "rdma_validate_max_latency_us", {"rdma_validate_max_latency_us": -1.0}),
    ("rdma_validate", "rdma_validate_timeout", {"rdma_validate_timeout": 0}),
    ("rdma_validate", "rdma_validate_neighbours", {"rdma_validate_neighbours": 0}),
    ("rdma_validate", "rdma_validate_concurrency", {"rdma_validate_concurrency": -1}),
    ("rdma_validate", "rdma_validate_bw_size", {"rdma_validate_bw_size": 0}),
    ("rdma_validate", "rdma_validate_results_dir", {"rdma_validate_results_dir": "/srv/results\n"}),
    ("rdma_validate", "rdma_validate_device", {"rdma_validate_device": "mlx5_0; reboot"}),
    ("rdma_validate", "rdma_validate_port", {"rdma_validate_port": 256}),
    ("rdma_validate", "rdma_validate_data_ip", {"rdma_validate_data_ip": "$(reboot)"}),
    ("job_env", "job_env_nccl_conf_path", {"job_env_nccl_conf_path": "etc/nccl.conf"}),
    ("job_env", "job_env_env_file_path", {"job_env_env_file_path": "/etc/rdma-fabric/job env"}),
    ("job_env", "job_env_profile_path", {"job_env_profile_path": "/etc/nccl.conf"}),
    ("job_env", "job_env_tc", {"job_env_tc": 300}),
    ("job_env", "job_env_tc", {"job_env_tc": "106; reboot"}),
    # the filters name their own option (gid_index, transports: the variable without job_env_ / job_env_ucx_)
    ("job_env", "gid_index", {"job_env_gid_index": "three"}),
    ("job_env", "job_env_openmpi_mca", {"job_env_openmpi_mca": {"btl tcp": "self"}}),
    ("job_env", "job_env_openmpi_mca", {"job_env_openmpi_mca": {"pml": "ucx; reboot"}}),
    ("job_env", "job_env_nccl_extra", {"job_env_nccl_extra": {"NCCL_DEBUG": "INFO\nLD_PRELOAD=/tmp/x.so"}}),
    ("job_env", "transports", {"job_env_ucx_transports": "rc; reboot"}),
    ("job_env", "job_env_devices", {"job_env_devices": ["rxe9;x"]}),
    ("job_env", "job_env_nccl_socket_ifname", {"job_env_nccl_socket_ifname": "eth0 eth1"}),
    ("job_env", "job_env_state", {"job_env_state": "gone"}),
    # sriov: sriov_firmware is checked by rdma.fabric.sriov_vfs itself before any change (see its module rows);
    # the role reads its boot units first, so role_check stops before it.
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2;x", "numvfs": 2}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2\n", "numvfs": 2}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2", "numvfs": -1}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2"}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "53:54:00:00:00:01"}]}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0}, {"index": 0}]}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2", "numvfs": 2}, {"netdev": "eth2", "numvfs": 4}]}),
    ("sriov", "sriov_pfs", {"sriov_pfs": [{"netdev": "eth2", "numvfs": 2, "colour": "red"}]}),
    ("sriov", "sriov_state", {"sriov_state": "gone"}),
    ("sriov", "sriov_persist", {"sriov_persist": "perhaps"}),
    ("sriov", "sriov_firmware_reboot", {"sriov_firmware_reboot": "perhaps"}),
    ("sriov", "sriov_pf_link_timeout", {"sriov_pf_link_timeout": "soon"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "var/lib/node-exporter"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/var/lib/node exporter\n"}),
    ("rdma_metrics", "rdma_metrics_interval", {"rdma_metrics_interval": 5}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": "mlx5_0"}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"match": "mlx5_0/1; x"}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"device": "mlx5_0"}]}),
    ("rdma_metrics", "rdma_metrics_gpudirect", {"rdma_metrics_gpudirect": "maybe"}),
    ("rdma_metrics", "rdma_metrics_lossless_unit", {"rdma_metrics_lossless_unit": "rdma fabric.service"}),
    ("rdma_metrics", "rdma_metrics_lossless_unit", {"rdma_metrics_lossless_unit": "rdma-fabric-lossless.service\n"}),
    ("rdma_metrics", "rdma_metrics_lossless_saved_dir", {"rdma_metrics_lossless_saved_dir": "etc/rdma-fabric"}),
    ("rdma_metrics", "rdma_metrics_rules_dir", {"rdma_metrics_rules_dir": "rules"}),
    ("rdma_metrics", "rdma_metrics_state", {"rdma_metrics_state": "gone"}),
    # ReadWritePaths= of the collector's unit: a blank adds /etc, '/' the whole filesystem
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/var/lib/prometheus/node-exporter /etc"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/etc"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/var/lib/x/../../../etc"}),
    ("rdma_metrics", "rdma_metrics_textfile_dir", {"rdma_metrics_textfile_dir": "/var/lib/%h"}),
    ("rdma_metrics", "rdma_metrics_lossless_saved_dir", {"rdma_metrics_lossless_saved_dir": "/etc/rdma-fabric/../../root"}),
    ("rdma_metrics", "rdma_metrics_rules_dir", {"rdma_metrics_rules_dir": "/etc/prometheus/../../root"}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"match": 'mlx5"0}'}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": -100}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": 0}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports",
     {"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": float("nan")}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports",
     {"rdma_metrics_expected_ports": [{"match": "mlx5_0", "rate_gbps": float("inf")}]}),
    ("rdma_metrics", "rdma_metrics_expected_ports", {"rdma_metrics_expected_ports": [{"match": "mlx5_0", "colour": 1}]}),
    ("rdma_metrics", "rdma_metrics_interval", {"rdma_metrics_interval": 10 ** 9}),
    ("rdma_metrics", "rdma_metrics_interval", {"rdma_metrics_interval": 3600}, "harmful"),
    ("job_env", "job_env_nccl_extra", {"job_env_nccl_extra": {"NCCL_X\nLD_PRELOAD": "/tmp/x.so"}}),
    ("job_env", "job_env_nccl_extra", {"job_env_nccl_extra": {"X=$(reboot)": 1}}),
    ("job_env", "job_env_ucx_extra", {"job_env_ucx_extra": {"UCX TLS": "rc"}}),
    ("job_env", "job_env_ucx_extra", {"job_env_ucx_extra": {"UCX_TLS": "rc\nLD_PRELOAD=/tmp/x.so"}}),
    ("job_env", "job_env_nccl_extra", {"job_env_nccl_extra": {"NCCL_IB_TIMEOUT": float("nan")}}),
    ("job_env", "job_env_env_file_path", {"job_env_env_file_path": "/etc/../root/.bashrc"}),
    ("job_env", "job_env_nccl_conf_path", {"job_env_nccl_conf_path": "/etc/./nccl.conf"}),
    ("job_env", "job_env_ucx_conf_path", {"job_env_ucx_conf_path": "/etc/ucx/ucx.conf\n"}),
    ("job_env", "job_env_gid_index", {"job_env_gid_index": -1}),
    ("job_env", "job_env_ucx_tcp_netdevs", {"job_env_ucx_tcp_netdevs": ["eth0;x"]}),
    ("host_tools", "host_tools_python", {"host_tools_python": "/usr/bin/python3 -c evil"}),
    ("host_tools", "host_tools_python", {"host_tools_python": "python3"}),
    ("host_tools", "host_tools_python", {"host_tools_python": "/usr/bin/python3\nExecStartPre=/bin/sh"}),
    ("host_tools", "host_tools_state", {"host_tools_state": "read"}),
]


# --------------------------------------------------------------------------
# controller side: the fleet-wide actions (run as Ansible runs them: the action plugin's ``run`` with a task
# double and the hosts' variables in ``hostvars``) and the playbooks' own checks (the filters they call, on the
# values their variables would hold)
# --------------------------------------------------------------------------
def _k8s_facts(name):
    with open(os.path.join(ROOT, "tests", "unit", "fixtures", "k8s", "facts", name + ".json")) as handle:
        return json.load(handle)


class HostVarsDouble(dict):
    """TEST DOUBLE of Ansible's HostVars (what read_hosts uses of it: ``in``, ``raw_get``, ``[host]``)."""

    def raw_get(self, host):
        return self[host]


def controller_task_vars():
    """Two inventory hosts with the RDMA facts of the fixtures roce-a and ib-a, as a play's task variables."""
    hosts = HostVarsDouble(node1={"ansible_facts": {"rdma": _k8s_facts("roce-a"), "nodename": "node1"},
                                  "rdma_validate_device": "mlx5_0"},
                           node2={"ansible_facts": {"rdma": _k8s_facts("ib-a"), "nodename": "node2"}})
    return {"hostvars": hosts, "inventory_hostname": "localhost", "groups": {"all": ["node1", "node2"]}}


def run_action(plugin, name, args, check_mode=False):
    """(outcome, result) of a controller action: ``rejected`` for a failed result or the AnsibleError that Ansible's
    task executor turns into one, ``traceback`` for any other exception."""
    from ansible.errors import AnsibleError
    from ansible.template import Templar as _Templar
    task = _Task(dict(args))
    task.action = "rdma.fabric." + name
    task.check_mode = check_mode
    task.diff = False
    action = plugin(task, _Connection(), None, DataLoader(), _Templar(loader=DataLoader()), None)
    try:
        result = action.run(task_vars=controller_task_vars())
    except AnsibleError as exc:
        return "rejected", {"msg": str(exc)}
    except BaseException:  # pylint: disable=broad-except
        return "traceback", {"msg": traceback.format_exc(limit=3)}
    return ("rejected" if result.get("failed") else "ok"), result


def _listing(folder):
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for fname in filenames:
            path = os.path.join(dirpath, fname)
            with open(path, "rb") as handle:
                out[path] = (handle.read(), os.stat(path).st_mode)
    return out


MARK = "# Rendered by rdma.fabric.k8s_rdma_stack"
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "rdma-devices", "namespace": "kube-system"},
      "data": {"a": "1"}}


def controller_cases(tmp):
    """(target, action module name, parameter to be named, arguments, kind) of the fleet-wide actions; each runs
    with its output folder under ``tmp/out``, which must be as before afterwards."""
    out = os.path.join(tmp, "out")
    manifests = {"dest": out, "objects": [CM], "node_labels": {"node1": {"rdma.fabric/capable": "true"}},
                 "marker": MARK, "header": MARK + ". Do not edit.", "kustomization_header": MARK + "."}
    report = {"dest": out, "hosts": ["node1", "node2"], "pools": True, "formats": ["json"]}
    plan = {"hosts": ["node1", "node2"], "check_only": True, "var_prefix": "rdma_validate_"}
    results = {"plan": {"runs": [], "results": [], "pairs": []}, "dest": out}
    return [
        ("node_pools", "hosts", {"hosts": ["node1", "nosuch"]}),
        ("node_pools", "node_name_var", {"hosts": ["node1"], "node_name_var": "node name"}),
        ("node_pools", "nccl", {"hosts": ["node1"], "nccl": {"colour": "red"}}),
        ("node_pools", "extra", {"hosts": ["node1"], "nccl": {"extra": {"NCCL_X\nLD_PRELOAD": "/tmp/x.so"}}}),
        ("node_pools", "extra", {"hosts": ["node1"], "nccl": {"extra": {"X=$(reboot)": 1}}}),
        ("node_pools", "extra", {"hosts": ["node1"], "nccl": {"extra": {"NCCL_DEBUG": "INFO\nLD_PRELOAD=/tmp/x.so"}}}),
        ("node_pools", "extra", {"hosts": ["node1"], "nccl": {"extra": ["NCCL_DEBUG=INFO"]}}),
        ("node_pools", "socket_ifname", {"hosts": ["node1"], "nccl": {"socket_ifname": "eth0\nX=1"}}),
        ("node_pools", "tc", {"hosts": ["node1"], "nccl": {"tc": 300}}),
        ("node_pools", "gid_index", {"hosts": ["node1"], "nccl": {"gid_index": "three"}}),
        ("node_pools", "on_no_rdma", {"hosts": ["node1"], "nccl": {"on_no_rdma": "ignore"}}),
        ("node_pools", "link_layers", {"hosts": ["node1"], "nccl": {"link_layers": ["Ethernet\n"]}}),
        ("node_pools", "devices", {"hosts": ["node1"], "nccl": {"devices": ["mlx5_0;x"]}}),
        ("k8s_manifests", "mode", dict(manifests, mode="4777")),
        ("k8s_manifests", "mode", dict(manifests, mode="0755")),
        ("k8s_manifests", "mode", dict(manifests, mode="rw")),
        ("k8s_manifests", "files", dict(manifests, files={"x\n.yaml": MARK + "\n"})),
        ("k8s_manifests", "files", dict(manifests, files={"../x.yaml": MARK + "\n"})),
        ("k8s_manifests", "metadata.name", dict(manifests, objects=[dict(CM, metadata={"name": "a\nb"})])),
        ("k8s_manifests", "metadata.namespace", dict(manifests, objects=[dict(CM, metadata={"name": "a", "namespace": "../x"})])),
        ("k8s_manifests", "objects", dict(manifests, objects=[{"kind": "ConfigMap"}])),
        ("k8s_manifests", "node_labels", dict(manifests, node_labels={"node1": {"a b": "x"}})),
        ("k8s_manifests", "node_labels", dict(manifests, node_labels={"node1": {"rdma.fabric/pool": "a\nb"}})),
        ("k8s_manifests", "node_labels", dict(manifests, node_labels={"node1": "x"})),
        ("k8s_manifests", "marker", dict(manifests, marker="", header="", kustomization_header="")),
        ("k8s_manifests", "header", dict(manifests, header="# another tool")),
        ("k8s_manifests", "dest", dict(manifests, dest=out + "/../elsewhere")),
        ("k8s_manifests", "dest", dict(manifests, dest=out + "\n")),
        ("k8s_manifests", "state", dict(manifests, state="gone")),
        ("validation_plan", "results_dir", dict(plan, results_dir="rel/../x")),
        ("validation_plan", "results_dir", dict(plan, results_dir="/srv/re\nports")),
        ("validation_plan", "topology", dict(plan, topology="mesh")),
        ("validation_plan", "tests", dict(plan, tests=["rping; reboot"])),
        ("validation_plan", "base_port", dict(plan, base_port=22)),
        ("validation_plan", "min_bw_fraction", dict(plan, min_bw_fraction=float("nan"))),
        ("validation_plan", "max_latency_us", dict(plan, max_latency_us=float("inf"))),
        ("validation_plan", "neighbours", dict(plan, neighbours=0)),
        ("validation_plan", "timeout", dict(plan, timeout=10 ** 9)),
        ("validation_plan", "hosts", dict(plan, hosts="node1\nnode2")),
        ("validation_results", "dest", dict(results, dest=out + "/../x")),
        ("validation_results", "record_var", dict(results, record_var="a b")),
        ("validation_results", "plan", dict(results, plan="x")),
        ("fabric_report", "basename", dict(report, basename="fabric\nreport")),
        ("fabric_report", "basename", dict(report, basename="../x")),
        ("fabric_report", "dest", dict(report, dest=out + "/../x")),
        ("fabric_report", "mode", dict(report, mode="4777")),
        ("fabric_report", "formats", dict(report, formats=["pdf"])),
        ("fabric_report", "hosts", dict(report, hosts={"node1": "up"})),
        ("fabric_report", "hosts", dict(report, hosts=[1, {"a": 1}])),
    ]


def playbook_cases(tmp):
    """(playbook, parameter to be named, check, kind): ``check()`` runs what the playbook runs on the value
    (site.yml: rollout_settings and rollout_drain; check_pod.yml: pod_check), returning (outcome, message)."""
    from ansible.errors import AnsibleFilterError
    from ansible_collections.rdma.fabric.plugins.filter import pod_check as pod_check_filter
    from ansible_collections.rdma.fabric.plugins.filter import rollout as rollout_filter
    from ansible_collections.rdma.fabric.plugins.plugin_utils.k8s_rdma import shared_dev_plugin_config

    hosts = ["lab%d" % i for i in range(1, 5)]  # a four-host fleet

    def settings(serial=None, max_fail=None, **kw):
        def check():
            try:
                result = rollout_filter.rollout_settings(serial, max_fail, hosts, **kw)
            except AnsibleFilterError as exc:
                return "rejected", str(exc)
            warnings = result.get("warnings") or []
            return ("warned" if warnings else "ok"), "; ".join(warnings)
        return check

    def drain(content):
        path = os.path.join(tmp, "plan-%d.json" % len(os.listdir(tmp)))
        with open(path, "w") as handle:
            handle.write(content)

        def check():
            try:
                rollout_filter.rollout_drain(path, hosts)
            except AnsibleFilterError as exc:
                return "rejected", str(exc)
            return "ok", ""
        return check

    config = shared_dev_plugin_config([{"resourceName": "rdma_shared_device_a"}], [_k8s_facts("roce-a")])
    pools = {"roce": _k8s_facts("roce-a")}

    def pod(workload, configs=None, workload_file=None):
        def check():
            named = {"workload_file": workload_file} if workload_file else {}
            try:
                pod_check_filter.pod_check(workload, [config] if configs is None else configs, pools, **named)
            except AnsibleFilterError as exc:
                return "rejected", str(exc)
            return "ok", ""
        return check

    res = {"limits": {"rdma/rdma_shared_device_a": 1}}
    return [
        ("site.yml", "rdma_fabric_serial", settings("100%"), "harmful"),      # the whole fleet in one batch
        ("site.yml", "rdma_fabric_serial", settings(1000), "harmful"),
        ("site.yml", "rdma_fabric_serial", settings([4, 1]), "harmful"),
        ("site.yml", "rdma_fabric_max_fail_percentage", settings([1, "100%"], 100), "harmful"),
        ("site.yml", "rdma_fabric_allow_single_batch", settings("100%", allow_single_batch="perhaps"), "malformed"),
        ("site.yml", "rdma_fabric_serial", settings(0), "malformed"),
        ("site.yml", "rdma_fabric_serial", settings("abc"), "malformed"),
        ("site.yml", "rdma_fabric_serial", settings("[1, 5]"), "malformed"),
        ("site.yml", "rdma_fabric_max_fail_percentage", settings(1, 150), "malformed"),
        ("site.yml", "rdma_fabric_batch_reboot", settings(1, batch_reboot="perhaps"), "malformed"),
        ("site.yml", "rdma_fabric_batch_reboot_timeout", settings(1, batch_reboot_timeout=10 ** 9), "malformed"),
        ("site.yml", "rdma_fabric_k8s_drain_timeout", settings(1, k8s_drain_timeout="abc"), "malformed"),
        ("site.yml", "rdma_fabric_k8s_drain_timeout", settings(1, k8s_drain_timeout=10 ** 9), "malformed"),
        ("site.yml", "rdma_fabric_slurm_drain", settings(1, flags={"rdma_fabric_slurm_drain": "ture"}), "malformed"),
        ("site.yml", "rdma_fabric_k8s_drain", settings(1, flags={"rdma_fabric_k8s_drain": 1}), "malformed"),
        ("site.yml", "rdma_fabric_drain_plan", drain('{"check_mode": true, "hosts": {"lab1": {"changes": -1}}}'), "harmful"),
        ("site.yml", "rdma_fabric_drain_plan", drain('{"check_mode": false, "hosts": {}}'), "malformed"),
        ("site.yml", "rdma_fabric_drain_plan", drain("{"), "malformed"),
        ("check_pod.yml", "containers", pod({"kind": "Pod", "spec": {"containers": "abc"}}), "malformed"),
        ("check_pod.yml", "limits", pod({"kind": "Pod", "spec": {"containers": [{"resources": {"limits": {1: 2}}}]}}),
         "malformed"),
        ("check_pod.yml", "workerGroupSpecs", pod({"kind": "RayCluster", "spec": {"workerGroupSpecs": ["abc"]}}),
         "malformed"),
        ("check_pod.yml", "spec", pod({"kind": "Deployment", "spec": [1, 2]}), "malformed"),
        ("check_pod.yml", "resources", pod({"kind": "Pod", "spec": {"containers": [{"resources": "abc"}]}}), "malformed"),
        ("check_pod.yml", "metadata", pod({"kind": "Pod", "metadata": [1], "spec": {"containers": [{"resources": res}]}}),
         "malformed"),
        ("check_pod.yml", "rendered/bad.yaml", pod({"kind": "Pod", "spec": {"containers": [{"resources": res}]}},
                                                   configs={"rendered/bad.yaml": "a: [1\n"}), "malformed"),
        ("check_pod.yml", "pod.yaml", pod("spec: {\n", workload_file="pod.yaml"), "malformed"),
        ("check_pod.yml", "configList", pod({"kind": "Pod", "spec": {"containers": [{"resources": res}]}},
                                            configs=[{"configList": ["x"]}]), "malformed"),
    ]


# --------------------------------------------------------------------------
# spec-derived role cases: every option of every role's meta/argument_specs.yml, by its type - text (str, path;
# no choices) with a line break and a line after it, whole numbers at 10**12 and -1, floats at NaN and infinity -
# each must be rejected by the role's own checks naming the option. An option of a stage that is off by default
# is tried with its stage on (else the role rightly ignores it).
# --------------------------------------------------------------------------
SPEC_SKIP = {
    # checked by rdma.fabric.sriov_vfs itself before any change (see its module rows: pf_link_timeout); the role
    # reads its boot units first, so role_check stops before the module
    "sriov_pf_link_timeout": "sriov_vfs",
}
SPEC_STAGE_ON = (("rdma_validate_workload_", {"rdma_validate_workload": True}),)


def spec_role_cases():
    """``(role, option, changes)`` for every option of every role's argument spec (see above)."""
    out = []
    for role in sorted(os.listdir(os.path.join(ROOT, "roles"))):
        if not os.path.exists(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")):
            continue
        for name, opt in sorted(role_spec(role).items()):
            if name in SPEC_SKIP:
                continue
            kind = opt.get("type", "str")
            if kind in ("str", "path") and not opt.get("choices"):
                default = opt.get("default")
                base = default if isinstance(default, str) and default else "/x" if kind == "path" else "x"
                values = [base + "\nInjected: 1"]
            elif kind == "int":
                values = [10 ** 12, -1]
            elif kind == "float":
                values = [float("nan"), float("inf")]
            else:
                continue
            stage = dict(next((on for prefix, on in SPEC_STAGE_ON if name.startswith(prefix)), {}))
            out.extend((role, name, dict(stage, **{name: value})) for value in values)
    return out


def acs_words(builder):
    return [struct.unpack_from("<H", builder.read_config(a), 0x14E)[0] for a in ("0000:17:00.0", "0000:17:01.0")]


OUTCOMES = ("rejected", "warned", "accepted", "exceptions")


def verdict(outcome, result, param, unchanged=True):
    """``(outcome, named)`` of one run: ``rejected`` (failed), ``warned`` (went on with a warning), ``accepted``
    (went on without one) or ``exceptions`` (an uncaught Python exception); ``named``: the message (of the failure,
    or a warning) names ``param`` and nothing changed before a rejection."""
    if outcome == "traceback":
        return "exceptions", False
    if outcome in ("failed", "rejected"):
        return "rejected", (result.get("param") == param or param in str(result.get("msg", ""))) and unchanged
    warnings = [str(w) for w in result.get("warnings") or [] if param in str(w)]
    return ("warned", True) if warnings else ("accepted", False)


class Warnings(object):
    """Records Ansible's controller-side warnings (``Display.warning``, which the collection's filters call) while
    the checks run in this process; a recording TEST DOUBLE of ansible-core's Display.warning."""

    def __enter__(self):
        from ansible.utils.display import Display
        self.shown = []
        self.patches = Patches()
        shown = self.shown
        self.patches.setattr(Display, "warning", lambda self, msg, *args, **kwargs: shown.append(msg))
        return self

    def __exit__(self, *exc):
        self.patches.undo()


def malformed(tmp):
    """Every case tried; ``(rows, details)``: counts per target, and ``(target, parameter, outcome, named, message,
    kind)`` per case (kind ``malformed``: must be rejected naming the parameter; ``harmful``: valid but risky, must be
    rejected or warned about naming it)."""
    _collection_loader()  # before the playbook cases import filter plugins: the templar's loader must own them
    rows = {}
    details = []

    def count(target, name, param, outcome, named, msg, kind="malformed"):
        row = rows.setdefault(target, dict((key, 0) for key in ("tried",) + OUTCOMES))
        row["tried"] += 1
        if outcome in ("rejected", "warned") and not named:
            outcome_counted = "accepted"  # rejected without the parameter named, or after a change
        else:
            outcome_counted = outcome
        row[outcome_counted] += 1
        details.append((name, param, outcome, named, str(msg)[:200], kind))

    for name, param, args in module_cases(tmp):
        commands = Commands()
        outcome, result = run_module(name, args, commands)
        outcome, named = verdict(outcome, result, param, not commands.ran)
        count("module " + name, name, param, outcome, named, result.get("msg", ""))
    builder, cases = gpudirect_cases(tmp)
    for param, args in cases:
        before = (acs_words(builder), sorted(os.listdir(os.path.join(builder.sys, "module"))))
        commands = Commands(builder, allow=True)
        outcome, result = run_module("gpudirect", args, commands)
        unchanged = before == (acs_words(builder), sorted(os.listdir(os.path.join(builder.sys, "module")))) and not commands.ran \
            and not os.path.exists(os.path.join(builder.root, "etc"))
        outcome, named = verdict(outcome, result, param, unchanged)
        count("module gpudirect", "gpudirect", param, outcome, named, result.get("msg", ""))
    cases, copy = roce_qos_cases(tmp)
    shutil.copytree(QosLab(os.path.join(tmp, "qos-copy-source")).sysfs, copy, symlinks=True)
    lab = None
    for i, case in enumerate(cases):
        param, args, kind = (case + ("malformed",))[:3]
        if lab is None:
            lab = QosLab(os.path.join(tmp, "qos-%d" % i))
        before = lab.state()
        outcome, result = lab.run(args)
        unchanged = lab.unchanged(before)
        result = dict(result, warnings=list(result.get("warnings") or []) + lab.warnings)
        if unchanged:  # the next case starts from the same state: the lab is used again, its logs emptied
            del lab.host.calls[:], lab.cfs.mkdirs[:], lab.cfs.rmdirs[:], lab.warnings[:]
        else:
            lab = None
        outcome, named = verdict(outcome, result, param, unchanged)
        count("module roce_qos", "roce_qos", param, outcome, named, result.get("msg") or "; ".join(result["warnings"]), kind)
    for i, case in enumerate(RDMA_LINK_CASES):
        param, args, kind = (case + ("malformed",))[:3]
        sysfs, double = link_host(os.path.join(tmp, "link-%d" % i))
        outcome, result = run_module("rdma_link", dict({"sysfs_path": sysfs}, **args), commands=False,
                                     install=lambda patches: patches.setattr(
                                         basic.AnsibleModule, "run_command", lambda self, argv, **kw: double.run_command(argv, **kw)))
        outcome, named = verdict(outcome, result, param, double.calls == [] or kind == "harmful")
        count("module rdma_link", "rdma_link", param, outcome, named,
              result.get("msg") or "; ".join(result.get("warnings") or []), kind)
    sriov = [(param, {"pfs": pfs}) for param, pfs in SRIOV_CASES] + SRIOV_FIRMWARE_CASES
    for i, (param, args) in enumerate(sriov):
        sysfs, ip, mlx, install = sriov_host(os.path.join(tmp, "sriov-%d" % i))
        mlx.next_boot = {"SRIOV_EN": 0, "NUM_OF_VFS": 0}
        outcome, result = run_module("sriov_vfs", dict({"sysfs_path": sysfs}, **args), commands=False, install=install)
        with open(os.path.join(sysfs, "class", "net", "eth2", "device", "sriov_numvfs")) as handle:
            numvfs = handle.read().strip()
        unchanged = numvfs == "0" and mlx.sets == [] and all(c[1:3] != ["link", "set"] for c in ip.calls)
        outcome, named = verdict(outcome, result, param, unchanged)
        count("module sriov_vfs", "sriov_vfs", param, outcome, named, result.get("msg", ""))
    for name, param, args in controller_cases(tmp):
        plugin = importlib.import_module("ansible_collections.rdma.fabric.plugins.action." + name).ActionModule
        folder = os.path.join(tmp, "out")
        before = _listing(folder)
        outcome, result = run_action(plugin, name, args)
        unchanged = _listing(folder) == before and not os.path.exists(os.path.join(tmp, "elsewhere")) \
            and not os.path.exists(os.path.join(tmp, "x"))
        outcome, named = verdict(outcome, result, param, unchanged)
        count("action " + name, name, param, outcome, named, result.get("msg", ""))
    for playbook, param, check, kind in playbook_cases(tmp):
        try:
            with Warnings():  # the filters' own warnings: the checks return them
                outcome, msg = check()
        except BaseException:  # pylint: disable=broad-except
            outcome, msg = "traceback", traceback.format_exc(limit=2)
        outcome, named = verdict(outcome, {"msg": msg, "warnings": [msg] if outcome == "warned" else []}, param)
        count("playbook " + playbook, playbook, param, outcome, named, msg, kind)
    for case in ROLE_CASES + spec_role_cases():
        role, param, changes, kind = (case + ("malformed",))[:4]
        try:
            with Warnings() as shown:
                errors = role_check(role, changes)
        except BaseException:  # pylint: disable=broad-except
            count("role " + role, role, param, "exceptions", False, traceback.format_exc(limit=2), kind)
            continue
        outcome, named = verdict("failed" if errors else "ok", {"msg": "; ".join(errors), "warnings": shown.shown}, param)
        count("role " + role, role, param, outcome, named, "; ".join(errors or shown.shown), kind)
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
    facts = gd_probes.gather(SysfsTree(before.sys, before.proc), "audit")
    record = os.path.join(tmp, name + ".json")
    with open(record, "w") as handle:
        json.dump(facts["acs"]["boot_config"], handle)
    kwargs = {"renumbered": dict(bus=0x25), "swapped": dict(gpu_serial=0x99)}[change]
    after = build_ready_host(os.path.join(tmp, name + "-after"), acs_ctrl=ACS_CTRL_LINUX_DEFAULT, **kwargs)
    out = open(os.devnull, "w")
    try:
        code = gd_acs_boot.cli_main(["--config", record, "--sysfs-path", after.sys], out=out)
    finally:
        out.close()
    words = [struct.unpack_from("<H", after.read_config(a), 0x14E)[0] for a in sorted(after.paths)
             if after.read_config(a)[0x148:0x14A] == b"\x0d\x00"]
    if change == "renumbered":
        return code == 0 and words == [ACS_CTRL_LINUX_DEFAULT, 0x0011, 0x0011], "exit %d, ACS %s" % (code, words)
    return code == 1 and ACS_CTRL_LINUX_DEFAULT in words and 0x0011 not in words, "exit %d, nothing cleared" % code


def _qos_state(lab):
    ports, _values, files = lab.state()
    return ports, lab.cfs.kernel_values("rxe9"), files


def _qos_step_fails(tmp, name, fail=None, ip_fails=False, signal_on=None):
    """The common profile on dcbsim0 with one backend step failing (the doubles' fail switches) or SIGTERM arriving
    during a dcb change: rolled back, failed, every port, rdma_cm value and sysfs file as before."""
    lab = QosLab(os.path.join(tmp, name))
    if fail:
        lab.ports["dcbsim0"].fail.add(fail)
    if ip_fails:
        lab.host.tools["ip"].fail = True
    previous = signal.getsignal(signal.SIGTERM)
    if signal_on:
        dcb = lab.host.tools["dcb"]

        def dcb_then_sigterm(argv):
            answer = dcb(argv)
            if signal_on in argv and "show" not in argv and not lab.warnings.count("sent"):
                lab.warnings.append("sent")
                os.kill(os.getpid(), signal.SIGTERM)
            return answer
        lab.host.tools["dcb"] = dcb_then_sigterm
    before = _qos_state(lab)
    try:
        outcome, result = lab.run(QOS_PROFILE)
    finally:
        signal.signal(signal.SIGTERM, previous)
    restored = _qos_state(lab) == before and result.get("rollback_failed") == [] and result.get("changed") is False
    return outcome == "failed" and restored and bool(lab.host.changing_calls()), "%s; rolled back %d" % (
        str(result.get("msg", ""))[:90], len(result.get("rolled_back") or []))


def _qos_lock_held(tmp):
    """Another process (the boot-time re-apply) holds the QoS lock: the module waits lock_timeout, then fails naming
    the holder and changes nothing."""
    lab = QosLab(os.path.join(tmp, "qos-lock"))
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the other holder
        try:
            with qos_lock.held("rdma-fabric qos-apply", 5, path=lab.lock_path):
                os.write(ready_w, b"x")
                os.read(done_r, 1)  # holds the lock until the parent is done (or gone)
        finally:
            os._exit(0)
    try:
        os.read(ready_r, 1)
        before = _qos_state(lab)
        outcome, result = lab.run(dict(QOS_GOOD, lock_timeout=1))
    finally:
        os.write(done_w, b"x")
        os.waitpid(pid, 0)
        for fd in (ready_r, ready_w, done_r, done_w):
            os.close(fd)
    msg = str(result.get("msg", ""))
    return (outcome == "failed" and "pid %d (rdma-fabric qos-apply, since " % pid in msg and lab.host.calls == []
            and _qos_state(lab) == before), msg[:110]


def _qos_lock_holder_killed(tmp):
    """A QoS run SIGKILLed while it holds the lock (mid-apply): the kernel frees the lock, its record stays; the
    next run warns that the holder is gone, naming it, and writes its own record."""
    path = os.path.join(tmp, "qos-killed", "qos.lock")
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the holder
        try:
            with qos_lock.held("rdma-fabric qos-apply", 5, path=path):
                os.write(ready_w, b"x")
                time.sleep(60)
        finally:
            os._exit(0)
    os.read(ready_r, 1)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    for fd in (ready_r, ready_w):
        os.close(fd)
    warnings = []
    with qos_lock.held("roce_qos (Ansible)", 5, path=path, warn=warnings.append):
        with open(path) as handle:
            mine = '"pid": %d' % os.getpid() in handle.read()
    said = len(warnings) == 1 and ("pid %d (rdma-fabric qos-apply" % pid) in warnings[0] and "is gone" in warnings[0]
    return mine and said, (warnings or ["no warning"])[0][:110]


def _metrics_port_vanishes(tmp):
    """The port's state file is gone when the collector reads it: the expected port is reported down (port_up 0)
    with a collector error, not left without port_up."""
    from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
    root = os.path.join(tmp, "metrics-vanish")
    shutil.copytree(os.path.join(SYSFS, "lab_rxe_lab1"), root, symlinks=True)
    os.unlink(os.path.join(root, "sys", "devices", "virtual", "infiniband", "rxe0", "ports", "1", "state"))
    cfg = metrics.check_config({"sysfs": os.path.join(root, "sys"), "saved_dir": os.path.join(root, "none"),
                                "expected_ports": [{"match": "rxe0/1"}], "gpudirect": "ignore"})
    snap = metrics.collect(cfg)
    text = metrics.render(snap)
    ok = 'rdma_fabric_port_up{device="rxe0",port="1"} 0' in text and snap.errors.get("ports") == 1
    return ok, "; ".join(t for _s, t in snap.messages)[:110]


def _metrics_device_gone(tmp):
    """An expected device that is gone entirely: its port series say down (RdmaPortDown fires), a glob that matches
    nothing any more says 0 found (RdmaExpectedPortsMissing)."""
    from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
    cfg = metrics.check_config({"sysfs": os.path.join(SYSFS, "lab_rxe_lab1", "sys"), "saved_dir": os.path.join(tmp, "none"),
                                "expected_ports": [{"match": "mlx5_0/1"}, {"match": "mlx5_*"}], "gpudirect": "ignore"})
    text = metrics.render(metrics.collect(cfg))
    ok = ('rdma_fabric_port_up{device="mlx5_0",port="1"} 0' in text
          and 'rdma_fabric_port_expected_up{device="mlx5_0",port="1"} 1' in text
          and 'rdma_fabric_expected_ports_found{match="mlx5_*"} 0' in text)
    return ok, "port_up 0 and expected_up 1 for mlx5_0/1, expected_ports_found 0 for mlx5_*"


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
        ("roce_qos: dcb ets fails at step 3 of 6", lambda: _qos_step_fails(tmp, "qos-ets", fail="ets")),
        ("roce_qos: dcb pfc fails", lambda: _qos_step_fails(tmp, "qos-pfc", fail="pfc")),
        ("roce_qos: dcb app fails (the first step)", lambda: _qos_step_fails(tmp, "qos-app", fail="app")),
        ("roce_qos: ip link set mtu fails (after the DCB and configfs steps)", lambda: _qos_step_fails(tmp, "qos-mtu", ip_fails=True)),
        ("roce_qos: SIGTERM during the dcb pfc change", lambda: _qos_step_fails(tmp, "qos-term", signal_on="pfc")),
        ("roce_qos: the QoS lock held by another process (rdma-fabric qos-apply)", lambda: _qos_lock_held(tmp)),
        ("qos lock: its holder SIGKILLed mid-run leaves its record", lambda: _qos_lock_holder_killed(tmp)),
        ("metrics: a port folder vanishes mid-read", lambda: _metrics_port_vanishes(tmp)),
        ("metrics: an expected device is gone entirely", lambda: _metrics_device_gone(tmp)),
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
    _materialise_sysfs_trees()
    try:
        rows, details = malformed(tmp)
        fault_rows = faults(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if "--json" in argv:
        print(json.dumps({"malformed": rows, "details": details, "faults": fault_rows}, indent=1))
        return rows, fault_rows
    print("| target | inputs tried | rejected before any change, parameter named | warned, setting named | accepted "
          "| exceptions |")
    print("| --- | --- | --- | --- | --- | --- |")
    total = dict.fromkeys(("tried",) + OUTCOMES, 0)
    for target in sorted(rows):
        row = rows[target]
        print("| %s | %d | %d | %d | %d | %d |" % ((target, row["tried"]) + tuple(row[k] for k in OUTCOMES)))
        for key in total:
            total[key] += row[key]
    print("| all | %(tried)d | %(rejected)d | %(warned)d | %(accepted)d | %(exceptions)d |" % total)
    print()
    print("| fault injected | survived | detail |")
    print("| --- | --- | --- |")
    for what, survived, detail in fault_rows:
        print("| %s | %s | %s |" % (what, "yes" if survived else "NO", detail.replace("|", "/")))
    print()
    print("inputs tried: %(tried)d, rejected naming the variable: %(rejected)d, warned: %(warned)d, accepted: "
          "%(accepted)d, exceptions: %(exceptions)d" % total)
    print("faults injected: %d, survived: %d" % (len(fault_rows), sum(1 for r in fault_rows if r[1])))
    for name, param, outcome, named, msg, kind in details:
        if outcome not in (("rejected", "warned") if kind == "harmful" else ("rejected",)) or not named:
            print("NOTE %s %s (%s): %s (named: %s) %s" % (name, param, kind, outcome, named, msg.replace("\n", " ")))
    return rows, fault_rows


if __name__ == "__main__":
    main()
