# -*- coding: utf-8 -*-
"""Role variables: one style for private names, ``__<role>_*`` (as linux-system-roles name them).

A name a role sets (vars/*.yml, register, set_fact, loop_var) is either private, ``__<role>_NAME``, or public
and then documented in the role's README (a result such as ``rdma_validate_results`` that playbooks read).
The older ``<role>__NAME`` style is gone from the whole tree.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import os
import re

import yaml

from role_specs import ROLES

ROOT = os.path.abspath(os.path.join(ROLES, ".."))
ROLE_NAMES = sorted(n for n in os.listdir(ROLES) if os.path.isdir(os.path.join(ROLES, n)))
TASK_KEYS = ("block", "rescue", "always")


def _task_names(tasks):
    for task in tasks or []:
        if not isinstance(task, dict):
            continue
        for key in TASK_KEYS:
            yield from _task_names(task.get(key))
        for key in ("ansible.builtin.set_fact", "set_fact"):
            for name in task.get(key) or {}:
                if name != "cacheable":
                    yield "set_fact", name
        if task.get("register"):
            yield "register", task["register"]
        loop_control = task.get("loop_control")
        if isinstance(loop_control, dict) and loop_control.get("loop_var"):
            yield "loop_var", loop_control["loop_var"]


def _names_set_by(role):
    base = os.path.join(ROLES, role)
    for path in sorted(glob.glob(os.path.join(base, "vars", "*.yml"))):
        with open(path) as handle:
            for name in yaml.safe_load(handle) or {}:
                yield os.path.relpath(path, base), "var", name
    for folder in ("tasks", "handlers"):
        for path in sorted(glob.glob(os.path.join(base, folder, "*.yml"))):
            with open(path) as handle:
                for kind, name in _task_names(yaml.safe_load(handle)):
                    yield os.path.relpath(path, base), kind, name


def test_every_role_name_is_private_or_documented():
    wrong = []
    for role in ROLE_NAMES:
        readme_path = os.path.join(ROLES, role, "README.md")
        readme = open(readme_path).read() if os.path.exists(readme_path) else ""
        for where, kind, name in _names_set_by(role):
            if name.startswith("__" + role + "_"):
                continue
            if re.search(r"\b%s\b" % re.escape(name), readme) and not name.startswith("_"):
                continue  # public: the README tells users about it
            wrong.append("%s/%s: %s %s" % (role, where, kind, name))
    assert not wrong, "\n".join(wrong)


def test_the_old_role_double_underscore_style_is_gone():
    old = re.compile(r"\b(?:%s)__[a-z0-9_]+" % "|".join(re.escape(r) for r in ROLE_NAMES))
    found = []
    for top in ("roles", "playbooks", "molecule", "tests", "docs", "plugins", "README.md"):
        start = os.path.join(ROOT, top)
        paths = [start] if os.path.isfile(start) else [
            os.path.join(d, f) for d, dummy, files in os.walk(start) for f in files
            if "fixtures" not in d.split(os.sep)]
        for path in paths:
            if path == os.path.abspath(__file__) or not path.endswith((".yml", ".yaml", ".j2", ".py", ".md")):
                continue
            with open(path) as handle:
                for number, line in enumerate(handle, 1):
                    if old.search(line):
                        found.append("%s:%d: %s" % (os.path.relpath(path, ROOT), number, line.strip()))
    assert not found, "\n".join(found)
