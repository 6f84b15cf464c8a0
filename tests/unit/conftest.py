# -*- coding: utf-8 -*-
"""Session setup for the unit tests.

Keeps pytest out of tests/unit/fixtures and rebuilds the sysfs fixture folders (tests/unit/fixtures/sysfs/NAME/) from their
JSON manifests before any test module is imported, so tests can keep reading
``tests/unit/fixtures/sysfs/NAME/sys`` as a directory tree. See
tests/unit/fixtures/sysfs/trees.py for why the trees are stored as manifests.

Also gives the ``shared`` fixture: what several tests only read (a built tree, a playbook run and its output) built
once per pytest process. A module- or session-scoped fixture does not do that under ``ansible-test units``: it runs
each test in a forked child (its ansible_forked plugin), so a fixture set up in one test's child is gone for the next
one and is built again, test after test. ``shared.once(key, build)`` keeps the result on disk instead, in a folder
this process made before the children fork: the first test to ask builds it, the others load it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os
import pickle
import shutil
import tempfile

import pytest

# Never collect inside the fixtures: the rebuilt sysfs trees hold symlink loops, as a
# real /sys does (net/<n>/device -> the PCI function that holds net/<n>), which a
# directory walk that follows links never leaves.
collect_ignore = ["fixtures"]

_SHARED = {}


def pytest_configure(config):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "sysfs", "trees.py")
    spec = importlib.util.spec_from_file_location("rdma_fabric_sysfs_trees", path)
    trees = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trees)
    trees.materialise_all()
    _SHARED.update(root=tempfile.mkdtemp(prefix="rdma-fabric-units-shared-"), pid=os.getpid())


def pytest_unconfigure(config):
    if _SHARED.get("pid") == os.getpid():  # not a forked test's child (they leave with os._exit anyway)
        shutil.rmtree(_SHARED.pop("root"), ignore_errors=True)


class Shared(object):
    """Results built once per pytest process, kept in a folder of their own (see the module's docstring)."""

    def __init__(self, root):
        self.root = root

    def once(self, key, build):
        """``build(folder)``'s result for ``key``: built (in the empty folder it is given) by the first test that asks,
        loaded from disk by the others. A test that changes what it gets (files in the folder) works on a copy."""
        folder = os.path.join(self.root, key)
        done = os.path.join(folder, ".result.pickle")
        if os.path.exists(done):
            with open(done, "rb") as f:
                return pickle.load(f)
        shutil.rmtree(folder, ignore_errors=True)  # what a build that failed left
        os.makedirs(folder)
        result = build(folder)
        with open(done + ".part", "wb") as f:
            pickle.dump(result, f)
        os.rename(done + ".part", done)
        return result


@pytest.fixture(name="shared", scope="session")
def fixture_shared():
    return Shared(_SHARED["root"])
