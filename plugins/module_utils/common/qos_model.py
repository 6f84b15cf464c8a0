# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Desired/current QoS state of RoCE ports: validation, merge, diff.

Pure functions and exceptions, no I/O. Every option of ``roce_qos`` (and of
the saved per-port settings ``rdma-fabric qos-apply`` re-applies at boot) is
validated and normalised here, ONCE, BEFORE anything on the host is read or
touched, so that bad input fails with a message naming the parameter and the
allowed values. The module, the host runtime and the controller-side filter
``rdma.fabric.roce_qos_ports`` all call these functions; nothing else restates
a rule.

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

Forms users already know (from ``mlnx_qos``, NVIDIA's NicConfigurationTemplate
and ``cma_roce_mode`` / ``cma_roce_tos``) mean what they mean there:

* ``pfc`` (:func:`normalise_pfc`): a string is split at commas and a lone
  integer is one entry, as Ansible reads any list option (:func:`as_list`).
  Exactly 8 entries that are all 0 or 1 are the PFC flags of ``mlnx_qos
  --pfc`` / NicConfigurationTemplate ``qos.pfc`` (``[0,0,0,1,0,0,0,0]`` or
  ``"0,0,0,1,0,0,0,0"``: priority 3 lossless). Any other list is a list of
  lossless priorities (``[3]``, ``[0, 1]``, ``"3,4"``, ``[]`` = off; repeats
  collapse), except where it reads both ways: repeats among entries that are
  all 0 or 1 (``[0,0,0,1]``: flags cut short, or priorities 0 and 1 given
  twice), or repeats among 8 or more entries (``[0,0,0,2,0,0,0,0]``: flags
  with a typo, or priorities 0 and 2): rejected with an error showing both
  forms.
* ``roce_mode``: ``v1`` / ``v2``, or the ``cma_roce_mode -m`` values ``1`` /
  ``2`` and the kernel's own texts ``IB/RoCE v1`` / ``RoCE v1`` / ``RoCE v2``.
* ``tos``: another name for ``roce_tos`` (``cma_roce_tos -t``), accepted only
  where it has exactly the same value as ``roce_tos`` when both are given.
* Mapping keys that mean the same thing (``dscp2prio: {26: 3, "26": 5}``)
  are rejected (:func:`check_unique_keys`); JSON read on the host is parsed
  with :func:`loads_json`, which rejects a key given twice.

A call names its ports in one of two forms (:func:`port_requests`): the
single-port form (``netdev`` or ``device`` + ``port`` with the options at the
top level) or the list form (``ports``: one mapping per port, each with
``netdev`` or ``device`` + ``port`` and any option; the top-level options are
the defaults of every port; a key given with the value null in a port entry
leaves that option of that port alone).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import json
import re

PRIORITIES = tuple(range(8))
TCS = tuple(range(8))
DSCP_MAX = 63
TOS_MAX = 255
# 68 is the IPv4 minimum (RFC 791); 9978 is the largest MTU ConnectX NICs
# accept, the largest the collection's supported RoCE hardware can use.
MTU_MIN = 68
MTU_MAX = 9978
PORT_NUMBER_MAX = 255
TSA_CHOICES = ("ets", "strict", "vendor")
TRUST_CHOICES = ("pcp", "dscp")
ROCE_MODE_CHOICES = ("v1", "v2")
# The forms of cma_roce_mode (-m 1|2) and the kernel's configfs texts, as the module's v1/v2.
ROCE_MODE_FORMS = {"v1": "v1", "v2": "v2", "1": "v1", "2": "v2",
                   "IB/RoCE v1": "v1", "RoCE v1": "v1", "RoCE v2": "v2"}
ON_UNSUPPORTED_CHOICES = ("fail", "warn")
BACKEND_CHOICES = ("auto", "dcb", "mlnx_qos")

# Kernel limits: IFNAMSIZ - 1 for netdevs, IB_DEVICE_NAME_MAX - 1 for RDMA devices.
# Only characters that appear in real interface names; everything a shell
# would interpret (space ; | & $ ` ' " < > * ? ( ) { } [ ] \ / ~ !) is rejected.
NETDEV_RE = re.compile(r"[A-Za-z0-9_.:-]{1,15}")
IBDEV_RE = re.compile(r"[A-Za-z0-9_.:-]{1,63}")

