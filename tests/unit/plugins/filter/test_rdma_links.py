# -*- coding: utf-8 -*-
"""The rdma_links filter: rdma_link's rules for roles (the soft_roce role's validation)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.rdma_links import FilterModule, rdma_links


def test_registered_and_normalises():
    assert FilterModule().filters()["rdma_links"] is rdma_links
    assert rdma_links([{"name": "rxe0", "netdev": "eth1"}, {"name": "old"}], default_state="absent") == [
        {"name": "rxe0", "type": "rxe", "netdev": "eth1", "state": "absent"},
        {"name": "old", "type": "rxe", "netdev": None, "state": "absent"},
    ]


def test_bad_input_names_the_variable():
    with pytest.raises(AnsibleFilterError) as err:
        rdma_links([{"name": "rxe9", "netdev": "eth1;reboot"}], param="soft_roce_links")
    assert "Invalid soft_roce_links[0] (rxe9): netdev 'eth1;reboot' is not an interface name" in str(err.value)
