# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Prove dcbsim's personalities on a lab VM with iproute2 ``dcb`` (test helper).

Runs as root on a lab VM (ansible.builtin.script with python3, or by hand).
Loads ``dcbsim num_devs=3 personality=generic,mlx5,ice`` (dcbsim0 generic,
dcbsim1 mlx5, dcbsim2 ice), then for each personality adds, remaps and
deletes DSCP entries, reads the APP table back (``dcb -j app show``) with the
trust state (``/sys/class/net/DEV/dcbsim/trust``), and sets good and bad ETS,
PFC, maxrate and DCBX, comparing every outcome with what that driver does.
With ``--mlnx-qos PATH`` the same remaps run through the mlnx_qos test double.
With ``--real-mlnx-qos PATH`` as well (NVIDIA's ``mlnx_qos`` from mlnx-tools,
its ``Python/`` folder beside it, fetched by hand: no registry has it), every
check runs a second time on a freshly loaded dcbsim with the real tool in
the double's place, and the mlnx_qos steps where the two differ (exit
status, APP table, trust, the ETS/PFC read back, stdout, the last line of
stderr) are printed; exit 1 when any does.

Prints a transcript (every command, its exit status and error line, the
table and trust after it, the kernel log lines it caused) and with
``--json FILE`` writes the results; exits 1 when any outcome differs.
Unloads dcbsim at the end; with ``--reload`` a dcbsim that was loaded before
is removed first and loaded again (default parameters) at the end.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import argparse
import json
import os
import subprocess
import sys
import time

DEVS = {"generic": "dcbsim0", "mlx5": "dcbsim1", "ice": "dcbsim2"}

# iproute2 6.1 (dcb/dcb_app.c, dcb/dcb.c): `dcb app replace` reads the table (GET), adds the new entries
# (SET), then deletes the replaced ones (DEL), and exits 0 whatever happened (dcb_cmd_app_replace() ends in
# `return 0`). Every request asks for an ACK, and the GET stops reading at its answer, leaving its ACK
# queued (same sequence number within one second): the SET takes that ACK for its own success, and the
# DEL reads the SET's answer. So a refused add is not seen, the delete is sent anyway, its own outcome is
# never read, and an error of the add shows up as "Could not remove replaced APP entries" (M5, I5).
RESULTS = []


# the environment of the mlnx_qos under test (the real one finds its dcbnetlink module through PYTHONPATH)
TOOL_ENV = None


def sh(argv, env=None):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, check=False,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def kmsg_count():
    return len(sh(["dmesg"])[1].splitlines())


def kmsg_since(count, dev):
    lines = sh(["dmesg"])[1].splitlines()[count:]
    return [ln.split("] ", 1)[-1] for ln in lines if dev in ln or "dcbsim" in ln]


def app_table(dev):
    rc, out, err = sh(["dcb", "-j", "app", "show", "dev", dev])
    if rc != 0:
        return "error: " + err.strip()
    data = json.loads(out or "{}")
    return sorted([int(d), int(p)] for d, p in data.get("dscp_prio", []))


def read_sys(dev, name):
    with open("/sys/class/net/%s/dcbsim/%s" % (dev, name)) as f:
        return f.read().strip()


def trust(dev):
    return read_sys(dev, "trust")


def dscp_prio(dev, dscp):
    for line in read_sys(dev, "dscp_prio").splitlines():
        fields = line.split()
        if int(fields[0]) == dscp:
            return [int(p) for p in fields[1:]]
    return []


def show(dev, what):
    rc, out, err = sh(["dcb", "-j", what, "show", "dev", dev])
    return json.loads(out) if rc == 0 and out.strip() else {"rc": rc, "error": err.strip()}


