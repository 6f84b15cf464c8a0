# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: fabric_plan
type: aggregate
short_description: Write what a check-mode run would change, per host and stage (fabric-plan.json, .md and .html)
version_added: 0.1.0
author:
  - rdma.fabric developers (@rdma-fabric)
description:
  - Records every task result that reports a change (in check mode, a change that would be made) by host and
    stage (the play's name; in a play that runs several roles, the role's name), with the task's diff (headers and
    text, cut at 2000 characters) and, for M(rdma.fabric.roce_qos), each port's values before and after.
  - Lists which hosts would be drained (the rule of site.yml's C(rdma_fabric_drain_plan), which reads this plan),
    rebooted (a C(reboot) task that would run) or have their RDMA driver stack restarted (an C(openibd) restart).
  - At the end of the run writes C(fabric-plan.json), C(fabric-plan.md) and C(fabric-plan.html) into the report
    folder (C(rdma_report_dir) as an extra variable, else O(dir)), each mode 0644.
  - C(fabric-plan.html) is one self-contained page in the fabric report's look (no scripts, no external resources),
    marked CHECK MODE or NOT a check-mode run. Its "Planned changes" shows the counts, the hosts that would be
    drained, rebooted or have the driver stack restarted, the hosts that failed or were unreachable (in red), then
    per host and stage each change with its task and item, port values before -> after and the files of its diffs.
    The hosts with nothing to change are one collapsed line. M(rdma.fabric.fabric_report) shows the same section in
    the fabric report when its option C(plan_file) names a C(fabric-plan.json).
  - Used by C(playbooks/plan.yml) (C(ansible-playbook rdma.fabric.plan --check --diff)), which fails unless this
    callback is enabled and the run is in check mode.
requirements:
  - enable it with C(ANSIBLE_CALLBACKS_ENABLED=rdma.fabric.fabric_plan) or C(callbacks_enabled) in ansible.cfg
options:
  dir:
    description: Folder for the plan when no C(rdma_report_dir) extra variable is given.
    type: path
    default: ~/.cache/rdma-fabric/reports
    env:
      - name: RDMA_FABRIC_PLAN_DIR
"""

import datetime
import json
import os

from ansible.plugins.callback import CallbackBase

from ansible_collections.rdma.fabric.plugins.plugin_utils import fabric_plan
from ansible_collections.rdma.fabric.plugins.plugin_utils import report as fabric_report
from ansible_collections.rdma.fabric.plugins.plugin_utils.controller import write_atomic


def _rescued(task):
    """True when ``task`` sits (at any depth) in the ``block:`` part of a block that has a ``rescue:``."""
    child, parent = task, getattr(task, "_parent", None)
    while parent is not None:
        rescue = getattr(parent, "rescue", None) or []
        block = getattr(parent, "block", None) or []
        uuid = getattr(child, "_uuid", None)
        if rescue and uuid is not None and any(getattr(t, "_uuid", None) == uuid for t in block):
            return True
        child, parent = parent, getattr(parent, "_parent", None)
    return False


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "rdma.fabric.fabric_plan"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, *args, **kwargs):
        super(CallbackModule, self).__init__(*args, **kwargs)
        self._plan = fabric_plan.FabricPlan()
        self._play = None
        self._dir = None

    def v2_playbook_on_play_start(self, play):
        self._play = play.get_name()
        if self._dir is None:
            extra = play.get_variable_manager().extra_vars if play.get_variable_manager() else {}
            self._dir = extra.get("rdma_report_dir") if isinstance(extra.get("rdma_report_dir"), str) else None
        if self._plan.check_mode is None:
            from ansible import context
            self._plan.check_mode = bool(context.CLIARGS.get("check"))

    def _stage(self, result):
        role = getattr(result._task, "_role", None)
        return "%s / %s" % (self._play, role.get_name()) if role is not None else self._play

    def v2_runner_on_ok(self, result):
        task = result._task
        self._plan.add(result._host.get_name(), self._stage(result), task.get_name(), result._result,
                       action=getattr(task, "action", None), args=getattr(task, "args", None))

    def v2_runner_on_failed(self, result, ignore_errors=False):
        # A failure a block's rescue takes care of is no failure of the run
        # (ansible-playbook's recap counts it as rescued); the rescue's own
        # tasks say what happened.
        if not ignore_errors and not _rescued(result._task):
            self._plan.fail(result._host.get_name(), self._stage(result), result._task.get_name(),
                            result._result.get("msg", ""))

    def v2_runner_on_unreachable(self, result):
        self._plan.unreachable.append(result._host.get_name())

    def v2_playbook_on_stats(self, stats):
        folder = os.path.expanduser(self._dir or self.get_option("dir"))
        if not os.path.isdir(folder):
            os.makedirs(folder, 0o755)
        data = self._plan.as_dict()
        data["generated_at"] = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
        write_atomic(os.path.join(folder, "fabric-plan.json"),
                     (json.dumps(data, indent=2, sort_keys=True, default=str) + "\n").encode("utf-8"), 0o644)
        write_atomic(os.path.join(folder, "fabric-plan.md"), fabric_plan.markdown(data).encode("utf-8"), 0o644)
        write_atomic(os.path.join(folder, "fabric-plan.html"), fabric_report.render_plan_html(data).encode("utf-8"), 0o644)
        self._display.display("fabric plan: %d of %d hosts would change (%d changes): %s (and .json, .html)" % (
            data["summary"]["hosts_changing"], data["summary"]["hosts"], data["summary"]["changes"],
            os.path.join(folder, "fabric-plan.md")))
