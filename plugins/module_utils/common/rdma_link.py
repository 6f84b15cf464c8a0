# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Software RDMA links (Soft-RoCE ``rxe``, Soft-iWARP ``siw``): validate, read, plan, apply.

The one owner of what a link request may look like (:func:`normalise_links`,
used by the ``rdma_link`` module and, through the ``rdma.fabric.rdma_links``
filter, by the ``soft_roce`` role), of how the current links are read from
the facts (:func:`current_links`), of what has to change
(:func:`plan_changes`) and of the commands that change it
(:func:`link_commands`). Standard library only: it runs on hosts.

A link is ``{name, type, netdev, state}``:

* ``name``: the RDMA device name, letters, digits and underscore, 1-63;
* ``type``: ``rxe`` (kernel module ``rdma_rxe``) or ``siw`` (``siw``);
* ``netdev``: an interface name (required when present);
* ``state``: ``present`` or ``absent``.

Rules of the plan: a present link missing, or existing on another netdev or
with another type, is (re)created; a link of the same type on the same
netdev under another name is replaced (deleted); an absent link that exists
is deleted. Hardware RDMA devices are never touched.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.rdma.fabric.plugins.module_utils.common.rdma_schema import RdmaFactsError

LINK_TYPES = ("rxe", "siw")
STATES = ("present", "absent")
# The kernel module and kernel option behind each link type.
KERNEL_MODULE = {"rxe": "rdma_rxe", "siw": "siw"}
KERNEL_OPTION = {"rxe": "CONFIG_RDMA_RXE", "siw": "CONFIG_RDMA_SIW"}
# The facts' driver name of each link type's devices.
_TYPE_OF_DRIVER = {"rdma_rxe": "rxe", "siw": "siw"}
LINK_KEYS = ("name", "type", "netdev", "state")

NAME_RE = re.compile(r"[A-Za-z0-9_]{1,63}")
# An interface name: up to 15 characters, no '/', no blanks, not starting with '.' or '-'.
NETDEV_RE = re.compile(r"[A-Za-z0-9_:][A-Za-z0-9_.:-]{0,14}")

RULES = ("each link needs name (letters, digits, underscore; 1-63), netdev when present (an interface name: "
         "letters, digits, _ . : -; up to 15, not starting with . or -), type (%s) and state (%s); names must be "
         "unique and a netdev can carry one present link of each type" % (" or ".join(LINK_TYPES), " or ".join(STATES)))


def normalise_links(links, default_type="rxe", default_state="present", param="links"):
    """Checked copies of ``links`` as ``[{name, type, netdev, state}]``; raises :class:`RdmaFactsError`.

    ``type``/``state`` missing or empty take ``default_type``/``default_state``;
    ``netdev`` may be left out of an absent link. The message names ``param``,
    the offending entry and the rules.
    """
    if default_type not in LINK_TYPES:
        raise RdmaFactsError("Invalid %s: default type %r; allowed: %s" % (param, default_type, ", ".join(LINK_TYPES)))
    if default_state not in STATES:
        raise RdmaFactsError("Invalid %s: default state %r; allowed: %s" % (param, default_state, ", ".join(STATES)))
    if not isinstance(links, (list, tuple)):
        raise RdmaFactsError("Invalid %s: must be a list of links, got %s; %s" % (param, type(links).__name__, RULES))
    out = []
    for i, link in enumerate(links):
        where = "Invalid %s[%d]" % (param, i)
        if not isinstance(link, dict):
            raise RdmaFactsError("%s: must be a dict with %s, got %r; %s" % (where, ", ".join(LINK_KEYS), link, RULES))
        unknown = sorted(str(k) for k in link if k not in LINK_KEYS)
        if unknown:
            raise RdmaFactsError("%s: unknown key(s) %s; allowed: %s" % (where, ", ".join(unknown), ", ".join(LINK_KEYS)))
        name = "" if link.get("name") is None else str(link["name"])
        netdev = "" if link.get("netdev") is None else str(link["netdev"])
        ltype = link.get("type") or default_type
        state = link.get("state") or default_state
        if not NAME_RE.fullmatch(name):
            raise RdmaFactsError("%s: name %r is not an RDMA device name; %s" % (where, name, RULES))
        if ltype not in LINK_TYPES:
            raise RdmaFactsError("%s (%s): type %r; allowed: %s" % (where, name, ltype, ", ".join(LINK_TYPES)))
        if state not in STATES:
            raise RdmaFactsError("%s (%s): state %r; allowed: %s" % (where, name, state, ", ".join(STATES)))
        if (netdev or state == "present") and not NETDEV_RE.fullmatch(netdev):
            raise RdmaFactsError("%s (%s): netdev %r is not an interface name; %s" % (where, name, netdev, RULES))
        out.append({"name": name, "type": ltype, "netdev": netdev or None, "state": state})
    names = [link["name"] for link in out]
    dup = sorted(set(n for n in names if names.count(n) > 1))
    if dup:
        raise RdmaFactsError("Invalid %s: link name(s) given twice: %s; %s" % (param, ", ".join(dup), RULES))
    pairs = ["%s/%s" % (link["netdev"], link["type"]) for link in out if link["state"] == "present"]
    dup = sorted(set(p for p in pairs if pairs.count(p) > 1))
    if dup:
        raise RdmaFactsError("Invalid %s: more than one present link of a type on one netdev: %s; %s"
                             % (param, ", ".join(dup), RULES))
    return out


