"""Points where an operation's dataflow buffers start over: ``ttl.reset_dataflow_buffers()``,
``ttl.reset_dfbs(ttl.DFBReset(...), dfbs=[...])`` and ``ttl.reconfigure_dfbs(ttl.DFBReconfiguration(...))``.

Reads: those statements in kernel functions (and in an operation body without kernel functions,
where every kernel runs them, :mod:`.implicit_kernels`). At such a point each kernel of the node
has finished with the buffers it restores: the kernel must hold no block of them there (an error
at the user's line otherwise). tilefold keeps every buffer in its own L1 area, so no storage is
handed to another buffer at the point and buffers drained on both sides are empty already.

Writes: the meeting of a declared point's participants (``ttl.DFBReset`` /
``ttl.DFBReconfiguration``): each participant waits there until all have arrived, as on the device.
One participant is the hub (the compute kernel when it participates, else the first data movement
kernel); every other one pushes a token into a one-tile buffer the hub waits on, and waits for the
hub's token back, which the hub pushes once it has every arrival token (``barrier`` buffers, a pair
per participant and hub). A kernel that waits before the point for what another sends only after it
therefore stops there, and the simulator reports the waits that can never be satisfied.

At a point whose buffers start over (a reset; a reconfiguration discarding their state, for the
buffers a kernel uses on both sides of it, :func:`keep_drained_checks`) the hub is a data movement
kernel, and between the arrivals and the release it checks each such buffer holds no pushed block
(``ttl.cb_drained``): a block pushed before the point and popped only after it would be lost there.
"""

from __future__ import annotations

import numpy as np

from tilefold.caller import user_location
from tilefold.errors import KernelError
from tilefold.frontend.ttl.kernels import PIPE_SOURCE_KERNEL, Kernel, KernelKind, KernelSelectorTypeError


class BoundaryTypeError(KernelError, TypeError):
    """A reset or reconfiguration declared with arguments of the wrong type."""


class BoundaryValueError(KernelError, ValueError):
    """A reset or reconfiguration declared with participants that cannot meet."""


def _participants(participants, what: str) -> tuple:
    """The kernels that meet at a point: a nonempty tuple of distinct ``ttl.Kernel`` objects,
    ``ttl.KernelKind`` values (every kernel of that kind) or ``ttl.PIPE_SOURCE_KERNEL``."""
    if not isinstance(participants, tuple) or not participants \
            or not all(isinstance(k, (Kernel, KernelKind)) or k is PIPE_SOURCE_KERNEL for k in participants):
        raise KernelSelectorTypeError(f"{what}(participants=...) takes a nonempty tuple of ttl.Kernel(...) objects, "
                                      "ttl.KernelKind values or ttl.PIPE_SOURCE_KERNEL: the kernels that meet at the "
                                      f"point, not {participants!r}"[:300], user_location())
    if len(set(map(id, participants))) != len(participants):
        raise BoundaryValueError(f"{what}(participants=...): the participants must be distinct; each kernel is "
                                 "named once", user_location())
    return participants


class DFBReset:
    """``ttl.DFBReset(participants=(compute, reader, writer))``: a point where the kernels of
    ``participants`` restore the buffers ``ttl.reset_dfbs(reset, dfbs=[...])`` names."""

    def __init__(self, participants):
        self.participants = _participants(participants, "ttl.DFBReset")
        kernels = [k for k in self.participants if isinstance(k, Kernel)]
        if len(kernels) == len(self.participants):      # a node's own kernels: all three meet at a reset
            kinds = sorted(k.kind.name for k in kernels)
            if kinds != ["COMPUTE", "DATA_MOVEMENT", "DATA_MOVEMENT"]:
                raise BoundaryValueError("ttl.DFBReset(participants=...) names ttl.Kernel objects of kinds "
                                         f"{', '.join(kinds)}; a reset is met by a node's three kernels, one compute "
                                         "and two data movement kernels: name all three", user_location())


class DFBReconfiguration:
    """``ttl.DFBReconfiguration(participants=..., discard_dfb_state=False)``: a point where the
    kernels of ``participants`` restore every buffer (``ttl.reconfigure_dfbs(boundary)``)."""

    def __init__(self, participants, discard_dfb_state: bool = False):
        self.participants = _participants(participants, "ttl.DFBReconfiguration")
        if isinstance(discard_dfb_state, np.bool_):
            discard_dfb_state = bool(discard_dfb_state)
        if not isinstance(discard_dfb_state, bool):
            raise BoundaryTypeError(f"ttl.DFBReconfiguration: discard_dfb_state must be a bool (True or False), "
                                    f"not {discard_dfb_state!r}", user_location())
        self.discard_dfb_state = discard_dfb_state


