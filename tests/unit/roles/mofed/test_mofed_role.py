# -*- coding: utf-8 -*-
"""Tests of the rdma.fabric.mofed role's own files (no host needed).

* meta/argument_specs.yml mirrors defaults/main.yml;
* no task builds a repository definition from text: the apt source is written
  by ansible.builtin.deb822_repository, the dnf one by
  ansible.builtin.yum_repository (the old hand-built template is gone);
* every task that sees credentials (its arguments, environment or vars mention
  the password, the user, a repository or proxy URL) runs with ``no_log`` that
  is true whenever credentials are set, whatever ``mofed_no_log`` says; and the
  files that hold them are mode 0600 - checked by templating the role's own
  ``vars/main.yml`` expressions with Ansible's templar for each way of giving
  credentials;
* every regex test and filter in the role full-matches (no ``$``).

The role's behaviour on a host (packages, apt, keys) is checked in the lab
(molecule/site/verify_mofed.yml); its variable rules in
tests/unit/plugins/plugin_utils/test_role_vars.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import glob
import json
import os
import re

import pytest
import yaml

from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles", "mofed")
TYPES = {"str": str, "bool": bool, "path": str, "list": list, "int": int}
# Variables whose value is or may hold a credential (the password, the user, a URL with user:password@).
SECRET_BEARING = ("mofed_repo_password", "mofed_repo_username", "mofed_repo_url", "__mofed_repo_url", "mofed_proxy",
                  "__mofed_env", "__mofed_auth", "mofed_mlnx_ofed_url", "apt-auth")
NO_LOG_WHEN_SECRET = (True, "{{ __mofed_no_log }}")


def _yaml(*parts):
    with open(os.path.join(ROLE, *parts)) as handle:
        return yaml.safe_load(handle)


def _tasks():
    """(file, task) for every task of the role, blocks opened."""
    def walk(tasks, where):
        for task in tasks or []:
            for key in ("block", "rescue", "always"):
                if key in task:
                    yield from walk(task[key], where)
            yield where, task
    for path in sorted(glob.glob(os.path.join(ROLE, "tasks", "*.yml"))):
        with open(path) as handle:
            yield from walk(yaml.safe_load(handle), os.path.basename(path))


def test_specs_mirror_defaults():
    defaults = _yaml("defaults", "main.yml")
    options = _yaml("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(options) == sorted(defaults)
    for name, spec in options.items():
        assert spec.get("description"), name
        assert spec["default"] == defaults[name], name
        assert isinstance(defaults[name], TYPES[spec["type"]]), name


def test_repository_definitions_come_from_the_builtin_modules():
    assert not os.path.exists(os.path.join(ROLE, "templates", "mofed.sources.j2"))
    modules = dict(((where, task.get("name")), [k for k in task if k.startswith("ansible.builtin.")]) for where, task in _tasks())
    assert modules[("repo_Debian.yml", "Write the repository source")] == ["ansible.builtin.deb822_repository"]
    assert modules[("repo_RedHat.yml", "Write the repository definition")] == ["ansible.builtin.yum_repository"]
    for where, task in _tasks():
        for module in ("ansible.builtin.copy", "ansible.builtin.template"):
            dest = str((task.get(module) or {}).get("dest", ""))
            assert "sources" not in dest and "yum.repos" not in dest, (where, task.get("name"))


def test_every_task_that_sees_credentials_does_not_log():
    seen = []
    for where, task in _tasks():
        if "block" in task:
            continue
        hidden = ("name", "when", "no_log", "register", "loop_control", "changed_when", "failed_when", "check_mode")
        exposed = dict((k, v) for k, v in task.items() if k not in hidden)
        for args in exposed.values():  # an assert's conditions are shown as written, not as values
            if isinstance(args, dict):
                args.pop("that", None)
        # what reaches the output: the values of expressions (a variable's name in a message is no leak)
        text = " ".join(re.findall(r"\{\{.*?\}\}|\{%.*?%\}", json.dumps(exposed, default=str), re.S))
        if any(re.search(r"\b%s\b" % re.escape(name), text) for name in SECRET_BEARING):
            seen.append(task.get("name"))
            assert task.get("no_log") in NO_LOG_WHEN_SECRET, "%s: %s sees credentials but may log" % (where, task.get("name"))
    # the ones that must be there are found (the test looks at the right thing)
    for name in ("Download the key", "Write the repository credentials (auth.conf.d, root only)", "Write the repository source",
                 "Write the repository definition", "Run apt-get update for this repository only",
                 "Download the bundle and verify its checksum", "Work out the effective settings"):
        assert name in seen, name


def _render(expressions, **values):
    loader = DataLoader()
    variables = loader.load_from_file(os.path.join(ROLE, "defaults", "main.yml"), trusted_as_template=True)
    variables.update(loader.load_from_file(os.path.join(ROLE, "vars", "main.yml"), trusted_as_template=True))
    variables.update(values)
    templar = Templar(loader=loader, variables=variables)
    return [templar.template(trust_as_template("{{ %s }}" % e)) for e in expressions]


@pytest.mark.parametrize("values,no_log,source_mode,yum_mode", [
    ({"mofed_no_log": False}, False, "0644", "0644"),
    ({"mofed_no_log": True}, True, "0644", "0644"),
    # credentials in the URL: the .sources file holds them
    ({"mofed_no_log": False, "mofed_repo_url": "https://rdma:s3cret@mirror.example/debian"}, True, "0600", "0600"),
    # user and password: auth.conf.d (0600 always) and the dnf repository
    ({"mofed_no_log": False, "mofed_repo_username": "rdma", "mofed_repo_password": "s3cret"}, True, "0644", "0600"),
    # a proxy with a user: every download task's environment holds it
    ({"mofed_no_log": False, "mofed_proxy": "http://rdma:s3cret@proxy:3128"}, True, "0644", "0600"),
])
def test_credentials_make_tasks_silent_and_files_root_only(values, no_log, source_mode, yum_mode):
    assert _render(("__mofed_no_log", "__mofed_source_mode", "__mofed_yum_repo_mode"), **values) == [no_log, source_mode, yum_mode]


def test_the_files_take_those_modes():
    tasks = dict(((where, task.get("name")), task) for where, task in _tasks())
    assert tasks[("repo_Debian.yml", "Write the repository source")]["ansible.builtin.deb822_repository"]["mode"] \
        == "{{ __mofed_source_mode }}"
    assert tasks[("repo_RedHat.yml", "Write the repository definition")]["ansible.builtin.yum_repository"]["mode"] \
        == "{{ __mofed_yum_repo_mode }}"
    assert tasks[("repo_Debian.yml", "Write the repository credentials (auth.conf.d, root only)")]["ansible.builtin.copy"]["mode"] \
        == "0600"


def test_role_regexes_full_match():
    """Jinja's match is re.match and "$" matches before a trailing newline: the role anchors with \\Z."""
    for path in glob.glob(os.path.join(ROLE, "*", "*.yml")):
        with open(path) as handle:
            text = handle.read()
        assert not re.search(r"""\$['"]""", text), path
