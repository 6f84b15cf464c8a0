# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Desired/current QoS state of one RoCE port: validation, merge, diff.

Pure functions and exceptions, no I/O. Every option of ``roce_qos`` is
validated and normalised here BEFORE anything on the host is read or touched,
so that bad input fails with a message naming the parameter and the allowed
values.

Normalised (internal) forms:

* ``trust``: ``"pcp"`` or ``"dscp"``
* ``pfc``: sorted list of lossless priorities, ``[]`` = PFC off
* ``prio_tc``: desired = ``{priority: tc}`` (partial), current = list of 8 TCs
* ``ets``: desired = ``{tc: {"tsa": ..., "bw": ...}}`` (partial), current = the same for all 8 TCs
* ``dscp2prio``: desired = ``{dscp: priority}``; current = ``{dscp: [priorities]}``
  (the DCB APP table may hold several priorities for one DSCP)
* ``ecn``: ``{"np": [priorities], "rp": [priorities]}`` (each part optional)
* ``cnp``: ``{"dscp": int, "priority": int}`` (each part optional)
* ``roce_tos``: int, ``roce_mode``: ``"v1"`` / ``"v2"``, ``mtu``: int, ``pause``: bool
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import re

PRIORITIES = tuple(range(8))
TCS = tuple(range(8))
DSCP_MAX = 63
TOS_MAX = 255
# 68 is the IPv4 minimum (RFC 791); 9978 is the largest MTU ConnectX NICs
# accept, the largest the collection's supported RoCE hardware can use.
MTU_MIN = 68
MTU_MAX = 9978
TSA_CHOICES = ("ets", "strict", "vendor")
TRUST_CHOICES = ("pcp", "dscp")
ROCE_MODE_CHOICES = ("v1", "v2")
ON_UNSUPPORTED_CHOICES = ("fail", "warn")
BACKEND_CHOICES = ("auto", "dcb", "mlnx_qos")

# Kernel limits: IFNAMSIZ - 1 for netdevs, IB_DEVICE_NAME_MAX - 1 for RDMA devices.
# Only characters that appear in real interface names; everything a shell
# would interpret (space ; | & $ ` ' " < > * ? ( ) { } [ ] \ / ~ !) is rejected.
NETDEV_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,15}\Z")
IBDEV_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,63}\Z")

DCB_KEYS = ("trust", "dscp2prio", "pfc", "prio_tc", "ets")
ECN_KEYS = ("ecn", "cnp")
CONFIGFS_KEYS = ("roce_tos", "roce_mode")
NETDEV_KEYS = ("mtu", "pause")
ALL_KEYS = DCB_KEYS + ECN_KEYS + CONFIGFS_KEYS + NETDEV_KEYS


class QosError(Exception):
    """A failure whose message is fit to show the user."""


class ValidationError(QosError):
    """Bad input; raised before anything is touched."""

    def __init__(self, param, message):
        self.param = param
        super(ValidationError, self).__init__("%s: %s" % (param, message))


class UnsupportedError(QosError):
    """The port/driver cannot do what some options ask (no DCB, no ECN files...)."""

    def __init__(self, keys, message):
        self.keys = tuple(keys)
        super(UnsupportedError, self).__init__(message)


class CommandError(QosError):
    """A command or a sysfs write failed."""

    def __init__(self, what, rc=None, out="", err="", detail=None):
        self.what = what
        self.rc = rc
        self.out = out or ""
        self.err = err or ""
        text = detail or (self.err.strip() or self.out.strip() or "no output")
        if rc is None:
            msg = "%s failed: %s" % (what, text)
        else:
            msg = "%s failed (rc=%s): %s" % (what, rc, text)
        super(CommandError, self).__init__(msg)


# ---------------------------------------------------------------------------
# scalar validators
# ---------------------------------------------------------------------------
def _as_int(param, value, lo, hi, what="value"):
    """``value`` as an int in [lo, hi]; accepts ints and decimal strings."""
    if isinstance(value, bool):
        raise ValidationError(param, "%s %r is a boolean, expected an integer %d-%d" % (what, value, lo, hi))
    if isinstance(value, int):
        iv = value
    elif isinstance(value, float) and value.is_integer():
        iv = int(value)
    elif isinstance(value, str) and re.match(r"^\s*\d+\s*$", value):
        iv = int(value)
    else:
        raise ValidationError(param, "%s %r is not an integer; allowed %d-%d" % (what, value, lo, hi))
    if iv < lo or iv > hi:
        raise ValidationError(param, "%s %d is out of range; allowed %d-%d" % (what, iv, lo, hi))
    return iv


