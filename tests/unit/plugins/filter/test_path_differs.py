# -*- coding: utf-8 -*-
"""Unit tests for the path_differs filter, on the records the host_state module returns.

The records are read from real files under tmp_path by
module_utils.host_state.read_path, the function whose result the host_state
module returns for each path, so the pair is tested as the roles use it. (Moved here from the module's tests:
ansible-test runs tests/unit/plugins/modules where controller code, such as
this filter and ansible.errors, cannot be imported.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import hashlib
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.path_differs import path_differs
from ansible_collections.rdma.fabric.plugins.module_utils.facts.host_state import read_path


def test_records_as_the_roles_use_them(tmp_path):
    f = tmp_path / "x.conf"
    f.write_text(u"a=1\n")
    os.chmod(str(f), 0o644)
    rec = read_path(str(f))
    gone = read_path(str(tmp_path / "gone"))
    assert gone == {"exists": False}
    # the record says the same content and mode need no write...
    assert not path_differs(rec, sha1=hashlib.sha1(b"a=1\n").hexdigest(), mode="0644")
    # ...and other content, a missing file, or a file where a folder is wanted do.
    assert path_differs(rec, sha1=hashlib.sha1(b"a=2\n").hexdigest(), mode="0644")
    assert path_differs(gone, sha1=rec["sha1"])
    assert path_differs(rec, state="directory")


def test_filter_rejects_bad_input():
    with pytest.raises(AnsibleFilterError, match="state must be one of file, directory, absent"):
        path_differs({"exists": False}, state="link")
    with pytest.raises(AnsibleFilterError, match="one record of host_state"):
        path_differs("/etc/x")
    with pytest.raises(AnsibleFilterError, match="octal"):
        path_differs({"exists": True, "type": "file", "mode": "0644"}, mode="rw-r--r--")
