# -*- coding: utf-8 -*-
"""Session setup for the unit tests.

Keeps pytest out of tests/unit/fixtures and rebuilds the sysfs fixture folders (tests/unit/fixtures/sysfs/NAME/) from their
JSON manifests before any test module is imported, so tests can keep reading
``tests/unit/fixtures/sysfs/NAME/sys`` as a directory tree. See
tests/unit/fixtures/sysfs/trees.py for why the trees are stored as manifests.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import importlib.util
import os

# Never collect inside the fixtures: the rebuilt sysfs trees hold symlink loops, as a
# real /sys does (net/<n>/device -> the PCI function that holds net/<n>), which a
# directory walk that follows links never leaves.
collect_ignore = ["fixtures"]


def pytest_configure(config):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "sysfs", "trees.py")
    spec = importlib.util.spec_from_file_location("rdma_fabric_sysfs_trees", path)
    trees = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(trees)
    trees.materialise_all()
