# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parse ``dkms status`` and judge it for one kernel.

Out-of-tree driver stacks (DOCA-OFED's ``mlnx-ofed-kernel`` and friends,
MLNX_OFED with ``--add-kernel-support``) build their kernel modules with DKMS;
a build that failed for the running kernel leaves the old (inbox) modules in
place without any error from the package manager. ``dkms status`` is where it
shows. Line formats (dkms 3.0.10 ``do_status``/``do_status_weak``, and dkms 2.x):

    mlnx-ofed-kernel/24.10, 6.1.0-27-amd64, x86_64: installed        (3.x)
    mlnx-ofed-kernel, 5.8, 5.15.0-56-generic, x86_64: installed      (2.x)
    mlnx-ofed-kernel/24.10: added                                     (3.x)
    blcr, 0.8.2: added                                                (2.x)
    m, v, k, a: installed-weak from 6.1.0-26-amd64                    (both)
    ... : installed (original_module exists) (WARNING! Diff between built and installed module!)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

STATES = ("added", "built", "installed", "installed-weak")
_LINE_RE = re.compile(r"(?P<left>[^:]+):\s*(?P<state>installed-weak|installed|built|added)\b(?P<rest>.*)")  # re.fullmatch
_EXTRA_RE = re.compile(r"\(([^()]*)\)")


def parse_status(text):
    """Entries of ``dkms status`` output, and the lines that are not entries.

    Returns ``(entries, unparsed)``: entries are dicts ``{module, version,
    kernel, arch, state, notes, warnings, weak_from}`` (kernel/arch None for
    ``added``); ``unparsed`` keeps other non-empty lines (dkms prints
    ``Error! ...`` and deprecation notices in the same stream).
    """
    entries, unparsed = [], []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line:
            continue
        m = _LINE_RE.fullmatch(line)
        if not m:
            unparsed.append(line)
            continue
        parts = [p.strip() for p in m.group("left").split(",")]
        if "/" in parts[0]:
            module, version = parts[0].split("/", 1)
            rest = parts[1:]
        elif len(parts) >= 2:
            module, version = parts[0], parts[1]
            rest = parts[2:]
        else:
            unparsed.append(line)
            continue
        if len(rest) not in (0, 2):
            unparsed.append(line)
            continue
        state = m.group("state")
        tail = m.group("rest").strip()
        weak_from = None
        if state == "installed-weak":
            wm = re.match(r"^from\s+(\S+)", tail)
            weak_from = wm.group(1) if wm else None
        notes = [n.strip() for n in _EXTRA_RE.findall(tail)]
        entries.append({
            "module": module,
            "version": version,
            "kernel": rest[0] if rest else None,
            "arch": rest[1] if rest else None,
            "state": state,
            "notes": notes,
            "warnings": sorted(set(n for n in notes if n.upper().startswith("WARNING"))),
            "weak_from": weak_from,
        })
    return entries, unparsed


def problems_for_kernel(entries, kernel, required=None):
    """What is wrong for ``kernel``: a list of human-readable sentences.

    * an entry for ``kernel`` that is ``built`` but not installed, or carries a
      ``WARNING!`` note (modules missing, or a differing module installed);
    * a module that is only ``added`` (never built for any kernel);
    * a module (any module DKMS knows, and every name in ``required``) that has
      no installed entry for ``kernel``: its modules would be the old ones.
    """
    out = []
    modules = sorted(set(e["module"] for e in entries) | set(required or []))
    for name in modules:
        mine = [e for e in entries if e["module"] == name]
        if not mine:
            out.append("%s: not registered with DKMS" % name)
            continue
        for e in mine:
            if e["state"] == "added":
                out.append("%s/%s: added but never built" % (name, e["version"]))
        for_kernel = [e for e in mine if e["kernel"] == kernel]
        installed = [e for e in for_kernel if e["state"] in ("installed", "installed-weak")]
        for e in for_kernel:
            if e["state"] == "built":
                out.append("%s/%s: built for %s but not installed" % (name, e["version"], kernel))
            for w in e["warnings"]:
                out.append("%s/%s on %s: %s" % (name, e["version"], kernel, w))
        if not installed and not any(e["state"] == "added" for e in mine) and not for_kernel:
            built_for = sorted(set(e["kernel"] for e in mine if e["kernel"]))
            out.append("%s: no build for the running kernel %s (built for: %s)"
                       % (name, kernel, ", ".join(built_for) or "none"))
    return out