DCB_KEYS = ("trust", "dscp2prio", "pfc", "prio_tc", "ets")
ECN_KEYS = ("ecn", "cnp")
CONFIGFS_KEYS = ("roce_tos", "roce_mode")
NETDEV_KEYS = ("mtu", "pause")
ALL_KEYS = DCB_KEYS + ECN_KEYS + CONFIGFS_KEYS + NETDEV_KEYS
# What one port entry of the list form may hold (and the top level, as defaults).
ADDRESS_KEYS = ("netdev", "device", "port")
RUN_KEYS = ("backend", "on_unsupported")
ALIASES = {"tos": "roce_tos"}       # other name -> option
ALIAS_KEYS = tuple(ALIASES)
PORT_ENTRY_KEYS = ADDRESS_KEYS + ALL_KEYS + ALIAS_KEYS + RUN_KEYS
RUN_DEFAULTS = {"backend": "auto", "on_unsupported": "fail"}
# Options the module declares as lists: what a caller wrote is read as Ansible reads a list (as_list).
LIST_OPTIONS = ("pfc",)

PFC_FORMS = ("a list of lossless priorities 0-7, e.g. [3] or [3, 4] ([] turns PFC off), or the 8 PFC flags of "
             "mlnx_qos --pfc / NicConfigurationTemplate qos.pfc (index = priority), e.g. [0,0,0,1,0,0,0,0] or "
             "\"0,0,0,1,0,0,0,0\"")


class QosError(Exception):
    """A failure whose message is fit to show the user."""


class ValidationError(QosError):
    """Bad input; raised before anything is touched."""

    def __init__(self, param, message):
        self.param = param
        self.detail = message
        super(ValidationError, self).__init__("%s: %s" % (param, message))

    def under(self, prefix):
        """The same error with ``prefix`` before the parameter (``ports[1].`` in the list form)."""
        return self if not prefix else ValidationError(prefix + self.param, self.detail)


class UnsupportedError(QosError):
    """The port/driver cannot do what some options ask (no DCB, no ECN files...)."""

    def __init__(self, keys, message):
        self.keys = tuple(keys)
        super(UnsupportedError, self).__init__(message)


class CommandError(QosError):
    """A command or a sysfs write failed (or could not be started)."""

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
    elif isinstance(value, str) and re.fullmatch(r"[0-9]+", value):  # " 26" is no DSCP: a blank is refused
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


def port_number(param, value):
    return _as_int(param, value, 1, PORT_NUMBER_MAX, "port number")


def _check_name(param, name, regex, what, limit):
    if not isinstance(name, str) or not regex.fullmatch(name) or name in (".", ".."):
        raise ValidationError(
            param, "%r is not a valid %s; allowed: 1-%d characters of "
            "A-Z a-z 0-9 _ . : - (no spaces or shell metacharacters)" % (name, what, limit))
    return name


def check_netdev_name(param, name):
    return _check_name(param, name, NETDEV_RE, "interface name", 15)


def check_ibdev_name(param, name):
    return _check_name(param, name, IBDEV_RE, "RDMA device name", 63)


def choice(param, value, choices):
    if value not in choices:
        raise ValidationError(param, "%r is not allowed; choose one of %s" % (value, ", ".join(choices)))
    return value


def check_backend(param, value):
    """The ``backend`` option (the backend selector looks its name up with this too)."""
    return choice(param, value, BACKEND_CHOICES)


def _priority_list(param, value):
    if not isinstance(value, (list, tuple)):
        raise ValidationError(param, "expected a list of priorities 0-7, got %r" % (value,))
    return sorted(set(priority(param, v) for v in value))


def _key_text(key):
    """What a mapping key means: ``26``, ``"26"`` and ``" 26 "`` all mean 26."""
    text = str(key).strip()
    return str(int(text)) if re.fullmatch(r"[+-]?\d+", text) else text


def check_unique_keys(param, mapping):
    """Reject a mapping two of whose keys mean the same (``{26: 3, "26": 5}``)."""
    seen = {}
    for key in mapping:
        meaning = _key_text(key)
        if meaning in seen:
            raise ValidationError(
                param, "%r and %r are the same key (%s) given twice, with the values %r and %r; give each key once"
                % (seen[meaning], key, meaning, mapping[seen[meaning]], mapping[key]))
        seen[meaning] = key
    return mapping