def step(pers, sid, title, argv, expect_rc=0, expect_err=None, app=None, trust_is=None, check=None, quiet=False,
         kernel=(), unchanged=()):
    """Run argv on the personality's device; compare rc, error text, APP table, trust, extra checks.

    ``quiet``: stderr must be empty; ``kernel``: texts the kernel log lines the command caused must hold;
    ``unchanged``: dcb objects (ets, pfc) that must read the same after the command as before it.
    """
    dev = DEVS[pers]
    argv = [a.replace("DEV", dev) for a in argv]
    before = kmsg_count()
    shown_before = dict((what, show(dev, what)) for what in unchanged)
    rc, out, err = sh(argv, TOOL_ENV if "mlnx_qos" in " ".join(argv) else None)
    got = {"rc": rc, "app": app_table(dev), "trust": trust(dev)}
    problems = []
    if expect_rc is not None and rc != expect_rc:
        problems.append("rc %d, expected %d" % (rc, expect_rc))
    for text in ([expect_err] if isinstance(expect_err, str) else expect_err or []):
        if text not in (out + err):
            problems.append("output lacks %r" % text)
    if quiet and err.strip():
        problems.append("stderr %r, expected none" % err.strip())
    if app is not None and got["app"] != sorted(app):
        problems.append("app table %s, expected %s" % (got["app"], sorted(app)))
    if trust_is is not None and got["trust"] != trust_is:
        problems.append("trust %s, expected %s" % (got["trust"], trust_is))
    extra = {}
    if check:
        for name, (value, expected) in check(dev).items():
            extra[name] = value
            if value != expected:
                problems.append("%s %s, expected %s" % (name, value, expected))
    for what, was in shown_before.items():
        now = show(dev, what)
        extra[what + " unchanged"] = now == was
        if now != was:
            problems.append("dcb %s show changed: %s -> %s" % (what, json.dumps(was), json.dumps(now)))
    kernel_lines = kmsg_since(before, dev)
    for text in kernel:
        if not any(text in line for line in kernel_lines):
            problems.append("kernel log lacks %r" % text)
    res = {"personality": pers, "id": sid, "title": title, "command": " ".join(argv), "rc": rc,
           "stdout": out.strip()[-2000:], "stderr": err.strip(), "app": got["app"], "trust": got["trust"],
           "extra": extra, "kernel": kernel_lines, "ok": not problems, "problems": problems}
    RESULTS.append(res)
    print("[%s] %s %s" % (pers, sid, title))
    print("  $ %s" % res["command"])
    print("  rc=%d%s" % (rc, ("  stderr: " + " | ".join(err.strip().splitlines())) if err.strip() else ""))
    if out.strip() and "mlnx_qos" in res["command"]:
        for line in out.strip().splitlines()[:6]:
            print("  | " + line)
    print("  app=%s trust=%s%s" % (json.dumps(got["app"]), got["trust"],
                                   (" " + json.dumps(extra, sort_keys=True)) if extra else ""))
    for line in res["kernel"]:
        print("  kernel: " + line)
    print("  -> %s" % ("ok" if not problems else "FAIL: " + "; ".join(problems)))
    return res


def expect_ets(prio_tc=None, tc_tsa=None, tc_bw=None, ets_cap=None, pfc=None, delay=None):
    """A check: the given ETS/PFC fields as dcb -j shows them."""
    def check(dev):
        e, p = show(dev, "ets"), show(dev, "pfc")
        out = {}
        for key, want in (("prio_tc", prio_tc), ("tc_tsa", tc_tsa), ("tc_bw", tc_bw), ("ets_cap", ets_cap)):
            if want is not None:
                out[key] = (e.get(key), want)
        if pfc is not None:
            en = p.get("prio_pfc")
            out["pfc"] = ([i for i, on in enumerate(en) if on] if isinstance(en, list) else en, pfc)
        if delay is not None:
            out["delay"] = (p.get("delay"), delay)
        return out
    return check


def expect_tsa(tc, tsa):
    def check(dev):
        got = show(dev, "ets").get("tc_tsa")
        return {"tc_tsa[%d]" % tc: (got[tc] if isinstance(got, list) else got, tsa)}
    return check


def expect_dscp_prio(dscp, prios):
    def check(dev):
        return {"dscp_prio[%d]" % dscp: (dscp_prio(dev, dscp), prios)}
    return check