def current_links(facts):
    """The software links in ``facts`` (``ansible_facts.rdma``) as ``[{name, type, netdev}]``, in facts order.

    ``type`` is ``rxe``/``siw`` from the device's driver (``unknown`` for
    another soft device); ``netdev`` is rxe's ``parent`` or the port's netdev.
    """
    out = []
    for dev in facts.get("devices") or []:
        if not dev.get("soft"):
            continue
        port = (dev.get("ports") or [{}])[0]
        out.append({"name": dev.get("name"), "type": _TYPE_OF_DRIVER.get(dev.get("driver"), "unknown"),
                    "netdev": dev.get("parent_netdev") or port.get("netdev")})
    return out


def _same(cur, want):
    return cur["netdev"] == want["netdev"] and cur["type"] == want["type"]


def plan_changes(wanted, current):
    """``(delete, create)``: names of current links to delete, wanted links to create (both in order)."""
    delete = []
    for want in wanted:
        for cur in current:
            if cur["name"] == want["name"]:
                wrong = want["state"] == "absent" or not _same(cur, want)
            else:
                wrong = want["state"] == "present" and _same(cur, want)
            if wrong and cur["name"] not in delete:
                delete.append(cur["name"])
    create = [want for want in wanted if want["state"] == "present"
              and not any(cur["name"] == want["name"] and _same(cur, want) for cur in current)]
    return delete, create


def replacements(wanted, current):
    """Warnings for the links the plan deletes that the request does not name (a link of the same type on the netdev
    under another name): the one risk of a valid request, since whatever uses that device loses it."""
    named = set(want["name"] for want in wanted)
    out = []
    for want in wanted:
        for cur in current:
            if want["state"] == "present" and cur["name"] != want["name"] and cur["name"] not in named \
                    and _same(cur, want):
                out.append("name: %s replaces %s on %s (a netdev carries one %s link): rdma link delete %s runs "
                           "first, and whatever uses %s (a job, a device plugin) loses it"
                           % (want["name"], cur["name"], cur["netdev"], cur["type"], cur["name"], cur["name"]))
    return out


def mismatches(wanted, current):
    """What in ``current`` differs from ``wanted``, as readable strings (empty when all match)."""
    by_name = dict((cur["name"], cur) for cur in current)
    out = []
    for want in wanted:
        have = by_name.get(want["name"])
        if want["state"] == "present" and have is None:
            out.append("%s: missing" % want["name"])
        elif want["state"] == "present" and not _same(have, want):
            out.append("%s: %s on %s" % (want["name"], have["type"], have["netdev"]))
        elif want["state"] == "absent" and have is not None:
            out.append("%s: still present" % want["name"])
    return out


def modules_to_load(create, loaded):
    """Kernel modules the links in ``create`` need that ``loaded`` (facts ``modules``) says are not loaded."""
    out = []
    for link in create:
        mod = KERNEL_MODULE[link["type"]]
        if not (loaded or {}).get(mod) and mod not in out:
            out.append(mod)
    return out


def missing_module_message(link_types, kernel):
    """The error for link types whose kernel module the running kernel lacks."""
    mods = ", ".join(KERNEL_MODULE[t] for t in link_types)
    return ("The running kernel %s has no %s module (modinfo found none), so %s links cannot be created there; "
            "they need a kernel built with %s." % (kernel, mods, ", ".join(link_types),
                                                   ", ".join(KERNEL_OPTION[t] for t in link_types)))


def link_commands(rdma, delete, create):
    """argv lists, deletes first: ``rdma link delete NAME``, ``rdma link add NAME type TYPE netdev NETDEV``."""
    return ([[rdma, "link", "delete", name] for name in delete]
            + [[rdma, "link", "add", link["name"], "type", link["type"], "netdev", link["netdev"]] for link in create])


def diff_view(links):
    """``{name: "type on netdev"}``: the before/after of a diff."""
    return dict((link["name"], "%s on %s" % (link["type"], link["netdev"])) for link in links)
