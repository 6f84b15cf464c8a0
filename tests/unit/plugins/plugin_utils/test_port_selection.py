# -*- coding: utf-8 -*-
"""Every caller of the port selector gives the answers recorded before the selector was made one.

``rdma_schema`` had two selectors, ``ports(kinds=)`` and ``select_ports(link_layers=)``; now it has one,
:func:`~rdma_schema.ports`, and the filters' ``link_layers`` arguments are turned into port kinds
(``link_layer_kinds``). This test runs each caller, with the argument combinations its users can give, on every
fixture host, and compares what the caller returns (its selection, or the error it raises) with
``tests/unit/fixtures/port_selection/callers.json``, written by this file from the code BEFORE the change
(``python3 test_port_selection.py --write`` from an installed collection; only rewrite it for a deliberate change
of what a caller selects, and say so in the commit).

Hosts: the k8s facts fixtures (tests/unit/fixtures/k8s/facts), the facts the collection's own gatherer reads from
each sysfs fixture tree (tests/unit/fixtures/sysfs), and two derived doubles: ``siw`` (lab1's rxe0 with the node
type and driver a Soft-iWARP device reports, ``4: RNIC`` and ``siw``: its link layer reads Ethernet) and
``mixed`` (roce-b's RoCE PF and VF, ib-a's InfiniBand port renamed mlx5_4, and that siw0 on one host).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy
import itertools
import json
import os
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.filter.rdma_ports import rdma_ports
from ansible_collections.rdma.fabric.plugins.module_utils.common import qos_ports
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import PortRequest, ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError
from ansible_collections.rdma.fabric.plugins.module_utils.facts.rdma_facts import gather_rdma_facts
from ansible_collections.rdma.fabric.plugins.module_utils.runtime import metrics
from ansible_collections.rdma.fabric.plugins.plugin_utils import k8s_rdma, pod_check
from ansible_collections.rdma.fabric.plugins.plugin_utils.nccl import nccl_env
from ansible_collections.rdma.fabric.plugins.plugin_utils.ucx import ucx_env

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fixtures")
K8S_FACTS = os.path.join(FIXTURES, "k8s", "facts")
SYSFS = os.path.join(FIXTURES, "sysfs")
GOLDEN = os.path.join(FIXTURES, "port_selection", "callers.json")

LINK_LAYERS = (None, ["Ethernet"], ["InfiniBand"], ["Ethernet", "InfiniBand"])
DEVICES = (None, ["mlx5_*"], ["siw*", "rxe*"])
BOOLS = (False, True)
KINDS = (None, ["roce"], ["infiniband"], ["iwarp"], ["roce", "iwarp"])
RESOURCE_SETS = (
    [{"resourceName": "a", "split": {"part": 1, "parts": 2}}, {"resourceName": "b", "split": {"part": 2, "parts": 2}}],
    [{"resourceName": "eth", "link_layers": ["Ethernet"]}, {"resourceName": "ib", "link_layers": ["InfiniBand"]}],
    [{"resourceName": "mlx", "rdma_devices": ["mlx5_*"]}],
)


def _k8s(name):
    with open(os.path.join(K8S_FACTS, name + ".json")) as f:
        return json.load(f)


def _siw():
    """Test double: lab1's facts with rxe0 turned into a Soft-iWARP device (node type RNIC, driver siw)."""
    data = copy.deepcopy(_k8s("lab1"))
    data["devices"][0].update(name="siw0", node_type="RNIC", driver="siw")
    return data


def _mixed():
    """Test double: roce-b (RoCE PF and an RDMA VF), ib-a's port as mlx5_4 and the siw0 above on one host."""
    data = copy.deepcopy(_k8s("roce-b"))
    ib = copy.deepcopy(_k8s("ib-a"))
    for dev in ib["devices"]:
        dev["name"] = "mlx5_4"
    siw = _siw()
    data["devices"] = data["devices"] + ib["devices"] + siw["devices"]
    data["netdevs"] = dict(data.get("netdevs") or {})
    for other in (ib, siw):
        for netdev, entry in (other.get("netdevs") or {}).items():
            if isinstance(entry, dict) and entry.get("device") == "mlx5_0" and other is ib:
                entry = dict(entry, device="mlx5_4")
            data["netdevs"].setdefault(netdev, entry)
    return data


