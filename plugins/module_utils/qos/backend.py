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

Driver rules: a DSCP change goes into the port's DCB APP table the way the
port's driver takes it (:class:`DscpRemapRule`, docs/DESIGN.md "DSCP remaps on
each driver's DCB rules"): ``generic`` (the kernel's own table, which keeps
two priorities of one DSCP: add the new entries, then delete the old ones),
``mlx5`` (a set replaces the DSCP's mapping: one add, never a delete of the
old entry, which the driver refuses with ENOENT) and ``ice`` (a mapped DSCP
cannot be set again, EINVAL: delete the old entry, then add the new one, one
DSCP at a time while other entries keep the port in DSCP trust).
:func:`remap_rule_for` learns the rule from the port's driver; the backends
only render the rule's operations into their tool's commands. A rollback
brings the table back to what was read before the run
(:func:`app_table_steps`), computed from the table it then reads, with the
same rule.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.rdma.fabric.plugins.module_utils.change.engine import Step
from ansible_collections.rdma.fabric.plugins.module_utils.common.qos_model import CommandError, QosError, app_table_diff, check_backend


def _pairs(table):
    return set((d, p) for d, ps in table.items() for p in ps)


class DscpRemapRule(object):
    """How a DCB APP table takes changes of DSCP -> priority entries: the kernel's generic table.

    :meth:`ops` (a change) and :meth:`restore_ops` (a rollback) turn a table
    ``{dscp: [priorities]}`` into another as ordered operations
    ``[(verb, [(dscp, priority), ...]), ...]``, ``verb`` ``add`` or ``del``;
    the backend renders each into its tool's command (iproute2 ``dcb app
    add|del``, ``mlnx_qos --dscp2prio set|del``). :meth:`apply` is what one
    operation does to the table on this driver.
    """

    name = "generic"
    replaces = False        # an add of a mapped DSCP replaces its mapping (mlx5)
    full_table = False      # every DSCP always has a priority (the NVIDIA driver's qos/ table): no deletes
    text = "the kernel's generic APP table (an add keeps the DSCP's old entry): add the new entries, then delete the old ones"

    def apply(self, table, verb, pairs):
        """The table after one operation (a copy)."""
        out = dict((d, list(ps)) for d, ps in table.items())
        for d, p in pairs:
            if verb == "add":
                if self.replaces:
                    out[d] = [p]
                elif p not in out.get(d, []):
                    out[d] = sorted(out.get(d, []) + [p])
            elif p in out.get(d, []):
                out[d].remove(p)
                if not out[d]:
                    del out[d]
        return out

    def ops(self, current, target):
        """The operations of a change: add first, then delete (the table never passes through empty)."""
        to_add, to_del = app_table_diff(current, target)
        return [op for op in (("add", to_add), ("del", to_del)) if op[1]]

    def restore_ops(self, now, before):
        """The operations of a rollback, from the table read ``now`` to the one read ``before`` the run.

        Where the driver allows it, a DSCP's extra entries go before its entry
        of ``before`` is added, one DSCP at a time, so a rollback that fails
        part-way never leaves a DSCP mapped twice.
        """
        return delete_first_ops(now, before)

    def passes_through_empty(self, current, ops):
        """The DSCPs whose operation leaves the table empty before the last operation (trust goes to PCP then)."""
        table, out = current, []
        for i, (verb, pairs) in enumerate(ops):
            table = self.apply(table, verb, pairs)
            if not table and i < len(ops) - 1:
                out.extend(d for d, _p in pairs)
        return out


def delete_first_ops(current, target):
    """Add the DSCPs that are new; then per changed DSCP delete its old entries and add the new one, one DSCP
    at a time while the other entries keep the port in DSCP trust; delete the DSCPs that go last."""
    cur, tgt = _pairs(current), _pairs(target)
    new = sorted((d, p) for d, p in tgt - cur if d not in current)
    gone = sorted((d, p) for d, p in cur - tgt if d not in target)
    out = [("add", new)] if new else []
    for d in sorted(set(current) & set(target)):
        old = sorted((d, p) for p in current[d] if p not in target[d])
        add = sorted((d, p) for p in target[d] if p not in current[d])
        if old:
            out.append(("del", old))
        if add:
            out.append(("add", add))
    if gone:
        out.append(("del", gone))
    return out


