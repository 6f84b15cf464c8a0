# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST DOUBLE of NVIDIA ``mlnx_qos`` for the VM lab (not used by the collection).

NVIDIA's ``mlnx_qos`` (mlnx-tools, ``python/mlnx_qos`` + ``python/Python/
dcbnetlink.py``; behaviour read at mlnx-tools commit 8fbfd9c, 2026-08) is not
in any package registry the lab can reach, so the lab runs this double in its
place: written for this project, it talks real DCB netlink (RTM_GETDCB /
RTM_SETDCB, the same requests mlnx_qos sends) to whatever driver the netdev
has -- in the lab dcbsim with its generic, mlx5 or ice personality -- and so
behaves like the real tool would on that driver:

* ``--dscp2prio set,D,P`` sends one IEEE_SET with the APP entry (DSCP D ->
  priority P): mlx5 replaces D's mapping, ice refuses a D that is mapped
  (EINVAL), generic adds a second entry; ``del,D,P`` sends one IEEE_DEL;
  ``flush`` deletes every DSCP entry.  A failure stops there: "dscp2prio
  command failed", exit 1 (earlier entries stay).
* trust without NVIDIA's sysfs (``/sys/class/net/IF/qos/trust``, MLNX_OFED
  only) is read from the APP table (any DSCP entry: dscp); ``--trust dscp``
  adds the 64 default entries (priority = DSCP >> 3), ``--trust pcp`` deletes
  every DSCP entry -- no trust write of its own; what the driver does with
  the entries (mlx5, ice: switch the port's trust) is the driver's.
  With the sysfs files, ``--trust`` writes ``qos/trust`` and ``--dscp2prio
  set`` writes ``qos/dscp2prio`` (``del`` does nothing there, as in mlnx_qos).
* ``--pfc``/``-f`` sends IEEE PFC with pfc_cap 8, mbc 0 and the delay read
  before; ``--prio_tc``, ``--tsa``, ``--tcbw`` send one IEEE ETS (willing 0,
  the recommendation fields 0) built from the state read before; a driver
  refusal is "Netlink error: Bad value. see dmesg.", exit 1.
* the order of the steps (dcbx, pfc, dscp2prio, trust, buffers, rate limit,
  ETS), the messages, and the output of ``pretty_print`` are mlnx_qos's,
  including on a driver without buffer or maxrate ops (ice): "Buffers commands
  are not supported on your system", "Rate limit is not supported on your
  system!" and then TC lines without their "tc: N ratelimit: ..., tsa:"
  prefix, as mlnx_qos prints them.

Differences kept (documented, on purpose): options the collection never uses
(-F, -P, --cable_len, -r, --prio2buffer, --buffer_size) are refused with
"option not supported by this test double", exit 2; no lldpad check; a PFC
failure prints the OSError and exits 1 (mlnx_qos crashes with a TypeError
traceback there, exit 1 as well); Python 3 only; ``MLNX_QOS_DOUBLE_SYSFS``
(default ``/sys``) moves the sysfs root for tests.

On a lab VM: ``python3 mlnx_qos_double.py -i dcbsim1 ...``, or installed as
``/usr/local/sbin/mlnx_qos`` with a ``#!/usr/bin/python3`` line put in front
(check_personalities.py --install-mlnx-qos does that).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import optparse
import os
import socket
import struct
import sys

# linux/rtnetlink.h, linux/netlink.h, linux/dcbnl.h (6.1)
RTM_GETDCB = 78
RTM_SETDCB = 79
NLM_F_REQUEST = 0x1
NLMSG_ERROR = 0x2
DCB_CMD_IEEE_SET = 20
DCB_CMD_IEEE_GET = 21
DCB_CMD_GDCBX = 22
DCB_CMD_SDCBX = 23
DCB_CMD_IEEE_DEL = 27
DCB_ATTR_IFNAME = 1
DCB_ATTR_IEEE = 13
DCB_ATTR_DCBX = 14
DCB_ATTR_IEEE_ETS = 1
DCB_ATTR_IEEE_PFC = 2
DCB_ATTR_IEEE_APP_TABLE = 3
DCB_ATTR_IEEE_MAXRATE = 7
DCB_ATTR_DCB_BUFFER = 10
DCB_ATTR_IEEE_APP = 1
DCB_CAP_DCBX_HOST = 0x1
TSA_STRICT, TSA_ETS, TSA_VENDOR = 0, 2, 255
SEL_DSCP = 5

ETS_FMT = "=BBB56B"          # struct ieee_ets: willing, ets_cap, cbs, 7 x u8[8]
PFC_FMT = "=BBBxH2x8Q8Q"     # struct ieee_pfc (136 bytes)
APP_FMT = "=BBH"             # struct dcb_app: selector, priority, protocol
MAXRATE_FMT = "=8Q"          # struct ieee_maxrate
BUFFER_FMT = "=8B8II"        # struct dcbnl_buffer

NETLINK_BAD_VALUE = "Netlink error: Bad value. see dmesg."


class NetlinkError(OSError):
    pass


def _attr(kind, payload):
    head = struct.pack("=HH", 4 + len(payload), kind)
    return head + payload + b"\0" * ((4 - len(payload) % 4) % 4)


def _attrs(data):
    """Parse a run of netlink attributes into {type: payload} (last wins)."""
    out = {}
    while len(data) >= 4:
        length, kind = struct.unpack_from("=HH", data)
        if length < 4:
            break
        out[kind & 0x3fff] = data[4:length]
        data = data[(length + 3) & ~3:]
    return out


def _attr_list(data):
    out = []
    while len(data) >= 4:
        length, kind = struct.unpack_from("=HH", data)
        if length < 4:
            break
        out.append((kind & 0x3fff, data[4:length]))
        data = data[(length + 3) & ~3:]
    return out


class DcbNetlink(object):
    """The DCB netlink requests mlnx_qos's DcbController sends, for one netdev."""

    def __init__(self, ifname):
        self.ifname = ifname
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
        self.sock.bind((0, 0))
        self.seq = 0

    def _talk(self, msg_type, cmd, attrs=b""):
        self.seq += 1
        payload = struct.pack("=BBH", 0, cmd, 0) + _attr(DCB_ATTR_IFNAME, self.ifname.encode() + b"\0") + attrs
        self.sock.send(struct.pack("=IHHII", 16 + len(payload), msg_type, NLM_F_REQUEST, self.seq, 0) + payload)
        while True:
            data = self.sock.recv(65536)
            while len(data) >= 16:
                length, kind, _flags, seq, _pid = struct.unpack_from("=IHHII", data)
                body = data[16:length]
                data = data[(length + 3) & ~3:]
                if seq != self.seq:
                    continue
                if kind == NLMSG_ERROR:
                    err = struct.unpack_from("=i", body)[0]
                    if err:
                        raise NetlinkError(-err, os.strerror(-err))
                    continue
                return _attrs(body[4:])

    def _check(self, reply, attr):
        value = reply.get(attr)
        if value is not None and struct.unpack("=B", value[:1])[0]:
            raise NetlinkError(NETLINK_BAD_VALUE)

    def ieee(self):
        """DCB_CMD_IEEE_GET: {ets, pfc, apps, maxrate, buffer} (None where the driver has no op)."""
        reply = self._talk(RTM_GETDCB, DCB_CMD_IEEE_GET)
        nested = _attrs(reply.get(DCB_ATTR_IEEE, b""))
        out = {"ets": None, "pfc": None, "apps": [], "maxrate": None, "buffer": None}
        if DCB_ATTR_IEEE_ETS in nested:
            v = struct.unpack_from(ETS_FMT, nested[DCB_ATTR_IEEE_ETS])
            out["ets"] = {"tc_tx_bw": list(v[3:11]), "tc_tsa": list(v[19:27]), "prio_tc": list(v[27:35])}
        if DCB_ATTR_IEEE_PFC in nested:
            v = struct.unpack_from(PFC_FMT, nested[DCB_ATTR_IEEE_PFC])
            out["pfc"] = {"pfc_en": v[1], "delay": v[3]}
        for kind, data in _attr_list(nested.get(DCB_ATTR_IEEE_APP_TABLE, b"")):
            if kind == DCB_ATTR_IEEE_APP:
                out["apps"].append(struct.unpack_from(APP_FMT, data))
        if DCB_ATTR_IEEE_MAXRATE in nested:
            out["maxrate"] = list(struct.unpack_from(MAXRATE_FMT, nested[DCB_ATTR_IEEE_MAXRATE]))
        if DCB_ATTR_DCB_BUFFER in nested:
            v = struct.unpack_from(BUFFER_FMT, nested[DCB_ATTR_DCB_BUFFER])
            out["buffer"] = {"prio2buffer": list(v[0:8]), "buffer_size": list(v[8:16]), "total_size": v[16]}
        return out

    def _set(self, cmd, ieee_attrs):
        reply = self._talk(RTM_SETDCB, cmd, _attr(DCB_ATTR_IEEE, ieee_attrs))
        self._check(reply, DCB_ATTR_IEEE)

    def dcbx(self):
        reply = self._talk(RTM_GETDCB, DCB_CMD_GDCBX)
        return struct.unpack("=B", reply[DCB_ATTR_DCBX][:1])[0]

    def set_dcbx(self, mode):
        reply = self._talk(RTM_SETDCB, DCB_CMD_SDCBX, _attr(DCB_ATTR_DCBX, struct.pack("=B", mode)))
        self._check(reply, DCB_ATTR_DCBX)

    def set_pfc(self, pfc_en, delay):
        # mlnx_qos: pfc_cap 8, mbc 0, requests/indications 0
        self._set(DCB_CMD_IEEE_SET, _attr(DCB_ATTR_IEEE_PFC, struct.pack(PFC_FMT, 8, pfc_en, 0, delay, *([0] * 16))))

    def set_ets(self, prio_tc, tsa, tc_bw):
        # mlnx_qos: willing 0, ets_cap 0, cbs 0, rx and recommendation fields 0
        fields = list(tc_bw) + [0] * 8 + list(tsa) + list(prio_tc) + [0] * 24
        self._set(DCB_CMD_IEEE_SET, _attr(DCB_ATTR_IEEE_ETS, struct.pack(ETS_FMT, 0, 0, 0, *fields)))

    def _app(self, cmd, selector, priority, protocol):
        table = _attr(DCB_ATTR_IEEE_APP, struct.pack(APP_FMT, selector, priority, protocol))
        self._set(cmd, _attr(DCB_ATTR_IEEE_APP_TABLE, table))

    def set_app(self, selector, priority, protocol):
        self._app(DCB_CMD_IEEE_SET, selector, priority, protocol)

    def del_app(self, selector, priority, protocol):
        self._app(DCB_CMD_IEEE_DEL, selector, priority, protocol)


class Sysfs(object):
    """NVIDIA's qos/ sysfs files of MLNX_OFED kernels (absent upstream and on dcbsim)."""

    def __init__(self, root, ifname):
        self.dir = os.path.join(root, "class", "net", ifname, "qos")

    def path(self, name):
        return os.path.join(self.dir, name)

    def has(self, name):
        return os.path.exists(self.path(name))

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)


