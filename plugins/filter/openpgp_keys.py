# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: openpgp_keys
short_description: Fingerprints and user IDs of OpenPGP public keys
version_added: 0.1.0
author: rdma.fabric developers
description:
  - Parses OpenPGP public key material (ASCII-armoured or binary, one or more keys) in pure Python
    and returns each primary key with its fingerprint, key ID, algorithm, user IDs and subkeys.
  - Used to pin a package repository's signing key to a known fingerprint before apt or dnf
    trusts it, without C(gpg) on the target or the controller.
  - Fails on data that is not public key material (for example a private key, a signature or an HTML page).
options:
  _input:
    description:
      - The key data. Either the armoured text, or the base64 text that M(ansible.builtin.slurp) returns
        in C(content) (armoured or binary key inside).
    type: str
    required: true
  encoding:
    description:
      - How O(_input) is encoded. V(auto) takes text that contains an armour header as armoured and
        anything else as base64.
    type: str
    default: auto
    choices: [auto, text, base64]
"""

EXAMPLES = r"""
- name: Read the downloaded key
  ansible.builtin.slurp:
    src: /var/cache/example/repo-key.download
  register: key

- name: Refuse a key whose fingerprint is not the pinned one
  ansible.builtin.assert:
    that: pinned in (key.content | rdma.fabric.openpgp_keys | map(attribute='fingerprint'))
  vars:
    pinned: 2EA1AF4D5AF7FE20F5A97A23E7AF4F3A8D7FFDE7
"""

RETURN = r"""
_value:
  description: The primary keys found, in file order.
  type: list
  elements: dict
  contains:
    fingerprint:
      description: Upper-case hex fingerprint (40 digits for version 4 keys, 64 for versions 5 and 6).
      type: str
    key_id:
      description: The key ID (the last 16 hex digits of a version 4 fingerprint, the first 16 of later versions).
      type: str
    version:
      description: Key packet version.
      type: int
    algorithm:
      description: Public-key algorithm name (RSA, DSA, EdDSA, Ed25519, ...).
      type: str
    user_ids:
      description: The key's user IDs.
      type: list
      elements: str
    subkeys:
      description: Subkeys, each with C(fingerprint), C(key_id), C(version) and C(algorithm).
      type: list
      elements: dict
"""

import base64
import binascii

from ansible.errors import AnsibleFilterError
from ansible.module_utils.common.text.converters import to_bytes, to_text

from ansible_collections.rdma.fabric.plugins.plugin_utils.openpgp import OpenPGPError, parse_keys


def openpgp_keys(data, encoding="auto"):
    """The primary keys in ``data`` (see DOCUMENTATION)."""
    if encoding not in ("auto", "text", "base64"):
        raise AnsibleFilterError("openpgp_keys: encoding must be one of auto, text, base64; got %r" % (encoding,))
    text = to_text(data, errors="surrogate_or_strict")
    if encoding == "text" or (encoding == "auto" and "-----BEGIN PGP" in text):
        raw = to_bytes(text)
    else:
        try:
            raw = base64.b64decode("".join(text.split()), validate=True)
        except (binascii.Error, ValueError) as e:
            raise AnsibleFilterError("openpgp_keys: input is neither an armoured key nor base64: %s" % e)
    try:
        return parse_keys(raw)
    except OpenPGPError as e:
        raise AnsibleFilterError("openpgp_keys: not an OpenPGP public key: %s" % e)


class FilterModule(object):
    """rdma.fabric OpenPGP key filter."""

    def filters(self):
        return {"openpgp_keys": openpgp_keys}
