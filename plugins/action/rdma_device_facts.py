# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller side of rdma.fabric.rdma_device_facts: a key given twice in the task's arguments is refused, then the module runs
(:class:`.task_args.KeysOnceAction`)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.plugin_utils.task_args import KeysOnceAction


class ActionModule(KeysOnceAction):
    pass