def check_unique_keys_in(params, prefix=""):
    """:func:`check_unique_keys` on every mapping among the options and port entries of a call.

    The controller runs this on the task's arguments as written (Ansible's
    JSON transport keeps only one of two keys that read the same).
    """
    for key, value in sorted((params or {}).items(), key=lambda kv: str(kv[0])):
        if isinstance(value, dict):
            check_unique_keys(prefix + str(key), value)
            check_unique_keys_in(value, prefix + str(key) + ".")
        elif key == "ports" and isinstance(value, (list, tuple)):
            for i, entry in enumerate(value):
                if isinstance(entry, dict):
                    check_unique_keys("ports[%d]" % i, entry)
                    check_unique_keys_in(entry, "ports[%d]." % i)


def _unique_pairs(pairs):
    seen = set()
    out = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError("the key %r is given twice" % key)
        seen.add(key)
        out[key] = value
    return out


def loads_json(text):
    """``json.loads`` that rejects an object holding one key twice (ValueError)."""
    return json.loads(text, object_pairs_hook=_unique_pairs)


def _mapping_items(param, value, what):
    if not isinstance(value, dict):
        raise ValidationError(param, "expected a mapping of %s, got %r" % (what, value))
    return check_unique_keys(param, value).items()


# ---------------------------------------------------------------------------
# option normalisation
# ---------------------------------------------------------------------------
def as_list(value):
    """What Ansible's list type makes of a value: a string split at commas, a lone integer one entry."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",")]
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    return value


def normalise_pfc(value, param="pfc"):
    """``pfc`` (a list, see :func:`as_list` for strings) as the sorted list of lossless priorities.

    Exactly 8 entries, each 0 or 1: the PFC flags (index = priority). Repeats
    with every entry 0 or 1, or repeats among 8 or more entries: read both
    ways, rejected. Otherwise lossless priorities (repeats collapse).
    """
    if not isinstance(value, (list, tuple)):
        raise ValidationError(param, "expected a list of priorities 0-7, got %r. Accepted forms: %s" % (value, PFC_FORMS))
    values = [priority(param, v) for v in value]
    zero_one = all(v in (0, 1) for v in values)
    if zero_one and len(values) == 8:
        return [p for p, f in enumerate(values) if f == 1]
    repeated = sorted(set(v for v in values if values.count(v) > 1))
    if repeated and (zero_one or len(values) >= 8):
        as_flags = ("it has %d entries, not 8" % len(values) if zero_one
                    else "its entries must be 0 or 1, not %s" % ", ".join(str(v) for v in sorted(set(values) - set((0, 1)))))
        raise ValidationError(
            param, "%r reads two ways: as the 8 PFC flags of mlnx_qos --pfc %s; as a list of lossless priorities it "
            "names priority %s more than once. Write it as priorities (e.g. [3] for priority 3 lossless) or as 8 "
            "flags (e.g. [0,0,0,1,0,0,0,0] or \"0,0,0,1,0,0,0,0\")"
            % (list(value), as_flags, " and ".join(str(p) for p in repeated)))
    return sorted(set(values))


def normalise_roce_mode(value, param="roce_mode"):
    key = None if isinstance(value, bool) else (str(value) if isinstance(value, (str, int)) else None)
    if key not in ROCE_MODE_FORMS:
        raise ValidationError(param, "%r is not allowed; choose one of %s (also accepted: the cma_roce_mode forms "
                                     "1, 2, 'IB/RoCE v1', 'RoCE v1', 'RoCE v2')" % (value, ", ".join(ROCE_MODE_CHOICES)))
    return ROCE_MODE_FORMS[key]


def normalise_prio_tc(value, param="prio_tc"):
    """``prio_tc`` as ``{priority: tc}``.

    Accepts a list of 8 TCs (index = priority, like ``mlnx_qos --prio_tc``) or
    a mapping ``{priority: tc}`` naming only the priorities to change.
    """
    if isinstance(value, (list, tuple)):
        if len(value) != 8:
            raise ValidationError(param, "a list must have 8 entries (TC of priority 0..7), got %d" % len(value))
        return dict((p, traffic_class(param, tc)) for p, tc in enumerate(value))
    out = {}
    for p, tc in _mapping_items(param, value, "priority (0-7) to traffic class (0-7)"):
        out[priority(param, p)] = traffic_class(param, tc)
    return out


def normalise_ets(value, param="ets"):
    """``ets`` as ``{tc: {"tsa": ..., "bw": ...}}`` with per-entry checks."""
    if not isinstance(value, (list, tuple)):
        raise ValidationError(param, "expected a list of {tc, tsa, bw} entries, got %r" % (value,))
    out = {}
    for entry in value:
        if not isinstance(entry, dict):
            raise ValidationError(param, "each entry must be a mapping {tc, tsa, bw}, got %r" % (entry,))
        unknown = sorted(str(k) for k in set(entry) - set(("tc", "tsa", "bw")))
        if unknown:
            raise ValidationError(param, "unknown key(s) %s in %r; allowed keys: tc, tsa, bw" % (", ".join(unknown), entry))
        if entry.get("tc") is None:
            raise ValidationError(param, "entry %r has no tc (0-7)" % (entry,))
        tc = traffic_class(param, entry["tc"])
        if tc in out:
            raise ValidationError(param, "traffic class %d is listed twice" % tc)
        tsa = entry.get("tsa") or "ets"
        choice(param, tsa, TSA_CHOICES)
        bw = entry.get("bw")
        if tsa == "ets":
            if bw is None:
                raise ValidationError(param, "traffic class %d has tsa ets but no bw; allowed 0-100 (percent)" % tc)
            bw = _as_int(param, bw, 0, 100, "bw")
        else:
            bw = 0 if bw is None else _as_int(param, bw, 0, 100, "bw")
            if bw != 0:
                raise ValidationError(param, "traffic class %d has tsa %s: bw must be 0 or omitted (bandwidth only applies to tsa ets)" % (tc, tsa))
        out[tc] = {"tsa": tsa, "bw": bw}
    total = sum(e["bw"] for e in out.values() if e["tsa"] == "ets")
    if total > 100:
        raise ValidationError(param, "bandwidths of the ets traffic classes sum to %d%%; they must sum to 100" % total)
    return out


def normalise_dscp2prio(value, param="dscp2prio"):
    out = {}
    for d, p in _mapping_items(param, value, "DSCP (0-63) to priority (0-7)"):
        out[dscp(param, d)] = priority(param, p)
    return out


def normalise_ecn(value, param="ecn"):
    out = {}
    for key, prios in _mapping_items(param, value, "np/rp to lists of priorities"):
        if key not in ("np", "rp"):
            raise ValidationError(param, "unknown key %r; allowed keys: np (notification point), rp (reaction point)" % (key,))
        if prios is None:
            continue
        out[key] = _priority_list(param, prios)
    return out


def normalise_cnp(value, param="cnp"):
    out = {}
    for key, v in _mapping_items(param, value, "dscp / priority"):
        if v is None:
            continue
        if key == "dscp":
            out["dscp"] = dscp(param, v)
        elif key == "priority":
            out["priority"] = priority(param, v)
        else:
            raise ValidationError(param, "unknown key %r; allowed keys: dscp (0-63), priority (0-7)" % (key,))
    return out


def _tos(params, prefix):
    """``roce_tos``, or its other name ``tos`` (cma_roce_tos -t), which must then be the same value."""
    tos = params.get("roce_tos")
    if tos is not None:
        tos = _as_int(prefix + "roce_tos", tos, 0, TOS_MAX, "ToS")
    if params.get("tos") is not None:
        alias = _as_int(prefix + "tos", params["tos"], 0, TOS_MAX, "ToS")
        if tos is not None and alias != tos:
            raise ValidationError(
                prefix + "tos", "tos %d and roce_tos %d differ; tos is another name for roce_tos (the ToS of "
                "cma_roce_tos -t): give one of them, or the same value in both" % (alias, tos))
        tos = alias
    return tos


# option -> (normaliser, keep an empty result): one table, so every option is read one way.
_NORMALISERS = (
    ("trust", lambda v, param: choice(param, v, TRUST_CHOICES), True),
    ("pfc", normalise_pfc, True),
    ("prio_tc", normalise_prio_tc, True),
    ("ets", normalise_ets, True),
    ("dscp2prio", normalise_dscp2prio, False),
    ("ecn", normalise_ecn, False),
    ("cnp", normalise_cnp, False),
    ("roce_mode", normalise_roce_mode, True),
    ("mtu", lambda v, param: _as_int(param, v, MTU_MIN, MTU_MAX, "MTU"), True),
)


def normalise_input(params, prefix=""):
    """:func:`normalise` of options as a caller wrote them: list options read as Ansible reads them
    (:func:`as_list`), so a value means the same in a task, the role's variables and a saved file."""
    params = dict(params)
    for key in LIST_OPTIONS:
        if params.get(key) is not None:
            params[key] = as_list(params[key])
    return normalise(params, prefix)