def _dscp_lines(pairs):
    """mlnx_qos's dscp2prio listing: per priority, DSCPs as '%02d,' wrapped after 8."""
    per_prio = [""] * 8
    for dscp, prio in pairs:
        per_prio[prio] += "%02d," % dscp
    lines = []
    for prio in range(8):
        text = per_prio[prio]
        pad = "\tprio:%d dscp:" % prio
        chunk = ""
        while len(text) > 24:
            chunk += pad + text[:24] + "\n"
            text = text[24:]
        if text:
            chunk += pad + text
        if chunk:
            lines.append(chunk)
    return lines


def pretty(state):
    """mlnx_qos's pretty_print() of ``state`` (a dict, see main)."""
    out = ["DCBX mode: OS controlled" if state["dcbx"] & DCB_CAP_DCBX_HOST else "DCBX mode: Firmware controlled",
           "Priority trust state: " + state["trust"]]
    if state["trust"] == "dscp":
        out.append("dscp2prio mapping:")
        out.extend(_dscp_lines(state["dscp_pairs"]))
    buf = state["buffer"]
    if buf is not None:
        msg = "Receive buffer size (bytes): " + "".join("%1d," % b for b in buf["buffer_size"])
        if buf["total_size"] is not None:
            msg += "max_buffer_size=%d" % buf["total_size"]
        out.append(msg)
    out.append("Cable len: %d" % state["delay"])
    out.append("PFC configuration:")
    out.append("\tpriority    0   1   2   3   4   5   6   7")
    msg = "\tenabled     " + "".join("%1d   " % ((state["pfc_en"] >> up) & 1) for up in range(8))
    if buf is not None:
        msg += "\n\tbuffer      " + "".join("%1d   " % buf["prio2buffer"][up] for up in range(8))
    out.append(msg)
    tc2up = {}
    if state["printall"]:
        for tc in range(8):
            tc2up[tc] = []
    for up, tc in enumerate(state["prio_tc"]):
        tc2up.setdefault(int(tc), []).append(up)
    for tc in sorted(tc2up):
        msg = ""
        rates = state["ratelimit"]
        if tc < len(rates):      # mlnx_qos: an IndexError here drops the prefix
            rate = "%.1f Gbps" % (float(rates[tc] / 1000) / 1000) if rates[tc] > 0 else "unlimited"
            msg = "tc: %d ratelimit: %s, tsa: " % (tc, rate)
        tsa = state["tsa"][tc]
        if tsa == TSA_ETS:
            msg += "ets, bw: %s%%" % state["tc_bw"][tc]
        elif tsa == TSA_STRICT:
            msg += "strict"
        elif tsa == TSA_VENDOR:
            msg += "vendor"
        else:
            msg += "unknown"
        out.append(msg)
        for up in tc2up[tc]:
            out.append("\t priority:  %s" % up)
    return "\n".join(out) + "\n"