class Mlx5RemapRule(DscpRemapRule):
    """mlx5 (``mlx5e_dcbnl_ieee_setapp/delapp``): a set replaces the DSCP's mapping; only the current mapping
    can be deleted (ENOENT otherwise)."""

    name = "mlx5"
    replaces = True
    text = "mlx5 (a set replaces the DSCP's mapping): one add per changed DSCP, no delete of the old entry"

    def ops(self, current, target):
        """One add of every new or changed DSCP (it replaces), then the deletes of the DSCPs that go."""
        add = sorted((d, p) for d in target if sorted(current.get(d, [])) != sorted(target[d]) for p in target[d])
        gone = sorted((d, p) for d in current if d not in target for p in current[d])
        return [op for op in (("add", add), ("del", gone)) if op[1]]

    def restore_ops(self, now, before):
        if self.full_table:
            return self.ops(dict((d, ps) for d, ps in now.items() if d in before), before)
        return self.ops(now, before)


class IceRemapRule(DscpRemapRule):
    """ice (``ice_dcbnl_setapp/delapp``): a mapped DSCP cannot be set again (EINVAL); the last DSCP entry
    deleted switches the port to VLAN (PCP) mode with the driver's default DCB config."""

    name = "ice"
    text = ("ice (a mapped DSCP cannot be set again): new DSCPs added first, then per changed DSCP delete the old "
            "entry and add the new one while other entries keep DSCP trust, DSCPs that go deleted last")

    def ops(self, current, target):
        return delete_first_ops(current, target)


class NvidiaTableRule(Mlx5RemapRule):
    """mlx5 with the NVIDIA driver stack's ``qos/`` files (MLNX_OFED): a 64-entry table where a set replaces and
    trust is a setting of its own; a DSCP is never unmapped, so a rollback sets the DSCPs read before only."""

    full_table = True
    text = "mlx5 with the NVIDIA driver's qos/ table (every DSCP has a priority; a set replaces)"


GENERIC_REMAP = DscpRemapRule()
MLX5_REMAP = Mlx5RemapRule()
ICE_REMAP = IceRemapRule()
NVIDIA_TABLE_REMAP = NvidiaTableRule()
REMAP_RULES = dict((r.name, r) for r in (GENERIC_REMAP, MLX5_REMAP, ICE_REMAP))
# netdev driver (its ``device/driver`` link, or the RDMA device's PCI driver in the facts) -> rule
DRIVER_RULES = {"mlx5_core": MLX5_REMAP, "ice": ICE_REMAP}
# NVIDIA's Ethernet/RoCE driver: the one with DCB buffer operations, which mlnx_qos reads on every call
NVIDIA_DRIVERS = ("mlx5_core",)


def port_driver(tree, port):
    """``(kind, name, text)``: what drives ``port``'s netdev, as the DSCP rule and the backends learn it.

    ``kind`` is ``link`` (the netdev's ``device/driver`` link; ``name`` its
    basename: mlx5_core, ice, virtio_net), ``dcbsim`` (the lab's DCB simulator,
    virtual; ``name`` the driver personality it plays: generic, mlx5, ice),
    ``facts`` (no link, on a hardware RDMA device: ``name`` the device's driver
    in the facts) or ``none``; ``text`` says it for messages.
    """
    link = tree.sys("class", "net", port.netdev, "device", "driver")
    driver = tree.link_basename(link)
    if driver:
        return "link", driver, "driver %s (%s)" % (driver, link)
    pfile = tree.sys("class", "net", port.netdev, "dcbsim", "personality")
    personality = tree.read(pfile) if tree.exists(pfile) else None
    if personality:
        return "dcbsim", personality, "dcbsim personality %s (%s)" % (personality, pfile)
    facts_driver = None if getattr(port, "soft", False) else getattr(port, "driver", None)
    if facts_driver:
        return "facts", facts_driver, "driver %s of RDMA device %s (the facts)" % (facts_driver, port.device)
    return "none", None, "no device driver link (%s)" % link


def remap_rule_for(tree, port):
    """``(rule, reason)``: the DSCP remap rule of ``port``'s driver and where it was learned.

    The netdev's ``device/driver`` link (mlx5_core, ice); a dcbsim netdev
    (the lab's DCB simulator, virtual) by its ``dcbsim/personality``; else
    the driver of the port's RDMA device in the facts (a hardware port whose
    netdev has no device link); else the generic rule (:func:`port_driver`).
    """
    kind, name, text = port_driver(tree, port)
    rule = REMAP_RULES.get(name) if kind == "dcbsim" else DRIVER_RULES.get(name)
    if rule is not None:
        return rule, "%s: %s" % (port.netdev, text)
    return GENERIC_REMAP, "%s: %s: the generic rule" % (port.netdev, text)


def nvidia_driver(ctx):
    """Whether NVIDIA's mlx5_core drives the port (a dcbsim netdev playing mlx5 counts, in the lab)."""
    kind, name, dummy = ctx.driver
    return name == "mlx5" if kind == "dcbsim" else name in NVIDIA_DRIVERS