def priority(param, value):
    return _as_int(param, value, 0, 7, "priority")


def dscp(param, value):
    return _as_int(param, value, 0, DSCP_MAX, "DSCP")


def traffic_class(param, value):
    return _as_int(param, value, 0, 7, "traffic class")


def check_netdev_name(param, name):
    if not isinstance(name, str) or not NETDEV_RE.match(name) or name in (".", ".."):
        raise ValidationError(
            param, "%r is not a valid interface name; allowed: 1-15 characters of "
            "A-Z a-z 0-9 _ . : - (no spaces or shell metacharacters)" % (name,))
    return name


def check_ibdev_name(param, name):
    if not isinstance(name, str) or not IBDEV_RE.match(name) or name in (".", ".."):
        raise ValidationError(
            param, "%r is not a valid RDMA device name; allowed: 1-63 characters of "
            "A-Z a-z 0-9 _ . : - (no spaces or shell metacharacters)" % (name,))
    return name


def _choice(param, value, choices):
    if value not in choices:
        raise ValidationError(param, "%r is not allowed; choose one of %s" % (value, ", ".join(choices)))
    return value


def _priority_list(param, value):
    if not isinstance(value, (list, tuple)):
        raise ValidationError(param, "expected a list of priorities 0-7, got %r" % (value,))
    return sorted(set(priority(param, v) for v in value))


def _mapping_items(param, value, what):
    if not isinstance(value, dict):
        raise ValidationError(param, "expected a mapping of %s, got %r" % (what, value))
    return value.items()


# ---------------------------------------------------------------------------
# option normalisation
# ---------------------------------------------------------------------------
def normalise_prio_tc(value):
    """``prio_tc`` as ``{priority: tc}``.

    Accepts a list of 8 TCs (index = priority, like ``mlnx_qos --prio_tc``) or
    a mapping ``{priority: tc}`` naming only the priorities to change.
    """
    if isinstance(value, (list, tuple)):
        if len(value) != 8:
            raise ValidationError("prio_tc", "a list must have 8 entries (TC of priority 0..7), got %d" % len(value))
        return dict((p, traffic_class("prio_tc", tc)) for p, tc in enumerate(value))
    out = {}
    for p, tc in _mapping_items("prio_tc", value, "priority (0-7) to traffic class (0-7)"):
        out[priority("prio_tc", p)] = traffic_class("prio_tc", tc)
    return out


def normalise_ets(value):
    """``ets`` as ``{tc: {"tsa": ..., "bw": ...}}`` with per-entry checks."""
    if not isinstance(value, (list, tuple)):
        raise ValidationError("ets", "expected a list of {tc, tsa, bw} entries, got %r" % (value,))
    out = {}
    for entry in value:
        if not isinstance(entry, dict):
            raise ValidationError("ets", "each entry must be a mapping {tc, tsa, bw}, got %r" % (entry,))
        unknown = sorted(set(entry) - set(("tc", "tsa", "bw")))
        if unknown:
            raise ValidationError("ets", "unknown key(s) %s in %r; allowed keys: tc, tsa, bw" % (", ".join(unknown), entry))
        if entry.get("tc") is None:
            raise ValidationError("ets", "entry %r has no tc (0-7)" % (entry,))
        tc = traffic_class("ets", entry["tc"])
        if tc in out:
            raise ValidationError("ets", "traffic class %d is listed twice" % tc)
        tsa = entry.get("tsa") or "ets"
        _choice("ets", tsa, TSA_CHOICES)
        bw = entry.get("bw")
        if tsa == "ets":
            if bw is None:
                raise ValidationError("ets", "traffic class %d has tsa ets but no bw; allowed 0-100 (percent)" % tc)
            bw = _as_int("ets", bw, 0, 100, "bw")
        else:
            bw = 0 if bw is None else _as_int("ets", bw, 0, 100, "bw")
            if bw != 0:
                raise ValidationError("ets", "traffic class %d has tsa %s: bw must be 0 or omitted (bandwidth only applies to tsa ets)" % (tc, tsa))
        out[tc] = {"tsa": tsa, "bw": bw}
    total = sum(e["bw"] for e in out.values() if e["tsa"] == "ets")
    if total > 100:
        raise ValidationError("ets", "bandwidths of the ets traffic classes sum to %d%%; they must sum to 100" % total)
    return out