def normalise(params, prefix=""):
    """Validate one port's options; return the desired state (only managed keys).

    Keys other than the options (``netdev``, ``backend``...) are ignored here.
    Raises :class:`ValidationError` naming the parameter (``prefix`` + option).
    """
    desired = {}
    for key, func, keep_empty in _NORMALISERS:
        if params.get(key) is not None:
            value = func(params[key], prefix + key)
            if value or keep_empty:
                desired[key] = value
    tos = _tos(params, prefix)
    if tos is not None:
        desired["roce_tos"] = tos
    if params.get("pause") is not None:
        if not isinstance(params["pause"], bool):
            raise ValidationError(prefix + "pause", "%r is not a boolean; allowed true, false" % (params["pause"],))
        desired["pause"] = params["pause"]

    if "dscp2prio" in desired:
        if desired.get("trust") == "pcp":
            raise ValidationError(
                prefix + "dscp2prio", "needs trust: dscp (got trust: pcp). A DSCP map does nothing on a port that "
                "trusts PCP, and on the dcb backend DSCP APP entries are what makes a port trust DSCP")
        # A DSCP map implies DSCP trust (see the module documentation).
        desired["trust"] = "dscp"
    return desired


def risks(desired, prefix=""):
    """Warnings for one port's valid but risky desired settings: each names the settings and the risk.

    * PFC on all eight priorities: every class lossless, so one stuck receiver or pause storm stalls all of the
      port's traffic (TCP and management too).
    * With DSCP trust, a RoCE ToS whose DSCP maps (``dscp2prio``, else the default map DSCP >> 3) to a priority
      without PFC: RoCE traffic is lossy (drops, go-back-N retransmissions), the lossless profile does nothing for
      it. ``roce_tos: 0`` is DSCP 0, priority 0.
    * CNPs on a priority with PFC (``cnp.priority``, or ``cnp.dscp`` mapped there): congestion notifications wait
      behind the paused traffic they are sent to slow down.
    """
    out = []
    pfc = desired.get("pfc") or []
    if len(pfc) == 8:
        out.append("%spfc: PFC on all eight priorities makes every traffic class lossless: a pause storm or one stuck "
                   "receiver stalls all of the port's traffic, TCP and management included; enable PFC on the RoCE "
                   "priority only" % prefix)
    if not pfc or desired.get("trust") != "dscp":
        return out
    table = desired.get("dscp2prio") or {}

    def prio_of(value):
        return table.get(value, value >> 3), ("dscp2prio" if value in table else "the default DSCP map (DSCP >> 3)")

    tos = desired.get("roce_tos")
    if tos is not None and prio_of(tos >> 2)[0] not in pfc:
        prio, source = prio_of(tos >> 2)
        out.append("%sroce_tos: %d is DSCP %d, which %s maps to priority %d, but pfc is on priority %s: RoCE traffic "
                   "would land on a lossy priority (drops, retransmissions); map that DSCP to a PFC priority in "
                   "dscp2prio, or set roce_tos to a DSCP that maps to one"
                   % (prefix, tos, tos >> 2, source, prio, ",".join(str(p) for p in pfc)))
    cnp = desired.get("cnp") or {}
    cnp_prio = cnp.get("priority")
    if cnp_prio is None and cnp.get("dscp") is not None:
        cnp_prio = prio_of(cnp["dscp"])[0]
    if cnp_prio is not None and cnp_prio in pfc:
        out.append("%scnp: congestion notifications (CNPs) go on priority %d, which pfc makes lossless: they wait "
                   "behind the paused traffic they are sent to slow down; send them on a priority without PFC (such "
                   "as 6)" % (prefix, cnp_prio))
    return out


