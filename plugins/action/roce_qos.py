"""Controller side of rdma.fabric.roce_qos: reject keys given twice or that mean the same, then run the module.

A key written twice (``ansible -m rdma.fabric.roce_qos -a "netdev=eth1 mtu=9000 mtu=1500"``) is refused
by the host modules' common action (:class:`.task_args.KeysOnceAction`). A mapping such as
``dscp2prio: {26: 3, "26": 5}`` holds two keys that both mean DSCP 26. The JSON that carries the arguments
to the host keeps only one of them, so the module could never see the conflict; this plugin checks the
arguments as the task wrote them (with the model's own rule, ``check_unique_keys_in``) and fails before
anything runs on the host. Everything else is the module's (validation included).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import ValidationError, check_unique_keys_in
from ansible_collections.rdma.fabric.plugins.plugin_utils.task_args import KeysOnceAction


class ActionModule(KeysOnceAction):
    _supports_check_mode = True
    _supports_async = False

    def check_args(self, args):
        try:
            check_unique_keys_in(args)
        except ValidationError as e:
            return {"msg": str(e), "param": e.param, "commands": []}
        return None
