# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""iproute2 ``dcb`` backend: upstream DCB netlink (IEEE 802.1Qaz/Qbb).

Reads ``dcb -j {pfc,ets,app,dcbx} show dev IF`` and changes state with
``dcb pfc set``, ``dcb ets set`` and ``dcb app add|del`` (argv lists).

JSON formats (iproute2 ``dcb/dcb_*.c``; checked against iproute2 6.1):

* pfc:  ``{"pfc_cap":8,"macsec_bypass":false,"delay":0,"prio_pfc":[false,...x8]}``
* ets:  ``{"willing":false,"ets_cap":8,"cbs":false,"tc_bw":[...x8],"pg_bw":[...],
  "tc_tsa":["strict"|"cbs"|"ets"|"vendor",...x8],"prio_tc":[...x8],"reco_tc_bw":[...],...}``
* app:  ``{"dscp_prio":[[26,3],[48,6]]}`` - one ``[dscp, prio]`` pair per APP
  entry. iproute2 6.4-6.13 append a stray ``" "`` element (``[26,3," "]``);
  anything after the first two elements is ignored. No entries: ``{}``.
* dcbx: ``{"host":true,"ieee":true}`` - one true key per DCBX flag.

Failures (seen in the VM lab with iproute2 6.1 and dcbsim, fixtures
``tests/unit/fixtures/qos/dcb_real_lab``): ``dcb pfc set`` / ``dcb ets set``
exit 0 and print nothing when the DRIVER rejects the change, so every such
set is followed by a read-back; ``dcb app add`` of several entries stops at
the first failing one (rc 1, ``Attribute write: File exists``) leaving the
earlier ones applied, so a failed app step removes what it added.

Trust: DCB netlink has no "trust" knob. A port trusts DSCP when its APP
table holds DSCP entries (selector 5) and PCP otherwise; drivers such as
mlx5 switch their hardware trust state on the first added / last removed DSCP
entry. So ``trust: dscp`` means "DSCP APP entries exist" and ``trust: pcp``
means "none exist". The order of the ``app add|del`` commands comes from the
port driver's DSCP remap rule (:mod:`.backend`: generic adds then deletes,
mlx5 adds only as the add replaces, ice deletes then adds one DSCP at a time
while other entries keep DSCP trust), so the table does not pass through
empty (which flips such a driver to PCP) where that can be avoided.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import Probe, QosBackend, app_table_steps
from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import setter_step
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import quote_argv
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import (
    DCB_KEYS,
    TCS,
    CommandError,
    QosError,
    UnsupportedError,
    ets_equal,
    merge_dcb,
)

# dcb exits non-zero on these, but they are failures in any case.
ERROR_PATTERNS = ("Error when attempting to set attribute", "Attribute write:", "Attribute read:")
NOT_SUPPORTED = "operation not supported"
# The netdev is not in the network namespace dcb talks to (ENODEV), although sysfs lists it.
NO_DEVICE = "no such device"


class DcbParseError(QosError):
    pass


def _load(text, what):
    text = (text or "").strip()
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError as e:
        raise DcbParseError("cannot parse `dcb -j %s show` output as JSON (%s): %r" % (what, e, text[:200]))
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]
    if not isinstance(data, dict):
        raise DcbParseError("unexpected `dcb -j %s show` output: %r" % (what, text[:200]))
    return data


