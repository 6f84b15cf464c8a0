# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the modules' argument specs share (host side, in modules only: AnsiballZ ships it).

* :mod:`.list_options` - options that take a list of mappings, refused naming the option (ansible-core's
  validator, imported when called: the host runtime never calls it).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
