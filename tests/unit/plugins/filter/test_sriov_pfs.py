# -*- coding: utf-8 -*-
"""Unit tests for the sriov_pfs filter (controller side: the sriov role's input rules).

Moved out of tests/unit/plugins/modules/ because ansible-test runs module tests where controller code
(ansible.errors) cannot be imported.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.sriov_pfs import sriov_pfs

PF = {"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:10:00:01", "trust": True, "spoofchk": False}]}


def test_filter_normalises_and_renders_boot_commands():
    (pf,) = sriov_pfs([PF], param="sriov_pfs")
    assert pf["numvfs"] == 2 and pf["state"] == "present"
    assert pf["boot_commands"] == [["ip", "link", "set", "eth2", "vf", "0", "mac", "52:54:00:10:00:01", "trust", "on",
                                    "spoofchk", "off"]]
    with pytest.raises(AnsibleFilterError) as err:
        sriov_pfs([{"netdev": "eth2", "numvfs": -1}], param="sriov_pfs")
    assert "Invalid sriov_pfs[0] (eth2): numvfs must be a whole number" in str(err.value)
