# -*- coding: utf-8 -*-
"""The host runtime's entry point (module_utils/runtime/host_cli.py) and what the
runtime may hold: every module_utils file is standard library only (it
imports with ``ansible`` made unimportable) and parses as Python 3.8, the
minimum the runtime states (tests/config.yml)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import subprocess
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import host_cli
from ansible_collections.rdma.fabric.tests.unit.plugins.action.run_playbook import collections_path
from ansible_collections.rdma.fabric.tests.unit.plugins.module_utils.test_layout import py_files

MODULE_UTILS = os.path.dirname(os.path.dirname(os.path.abspath(host_cli.__file__)))


def module_utils_files():
    return py_files(MODULE_UTILS)


def import_name(path):
    rel = os.path.relpath(path, MODULE_UTILS)[:-3].replace(os.sep, ".")
    if rel.endswith("__init__"):
        rel = rel[:-len(".__init__")] if "." in rel else ""
    return host_cli.PACKAGE + ("." + rel if rel else "")


# A finder placed first on sys.meta_path: anything named ansible or ansible.* cannot be imported.
BLOCK_ANSIBLE = """
import importlib, sys
class NoAnsible:
    def find_spec(self, name, path=None, target=None):
        if name == "ansible" or name.startswith("ansible."):
            raise ImportError("ansible is not importable in the host runtime: " + name)
        return None
sys.meta_path.insert(0, NoAnsible())
"""


def test_every_module_utils_file_imports_without_ansible():
    names = [import_name(p) for p in module_utils_files()]
    assert "ansible_collections.rdma.fabric.plugins.module_utils.runtime.host_cli" in names and len(names) > 10
    code = BLOCK_ANSIBLE + "".join("importlib.import_module(%r)\n" % n for n in names) + "print('imported', %d)\n" % len(names)
    # -S: no site-packages (this venv's ansible-core is not on the path either way); -E: no PYTHONPATH.
    proc = subprocess.run([sys.executable, "-S", "-E", "-c", "import sys; sys.path.insert(0, %r)\n" % collections_path() + code],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "imported %d" % len(names)


@pytest.mark.parametrize("path", module_utils_files(), ids=lambda p: os.path.relpath(p, MODULE_UTILS))
def test_module_utils_parse_as_python_3_8(path):
    with open(path) as f:
        ast.parse(f.read(), filename=path, feature_version=(3, 8))


def test_subcommands_are_module_utils_modules_with_cli_main():
    for name, target in host_cli.SUBCOMMANDS.items():
        path = os.path.join(MODULE_UTILS, *target.split(".")) + ".py"
        with open(path) as f:
            tree = ast.parse(f.read())
        assert "cli_main" in [n.name for n in tree.body if isinstance(n, ast.FunctionDef)], name


def test_dispatch_is_lazy_and_reports_bad_usage(capsys):
    code = ("import sys; sys.path.insert(0, %r)\n"
            "from ansible_collections.rdma.fabric.plugins.module_utils.runtime import host_cli\n"
            "assert not [m for m in sys.modules if m.endswith('.qos.reapply') or m.endswith('.qos.engine')]\n"
            "rc = host_cli.main(['qos-apply', '--dir', '/nonexistent'])\n"
            "assert [m for m in sys.modules if m.endswith('.qos.reapply')]\n"
            "sys.exit(rc)\n" % collections_path())
    proc = subprocess.run([sys.executable, "-S", "-E", "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=120, check=False)
    assert proc.returncode == 2 and "cannot list /nonexistent" in proc.stderr
    assert host_cli.main(["metrix"]) == 2
    assert "unknown subcommand 'metrix'; one of: gpudirect-acs, health-check, metrics, qos-apply" in capsys.readouterr().err
    assert host_cli.main([]) == 2 and "usage: rdma-fabric SUBCOMMAND" in capsys.readouterr().err
    assert host_cli.main(["--help"]) == 0 and "qos-apply" in capsys.readouterr().out


def test_host_process_runs_argv_lists_and_finds_commands(tmp_path):
    hp = host_cli.HostProcess()
    rc, out, err = hp.run_command(["sh", "-c", "echo out; echo err >&2; echo $LC_ALL; exit 3"],
                                  environ_update={"LC_ALL": "C"})
    assert (rc, out, err) == (3, "out\nC\n", "err\n")
    assert hp.get_bin_path("sh") and hp.get_bin_path("no-such-command-here") is None
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    assert hp.get_bin_path("tool", opt_dirs=[str(tmp_path)]) == str(tool)
    with pytest.raises(OSError):
        hp.run_command([str(tmp_path / "missing")])
