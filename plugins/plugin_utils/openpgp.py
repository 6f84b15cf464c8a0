# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fingerprints of OpenPGP public keys, computed in pure Python.

Used to pin a package repository's signing key (the rdma.fabric.mofed role
checks the fingerprint of the key it downloads before apt or dnf trusts it)
without needing ``gpg`` on the target or on the controller.

Reads what key files are in practice: one or more ASCII-armoured blocks
(``-----BEGIN PGP PUBLIC KEY BLOCK-----``, RFC 4880 section 6.2) or binary
transferable public keys (a "keyring" as written by ``gpg --export``).
Fingerprints follow RFC 4880 section 12.2 (version 4: SHA-1) and RFC 9580
section 5.5.4 (version 6: SHA-256; version 5 as GnuPG writes it: SHA-256
with prefix 0x9a).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64
import binascii
import hashlib
import re
import struct

TAG_PUBLIC_KEY = 6
TAG_USER_ID = 13
TAG_PUBLIC_SUBKEY = 14
TAG_SECRET_KEY = 5
TAG_SECRET_SUBKEY = 7

# RFC 9580 section 9.1 (public-key algorithm ids).
ALGORITHMS = {
    1: "RSA", 2: "RSA", 3: "RSA", 16: "ElGamal", 17: "DSA", 18: "ECDH",
    19: "ECDSA", 22: "EdDSA", 25: "X25519", 26: "X448", 27: "Ed25519", 28: "Ed448",
}

_ARMOR_RE = re.compile(
    r"-----BEGIN PGP (?P<kind>[A-Z ]+)-----\r?\n(?P<body>.*?)-----END PGP (?P=kind)-----", re.S)


class OpenPGPError(ValueError):
    """The data is not (or not only) OpenPGP public key material."""


def dearmor(text):
    """Binary packets of every ``PUBLIC KEY BLOCK`` in ``text``.

    Armour headers (``Comment:`` ...) are skipped; the CRC-24 line, when there,
    is checked.
    """
    blocks = [m for m in _ARMOR_RE.finditer(text) if m.group("kind") == "PUBLIC KEY BLOCK"]
    if not blocks:
        if "-----BEGIN PGP" in text:
            raise OpenPGPError("armoured data holds no PUBLIC KEY BLOCK (a private key or a signature?)")
        raise OpenPGPError("no ASCII-armoured OpenPGP block found")
    out = b""
    for m in blocks:
        lines = m.group("body").splitlines()
        # Headers end at the first empty line; a block without headers may omit it.
        if any(not ln.strip() for ln in lines):
            lines = lines[[i for i, ln in enumerate(lines) if not ln.strip()][0] + 1:]
        crc = None
        data_lines = []
        for ln in (ln.strip() for ln in lines):
            if not ln:
                continue
            if ln.startswith("=") and len(ln) == 5:
                crc = ln[1:]
            else:
                data_lines.append(ln)
        try:
            data = base64.b64decode("".join(data_lines), validate=True)
        except (binascii.Error, ValueError) as e:
            raise OpenPGPError("armoured block is not valid base64: %s" % e)
        if crc is not None and base64.b64encode(struct.pack(">I", crc24(data))[1:]).decode() != crc:
            raise OpenPGPError("armour checksum (CRC-24) mismatch: the key file is corrupt")
        out += data
    return out


def crc24(data):
    """RFC 4880 section 6.1 CRC-24."""
    crc = 0xB704CE
    for byte in bytearray(data):
        crc ^= byte << 16
        for _i in range(8):
            crc <<= 1
            if crc & 0x1000000:
                crc ^= 0x1864CFB
    return crc & 0xFFFFFF


