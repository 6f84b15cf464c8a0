# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""site.yml's staged rollout, on the controller: its settings, its batches, each batch's health gate.

``settings`` checks ``rdma_fabric_serial``, ``rdma_fabric_max_fail_percentage``,
``rdma_fabric_batch_reboot``, ``rdma_fabric_batch_reboot_timeout``, ``rdma_fabric_k8s_drain_timeout`` and
``rdma_fabric_allow_single_batch`` before any host changes (Ansible itself takes ``serial: "abc"`` as a
traceback, ``0``, ``-3`` or ``"150%"`` as "all hosts at once" and ``1.5`` as 1; a batch reboot flag of ``1``
or ``"perhaps"``, a timeout of ``"10m"`` or ``5``, a drain timeout of ``"abc"``: each is rejected here,
naming the variable and the accepted forms) and cuts the play's hosts into batches the way Ansible's
``serial`` does. A serial that puts the whole fleet (two hosts or more) in one batch - the thing a staged
rollout exists to prevent - needs ``rdma_fabric_allow_single_batch: true``; a max_fail_percentage of 100,
which stops the rollout only where a whole batch failed, is a warning (``warnings`` of the result, shown by
the filter). It also checks ``rdma_fabric_job``: which of site.yml's stages this run does, all of them or
one side of a sliced job (``JOB_KINDS``). ``batch`` says which batch a
set of hosts is and which already-done host the batch is tested against; ``gate`` turns a batch's
validation results into a verdict per host (which batch, which host, why).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import re

SERIAL_VAR = "rdma_fabric_serial"
MAX_FAIL_VAR = "rdma_fabric_max_fail_percentage"
DRAIN_PLAN_VAR = "rdma_fabric_drain_plan"
REBOOT_VAR = "rdma_fabric_batch_reboot"
REBOOT_TIMEOUT_VAR = "rdma_fabric_batch_reboot_timeout"
REBOOT_TIMEOUT_DEFAULT = 900
REBOOT_TIMEOUT_MIN = 60
JOB_VAR = "rdma_fabric_job"
# Which of site.yml's stages a run does. The host stages (facts, mofed, soft_roce, lossless_ethernet,
# gpudirect) touch each host on its own; the fleet stages (Kubernetes, validation, the report, the final
# verdict) need every host at once. A sliced job (AWX job slicing, or runs with --limit) runs the host
# stages per slice ("slice") and the fleet stages once afterwards ("fleet"), the facts carried from the
# slices to it by the fact cache.
JOB_KINDS = {
    "whole": {"host_stages": True, "fleet_stages": True},
    "slice": {"host_stages": True, "fleet_stages": False},
    "fleet": {"host_stages": False, "fleet_stages": True},
}
JOB_FORMS = ('"whole" (every stage; unset means this), "slice" (the facts and the host stages only: one slice '
             'of a sliced job, --limit to its hosts) or "fleet" (Kubernetes, validation, the report and the '
             'verdict only, over all hosts, with the facts the slices left in the fact cache)')
K8S_DRAIN_TIMEOUT_VAR = "rdma_fabric_k8s_drain_timeout"
K8S_DRAIN_TIMEOUT_DEFAULT = 600
K8S_DRAIN_TIMEOUT_RANGE = (1, 86400)
SINGLE_BATCH_VAR = "rdma_fabric_allow_single_batch"

SERIAL_FORMS = (
    'a number of hosts (1 or more, e.g. 1 or "5"), a percentage of the hosts ("25%%", 1%% to 100%%), '
    'or a list of these ([1, 5, "25%%"]: the first batch 1 host, the next 5, then 25%% per batch); '
    'leave %s unset to change all hosts at once (the lab default). From the command line pass a list '
    'as JSON: -e \'{"%s": [1, 5, "25%%"]}\'' % (SERIAL_VAR, SERIAL_VAR))
