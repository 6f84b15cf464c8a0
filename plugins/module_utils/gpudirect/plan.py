# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The GPUDirect change plan: the steps (with their undo) that bring a host to the requested peer-memory
module, modules-load.d file and ACS words; what diff mode shows; where on the host the changes go."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.common.paths import PathError, check_path
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree, check_sysfs_root
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.acs import ACS_CTRL_REG, ACS_KERNEL_REDIRECT, ACS_P2P_REDIRECT
from ansible_collections.rdma.fabric.plugins.module_utils.gpudirect.probes import PEERMEM_MODULES


MODULES_LOAD_FILE = paths.GPUDIRECT_MODULES_LOAD
MODULES_LOAD_HEADER = "# Managed by rdma.fabric.gpudirect: GPUDirect RDMA peer-memory module\n"
# The ACS control words kept before the first clear (the role passes it as acs_saved).
ACS_SAVED_FILE = paths.GPUDIRECT_ACS_SAVED
ACS_SAVED_SCHEMA = 1


# --------------------------------------------------------------------------
# the change plan
# --------------------------------------------------------------------------
class Action(object):
    """One change, with its undo: a command (argv list), a file write/removal, or an ACS control word write.

    ``acs`` (for ``acs_disable`` and ``acs_enable``): ``{"config": path, "offset": int, "old": int, "new": int,
    "ids": [vendor, device]}``. ``save_file``/``remove_saved``: the record of the ACS words before the first clear.
    """

    def __init__(self, kind, target, argv=None, undo_argv=None, path=None, content=None, old_content=None, acs=None):
        self.kind = kind
        self.target = target
        self.argv = argv
        self.undo_argv = undo_argv
        self.path = path
        self.content = content
        self.old_content = old_content
        self.acs = acs
        self.done = False

    def describe(self):
        if self.argv:
            return " ".join(self.argv)
        if self.kind in ("acs_disable", "acs_enable"):
            return "write 0x%04x to the ACS control register of %s (config offset 0x%03x, was 0x%04x)" % (
                self.acs["new"], self.target, self.acs["offset"], self.acs["old"])
        if self.kind in ("write_file", "save_file"):
            return "write %s" % self.path
        return "remove %s" % self.path

    def as_dict(self):
        return {"action": self.kind, "target": self.target, "command": self.describe(), "done": self.done}


def modules_load_content(module):
    return "%s%s\n" % (MODULES_LOAD_HEADER, module)


class PlanError(Exception):
    """The requested state cannot be reached here (told before touching anything)."""


def rooted(host_root, path):
    """``path`` (absolute, on the host) as this process sees it when the host's root is at ``host_root``."""
    return os.path.join(host_root, path.lstrip("/")) if host_root not in ("/", "") else path


def saved_acs_record(facts, topo):
    """The ACS control word of every bridge read, keyed by address with its vendor:device (JSON text)."""
    bridges = {}
    for entry in facts["acs"]["bridges"]:
        if entry["control"]:
            bridges[entry["pci_address"]] = {
                "control": entry["control"],
                "ids": list(topo.identity_ids(entry["pci_address"])[:2]) if topo is not None else None}
    return json.dumps({"schema": ACS_SAVED_SCHEMA, "bridges": bridges}, indent=2, sort_keys=True) + "\n"


def parse_saved_acs(text, path):
    """``{address: {"control": int, "ids": [...]}}`` from the record; PlanError naming ``path`` when unusable."""
    try:
        record = json.loads(text)
        if record.get("schema") != ACS_SAVED_SCHEMA or not isinstance(record.get("bridges"), dict):
            raise ValueError("not schema %d with bridges" % ACS_SAVED_SCHEMA)
        saved = {}
        for address, entry in record["bridges"].items():
            saved[address] = {"control": int(entry["control"], 16), "ids": entry.get("ids")}
        return saved
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise PlanError("%s (the ACS words kept before the first clear) is not usable: %s; nothing was changed. "
                        "Remove it to restore the kernel's boot default (request and completion redirect) instead"
                        % (path, exc))


