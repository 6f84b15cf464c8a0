# -*- coding: utf-8 -*-
"""meta/argument_specs.yml of k8s_rdma_stack mirrors defaults/main.yml: same
names, every default documented with the same value and a matching type."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import yaml

ROLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "roles", "k8s_rdma_stack")
TYPES = {"str": str, "bool": bool, "int": int, "list": list, "dict": dict}


def _yaml(*parts):
    with open(os.path.join(ROLE, *parts)) as f:
        return yaml.safe_load(f)


def test_specs_mirror_defaults():
    defaults = _yaml("defaults", "main.yml")
    options = _yaml("meta", "argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(options) == sorted(defaults)
    for name, spec in options.items():
        assert name.startswith("k8s_rdma_stack_")
        assert spec.get("description"), name
        assert "default" in spec, name
        assert spec["default"] == defaults[name], name
        if defaults[name] is not None and spec["type"] in TYPES:
            assert isinstance(defaults[name], TYPES[spec["type"]]), name
        if "choices" in spec and spec["type"] == "str":
            assert defaults[name] in spec["choices"], name