class PortContext(object):
    """What a backend works on: one port, the sysfs tree, the command runner."""

    def __init__(self, runner, tree, port):
        self.runner = runner
        self.tree = tree
        self.port = port
        self.netdev = port.netdev
        self.driver = port_driver(tree, port)
        self.remap_rule, self.remap_reason = remap_rule_for(tree, port)


def app_table_steps(backend, rule, current, target, before, restore=True):
    """``(steps, notes)``: the steps that take the DSCP table from ``current`` to ``target`` by ``rule``.

    ``backend`` runs one operation (``backend.app_op(verb, pairs)``), says
    what it runs (``backend.app_op_text(verb, pairs)``), splits operations
    into its commands (``backend.app_commands(ops)``) and reads the table
    (``backend.read_table()``). With ``restore`` the first step's undo (run
    when it fails too) brings the table back to ``before`` (the table read
    before the run) from whatever it reads then, with ``rule``; the later
    steps leave their undo to it (without ``restore`` an earlier step does
    it). ``notes`` says when the table passes through empty (the port then
    trusts PCP for a moment).
    """
    ops = backend.app_commands(rule.ops(current, target))
    steps = [Step("dscp2prio", backend.app_op_text(verb, pairs), (lambda v=verb, ps=pairs: backend.app_op(v, ps)), None)
             for verb, pairs in ops]
    if steps and restore:
        attach_table_restore(backend, rule, steps[0], before)
    notes = []
    empty = rule.passes_through_empty(current, ops)
    if empty:
        notes.append("%s: DSCP %s is the only DSCP entry: the %s rule deletes its old entry before adding the new one, "
                     "so the port trusts PCP for a moment in between (ice: VLAN mode with the driver's default DCB "
                     "config until the add)" % (backend.netdev, ", ".join(str(d) for d in sorted(set(empty))), rule.name))
    return steps, notes


def attach_table_restore(backend, rule, step, before, first=None):
    """Make ``step`` undo to the DSCP table ``before``, and run its undo when it fails too.

    ``first``: ``(run, text)`` done before the table is read (a trust setting).
    A table that reads otherwise afterwards fails the undo.
    """
    wanted = dict((d, sorted(ps)) for d, ps in before.items())
    step.undo_after_failure = True
    step.undo_description = "restore the DSCP table read before the run (%s rule): %s" % (rule.name, table_text(wanted))

    def undo():
        ran = []
        try:
            if first is not None:
                first[0]()
                ran.append(first[1])
            now = backend.read_table()
            for verb, pairs in backend.app_commands(rule.restore_ops(now, wanted)):
                backend.app_op(verb, pairs)
                ran.append(backend.app_op_text(verb, pairs))
            got = dict((d, sorted(ps)) for d, ps in backend.read_table().items()
                       if d in wanted or not rule.full_table)
        except QosError as e:
            raise QosError("%s%s" % (("after " + "; ".join(ran) + ": ") if ran else "", e))
        if got != wanted:
            raise CommandError("restoring the DSCP table to %s" % table_text(wanted), detail="%s reads %s after %s" % (
                backend.netdev, table_text(got), "; ".join(ran) or "no command"))
        step.undo_description = "restore the DSCP table read before the run (%s rule): %s" % (
            rule.name, "; ".join(ran) if ran else "it read as before")
    step.undo = undo
    return step


def table_text(table):
    return "{%s}" % ", ".join("%d: %s" % (d, ps[0] if len(ps) == 1 else ps) for d, ps in sorted(table.items()))


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
        self.remap_rule = ctx.remap_rule
        self.remap_reason = ctx.remap_reason
        self.notes = []         # what the last plan() noticed (shown as warnings)

    @classmethod
    def probe(cls, ctx):
        return Probe(True)

    @classmethod
    def refusal(cls, ctx):
        """Why this backend, asked for by name, must not serve this port although it may be installed (None: it may).

        Checked before the probe and before anything is read: ``auto`` never asks.
        """
        return None

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

    ``choice`` names a backend (which must then be usable, and not refuse the
    port: :meth:`QosBackend.refusal`) or is ``auto``: the usable candidate with
    the best probe. A name that is not a candidate of
    this group means ``auto`` here (``backend: dcb`` does not concern ECN).
    """
    check_backend("backend", choice)
    named = [cls for cls in group.candidates if cls.name == choice]
    if named:
        refusal = named[0].refusal(ctx)
        if refusal:
            raise QosError("backend %s: %s" % (choice, refusal))
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
