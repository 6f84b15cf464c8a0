# -*- coding: utf-8 -*-
"""The harness every module test uses: run a module's ``main()`` in-process.

``run_main(main, args)`` runs ``main`` under ``patch_module_args(args)`` with
AnsibleModule's ``exit_json`` / ``fail_json`` turned into exceptions, and
returns ``(ok, result)``: ``ok`` is True when the module exited normally.
As Ansible does, a result without ``changed`` reads ``changed: false`` and a
failure carries ``failed: true``. Tests add their own test doubles (for
``run_command``, ``get_bin_path``) with ``monkeypatch`` on top of it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import contextlib
import json

import pytest

from ansible.module_utils import basic

try:
    from ansible.module_utils.testing import patch_module_args
except ImportError:  # ansible-core before 2.19 (the version matrix runs 2.17 and 2.18: tests/packaging/matrix)

    @contextlib.contextmanager
    def patch_module_args(args):
        """What 2.19's patch_module_args does, the way earlier cores read module arguments (basic._ANSIBLE_ARGS)."""
        args = dict(args)
        args.setdefault("_ansible_remote_tmp", "/tmp")
        args.setdefault("_ansible_keep_remote_files", False)
        saved = basic._ANSIBLE_ARGS
        basic._ANSIBLE_ARGS = json.dumps({"ANSIBLE_MODULE_ARGS": args}).encode("utf-8")
        try:
            yield
        finally:
            basic._ANSIBLE_ARGS = saved


class ExitJson(Exception):
    pass


class FailJson(Exception):
    pass


@pytest.fixture(name="run_main")
def fixture_run_main(monkeypatch):
    def exit_json(self, **kwargs):
        kwargs.setdefault("changed", False)
        raise ExitJson(kwargs)

    def fail_json(self, **kwargs):
        kwargs["failed"] = True
        raise FailJson(kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)

    def run_main(main, args):
        with patch_module_args(args):
            with pytest.raises((ExitJson, FailJson)) as caught:
                main()
        return caught.type is ExitJson, caught.value.args[0]

    return run_main
