# -*- coding: utf-8 -*-
"""Shared by the role tests: meta/argument_specs.yml mirrors defaults/main.yml, and where ansible_collections is."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml


def _yaml(role_dir, *parts):
    with open(os.path.join(role_dir, *parts)) as handle:
        return yaml.safe_load(handle)


def assert_specs_mirror_defaults(role_dir, prefix, types):
    """Every default has an option with a description, the same default, a matching type and an allowed choice."""
    defaults = _yaml(role_dir, "defaults", "main.yml")
    options = _yaml(role_dir, "meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(options) == sorted(defaults)
    for name, spec in options.items():
        assert name.startswith(prefix)
        assert spec.get("description"), name
        assert spec["default"] == defaults[name], name
        assert isinstance(defaults[name], types[spec["type"]]), name
        if "choices" in spec:
            assert defaults[name] in spec["choices"], name


def collections_path():
    """The folder that holds ansible_collections/ (the tests import the collection from there)."""
    import ansible_collections.rdma.fabric as pkg
    return os.path.abspath(os.path.join(list(pkg.__path__)[0], "..", "..", ".."))