# ---------------------------------------------------------------------------
# the ports of a call
# ---------------------------------------------------------------------------
class PortRequest(object):
    """One port of a call, validated: how it is addressed, what it wants, how to run it.

    ``label`` names it in messages (``ports[1]`` in the list form, empty in
    the single-port form); ``prefix`` is put before parameter names.
    """

    def __init__(self, label, netdev, device, port, desired, backend, on_unsupported):
        self.label = label
        self.prefix = label + "." if label else ""
        self.netdev = netdev
        self.device = device
        self.port = port
        self.desired = desired
        self.backend = backend
        self.on_unsupported = on_unsupported


def merge_port(defaults, entry, drop_null=True):
    """One port's settings: ``defaults`` overridden by ``entry``; a null value in either means "not managed".

    ``drop_null=False`` keeps the null values (to layer further settings under it).

    An option given in the entry under either of its names replaces the
    default given under either name (``tos`` in a port overrides a default
    ``roce_tos``).
    """
    merged = dict((k, v) for k, v in (defaults or {}).items() if k not in ADDRESS_KEYS)
    for alias, option in ALIASES.items():
        if alias in entry or option in entry:
            merged.pop(alias, None)
            merged.pop(option, None)
    merged.update(entry)
    return dict((k, v) for k, v in merged.items() if v is not None or not drop_null)


