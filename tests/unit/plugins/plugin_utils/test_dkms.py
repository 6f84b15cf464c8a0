# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""dkms status parsing over real dkms 2.8.4 / 3.0.10 output (fixtures/dkms)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import dkms

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "dkms")
K = "6.1.0-28-amd64"
V = "24.10.OFED.24.10.1.1.4.1"


def status(version, name):
    with open(os.path.join(FIX, "dkms%d-%s.txt" % (version, name))) as f:
        return f.read()


@pytest.mark.parametrize("version", [2, 3])
def test_healthy(version):
    entries, unparsed = dkms.parse_status(status(version, "healthy"))
    assert unparsed == []
    assert [(e["module"], e["version"], e["kernel"], e["arch"], e["state"]) for e in entries] == [
        ("knem", "1.1.4.90mlnx3", K, "x86_64", "installed"),
        ("mlnx-ofed-kernel", V, "6.1.0-27-amd64", "x86_64", "installed"),
        ("mlnx-ofed-kernel", V, K, "x86_64", "installed"),
    ]
    assert dkms.problems_for_kernel(entries, K, ["mlnx-ofed-kernel"]) == []


@pytest.mark.parametrize("version", [2, 3])
def test_new_kernel_without_build(version):
    entries, _unparsed = dkms.parse_status(status(version, "new-kernel"))
    assert dkms.problems_for_kernel(entries, K) == [
        "mlnx-ofed-kernel: no build for the running kernel %s (built for: 6.1.0-27-amd64)" % K]
    # the old kernel itself is fine
    assert dkms.problems_for_kernel(entries, "6.1.0-27-amd64") == []


@pytest.mark.parametrize("version", [2, 3])
def test_broken(version):
    entries, unparsed = dkms.parse_status(status(version, "broken"))
    assert unparsed == []
    knem = entries[0]
    assert knem["state"] == "installed"
    assert knem["warnings"] == ["WARNING! Diff between built and installed module!"]
    srp = entries[2]
    assert (srp["module"], srp["version"], srp["kernel"], srp["state"]) == ("srp", V, None, "added")
    assert dkms.problems_for_kernel(entries, K, ["mlnx-ofed-kernel"]) == [
        "knem/1.1.4.90mlnx3 on %s: WARNING! Diff between built and installed module!" % K,
        "mlnx-ofed-kernel/%s: built for %s but not installed" % (V, K),
        "srp/%s: added but never built" % V,
    ]


@pytest.mark.parametrize("version", [2, 3])
def test_empty(version):
    entries, unparsed = dkms.parse_status(status(version, "empty"))
    assert (entries, unparsed) == ([], [])
    assert dkms.problems_for_kernel(entries, K) == []
    assert dkms.problems_for_kernel(entries, K, ["mlnx-ofed-kernel"]) == ["mlnx-ofed-kernel: not registered with DKMS"]


def test_weak_and_notes_and_noise():
    text = "\n".join([
        "Deprecated feature: REMAKE_INITRD (/var/lib/dkms/x/1/source/dkms.conf)",
        "nvidia, 535.54.03, 6.1.0-28-amd64, x86_64: installed-weak from 6.1.0-27-amd64",
        "virtualbox-guest, 4.3.36, 3.16.0-38-generic, x86_64: installed (original_module exists)",
        "Error! Could not locate dkms.conf file.",
        "",
    ])
    entries, unparsed = dkms.parse_status(text)
    assert unparsed == ["Deprecated feature: REMAKE_INITRD (/var/lib/dkms/x/1/source/dkms.conf)",
                        "Error! Could not locate dkms.conf file."]
    assert entries[0]["state"] == "installed-weak"
    assert entries[0]["weak_from"] == "6.1.0-27-amd64"
    assert entries[1]["notes"] == ["original_module exists"]
    assert entries[1]["warnings"] == []
    assert dkms.problems_for_kernel(entries, K) == [
        "virtualbox-guest: no build for the running kernel %s (built for: 3.16.0-38-generic)" % K]
