# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""NVIDIA ``mlnx_qos`` backend (mlnx-tools, shipped with MLNX_OFED / DOCA-OFED).

Reads ``mlnx_qos -i IF -a`` (text; ``-a`` lists every traffic class) and
changes state with ``--trust``, ``--dscp2prio set,D,P`` / ``del,D,P``,
``--pfc``, ``--prio_tc``, ``--tsa`` + ``--tcbw`` (argv lists; one
``--dscp2prio`` per call because mlnx-tools before 2019 accept only one).

Output format (``pretty_print`` of mlnx-tools ``python/mlnx_qos``)::

    DCBX mode: OS controlled
    Priority trust state: dscp
    dscp2prio mapping:
            prio:0 dscp:07,06,05,04,03,02,01,00,
            prio:6 dscp:30,55,54,53,52,51,50,49,     <- more than 8 DSCPs wrap onto
            prio:6 dscp:48,                          <- another line for the same prio
    default priority:
    Receive buffer size (bytes): 80256,80256,896,80256,896,896,896,896,
    Cable len: 7
    PFC configuration:
            priority    0   1   2   3   4   5   6   7
            enabled     0   0   0   1   0   0   0   0
            buffer      0   2   5   7   1   2   3   6
    tc: 0 ratelimit: unlimited, tsa: vendor
             priority:  1
    tc: 6 ratelimit: unlimited, tsa: ets, bw: 40%

Older versions print no ``default priority`` / buffer lines; the parser reads
lines by their labels and ignores whitespace, so all of them parse.

The trust trap: where the kernel has no ``/sys/class/net/IF/qos/trust``
(upstream mlx5; MLNX_OFED kernels have the file), mlnx_qos derives trust from
the DCB APP table: ``--trust dscp`` installs the 64 default entries
(priority = DSCP >> 3), ``--trust pcp`` deletes every DSCP entry, and deleting
the LAST DSCP entry with ``--dscp2prio del`` silently switches the port back to
PCP trust. ``set`` adds an APP entry through DCB netlink and ``del`` removes
one, so what a remap takes is the driver's rule (mlx5: one set, which
replaces; ice: del, then set; the kernel's generic table: set, then del):
this backend plans the ``--dscp2prio`` calls by the port's remap rule
(:mod:`.backend`), a rollback restores the table read before the run from the
table it then reads, and the engine reads the state back after applying, so
an unexpected trust flip fails the task and is rolled back.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import (
    NVIDIA_TABLE_REMAP,
    Probe,
    nvidia_driver,
    QosBackend,
    app_table_steps,
    attach_table_restore,
)
from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import Step, setter_step
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import quote_argv
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import (
    DCB_KEYS,
    TCS,
    CommandError,
    QosError,
    UnsupportedError,
    default_dscp_table,
    ets_equal,
    merge_dcb,
)

# mlnx_qos prints these and (in some versions/paths) still exits 0.
ERROR_PATTERNS = (
    "Netlink error", "not supported on your system", "Invalid dscp2prio", "Invalid trust",
    "Bad value for", "Bad TSA value", "command failed", "must be 0", "must have 8 items",
    "Too many items", "cannot be used at the same time", "Bad arguments", "Traceback",
)

# Printed on every call where the driver has no buffer or no maxrate ops (ice): notices, not failures.
NOTICES = ("Buffers commands are not supported on your system", "Rate limit is not supported on your system!")

_TC_RE = re.compile(r"^tc:\s*(\d+)\s+ratelimit:\s*([^,]*),\s*tsa:\s*([A-Za-z]+)(?:,\s*bw:\s*(\d+)\s*%)?")
_DSCP_RE = re.compile(r"prio:\s*(\d+)\s+dscp:\s*([0-9,\s]*)")
_PRIO_RE = re.compile(r"priority:\s*(\d+)\s*")


class MlnxQosParseError(QosError):
    pass


