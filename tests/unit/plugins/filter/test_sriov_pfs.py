# -*- coding: utf-8 -*-
"""Unit tests for the sriov_pfs filter (controller side: the sriov role's input rules).

Moved out of tests/unit/plugins/modules/ because ansible-test runs module tests where controller code
(ansible.errors) cannot be imported.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import pytest

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

from ansible_collections.rdma.fabric.plugins.filter.sriov_pfs import sriov_pfs
from ansible_collections.rdma.fabric.plugins.module_utils.argspec.list_options import list_of_dicts
from ansible_collections.rdma.fabric.plugins.modules import sriov_vfs

PF = {"netdev": "eth2", "numvfs": 2, "vfs": [{"index": 0, "mac": "52:54:00:10:00:01", "trust": True, "spoofchk": False}]}


def test_filter_normalises_and_renders_boot_commands():
    (pf,) = sriov_pfs([PF], param="sriov_pfs")
    assert pf["numvfs"] == 2 and pf["state"] == "present"
    assert pf["boot_commands"] == [["ip", "link", "set", "eth2", "vf", "0", "mac", "52:54:00:10:00:01", "trust", "on",
                                    "spoofchk", "off"]]
    with pytest.raises(AnsibleFilterError) as err:
        sriov_pfs([{"netdev": "eth2", "numvfs": -1}], param="sriov_pfs")
    assert "Invalid sriov_pfs[0] (eth2): numvfs must be a whole number" in str(err.value)


def test_filter_output_is_what_the_module_takes():
    """The sriov role hands the filter's PFs (less boot_commands) to sriov_vfs: settings a VF leaves out must not
    reach the module as null (an explicit null link_state fails the module's choices: the lab's fabric_kinds)."""
    pfs = sriov_pfs([PF, {"netdev": "eth3", "numvfs": 1, "vfs": [{"link_state": "disable"}]},
                     {"netdev": "eth4", "state": "absent"}], param="sriov_pfs")
    assert [pf["vfs"] for pf in pfs] == [[{"index": 0, "mac": "52:54:00:10:00:01", "trust": True, "spoofchk": False}],
                                         [{"index": 0, "link_state": "disable"}], []]
    args = [dict((k, v) for k, v in pf.items() if k != "boot_commands") for pf in pfs]
    result = ArgumentSpecValidator(sriov_vfs.ARGUMENT_SPEC).validate({"pfs": args})
    assert result.error_messages == []
    # pfs[].vfs as the module's main() checks it (declared raw, then list_of_dicts with VF_OPTIONS)
    vfs = [list_of_dicts("pfs[%d].vfs" % i, pf["vfs"], sriov_vfs.VF_OPTIONS, sriov_vfs.VFS_FORM)
           for i, pf in enumerate(result.validated_parameters["pfs"])]
    assert [vf["link_state"] for vf in vfs[0]] == [None] and vfs[1][0]["link_state"] == "disable"
