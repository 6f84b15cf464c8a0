# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The QoS run over one or more ports: read, plan, apply with rollback, read back.

Phases, every port the same way, every backend through the one interface of
:mod:`.backend`:

1. Validation (:mod:`.model`) and port lookup (:mod:`.port`, one facts read)
   happen before this module is reached: nothing has been touched.
2. Per port, each option group gets its backend (:func:`.backend.select_backend`
   over :data:`GROUPS`), which reads the current state. Options the port
   cannot do are failed on (``on_unsupported: fail``: nothing is changed on
   any port) or skipped with a warning.
3. Each backend plans its steps (each with its undo) from the current state
   to its target; before/after are rendered for the result and the diff.
4. Check mode stops here. Otherwise the steps run port by port, and each
   port is read back when its steps are done. When a step fails (a command
   that fails, or cannot be started), a read-back differs from the plan (e.g.
   a trust state the driver flipped), or the run is asked to stop (SIGTERM,
   SIGHUP, SIGINT: the step under way finishes first), every step this run
   completed, on every port, is undone in reverse order, and the error says
   what failed, what was rolled back and what could not be (left as it is).
   A port's DSCP table is undone whole: its first step's undo (run also when
   that step fails part-way) brings back the table read before the run,
   computed from the table it then reads, by the driver's remap rule.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import re

from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import Changes, StopSignals
from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_model as model
from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import BackendGroup, PortContext
from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import select_backend as _select
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.qos.configfs import RdmaCmConfigfs
from ansible_collections.rdma.fabric.plugins.module_utils.qos.dcb import DcbBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.mlnx_qos import MlnxQosBackend
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, UnsupportedError, ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.netdev import MtuLink, PauseLink
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import PortRef, resolve_ports
from ansible_collections.rdma.fabric.plugins.module_utils.qos.sysfs_ecn import SysfsEcn
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree, check_sysfs_root

# The option groups and their backends, in the order their steps run.
GROUPS = (
    BackendGroup("DCB tool", model.DCB_KEYS, (DcbBackend, MlnxQosBackend),
                 "install iproute2 5.11 or later (dcb) or NVIDIA mlnx-tools (mlnx_qos)"),
    BackendGroup("ECN/CNP files", model.ECN_KEYS, (SysfsEcn,)),
    BackendGroup("rdma_cm configfs", model.CONFIGFS_KEYS, (RdmaCmConfigfs,)),
    BackendGroup("MTU tool", ("mtu",), (MtuLink,)),
    BackendGroup("pause tool", ("pause",), (PauseLink,)),
)


class ApplyError(QosError):
    """A step (or the read-back, or a stop signal) failed the run; carries what was rolled back."""

    def __init__(self, message, failed_step=None, rolled_back=None, rollback_failed=None, executed=None, netdev=None):
        self.failed_step = failed_step
        self.rolled_back = rolled_back or []
        self.rollback_failed = rollback_failed or []
        self.executed = executed or []
        self.netdev = netdev
        super(ApplyError, self).__init__(message)


class PortsError(QosError):
    """Ports of a list-form call that cannot be configured (nothing was changed on any port).

    ``results`` has every port's result, the failed ones as ``{failed, msg}``;
    ``param`` names the parameter of the first input error, if any.
    """

    def __init__(self, message, results, param=None):
        self.results = results
        self.param = param
        super(PortsError, self).__init__(message)


def select_backend(runner, tree, netdev, choice="auto"):
    """The DCB backend of ``netdev`` for ``choice`` and why (see :func:`.backend.select_backend`)."""
    ctx = PortContext(runner, tree, PortRef(netdev, None, None))
    return _select(ctx, GROUPS[0], choice)


class PortRun(object):
    """One port's part of a run: its request, backends, state read, plan and result."""

    def __init__(self, request, ref):
        self.request = request
        self.ref = ref
        self.netdev = ref.netdev
        self.desired = dict(request.desired)
        self.parts = []         # (group, backend, keys, reason)
        self.steps = []
        self.result = None