MAX_FAIL_FORMS = ('a whole number from 0 to 100, or the same with "%" ("10%"): the share of a batch\'s '
                  'hosts that may fail before the rollout stops (0: one failed host stops it)')
REBOOT_FORMS = ('true or false (from the command line also the text "true", "false", "yes" or "no", any case); '
                'unset: false')
REBOOT_TIMEOUT_FORMS = ('a whole number of seconds from %d to 999999 (e.g. 900 or "900"); unset: %d'
                        % (REBOOT_TIMEOUT_MIN, REBOOT_TIMEOUT_DEFAULT))
K8S_DRAIN_TIMEOUT_FORMS = ('a whole number of seconds from %d to %d (e.g. 600 or "600"); unset: %d'
                           % (K8S_DRAIN_TIMEOUT_RANGE + (K8S_DRAIN_TIMEOUT_DEFAULT,)))
_REBOOT_WORDS = {"true": True, "yes": True, "false": False, "no": False}

_PCT = re.compile(r"([0-9]{1,3})%")
_INT = re.compile(r"[0-9]{1,9}")
_SECONDS = re.compile(r"[0-9]{1,6}")


class RolloutError(ValueError):
    """A rollout setting that is not one of the accepted forms."""


def _serial_item(value, where):
    if isinstance(value, bool) or value is None:
        raise RolloutError("%s: %s %r is not accepted; accepted: %s" % (SERIAL_VAR, where, value, SERIAL_FORMS))
    if isinstance(value, int):
        if value < 1:
            raise RolloutError("%s: %s %r is not accepted (Ansible would take it as all hosts at once); "
                               "accepted: %s" % (SERIAL_VAR, where, value, SERIAL_FORMS))
        return value
    if isinstance(value, str):
        text = value
        m = _PCT.fullmatch(text)
        if m:
            pct = int(m.group(1))
            if not 1 <= pct <= 100:
                raise RolloutError("%s: %s %r is not accepted (a percentage from 1%% to 100%%); accepted: %s"
                                   % (SERIAL_VAR, where, value, SERIAL_FORMS))
            return "%d%%" % pct
        if _INT.fullmatch(text):
            return _serial_item(int(text), where)
    raise RolloutError("%s: %s %r is not accepted; accepted: %s" % (SERIAL_VAR, where, value, SERIAL_FORMS))


def check_serial(value):
    """``rdma_fabric_serial`` as a list of batch sizes (ints and "N%" strings); ``[]`` when unset (None)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        if not value:
            raise RolloutError("%s: an empty list is not accepted (Ansible would take it as all hosts at once); "
                               "accepted: %s" % (SERIAL_VAR, SERIAL_FORMS))
        return [_serial_item(v, "entry %d" % (i + 1)) for i, v in enumerate(value)]
    if isinstance(value, str) and value.lstrip().startswith("["):
        raise RolloutError("%s: got the text %r, not a list (a -e key=value is always text); accepted: %s"
                           % (SERIAL_VAR, value, SERIAL_FORMS))
    return [_serial_item(value, "value")]


def check_max_fail(value):
    """``rdma_fabric_max_fail_percentage`` as an int from 0 to 100 (None: 0)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise RolloutError("%s: %r is not accepted; accepted: %s" % (MAX_FAIL_VAR, value, MAX_FAIL_FORMS))
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and (_INT.fullmatch(value) or _PCT.fullmatch(value)):
        number = int(value.rstrip("%"))
    else:
        raise RolloutError("%s: %r is not accepted; accepted: %s" % (MAX_FAIL_VAR, value, MAX_FAIL_FORMS))
    if not 0 <= number <= 100:
        raise RolloutError("%s: %r is out of range; accepted: %s" % (MAX_FAIL_VAR, value, MAX_FAIL_FORMS))
    return number


