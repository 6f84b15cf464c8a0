# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of rdma.fabric.roce_qos: reject keys that mean the same, then run the module.

A mapping such as ``dscp2prio: {26: 3, "26": 5}`` holds two keys that both
mean DSCP 26. The JSON that carries the arguments to the host keeps only one
of them, so the module could never see the conflict; this plugin checks the
arguments as the task wrote them (with the model's own rule,
``check_unique_keys_in``) and fails before anything runs on the host.
Everything else is the module's (validation included).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.plugins.action import ActionBase

from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, check_unique_keys_in


class ActionModule(ActionBase):
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super(ActionModule, self).run(tmp, task_vars)
        try:
            check_unique_keys_in(self._task.args)
        except ValidationError as e:
            result.update(failed=True, msg=str(e), param=e.param, commands=[])
            return result
        result.update(self._execute_module(module_name="rdma.fabric.roce_qos", module_args=self._task.args,
                                           task_vars=task_vars))
        return result