def normalise_dscp2prio(value):
    out = {}
    for d, p in _mapping_items("dscp2prio", value, "DSCP (0-63) to priority (0-7)"):
        out[dscp("dscp2prio", d)] = priority("dscp2prio", p)
    return out


def normalise_ecn(value):
    out = {}
    for key, prios in _mapping_items("ecn", value, "np/rp to lists of priorities"):
        if key not in ("np", "rp"):
            raise ValidationError("ecn", "unknown key %r; allowed keys: np (notification point), rp (reaction point)" % (key,))
        if prios is None:
            continue
        out[key] = _priority_list("ecn", prios)
    return out


def normalise_cnp(value):
    out = {}
    for key, v in _mapping_items("cnp", value, "dscp / priority"):
        if v is None:
            continue
        if key == "dscp":
            out["dscp"] = dscp("cnp", v)
        elif key == "priority":
            out["priority"] = priority("cnp", v)
        else:
            raise ValidationError("cnp", "unknown key %r; allowed keys: dscp (0-63), priority (0-7)" % (key,))
    return out


def normalise(params):
    """Validate module parameters; return the desired state (only managed keys).

    Raises :class:`ValidationError` naming the parameter.
    """
    desired = {}
    if params.get("trust") is not None:
        desired["trust"] = _choice("trust", params["trust"], TRUST_CHOICES)
    if params.get("pfc") is not None:
        desired["pfc"] = _priority_list("pfc", params["pfc"])
    if params.get("prio_tc") is not None:
        desired["prio_tc"] = normalise_prio_tc(params["prio_tc"])
    if params.get("ets") is not None:
        desired["ets"] = normalise_ets(params["ets"])
    if params.get("dscp2prio") is not None:
        table = normalise_dscp2prio(params["dscp2prio"])
        if table:
            desired["dscp2prio"] = table
    if params.get("ecn") is not None:
        ecn = normalise_ecn(params["ecn"])
        if ecn:
            desired["ecn"] = ecn
    if params.get("cnp") is not None:
        cnp = normalise_cnp(params["cnp"])
        if cnp:
            desired["cnp"] = cnp
    if params.get("roce_tos") is not None:
        desired["roce_tos"] = _as_int("roce_tos", params["roce_tos"], 0, TOS_MAX, "ToS")
    if params.get("roce_mode") is not None:
        desired["roce_mode"] = _choice("roce_mode", params["roce_mode"], ROCE_MODE_CHOICES)
    if params.get("mtu") is not None:
        desired["mtu"] = _as_int("mtu", params["mtu"], MTU_MIN, MTU_MAX, "MTU")
    if params.get("pause") is not None:
        if not isinstance(params["pause"], bool):
            raise ValidationError("pause", "%r is not a boolean; allowed true, false" % (params["pause"],))
        desired["pause"] = params["pause"]

    if "dscp2prio" in desired:
        if desired.get("trust") == "pcp":
            raise ValidationError(
                "dscp2prio", "needs trust: dscp (got trust: pcp). A DSCP map does nothing on a port that "
                "trusts PCP, and on the dcb backend DSCP APP entries are what makes a port trust DSCP")
        # A DSCP map implies DSCP trust (see the module documentation).
        desired["trust"] = "dscp"
    return desired


# ---------------------------------------------------------------------------
# DCB state: merge and helpers
# ---------------------------------------------------------------------------
def default_dscp_table():
    """DSCP -> priority table ``mlnx_qos --trust dscp`` installs: priority = DSCP >> 3."""
    return dict((d, [d >> 3]) for d in range(DSCP_MAX + 1))