def check_batch_reboot(value, name=REBOOT_VAR):
    """``rdma_fabric_batch_reboot`` (or another flag ``name``) as a bool (None: False); 1, "perhaps", "on" are rejected."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in _REBOOT_WORDS:
        return _REBOOT_WORDS[value.lower()]
    raise RolloutError("%s: %r is not accepted; accepted: %s" % (name, value, REBOOT_FORMS))


def check_batch_reboot_timeout(value):
    """``rdma_fabric_batch_reboot_timeout`` as an int of seconds (None: 900); "10m", 5, 0, -1, 1.5 rejected."""
    if value is None:
        return REBOOT_TIMEOUT_DEFAULT
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 999999:
        seconds = value
    elif isinstance(value, str) and _SECONDS.fullmatch(value):
        seconds = int(value)
    else:
        raise RolloutError("%s: %r is not accepted; accepted: %s" % (REBOOT_TIMEOUT_VAR, value, REBOOT_TIMEOUT_FORMS))
    if seconds < REBOOT_TIMEOUT_MIN:
        raise RolloutError("%s: %r is too short (a reboot and the host's return take more than a minute); "
                           "accepted: %s" % (REBOOT_TIMEOUT_VAR, value, REBOOT_TIMEOUT_FORMS))
    return seconds


def check_job(value):
    """``rdma_fabric_job`` as one of ``JOB_KINDS`` (None: "whole")."""
    if value is None:
        return "whole"
    if isinstance(value, str) and value in JOB_KINDS:
        return value
    raise RolloutError("%s: %r is not accepted; accepted: %s" % (JOB_VAR, value, JOB_FORMS))


def check_k8s_drain_timeout(value):
    """``rdma_fabric_k8s_drain_timeout`` as an int of seconds (None: 600); "abc", 0, 10**9 rejected."""
    if value is None:
        return K8S_DRAIN_TIMEOUT_DEFAULT
    seconds = None
    if isinstance(value, int) and not isinstance(value, bool):
        seconds = value
    elif isinstance(value, str) and _SECONDS.fullmatch(value):
        seconds = int(value)
    low, high = K8S_DRAIN_TIMEOUT_RANGE
    if seconds is None or not low <= seconds <= high:
        raise RolloutError("%s: %r is not accepted; accepted: %s" % (K8S_DRAIN_TIMEOUT_VAR, value, K8S_DRAIN_TIMEOUT_FORMS))
    return seconds


def batch_size(item, total):
    """Hosts in a batch of ``total`` hosts for one serial entry, as Ansible's ``pct_to_int`` counts them."""
    if isinstance(item, str) and item.endswith("%"):
        return int(int(item[:-1]) / 100.0 * total) or 1
    return int(item)


def make_batches(hosts, serial):
    """The play's hosts cut into batches as Ansible's ``serial`` does (the last entry repeats)."""
    hosts = list(hosts)
    if not serial:
        return [hosts] if hosts else []
    batches, i, left = [], 0, list(hosts)
    while left:
        size = batch_size(serial[min(i, len(serial) - 1)], len(hosts))
        batches.append(left[:size])
        left = left[size:]
        i += 1
    return batches