def app_rules():
    dcb = ["dcb", "app"]
    # generic: the kernel's own table keeps both entries of a DSCP
    step("generic", "G1", "first DSCP entry", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"], app=[[26, 3]], trust_is="dscp")
    step("generic", "G2", "remap 26 3->5, step 1: add 26:5 (both kept)", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         app=[[26, 3], [26, 5]], trust_is="dscp")
    step("generic", "G3", "remap 26 3->5, step 2: del 26:3", dcb + ["del", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 5]], trust_is="dscp")
    step("generic", "G4", "add an entry that exists", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         expect_rc=1, expect_err="File exists", app=[[26, 5]])
    step("generic", "G5", "dcb app replace 26:3 (add, then delete the old)", dcb + ["replace", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp")
    step("generic", "G6", "delete the last DSCP entry", dcb + ["del", "dev", "DEV", "dscp-prio", "26:3"], app=[], trust_is="pcp")
    step("generic", "G7", "an EtherType entry", dcb + ["add", "dev", "DEV", "ethtype-prio", "0x8906:3"], app=[], trust_is="pcp")
    step("generic", "G8", "remove it", dcb + ["del", "dev", "DEV", "ethtype-prio", "0x8906:3"], app=[], trust_is="pcp")

    # mlx5: a set replaces the DSCP's mapping; only the current mapping can be deleted
    step("mlx5", "M0", "reset state", ["dcb", "-j", "ets", "show", "dev", "DEV"], app=[], trust_is="pcp",
         check=expect_ets(prio_tc=[1, 0, 2, 3, 4, 5, 6, 7], tc_tsa=["vendor"] * 8, tc_bw=[0] * 8, pfc=[], delay=7))
    step("mlx5", "M1", "first DSCP entry: trust dscp", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp", check=expect_dscp_prio(26, [3]))
    step("mlx5", "M2", "remap 26 3->5 in one set", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         app=[[26, 5]], trust_is="dscp", check=expect_dscp_prio(26, [5]))
    step("mlx5", "M3", "the generic remap back, step 1: add 26:3 (replaces 26:5)", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp")
    step("mlx5", "M4", "the generic remap back, step 2: del 26:5 (no longer mapped)", dcb + ["del", "dev", "DEV", "dscp-prio", "26:5"],
         expect_rc=1, expect_err="No such file or directory", app=[[26, 3]], trust_is="dscp")
    # iproute2 6.1 `dcb app replace` (the note at DEVS): the add replaces, the delete of 26:3 is refused
    # (ENOENT) but dcb reads the add's answer for it: rc 0, nothing on stderr
    step("mlx5", "M5", "dcb app replace 26:5: the add replaces; the refused delete of 26:3 goes unreported",
         dcb + ["replace", "dev", "DEV", "dscp-prio", "26:5"], quiet=True, app=[[26, 5]], trust_is="dscp")
    step("mlx5", "M6", "add the entry that exists: no error (delete + add)", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         app=[[26, 5]], trust_is="dscp")
    step("mlx5", "M7", "second DSCP", dcb + ["add", "dev", "DEV", "dscp-prio", "10:1"], app=[[10, 1], [26, 5]], trust_is="dscp")
    step("mlx5", "M8", "delete 26:5 (another entry left): the DSCP maps to 0", dcb + ["del", "dev", "DEV", "dscp-prio", "26:5"],
         app=[[10, 1]], trust_is="dscp", check=expect_dscp_prio(26, [0]))
    step("mlx5", "M9", "delete the last DSCP entry: trust pcp", dcb + ["del", "dev", "DEV", "dscp-prio", "10:1"], app=[], trust_is="pcp")
    step("mlx5", "M10", "an EtherType entry is refused", dcb + ["add", "dev", "DEV", "ethtype-prio", "0x8906:3"],
         expect_rc=1, expect_err="Invalid argument", app=[], trust_is="pcp")

    # ice: a mapped DSCP cannot be set again; an empty table means L2 VLAN mode and the default config
    step("ice", "I0", "reset state", ["dcb", "-j", "ets", "show", "dev", "DEV"], app=[], trust_is="pcp",
         check=expect_ets(prio_tc=[0] * 8, tc_tsa=["ets"] + ["strict"] * 7, tc_bw=[100] + [0] * 7, ets_cap=8, pfc=[]))
    # ice_dcbnl_setpfc() commits the "desired" config, empty so far: its ETS (every TC strict) comes along
    step("ice", "I1", "PFC on priority 3 (VLAN mode; the empty desired ETS comes along)",
         ["dcb", "pfc", "set", "dev", "DEV", "prio-pfc", "3:on"],
         app=[], trust_is="pcp", check=expect_ets(pfc=[3], prio_tc=[0] * 8, tc_tsa=["strict"] * 8, tc_bw=[100] + [0] * 7))
    step("ice", "I2", "first DSCP entry: L3 DSCP mode, ETS to its DSCP defaults", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp",
         check=expect_ets(prio_tc=list(range(8)), tc_tsa=["ets"] * 8, tc_bw=[100] + [0] * 7, pfc=[3]))
    step("ice", "I3", "remap 26 3->5 in one set: refused", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         expect_rc=1, expect_err="Invalid argument", app=[[26, 3]], trust_is="dscp")
    step("ice", "I4", "add the entry that exists", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         expect_rc=1, expect_err="File exists", app=[[26, 3]], trust_is="dscp")
    # iproute2 6.1 `dcb app replace` (the note at DEVS): the add is refused ("already user mapped") but dcb
    # reads a stale ACK for it and sends the delete of 26:3, the only DSCP entry: L2 VLAN mode and the
    # default config; dcb then reports the add's EINVAL as the delete's, rc 0
    step("ice", "I5", "dcb app replace 26:5: the add is refused, the delete of 26:3 is sent anyway (table empty)",
         dcb + ["replace", "dev", "DEV", "dscp-prio", "26:5"],
         expect_err=["Attribute write: Invalid argument", "Could not remove replaced APP entries"],
         kernel=["already user mapped", "Switched QoS to L2 VLAN mode"], app=[], trust_is="pcp",
         check=expect_ets(prio_tc=[0] * 8, tc_bw=[100] + [0] * 7, pfc=[]))
    # "desired" still holds PFC 3 (from I1): the commit of the first DSCP entry brings it back
    step("ice", "I6", "first DSCP entry again: L3 DSCP mode", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp", check=expect_ets(prio_tc=list(range(8)), pfc=[3]))
    step("ice", "I7", "second DSCP", dcb + ["add", "dev", "DEV", "dscp-prio", "10:1"], app=[[10, 1], [26, 3]], trust_is="dscp")
    step("ice", "I8", "remap 26 3->5, step 1: del 26:3 (10 keeps DSCP mode)", dcb + ["del", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[10, 1]], trust_is="dscp", check=expect_dscp_prio(26, [2]))
    step("ice", "I9", "remap 26 3->5, step 2: add 26:5", dcb + ["add", "dev", "DEV", "dscp-prio", "26:5"],
         app=[[10, 1], [26, 5]], trust_is="dscp", check=expect_dscp_prio(26, [5]))
    step("ice", "I10", "delete 10:1", dcb + ["del", "dev", "DEV", "dscp-prio", "10:1"], app=[[26, 5]], trust_is="dscp")
    step("ice", "I11", "remap the only entry, step 1: del 26:5 -> VLAN mode, default config (PFC off)",
         dcb + ["del", "dev", "DEV", "dscp-prio", "26:5"], app=[], trust_is="pcp",
         check=expect_ets(prio_tc=[0] * 8, tc_tsa=["ets"] + ["strict"] * 7, tc_bw=[100] + [0] * 7, pfc=[]))
    step("ice", "I12", "remap the only entry, step 2: add 26:3 -> DSCP mode again", dcb + ["add", "dev", "DEV", "dscp-prio", "26:3"],
         app=[[26, 3]], trust_is="dscp")
    step("ice", "I13", "an EtherType entry is refused", dcb + ["add", "dev", "DEV", "ethtype-prio", "0x8906:3"],
         expect_rc=1, expect_err="Invalid argument", app=[[26, 3]], trust_is="dscp")
    step("ice", "I14", "delete the last DSCP entry", dcb + ["del", "dev", "DEV", "dscp-prio", "26:3"], app=[], trust_is="pcp")


def ets_rules():
    ets = ["dcb", "ets", "set", "dev", "DEV"]
    prio = ["prio-tc", "0:0", "1:0", "2:0", "3:1", "4:0", "5:0", "6:2", "7:0"]
    good = prio + ["tc-tsa", "0:ets", "1:ets", "2:strict", "tc-bw", "0:50", "1:50", "2:0"]
    # TC2 gets no priority: 20% on TC5: iproute2 sums all 8 TCs (100); the drivers count 80
    bad = prio[:7] + ["6:1", "7:0"] + ["tc-tsa", "0:ets", "1:ets", "5:strict", "tc-bw", "0:50", "1:30", "5:20"]
    # the strict TC2 (in use) carries 20%: ETS TCs sum to 80 (generic, mlx5 refuse), the TCs in use to 100 (ice takes it)
    strict_bw = prio + ["tc-tsa", "0:ets", "1:ets", "2:strict", "tc-bw", "0:40", "1:40", "2:20"]
    noncontig = ["prio-tc", "0:0", "1:0", "2:0", "3:3", "4:0", "5:0", "6:6", "7:0", "tc-tsa", "0:ets", "1:strict", "2:strict",
                 "3:ets", "6:strict", "tc-bw", "0:50", "1:0", "2:0", "3:50", "6:0"]
    good_prio_tc = [0, 0, 0, 1, 0, 0, 2, 0]
    good_bw = [50, 50] + [0] * 6
    for pers in ("generic", "mlx5", "ice"):
        p = pers[0].upper()
        ice = pers == "ice"
        # ice: "desired" still holds PFC 3 from I1; a commit of it brings PFC back
        step(pers, p + "E1", "good ETS (TC0/TC1 50/50, TC2 strict)", ets + good,
             check=expect_ets(prio_tc=good_prio_tc, tc_bw=good_bw, pfc=[3] if ice else []))
        step(pers, p + "E2", "ETS bandwidths that sum to 80 in the driver: refused (dcb exits 0, unchanged)", ets + bad,
             check=expect_ets(prio_tc=good_prio_tc, tc_bw=good_bw))
        # ice: the refused ETS stays in "desired", so the PFC commit fails too
        step(pers, p + "E3", "PFC on 3 and 4 right after the refused ETS", ["dcb", "pfc", "set", "dev", "DEV", "prio-pfc", "3:on", "4:on"],
             check=expect_ets(pfc=[3] if ice else [3, 4]))
        step(pers, p + "E4", "good ETS again", ets + good, check=expect_ets(prio_tc=good_prio_tc, tc_bw=good_bw, pfc=[3, 4]))
        step(pers, p + "E5", "PFC on 3 only", ["dcb", "pfc", "set", "dev", "DEV", "prio-pfc", "3:on", "4:off"], check=expect_ets(pfc=[3]))
        step(pers, p + "E6", "a strict TC with 20%: ETS TCs sum to 80, TCs in use to 100", ets + strict_bw,
             check=expect_ets(tc_bw=[40, 40, 20] + [0] * 5 if ice else good_bw))
        step(pers, p + "E7", "non-contiguous TCs 0, 3, 6 (ice: taken, then the default config)", ets + noncontig,
             check=expect_ets(prio_tc=[0] * 8 if ice else [0, 0, 0, 3, 0, 0, 6, 0],
                              tc_bw=[100] + [0] * 7 if ice else [50, 0, 0, 50, 0, 0, 0, 0],
                              pfc=[] if ice else [3]))
        step(pers, p + "E8", "a CBS TC (generic: EINVAL, mlx5: EOPNOTSUPP, ice: no TSA check)", ets + ["tc-tsa", "7:cbs"],
             check=expect_tsa(7, {"generic": "strict", "mlx5": "vendor", "ice": "cbs"}[pers]))
    # other ops
    step("generic", "GX1", "maxrate 150 Mb/s on TC0", ["dcb", "maxrate", "set", "dev", "DEV", "tc-maxrate", "0:150Mbit"])
    step("mlx5", "MX1", "maxrate 150 Mb/s on TC0 (mlx5: 100 Mb/s units)", ["dcb", "maxrate", "set", "dev", "DEV", "tc-maxrate", "0:150Mbit"])
    step("ice", "IX1", "maxrate (ice has no maxrate op)", ["dcb", "maxrate", "set", "dev", "DEV", "tc-maxrate", "0:150Mbit"], expect_rc=None)
    for pers in ("generic", "mlx5", "ice"):
        step(pers, pers[0].upper() + "X2", "maxrate read back", ["dcb", "maxrate", "show", "dev", "DEV"], expect_rc=None)
        step(pers, pers[0].upper() + "X3", "dcbx set host ieee (ice: the mode it has is refused)",
             ["dcb", "dcbx", "set", "dev", "DEV", "host", "ieee"], expect_rc=1 if pers == "ice" else 0)
        step(pers, pers[0].upper() + "X4", "dcbx read back", ["dcb", "dcbx", "show", "dev", "DEV"], expect_rc=0)
        step(pers, pers[0].upper() + "X5", "PFC delay 2000", ["dcb", "pfc", "set", "dev", "DEV", "delay", "2000"],
             check=expect_ets(delay={"generic": 2000, "mlx5": 7, "ice": 0}[pers]))
        step(pers, pers[0].upper() + "X6", "buffer read", ["dcb", "buffer", "show", "dev", "DEV"], expect_rc=1 if pers == "ice" else 0)


NETLINK_BAD_VALUE = "Netlink error: Bad value. see dmesg."
# mlnx_qos (mlnx-tools 8fbfd9c) on a driver without the DCB buffer op (ice): the change of the call is made, then the
# buffer read's KeyError meets the handler's check of e.errno: both tracebacks, exit 1; its ETS step never runs
NO_BUFFER_DEATH = ["KeyError: 10", "AttributeError: 'KeyError' object has no attribute 'errno'"]
# mlnx_qos steps of a remap of DSCP 26 from priority 3 to 5, per driver (the unit tests' FakeMlnxQos has the same)
REMAP_STEPS = {"generic": ["set,26,5", "del,26,3"], "mlx5": ["set,26,5"], "ice": ["del,26,3", "set,26,5"]}


def mlnx_qos_rules(tool):
    """The mlnx_qos checks; ``tool``: the argv that starts it (the double, or the real one)."""
    q = list(tool) + ["-i", "DEV"]
    for pers in ("generic", "mlx5", "ice"):
        p = pers[0].upper() + "Q"
        ice = pers == "ice"
        # on ice every call that gets past dscp2prio and trust dies reading the buffers (rc 1, the traceback)
        dies = {"expect_rc": 1, "expect_err": NO_BUFFER_DEATH} if ice else {}
        step(pers, p + "1", "mlnx_qos --dscp2prio set,26,3", q + ["--dscp2prio", "set,26,3"], app=[[26, 3]], trust_is="dscp",
             **dies)
        remap = {"generic": (0, None, [[26, 3], [26, 5]]), "mlx5": (0, None, [[26, 5]]),
                 "ice": (1, "dscp2prio command failed", [[26, 3]])}[pers]
        step(pers, p + "2", "mlnx_qos remap 26 3->5: --dscp2prio set,26,5", q + ["--dscp2prio", "set,26,5"],
             expect_rc=remap[0], expect_err=remap[1], app=remap[2], trust_is="dscp")
        delete = {"generic": (0, None, [[26, 5]], "dscp"), "mlx5": (1, "dscp2prio command failed", [[26, 5]], "dscp"),
                  "ice": (1, NO_BUFFER_DEATH, [], "pcp")}[pers]
        step(pers, p + "3", "mlnx_qos --dscp2prio del,26,3", q + ["--dscp2prio", "del,26,3"],
             expect_rc=delete[0], expect_err=delete[1], app=delete[2], trust_is=delete[3])
        step(pers, p + "4", "mlnx_qos --dscp2prio flush", q + ["--dscp2prio", "flush"], app=[], trust_is="pcp", **dies)
        step(pers, p + "5", "mlnx_qos --trust dscp: the 64 default entries", q + ["--trust", "dscp"],
             app=[[d, d >> 3] for d in range(64)], trust_is="dscp", **dies)
        step(pers, p + "6", "mlnx_qos --trust pcp: every DSCP entry deleted", q + ["--trust", "pcp"], app=[], trust_is="pcp",
             **dies)
        # ice: mlnx_qos dies before its ETS step: the ETS stays as it was
        if ice:
            step(pers, p + "7", "mlnx_qos ETS bandwidths summing to 80 (ice: never sent, mlnx_qos dies before)",
                 q + ["--tsa", "ets,ets,strict,strict,strict,strict,strict,strict", "--tcbw", "50,30,0,0,0,0,0,0"],
                 unchanged=("ets",), **dies)
        else:
            step(pers, p + "7", "mlnx_qos ETS bandwidths summing to 80: refused by the driver",
                 q + ["--tsa", "ets,ets,strict,strict,strict,strict,strict,strict", "--tcbw", "50,30,0,0,0,0,0,0"],
                 expect_rc=1, expect_err=NETLINK_BAD_VALUE, unchanged=("ets",))
        step(pers, p + "8", "mlnx_qos -a", q + ["-a"], **(dies or {"expect_rc": 0}))
        # the remap steps of this driver's rule (26: 3 -> 5, 48 -> 6 mapped all along): DSCP trust throughout
        step(pers, p + "R1", "mlnx_qos --dscp2prio set,26,3 --dscp2prio set,48,6", q + ["--dscp2prio", "set,26,3", "--dscp2prio", "set,48,6"],
             app=[[26, 3], [48, 6]], trust_is="dscp", **dies)
        for i, arg in enumerate(REMAP_STEPS[pers]):
            step(pers, p + "R%d" % (i + 2), "remap 26 3->5, step %d of %d: --dscp2prio %s" % (i + 1, len(REMAP_STEPS[pers]), arg),
                 q + ["--dscp2prio", arg], app=[[26, 5], [48, 6]] if i + 1 == len(REMAP_STEPS[pers]) else None, trust_is="dscp",
                 **dies)
        step(pers, p + "R9", "mlnx_qos --dscp2prio flush", q + ["--dscp2prio", "flush"], app=[], trust_is="pcp", **dies)
    # ice: mlnx_qos never sends an ETS there, so a refused ETS cannot stay in "desired" (IE2-IE4 do it with dcb)
    # and the next DSCP entry is committed
    dies = {"expect_rc": 1, "expect_err": NO_BUFFER_DEATH}
    step("ice", "IQ9", "mlnx_qos --dscp2prio set,26,3: L3 DSCP mode", q + ["--dscp2prio", "set,26,3"], app=[[26, 3]],
         trust_is="dscp", **dies)
    step("ice", "IQ10", "mlnx_qos ETS 50+30 on eight TCs in use (DSCP mode): never sent",
         q + ["--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "50,30,0,0,0,0,0,0"], unchanged=("ets",), **dies)
    step("ice", "IQ11", "mlnx_qos --dscp2prio set,10,4 after it: committed (no refused ETS in desired)",
         q + ["--dscp2prio", "set,10,4"], app=[[10, 4], [26, 3]], trust_is="dscp", check=expect_dscp_prio(10, [4]), **dies)
    step("ice", "IQ12", "mlnx_qos ETS TC0 100%: never sent",
         q + ["--tsa", "ets,ets,ets,ets,ets,ets,ets,ets", "--tcbw", "100,0,0,0,0,0,0,0"],
         app=[[10, 4], [26, 3]], trust_is="dscp", unchanged=("ets",), **dies)
    step("ice", "IQ13", "mlnx_qos --dscp2prio flush", q + ["--dscp2prio", "flush"], app=[], trust_is="pcp", **dies)


# what a comparison of two runs looks at, per mlnx_qos step
COMPARED = ("rc", "app", "trust", "extra", "stdout", "stderr_last")


def compared(res):
    err = [ln for ln in res["stderr"].splitlines() if ln.strip()]
    return dict(res, stderr_last=err[-1] if err else "")


def differences(double, real):
    """``[(personality, id, title, {field: (double, real)})]`` for the mlnx_qos steps whose outcomes differ."""
    out = []
    real_by_id = dict((r["id"], r) for r in real)
    for d in double:
        if "mlnx_qos" not in d["title"] and "mlnx_qos" not in d["command"]:
            continue
        r = real_by_id.get(d["id"])
        if r is None:
            out.append((d["personality"], d["id"], d["title"], {"step": ("run", "missing")}))
            continue
        a, b = compared(d), compared(r)
        diff = dict((k, (a[k], b[k])) for k in COMPARED if a[k] != b[k])
        if diff:
            out.append((d["personality"], d["id"], d["title"], diff))
    return out


def run_checks(args, tool):
    """Load dcbsim, run every check (the mlnx_qos ones with ``tool``), unload it: the results."""
    global RESULTS
    RESULTS = []
    rc, _out, err = sh(["insmod", args.ko] + PARAMS if args.ko else ["modprobe", "dcbsim"] + PARAMS)
    if rc != 0:
        sys.exit("loading dcbsim: " + err)
    try:
        for dev in DEVS.values():
            sh(["ip", "link", "set", "dev", dev, "up"])
        for pers, dev in DEVS.items():
            rc, out, _err = sh(["ethtool", "-i", dev])
            print("%s: %s, ethtool driver %s" % (dev, read_sys(dev, "personality"), out.splitlines()[0].split(": ", 1)[-1]))
        app_rules()
        ets_rules()
        if tool:
            mlnx_qos_rules(tool)
    finally:
        sh(["modprobe", "-r", "dcbsim"])
    return RESULTS


PARAMS = ["num_devs=3", "personality=generic,mlx5,ice"]


def main():
    global TOOL_ENV
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mlnx-qos", help="path of mlnx_qos_double.py: run the mlnx_qos checks too")
    ap.add_argument("--real-mlnx-qos", help="path of NVIDIA's mlnx_qos (mlnx-tools python/mlnx_qos, with its Python/ "
                                            "folder beside it): run every check again with it and print the mlnx_qos "
                                            "steps where it and the double differ")
    ap.add_argument("--json", help="write the results to this file")
    ap.add_argument("--reload", action="store_true", help="unload a dcbsim that is loaded, and load it again at the end")
    ap.add_argument("--ko", help="insmod this dcbsim.ko instead of the installed module")
    args = ap.parse_args()
    if args.real_mlnx_qos and not args.mlnx_qos:
        sys.exit("--real-mlnx-qos is compared with the double: give --mlnx-qos too")

    started = time.time()
    was_loaded = os.path.isdir("/sys/module/dcbsim")
    if was_loaded:
        if not args.reload:
            sys.exit("dcbsim is loaded: give --reload to unload it for the checks")
        rc, _out, err = sh(["modprobe", "-r", "dcbsim"])
        if rc != 0:
            sys.exit("modprobe -r dcbsim: " + err)
    real, diffs = None, []
    try:
        results = run_checks(args, [sys.executable, args.mlnx_qos] if args.mlnx_qos else None)
        if args.real_mlnx_qos:
            tool = os.path.abspath(args.real_mlnx_qos)
            TOOL_ENV = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(tool), "Python"))
            print("\n=== the same checks with the real mlnx_qos: %s\n" % tool)
            real = run_checks(args, [sys.executable, tool])
            diffs = differences(results, real)
    finally:
        if was_loaded:
            sh(["modprobe", "dcbsim"])
    failed = [r for r in results if not r["ok"]]
    names = ", ".join(r["personality"] + " " + r["id"] for r in failed)
    seconds = round(time.time() - started, 1)
    print("\n%d checks, %d failed%s (%.1f s)" % (len(results), len(failed), (": " + names) if failed else "", seconds))
    if real is not None:
        steps = len([d for d in results if "mlnx_qos" in d["command"]])
        real_failed = [r for r in real if not r["ok"]]
        print("the real mlnx_qos: %d of %d checks as expected%s" % (
            len(real) - len(real_failed), len(real),
            (" (not: %s)" % ", ".join(r["personality"] + " " + r["id"] for r in real_failed)) if real_failed else ""))
        print("mlnx_qos steps where the real tool and the double differ: %d of %d" % (len(diffs), steps))
        for pers, sid, title, diff in diffs:
            print("  [%s] %s %s" % (pers, sid, title))
            for field, (dbl, rl) in sorted(diff.items()):
                print("      %s: double %s | real %s" % (field, json.dumps(dbl)[:300], json.dumps(rl)[:300]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"results": results, "failed": len(failed), "seconds": seconds, "real": real,
                       "differences": [{"personality": p, "id": i, "title": t, "fields": d} for p, i, t, d in diffs]},
                      f, indent=1)
    sys.exit(1 if failed or diffs or (real is not None and any(not r["ok"] for r in real)) else 0)


if __name__ == "__main__":
    main()
