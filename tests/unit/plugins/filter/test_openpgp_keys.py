# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The openpgp_keys filter: input encodings (armoured text, slurp's base64) and errors."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import os

import pytest

from ansible.errors import AnsibleFilterError

from ansible_collections.rdma.fabric.plugins.filter.openpgp_keys import FilterModule, openpgp_keys

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "openpgp")
ED25519 = "D7D585EDF0DBAC6A409D64FB0036994EB443B8EF"
RSA = "6B5D4C478F1DF05CC96829D3686FA8953FFBE315"


def read(name):
    with open(os.path.join(FIX, name), "rb") as f:
        return f.read()


def fprs(keys):
    return [k["fingerprint"] for k in keys]


def test_registered():
    assert FilterModule().filters() == {"openpgp_keys": openpgp_keys}


def test_armoured_text():
    assert fprs(openpgp_keys(read("two-keys.asc").decode())) == [ED25519, RSA]


@pytest.mark.parametrize("name", ["two-keys.asc", "two-keys.gpg"])
def test_slurp_base64(name):
    # what ansible.builtin.slurp returns in `content`
    content = base64.b64encode(read(name)).decode()
    assert fprs(openpgp_keys(content)) == [ED25519, RSA]
    assert fprs(openpgp_keys(content, encoding="base64")) == [ED25519, RSA]


def test_subkeys_and_uids():
    key = openpgp_keys(read("two-keys.asc").decode())[0]
    assert key["user_ids"] == ["rdma.fabric unit-test key (ed25519) <unit-test@example.invalid>"]
    assert [s["fingerprint"] for s in key["subkeys"]] == ["0A292033CBE822FD3DA152AD10CF621F9E34D68F"]


@pytest.mark.parametrize("data,encoding,message", [
    ("not base64 !!", "auto", "neither an armoured key nor base64"),
    (base64.b64encode(b"<html>nope</html>").decode(), "auto", "not an OpenPGP public key"),
    ("abc", "pem", "encoding must be one of auto, text, base64"),
])
def test_errors(data, encoding, message):
    with pytest.raises(AnsibleFilterError, match=message):
        openpgp_keys(data, encoding=encoding)