def parse(text):
    """Parse ``mlnx_qos -i IF [-a]`` output into the QoS state dict.

    Keys: ``dcbx_mode``, ``trust`` (pcp|dscp|none), ``dscp2prio`` {dscp: [prio]},
    ``pfc`` [priorities], ``cable_len``, ``prio_tc`` [8] (None where the TC of a
    priority was not printed), ``ets`` {tc: {tsa, bw, ratelimit}} (printed TCs only).
    """
    state = {"dcbx_mode": None, "trust": None, "dscp2prio": {}, "pfc": None,
             "cable_len": None, "prio_tc": [None] * 8, "ets": {}}
    section = None
    cur_tc = None
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("DCBX mode:"):
            state["dcbx_mode"] = line.split(":", 1)[1].strip()
        elif line.startswith("Priority trust state:"):
            state["trust"] = line.split(":", 1)[1].strip().lower()
        elif line.startswith("dscp2prio mapping:"):
            section = "dscp"
        elif line.startswith("default priority:"):
            section = "default"
        elif line.startswith("Receive buffer size") or line.startswith("Cable len:"):
            if line.startswith("Cable len:"):
                try:
                    state["cable_len"] = int(line.split(":", 1)[1].strip())
                except ValueError:
                    pass
            section = None
        elif line.startswith("PFC configuration:"):
            section = "pfc"
        elif _DSCP_RE.fullmatch(line):
            m = _DSCP_RE.fullmatch(line)
            prio = int(m.group(1))
            for d in m.group(2).split(","):
                d = d.strip()
                if d:
                    lst = state["dscp2prio"].setdefault(int(d), [])
                    if prio not in lst:
                        lst.append(prio)
        elif section == "pfc" and line.startswith("enabled"):
            vals = line.split()[1:]
            if len(vals) != 8 or not all(v in ("0", "1") for v in vals):
                raise MlnxQosParseError("mlnx_qos: unexpected PFC line %r" % line)
            state["pfc"] = [p for p, v in enumerate(vals) if v == "1"]
        elif _TC_RE.match(line):
            m = _TC_RE.match(line)
            cur_tc = int(m.group(1))
            section = "tc"
            tsa = m.group(3).lower()
            bw = int(m.group(4)) if (m.group(4) is not None and tsa == "ets") else 0
            state["ets"][cur_tc] = {"tsa": tsa, "bw": bw, "ratelimit": m.group(2).strip()}
        elif section == "tc" and _PRIO_RE.fullmatch(line):
            p = int(_PRIO_RE.fullmatch(line).group(1))
            if 0 <= p < 8:
                state["prio_tc"][p] = cur_tc
    for d in state["dscp2prio"]:
        state["dscp2prio"][d].sort()
    if state["trust"] is None and state["pfc"] is None:
        raise MlnxQosParseError("mlnx_qos output has neither a trust state nor a PFC configuration: %r" % (text or "")[:300])
    return state