def port_request(entry, label=""):
    """Validate one port's merged settings (addressing, options, backend choice) into a :class:`PortRequest`."""
    prefix = label + "." if label else ""
    netdev, device, number = entry.get("netdev"), entry.get("device"), entry.get("port")
    if netdev is not None:
        check_netdev_name(prefix + "netdev", netdev)
    if device is not None:
        check_ibdev_name(prefix + "device", device)
    if netdev is None and device is None:
        raise ValidationError(prefix + "netdev", "give netdev, or device (with port)")
    if number is not None:
        number = port_number(prefix + "port", number)
    desired = normalise_input(entry, prefix)
    backend = check_backend(prefix + "backend", entry.get("backend", RUN_DEFAULTS["backend"]))
    on_unsupported = choice(prefix + "on_unsupported", entry.get("on_unsupported", RUN_DEFAULTS["on_unsupported"]),
                            ON_UNSUPPORTED_CHOICES)
    return PortRequest(label, netdev, device, number, desired, backend, on_unsupported)


def check_entry_keys(param, entry):
    if not isinstance(entry, dict):
        raise ValidationError(param, "each port must be a mapping {netdev: NAME, <option>: VALUE} or "
                                     "{device: NAME, port: N, <option>: VALUE}, got %r" % (entry,))
    check_unique_keys(param, entry)
    unknown = sorted(str(k) for k in entry if k not in PORT_ENTRY_KEYS)
    if unknown:
        raise ValidationError(param, "unknown option(s) %s; allowed: %s" % (", ".join(unknown), ", ".join(PORT_ENTRY_KEYS)))


def port_requests(params):
    """The ports of a call, each validated: ``[PortRequest]``.

    Single-port form: ``netdev`` / ``device`` + ``port`` at the top level.
    List form: ``ports``, with the top-level options as every port's defaults.
    Validates the defaults first (errors name the top-level option), then each
    port (errors name ``ports[N].option``).
    """
    entries = params.get("ports")
    if entries is None:
        return [port_request(params)]
    if any(params.get(k) is not None for k in ADDRESS_KEYS):
        raise ValidationError("ports", "give either ports or netdev/device/port, not both")
    if not isinstance(entries, (list, tuple)):
        raise ValidationError("ports", "expected a list of port mappings, got %r" % (entries,))
    defaults = dict((k, params.get(k)) for k in ALL_KEYS + ALIAS_KEYS + RUN_KEYS if params.get(k) is not None)
    normalise_input(defaults)
    if "backend" in defaults:
        check_backend("backend", defaults["backend"])
    if "on_unsupported" in defaults:
        choice("on_unsupported", defaults["on_unsupported"], ON_UNSUPPORTED_CHOICES)
    requests = []
    for i, entry in enumerate(entries):
        label = "ports[%d]" % i
        check_entry_keys(label, entry)
        requests.append(port_request(merge_port(defaults, entry), label))
    return requests


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