def settings(serial, max_fail_percentage, hosts, batch_reboot=None, batch_reboot_timeout=None,
             k8s_drain_timeout=None, allow_single_batch=None, flags=None, job=None):
    """The checked run settings (None: unset, the defaults).

    ``job``, ``host_stages`` and ``fleet_stages``: which stages this run does (``JOB_KINDS``);
    ``staged``, ``serial``, ``max_fail_percentage``, ``batches``, ``batch_reboot``,
    ``batch_reboot_timeout`` and ``k8s_drain_timeout``: how the host stages are cut into batches (a run
    without host stages, the fleet job of a sliced job, has no batches); ``all_at_once``: the host stages
    run on all hosts at once (they run, and not in batches); ``warnings``: sentences naming a valid but
    risky setting and the risk.

    ``flags``: ``{variable: value}`` of the playbook's other true/false settings (the drains, failing on a bad
    validation), each checked as the batch reboot flag is (``"ture"`` would read as false: no drain).
    """
    for name, value in sorted((flags or {}).items()):
        check_batch_reboot(value, name)
    checked = check_serial(serial)
    max_fail = check_max_fail(max_fail_percentage)
    reboot = check_batch_reboot(batch_reboot)
    reboot_timeout = check_batch_reboot_timeout(batch_reboot_timeout)
    drain_timeout = check_k8s_drain_timeout(k8s_drain_timeout)
    single_ok = check_batch_reboot(allow_single_batch, SINGLE_BATCH_VAR)
    kind = check_job(job)
    stages = JOB_KINDS[kind]
    staged = bool(checked) and stages["host_stages"]
    hosts = list(hosts or [])
    batches = make_batches(hosts, checked) if staged else []
    warnings = []
    if staged and len(batches) == 1 and len(hosts) > 1:
        if not single_ok:
            raise RolloutError(
                "%s: %r puts all %d hosts in one batch, so every host changes at once, which a staged rollout "
                "exists to prevent; accepted: a smaller batch (e.g. [1, \"25%%\"]), or %s: true to accept it"
                % (SERIAL_VAR, serial, len(hosts), SINGLE_BATCH_VAR))
        warnings.append("%s: %r puts all %d hosts in one batch (accepted with %s: true): every host changes at once"
                        % (SERIAL_VAR, serial, len(hosts), SINGLE_BATCH_VAR))
    if staged and max_fail >= 100:
        warnings.append("%s: %d stops the rollout only where every host of a batch failed (as Ansible does): the "
                        "next batch runs after one in which all hosts but one failed their health gate"
                        % (MAX_FAIL_VAR, max_fail))
    return {
        "job": kind,
        "host_stages": stages["host_stages"],
        "fleet_stages": stages["fleet_stages"],
        "staged": staged,
        "all_at_once": stages["host_stages"] and not staged,
        "serial": checked,
        "max_fail_percentage": max_fail,
        "batches": batches,
        "batch_reboot": reboot,
        "batch_reboot_timeout": reboot_timeout,
        "k8s_drain_timeout": drain_timeout,
        "warnings": warnings,
    }


def batch(rollout, batch_hosts, done_hosts=()):
    """Which batch ``batch_hosts`` are (``number``, ``of``), its ``hosts`` and its ``reference`` host.

    ``reference``: the last host that passed an earlier batch's gate (``done_hosts``, in order), None
    for the first batch; the gate tests the batch's hosts against it.
    """
    batch_hosts = list(batch_hosts or [])
    batches = (rollout or {}).get("batches") or []
    number = None
    for i, hosts in enumerate(batches):
        if batch_hosts and batch_hosts[0] in hosts:
            number = i + 1
            break
    done = [h for h in (done_hosts or []) if h not in batch_hosts]
    return {"number": number, "of": len(batches), "hosts": batch_hosts,
            "reference": done[-1] if done else None}