def _device_only(name: str):
    raise KernelError(f"ttl.{name} marks a point in the kernels; call it inside a kernel function or an operation "
                      "body without kernel functions", user_location())


def reset_dataflow_buffers():
    """``ttl.reset_dataflow_buffers()``: every buffer of the operation starts over here."""
    _device_only("reset_dataflow_buffers")


def reset_dfbs(reset, dfbs=None):
    """``ttl.reset_dfbs(reset, dfbs=[...])``: the buffers ``dfbs`` start over here."""
    _device_only("reset_dfbs")


def reset_all_dfbs(reset, preserve=None):
    """``ttl.reset_all_dfbs(reset, preserve=[...])``: every buffer but those of ``preserve`` starts over here."""
    _device_only("reset_all_dfbs")


def reconfigure_dfbs(boundary):
    """``ttl.reconfigure_dfbs(boundary)``: every buffer starts over here."""
    _device_only("reconfigure_dfbs")


NAMES = {"reset_dataflow_buffers": reset_dataflow_buffers, "reset_dfbs": reset_dfbs, "reset_all_dfbs": reset_all_dfbs,
         "reconfigure_dfbs": reconfigure_dfbs}


# on a meeting's first op in each kernel and on the hub's drained checks: which point (the
# declaration's id) they belong to; on a reconfiguration's check: checked only for a buffer some
# kernel uses on both sides of the point (:func:`keep_drained_checks`)
POINT_ATTR = "ttl.boundary_point"
ACROSS_ATTR = "ttl.boundary_across"


def restored_buffers(module) -> dict[str, set[int]]:
    """The buffers that start over at each point of the built kernels (point -> CB indices): those a
    reset names, and, at a reconfiguration that discards the buffers' state, those a kernel uses on
    both sides of the point (one kernel reserves or waits on it before and after it, in program
    order) — the others keep their blocks, as a reader filling a buffer before the point for a
    writer draining it after. Buffers no kernel acquires are left out."""
    from tilefold.ir import ttl

    across: dict = {}           # point -> the buffers a kernel uses both before and after it
    acquired = {bind_index(op.cb) for op in module.walk() if isinstance(op, (ttl.CBReserveOp, ttl.CBWaitOp))}
    for kernel in module.ops:
        seen, marks = [], []
        for op in kernel.walk():
            if POINT_ATTR in op.attributes and not isinstance(op, ttl.CBDrainedOp):
                marks.append((op.attributes[POINT_ATTR].data, len(seen)))
            if isinstance(op, (ttl.CBReserveOp, ttl.CBWaitOp)):
                seen.append(bind_index(op.cb))
        for point, at in marks:
            across.setdefault(point, set()).update(set(seen[:at]) & set(seen[at:]))
    restored: dict[str, set[int]] = {}
    for op in module.walk():
        if isinstance(op, ttl.CBDrainedOp) and POINT_ATTR in op.attributes:
            point, index = op.attributes[POINT_ATTR].data, bind_index(op.cb)
            if index in acquired and (ACROSS_ATTR not in op.attributes or index in across.get(point, ())):
                restored.setdefault(point, set()).add(index)
    return restored


def keep_drained_checks(module, restored: dict[str, set[int]]) -> None:
    """Settle the drained checks of the built kernels: only those of the buffers that start over at
    their point (``restored``, :func:`restored_buffers`) stay. Drops the point marks."""
    from tilefold.ir import ttl

    acquired = {bind_index(op.cb) for op in module.walk() if isinstance(op, (ttl.CBReserveOp, ttl.CBWaitOp))}
    for kernel in module.ops:
        for op in list(kernel.walk()):
            if POINT_ATTR not in op.attributes:
                continue
            point = op.attributes[POINT_ATTR].data
            del op.attributes[POINT_ATTR]
            if not isinstance(op, ttl.CBDrainedOp):
                continue
            index = bind_index(op.cb)
            if index not in restored.get(point, ()):
                bind = op.cb.owner
                op.detach()
                op.erase()
                if index not in acquired and isinstance(bind, ttl.BindCBOp) and not bind.result.uses:
                    bind.detach()           # a buffer no kernel uses stays unallocated
                    bind.erase()
            elif ACROSS_ATTR in op.attributes:
                del op.attributes[ACROSS_ATTR]


def bind_index(cb) -> int | None:
    """The circular-buffer index of a ``ttl.bind_cb`` result (None for another value)."""
    from tilefold.ir import ttl

    return cb.owner.index if isinstance(cb.owner, ttl.BindCBOp) else None


