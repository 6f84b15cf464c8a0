# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""TEST DOUBLES for the roce_qos unit tests (not used by the collection).

Unit tests cannot change a real NIC, so the commands the QoS backends run are
answered by the scripted doubles below. Each keeps state, applies the command
the way the real tool + kernel driver would, and answers in the real output
format, so that a backend's parse -> plan -> apply -> read-back loop is
exercised end to end:

* :class:`FakeDcbTool` - iproute2 6.1 ``dcb`` in front of the kernel DCB
  netlink and a driver: :class:`DcbPort` (the kernel's generic APP table,
  ETS validated like ``tests/dcbsim`` / mlx5) or :class:`DriverDcbPort`
  (one personality's rules, mlx5, ice or generic: MlnxPort's driver model)
  (outputs and failure behaviour as captured with iproute2 6.1 in the VM lab,
  tests/unit/fixtures/qos/dcb_real_lab).
* :class:`FakeMlnxQos` - NVIDIA ``mlnx_qos`` (mlnx-tools ``python/mlnx_qos``:
  option handling, its ``pretty_print`` output, the DCB APP-table trust model
  including the "last DSCP entry removed -> trust pcp" trap, or the MLNX_OFED
  sysfs trust model, and its tracebacks: on a driver without the DCB buffer op
  every call dies after its dcbx/pfc/dscp2prio/trust changes, exit 1, a
  refused PFC is a TypeError traceback) on the APP-table and ETS rules of mlx5
  (default), ice or the kernel's generic table (:class:`MlnxPort`
  ``personality``, the rules of tests/dcbsim's personalities; the lab runs the
  real-netlink double tests/unit/fixtures/mlnx_qos_double.py against them,
  and tests/dcbsim/compare-mlnx-qos that one against the real mlnx_qos).
