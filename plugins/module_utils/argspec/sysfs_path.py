# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The ``sysfs_path`` option of every module that reads sysfs, written once: this argument spec, the doc
fragment ``rdma.fabric.sysfs`` (``plugins/doc_fragments/sysfs.py``) and one validity rule
(``facts.sysfs.check_sysfs_root``: an existing folder with a ``class``, ``devices`` or ``module``
sub-folder, checked before anything is read).

``gpudirect`` takes the same option with no default (its default is ``<host_root>/sys``) and documents that
itself; the rule is the same.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

SYSFS_PATH = dict(type="path", default="/sys")