class Exit(Exception):
    def __init__(self, code, message=None):
        Exception.__init__(self, code, message)
        self.code = code
        self.message = message


def _int_in(text, low, high, what):
    try:
        value = int(text)
        if value < low or value > high:
            raise ValueError("%d is not in the range %d..%d" % (value, low, high))
        return value
    except ValueError as e:
        raise Exit(1, "Bad value for %s: %s" % (what, e))


def _parser():
    p = optparse.OptionParser(usage="%prog -i <interface> [options]", version="%prog 1.2 (rdma.fabric test double)")
    p.add_option("-f", "--pfc", dest="pfc", metavar="LIST")
    p.add_option("-p", "--prio_tc", dest="prio_tc", metavar="LIST")
    p.add_option("-s", "--tsa", dest="tsa", metavar="LIST")
    p.add_option("-t", "--tcbw", dest="tc_bw", metavar="LIST")
    p.add_option("-d", "--dcbx", dest="dcbx")
    p.add_option("--trust", dest="trust")
    p.add_option("--dscp2prio", dest="dscp2prio", action="append")
    p.add_option("-i", "--interface", dest="intf")
    p.add_option("-a", action="store_true", dest="printall", default=False)
    for short, long_ in (("-F", "--specific_pfc"), ("-P", "--get_pfc"), ("-r", "--ratelimit"), (None, "--cable_len"),
                         (None, "--prio2buffer"), (None, "--buffer_size")):
        names = [n for n in (short, long_) if n]
        p.add_option(*names, dest="unsupported_" + long_.lstrip("-"))
    return p


