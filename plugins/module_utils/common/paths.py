# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The paths the collection owns on a host, written once, and the rule every path parameter obeys.

The roles write these files; the modules and the host runtime read or hold them. A role's own copy of a
path (its ``vars/main.yml``) names the constant here in a comment.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import posixpath

# The host runtime (built by plugin_utils/host_bundle.py, installed by the host_tools role) and its command.
HOST_RUNTIME = "/usr/lib/rdma-fabric/rdma-fabric.pyz"
HOST_RUNTIME_COMMAND = "/usr/sbin/rdma-fabric"
# lossless_ethernet: each port's saved settings (<netdev>.json), re-applied at boot by ``rdma-fabric qos-apply``.
LOSSLESS_SAVED_DIR = "/etc/rdma-fabric/lossless"
# The host's one QoS lock: roce_qos, qos-apply and the metrics collector's drift read.
QOS_LOCK = "/run/rdma-fabric/qos.lock"
# What the host runtime keeps between runs (the time of the last lossless apply).
STATE_DIR = "/var/lib/rdma-fabric"
# rdma_metrics: the collector's configuration.
METRICS_CONFIG = "/etc/rdma-fabric/metrics.json"
# gpudirect: the peer-memory module loaded at boot, the ACS boot record, the ACS words before the first clear.
GPUDIRECT_MODULES_LOAD = "/etc/modules-load.d/rdma-fabric-gpudirect.conf"
GPUDIRECT_ACS_BOOT_CONFIG = "/etc/rdma-fabric/gpudirect-acs.json"
GPUDIRECT_ACS_SAVED = "/var/lib/rdma-fabric/gpudirect-acs-before.json"


class PathError(ValueError):
    """A path parameter that cannot name a file (the message names the parameter)."""


# Linux's limits: a path of PATH_MAX bytes with its NUL, a name of NAME_MAX (a longer one fails with ENAMETOOLONG).
PATH_MAX = 4096
NAME_MAX = 255


def check_path(param, value, absolute=True):
    """``value`` as a path for parameter ``param``; :class:`PathError` for what no file name may hold.

    A NUL byte makes every system call raise (ValueError in Python, a traceback
    in a module); other control characters (a newline) are legal in Linux
    file names but never in the paths this collection reads or manages, and
    are where injected text would hide. Relative paths are refused with
    ``absolute``; a path or a part longer than Linux takes (PATH_MAX, NAME_MAX)
    is refused before any system call fails on it.
    """
    if not isinstance(value, str) or not value:
        raise PathError("%s: must be a non-empty path, got %r" % (param, value))
    if "\0" in value:
        raise PathError("%s: %r contains a NUL byte; allowed: a path without NUL or other control characters" % (param, value))
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise PathError("%s: %r contains a control character (newline, tab, ...); allowed: a path without them" % (param, value))
    if absolute and not posixpath.isabs(value):
        raise PathError("%s: %r is relative; allowed: an absolute path" % (param, value))
    if len(value) >= PATH_MAX or any(len(part) > NAME_MAX for part in value.split("/")):
        raise PathError("%s: %r... (%d characters) is longer than Linux takes; allowed: a path of at most %d characters, "
                        "each part at most %d" % (param, value[:40], len(value), PATH_MAX - 1, NAME_MAX))
    return value
