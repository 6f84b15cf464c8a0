# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""``roce_qos`` orchestration: validate, select backends, read, plan, apply, verify.

1. Validate every option (:func:`model.normalise`) and find the port
   (:func:`port.find_port`) - nothing is read from tools yet, nothing touched.
2. Pick the DCB backend (:func:`select_backend`), read the current state of
   every part the options touch. Parts the driver lacks are "unsupported":
   ``on_unsupported: fail`` stops here (nothing changed), ``warn`` skips them.
3. Merge desired into current (more validation, e.g. ETS bandwidth sums),
   plan the steps (only differences), render before/after.
4. Check mode stops here. Otherwise run the steps in order; when one fails,
   undo the completed ones in reverse order and fail saying what failed,
   what was rolled back and what could not be.
5. Read everything back; a difference from the plan (e.g. a trust state the
   driver flipped) is a failure too, rolled back the same way.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

from ansible_collections.rdma.fabric.plugins.module_utils.qos import model
from ansible_collections.rdma.fabric.plugins.module_utils.qos.common import CommandRunner
from ansible_collections.rdma.fabric.plugins.module_utils.qos.configfs import RdmaCmConfigfs
from ansible_collections.rdma.fabric.plugins.module_utils.qos.dcb import DcbBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.mlnx_qos import MlnxQosBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import QosError, UnsupportedError, ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.qos.netdev import NetdevLink
from ansible_collections.rdma.fabric.plugins.module_utils.qos.port import find_port
from ansible_collections.rdma.fabric.plugins.module_utils.qos.sysfs_ecn import SysfsEcn
from ansible_collections.rdma.fabric.plugins.module_utils.sysfs import SysfsTree

BACKEND_CLASSES = {"dcb": DcbBackend, "mlnx_qos": MlnxQosBackend}


class ApplyError(QosError):
    """A step (or the read-back) failed; carries what was rolled back."""

    def __init__(self, message, failed_step=None, rolled_back=None, rollback_failed=None, executed=None):
        self.failed_step = failed_step
        self.rolled_back = rolled_back or []
        self.rollback_failed = rollback_failed or []
        self.executed = executed or []
        super(ApplyError, self).__init__(message)


def select_backend(runner, tree, netdev, choice):
    """The DCB backend for ``choice`` (auto|dcb|mlnx_qos) and why it was chosen.

    ``auto``: ``mlnx_qos`` where the NVIDIA driver stack is loaded (it adds
    ``/sys/class/net/IF/qos/trust``) and mlnx_qos is installed, else ``dcb``
    (iproute2), else ``mlnx_qos``. Fails clearly when nothing fits.
    """
    if choice not in model.BACKEND_CHOICES:
        raise ValidationError("backend", "%r is not allowed; choose one of %s" % (choice, ", ".join(model.BACKEND_CHOICES)))
    if choice != "auto":
        cls = BACKEND_CLASSES[choice]
        binary = cls.find_binary(runner)
        if not binary:
            raise QosError("backend %s: the %s command is not installed (%s)" % (
                choice, choice, "package iproute2, version 5.11 or later" if choice == "dcb"
                else "NVIDIA mlnx-tools, part of MLNX_OFED / DOCA-OFED"))
        return _make(cls, runner, netdev, binary, tree), "backend: %s was requested" % choice
    dcb_bin = DcbBackend.find_binary(runner)
    mq_bin = MlnxQosBackend.find_binary(runner)
    ofed = tree.exists(tree.sys("class", "net", netdev, "qos", "trust"))
    if ofed and mq_bin:
        return _make(MlnxQosBackend, runner, netdev, mq_bin, tree), (
            "auto: %s has the NVIDIA driver's qos/trust file and mlnx_qos is installed" % netdev)
    if dcb_bin:
        return _make(DcbBackend, runner, netdev, dcb_bin, tree), "auto: iproute2 dcb is installed"
    if mq_bin:
        return _make(MlnxQosBackend, runner, netdev, mq_bin, tree), "auto: mlnx_qos is installed (no iproute2 dcb)"
    raise QosError("backend auto: no DCB tool found for %s: install iproute2 5.11 or later (dcb) or "
                   "NVIDIA mlnx-tools (mlnx_qos)" % netdev)


def _make(cls, runner, netdev, binary, tree):
    if cls is MlnxQosBackend:
        return cls(runner, netdev, binary, tree)
    return cls(runner, netdev, binary)


class Part(object):
    """One group of options handled by one backend object."""

    def __init__(self, keys, backend_name, obj, kind):
        self.keys = keys
        self.backend_name = backend_name
        self.obj = obj
        self.kind = kind