class QosRun(object):
    """Configure ``jobs`` (``[(PortRequest, PortRef)]``) through ``runner``; :meth:`run` returns the result."""

    def __init__(self, runner, tree, jobs, check_mode=False, stop=None):
        self.runner = runner
        self.tree = tree
        self.jobs = list(jobs)
        self.check_mode = check_mode
        self.warnings = []
        # A caller that watches the stop signals itself (the host runtime) shares its flag.
        self.stop = stop or StopSignals()

    # -- phase 2: backends and state -------------------------------------
    def _parts(self, run):
        ctx = PortContext(self.runner, self.tree, run.ref)
        for group in GROUPS:
            keys = [k for k in group.keys if k in run.desired]
            if keys:
                backend, reason = _select(ctx, group, run.request.backend)
                run.parts.append((group, backend, keys, reason))

    @staticmethod
    def _read(run, check_targets=False):
        """The port's state of the options asked, group by group.

        ``check_targets``: work out each group's target right after reading it, so that a value that is only
        wrong with the port's state (ETS bandwidths that, with the classes not listed, do not sum to 100) fails
        before the next group is read (reading rdma_cm configfs creates its group for a moment).
        """
        current, unsupported = {}, {}
        for _group, backend, keys, _reason in run.parts:
            wanted = dict((k, run.desired[k]) for k in keys if k in run.desired)
            if not wanted:
                continue
            try:
                state = backend.read(wanted)
            except UnsupportedError as e:
                for k in keys:
                    unsupported[k] = str(e)
                continue
            unsupported.update((k, v) for k, v in state.pop("unsupported", {}).items() if k in keys)
            current.update(state)
            if check_targets:
                try:
                    backend.target(current, dict((k, v) for k, v in wanted.items() if k not in unsupported))
                except ValidationError as e:
                    raise e.under(run.request.prefix)
        return current, unsupported

    def _skip_unsupported(self, run, unsupported):
        """Fail (nothing changed) or warn and drop the options the port cannot do; returns the skipped list."""
        groups = []     # (reason, [options]) in option order, one entry per distinct reason
        for k in model.ALL_KEYS:
            if k in unsupported:
                for reason, keys in groups:
                    if reason == unsupported[k]:
                        keys.append(k)
                        break
                else:
                    groups.append((unsupported[k], [k]))
        if groups and run.request.on_unsupported == "fail":
            raise QosError(
                "%s cannot do what was asked, nothing was changed: unsupported: %s. "
                "Set on_unsupported: warn to skip these options and apply the rest."
                % (run.netdev, "; ".join("%s (%s)" % (", ".join(keys), reason) for reason, keys in groups)))
        skipped = []
        for reason, keys in groups:
            self.warnings.append("%s: skipped %s: %s" % (run.netdev, ", ".join(keys), reason))
            for k in keys:
                skipped.append({"option": k, "reason": reason})
                run.desired.pop(k, None)
        return skipped

    # -- phase 3: plan ----------------------------------------------------
    def prepare(self, run):
        """Read and plan one port (changes nothing); sets ``run.steps`` and ``run.result``."""
        self._parts(run)
        current, unsupported = self._read(run, check_targets=True)
        skipped = self._skip_unsupported(run, unsupported)
        target = dict(current)
        backends = {}
        chosen, chosen_reason, dscp_rule = None, None, None
        for group, backend, keys, reason in run.parts:
            if group.selectable:
                chosen_reason = reason
            wanted = dict((k, run.desired[k]) for k in keys if k in run.desired)
            if not wanted:
                continue
            self.warnings.extend(backend.warnings(current))
            try:
                target.update(backend.target(current, wanted))
            except ValidationError as e:
                raise e.under(run.request.prefix)
            run.steps += backend.plan(current, wanted)
            self.warnings.extend(backend.notes)
            backends.update((k, backend.name) for k in wanted)
            if group.selectable:
                chosen = backend.name
                if "trust" in wanted or "dscp2prio" in wanted:
                    dscp_rule = {"name": backend.remap_rule.name, "reason": backend.remap_reason,
                                 "steps": backend.remap_rule.text, "notes": list(backend.notes)}
        before = model.render(current, run.desired)
        after = model.render(target, run.desired)
        run.result = {
            "changed": bool(run.steps),
            "netdev": run.netdev,
            "device": run.ref.device,
            "port": run.ref.port,
            "backend": chosen,
            "backend_reason": chosen_reason,
            "backends": backends,
            "dscp_rule": dscp_rule,
            "before": before,
            "after": after,
            "commands": [s.description for s in run.steps],
            "unsupported": skipped,
        }
        self._set_changes(run.result, before, after)

    @staticmethod
    def _set_changes(result, before, after):
        result["changes"] = dict((k, before.get(k) != after.get(k)) for k in after)
        result["drift"] = dict((k, {"desired": after[k], "actual": before.get(k)})
                               for k in after if before.get(k) != after[k])

    # -- phase 4: apply, read back, roll back (the change engine) ------------
    @staticmethod
    def _rollback_text(rolled, failed):
        text = ""
        if rolled:
            text += " Rolled back, in reverse order: %s." % "; ".join(rolled)
        elif not failed:
            text += " Nothing had been changed before it, so nothing was rolled back."
        if failed:
            text += " COULD NOT roll back (left as they are now): %s." % "; ".join(failed)
        return text

    def _fail(self, changes, run, message, failed_step, executed):
        restored, left, _signals = changes.rollback()
        rolled = [step.undo_description for step in restored]
        failed = ["%s: %s" % (step.undo_description, e) for step, e in left]
        raise ApplyError(message + self._rollback_text(rolled, failed), failed_step=failed_step,
                         rolled_back=rolled, rollback_failed=failed, executed=executed, netdev=run.netdev)

    def _stop_requested(self, changes, run, where):
        if self.stop.received:
            self._fail(changes, run, "%s: stopped by %s %s." % (run.netdev, self.stop.name, where), self.stop.name,
                       [s.description for s in changes.done])

    def _read_back(self, run):
        """None when the port reads back as planned, else what differs."""
        try:
            now, _unsupported = self._read(run)
            view = model.render(now, run.desired)
        except QosError as e:
            return "reading the state back failed: %s" % e, None
        after = run.result["after"]
        if view != after:
            diffs = ["%s: expected %r, reads %r" % (k, after.get(k), view.get(k))
                     for k in sorted(after) if after.get(k) != view.get(k)]
            return "after applying, the port does not read back as planned (%s)" % "; ".join(diffs), view
        return None, view

    def _apply(self, runs):
        changes = Changes(self.stop, errors=(QosError,))
        with self.stop.watch():
            if runs:
                self._stop_requested(changes, runs[0], "before any change")
            for run in runs:
                for i, step in enumerate(run.steps):
                    executed = [s.description for s in changes.done] + [step.description]
                    try:
                        changes.do(step)    # a step whose undo restores from what it reads stays undoable on failure
                    except QosError as e:
                        self._fail(changes, run, "%s: step %d of %d (%s) failed: %s." % (
                            run.netdev, i + 1, len(run.steps), step.key, e), step.description, executed)
                    self._stop_requested(changes, run, "after step %d of %d (%s)" % (i + 1, len(run.steps), step.key))
                if not run.steps:
                    continue
                problem, view = self._read_back(run)
                if problem:
                    self._fail(changes, run, "%s: %s." % (run.netdev, problem), "read-back",
                               [s.description for s in changes.done])
                self._stop_requested(changes, run, "after reading %s back" % run.netdev)
                run.result["after"] = view
                self._set_changes(run.result, run.result["before"], view)

    # -- main -------------------------------------------------------------
    def run(self):
        """``{"changed", "ports": {netdev: result}, "commands"}``; raises QosError (nothing changed) or ApplyError."""
        runs, errors = [], []
        for request, ref in self.jobs:
            run = PortRun(request, ref)
            runs.append(run)
            try:
                self.prepare(run)
            except QosError as e:
                errors.append((run, e))
        if errors:
            self._raise_prepare_errors(runs, errors)
        if not self.check_mode:
            self._apply([r for r in runs if r.steps])
        return {
            "changed": any(r.result["changed"] for r in runs),
            "ports": dict((r.netdev, r.result) for r in runs),
            "commands": [c for r in runs for c in r.result["commands"]],
        }

    def _raise_prepare_errors(self, runs, errors):
        single = len(runs) == 1 and not runs[0].request.label
        if single:
            raise errors[0][1]
        results = dict((r.netdev, r.result) for r in runs)
        for run, e in errors:
            results[run.netdev] = {"failed": True, "msg": str(e), "netdev": run.netdev, "device": run.ref.device,
                                   "port": run.ref.port}
        params = [e.param for _r, e in errors if isinstance(e, ValidationError)]
        raise PortsError("%d of %d ports cannot be configured, nothing was changed on any port: %s" % (
            len(errors), len(runs), "; ".join("%s (%s): %s" % (r.request.label, r.netdev, e) for r, e in errors)),
            results, params[0] if params else None)


