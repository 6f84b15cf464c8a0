# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Action plugin of rdma.fabric.k8s_manifests: every file in one task on the controller (see the module's docs)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.filter.core import to_nice_yaml

from ansible_collections.rdma.fabric.plugins.modules.k8s_manifests import ARGUMENT_SPEC
from ansible_collections.rdma.fabric.plugins.plugin_utils import manifests
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import ControllerAction


def dump(obj, width):
    """One YAML document exactly as the role wrote it before (``to_nice_yaml(indent=2)``)."""
    return to_nice_yaml(obj, indent=2, width=width)


def run_manifests(args, check_mode=False, diff=False):
    """The module's return values (shared with the unit tests)."""
    manifests.check_marker(args["marker"], args["header"], args["kustomization_header"])
    mode = manifests.parse_mode(args["mode"])
    wanted = None
    if args["state"] == "present":
        wanted = manifests.wanted_files(args["objects"], args["node_labels"], dump, args["header"],
                                        args["kustomization_header"], args["kustomization"], args["files"])
    out = manifests.sync(args["dest"], wanted, args["marker"], mode=mode, check_mode=check_mode, diff=diff)
    result = {"changed": bool(out["written"] or out["removed"]), "files": out["files"], "written": out["written"],
              "removed": out["removed"], "unchanged": out["unchanged"]}
    if diff:
        result["diff"] = out["diff"]
    return result


class ActionModule(ControllerAction):
    NAME = "k8s_manifests"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def run_on_controller(self, args, task_vars):
        return run_manifests(args, check_mode=bool(self._task.check_mode), diff=bool(self._task.diff))
