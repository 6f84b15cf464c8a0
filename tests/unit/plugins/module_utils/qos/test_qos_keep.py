# -*- coding: utf-8 -*-
"""roce_qos's kept files (module_utils/qos/keep.py): the values before the first apply and the saved settings.

Real files in temporary folders standing in for the collection's (``folders``), owned by the user that runs the
tests (``owner``; the module uses root's). That the text is what the lossless_ethernet role wrote with Ansible's
``to_nice_json`` is checked with the controller's filter in tests/unit/roles/lossless_ethernet/test_kept_files.py.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import stat

import pytest

from ansible_collections.rdma.fabric.plugins.module_utils.common import paths
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import QosError, ValidationError
from ansible_collections.rdma.fabric.plugins.module_utils.qos import keep

ENTRY = {"netdev": "eth1", "roce_tos": 106, "roce_mode": "v2", "dscp2prio": {"8": 1, "26": 3}, "trust": "dscp",
         "backend": "auto", "on_unsupported": "warn"}
RESULT = {"eth1": {"changed": True, "before": {"roce_mode": "v1", "roce_tos": 0}}}


@pytest.fixture
def folders(tmp_path):
    return {"before": str(tmp_path / "var" / "lossless-before"), "saved": str(tmp_path / "etc" / "lossless")}


def kept(folders, kinds=("before", "saved"), check_mode=False):
    return keep.Kept(kinds, check_mode, folders=folders, owner=(os.getuid(), os.getgid()))


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def test_the_folders_are_the_collections():
    assert keep.FOLDERS == {"before": paths.LOSSLESS_BEFORE_DIR, "saved": paths.LOSSLESS_SAVED_DIR}


def test_a_first_run_writes_both_files(folders):
    k = kept(folders)
    k.before(RESULT)
    k.saved([ENTRY])
    before = os.path.join(folders["before"], "eth1.json")
    saved = os.path.join(folders["saved"], "eth1.json")
    assert json.load(open(before)) == {"netdev": "eth1", "before": {"roce_mode": "v1", "roce_tos": 0}}
    assert json.load(open(saved)) == {"netdev": "eth1", "roce_tos": 106, "roce_mode": "v2", "trust": "dscp",
                                      "dscp2prio": {"8": 1, "26": 3}, "backend": "auto", "on_unsupported": "warn"}
    assert (mode(before), mode(saved), mode(folders["before"]), mode(folders["saved"])) == (0o644, 0o644, 0o755, 0o755)
    assert k.changed
    ports = {"eth1": {}}
    k.report(ports)
    assert ports["eth1"]["kept"] == {"before": {"path": before, "changed": True}, "saved": {"path": saved, "changed": True}}
    assert [(d["after_header"], d["before"]) for d in k.diff()] == [(before, ""), (saved, "")]
    # nothing but the two files (the temporary files of the atomic writes are gone)
    assert sorted(os.listdir(folders["before"]) + os.listdir(folders["saved"])) == ["eth1.json", "eth1.json"]


def test_a_second_run_changes_nothing_and_never_replaces_the_before_values(folders):
    kept(folders).before(RESULT)
    kept(folders).saved([ENTRY])
    k = kept(folders)
    k.before({"eth1": {"before": {"roce_mode": "v2", "roce_tos": 106}}})   # what the port has after the first run
    k.saved([ENTRY])
    assert not k.changed and k.diff() == []
    assert json.load(open(os.path.join(folders["before"], "eth1.json")))["before"] == {"roce_mode": "v1", "roce_tos": 0}


def test_saved_settings_that_drifted_are_rewritten(folders):
    kept(folders).saved([ENTRY])
    saved = os.path.join(folders["saved"], "eth1.json")
    os.chmod(saved, 0o600)
    k = kept(folders)
    k.saved([ENTRY])
    assert k.changed and mode(saved) == 0o644
    k = kept(folders)
    k.saved([dict(ENTRY, roce_tos=104)])
    assert k.changed and json.load(open(saved))["roce_tos"] == 104
    assert json.loads(k.diff()[0]["before"])["roce_tos"] == 106


def test_check_mode_writes_nothing_and_says_what_a_run_would(folders):
    k = kept(folders, check_mode=True)
    k.before(RESULT)
    k.saved([ENTRY])
    assert not os.path.exists(folders["before"]) and not os.path.exists(folders["saved"])
    assert k.changed and [json.loads(d["after"])["netdev"] for d in k.diff()] == ["eth1", "eth1"]


def test_only_the_kinds_asked_for(folders):
    k = kept(folders, kinds=("before",))
    k.before(RESULT)
    k.saved([ENTRY])
    assert os.listdir(folders["before"]) == ["eth1.json"] and not os.path.exists(folders["saved"])


def test_a_symlink_in_place_of_a_folder_is_refused(folders, tmp_path):
    os.makedirs(os.path.dirname(folders["saved"]))
    os.symlink(str(tmp_path), folders["saved"])
    with pytest.raises(QosError, match="lossless is not a folder .a symlink is in its place.; nothing was changed"):
        kept(folders).saved([ENTRY])


@pytest.mark.parametrize("value,entries,message", [
    (["after"], [ENTRY], "keep: unknown kind.s. after; allowed: before, saved"),
    (["before"], None, "keep: needs the list form .ports."),
    (["saved"], [{"device": "rxe0", "port": 1}], r"keep: saved needs every port named by netdev \(ports\[0\] has none\)"),
])
def test_bad_keep_names_the_parameter(value, entries, message):
    with pytest.raises(ValidationError, match=message):
        keep.check_keep(value, entries)
    assert keep.check_keep([], None) == ()