def sysfs_tree(sysfs_path):
    """The sysfs root the ports are read from (validated)."""
    try:
        return SysfsTree(check_sysfs_root(sysfs_path or "/sys"))
    except PathError as e:
        raise ValidationError("sysfs_path", str(e).split(": ", 1)[1])


def plan_call(params):
    """Validate a call's parameters and find its ports (one facts read): ``(tree, [(PortRequest, PortRef)])``."""
    requests = model.port_requests(params)
    tree = sysfs_tree(params.get("sysfs_path"))
    return tree, list(zip(requests, resolve_ports(tree, requests)))


def _is_sysfs_mount(path, mountinfo="/proc/self/mountinfo"):
    """True when a sysfs is mounted at ``path`` (the host's /sys, or its bind mount in a container)."""
    real = os.path.realpath(path)
    try:
        with open(mountinfo) as f:
            lines = f.read().splitlines()
    except (IOError, OSError):
        return False
    for line in lines:
        head, sep, tail = line.partition(" - ")
        fields = head.split()
        if not sep or len(fields) < 5 or not tail.split():
            continue
        # mount points escape space, tab, newline and backslash as octal (\040)
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if tail.split()[0] == "sysfs" and point == real:
            return True
    return False


def check_host_sysfs(runner, tree, jobs):
    """Refuse to change a host whose ports were read from another sysfs (a copy, a fixture tree).

    ``sysfs_path`` moves the reads only: ``dcb``, ``mlnx_qos``, ``ip`` and ``ethtool`` still change the
    ports of this process's network namespace. With a ``sysfs_path`` other than ``/sys``, it must be a
    mounted sysfs (``/proc/self/mountinfo``; a copy's files are not the kernel's) and every port's
    netdev must have the same ifindex in that tree as ``ip -j link show`` gives here (what a container
    that runs in the host's network namespace with the host's ``/sys`` mounted at ``sysfs_path`` has);
    otherwise :class:`ValidationError` on ``sysfs_path`` before anything changes. Check mode only reads
    and is not refused.
    """
    if os.path.realpath(tree.sysfs) == "/sys":
        return
    if not _is_sysfs_mount(tree.sysfs):
        raise ValidationError("sysfs_path", (
            "%r is not a mounted sysfs (a copy or a fixture tree: its files are not the kernel's); nothing was "
            "changed. Leave sysfs_path unset, run in the host's network namespace with the host's /sys mounted at "
            "sysfs_path (container mode), or run in check mode to only report" % tree.sysfs))
    ip = runner.which("ip", required=True)
    for _request, ref in jobs:
        there = tree.read_int(tree.sys("class", "net", ref.netdev, "ifindex"))
        rc, out, _err = runner.run([ip, "-j", "link", "show", "dev", ref.netdev], check=False)
        here = None
        if rc == 0:
            try:
                links = json.loads(out)
                here = links[0].get("ifindex") if isinstance(links, list) and links and isinstance(links[0], dict) else None
            except ValueError:
                here = None
        if there is None or here != there:
            raise ValidationError("sysfs_path", (
                "%r is not the sysfs of the network namespace whose ports this run would change (%s: ifindex %s "
                "there, %s here); nothing was changed. Leave sysfs_path unset, run in the host's network namespace "
                "with the host's /sys mounted at sysfs_path (container mode), or run in check mode to only report"
                % (tree.sysfs, ref.netdev, "none" if there is None else there, "none" if here is None else here)))


def flatten(result, params):
    """The single-port form's result: that port's result at the top level (as roce_qos always returned)."""
    if params.get("ports") is not None:
        return result
    port = list(result["ports"].values())[0]
    out = dict(port)
    out["ports"] = result["ports"]
    return out


def run(module):
    """Run a call of ``module`` (params, check_mode, run_command, get_bin_path): returns (result, warnings)."""
    tree, jobs = plan_call(module.params)
    qr = QosRun(CommandRunner(module), tree, jobs, check_mode=module.check_mode)
    result = qr.run()
    return flatten(result, module.params), qr.warnings