* :class:`FakeIpLink` - ``ip link set dev X mtu N`` writing the fixture tree's mtu file.
* :class:`FakeEthtool` - ``ethtool -a`` / ``-A`` (ethtool 6.1 text; virtio's real refusal).
* :class:`FakeRdmaCmConfigfs` - the rdma_cm configfs behaviour of ``mkdir``
  (the kernel creates ``ports/N/default_roce_{mode,tos}``) and ``rmdir``
  (the values stay in the kernel) on a plain fixture directory.
* :class:`FakeHost` - routes ``run_command`` / ``get_bin_path`` to the doubles and logs calls.
* :class:`LabEngine` - the engine tests' set-up: the lab's sysfs tree with the doubles above in front of it.

Real tool output is tested separately against captured fixtures.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import errno
import json
import os
import shutil

from ansible_collections.rdma.fabric.plugins.module_utils.qos import configfs, engine

FIXTURES = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", "fixtures", "qos"))


def fixture_text(*parts):
    with open(os.path.join(FIXTURES, *parts)) as f:
        return f.read()


_TREES = {}


def make_tree(tmp_path, name):
    """Build sysfs fixture ``name`` under tmp_path; returns the path playing ``/sys``.

    Trees are stored as JSON manifests (tests/unit/fixtures/qos/sysfs/NAME.json,
    see pack_tree.py there: sysfs names contain ':' and class entries are
    directory symlinks, both of which ansible-test rejects in a collection).
    """
    if name not in _TREES:
        with open(os.path.join(FIXTURES, "sysfs", name + ".json")) as f:
            _TREES[name] = json.load(f)
    doc = _TREES[name]
    dest = os.path.join(str(tmp_path), name)
    for rel in doc["empty_dirs"]:
        os.makedirs(os.path.join(dest, rel))
    for rel, text in doc["files"].items():
        write(os.path.join(dest, rel), text)
    for rel, target in doc["links"].items():
        path = os.path.join(dest, rel)
        if not os.path.isdir(os.path.dirname(path)):
            os.makedirs(os.path.dirname(path))
        os.symlink(target, path)
    return os.path.join(dest, "sys")


def write(path, text):
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        os.makedirs(parent)
    with open(path, "w") as f:
        f.write(text)


def add_netdev(sysfs, name, mtu=1500):
    """A virtual netdev folder (``/sys/devices/virtual/net/NAME``) and its class link."""
    dev = os.path.join(sysfs, "devices", "virtual", "net", name)
    write(os.path.join(dev, "mtu"), "%d\n" % mtu)
    write(os.path.join(dev, "operstate"), "up\n")
    link = os.path.join(sysfs, "class", "net", name)
    if not os.path.isdir(os.path.dirname(link)):
        os.makedirs(os.path.dirname(link))
    os.symlink("../../devices/virtual/net/" + name, link)
    return dev


def add_rxe(sysfs, ibdev, parent):
    """A Soft-RoCE device on ``parent`` as rdma_rxe shows it (virtual, ``parent`` file, RoCE v2 GIDs)."""
    dev = os.path.join(sysfs, "devices", "virtual", "infiniband", ibdev)
    write(os.path.join(dev, "parent"), parent + "\n")
    write(os.path.join(dev, "node_type"), "1: CA\n")
    port = os.path.join(dev, "ports", "1")
    write(os.path.join(port, "link_layer"), "Ethernet\n")
    write(os.path.join(port, "state"), "4: ACTIVE\n")
    write(os.path.join(port, "gid_attrs", "ndevs", "0"), parent + "\n")
    write(os.path.join(port, "gid_attrs", "types", "0"), "RoCE v2\n")
    link = os.path.join(sysfs, "class", "infiniband", ibdev)
    if not os.path.isdir(os.path.dirname(link)):
        os.makedirs(os.path.dirname(link))
    os.symlink("../../devices/virtual/infiniband/" + ibdev, link)


# ---------------------------------------------------------------------------
# iproute2 dcb
# ---------------------------------------------------------------------------
TSA_NUM = {"strict": 0, "cbs": 1, "ets": 2, "vendor": 255}
TSA_NAME = dict((v, k) for k, v in TSA_NUM.items())
SEL_DSCP = 5


class DcbPort(object):
    """Kernel-side DCB state of one netdev (what the driver keeps)."""

    def __init__(self, supported=True, num_tc=8):
        self.supported = supported
        self.num_tc = num_tc
        self.pfc_en = 0
        self.delay = 0
        self.tc_tx_bw = [0] * 8
        self.tc_rx_bw = [0] * 8
        self.tc_tsa = [0] * 8
        self.prio_tc = [0] * 8
        self.apps = []          # (selector, priority, protocol), newest first, as the kernel's list
        self.dcbx = ["host", "ieee"]
        self.fail = set()       # like dcbsim's fail= parameter: ets, pfc, app
        self.app_sizes = []     # DSCP entry count after every change (trap check)

    def dscp_count(self):
        return len([a for a in self.apps if a[0] == SEL_DSCP])

    # -- the driver's ops (the kernel's generic APP table; dcbsim / mlx5e_dbcnl_validate_ets) ----------
    def setapp(self, dscp, prio):
        """0 or the errno: an identical entry is EEXIST (dcb_ieee_setapp); a second priority of a DSCP is kept."""
        if (SEL_DSCP, prio, dscp) in self.apps:
            return errno.EEXIST
        self.apps.insert(0, (SEL_DSCP, prio, dscp))
        return 0

    def delapp(self, dscp, prio):
        if (SEL_DSCP, prio, dscp) not in self.apps:
            return errno.ENOENT
        self.apps.remove((SEL_DSCP, prio, dscp))
        return 0

    def setpfc(self, pfc_en):
        """True when taken (more priorities than pfc_cap: refused)."""
        if bin(pfc_en).count("1") > self.num_tc:
            return False
        self.pfc_en = pfc_en
        return True

    def setets(self, tsa, bw, prio_tc):
        """True when taken: TSAs strict/ets only, TCs below num_tc, ETS bandwidths summing to 100."""
        has_ets = any(t == 2 for t in tsa)
        if (any(t not in (0, 2) for t in tsa) or any(tc >= self.num_tc for tc in prio_tc)
                or (has_ets and sum(b for t, b in zip(tsa, bw) if t == 2) != 100)):
            return False
        self.tc_tsa, self.tc_tx_bw, self.prio_tc = list(tsa), list(bw), list(prio_tc)
        return True


class DriverDcbPort(object):
    """TEST DOUBLE: one driver's DCB netlink side as iproute2 ``dcb`` reads and sets it, on the rules of one
    personality (mlx5, ice, generic): the driver model is :class:`MlnxPort`'s (``driver``), so ``dcb`` and
    ``mlnx_qos`` (FakeMlnxQos given ``driver``) see the same port and the rules are written once.

    ``app_sizes`` records the DSCP entry count after every APP change (0 = the port went to PCP trust).
    """

    def __init__(self, personality, num_tc=8, driver=None):
        self.driver = driver or MlnxPort(personality=personality)
        self.personality = personality
        self.supported = True
        self.num_tc = num_tc
        self.delay = 0
        self.tc_rx_bw = [0] * 8
        self.dcbx = ["host", "ieee"]
        self.fail = set()       # like dcbsim's fail= parameter: ets, pfc, app
        self.app_sizes = []

    apps = property(lambda self: self.driver.apps)
    pfc_en = property(lambda self: self.driver.pfc_en)
    tc_tsa = property(lambda self: self.driver.tsa)
    tc_tx_bw = property(lambda self: self.driver.tcbw)
    prio_tc = property(lambda self: self.driver.prio_tc)

    def dscp_count(self):
        return self.driver.dscp_count()

    def setapp(self, dscp, prio):
        return self.driver.setapp(dscp, prio)

    def delapp(self, dscp, prio):
        return self.driver.delapp(dscp, prio)

    def setpfc(self, pfc_en):
        return bin(pfc_en).count("1") <= self.num_tc and self.driver.setpfc(pfc_en)

    def setets(self, tsa, bw, prio_tc):
        return self.driver.setets(tsa, bw, prio_tc)


class FakeDcbTool(object):
    """TEST DOUBLE of iproute2 6.1 ``dcb`` (see module docstring).

    Answers and failure modes are those captured in the VM lab
    (tests/unit/fixtures/qos/dcb_real_lab): JSON shapes; ``pfc set`` /
    ``ets set`` exit 0 silently when the driver refuses; ``app add`` applies
    entries one by one and stops at the first error ("File exists").
    """

    NO_DCB_READ = "Attribute read: Operation not supported\n"     # real, virtio-net
    NO_DCB_WRITE = "Attribute write: Operation not supported\n"   # real, virtio-net (app add)
    APP_ERRORS = {17: "File exists", 2: "No such file or directory", 5: "Input/output error", 22: "Invalid argument",
                  1: "Operation not permitted"}

    def __init__(self, ports):
        self.ports = ports      # netdev -> DcbPort

    @staticmethod
    def _j(obj):
        return json.dumps(obj, separators=(",", ":")) + "\n"

    def __call__(self, argv):
        args = list(argv[1:])
        json_out = False
        if args and args[0] == "-j":
            json_out = True
            args = args[1:]
        obj, verb = args[0], args[1]
        if args[2] != "dev":
            return 1, "", "Expected `dev DEV'\n"
        dev = args[3]
        rest = args[4:]
        port = self.ports.get(dev)
        if port is None:
            return 1, "\n" if json_out else "", "Attribute read: No such device\n"
        if not port.supported:
            if obj == "app" and verb in ("add", "del"):
                return 1, "", self.NO_DCB_WRITE
            return 1, "\n" if json_out else "", self.NO_DCB_READ
        if verb == "show":
            if not json_out:
                raise AssertionError("the backend must read with -j: %r" % (argv,))
            return self._show(port, obj)
        if obj == "pfc" and verb == "set":
            return self._pfc_set(port, rest)
        if obj == "ets" and verb == "set":
            return self._ets_set(port, rest)
        if obj == "app" and verb in ("add", "del"):
            return self._app(port, verb, rest)
        raise AssertionError("FakeDcbTool: unexpected command %r" % (argv,))

    def _show(self, port, obj):
        if obj == "pfc":
            return 0, self._j({"pfc_cap": port.num_tc, "macsec_bypass": False, "delay": port.delay,
                               "prio_pfc": [bool(port.pfc_en & (1 << p)) for p in range(8)]}), ""
        if obj == "ets":
            return 0, self._j({
                "willing": False, "ets_cap": port.num_tc, "cbs": False,
                "tc_bw": list(port.tc_tx_bw), "pg_bw": list(port.tc_rx_bw),
                "tc_tsa": [TSA_NAME.get(t, "???") for t in port.tc_tsa],
                "prio_tc": list(port.prio_tc),
                "reco_tc_bw": [0] * 8, "reco_tc_tsa": ["strict"] * 8, "reco_prio_tc": [0] * 8}), ""
        if obj == "app":
            dscp = sorted((a[2], a[1]) for a in port.apps if a[0] == SEL_DSCP)
            return 0, self._j({"dscp_prio": [[d, p] for d, p in dscp]} if dscp else {}), ""
        if obj == "dcbx":
            return 0, self._j(dict((k, True) for k in port.dcbx)), ""
        raise AssertionError(obj)

    @staticmethod
    def _pairs(rest, keyword):
        i = rest.index(keyword) + 1
        out = []
        while i < len(rest) and ":" in rest[i]:
            k, v = rest[i].split(":", 1)
            out.append((k, v))
            i += 1
        return out

    def _pfc_set(self, port, rest):
        en = port.pfc_en
        for k, v in self._pairs(rest, "prio-pfc"):
            bit = 1 << int(k)
            en = (en | bit) if v == "on" else (en & ~bit)
        # driver refusals (injected -EIO, more priorities than pfc_cap): rc 0, silent, unchanged
        if "pfc" not in port.fail:
            port.setpfc(en)
        return 0, "", ""

    def _ets_set(self, port, rest):
        tsa, bw, prio_tc = list(port.tc_tsa), list(port.tc_tx_bw), list(port.prio_tc)
        if "tc-tsa" in rest:
            for k, v in self._pairs(rest, "tc-tsa"):
                tsa[int(k)] = TSA_NUM[v]
        if "tc-bw" in rest:
            for k, v in self._pairs(rest, "tc-bw"):
                bw[int(k)] = int(v)
        if "prio-tc" in rest:
            for k, v in self._pairs(rest, "prio-tc"):
                prio_tc[int(k)] = int(v)
        # iproute2 dcb_ets_validate_bw(): the tool itself refuses, rc 1
        has_ets = any(t == 2 for t in tsa)
        total = sum(bw)
        if not (total == 100 or (not has_ets and total == 0)):
            return 1, "", "Bandwidth percentages in tc-bw sum to %d%%, expected %d%%\n" % (total, 100 if has_ets else 0)
        # driver refusals (the port's setets): rc 0, silent, unchanged
        if "ets" not in port.fail:
            port.setets(tsa, bw, prio_tc)
        return 0, "", ""

    def _app(self, port, verb, rest):
        pairs = [(int(k), int(v)) for k, v in self._pairs(rest, "dscp-prio")]
        for d, p in pairs:                  # one by one, stopping at the first error
            if "app" in port.fail:
                err = 5
            else:
                err = port.setapp(d, p) if verb == "add" else port.delapp(d, p)
            if err:
                return 1, "", "Attribute write: %s\n" % self.APP_ERRORS[err]
            port.app_sizes.append(port.dscp_count())
        return 0, "", ""


# ---------------------------------------------------------------------------
# NVIDIA mlnx_qos
# ---------------------------------------------------------------------------
class MlnxPort(object):
    """State of one port as mlnx_qos sees it, on the DCB rules of one driver.

    ``personality`` picks the driver's APP-table and ETS rules, the same ones
    tests/dcbsim implements for the lab (each from the driver's 6.1 source):

    * ``mlx5`` (default; ``mlx5e_dcbnl_ieee_setapp/delapp``): a set replaces
      the DSCP's mapping; only the current mapping can be deleted (ENOENT).
    * ``ice`` (``ice_dcbnl_setapp/delapp``, software DCBX): a mapped DSCP
      cannot be set again (EINVAL); the first DSCP entry switches the port to
      DSCP mode with ETS reset to TC0 100%, all TCs ets, prio_tc identity (and
      prio_tc ignored by later ETS sets); the last one removed brings the
      default config back (PFC off, every priority on TC0).  ETS: the
      bandwidths of the TCs in use must sum to 100 whatever their TSA
      (``ice_dcb_bwchk``); non-contiguous TCs give the default config.  No
      buffer or maxrate ops (mlnx_qos says so and prints TC lines without
      their prefix; mlnx_qos itself never gets there: see FakeMlnxQos).
      ice keeps two configs, as dcbsim does: every set edits
      "desired" (empty at start) and commits all of it to "local" (what the
      port shows): so the first PFC set brings desired's all-strict ETS, the
      default config after the last DSCP entry is undone (PFC included) by
      the next commit, and a refused ETS stays in desired and makes the next
      PFC or DSCP change fail too (the entry stays in the table), until a
      valid ETS is set.
    * ``generic`` (the kernel's own table): a second priority for a mapped
      DSCP is added (both kept); an identical entry is EEXIST.
    """

    PERSONALITIES = ("mlx5", "ice", "generic")

    def __init__(self, sysfs_trust=False, personality="mlx5"):
        if personality not in self.PERSONALITIES:
            raise ValueError("personality must be one of %s" % (self.PERSONALITIES,))
        self.personality = personality
        self.sysfs_trust = sysfs_trust   # MLNX_OFED: /sys/class/net/IF/qos/trust exists
        self.trust_file = "pcp"
        self.sysfs_table = dict((d, d >> 3) for d in range(64))
        self.apps = []                   # (selector, priority, protocol), newest first
        self.pfc_en = 0
        self.cable_len = 7
        self.prio_tc = [1, 0, 2, 3, 4, 5, 6, 7]     # mlx5 default (see fixtures)
        self.tsa = [255] * 8
        self.tcbw = [0] * 8
        self.dcbx_host = True
        self.buffers = [80256, 80256, 896, 80256, 896, 896, 896, 896]
        if personality == "ice":
            self._ice_default_config()
            # ice's "desired" config (qos_cfg.desired_dcbx_cfg): zeroed at start, VLAN (PCP) mode
            self.desired = {"prio_tc": [0] * 8, "tsa": [0] * 8, "tcbw": [0] * 8, "pfc_en": 0, "dscp_mode": False}
            self.cable_len = 0
            self.buffers = None
        elif personality == "generic":
            self.prio_tc, self.tsa, self.cable_len = [0] * 8, [0] * 8, 0
            self.buffers = [512 * 1024] + [0] * 7
        self.fail = set()                # options whose netlink call fails: pfc, ets, dscp2prio, trust
        self.fail_app = set()            # ("add"|"del", dscp): that APP change of that DSCP fails (EIO)
        self.trust_history = []          # trust after every changing command

    def trust(self):
        if self.sysfs_trust:
            return self.trust_file
        return "dscp" if self.dscp_count() else "pcp"

    def dscp_count(self):
        return len([a for a in self.apps if a[0] == SEL_DSCP])

    # -- the driver's rules --------------------------------------------
    def _ice_default_config(self):
        """ice_dcb_sw_dflt_cfg() on "local": TC0 ets 100%, every priority on TC0, PFC off, VLAN mode."""
        self.prio_tc, self.tsa, self.tcbw, self.pfc_en = [0] * 8, [2] + [0] * 7, [100] + [0] * 7, 0
        self.local_dscp_mode = False

    @staticmethod
    def _ice_bwchk(cfg):
        """ice_dcb_bwchk() on ``cfg`` (TC0 gets 100% where one TC is in use or all are 0): taken or not."""
        used = set(cfg["prio_tc"])
        n = len(used) if used == set(range(len(used))) else 1     # non-contiguous TCs count as one
        total = sum(cfg["tcbw"][:n]) % 256                         # a u8 sum, as the driver's
        if n == 1 or total == 0:
            cfg["tcbw"][0] = 100
            return True
        return total == 100

    def _ice_commit(self):
        """ice_pf_dcb_cfg(desired): check, copy to local; non-contiguous TCs give the default config."""
        d = self.desired
        if not self._ice_bwchk(d):
            return False
        self.prio_tc, self.tsa, self.tcbw, self.pfc_en = list(d["prio_tc"]), list(d["tsa"]), list(d["tcbw"]), d["pfc_en"]
        self.local_dscp_mode = d["dscp_mode"]
        used = set(d["prio_tc"])
        if used != set(range(len(used))):                          # ice_dcb_noncontig_cfg()
            self._ice_default_config()
        return True

    def setapp(self, dscp, prio):
        """The driver's ieee_setapp for DSCP -> prio: 0 or the errno."""
        if ("add", dscp) in self.fail_app:
            return errno.EIO
        mine = [a for a in self.apps if a[0] == SEL_DSCP and a[2] == dscp]
        if self.personality == "mlx5":          # the DSCP's mapping is replaced
            if not (mine and mine[0][1] == prio):
                for a in mine:
                    self.apps.remove(a)
                self.apps.insert(0, (SEL_DSCP, prio, dscp))
            return 0
        if (SEL_DSCP, prio, dscp) in self.apps:
            return errno.EEXIST                 # dcb_ieee_setapp()
        if self.personality == "ice" and mine:
            return errno.EINVAL                 # "DSCP value ... already user mapped"
        self.apps.insert(0, (SEL_DSCP, prio, dscp))
        if self.personality != "ice":
            return 0
        if not self.local_dscp_mode:            # switched QoS to L3 DSCP mode: desired gets the DSCP defaults
            self.desired.update(dscp_mode=True, prio_tc=list(range(8)), tsa=[2] * 8, tcbw=[100] + [0] * 7)
        # a refused commit: ICE_DCB_NO_HW_CHG (1), an error to the tool; the entry stays
        return 0 if self._ice_commit() else 1

    def delapp(self, dscp, prio):
        """The driver's ieee_delapp: 0 or the errno (mlx5: not the current mapping, others: no entry)."""
        if ("del", dscp) in self.fail_app:
            return errno.EIO
        entry = (SEL_DSCP, prio, dscp)
        if entry not in self.apps:
            return errno.ENOENT
        self.apps.remove(entry)
        if self.personality != "ice":
            return 0
        if not self.dscp_count() and self.desired["dscp_mode"]:    # switched QoS to L2 VLAN mode
            self.desired["dscp_mode"] = False
            self._ice_default_config()          # on local only: desired keeps its ETS and PFC
            return 0
        return 0 if self._ice_commit() else errno.EINVAL

    def setpfc(self, pfc_en):
        """The driver's ieee_setpfc: True when taken (ice: desired committed, its ETS included)."""
        if self.personality != "ice":
            self.pfc_en = pfc_en
            return True
        self.desired["pfc_en"] = pfc_en
        return self._ice_commit()

    def setets(self, tsa, tcbw, prio_tc):
        """The driver's ieee_setets: True when taken (state changed), False when refused."""
        if self.personality == "ice":
            d = self.desired                    # edited even when the check then refuses it
            d["tsa"], d["tcbw"] = list(tsa), list(tcbw)
            if not d["dscp_mode"]:              # in DSCP mode prio_tc cannot change
                d["prio_tc"] = list(prio_tc)
            if not self._ice_bwchk(d):
                return False
            return self._ice_commit()
        bad_tsa = any(t not in (0, 2) for t in tsa) if self.personality == "generic" else False
        if bad_tsa or (any(t == 2 for t in tsa) and sum(b for t, b in zip(tsa, tcbw) if t == 2) != 100):
            return False
        self.tsa, self.tcbw, self.prio_tc = list(tsa), list(tcbw), list(prio_tc)
        return True


class FakeMlnxQos(object):
    """TEST DOUBLE of NVIDIA ``mlnx_qos`` (see module docstring)."""

    NETLINK_ERR = "Netlink error: Bad value. see dmesg.\n"
    # The last lines of what mlnx_qos (mlnx-tools 8fbfd9c) prints on stderr, exit 1, when the error handler of
    # a step meets an exception without errno (its check_privilege reads e.errno).
    NO_BUFFER_TRACEBACK = ("Traceback (most recent call last):\n  ...\nKeyError: 10\n\n"
                           "During handling of the above exception, another exception occurred:\n\n"
                           "Traceback (most recent call last):\n  ...\n"
                           "AttributeError: 'KeyError' object has no attribute 'errno'\n")
    PFC_TRACEBACK = ("Traceback (most recent call last):\n  ...\nOSError: Netlink error: Bad value. see dmesg.\n\n"
                     "During handling of the above exception, another exception occurred:\n\n"
                     "Traceback (most recent call last):\n  ...\n"
                     "TypeError: can only concatenate str (not \"OSError\") to str\n")

    def __init__(self, ports):
        self.ports = ports

    @staticmethod
    def _parse(args):
        opts = {"dscp2prio": []}
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-a":
                opts["printall"] = True
                i += 1
                continue
            name = {"-i": "intf", "--interface": "intf", "-f": "pfc", "--pfc": "pfc", "-p": "prio_tc",
                    "--prio_tc": "prio_tc", "-s": "tsa", "--tsa": "tsa", "-t": "tcbw", "--tcbw": "tcbw",
                    "--trust": "trust", "--dscp2prio": "dscp2prio", "-d": "dcbx", "--dcbx": "dcbx"}[a]
            if name == "dscp2prio":
                opts["dscp2prio"].append(args[i + 1])
            else:
                opts[name] = args[i + 1]
            i += 2
        return opts

    def __call__(self, argv):
        o = self._parse(list(argv[1:]))
        port = self.ports.get(o.get("intf"))
        if port is None:
            return 1, "", "Traceback (most recent call last):\n  ...\nOSError: [Errno 19] No such device\n"
        out = []
        changed = False
        if o.get("pfc"):
            vals = o["pfc"].split(",")
            if len(vals) != 8:
                return 1, "pfc list must have 8 items\n", ""
            if "pfc" in port.fail or not port.setpfc(sum(int(v) << i for i, v in enumerate(vals))):
                return 1, "", self.PFC_TRACEBACK
            changed = True
        if o["dscp2prio"] and o.get("trust"):
            return 1, "trust and dscp2prio commands cannot be used at the same time.\n", ""
        for cmd in o["dscp2prio"]:
            if "dscp2prio" in port.fail:
                return 1, "dscp2prio command failed\n", ""
            if cmd == "flush":                  # every DSCP entry of one table read, deleted one by one
                for sel, prio, proto in list(port.apps) if not port.sysfs_trust else []:
                    if sel == SEL_DSCP and port.delapp(proto, prio):
                        return 1, "dscp2prio command failed\n", ""
                changed = True
                port.trust_history.append(port.trust())
                continue
            action, d, p = cmd.split(",")
            d, p = int(d), int(p)
            if port.sysfs_trust:
                if action == "set":
                    port.sysfs_table[d] = p
            elif (port.setapp(d, p) if action == "set" else port.delapp(d, p)):
                return 1, "dscp2prio command failed\n", ""
            changed = True
            port.trust_history.append(port.trust())
        if o.get("trust"):
            if o["trust"] not in ("pcp", "dscp"):
                return 1, "Invalid trust state command. Refer to the help.\n", ""
            if "trust" in port.fail:
                return 1, "Priority trust state is not supported on your system\n", ""
            if port.trust() != o["trust"]:
                if port.sysfs_trust:
                    port.trust_file = o["trust"]
                elif o["trust"] == "pcp":               # delAppEntry(): every DSCP entry
                    for sel, prio, proto in list(port.apps):
                        if sel == SEL_DSCP and port.delapp(proto, prio):
                            return 1, "Priority trust state is not supported on your system\n", ""
                else:                                   # setDefaultAppEntry(..., 64)
                    for i in range(64):
                        if port.setapp(i, i >> 3):
                            return 1, "Priority trust state is not supported on your system\n", ""
            changed = True
        if port.buffers is None and not port.sysfs_trust:
            # no DCB buffer op (ice): mlnx_qos dies reading the buffers, before its ETS step
            return 1, "".join(out), self.NO_BUFFER_TRACEBACK
        tsa, tcbw, prio_tc = list(port.tsa), list(port.tcbw), list(port.prio_tc)
        if o.get("tsa"):
            names = o["tsa"].split(",")
            if len(names) != 8:
                return 1, "tsa list must have 8 items\n", ""
            tsa = [{"strict": 0, "ets": 2, "vendor": 255}[n] for n in names]
        if o.get("tcbw"):
            vals = [int(v) for v in o["tcbw"].split(",")]
            for t, b in zip(tsa, vals):
                if t != 2 and b != 0:
                    return 1, "ETS BW for a strict/vendor TC must be 0\n", ""
            tcbw = vals
        if o.get("prio_tc"):
            prio_tc = [int(v) for v in o["prio_tc"].split(",")]
        shown = None
        if o.get("tsa") or o.get("tcbw") or o.get("prio_tc"):
            if "ets" in port.fail or not port.setets(tsa, tcbw, prio_tc):
                return 1, "".join(out) + self.NETLINK_ERR, ""
            shown = (prio_tc, tsa, tcbw)     # mlnx_qos prints what it asked for
            changed = True
        if changed:
            port.trust_history.append(port.trust())
        out.append(self.pretty(port, o.get("printall", False), shown))
        return 0, "".join(out), ""

    @staticmethod
    def pretty(port, printall, shown=None):
        """Port of mlnx-tools python/mlnx_qos pretty_print(); ``shown``: the (prio_tc, tsa, tcbw) it set."""
        prio_tc, tsa, tcbw = shown or (port.prio_tc, port.tsa, port.tcbw)
        lines = ["DCBX mode: OS controlled" if port.dcbx_host else "DCBX mode: Firmware controlled"]
        trust = port.trust()
        lines.append("Priority trust state: " + trust)
        if trust == "dscp":
            lines.append("dscp2prio mapping:")
            s = [""] * 8
            if port.sysfs_trust:
                for d in range(64):
                    s[port.sysfs_table[d]] += "%02d," % d
            else:
                for sel, prio, proto in port.apps:
                    if sel == SEL_DSCP:
                        s[prio] += "%02d," % proto
            for i in range(8):
                temp = ""
                pad = "\tprio:%d dscp:" % i
                while len(s[i]) > 24:
                    temp += pad + s[i][:24] + "\n"
                    s[i] = s[i][24:]
                if s[i] != "":
                    temp += pad + s[i]
                if temp != "":
                    lines.append(temp)
        lines.append("default priority:")
        if port.buffers is not None:
            lines.append("Receive buffer size (bytes): " + "".join("%d," % b for b in port.buffers))
        lines.append("Cable len: %d" % port.cable_len)
        lines.append("PFC configuration:")
        lines.append("\tpriority    0   1   2   3   4   5   6   7")
        msg = "\tenabled     " + "".join("%1d   " % ((port.pfc_en >> up) & 1) for up in range(8))
        if port.buffers is not None:
            msg += "\n\tbuffer      " + "".join("%1d   " % 0 for _up in range(8))
        lines.append(msg)
        tc2up = {}
        order = []
        if printall:
            for i in range(8):
                tc2up[i] = []
                order.append(i)
        for up in range(8):
            tc = prio_tc[up]
            if tc not in tc2up:
                tc2up[tc] = []
                order.append(tc)
            tc2up[tc].append(up)
        for tc in order:
            t = tsa[tc]
            msg = "tc: %d ratelimit: unlimited, tsa: " % tc
            msg += ("ets, bw: %s%%" % tcbw[tc]) if t == 2 else ("strict" if t == 0 else ("vendor" if t == 255 else "unknown"))
            lines.append(msg)
            for up in tc2up[tc]:
                lines.append("\t priority:  %s" % up)
        return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# ip link / ethtool / configfs
# ---------------------------------------------------------------------------
class FakeIpLink(object):
    """TEST DOUBLE of ``ip link set dev X mtu N`` and ``ip -j link show dev X`` on the fixture tree."""

    def __init__(self, sysfs, max_mtu=9216, fail=False, ifindex_offset=0):
        self.sysfs = sysfs
        self.max_mtu = max_mtu
        self.fail = fail
        self.ifindex_offset = ifindex_offset     # != 0: the tree is not this namespace's sysfs (a copy)

    def __call__(self, argv):
        args = list(argv[1:])
        if args[:4] == ["-j", "link", "show", "dev"]:
            # ip 6.1 -j link show dev X: a JSON list with the link (ifindex, ifname, ...), as the kernel has it
            path = os.path.join(self.sysfs, "class", "net", args[4], "ifindex")
            if not os.path.exists(path):
                return 1, "", 'Device "%s" does not exist.\n' % args[4]
            with open(path) as f:
                index = int(f.read().split()[0]) + self.ifindex_offset
            return 0, json.dumps([{"ifindex": index, "ifname": args[4], "mtu": 1500}]) + "\n", ""
        if args[:3] != ["link", "set", "dev"] or args[4] != "mtu":
            raise AssertionError("FakeIpLink: unexpected command %r" % (argv,))
        dev, mtu = args[3], int(args[5])
        if self.fail or mtu > self.max_mtu:
            return 2, "", "Error: mtu greater than device maximum.\n"
        with open(os.path.join(self.sysfs, "class", "net", dev, "mtu"), "w") as f:
            f.write("%d\n" % mtu)
        return 0, "", ""


def _onoff(value):
    return "on" if value else "off"


class FakeEthtool(object):
    """TEST DOUBLE of ethtool 6.1 ``-a`` / ``-A`` (pause)."""

    UNSUPPORTED = "netlink error: Operation not supported\n"     # real capture, virtio-net, ethtool 6.1

    def __init__(self, supported=True, rx=True, tx=True, autoneg=False):
        self.supported = supported
        self.rx, self.tx, self.autoneg = rx, tx, autoneg

    def __call__(self, argv):
        op, dev = argv[1], argv[2]
        if not self.supported:
            return (1 if op == "-a" else 76), "", self.UNSUPPORTED
        if op == "-a":
            return 0, "Pause parameters for %s:\nAutonegotiate:\t%s\nRX:\t\t%s\nTX:\t\t%s\n\n" % (
                dev, _onoff(self.autoneg), _onoff(self.rx), _onoff(self.tx)), ""
        if op == "-A":
            rest = argv[3:]
            for k, v in zip(rest[::2], rest[1::2]):
                setattr(self, k, v == "on")
            return 0, "", ""
        raise AssertionError(argv)


class FakeRdmaCmConfigfs(object):
    """TEST DOUBLE of rdma_cm configfs group creation/removal on a plain directory.

    ``mkdir rdma_cm/<dev>`` makes the kernel create ``ports/<n>/default_roce_mode``
    and ``default_roce_tos`` holding the device's current values; ``rmdir``
    removes the group while the values stay in the kernel (kept here in
    ``values``). Install with ``monkeypatch.setattr(configfs, "_mkdir", cfs.mkdir)``.
    """

    def __init__(self, ports=(1,), mode="RoCE v2", tos=0, fail_mkdir=False):
        self.ports = ports
        self.values = {}
        self.default = {"default_roce_mode": mode, "default_roce_tos": str(tos)}
        self.fail_mkdir = fail_mkdir
        self.mkdirs = []
        self.rmdirs = []

    def kernel_values(self, dev, port=1):
        """What the kernel holds for dev/port (the defaults until something was written)."""
        return dict(self.values.get((dev, port), self.default))

    def mkdir(self, path, mode=0o777):
        if self.fail_mkdir:
            raise OSError(19, "No such device")
        os.mkdir(path)
        self.mkdirs.append(path)
        dev = os.path.basename(path)
        for port in self.ports:
            vals = self.values.setdefault((dev, port), dict(self.default))
            pdir = os.path.join(path, "ports", str(port))
            os.makedirs(pdir)
            for name, value in vals.items():
                with open(os.path.join(pdir, name), "w") as f:
                    f.write(value + "\n")

    def rmdir(self, path):
        dev = os.path.basename(path)
        for port in self.ports:
            pdir = os.path.join(path, "ports", str(port))
            for name in ("default_roce_mode", "default_roce_tos"):
                with open(os.path.join(pdir, name)) as f:
                    self.values[(dev, port)][name] = f.read().strip()
        shutil.rmtree(path)
        self.rmdirs.append(path)


# ---------------------------------------------------------------------------
# the host
# ---------------------------------------------------------------------------
class FakeHost(object):
    """Routes ``run_command`` / ``get_bin_path`` to the doubles; logs every argv."""

    def __init__(self, tools):
        self.tools = tools          # name -> callable(argv) -> (rc, out, err)
        self.calls = []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        if name in self.tools:
            return "/usr/sbin/" + name
        return None

    def run_command(self, argv, **kwargs):
        assert isinstance(argv, list), "commands must be argv lists, never shell strings"
        self.calls.append(list(argv))
        name = os.path.basename(argv[0])
        return self.tools[name](argv)

    def changing_calls(self):
        """Calls that change state (everything but reads)."""
        out = []
        for argv in self.calls:
            name = os.path.basename(argv[0])
            if name == "dcb" and "show" in argv:
                continue
            if name == "mlnx_qos" and len(argv) <= 4 and argv[-1] in ("-a", argv[2]):
                continue
            if name == "ethtool" and argv[1] == "-a":
                continue
            if name == "ip" and "show" in argv:
                continue
            out.append(argv)
        return out


class FakeModule(object):
    """Just enough of AnsibleModule for the engine: params, check mode, commands, warnings."""

    def __init__(self, params, host, check_mode=False):
        base = {"netdev": None, "device": None, "port": None, "trust": None, "pfc": None, "prio_tc": None,
                "ets": None, "dscp2prio": None, "ecn": None, "cnp": None, "roce_tos": None, "roce_mode": None,
                "mtu": None, "pause": None, "backend": "auto", "on_unsupported": "fail", "sysfs_path": "/sys"}
        base.update(params)
        self.params = base
        self.host = host
        self.check_mode = check_mode
        self.warnings = []

    def get_bin_path(self, name, required=False, opt_dirs=None):
        path = self.host.get_bin_path(name)
        if required and not path:
            raise AssertionError("required command %s missing" % name)
        return path

    def run_command(self, argv, **kwargs):
        return self.host.run_command(argv, **kwargs)

    def warn(self, msg):
        self.warnings.append(msg)


# ---------------------------------------------------------------------------
# the engine on the lab's tree
# ---------------------------------------------------------------------------
class LabEngine(object):
    """TEST DOUBLES set up for the QoS engine: the real lab sysfs capture ``lab_rxe_dcbsim_virtio`` (rxe9 on
    dcbsim0, rxe0 on virtio eth1) under tmp_path, :class:`FakeRdmaCmConfigfs` in place of the configfs
    ``mkdir``/``rmdir``, and a :class:`FakeHost` with ``dcb`` (:class:`FakeDcbTool` over ``dcb_ports``; by
    default dcbsim0 with DCB and eth1 without, as in the lab), ``ip``, ``ethtool`` and the further ``tools``.

    ``run(**params)`` runs ``engine.run`` on a :class:`FakeModule` (``sysfs_path`` the tree and ``netdev``
    dcbsim0 unless given) and returns its ``(result, warnings)``.
    """

    def __init__(self, tmp_path, monkeypatch, dcb_ports=None, tools=None):
        self.sysfs = make_tree(tmp_path, "lab_rxe_dcbsim_virtio")
        self.cfs = FakeRdmaCmConfigfs()
        monkeypatch.setattr(configfs, "_mkdir", self.cfs.mkdir)
        monkeypatch.setattr(configfs, "_rmdir", self.cfs.rmdir)
        self.dcb_ports = {"dcbsim0": DcbPort(), "eth1": DcbPort(supported=False)} if dcb_ports is None else dcb_ports
        self.ethtool = FakeEthtool()
        self.ip = FakeIpLink(self.sysfs)
        self.host = FakeHost(dict({"dcb": FakeDcbTool(self.dcb_ports), "ip": self.ip, "ethtool": self.ethtool},
                                  **(tools or {})))

    def run(self, check_mode=False, **params):
        params.setdefault("sysfs_path", self.sysfs)
        params.setdefault("netdev", "dcbsim0")
        return engine.run(FakeModule(params, self.host, check_mode=check_mode))
