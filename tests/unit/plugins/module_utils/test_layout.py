# -*- coding: utf-8 -*-
"""The layout of plugins/module_utils says where code runs (docs/DESIGN.md, "Identity and layout"):

* ``common/``: pure rules, standard library only, imported by host code AND by the controller; a module in it
  imports nothing of the collection but other ``common`` modules;
* every other package of module_utils is host-only: the controller's plugins (plugin_utils, filter, action,
  callback, inventory, lookup) import module_utils only through ``common``;
* module_utils never imports controller code (plugin_utils, action, filter, ...).

Read from the sources' import statements (ast), so a new import that breaks the rule fails here.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import ast
import os
import sys

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.runtime import host_cli

MODULE_UTILS = os.path.dirname(os.path.dirname(os.path.abspath(host_cli.__file__)))
PLUGINS = os.path.dirname(MODULE_UTILS)
COLLECTION = "ansible_collections.rdma.fabric"
MU = COLLECTION + ".plugins.module_utils"
CONTROLLER_DIRS = ("plugin_utils", "filter", "action", "callback", "inventory", "lookup")
HOST_PACKAGES = ("argspec", "facts", "gpudirect", "qos", "runtime", "sriov", "change")


def py_files(top):
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        out += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py")]
    return out


def imported(path):
    """Every module name an import statement of ``path`` names (``from X import a`` gives X and X.a)."""
    with open(path) as f:
        tree = ast.parse(f.read(), filename=path)
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names += [node.module + "." + a.name for a in node.names]
    return names


def stdlib(name):
    top = name.split(".")[0]
    return top == "__future__" or top in getattr(sys, "stdlib_module_names", ()) or top in sys.builtin_module_names


def test_the_host_packages_and_common_are_there():
    found = sorted(d for d in os.listdir(MODULE_UTILS) if os.path.isdir(os.path.join(MODULE_UTILS, d)) and d != "__pycache__")
    assert set(found) <= set(HOST_PACKAGES + ("common",)), found
    assert not [f for f in os.listdir(MODULE_UTILS) if f.endswith(".py")], "module_utils holds packages only"


@pytest.mark.parametrize("path", py_files(os.path.join(MODULE_UTILS, "common")), ids=os.path.basename)
def test_common_is_standard_library_and_common_only(path):
    for name in imported(path):
        if name.startswith(COLLECTION):
            assert name.startswith(MU + ".common"), "%s imports %s" % (path, name)
        elif not stdlib(name):
            pytest.fail("%s imports %s, not the standard library" % (path, name))


@pytest.mark.skipif(not hasattr(sys, "stdlib_module_names"), reason="needs Python 3.10's sys.stdlib_module_names")
def test_stdlib_check_knows_a_third_party_name():
    assert stdlib("re") and stdlib("os.path") and not stdlib("ansible") and not stdlib("jinja2")


@pytest.mark.parametrize("folder", CONTROLLER_DIRS)
def test_controller_code_reaches_module_utils_only_through_common(folder):
    top = os.path.join(PLUGINS, folder)
    if not os.path.isdir(top):
        pytest.skip("no plugins/%s" % folder)
    wrong = ["%s: %s" % (os.path.relpath(p, PLUGINS), n) for p in py_files(top) for n in imported(p)
             if n.startswith(MU + ".") and not n.startswith(MU + ".common")]
    assert not wrong


def test_module_utils_never_imports_controller_code():
    wrong = ["%s: %s" % (os.path.relpath(p, PLUGINS), n) for p in py_files(MODULE_UTILS) for n in imported(p)
             if n.startswith(COLLECTION + ".plugins.") and not n.startswith(MU)]
    assert not wrong
