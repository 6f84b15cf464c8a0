# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The dkms_status filter over real dkms 3.0.10 output (fixtures/dkms)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.dkms_status import FilterModule, dkms_status

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "dkms")
K = "6.1.0-28-amd64"


def read(name):
    with open(os.path.join(FIX, name)) as f:
        return f.read()


def test_registered():
    assert FilterModule().filters() == {"dkms_status": dkms_status}


def test_without_kernel_only_parses():
    out = dkms_status(read("dkms3-broken.txt"))
    assert [e["state"] for e in out["entries"]] == ["installed", "built", "added"]
    assert out["problems"] == []
    assert out["unparsed"] == []


def test_problems_for_kernel():
    out = dkms_status(read("dkms3-new-kernel.txt"), kernel=K, required=["mlnx-ofed-kernel", "knem"])
    assert out["problems"] == [
        "knem: not registered with DKMS",
        "mlnx-ofed-kernel: no build for the running kernel %s (built for: 6.1.0-27-amd64)" % K,
    ]
    assert dkms_status(read("dkms3-healthy.txt"), kernel=K, required=["knem"])["problems"] == []


def test_none_input():
    assert dkms_status(None, kernel=K) == {"entries": [], "unparsed": [], "problems": []}


@pytest.mark.parametrize("required", ["mlnx-ofed-kernel", [1]])
def test_required_must_be_list_of_names(required):
    with pytest.raises(AnsibleFilterError, match="required must be a list"):
        dkms_status("", kernel=K, required=required)