def drain_decisions(path, hosts):
    """Which hosts a drain covers, from the plan of a check-mode run (``fabric-plan.json``) at ``path``.

    ``{host: {"drain": bool, "why": str}}`` for each of ``hosts``; None when ``path`` is unset (every
    host of a batch is drained). A host is left undrained only when the plan shows it, reached and
    without failure, with nothing to change; a host the plan does not know, that failed or was
    unreachable in it, is drained (unknown counts as a change). A plan that is missing, unreadable,
    not JSON or not from a check-mode run fails, naming the variable.
    """
    if path is None or path == "":
        return None
    if not isinstance(path, str) or "\0" in path:
        raise RolloutError("%s: %r is not a path; allowed: the fabric-plan.json that playbooks/plan.yml wrote "
                           "(check mode, callback rdma.fabric.fabric_plan), or unset to drain every host of a batch"
                           % (DRAIN_PLAN_VAR, path))
    try:
        with open(path) as handle:
            plan = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        raise RolloutError("%s: cannot read %s as a fabric plan (%s); allowed: the fabric-plan.json that "
                           "playbooks/plan.yml wrote, or unset to drain every host of a batch" % (DRAIN_PLAN_VAR, path, exc))
    if not isinstance(plan, dict) or plan.get("check_mode") is not True or not isinstance(plan.get("hosts"), dict):
        raise RolloutError("%s: %s is not the plan of a check-mode run (fabric-plan.json with check_mode true and "
                           "hosts); allowed: what playbooks/plan.yml wrote, or unset to drain every host of a batch"
                           % (DRAIN_PLAN_VAR, path))
    for host in sorted(plan["hosts"], key=str):
        entry = plan["hosts"][host]
        changes = entry.get("changes") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and "changes" in entry and (
                isinstance(changes, bool) or not isinstance(changes, int) or changes < 0):
            raise RolloutError("%s: %s: hosts.%s.changes is %r, not a count of changes (0 or more); allowed: the "
                               "fabric-plan.json that playbooks/plan.yml wrote, or unset to drain every host of a batch"
                               % (DRAIN_PLAN_VAR, path, host, changes))
    return dict((host, host_drain(plan, host)) for host in hosts or [])


def host_drain(plan, host):
    """``{"drain": bool, "why": str}`` for one host of a plan (the rule of :func:`drain_decisions`)."""
    failed = plan.get("failed") if isinstance(plan.get("failed"), dict) else {}
    unreachable = plan.get("unreachable") if isinstance(plan.get("unreachable"), list) else []
    entry = (plan.get("hosts") or {}).get(host)
    if host in unreachable:
        return {"drain": True, "why": "unreachable in the plan"}
    if host in failed:
        return {"drain": True, "why": "failed in the plan"}
    if not isinstance(entry, dict) or not isinstance(entry.get("changes"), int):
        return {"drain": True, "why": "not in the plan"}
    if entry["changes"] != 0:  # anything but "none" (a count below 0 is refused by drain_decisions) drains
        return {"drain": True, "why": "%d changes planned" % entry["changes"]}
    return {"drain": False, "why": "the plan shows nothing to change"}


def gate(batch_info, results, live_hosts=None):
    """A batch's verdict from its validation results: ``ok``, ``failed`` ({host: [reasons]}), ``message``.

    A result that did not pass counts against each host of the batch it names (a pair with the
    reference host counts against the batch's host only); a batch host that dropped out
    (not in ``live_hosts``) fails with that reason, and a pair it is in counts against it alone
    (its partner was not tested, not found wrong: the next batch tests it as its reference host).
    ``passed``: the live batch hosts that did not fail.
    """
    hosts = list(batch_info.get("hosts") or [])
    dead = [h for h in hosts if live_hosts is not None and h not in live_hosts]
    failed = dict((h, ["failed or unreachable during the batch"]) for h in dead)
    for r in results or []:
        if not isinstance(r, dict) or r.get("passed") is True:
            continue
        named = [h for h in (r.get("hosts") or [r.get("host")]) if h in hosts]
        if any(h in dead for h in named):
            continue
        for h in named or hosts:
            failed.setdefault(h, []).append("%s: %s" % (r.get("test") or "check", r.get("message") or "failed"))
    label = "batch %s of %s" % (batch_info.get("number"), batch_info.get("of"))
    if failed:
        message = "Rollout stopped at %s (%s): the health gate failed for %s" % (
            label, ", ".join(hosts), "; ".join("%s: %s" % (h, " | ".join(failed[h][:5])) for h in sorted(failed)))
    else:
        message = "%s (%s) passed its health gate%s" % (
            label, ", ".join(hosts),
            " (tested against %s)" % batch_info["reference"] if batch_info.get("reference") else "")
    return {"ok": not failed, "failed": failed, "passed": [h for h in hosts if h not in failed],
            "message": message, "batch": batch_info.get("number"),
            "of": batch_info.get("of"), "hosts": hosts, "reference": batch_info.get("reference")}