class QosRun(object):
    def __init__(self, module, facts=None):
        """``facts``: the host's RDMA facts when the caller has just read them (the metrics
        collector compares many ports in one run); None reads them to find the port."""
        self.module = module
        self.facts = facts
        self.params = module.params
        self.runner = CommandRunner(module)
        self.warnings = []

    # -- phase 1 --------------------------------------------------------
    def _validate(self):
        p = self.params
        # Names first: they end up in command lines and paths.
        if p.get("netdev") is not None:
            model.check_netdev_name("netdev", p["netdev"])
        if p.get("device") is not None:
            model.check_ibdev_name("device", p["device"])
        self.desired = model.normalise(p)
        if p.get("on_unsupported") not in model.ON_UNSUPPORTED_CHOICES:
            raise ValidationError("on_unsupported", "%r is not allowed; choose one of fail, warn" % (p.get("on_unsupported"),))
        if p.get("backend") not in model.BACKEND_CHOICES:
            raise ValidationError("backend", "%r is not allowed; choose one of %s" % (p.get("backend"), ", ".join(model.BACKEND_CHOICES)))
        if p.get("port") is not None:
            model._as_int("port", p["port"], 1, 255, "port number")
        sysfs_path = p.get("sysfs_path") or "/sys"
        if not os.path.isdir(os.path.join(sysfs_path, "class", "net")):
            raise ValidationError("sysfs_path", "%r does not look like a sysfs root (no class/net below it)" % sysfs_path)
        self.tree = SysfsTree(sysfs_path)
        self.port = find_port(self.tree, netdev=p.get("netdev"), device=p.get("device"), port=p.get("port"),
                              facts=self.facts)

    # -- phase 2 --------------------------------------------------------
    def _parts(self):
        d = self.desired
        netdev = self.port.netdev
        parts = []
        self.backend = None
        self.backend_reason = None
        dcb_keys = [k for k in model.DCB_KEYS if k in d]
        if dcb_keys:
            self.backend, self.backend_reason = select_backend(self.runner, self.tree, netdev, self.params.get("backend") or "auto")
            parts.append(Part(dcb_keys, self.backend.name, self.backend, "dcb"))
        ecn_keys = [k for k in model.ECN_KEYS if k in d]
        if ecn_keys:
            parts.append(Part(ecn_keys, SysfsEcn.name, SysfsEcn(self.tree, netdev), "ecn"))
        cfs_keys = [k for k in model.CONFIGFS_KEYS if k in d]
        if cfs_keys:
            parts.append(Part(cfs_keys, RdmaCmConfigfs.name, RdmaCmConfigfs(self.tree, self.port.device, self.port.port), "configfs"))
        link = None
        for key in model.NETDEV_KEYS:
            if key in d:
                link = link or NetdevLink(self.runner, self.tree, netdev)
                parts.append(Part([key], NetdevLink.names[key], link, "netdev"))
        return parts

    def _read_part(self, part, desired):
        if part.kind == "dcb":
            state = part.obj.read()
            unsupported = dict((k, v) for k, v in state.pop("unsupported", {}).items() if k in part.keys)
            return state, unsupported
        sub = dict((k, desired[k]) for k in part.keys if k in desired)
        return part.obj.read(sub), {}

    def _read_all(self, parts, desired):
        current = {}
        unsupported = {}
        for part in parts:
            try:
                state, unsup = self._read_part(part, desired)
            except UnsupportedError as e:
                for k in part.keys:
                    unsupported[k] = str(e)
                continue
            current.update(state)
            unsupported.update(unsup)
        return current, unsupported

    # -- phase 3 --------------------------------------------------------
    def _plan(self, parts, current, desired):
        steps = []
        target = dict(current)
        for part in parts:
            keys = [k for k in part.keys if k in desired]
            if not keys:
                continue
            sub = dict((k, desired[k]) for k in keys)
            if part.kind == "dcb":
                tgt = model.merge_dcb(current, sub, part.obj.app_trust)
                steps += part.obj.plan(current, tgt, sub)
                for k in model.DCB_KEYS:
                    if k in tgt:
                        target[k] = tgt[k]
            elif part.kind == "ecn":
                steps += part.obj.plan(current, sub)
                target.update(SysfsEcn.target(current, sub))
            elif part.kind == "configfs":
                steps += part.obj.plan(current, sub)
                target.update(sub)
            elif part.kind == "netdev":
                steps += [s for s in part.obj.plan(current, sub) if s.key in keys]
                target.update(sub)
        return steps, target

    # -- phase 4 --------------------------------------------------------
    def _rollback(self, done):
        rolled, failed = [], []
        for step in reversed(done):
            try:
                step.undo()
                rolled.append(step.undo_description)
            except QosError as e:
                failed.append("%s: %s" % (step.undo_description, e))
        return rolled, failed

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

    def _apply(self, steps):
        done = []
        for i, step in enumerate(steps):
            try:
                step.do()
            except QosError as e:
                rolled, failed = self._rollback(done)
                raise ApplyError(
                    "%s: step %d of %d (%s) failed: %s.%s" % (
                        self.port.netdev, i + 1, len(steps), step.key, e, self._rollback_text(rolled, failed)),
                    failed_step=step.description, rolled_back=rolled, rollback_failed=failed,
                    executed=[s.description for s in done] + [step.description])
            done.append(step)
        return done

    # -- main -----------------------------------------------------------
    def run(self):
        self._validate()
        parts = self._parts()
        desired = dict(self.desired)
        current, unsupported = self._read_all(parts, desired)
        skipped = []
        if unsupported:
            groups = []     # (reason, [options]) in option order, one entry per distinct reason
            for k in model.ALL_KEYS:
                if k in unsupported:
                    for reason, keys in groups:
                        if reason == unsupported[k]:
                            keys.append(k)
                            break
                    else:
                        groups.append((unsupported[k], [k]))
            lines = ["%s (%s)" % (", ".join(keys), reason) for reason, keys in groups]
            if self.params.get("on_unsupported", "fail") == "fail":
                raise QosError(
                    "%s cannot do what was asked, nothing was changed: unsupported: %s. "
                    "Set on_unsupported: warn to skip these options and apply the rest."
                    % (self.port.netdev, "; ".join(lines)))
            for reason, keys in groups:
                self.warnings.append("%s: skipped %s: %s" % (self.port.netdev, ", ".join(keys), reason))
                for k in keys:
                    skipped.append({"option": k, "reason": reason})
                    desired.pop(k, None)
        if self.backend is not None and any(k in desired for k in model.DCB_KEYS):
            self._warn_dcbx(current)
        steps, target = self._plan(parts, current, desired)
        before = model.render(current, desired)
        after = model.render(target, desired)
        backends = {}
        for part in parts:
            for k in part.keys:
                if k in desired:
                    backends[k] = part.backend_name
        result = {
            "changed": bool(steps),
            "netdev": self.port.netdev,
            "device": self.port.device,
            "port": self.port.port,
            "backend": self.backend.name if (self.backend is not None and any(k in desired for k in model.DCB_KEYS)) else None,
            "backend_reason": self.backend_reason,
            "backends": backends,
            "before": before,
            "after": after,
            "commands": [s.description for s in steps],
            "unsupported": skipped,
        }
        result["changes"] = self._changes(before, after)
        if self.module.check_mode or not steps:
            return result
        done = self._apply(steps)
        # Read back: what the kernel/driver now reports must be the plan.
        try:
            now, _unsup = self._read_all(parts, desired)
            now_view = model.render(now, desired)
        except QosError as e:
            now_view, read_error = None, e
        else:
            read_error = None
        if read_error is not None or now_view != after:
            if read_error is not None:
                problem = "reading the state back failed: %s" % read_error
            else:
                diffs = ["%s: expected %r, reads %r" % (k, after.get(k), now_view.get(k))
                         for k in sorted(after) if after.get(k) != now_view.get(k)]
                problem = "after applying, the port does not read back as planned (%s)" % "; ".join(diffs)
            rolled, failed = self._rollback(done)
            raise ApplyError(
                "%s: %s.%s" % (self.port.netdev, problem, self._rollback_text(rolled, failed)),
                failed_step="read-back", rolled_back=rolled, rollback_failed=failed,
                executed=[s.description for s in done])
        result["after"] = now_view
        result["changes"] = self._changes(before, now_view)
        return result

    @staticmethod
    def _changes(before, after):
        return dict((k, before.get(k) != after.get(k)) for k in after)

    def _warn_dcbx(self, current):
        dcbx = current.get("dcbx")
        mode = current.get("dcbx_mode")
        if isinstance(dcbx, list) and dcbx and "host" not in dcbx:
            self.warnings.append(
                "%s: DCBX is not host-controlled (%s): an LLDP agent or the firmware may override these settings"
                % (self.port.netdev, ", ".join(dcbx)))
        if mode and "firmware" in mode.lower():
            self.warnings.append(
                "%s: mlnx_qos reports 'DCBX mode: %s': the NIC firmware negotiates DCB with the switch and may "
                "override these settings (mlnx_qos -i %s -d os hands control to the OS)" % (self.port.netdev, mode, self.port.netdev))


def run(module):
    """Entry point for the module: returns (result, warnings) or raises QosError."""
    qr = QosRun(module)
    result = qr.run()
    return result, qr.warnings