def _sysfs_names():
    return sorted(n[:-len(".json")] for n in os.listdir(SYSFS) if n.endswith(".json") and not n.startswith("_"))


def hosts():
    """``{label: (facts, sysfs root or None)}`` for every fixture host."""
    out = {}
    for name in sorted(n[:-len(".json")] for n in os.listdir(K8S_FACTS) if n.endswith(".json")):
        out["k8s/" + name] = (_k8s(name), None)
    out["derived/siw"] = (_siw(), None)
    out["derived/mixed"] = (_mixed(), None)
    for name in _sysfs_names():
        root = os.path.join(SYSFS, name, "sys")
        out["sysfs/" + name] = (gather_rdma_facts(root, gather_subset=["counters"]), root)
    return out


def _pairs(pairs):
    return ["%s:%s" % (d.get("name"), p.get("number")) for d, p in pairs]


def _call(func, *args, **kwargs):
    """What a caller returns, or the error it raises (its type and message)."""
    try:
        return func(*args, **kwargs)
    except (RdmaFactsError, ValidationError, metrics.ConfigError) as e:
        return {"error": "%s: %s" % (type(e).__name__, e)}


def _key(**kwargs):
    return json.dumps(kwargs, sort_keys=True)


def _metrics_ports(root, include_vfs):
    snap = metrics.Snapshot()
    metrics._read_ports(snap, metrics.check_config({"sysfs": root, "include_vfs": include_vfs}))
    return [(p["device"], p["port"], p["kind"], p["netdev"]) for p in snap.ports]


def _resolve_all(facts):
    names = set(facts.get("netdevs") or {})
    for dev in facts.get("devices") or []:
        for port in dev.get("ports") or []:
            names.update(n for n in (port.get("netdev"), dev.get("parent_netdev")) if n)
            names.update(g.get("netdev") for g in port.get("gids") or [] if isinstance(g, dict) and g.get("netdev"))
    out = {}
    for netdev in sorted(names):
        def one(name=netdev):
            dev, port, nd = qos_ports.resolve(facts, PortRequest("", name, None, None, {}, "auto", "fail"))
            return [dev.get("name"), port.get("number"), nd]
        out[netdev] = _call(one)
    return out


def answers(facts, root):
    """Each caller's answers for one host: ``{caller: [(arguments, answer), ...]}``, in a fixed order."""
    out = {}

    def put(caller, answer, **args):
        out.setdefault(caller, []).append((_key(**args), answer))

    for kinds, active, soft, vfs in itertools.product(KINDS, BOOLS, BOOLS, BOOLS):
        put("rdma_ports", ["%s:%s %s" % (r["device"], r["port"], r["kind"]) for r in rdma_ports(
            facts, kinds=kinds, active_only=active, include_soft=soft, include_vfs=vfs)],
            kinds=kinds, active_only=active, include_soft=soft, include_vfs=vfs)
    for ll, devs, soft in itertools.product(LINK_LAYERS, DEVICES, BOOLS):
        args = dict(link_layers=ll, devices=devs, include_soft=soft)
        for vfs in BOOLS:
            put("nccl_env", _call(nccl_env, facts, include_vfs=vfs, **args), include_vfs=vfs, **args)
        put("shared_dev_selectors", _call(k8s_rdma.shared_dev_selectors, facts, **args), **args)
        put("node_labels", _call(k8s_rdma.node_labels, facts, **args), **args)
    for ll, devs in itertools.product(LINK_LAYERS, DEVICES):
        put("sriov_vf_selectors", _call(k8s_rdma.sriov_vf_selectors, facts, link_layers=ll, devices=devs),
            link_layers=ll, devices=devs)
    for devs, soft, vfs in itertools.product(DEVICES, BOOLS, BOOLS):
        put("ucx_env", _call(ucx_env, facts, devices=devs, include_soft=soft, include_vfs=vfs),
            devices=devs, include_soft=soft, include_vfs=vfs)
    for i, resources in enumerate(RESOURCE_SETS):
        for soft in BOOLS:
            chosen = k8s_rdma.shared_dev_assignment(resources, facts, include_soft=soft)
            put("shared_dev_assignment", dict((name, _pairs(pairs)) for name, pairs in chosen.items()),
                resources=i, include_soft=soft)
            put("shared_dev_plugin_config", _call(k8s_rdma.shared_dev_plugin_config, resources, {"node": facts},
                                                  include_soft=soft), resources=i, include_soft=soft)
            put("shared_dev_gaps", _call(k8s_rdma.shared_dev_gaps, resources, {"node": facts}, include_soft=soft),
                resources=i, include_soft=soft)
    for plugin in ("shared", "sriov"):
        put("pod_check.matches", list(pod_check.matches(plugin, {"selectors": {}}, facts)), plugin=plugin)
    put("pod_check.shared_capacity", pod_check.shared_capacity("pool", [facts], ["a", "b", "c"]))
    put("qos_ports.roce_netdevs", qos_ports.roce_netdevs(facts))
    put("qos_ports.resolve", _resolve_all(facts))
    if root is not None:
        for vfs in BOOLS:
            put("metrics._read_ports", _metrics_ports(root, vfs), include_vfs=vfs)
    # JSON round trip: tuples become lists, as in the stored answers.
    return json.loads(json.dumps(out, sort_keys=True))


