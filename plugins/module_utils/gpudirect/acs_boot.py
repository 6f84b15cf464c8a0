# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ACS at boot: the record the role writes and ``rdma-fabric gpudirect-acs`` (host runtime, no Ansible).

The kernel turns ACS redirect back on at every boot, and the bus
numbers the bridges had when the role ran may belong to other bridges after a
firmware update, a new card or a changed BIOS setting. So the boot record
(:func:`acs_boot_config`, written by the role) names no bridge: it names each
GPU-NIC pair by the endpoints' identities (vendor, device and subsystem IDs,
PCIe Device Serial Number, physical slot: ``PciTopology.identity``) and the
shape of the path between them (vendor:device of each bridge). At boot
:func:`cli_main` finds each endpoint again (exactly one device, or nothing is
done for that pair), recomputes the path between them, checks that they still
share a PCIe switch and that the path has the recorded shape, and only then
clears ACS redirect on that path's bridges.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import sys

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import IDENTITY_KEYS, SHARED_SWITCH, PciTopology
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree, describe_error
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import ACS_CTRL_REG, ACS_P2P_REDIRECT, acs_state, set_acs_control


# What the role writes for the boot unit (acs_boot_config) and cli_main reads.
ACS_BOOT_CONFIG = paths.GPUDIRECT_ACS_BOOT_CONFIG
ACS_BOOT_SCHEMA = 1


def acs_boot_config(topo, pairs, bridges):
    """(config, problems): the record the ACS boot unit reads, and the pairs it cannot carry.

    A pair is recorded when a bridge on its path has an ACS capability; each
    endpoint by its identity, which must name exactly one device now (else
    the pair goes to ``problems``: after a renumbering it could not be found
    again for sure), and the path by the vendor:device of its bridges.
    """
    records, problems = [], []
    for pair in pairs:
        if not any((bridges.get(b) or {}).get("state") in ("enabled", "disabled") for b in pair["bridges"]):
            continue
        ends = {"gpu": pair["gpu"], "nic": pair["nic_address"]}
        record, why = {}, []
        for end, address in sorted(ends.items()):
            identity = topo.identity(address)
            found, reason = topo.find_by_identity(identity)
            if found != address:
                why.append("%s %s: %s" % ("GPU" if end == "gpu" else "NIC " + pair["nic"], address,
                                          reason or "its identity names %s" % found))
            record[end] = identity
        if why:
            problems.append("ACS between GPU %s and %s cannot be kept across reboots: %s (no PCIe serial number or "
                            "physical slot tells the devices apart)" % (pair["gpu"], pair["nic"], "; ".join(why)))
            continue
        record["nic_name"] = pair["nic"]
        record["bridges"] = topo.bridge_ids(pair["bridges"])
        records.append(record)
    return {"schema": ACS_BOOT_SCHEMA, "pairs": records}, problems


# --------------------------------------------------------------------------
def check_boot_config(config):
    """The boot record's problems in words ([] when usable)."""
    if not isinstance(config, dict) or config.get("schema") != ACS_BOOT_SCHEMA or not isinstance(config.get("pairs"), list):
        return ["not an ACS boot record of schema %d (a JSON object with schema and pairs)" % ACS_BOOT_SCHEMA]
    problems = []
    for i, pair in enumerate(config["pairs"]):
        if not isinstance(pair, dict):
            problems.append("pairs[%d] is not an object" % i)
            continue
        for end in ("gpu", "nic"):
            ident = pair.get(end)
            if not isinstance(ident, dict) or set(ident) != set(IDENTITY_KEYS) or not ident.get("vendor_id"):
                problems.append("pairs[%d].%s is not a device identity (%s)" % (i, end, ", ".join(IDENTITY_KEYS)))
        if not isinstance(pair.get("bridges"), list) or not all(isinstance(b, str) for b in pair["bridges"]):
            problems.append("pairs[%d].bridges is not a list of vendor:device" % i)
    return problems


