# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The PCIe ACS extended capability of a bridge: read its words, write its control word (checked).

ACS P2P redirect bits as the kernel's ``pci_disable_acs_redir`` clears them (request redirect, completion
redirect, egress control); PCIe base spec, kernel ``include/uapi/linux/pci_regs.h``.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.facts.pci import find_ext_capability, read_u16, write_config_u16
from ansible_collections.rdma.fabric.plugins.module_utils.facts.sysfs import SysfsTree


# PCIe ACS extended capability (PCIe base spec; kernel include/uapi/linux/pci_regs.h)
PCI_EXT_CAP_ID_ACS = 0x000D
ACS_CAP_REG = 4
ACS_CTRL_REG = 6
ACS_FLAGS = (
    ("source_validation", 0x0001),
    ("translation_blocking", 0x0002),
    ("request_redirect", 0x0004),
    ("completion_redirect", 0x0008),
    ("upstream_forwarding", 0x0010),
    ("egress_control", 0x0020),
    ("direct_translated_p2p", 0x0040),
)
ACS_P2P_REDIRECT = 0x0004 | 0x0008 | 0x0020  # what pci_disable_acs_redir() clears
ACS_WORDS = {0x0004: "request-redirect", 0x0008: "completion-redirect", 0x0020: "egress-control"}
# What acs=enable sets where no word was kept before the first clear: the redirect bits the kernel's own
# pci_std_enable_acs() turns on at boot (request and completion redirect, where the bridge has them; it
# never sets egress control), so the bridge ends as after a boot without the role's oneshot.
ACS_KERNEL_REDIRECT = 0x0004 | 0x0008


def acs_state(topo, address):
    """ACS of one bridge from its configuration space (extended capability 0x000d)."""
    entry = {"pci_address": address, "state": None, "offset": None, "capability": None,
             "control": None, "flags": None, "detail": None}
    config = topo.read_config(address)
    if config is None:
        entry.update(state="unreadable", detail="the configuration space of %s cannot be read" % address)
        return entry
    if len(config) < 256:
        entry.update(state="unreadable",
                     detail="only the first %d bytes of the configuration space of %s are readable: "
                            "the extended capabilities (offset 0x100 and up) need root (CAP_SYS_ADMIN)"
                            % (len(config), address))
        return entry
    if len(config) == 256:
        entry.update(state="absent", detail="%s has no PCIe extended configuration space" % address)
        return entry
    offset = find_ext_capability(config, PCI_EXT_CAP_ID_ACS)
    if offset is None:
        entry.update(state="absent", detail="%s has no ACS extended capability" % address)
        return entry
    cap = read_u16(config, offset + ACS_CAP_REG)
    ctrl = read_u16(config, offset + ACS_CTRL_REG)
    if ctrl is None:
        entry.update(state="unreadable", detail="the ACS capability of %s is truncated" % address)
        return entry
    entry.update(
        state="enabled" if ctrl & ACS_P2P_REDIRECT else "disabled",
        offset="0x%03x" % offset,
        capability="0x%04x" % cap,
        control="0x%04x" % ctrl,
        flags=dict((name, bool(ctrl & bit)) for name, bit in ACS_FLAGS),
    )
    return entry


def acs_words(entry):
    ctrl = int(entry["control"], 16)
    return [word for bit, word in sorted(ACS_WORDS.items()) if ctrl & bit]


def set_acs_control(acs, expect, value):
    """Write the ACS control word ``value`` where it reads ``expect`` (or already ``value``); read back to check.

    Refuses (RuntimeError) when the configuration space no longer belongs to
    the planned device (other vendor:device), has no ACS control word at the
    planned offset, or holds a third value (someone else changed it).
    """
    path, offset = acs["config"], acs["offset"]
    reader = SysfsTree()
    config = reader.read_bytes(path)
    if config is None or len(config) < offset + 2:
        raise RuntimeError("cannot read the configuration space %s up to offset 0x%03x%s"
                           % (path, offset, (": " + "; ".join(reader.warnings)) if reader.warnings else ""))
    ids = ["0x%04x" % read_u16(config, 0), "0x%04x" % read_u16(config, 2)]
    if acs.get("ids") and ids != list(acs["ids"]):
        raise RuntimeError("%s now belongs to %s:%s, not the planned %s:%s" % (path, ids[0], ids[1], acs["ids"][0], acs["ids"][1]))
    current = read_u16(config, offset)
    if current == value:
        return
    if current != expect:
        raise RuntimeError("the ACS control word at 0x%03x of %s reads 0x%04x, not 0x%04x: changed by someone else"
                           % (offset, path, current, expect))
    write_config_u16(path, offset, value)
    after = read_u16(reader.read_bytes(path), offset)
    if after != value:
        raise RuntimeError("the ACS control word at 0x%03x of %s reads 0x%04x after writing 0x%04x"
                           % (offset, path, -1 if after is None else after, value))