def store(all_answers):
    """The stored form: each distinct answer once (``values``), the arguments of each caller once (``calls``),
    and per host and caller the index of each answer."""
    values, index, calls, stored = [], {}, {}, {}
    for label, by_caller in sorted(all_answers.items()):
        for caller, pairs in sorted(by_caller.items()):
            keys = [k for k, dummy in pairs]
            if len(keys) > len(calls.get(caller, [])):
                calls[caller] = keys
            row = stored.setdefault(label, {}).setdefault(caller, [])
            for dummy, value in pairs:
                text = json.dumps(value, sort_keys=True)
                if text not in index:
                    index[text] = len(values)
                    values.append(value)
                row.append(index[text])
    return {"calls": calls, "hosts": stored, "values": values}


def load(doc, label):
    """One host's answers from the stored form, as :func:`answers` gives them."""
    return dict((caller, [[doc["calls"][caller][i], doc["values"][v]] for i, v in enumerate(row)])
                for caller, row in doc["hosts"][label].items())


def current():
    return dict((label, answers(facts, root)) for label, (facts, root) in hosts().items())


def _golden():
    with open(GOLDEN) as f:
        return json.load(f)


@pytest.mark.parametrize("label", sorted(hosts()))
def test_every_caller_selects_as_before(label):
    facts, root = hosts()[label]
    expected = load(_golden(), label)
    got = answers(facts, root)
    assert sorted(got) == sorted(expected)
    differ = ["%s %s: %r, before %r" % (caller, key, value, before)
              for caller in sorted(got) for (key, value), (dummy, before) in zip(got[caller], expected[caller])
              if value != before]
    assert [len(got[c]) for c in sorted(got)] == [len(expected[c]) for c in sorted(got)]
    assert differ == [], "%s: %d answers differ: %s" % (label, len(differ), "; ".join(differ[:3]))


def test_the_stored_answers_cover_every_fixture_host():
    doc = _golden()
    assert sorted(doc["hosts"]) == sorted(hosts())
    # The hosts give the selection something to tell apart: each kind, down ports, soft devices, a VF.
    kinds = set()
    everything = _key(kinds=None, active_only=False, include_soft=True, include_vfs=True)
    for label in doc["hosts"]:
        for key, value in load(doc, label)["rdma_ports"]:
            if key == everything:
                kinds.update(item.split()[1] for item in value)
    assert {"roce", "infiniband", "iwarp"} <= kinds


def write(doc, path):
    """The stored form with one line per answer, per caller's arguments and per host's caller (short diffs)."""
    def lines(items):
        return ",\n".join("%s: %s" % (json.dumps(k), json.dumps(v, sort_keys=True)) for k, v in items)
    with open(path, "w") as f:
        f.write('{"calls": {\n%s\n},\n' % lines(sorted(doc["calls"].items())))
        f.write('"hosts": {\n%s\n},\n' % ",\n".join(
            "%s: {\n%s\n}" % (json.dumps(label), lines(sorted(rows.items())))
            for label, rows in sorted(doc["hosts"].items())))
        f.write('"values": [\n%s\n]}\n' % ",\n".join(json.dumps(v, sort_keys=True) for v in doc["values"]))


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    write(store(current()), GOLDEN)