def packets(data):
    """Yield ``(tag, body)`` for each packet of binary OpenPGP data."""
    data = bytearray(data)
    pos = 0
    while pos < len(data):
        head = data[pos]
        if not head & 0x80:
            raise OpenPGPError("byte %d is not an OpenPGP packet header" % pos)
        pos += 1
        if head & 0x40:  # new format
            tag = head & 0x3F
            if pos >= len(data):
                raise OpenPGPError("truncated packet header")
            first = data[pos]
            if first < 192:
                length, pos = first, pos + 1
            elif first < 224:
                if pos + 1 >= len(data):
                    raise OpenPGPError("truncated packet header")
                length, pos = ((first - 192) << 8) + data[pos + 1] + 192, pos + 2
            elif first == 255:
                if pos + 4 >= len(data):
                    raise OpenPGPError("truncated packet header")
                length, pos = struct.unpack(">I", bytes(data[pos + 1:pos + 5]))[0], pos + 5
            else:
                raise OpenPGPError("partial body lengths do not occur in key material")
        else:  # old format
            tag = (head >> 2) & 0x0F
            ltype = head & 0x03
            if ltype == 3:
                raise OpenPGPError("indeterminate packet length does not occur in key material")
            size = (1, 2, 4)[ltype]
            if pos + size > len(data):
                raise OpenPGPError("truncated packet header")
            length = int(binascii.hexlify(bytes(data[pos:pos + size])), 16)
            pos += size
        if pos + length > len(data):
            raise OpenPGPError("truncated packet (tag %d)" % tag)
        yield tag, bytes(data[pos:pos + length])
        pos += length


def key_fingerprint(body):
    """``(version, fingerprint hex upper, algorithm id)`` of a key packet body."""
    if not body:
        raise OpenPGPError("empty key packet")
    version = bytearray(body)[0]
    if version == 4:
        digest = hashlib.sha1(b"\x99" + struct.pack(">H", len(body)) + body).hexdigest()
        algo = bytearray(body)[5]
    elif version in (5, 6):
        prefix = b"\x9a" if version == 5 else b"\x9b"
        digest = hashlib.sha256(prefix + struct.pack(">I", len(body)) + body).hexdigest()
        algo = bytearray(body)[5]
    else:
        raise OpenPGPError("version %d keys have no fingerprint this module can compute (only 4, 5, 6)" % version)
    return version, digest.upper(), algo


def parse_keys(data):
    """Primary keys (with their user IDs and subkeys) in OpenPGP data.

    ``data``: ``bytes`` (binary or armoured) or ``str`` (armoured). Returns a
    list of dicts ``{fingerprint, key_id, version, algorithm, user_ids,
    subkeys: [{fingerprint, key_id, version, algorithm}]}``.
    Raises :class:`OpenPGPError` on anything that is not public key material.
    """
    if isinstance(data, bytes):
        stripped = data.lstrip()
        if stripped.startswith(b"-----BEGIN PGP"):
            data = dearmor(stripped.decode("ascii", "replace"))
    else:
        data = dearmor(data)
    keys = []
    for tag, body in packets(data):
        if tag in (TAG_SECRET_KEY, TAG_SECRET_SUBKEY):
            raise OpenPGPError("secret key material found: give the public key only")
        if tag in (TAG_PUBLIC_KEY, TAG_PUBLIC_SUBKEY):
            version, fpr, algo = key_fingerprint(body)
            entry = {
                "fingerprint": fpr,
                "key_id": fpr[-16:] if version == 4 else fpr[:16],
                "version": version,
                "algorithm": ALGORITHMS.get(algo, "unknown(%d)" % algo),
            }
            if tag == TAG_PUBLIC_KEY:
                entry.update({"user_ids": [], "subkeys": []})
                keys.append(entry)
            else:
                if not keys:
                    raise OpenPGPError("subkey packet before any primary key")
                keys[-1]["subkeys"].append(entry)
        elif tag == TAG_USER_ID and keys:
            keys[-1]["user_ids"].append(body.decode("utf-8", "replace"))
    if not keys:
        raise OpenPGPError("no public key packet found")
    return keys


def normalize_fingerprint(text):
    """Upper-case hex without spaces (``gpg`` prints fingerprints in groups)."""
    fpr = re.sub(r"\s+", "", str(text)).upper()
    if fpr.startswith("0X"):
        fpr = fpr[2:]
    if not re.fullmatch(r"[0-9A-F]{40}|[0-9A-F]{64}", fpr):
        raise OpenPGPError("%r is not a 40- or 64-digit hex fingerprint" % (text,))
    return fpr
