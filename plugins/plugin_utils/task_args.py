# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The arguments of a task as its author wrote them: keys given twice (controller only).

Ansible turns ``key=value`` arguments (``ansible -m MODULE -a "mtu=9000 mtu=1500"``, or a task written
``MODULE: mtu=9000 mtu=1500``) and JSON arguments into a dict before any plugin sees them, and a key given
twice silently keeps its last value. :func:`duplicated_keys` reads the text the task was written with (the
ad-hoc command line's ``-a``, or the task's own data) and names the keys given more than once, so an action
plugin can refuse the call before anything runs on the host.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json

from ansible import context
from ansible.parsing.splitter import split_args
from ansible.plugins.action.normal import ActionModule as NormalAction


def _kv_keys(text):
    """The keys of a ``key=value`` argument text, in order (free-form words and escaped ``\\=`` left out)."""
    keys = []
    for token in split_args(text):
        pos = 0
        while True:
            pos = token.find("=", pos + 1)
            if pos <= 0 or token[pos - 1] != "\\":
                break
        if pos > 0:
            keys.append(token[:pos].strip().strip("'\""))
    return keys


def _json_keys(text):
    """The keys given twice in any object of a JSON text (empty when it is not JSON)."""
    twice = []

    def pairs(items):
        seen = set()
        for key, _value in items:
            if key in seen and key not in twice:
                twice.append(key)
            seen.add(key)
        return dict(items)
    try:
        json.loads(text, object_pairs_hook=pairs)
    except ValueError:
        return []
    return twice


def repeated(text):
    """The keys given more than once in an argument text (``key=value`` words or a JSON object)."""
    if not isinstance(text, str):
        return []
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        return _json_keys(stripped)
    keys = _kv_keys(stripped)
    return sorted(set(k for k in keys if keys.count(k) > 1), key=keys.index)


def written_args(task, names):
    """The argument texts the task was written with: the ad-hoc ``-a`` text when this is an ad-hoc run of one of
    ``names`` (the module's names), and the task's own ``MODULE: key=value`` (or ``action:``) text."""
    texts = []
    cli = context.CLIARGS
    if cli.get("module_name") in names and isinstance(cli.get("module_args"), str):
        texts.append(cli["module_args"])
    try:
        data = task.get_ds()
    except AttributeError:
        data = None
    if isinstance(data, dict):
        for key, value in data.items():
            if key in names and isinstance(value, str):
                texts.append(value)
            elif key in ("action", "local_action") and isinstance(value, str) and value.split(None, 1)[0] in names:
                texts.append(value.split(None, 1)[1] if " " in value.strip() else "")
    return texts


def duplicated_keys(task, names):
    """The keys given twice in the arguments of ``task`` (a module known by ``names``), as they were written."""
    out = []
    for text in written_args(task, names):
        out.extend(k for k in repeated(text) if k not in out)
    return out


class KeysOnceAction(NormalAction):
    """The module's normal run (Ansible's ``normal`` action) after the check that no argument was given twice.

    The action plugin of each host module of the collection is this class (or a subclass that adds a check in
    :meth:`check_args`): a task or an ad-hoc call that gives a key twice fails before the module is sent to the host,
    naming the key.
    """

    def check_args(self, args):
        """A further check of the arguments (a subclass's); None when they pass, else the failed result."""
        return None

    def run(self, tmp=None, task_vars=None):
        action = self._task.action
        short = action.rsplit(".", 1)[-1]
        names = (action, "rdma.fabric." + short, short)
        twice = duplicated_keys(self._task, names)
        if twice:
            return {"failed": True, "param": twice[0], "changed": False,
                    "msg": "%s: %s given more than once in the task's arguments (Ansible would keep only the last "
                           "value); give each key once" % (", ".join(twice), "is" if len(twice) == 1 else "are")}
        failed = self.check_args(self._task.args)
        if failed:
            return dict(failed, failed=True, changed=False)
        return super(KeysOnceAction, self).run(tmp, task_vars)