def _dscp2prio_commands(values):
    cmds = []
    try:
        for opt in values:
            if opt == "flush":
                cmds.append(("flush", None, None))
                continue
            action, dscp, prio = opt.split(",")
            dscp, prio = int(dscp), int(prio)
            if action not in ("set", "del") or dscp > 63 or prio > 7:
                raise Exit(1)       # mlnx_qos: sys.exit(1) without a message
            cmds.append((action, dscp, prio))
    except ValueError:
        raise Exit(1, "Invalid dscp2prio command. Refer to the help.")
    return cmds


def _trust_of(nl, sysfs):
    if sysfs.has("trust"):
        return sysfs.read("trust").replace("\n", "")
    apps = nl.ieee()["apps"]
    return "dscp" if any(a[0] == SEL_DSCP for a in apps) else "pcp"


def run(argv, sysfs_root="/sys", emit=print):
    """mlnx_qos's main, in its order; returns the exit status."""
    parser = _parser()
    opts, args = parser.parse_args(argv)
    if args:
        emit("Bad arguments")
        return 1
    if opts.intf is None:
        emit("Interface name is required")
        return 1
    for name, value in vars(opts).items():
        if name.startswith("unsupported_") and value is not None:
            emit("--%s: option not supported by this test double" % name[len("unsupported_"):])
            return 2
    sysfs = Sysfs(sysfs_root, opts.intf)
    nl = DcbNetlink(opts.intf)
    try:
        return _main(opts, nl, sysfs, emit)
    except Exit as e:
        if e.message:
            emit(e.message)
        return e.code