class MlnxQosBackend(QosBackend):
    """DCB through NVIDIA ``mlnx_qos``."""

    name = "mlnx_qos"
    keys = DCB_KEYS

    def __init__(self, ctx, probe=None):
        super(MlnxQosBackend, self).__init__(ctx, probe)
        # Same test mlnx_qos itself makes (it always looks at the real /sys).
        self.sysfs_trust = nvidia_trust_file(ctx)
        self.app_trust = not self.sysfs_trust
        if self.sysfs_trust:
            self.remap_rule = NVIDIA_TABLE_REMAP
            self.remap_reason = "%s: the NVIDIA driver's qos/trust file (%s): its own 64-entry DSCP table" % (
                ctx.netdev, ctx.tree.sys("class", "net", ctx.netdev, "qos", "trust"))

    @classmethod
    def probe(cls, ctx):
        binary = ctx.runner.which("mlnx_qos")
        if not binary:
            return Probe(False, reason="the mlnx_qos command is not installed (NVIDIA mlnx-tools, part of "
                                       "MLNX_OFED / DOCA-OFED)")
        if nvidia_trust_file(ctx):
            return Probe(True, 0, "auto: %s has the NVIDIA driver's qos/trust file and mlnx_qos is installed"
                         % ctx.netdev, binary)
        return Probe(True, 2, "auto: mlnx_qos is installed (no iproute2 dcb)", binary)

    @classmethod
    def refusal(cls, ctx):
        """``backend: mlnx_qos`` serves NVIDIA's driver only.

        mlnx_qos (mlnx-tools 8fbfd9c) reads the port's DCB buffers on every
        call, after its PFC, dscp2prio and trust changes and before its ETS
        change; only mlx5_core has the buffer operation (or the NVIDIA driver
        stack's ``qos/`` files): on any other driver (ice, the kernel's generic
        table) the read is a KeyError that mlnx_qos's own error handler turns
        into a traceback, exit 1, with part of the change applied.
        """
        if nvidia_trust_file(ctx) or nvidia_driver(ctx):
            return None
        dummy, name, text = ctx.driver
        return ("%s: %s, not NVIDIA's mlx5_core: mlnx_qos works on NVIDIA's driver only (elsewhere it applies part of "
                "a change, then stops with a traceback, exit 1, when it reads the DCB buffers the driver does not have); "
                "use backend: dcb (iproute2) or auto" % (ctx.netdev, text))

    def _argv(self, *args):
        return [self.binary, "-i", self.netdev] + list(args)

    # -- reading --------------------------------------------------------
    def read(self, desired=None):
        argv = self._argv("-a")
        rc, out, err = self.runner.run(argv, check=False)
        text = out + "\n" + err
        if rc != 0:
            if "not supported" in text.lower():
                raise UnsupportedError(
                    DCB_KEYS,
                    "%s has no DCB support: `%s` says %r" % (self.netdev, quote_argv(argv), (err or out).strip()[-300:]))
            raise CommandError(quote_argv(argv), rc, out, err)
        state = parse(out)
        state["unsupported"] = {}
        if state["trust"] not in ("pcp", "dscp"):
            for k in ("trust", "dscp2prio"):
                state["unsupported"][k] = "%s: mlnx_qos reports priority trust state %r" % (self.netdev, state["trust"])
        if state["pfc"] is None:
            state["unsupported"]["pfc"] = "%s: mlnx_qos printed no PFC configuration" % self.netdev
        if None in state["prio_tc"] or sorted(state["ets"]) != list(TCS):
            for k in ("prio_tc", "ets"):
                state["unsupported"][k] = "%s: mlnx_qos did not list all 8 traffic classes" % self.netdev
        else:
            state["ets"] = dict((tc, {"tsa": e["tsa"], "bw": e["bw"]}) for tc, e in state["ets"].items())
        return state

    def warnings(self, current):
        mode = current.get("dcbx_mode")
        if mode and "firmware" in mode.lower():
            return ["%s: mlnx_qos reports 'DCBX mode: %s': the NIC firmware negotiates DCB with the switch and may "
                    "override these settings (mlnx_qos -i %s -d os hands control to the OS)" % (self.netdev, mode, self.netdev)]
        return []

    # -- changing -------------------------------------------------------
    def _run(self, args):
        argv = self._argv(*args)
        rc, out, err = self.runner.run(argv, check=False)
        text = "\n".join(ln for ln in (out + "\n" + err).splitlines() if ln.strip() not in NOTICES)
        if rc != 0 or any(p in text for p in ERROR_PATTERNS):
            raise CommandError(quote_argv(argv), rc, out, err)

    def _describe(self, args):
        return quote_argv(self._argv(*args))

    # the DSCP table, for backend.app_table_steps(): one --dscp2prio per call
    def read_table(self):
        return self.read()["dscp2prio"]

    @staticmethod
    def app_commands(ops):
        return [(verb, [pair]) for verb, pairs in ops for pair in pairs]

    @staticmethod
    def _app_args(verb, pairs):
        (d, p), = pairs
        return ("--dscp2prio", "%s,%d,%d" % ("set" if verb == "add" else "del", d, p))

    def app_op(self, verb, pairs):
        self._run(self._app_args(verb, pairs))

    def app_op_text(self, verb, pairs):
        return self._describe(self._app_args(verb, pairs))

    def _table_steps(self, current, target):
        """The trust step (if trust changes) and the DSCP table's steps, by the port's remap rule.

        Where trust comes from the APP table, ``--trust dscp`` adds the 64
        default entries and ``--trust pcp`` deletes every entry: the trust
        step's undo restores the table read before the run (``--trust pcp``
        first when it was empty). With the NVIDIA ``qos/trust`` file trust is
        undone by itself and the first table step restores the table.
        """
        rule = self.remap_rule
        cur_trust, new_trust = current["trust"], target["trust"]
        before = current["dscp2prio"]
        base = dict((d, list(p)) for d, p in before.items())
        steps = []
        if cur_trust != new_trust:
            args, old = ("--trust", new_trust), ("--trust", cur_trust)
            step = Step("trust", self._describe(args), lambda: self._run(args), lambda: self._run(old),
                        self._describe(old))
            if self.app_trust:
                pcp = ("--trust", "pcp")
                first = None if before else (lambda: self._run(pcp), self._describe(pcp))
                attach_table_restore(self, rule, step, before, first)
                base = default_dscp_table() if new_trust == "dscp" else {}
            steps.append(step)
        table_steps, notes = app_table_steps(self, rule, base, target["dscp2prio"], before,
                                             restore=not (steps and self.app_trust))
        return steps + table_steps, notes

    def target(self, current, desired):
        merged = merge_dcb(current, desired, self.app_trust)
        return dict((k, merged[k]) for k in DCB_KEYS if k in merged)

    def plan(self, current, desired):
        target = self.target(current, desired)
        steps = []
        self.notes = []
        if "trust" in desired or "dscp2prio" in desired:
            steps, self.notes = self._table_steps(current, target)
        if "pfc" in desired and sorted(current["pfc"]) != sorted(target["pfc"]):
            new = ",".join("1" if p in target["pfc"] else "0" for p in range(8))
            old = ",".join("1" if p in current["pfc"] else "0" for p in range(8))
            steps.append(setter_step("pfc", self._run, ("--pfc", new), ("--pfc", old), self._describe))
        ets_changed = "ets" in desired and not ets_equal(current["ets"], target["ets"])
        prio_changed = "prio_tc" in desired and current["prio_tc"] != target["prio_tc"]
        if ets_changed or prio_changed:
            steps.append(setter_step(
                "ets" if ets_changed else "prio_tc", self._run,
                self._ets_args(target, ets_changed, prio_changed),
                self._ets_args(current, ets_changed, prio_changed), self._describe))
        return steps

    @staticmethod
    def _ets_args(state, ets_changed, prio_changed):
        args = []
        if ets_changed:
            args += ["--tsa", ",".join(state["ets"][tc]["tsa"] for tc in TCS)]
            args += ["--tcbw", ",".join(str(state["ets"][tc]["bw"]) for tc in TCS)]
        if prio_changed:
            args += ["--prio_tc", ",".join(str(tc) for tc in state["prio_tc"])]
        return tuple(args)


def nvidia_trust_file(ctx):
    """Whether the NVIDIA driver stack gives the port a trust setting of its own (``qos/trust``)."""
    return ctx.tree.exists(ctx.tree.sys("class", "net", ctx.netdev, "qos", "trust"))