def merge_dcb(current, desired, app_trust):
    """Target DCB state: ``current`` with ``desired`` applied.

    ``app_trust``: True where trust is derived from DSCP APP entries (the dcb
    backend, and mlnx_qos on upstream kernels); False where trust is a separate
    setting (MLNX_OFED ``/sys/class/net/<if>/qos/trust``).

    Rules (documented in the module):

    * ETS: traffic classes not listed keep their settings; the bandwidth of
      every non-ETS class becomes 0; ETS bandwidths must then sum to 100.
    * trust dscp on a port that trusts pcp first installs the default table
      (priority = DSCP >> 3, as ``mlnx_qos --trust dscp`` does), then
      ``dscp2prio`` on top. DSCPs not listed in ``dscp2prio`` keep their entries.
    * trust pcp removes every DSCP APP entry where ``app_trust``.
    """
    target = copy.deepcopy(current)
    if "pfc" in desired:
        target["pfc"] = list(desired["pfc"])
    if "prio_tc" in desired:
        prio_tc = list(target.get("prio_tc") or [0] * 8)
        for p, tc in desired["prio_tc"].items():
            prio_tc[p] = tc
        target["prio_tc"] = prio_tc
    if "ets" in desired:
        ets = dict((tc, dict(e)) for tc, e in (target.get("ets") or {}).items())
        for tc in TCS:
            ets.setdefault(tc, {"tsa": "strict", "bw": 0})
        for tc, e in desired["ets"].items():
            ets[tc] = dict(e)
        for tc in TCS:
            if ets[tc]["tsa"] != "ets":
                ets[tc]["bw"] = 0
        ets_tcs = [tc for tc in TCS if ets[tc]["tsa"] == "ets"]
        total = sum(ets[tc]["bw"] for tc in ets_tcs)
        if ets_tcs and total != 100:
            raise ValidationError(
                "ets", "with the traffic classes not listed kept as they are, the ets classes %s have "
                "bandwidths %s summing to %d%%; they must sum to 100 (list every ets class with its bw)"
                % (ets_tcs, [ets[tc]["bw"] for tc in ets_tcs], total))
        target["ets"] = ets
    if "trust" in desired or "dscp2prio" in desired:
        cur_trust = current.get("trust")
        new_trust = desired.get("trust", cur_trust)
        table = dict((d, list(p)) for d, p in (current.get("dscp2prio") or {}).items())
        if new_trust == "pcp":
            if app_trust:
                table = {}
        else:
            if app_trust and cur_trust != "dscp":
                table = default_dscp_table()
            for d, p in desired.get("dscp2prio", {}).items():
                table[d] = [p]
        target["trust"] = new_trust
        target["dscp2prio"] = table
    return target


def app_table_diff(current, target):
    """(to_add, to_del): lists of (dscp, priority) pairs, sorted."""
    cur = set((d, p) for d, ps in current.items() for p in ps)
    tgt = set((d, p) for d, ps in target.items() for p in ps)
    return sorted(tgt - cur), sorted(cur - tgt)


def ets_equal(a, b):
    return all(a.get(tc) == b.get(tc) for tc in TCS)


# ---------------------------------------------------------------------------
# rendering for diff / results
# ---------------------------------------------------------------------------
def render(state, desired):
    """JSON-friendly view of ``state`` restricted to what ``desired`` manages."""
    out = {}
    for key in ALL_KEYS:
        if key not in desired:
            continue
        value = state.get(key)
        if key == "ets":
            out[key] = None if value is None else [
                {"tc": tc, "tsa": value[tc]["tsa"], "bw": value[tc]["bw"]} for tc in TCS if tc in value]
        elif key == "dscp2prio":
            table = value or {}
            view = {}
            for d in sorted(desired[key]):
                ps = table.get(d)
                view[str(d)] = None if not ps else (ps[0] if len(ps) == 1 else list(ps))
            out[key] = view
        elif key in ("ecn", "cnp"):
            value = value or {}
            out[key] = dict((k, copy.deepcopy(value.get(k))) for k in sorted(desired[key]))
        elif key == "prio_tc":
            out[key] = None if value is None else list(value)
        else:
            out[key] = copy.deepcopy(value)
    return out
