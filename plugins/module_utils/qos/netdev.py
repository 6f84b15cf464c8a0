# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Netdev settings next to QoS: MTU (sysfs read, ``ip link set`` write) and
global (802.3x) pause frames (``ethtool -a`` read, ``ethtool -A`` write).

``ethtool -a`` prints (ethtool 5.x/6.x; tabs vary, older versions lack the
``negotiated`` lines)::

    Pause parameters for eth0:
    Autonegotiate:	on
    RX:		off
    TX:		off
    RX negotiated: on
    TX negotiated: on

Drivers without pause support (virtio) make ``ethtool -a`` fail with
``netlink error: Operation not supported`` (ethtool 6.1, exit status 1).
``pause: true`` means RX and TX pause on, ``false`` both off; autonegotiation
is left as it is. Lossless RoCE uses PFC, which drivers such as mlx5 only run
with global pause off.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.qos.backend import QosBackend
from ansible_collections.rdma.fabric.plugins.module_utils.qos.commands import command_step, quote_argv
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import (
    CommandError,
    QosError,
    UnsupportedError,
)

_PAUSE_RE = re.compile(r"\s*(Autonegotiate|RX|TX)\s*:\s*(\S+)\s*")


def parse_pause(text):
    """``ethtool -a`` text -> ``{"autoneg": bool, "rx": bool, "tx": bool}``."""
    out = {}
    names = {"Autonegotiate": "autoneg", "RX": "rx", "TX": "tx"}
    for line in (text or "").splitlines():
        m = _PAUSE_RE.fullmatch(line)
        if m:
            out[names[m.group(1)]] = m.group(2).lower() in ("on", "yes", "enabled")
    if "rx" not in out or "tx" not in out:
        raise QosError("cannot parse `ethtool -a` output: %r" % (text or "")[:300])
    out.setdefault("autoneg", False)
    return out


def pause_value(parsed):
    """The module's view of pause: True (RX and TX on), False (both off), or a text for mixed."""
    if parsed["rx"] and parsed["tx"]:
        return True
    if not parsed["rx"] and not parsed["tx"]:
        return False
    return "rx %s, tx %s" % ("on" if parsed["rx"] else "off", "on" if parsed["tx"] else "off")


class MtuLink(QosBackend):
    """MTU: read from sysfs, set with iproute2 ``ip link``."""

    name = "iproute2"
    keys = ("mtu",)

    def read(self, desired):
        self.ip = self.runner.which("ip", required=True)
        path = self.tree.sys("class", "net", self.netdev, "mtu")
        mtu = self.tree.read_int(path)
        if mtu is None:
            raise QosError("cannot read the MTU of %s from %s" % (self.netdev, path))
        return {"mtu": mtu}

    def plan(self, current, desired):
        if current["mtu"] == desired["mtu"]:
            return []
        argv = [self.ip, "link", "set", "dev", self.netdev, "mtu"]
        return [command_step(self.runner, "mtu", argv + [str(desired["mtu"])], argv + [str(current["mtu"])])]


class PauseLink(QosBackend):
    """Global pause frames: read with ``ethtool -a``, set with ``ethtool -A`` (RX and TX together)."""

    name = "ethtool"
    keys = ("pause",)

    def read(self, desired):
        self.ethtool = self.runner.which("ethtool", required=False)
        if not self.ethtool:
            raise QosError("pause: the ethtool command is not installed (package ethtool); it reads and sets pause frames")
        argv = [self.ethtool, "-a", self.netdev]
        rc, out, err = self.runner.run(argv, check=False)
        if rc != 0:
            if "not supported" in (out + err).lower():
                raise UnsupportedError(("pause",), "%s: the driver does not support pause frames: `%s` says %r"
                                       % (self.netdev, quote_argv(argv), (err or out).strip()))
            raise CommandError(quote_argv(argv), rc, out, err)
        self.pause_raw = parse_pause(out)
        return {"pause": pause_value(self.pause_raw)}

    def plan(self, current, desired):
        if current["pause"] == desired["pause"]:
            return []
        on = "on" if desired["pause"] else "off"
        old = self.pause_raw
        argv = [self.ethtool, "-A", self.netdev]
        return [command_step(self.runner, "pause", argv + ["rx", on, "tx", on],
                             argv + ["rx", "on" if old["rx"] else "off", "tx", "on" if old["tx"] else "off"])]
