# -*- coding: utf-8 -*-
"""meta/argument_specs.yml of k8s_rdma_stack mirrors defaults/main.yml: same
names, every default documented with the same value and a matching type."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.tests.unit.roles.role_specs import assert_specs_mirror_defaults


def test_specs_mirror_defaults():
    assert_specs_mirror_defaults("k8s_rdma_stack")
