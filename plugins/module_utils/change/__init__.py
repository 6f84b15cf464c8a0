# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one change engine of the host side (roce_qos and qos-apply, gpudirect, sriov_vfs).

* :mod:`.engine` - steps with undo, the run that rolls them back on a failure, a read-back that differs or a
  stop signal (SIGTERM, SIGINT, SIGHUP), with what it restored and what it could not.
* :mod:`.files`  - the one atomic file write (a temporary file in the same folder renamed over the old one).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type