def plan(facts, peermem, persist, acs, current_file, host_root="/", modules_load_file=None, topo=None,
         saved_file=None, saved_content=None):
    """Ordered :class:`Action` list that brings the host to the requested state.

    ``current_file`` is the content of the modules-load.d file (None if absent).
    Commands are argv lists with bare tool names; the runner resolves them.
    ``host_root`` other than ``/`` (a container with the host's root mounted
    there): ``modprobe -d host_root`` loads the host's module files, the
    modules-load.d file is written below it. ``topo`` gives the configuration
    space paths of the ACS writes (those under the tree that was read).

    ``saved_file`` (with ``saved_content``, its text or None when absent): with
    ``acs=disable``, the ACS words are kept there before the first clear
    (once: an existing record is left as it is); with ``acs=enable``, each
    bridge on a GPU-NIC path gets its kept redirect bits back (where the
    record names it with the same vendor:device), or else the kernel's boot
    default (:data:`ACS_KERNEL_REDIRECT`), and the record is removed.
    """
    actions = []
    pm = facts["peermem"]
    gpus_ok = bool(facts["gpus"]) and facts["driver"]["loaded"]
    modprobe = ["modprobe"] + (["-d", host_root] if host_root not in ("/", "") else [])
    load_file = modules_load_file or rooted(host_root, MODULES_LOAD_FILE)

    wanted = None
    decided = True
    if peermem == "absent":
        wanted = None
    elif not facts["gpus"]:
        decided = peermem == "auto"  # auto: nothing to serve; present: leave things alone
    elif not facts["driver"]["loaded"]:
        decided = False
    elif peermem == "present" or pm["needed"]:
        wanted = pm["module"]
        if pm["peer_memory_api"] is False:
            if peermem == "present":
                raise PlanError(
                    "peermem=present: %s cannot load here: ib_core has no peer-memory API "
                    "(ib_register_peer_memory_client is not in /proc/kallsyms), which is the case on inbox RDMA stacks; "
                    "install MLNX_OFED/DOCA-OFED or meet the DMA-BUF requirements (%s)"
                    % (wanted, "; ".join(facts["dmabuf"]["missing"]) or "met"))
            wanted = None
            decided = False  # do not persist a module that fails at every boot

    if peermem == "absent":
        for name in reversed(PEERMEM_MODULES):
            if pm[name]:
                actions.append(Action("unload_module", name, argv=modprobe + ["-r", name], undo_argv=modprobe + [name]))
    elif wanted and gpus_ok and not pm[wanted]:
        other = [n for n in PEERMEM_MODULES if n != wanted and pm[n]]
        for name in other:
            actions.append(Action("unload_module", name, argv=modprobe + ["-r", name], undo_argv=modprobe + [name]))
        actions.append(Action("load_module", wanted, argv=modprobe + [wanted], undo_argv=modprobe + ["-r", wanted]))

    if persist and decided:
        if wanted:
            content = modules_load_content(wanted)
            if current_file != content:
                actions.append(Action("write_file", load_file, path=load_file, content=content, old_content=current_file))
        elif current_file is not None:
            actions.append(Action("remove_file", load_file, path=load_file, old_content=current_file))

    def acs_action(kind, entry, old, new):
        return Action(kind, entry["pci_address"], acs={
            "config": topo.config_path(entry["pci_address"]) if topo is not None else None,
            "offset": int(entry["offset"], 16) + ACS_CTRL_REG,
            "old": old,
            "new": new,
            "ids": topo.identity_ids(entry["pci_address"])[:2] if topo is not None else None,
        })

    if acs == "disable":
        clears = [acs_action("acs_disable", entry, int(entry["control"], 16), int(entry["control"], 16) & ~ACS_P2P_REDIRECT)
                  for entry in facts["acs"]["bridges"] if entry["state"] == "enabled"]
        if clears and saved_file and saved_content is None:
            actions.append(Action("save_file", saved_file, path=saved_file, content=saved_acs_record(facts, topo)))
        actions.extend(clears)
    elif acs == "enable":
        saved = parse_saved_acs(saved_content, saved_file) if saved_content is not None else {}
        for entry in facts["acs"]["bridges"]:
            if entry["state"] not in ("enabled", "disabled"):
                continue
            old = int(entry["control"], 16)
            kept = saved.get(entry["pci_address"])
            ids = list(topo.identity_ids(entry["pci_address"])[:2]) if topo is not None else None
            if kept is not None and (kept["ids"] is None or ids is None or list(kept["ids"]) == ids):
                new = (old & ~ACS_P2P_REDIRECT) | (kept["control"] & ACS_P2P_REDIRECT)
            else:
                new = old | (int(entry["capability"], 16) & ACS_KERNEL_REDIRECT)
            if new != old:
                actions.append(acs_action("acs_enable", entry, old, new))
        if saved_content is not None:
            actions.append(Action("remove_saved", saved_file, path=saved_file, old_content=saved_content))
    return actions