def _main(opts, nl, sysfs, emit):
    # dcbx
    if opts.dcbx is not None:
        if opts.dcbx == "os":
            nl.set_dcbx(nl.dcbx() | DCB_CAP_DCBX_HOST)
        elif opts.dcbx == "fw":
            nl.set_dcbx(0)
        elif opts.dcbx != "get":
            raise Exit(1, "Invalid dcbx mode command. Refer to the help.")

    # pfc
    if opts.pfc:
        vals = opts.pfc.split(",")
        pfc_en = 0
        for i, t in enumerate(vals):
            if i >= 8:
                raise Exit(1, "Too many items for PFC")
            pfc_en |= _int_in(t, 0, 1, "PFC") << i
        if len(vals) != 8:
            raise Exit(1, "pfc list must have 8 items")
        try:
            nl.set_pfc(pfc_en, nl.ieee()["pfc"]["delay"])
        except (OSError, TypeError) as e:
            raise Exit(1, "mlnx_qos: Error setting pfc: %s" % e)

    # dscp2prio
    if opts.dscp2prio and opts.trust:
        raise Exit(1, "trust and dscp2prio commands cannot be used at the same time.")
    cmds = _dscp2prio_commands(opts.dscp2prio or [])
    try:
        for action, dscp, prio in cmds:
            if action == "set":
                if sysfs.has("trust"):
                    sysfs.write("dscp2prio", "%d %d " % (dscp, prio))
                else:
                    nl.set_app(SEL_DSCP, prio, dscp)
            elif action == "del":
                if not sysfs.has("trust"):
                    nl.del_app(SEL_DSCP, prio, dscp)
            elif not sysfs.has("trust"):
                for sel, p, proto in nl.ieee()["apps"]:
                    if sel == SEL_DSCP:
                        nl.del_app(sel, p, proto)
    except (OSError, TypeError, KeyError):
        if opts.dscp2prio:
            raise Exit(1, "dscp2prio command failed")

    # trust
    if opts.trust and opts.trust not in ("dscp", "pcp"):
        raise Exit(1, "Invalid trust state command. Refer to the help.")
    try:
        trust = _trust_of(nl, sysfs)
        if opts.trust and trust != opts.trust:
            if sysfs.has("trust"):
                sysfs.write("trust", opts.trust)
            elif opts.trust == "pcp":
                for sel, p, proto in nl.ieee()["apps"]:
                    if sel == SEL_DSCP:
                        nl.del_app(sel, p, proto)
            else:
                for dscp in range(64):
                    nl.set_app(SEL_DSCP, dscp >> 3, dscp)
            trust = _trust_of(nl, sysfs)
    except (OSError, TypeError, KeyError):
        emit("Priority trust state is not supported on your system")
        if opts.trust:
            raise Exit(1)
        trust = "none"

    # buffers
    buffer = None
    try:
        if sysfs.has("buffer_size"):
            buffer = _sysfs_buffers(sysfs)
        else:
            buffer = nl.ieee()["buffer"]
            if buffer is None:
                raise KeyError(DCB_ATTR_DCB_BUFFER)
    except (OSError, TypeError, KeyError, ValueError):
        buffer = None
        emit("Buffers commands are not supported on your system")

    # rate limit (read only here)
    ratelimit = []
    try:
        if sysfs.has("maxrate"):
            ratelimit = [float(x) for x in sysfs.read("maxrate").split()]
        else:
            ratelimit = nl.ieee()["maxrate"]
            if ratelimit is None:
                raise KeyError(DCB_ATTR_IEEE_MAXRATE)
    except (OSError, TypeError, KeyError, ValueError):
        ratelimit = []
        emit("Rate limit is not supported on your system!")

    try:
        ieee = nl.ieee()
        ets, pfc = ieee["ets"], ieee["pfc"]
        prio_tc, tsa, tc_bw = list(ets["prio_tc"]), list(ets["tc_tsa"]), list(ets["tc_tx_bw"])
        pfc_en, delay = pfc["pfc_en"], pfc["delay"]
    except (OSError, TypeError, KeyError):
        raise Exit(1, "ETS features are not supported on your system")

    # ets
    if opts.tsa:
        names = opts.tsa.split(",")
        for i, t in enumerate(names):
            if i >= 8:
                raise Exit(1, "Too many items for TSA")
            if t not in ("strict", "ets", "vendor"):
                raise Exit(1, "('Bad TSA value: ', '%s')" % t)
            tsa[i] = {"strict": TSA_STRICT, "ets": TSA_ETS, "vendor": TSA_VENDOR}[t]
        if len(names) != 8:
            raise Exit(1, "tsa list must have 8 items")
    if opts.tc_bw:
        vals = opts.tc_bw.split(",")
        for i, t in enumerate(vals):
            if i >= 8:
                raise Exit(1, "Too many items for ETS BW")
            bw = _int_in(t, 0, 100, "ETS BW")
            if tsa[i] != TSA_ETS and bw != 0:
                raise Exit(1, "ETS BW for a strict/vendor TC must be 0")
            tc_bw[i] = bw
        if len(vals) != 8:
            raise Exit(1, "tcbw list must have 8 items")
    if opts.prio_tc:
        vals = opts.prio_tc.split(",")
        for i, t in enumerate(vals):
            if i >= 8:
                raise Exit(1, "Too many items in UP => TC mapping")
            prio_tc[i] = _int_in(t, 0, 7, "UP => TC mapping")
        if len(vals) != 8:
            raise Exit(1, "prio_tc list must have 8 items")
    if opts.tsa or opts.tc_bw or opts.prio_tc:
        try:
            nl.set_ets(prio_tc, tsa, tc_bw)
        except OSError as e:
            raise Exit(1, str(e.args[-1]))

    # the listing: mlnx_qos prints what it asked for, not a new read
    if sysfs.has("trust") and trust == "dscp":
        pairs = _sysfs_dscp_pairs(sysfs)
    else:
        pairs = [(a[2], a[1]) for a in nl.ieee()["apps"] if a[0] == SEL_DSCP]
    emit(pretty({"dcbx": nl.dcbx(), "trust": trust, "dscp_pairs": pairs, "buffer": buffer, "delay": delay,
                 "pfc_en": pfc_en, "prio_tc": prio_tc, "tsa": tsa, "tc_bw": tc_bw, "ratelimit": ratelimit,
                 "printall": opts.printall}).rstrip("\n"))
    return 0


def _sysfs_dscp_pairs(sysfs):
    pairs = []
    for line in sysfs.read("dscp2prio").splitlines()[1:]:
        data = line.split()
        if len(data) >= 2:
            pairs.append((int(data[0]), int(data[1])))
    return pairs


def _sysfs_buffers(sysfs):
    lines = sysfs.read("buffer_size").splitlines()
    sizes = [0] * 8
    total = int(lines[0].split("=")[1])
    for line in lines[1:]:
        if line[:1].isdigit():
            buf, size = line.split()[:2]
            sizes[int(buf)] = int(size)
    prio2buffer = [0] * 8
    if sysfs.has("prio2buffer"):
        for line in sysfs.read("prio2buffer").splitlines()[1:]:
            prio, buf = line.split()[:2]
            prio2buffer[int(prio)] = int(buf)
    return {"prio2buffer": prio2buffer, "buffer_size": sizes, "total_size": total}


def main():
    sys.exit(run(sys.argv[1:], os.environ.get("MLNX_QOS_DOUBLE_SYSFS", "/sys")))


if __name__ == "__main__":
    main()
