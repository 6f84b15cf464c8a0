# -*- coding: utf-8 -*-
# Copyright: (c) 2026, rdma.fabric developers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one interface every QoS backend implements, and the one selector.

A backend handles a group of options (:attr:`QosBackend.keys`) on one port::

    probe (class)  -> can it run here, how well does it fit (for ``auto``)
    read(desired)  -> the port's current state of those options
    target(...)    -> what the state will be once ``desired`` is applied
    plan(...)      -> the steps (each with its undo) from current to target

and the engine (:mod:`.engine`) drives them all the same way: read every
group, plan, apply the steps in order (undoing in reverse on failure), read
back. A backend never sees another backend, and the engine never asks which
backend it holds.

Options with several possible backends form a :class:`BackendGroup` (DCB:
iproute2 ``dcb`` or NVIDIA ``mlnx_qos``); :func:`select_backend` picks one by
name or, for ``auto``, the usable candidate whose probe fits best, and fails
clearly when none is usable (as community.crypto's ``select_backend``).

Driver rules slot in through :class:`PortContext`: ``ctx.remap_rule`` says
how the port's DCB APP table takes a DSCP remap (:class:`DscpRemapRule`);
today every driver gets the generic rule (add the new entries, then delete
the old ones, so the table never passes through empty). Per-driver rules
(mlx5: a set replaces; ice: delete before add) are chosen in
:func:`remap_rule_for` from the port's driver without touching the backends.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.qos.model import QosError, check_backend


class DscpRemapRule(object):
    """How a DCB APP table takes a change of DSCP -> priority entries.

    :meth:`ops` turns the pairs to add and to delete into ordered operations
    ``[(verb, [(dscp, priority), ...]), ...]`` with ``verb`` ``add`` or
    ``del``; the backend renders each into its tool's command.
    """

    name = "generic"

    def ops(self, to_add, to_del):
        """Kernel generic table: add first, then delete (never empty on the way)."""
        out = []
        if to_add:
            out.append(("add", list(to_add)))
        if to_del:
            out.append(("del", list(to_del)))
        return out


GENERIC_REMAP = DscpRemapRule()


def remap_rule_for(port):
    """The DSCP remap rule of ``port``'s driver (the slot for per-driver rules)."""
    return GENERIC_REMAP


class PortContext(object):
    """What a backend works on: one port, the sysfs tree, the command runner."""

    def __init__(self, runner, tree, port):
        self.runner = runner
        self.tree = tree
        self.port = port
        self.netdev = port.netdev
        self.remap_rule = remap_rule_for(port)


class Probe(object):
    """A backend's answer to "can you run on this port": ``usable``, ``rank``
    (lower fits better, for ``auto``), ``reason`` (shown in the result, or why
    it is not usable) and what it found (``binary``)."""

    def __init__(self, usable, rank=0, reason=None, binary=None):
        self.usable = usable
        self.rank = rank
        self.reason = reason
        self.binary = binary


class QosBackend(object):
    """Base of every backend (see the module docstring)."""

    name = None
    keys = ()

    def __init__(self, ctx, probe=None):
        self.ctx = ctx
        self.runner = ctx.runner
        self.tree = ctx.tree
        self.netdev = ctx.netdev
        self.binary = probe.binary if probe is not None else None

    @classmethod
    def probe(cls, ctx):
        return Probe(True)

    def read(self, desired):
        """Current state of the options in ``desired``.

        Raises :class:`..model.UnsupportedError` when the port cannot do any of
        them; options it cannot do while others work are listed in the state's
        ``unsupported`` entry (``{option: reason}``).
        """
        raise NotImplementedError

    def target(self, current, desired):
        """The state once ``desired`` (options of this backend) is applied."""
        return dict((k, desired[k]) for k in self.keys if k in desired)

    def plan(self, current, desired):
        """The steps from ``current`` to :meth:`target` (empty when nothing differs)."""
        raise NotImplementedError

    def warnings(self, current):
        """Warnings about the port this backend noticed while reading (none by default)."""
        return []


class BackendGroup(object):
    """Options that one of several backends can handle; ``candidates`` in the order ``auto`` prefers on a tie."""

    def __init__(self, what, keys, candidates, install_hint=None):
        self.what = what
        self.keys = tuple(keys)
        self.candidates = tuple(candidates)
        self.install_hint = install_hint

    @property
    def selectable(self):
        """Whether the ``backend`` option chooses here (the result then says which and why)."""
        return len(self.candidates) > 1


def select_backend(ctx, group, choice="auto"):
    """The backend of ``group`` for ``choice`` and why it was chosen: ``(backend, reason)``.

    ``choice`` names a backend (which must then be usable) or is ``auto``: the
    usable candidate with the best probe. A name that is not a candidate of
    this group means ``auto`` here (``backend: dcb`` does not concern ECN).
    """
    check_backend("backend", choice)
    named = [cls for cls in group.candidates if cls.name == choice]
    if named:
        probe = named[0].probe(ctx)
        if not probe.usable:
            raise QosError("backend %s: %s" % (choice, probe.reason))
        return named[0](ctx, probe), "backend: %s was requested" % choice
    ranked = []
    for order, cls in enumerate(group.candidates):
        probe = cls.probe(ctx)
        if probe.usable:
            ranked.append((probe.rank, order, cls, probe))
    if not ranked:
        raise QosError("backend auto: no %s found for %s: %s" % (group.what, ctx.netdev, group.install_hint))
    _rank, _order, cls, probe = min(ranked, key=lambda r: r[:2])
    return cls(ctx, probe), probe.reason