def apply_boot_config(tree, config, check=False):
    """Clear ACS redirect on the paths of the recorded pairs, found again by identity. ``(ok, lines)``."""
    topo = PciTopology(tree)
    lines, ok = [], True
    for pair in config["pairs"]:
        label = "GPU %s / NIC %s" % (pair["gpu"].get("serial") or pair["gpu"]["device_id"], pair.get("nic_name") or "?")
        found = {}
        for end in ("gpu", "nic"):
            found[end], why = topo.find_by_identity(pair[end])
            if found[end] is None:
                lines.append("%s: skipped, the %s is not found for sure: %s" % (label, end.upper(), why))
        if None in found.values():
            ok = False
            continue
        gpu, nic = found["gpu"], found["nic"]
        label = "GPU %s / NIC %s" % (gpu, nic)
        relation = topo.relation(gpu, nic)
        path = topo.path_bridges(gpu, nic)
        if relation not in SHARED_SWITCH:
            lines.append("%s: skipped, they no longer share a PCIe switch (%s)" % (label, relation))
            ok = False
            continue
        if topo.bridge_ids(path) != pair["bridges"]:
            lines.append("%s: skipped, the path between them changed (now %s, recorded %s)"
                         % (label, " ".join(topo.bridge_ids(path)) or "none", " ".join(pair["bridges"]) or "none"))
            ok = False
            continue
        for address in path:
            entry = acs_state(topo, address)
            if entry["state"] in ("absent", "disabled"):
                lines.append("%s: %s ACS %s" % (label, address, "already off" if entry["state"] == "disabled" else "absent"))
                continue
            if entry["state"] != "enabled":
                lines.append("%s: %s ACS unknown: %s" % (label, address, entry["detail"]))
                ok = False
                continue
            old = int(entry["control"], 16)
            acs = {"config": topo.config_path(address), "offset": int(entry["offset"], 16) + ACS_CTRL_REG,
                   "old": old, "new": old & ~ACS_P2P_REDIRECT, "ids": topo.identity_ids(address)[:2]}
            if check:
                lines.append("%s: %s ACS 0x%04x would become 0x%04x" % (label, address, old, acs["new"]))
                continue
            try:
                set_acs_control(acs, old, acs["new"])
                lines.append("%s: %s ACS 0x%04x -> 0x%04x" % (label, address, old, acs["new"]))
            except (OSError, RuntimeError, ValueError) as exc:
                lines.append("%s: %s ACS not changed: %s" % (label, address, describe_error(exc) if isinstance(exc, OSError) else exc))
                ok = False
    for warning in tree.all_warnings():
        lines.append("warning: %s" % warning)
    return ok, lines


def cli_main(argv=None, out=None):
    """``rdma-fabric gpudirect-acs [--config PATH] [--sysfs-path DIR] [--check]``: exit 0 when every recorded
    pair was found and its path's ACS redirect is off, 1 when a pair or bridge was skipped, 2 on a bad record."""
    out = out or sys.stdout
    parser = argparse.ArgumentParser(
        prog="rdma-fabric gpudirect-acs",
        description="Clear PCIe ACS redirect between the GPU-NIC pairs recorded by the rdma.fabric.gpudirect role, "
                    "finding each device again by its identity (never by a bus address fixed at apply time).")
    parser.add_argument("--config", default=ACS_BOOT_CONFIG, help="the record the role wrote (default %(default)s)")
    parser.add_argument("--sysfs-path", default="/sys", help="the sysfs root (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="say what would change, change nothing")
    args = parser.parse_args(argv)
    try:
        with open(args.config) as handle:
            config = json.load(handle)
    except (IOError, OSError, ValueError) as exc:
        out.write("gpudirect-acs: cannot read %s: %s\n" % (args.config, exc))
        return 2
    problems = check_boot_config(config)
    if problems:
        out.write("gpudirect-acs: %s: %s\n" % (args.config, "; ".join(problems)))
        return 2
    ok, lines = apply_boot_config(SysfsTree(args.sysfs_path), config, check=args.check)
    for line in lines:
        out.write("gpudirect-acs: %s\n" % line)
    return 0 if ok else 1
