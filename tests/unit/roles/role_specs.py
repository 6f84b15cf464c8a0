# -*- coding: utf-8 -*-
"""Shared by the role tests: meta/argument_specs.yml mirrors defaults/main.yml, and where ansible_collections is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "roles")
TYPES = {"str": str, "path": str, "bool": bool, "int": int, "list": list, "dict": dict}


def role_yaml(role, *parts):
    with open(os.path.join(ROLES, role, *parts)) as handle:
        return yaml.safe_load(handle)


def assert_specs_mirror_defaults(role):
    """Same names, each prefixed with the role name, described, with the default's value, type and choices."""
    defaults = role_yaml(role, "defaults", "main.yml")
    options = role_yaml(role, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(options) == sorted(defaults)
    for name, spec in options.items():
        assert name.startswith(role + "_"), name
        assert spec.get("description"), name
        assert "default" in spec and spec["default"] == defaults[name], name
        if defaults[name] is not None and spec["type"] in TYPES:
            assert isinstance(defaults[name], TYPES[spec["type"]]), name
        if "choices" in spec and spec["type"] == "str":
            assert defaults[name] in spec["choices"], name


def collections_path():
    """The folder that holds ansible_collections/ (the tests import the collection from there)."""
    import ansible_collections.rdma.fabric as pkg
    return os.path.abspath(os.path.join(list(pkg.__path__)[0], "..", "..", ".."))
