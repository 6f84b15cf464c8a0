# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Numbers in kernel text (sysfs attributes, configfs, PCI IDs): one parser for every reader."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def parse_int(text, base=10):
    """The integer of the first word of ``text`` (``"100 (4X EDR)"`` gives 100; ``base=0`` or 16 reads
    ``0x15b3``), None when ``text`` is None, empty or its first word is not a whole number."""
    if text is None:
        return None
    words = str(text).split()
    if not words:
        return None
    try:
        return int(words[0], base)
    except ValueError:
        return None