def _flag(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    return str(value).strip().lower() in ("on", "true", "1", "yes")


def _array8(data, key, what):
    arr = data.get(key)
    if not isinstance(arr, list) or len(arr) != 8:
        raise DcbParseError("`dcb -j %s show`: %r is not a list of 8 values: %r" % (what, key, arr))
    return arr


def parse_pfc(text):
    """``dcb -j pfc show`` -> ``{"pfc": [enabled priorities], "delay": int|None}``."""
    data = _load(text, "pfc")
    arr = _array8(data, "prio_pfc", "pfc")
    return {"pfc": [p for p, v in enumerate(arr) if _flag(v)], "delay": data.get("delay")}


def parse_ets(text):
    """``dcb -j ets show`` -> ``{"prio_tc": [8], "ets": {tc: {"tsa", "bw"}}, "willing": bool}``."""
    data = _load(text, "ets")
    tsa = _array8(data, "tc_tsa", "ets")
    bw = _array8(data, "tc_bw", "ets")
    prio_tc = _array8(data, "prio_tc", "ets")
    return {
        "prio_tc": [int(x) for x in prio_tc],
        "ets": dict((tc, {"tsa": str(tsa[tc]), "bw": int(bw[tc])}) for tc in TCS),
        "willing": _flag(data.get("willing", False)),
    }


def parse_app(text):
    """``dcb -j app show`` -> ``{dscp: [priorities]}`` (DSCP selector entries only)."""
    data = _load(text, "app")
    table = {}
    for entry in data.get("dscp_prio") or []:
        if isinstance(entry, dict):
            d, p = entry.get("dscp", entry.get("protocol")), entry.get("prio", entry.get("priority"))
        elif isinstance(entry, (list, tuple)) and len(entry) >= 2:
            d, p = entry[0], entry[1]
        else:
            raise DcbParseError("`dcb -j app show`: unexpected dscp_prio entry %r" % (entry,))
        try:
            d, p = int(d), int(p)
        except (TypeError, ValueError):
            raise DcbParseError("`dcb -j app show`: unexpected dscp_prio entry %r" % (entry,))
        table.setdefault(d, [])
        if p not in table[d]:
            table[d].append(p)
    for d in table:
        table[d].sort()
    return table


def parse_dcbx(text):
    """``dcb -j dcbx show`` -> sorted list of set DCBX flags (host, lld_managed, cee, ieee, static)."""
    data = _load(text, "dcbx")
    return sorted(k for k, v in data.items() if _flag(v))


class DcbBackend(QosBackend):
    """DCB through iproute2 ``dcb``."""

    name = "dcb"
    keys = DCB_KEYS
    app_trust = True

    @classmethod
    def probe(cls, ctx):
        binary = ctx.runner.which("dcb")
        if not binary:
            return Probe(False, reason="the dcb command is not installed (package iproute2, version 5.11 or later)")
        return Probe(True, 1, "auto: iproute2 dcb is installed", binary)

    # -- reading --------------------------------------------------------
    def _show(self, obj):
        argv = [self.binary, "-j", obj, "show", "dev", self.netdev]
        rc, out, err = self.runner.run(argv, check=False)
        if rc != 0:
            if NOT_SUPPORTED in (err + out).lower():
                return None, (err or out).strip()
            if NO_DEVICE in (err + out).lower():
                raise UnsupportedError(
                    DCB_KEYS, "%s is not a network interface of this host: `dcb %s show` says %r, although %s "
                    "lists it (sysfs_path of another host, or a container without the host's network namespace?)"
                    % (self.netdev, obj, (err or out).strip(), self.tree.sys("class", "net", self.netdev)))
            raise CommandError(quote_argv(argv), rc, out, err)
        return out, None

    def read(self, desired=None):
        """Current DCB state; ``unsupported`` maps option -> reason where the driver lacks it."""
        state = {"unsupported": {}}
        out, why = self._show("pfc")
        if out is None:
            raise UnsupportedError(
                DCB_KEYS, "%s has no DCB support (its driver has no DCB netlink ops): `dcb pfc show` says %r"
                % (self.netdev, why))
        state.update(parse_pfc(out))
        out, why = self._show("ets")
        if out is None:
            for k in ("prio_tc", "ets"):
                state["unsupported"][k] = "%s: no IEEE ETS support (%s)" % (self.netdev, why)
            state["prio_tc"], state["ets"] = None, None
        else:
            state.update(parse_ets(out))
        out, why = self._show("app")
        if out is None:
            for k in ("trust", "dscp2prio"):
                state["unsupported"][k] = "%s: no DCB APP table support (%s)" % (self.netdev, why)
            state["dscp2prio"], state["trust"] = None, None
        else:
            state["dscp2prio"] = parse_app(out)
            state["trust"] = "dscp" if state["dscp2prio"] else "pcp"
        out, why = self._show("dcbx")
        state["dcbx"] = parse_dcbx(out) if out is not None else None
        return state

    def warnings(self, current):
        dcbx = current.get("dcbx")
        if isinstance(dcbx, list) and dcbx and "host" not in dcbx:
            return ["%s: DCBX is not host-controlled (%s): an LLDP agent or the firmware may override these settings"
                    % (self.netdev, ", ".join(dcbx))]
        return []

    # -- changing -------------------------------------------------------
    def _show_parsed(self, obj, parser):
        out, why = self._show(obj)
        if out is None:
            raise CommandError("dcb -j %s show dev %s" % (obj, self.netdev), detail=why)
        return parser(out)

    def _run_set(self, args, check):
        """Run ``dcb <args>``, then read the object back and ``check`` it.

        iproute2 6.1 exits 0 and prints nothing when the driver rejects a
        ``pfc set`` / ``ets set`` (the kernel's error is in a reply attribute
        it does not look at), so only the read-back shows a refused change.
        """
        argv = [self.binary] + args
        self.runner.run(argv, error_patterns=ERROR_PATTERNS)
        problem = check()
        if problem:
            raise CommandError(
                quote_argv(argv), 0, detail="it exited 0 but the driver did not apply it: %s (iproute2 does "
                "not report driver errors for pfc/ets set; the kernel log may say why)" % problem)

    def _app_argv(self, verb, pairs):
        return [self.binary, "app", verb, "dev", self.netdev, "dscp-prio"] + ["%d:%d" % (d, p) for d, p in pairs]

    # the DSCP table, for backend.app_table_steps(): one `dcb app add|del` per operation
    def read_table(self):
        return self._show_parsed("app", parse_app)

    @staticmethod
    def app_commands(ops):
        return ops

    def app_op(self, verb, pairs):
        """``dcb app add|del`` of ``pairs``: the kernel applies them one by one and stops at the first error
        (rc 1, ``Attribute write: ...``); the run's rollback restores the table from what it then reads."""
        self.runner.run(self._app_argv(verb, pairs), error_patterns=ERROR_PATTERNS)

    def app_op_text(self, verb, pairs):
        return quote_argv(self._app_argv(verb, pairs))

    def _pfc_args(self, enabled):
        return ["pfc", "set", "dev", self.netdev, "prio-pfc"] + [
            "%d:%s" % (p, "on" if p in enabled else "off") for p in range(8)]

    def _pfc_set(self, enabled):
        def check():
            got = self._show_parsed("pfc", parse_pfc)["pfc"]
            if sorted(got) != sorted(enabled):
                return "`dcb -j pfc show` reads PFC on priorities %s, expected %s" % (got, sorted(enabled))
            return None
        self._run_set(self._pfc_args(enabled), check)

    def _ets_args(self, value):
        ets, prio_tc = value
        args = ["ets", "set", "dev", self.netdev]
        if ets is not None:
            args += ["tc-tsa"] + ["%d:%s" % (tc, ets[tc]["tsa"]) for tc in TCS]
            args += ["tc-bw"] + ["%d:%d" % (tc, ets[tc]["bw"]) for tc in TCS]
        if prio_tc is not None:
            args += ["prio-tc"] + ["%d:%d" % (p, tc) for p, tc in enumerate(prio_tc)]
        return args

    def _ets_set(self, value):
        ets, prio_tc = value

        def check():
            got = self._show_parsed("ets", parse_ets)
            problems = []
            if ets is not None and not ets_equal(got["ets"], ets):
                problems.append("tc-tsa/tc-bw read %s, expected %s" % (
                    " ".join("%d:%s/%d" % (tc, got["ets"][tc]["tsa"], got["ets"][tc]["bw"]) for tc in TCS),
                    " ".join("%d:%s/%d" % (tc, ets[tc]["tsa"], ets[tc]["bw"]) for tc in TCS)))
            if prio_tc is not None and got["prio_tc"] != list(prio_tc):
                problems.append("prio-tc reads %s, expected %s" % (got["prio_tc"], list(prio_tc)))
            return "`dcb -j ets show`: " + "; ".join(problems) if problems else None
        self._run_set(self._ets_args(value), check)

    def target(self, current, desired):
        merged = merge_dcb(current, desired, self.app_trust)
        return dict((k, merged[k]) for k in DCB_KEYS if k in merged)

    def plan(self, current, desired):
        """Steps from ``current`` to the target of ``desired``.

        Order: DSCP APP entries (as the port driver's remap rule orders them,
        :class:`.backend.DscpRemapRule`), PFC, ETS/prio-tc. The first DSCP
        step's undo restores the table read before the run.
        """
        target = self.target(current, desired)
        steps = []
        self.notes = []
        if "trust" in desired or "dscp2prio" in desired:
            steps, self.notes = app_table_steps(self, self.remap_rule, current["dscp2prio"], target["dscp2prio"],
                                                current["dscp2prio"])
        if "pfc" in desired and sorted(current["pfc"]) != sorted(target["pfc"]):
            steps.append(setter_step("pfc", self._pfc_set, list(target["pfc"]), list(current["pfc"]),
                                     lambda v: quote_argv([self.binary] + self._pfc_args(v))))
        ets_changed = "ets" in desired and not ets_equal(current["ets"], target["ets"])
        prio_changed = "prio_tc" in desired and current["prio_tc"] != target["prio_tc"]
        if ets_changed or prio_changed:
            steps.append(setter_step(
                "ets" if ets_changed else "prio_tc", self._ets_set,
                (target["ets"] if ets_changed else None, target["prio_tc"] if prio_changed else None),
                (current["ets"] if ets_changed else None, current["prio_tc"] if prio_changed else None),
                lambda v: quote_argv([self.binary] + self._ets_args(v))))
        return steps
