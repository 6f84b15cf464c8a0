# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""OpenPGP fingerprints against GnuPG's own answers (fixtures/openpgp/*.colons)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import struct

import pytest

from ansible_collections.rdma.fabric.plugins.plugin_utils import openpgp

FIX = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "openpgp")


def read(name, mode="rb"):
    with open(os.path.join(FIX, name), mode) as f:
        return f.read()


def gpg_view(name):
    """[(primary fpr, [uids], [subkey fprs])] from `gpg --show-keys --with-colons`."""
    keys, last = [], None
    for line in read(name, "r").splitlines():
        fields = line.split(":")
        if fields[0] in ("pub", "sub"):
            last = fields[0]
        elif fields[0] == "fpr":
            if last == "pub":
                keys.append((fields[9], [], []))
            else:
                keys[-1][2].append(fields[9])
        elif fields[0] == "uid":
            keys[-1][1].append(fields[9])
    return keys


def view(keys):
    return [(k["fingerprint"], k["user_ids"], [s["fingerprint"] for s in k["subkeys"]]) for k in keys]


@pytest.mark.parametrize("keyring,colons", [
    ("debian-archive-keyring.gpg", "debian-archive-keyring.colons"),
    ("debian-archive-bookworm-stable.gpg", "debian-archive-bookworm-stable.colons"),
    ("two-keys.gpg", "two-keys.colons"),
    ("two-keys.asc", "two-keys.colons"),
])
def test_fingerprints_match_gnupg(keyring, colons):
    expected = gpg_view(colons)
    assert view(openpgp.parse_keys(read(keyring))) == expected


def test_debian_keyring_values():
    keys = openpgp.parse_keys(read("debian-archive-keyring.gpg"))
    assert len(keys) == 9
    bookworm = [k for k in keys if k["fingerprint"] == "4D64FEC119C2029067D6E791F8D2585B8783D481"][0]
    assert bookworm["algorithm"] == "EdDSA"
    assert bookworm["version"] == 4
    assert bookworm["key_id"] == "F8D2585B8783D481"
    assert bookworm["user_ids"] == ["Debian Stable Release Key (12/bookworm) <debian-release@lists.debian.org>"]
    assert bookworm["subkeys"] == []
    auto = [k for k in keys if k["fingerprint"] == "B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8"][0]
    assert auto["algorithm"] == "RSA"
    assert auto["subkeys"] == [{"fingerprint": "4CB50190207B4758A3F73A796ED0E7B82643E131",
                                "key_id": "6ED0E7B82643E131", "version": 4, "algorithm": "RSA"}]


def test_armoured_text_and_bytes_agree():
    text = read("two-keys.asc", "r")
    assert openpgp.parse_keys(text) == openpgp.parse_keys(text.encode("ascii"))
    assert openpgp.parse_keys(text) == openpgp.parse_keys(read("two-keys.gpg"))


def test_armour_with_leading_text_and_two_blocks():
    text = read("two-keys.asc", "r")
    doubled = "Here is our key:\n" + text + "\nand again\n" + text
    assert len(openpgp.parse_keys(doubled)) == 4


def test_corrupt_armour_checksum_is_refused():
    text = read("two-keys.asc", "r")
    lines = text.splitlines()
    crc_index = [i for i, ln in enumerate(lines) if ln.startswith("=") and len(ln) == 5][0]
    lines[crc_index] = "=AAAA" if lines[crc_index] != "=AAAA" else "=BBBB"
    with pytest.raises(openpgp.OpenPGPError, match="CRC-24"):
        openpgp.parse_keys("\n".join(lines))


@pytest.mark.parametrize("data,message", [
    ("<html>404 Not Found</html>", "no ASCII-armoured"),
    ("-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n", "no PUBLIC KEY BLOCK"),
    (b"\x00\x01\x02", "not an OpenPGP packet header"),
    (b"", "no public key packet"),
    # a secret-key packet (new format, tag 5) with a one-byte body
    (b"\xc5\x01\x04", "secret key material"),
    # a version 3 key packet
    (b"\x99\x00\x01\x03", "version 3"),
    # a subkey before any primary key
    (b"\xb9\x00\x06\x04\x00\x00\x00\x00\x16", "subkey packet before"),
    # truncated: header says 16 bytes, 2 follow
    (b"\xc6\x10\x04\x00", "truncated"),
])
def test_bad_input_is_refused(data, message):
    with pytest.raises(openpgp.OpenPGPError, match=message):
        openpgp.parse_keys(data)


def test_new_format_lengths_and_v6_fingerprint():
    # A synthetic version 6 key packet (RFC 9580): the fingerprint is
    # SHA-256(0x9b || 4-byte length || body); exercise the two- and five-byte
    # new-format length encodings on the way.
    import hashlib
    body = b"\x06" + struct.pack(">I", 1700000000) + bytes([27]) + struct.pack(">I", 300) + b"\x11" * 300
    expected = hashlib.sha256(b"\x9b" + struct.pack(">I", len(body)) + body).hexdigest().upper()
    n = len(body) - 192
    two_byte = bytes([0xC6, (n >> 8) + 192, n & 0xFF]) + body
    five_byte = bytes([0xC6, 0xFF]) + struct.pack(">I", len(body)) + body
    for data in (two_byte, five_byte):
        keys = openpgp.parse_keys(data)
        assert keys[0]["fingerprint"] == expected
        assert keys[0]["version"] == 6
        assert keys[0]["algorithm"] == "Ed25519"
        assert keys[0]["key_id"] == expected[:16]


def test_crc24_known_value():
    # RFC 4880 CRC-24 of the empty string is the initial value.
    assert openpgp.crc24(b"") == 0xB704CE


@pytest.mark.parametrize("text,expected", [
    ("4D64 FEC1 19C2 0290 67D6  E791 F8D2 585B 8783 D481", "4D64FEC119C2029067D6E791F8D2585B8783D481"),
    ("0x4d64fec119c2029067d6e791f8d2585b8783d481", "4D64FEC119C2029067D6E791F8D2585B8783D481"),
])
def test_normalize_fingerprint(text, expected):
    assert openpgp.normalize_fingerprint(text) == expected


def test_normalize_fingerprint_refuses_key_ids():
    with pytest.raises(openpgp.OpenPGPError, match="40- or 64-digit"):
        openpgp.normalize_fingerprint("F8D2585B8783D481")