def _hub(meeting: list, declaration):
    """The participant the others meet at: the compute kernel when it takes part — except at a point
    whose buffers start over (a reset, a reconfiguration discarding their state), where a data
    movement kernel checks, once everyone has arrived, that those buffers hold no pushed block."""
    restores = isinstance(declaration, DFBReset) or getattr(declaration, "discard_dfb_state", False)
    kinds = ("datamovement", "compute") if restores else ("compute", "datamovement")
    for kind in kinds:
        for d in meeting:
            if d.kind == kind:
                return d
    return meeting[0]


class BoundaryBuilder:
    """Mixin of :class:`~.builder.KernelBuilder`: the three statements above in a kernel."""

    def boundary_handlers(self) -> dict:
        return {id(reset_dataflow_buffers): self.call_reset_dataflow_buffers, id(reset_dfbs): self.call_reset_dfbs,
                id(reset_all_dfbs): self.call_reset_all_dfbs, id(reconfigure_dfbs): self.call_reconfigure_dfbs}

    def call_reset_dataflow_buffers(self, args, kwargs, node):
        if args or kwargs:
            raise self.error("ttl.reset_dataflow_buffers() takes no arguments", node)
        self._boundary("ttl.reset_dataflow_buffers()", None, None, node)

    def call_reset_dfbs(self, args, kwargs, node):
        values = list(args) + [kwargs.pop(k) for k in ("reset", "dfbs") if k in kwargs]
        if kwargs or len(values) != 2 or not isinstance(values[0], DFBReset):
            raise self.error("ttl.reset_dfbs(reset, dfbs=[...]) takes a ttl.DFBReset and a list of dataflow "
                             "buffers", node)
        dfbs = self._buffer_list("ttl.reset_dfbs(reset, dfbs=...): dfbs", values[1], node)
        if not dfbs:
            raise self.error("ttl.reset_dfbs(reset, dfbs=...): dfbs must be a nonempty list; name the buffers that "
                             "start over (ttl.reset_all_dfbs(reset) restores all of them)", node)
        self._boundary("ttl.reset_dfbs()", values[0], dfbs, node)

    def call_reset_all_dfbs(self, args, kwargs, node):
        values = list(args) + ([kwargs.pop("reset")] if "reset" in kwargs else [])
        preserve = kwargs.pop("preserve", None)
        preserve = [] if preserve is None else preserve
        if kwargs:
            raise self.error(f"ttl.reset_all_dfbs(reset, preserve=[...]) takes only the preserve keyword, not "
                             f"{', '.join(sorted(kwargs))}", node)
        if len(values) != 1 or not isinstance(values[0], DFBReset):
            raise self.error("ttl.reset_all_dfbs(reset, preserve=[...]) takes a ttl.DFBReset", node)
        kept = self._buffer_list("ttl.reset_all_dfbs(reset, preserve=...): preserve", preserve, node)
        restored = [d for d in self.operation.dataflow_buffers if not d.hidden and d not in kept]
        self._boundary("ttl.reset_all_dfbs()", values[0], restored, node)

    def _buffer_list(self, what: str, dfbs, node) -> list:
        """``dfbs`` as a list of distinct dataflow buffers (a list, as TT-Lang writes it), or an error."""
        from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

        if not isinstance(dfbs, list) or not all(isinstance(d, DataflowBuffer) for d in dfbs):
            raise self.error(f"{what} must be a list of dataflow buffers, not {self.describe(dfbs)}", node)
        if len(set(map(id, dfbs))) != len(dfbs):
            raise self.error(f"{what} must name distinct buffers; each one is named once", node)
        foreign = next((d for d in dfbs if not any(d is own for own in self.operation.dataflow_buffers)), None)
        if foreign is not None:
            raise self.error(f"{what}: {foreign.name} is not a dataflow buffer of this operation; name the buffers "
                             "this operation made", node)
        return dfbs

    def call_reconfigure_dfbs(self, args, kwargs, node):
        values = list(args) + ([kwargs.pop("boundary")] if "boundary" in kwargs else [])
        if kwargs or len(values) != 1 or not isinstance(values[0], DFBReconfiguration):
            raise self.error("ttl.reconfigure_dfbs(boundary) takes one ttl.DFBReconfiguration", node)
        self._boundary("ttl.reconfigure_dfbs()", values[0], None, node)

    def _meeting(self, declaration) -> list:
        """The kernel functions of this operation that meet at a point of ``declaration``, in
        definition order (none for a point without a declaration, or one naming the pipe source
        kernel)."""
        if declaration is None or any(p is PIPE_SOURCE_KERNEL for p in declaration.participants):
            return []
        return [d for d in self.operation.kernels
                if any(d.selector is p if isinstance(p, Kernel) else p.value == d.kind
                       for p in declaration.participants)]

    def _meet(self, declaration, restored, what: str, node) -> None:
        """This kernel's part of the meeting at a point of ``declaration`` (see the module
        docstring); ``restored``: the buffers that start over there, checked drained by the hub."""
        from xdsl.dialects.builtin import StringAttr, UnitAttr

        from tilefold.ir import ttl

        meeting = self._meeting(declaration)
        if len(meeting) < 2 or not any(d is self.definition for d in meeting):
            return
        hub = _hub(meeting, declaration)
        self.node = node
        point = StringAttr(f"{id(declaration):x}")
        if self.definition is hub:
            pairs = [self._barrier_buffers(d, hub, node) for d in meeting if d is not hub]
            for i, (arrive, _) in enumerate(pairs):
                wait = self.emit(ttl.CBWaitOp(self.cb_value(arrive)))
                if i == 0:                  # the hub's point: where it starts to wait for the others
                    wait.attributes[POINT_ATTR] = point
                self.emit(ttl.CBPopOp(self.cb_value(arrive)))
            if hub.kind != "compute":
                # every participant has arrived and none has left: each restored buffer must be empty
                for dfb in restored:
                    check = self.emit(ttl.CBDrainedOp(self.cb_value(dfb), (
                        f"{what}: {dfb.name} holds a block pushed before this point that no kernel popped before "
                        "it; the buffer starts over here, so that block is lost and a wait for it after the point "
                        "waits forever; pop every block pushed before the point before reaching it (or keep "
                        "the buffer's state: discard_dfb_state=False, or leave it out of the reset)")))
                    check.attributes[POINT_ATTR] = point
                    if isinstance(declaration, DFBReconfiguration):
                        check.attributes[ACROSS_ATTR] = UnitAttr()
            for _, leave in pairs:
                self.emit(ttl.CBReserveOp(self.cb_value(leave)))
                self.emit(ttl.CBPushOp(self.cb_value(leave)))
            return
        arrive, leave = self._barrier_buffers(self.definition, hub, node)
        self.emit(ttl.CBReserveOp(self.cb_value(arrive))).attributes[POINT_ATTR] = point
        self.emit(ttl.CBPushOp(self.cb_value(arrive)))
        self.emit(ttl.CBWaitOp(self.cb_value(leave)))
        self.emit(ttl.CBPopOp(self.cb_value(leave)))

    def _barrier_buffers(self, participant, hub, node) -> tuple:
        """The (arrival, release) token buffers between ``participant`` and ``hub``, made once per
        operation."""
        from tilefold.frontend.ttl.dataflow_buffers import hidden_dataflow_buffer
        from tilefold.layout.formats import DataFormat

        made = self.operation.barriers
        key = (participant.name, hub.name)
        if key not in made:
            made[key] = tuple(
                hidden_dataflow_buffer((1, 1), DataFormat.Float16_b, f"barrier {a} to {b}", self.location(node),
                                       block_count=1, what="a meeting of kernels at a dataflow buffer reset")
                for a, b in ((participant.name, hub.name), (hub.name, participant.name)))
        return made[key]

    def _boundary(self, what: str, declaration, dfbs, node) -> None:
        own = getattr(self.definition, "selector", None)
        if declaration is not None and isinstance(own, Kernel) and own not in declaration.participants \
                and own.kind not in declaration.participants:
            raise self.error(f"{what}: this kernel function ({self.definition.name}) selects a ttl.Kernel that is not "
                             "among the participants of the point; add it to participants=", node)
        chosen = None if dfbs is None else {d.index for d in dfbs}
        for index, ends in self.held.items():
            if chosen is not None and index not in chosen:
                continue
            for blocks in ends.values():
                for b in blocks:
                    if not b.status.released:
                        verb = "push" if b.acquired == "reserve" else "pop"
                        raise self.error(f"{what}: {b.name} (of {b.dfb.name}, acquired at {b.status.location}) is "
                                         f"still held here, and its buffer starts over at this point; {verb} it "
                                         "before", node)
        if isinstance(declaration, DFBReconfiguration) and not declaration.discard_dfb_state:
            restored = []                   # every buffer keeps its state across the point
        else:
            restored = [d for d in self.operation.dataflow_buffers if not d.hidden] if dfbs is None else dfbs
        self._meet(declaration, restored, what, node)