def state_view(facts, file_content):
    """What diff mode shows: loaded peer-memory modules, the file, ACS control words."""
    return {
        "peermem_loaded": list(facts["peermem"]["loaded"]),
        "modules_load_file": file_content,
        "acs_control": dict((b["pci_address"], b["control"]) for b in facts["acs"]["bridges"] if b["control"]),
    }


def predicted_view(before, actions):
    after = {
        "peermem_loaded": list(before["peermem_loaded"]),
        "modules_load_file": before["modules_load_file"],
        "acs_control": dict(before["acs_control"]),
    }
    for action in actions:
        if action.kind == "load_module" and action.target not in after["peermem_loaded"]:
            after["peermem_loaded"].append(action.target)
        elif action.kind == "unload_module" and action.target in after["peermem_loaded"]:
            after["peermem_loaded"].remove(action.target)
        elif action.kind == "write_file":
            after["modules_load_file"] = action.content
        elif action.kind == "remove_file":
            after["modules_load_file"] = None
        elif action.kind in ("acs_disable", "acs_enable"):
            after["acs_control"][action.target] = "0x%04x" % action.acs["new"]
    return after


def read_text_file(path, tree=None):
    """Text of ``path``; None when absent (or unreadable: with ``tree``, an unexpected error adds a warning)."""
    reader = tree if tree is not None else SysfsTree()
    return reader.read(path, strip=False)


def resolve_roots(host_root="/", sysfs_path=None, procfs_path=None):
    """``{host_root, sysfs, procfs, host_reads}`` from the module's options; PlanError naming the option.

    ``sysfs_path``/``procfs_path`` default to ``<host_root>/sys`` and
    ``<host_root>/proc``. ``host_reads`` is true when they are those (after
    resolving links): only then do the reads describe the host that the
    changes (modprobe, ACS words, the modules-load.d file, all under
    ``host_root``) would touch.
    """
    try:
        check_path("host_root", host_root)
        for name, value in (("sysfs_path", sysfs_path), ("procfs_path", procfs_path)):
            if value is not None:
                check_path(name, value, absolute=False)
    except PathError as exc:
        raise PlanError(str(exc))
    roots = {
        "host_root": host_root,
        "sysfs": sysfs_path if sysfs_path is not None else rooted(host_root, "/sys"),
        "procfs": procfs_path if procfs_path is not None else rooted(host_root, "/proc"),
    }
    for name, option in (("host_root", "host_root"), ("sysfs", "sysfs_path"), ("procfs", "procfs_path")):
        try:
            if name == "sysfs":
                check_sysfs_root(roots[name], option)
            elif not os.path.isdir(roots[name]):
                raise PathError("%s: %s is not a directory" % (option, roots[name]))
        except PathError as exc:
            raise PlanError(str(exc))
    roots["host_reads"] = (os.path.realpath(roots["sysfs"]) == os.path.realpath(rooted(host_root, "/sys"))
                           and os.path.realpath(roots["procfs"]) == os.path.realpath(rooted(host_root, "/proc")))
    return roots
