"""Lanes: one simulated thread standing for many cores that run the same kernel in step.

Reads: ttkernel functions and a Program's runtime arguments. Writes: groups of cores.

Cores that run one kernel with the same compile-time args and the same values of every
runtime argument that steers control flow (loop bounds, branch conditions, CB page counts,
transfer sizes, array indices) execute the same sequence of API calls; only addresses and
page ids differ. The simulator runs such cores as one thread whose values are numpy
arrays with one entry per core ("lanes"), so a large problem costs one Python step per
tile per *group*, not per core. :func:`steering_args` finds, by a backward slice over the
SSA graph, which runtime arguments steer; :func:`group_cores` splits a kernel's cores on
their values. A kernel steered by something else that differs per core (its coordinates, L1
contents) is first run with its cores together all the same. A value that must be the same on
every lane but is not raises :class:`Divergence` carrying each lane's value; the device then
splits the thread's cores by those values (:func:`refine`) and runs the program again, and after
a few such splits, or a deadlock, it runs one core per thread.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func, memref, scf
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from tilefold.arch.cores import CoreCoord
from tilefold.ir.ttkernel import (
    ApiCallOp,
    GetCompileTimeArgValOp,
    L1LoadOp,
    L1StoreOp,
    MyXOp,
    MyYOp,
    TensorAccessorArgsOp,
    TensorAccessorOp,
    constant_int,
)


class Divergence(Exception):
    """A value that steers every lane of a thread differs between lanes (internal): ``values``
    holds each lane's value, ``cores`` (set by the scheduler) the thread's cores."""

    def __init__(self, what: str, values=None):
        super().__init__(what)
        self.values = values
        self.cores: list[CoreCoord] | None = None


@dataclass(frozen=True)
class SteeringArgs:
    """Which inputs of a kernel steer its control flow."""

    runtime: frozenset[int]      # get_arg_val indices
    per_core: bool               # steered by the core's coordinates, L1 contents or a computed arg index


def _uses_to_steer(kernel: func.FuncOp) -> list[SSAValue]:
    values: list[SSAValue] = []
    for op in kernel.walk():
        if isinstance(op, scf.ForOp):
            values += _trip_count_inputs(op)
        elif isinstance(op, scf.IfOp):
            values.append(op.cond)
        elif isinstance(op, scf.ConditionOp):
            values.append(op.condition)
        elif isinstance(op, (memref.LoadOp, memref.StoreOp)):
            values += list(op.indices)
        elif isinstance(op, ApiCallOp):
            values += [v for p, v in zip(op.api.params, op.operands) if p.role != "per_lane"]
        elif isinstance(op, TensorAccessorOp):
            values.append(op.page_size)
        elif isinstance(op, (L1LoadOp, L1StoreOp)):
            values.append(op.index)
    return values


def _trip_count_inputs(op: scf.ForOp) -> list[SSAValue]:
    """What a loop's trip count depends on: for ``lb to lb + n`` only ``n`` (the bounds may
    differ per lane while every lane runs the same number of iterations)."""
    ub = op.ub.owner
    if isinstance(ub, Operation) and ub.name == "arith.addi":
        lhs, rhs = ub.operands
        if lhs == op.lb:
            return [rhs, op.step]
        if rhs == op.lb:
            return [lhs, op.step]
    return [op.lb, op.ub, op.step]


def _stores_to(alloca_result: SSAValue) -> list[SSAValue]:
    return [use.operation.value for use in alloca_result.uses if isinstance(use.operation, memref.StoreOp)]


def steering_args(kernel: func.FuncOp) -> SteeringArgs:
    """Backward slice from every steering use to the kernel's inputs."""
    runtime: set[int] = set()
    per_core = False
    seen: set[SSAValue] = set()
    work = _uses_to_steer(kernel)
    while work:
        value = work.pop()
        if value in seen:
            continue
        seen.add(value)
        if isinstance(value, BlockArgument):
            owner = value.owner.parent_op() if isinstance(value.owner, Block) else None
            if isinstance(owner, scf.ForOp):
                idx = value.index
                if idx == 0:
                    work += [owner.lb, owner.ub, owner.step]  # the induction variable itself steers
                else:
                    work.append(owner.iter_args[idx - 1])
                    yield_op = owner.body.block.last_op
                    work.append(yield_op.operands[idx - 1])
            elif isinstance(owner, scf.WhileOp):
                work += list(owner.arguments)
                for region in (owner.before_region, owner.after_region):
                    term = region.block.last_op
                    work += list(term.operands)
            continue
        op: Operation = value.owner
        if isinstance(op, ApiCallOp):
            name = op.api.name
            if name == "get_arg_val":
                idx = constant_int(op.operands[0])
                if idx is None:
                    per_core = True
                else:
                    runtime.add(idx)
            elif name in ("get_absolute_logical_x", "get_absolute_logical_y"):
                per_core = True
            elif name in ("get_common_arg_val", "get_write_ptr", "get_read_ptr", "get_tile_size", "get_semaphore"):
                work += list(op.operands)
            else:
                per_core = True   # NOC addresses and the like steering control flow
        elif isinstance(op, (MyXOp, MyYOp, L1LoadOp)):
            per_core = True
        elif isinstance(op, (GetCompileTimeArgValOp, TensorAccessorArgsOp)):
            continue
        elif isinstance(op, memref.LoadOp):
            work += _stores_to(op.memref)
            work += list(op.indices)
        elif isinstance(op, (scf.IfOp, scf.ForOp, scf.WhileOp)):
            work += _results_sources(op, value)
        else:
            work += list(op.operands)
    return SteeringArgs(frozenset(runtime), per_core)


def _results_sources(op: Operation, value: SSAValue) -> list[SSAValue]:
    idx = list(op.results).index(value)
    sources: list[SSAValue] = []
    if isinstance(op, scf.IfOp):
        sources.append(op.cond)
        for region in (op.true_region, op.false_region):
            if region.blocks:
                sources.append(region.block.last_op.operands[idx])
    elif isinstance(op, scf.ForOp):
        sources += [op.lb, op.ub, op.step, op.iter_args[idx], op.body.block.last_op.operands[idx]]
    elif isinstance(op, scf.WhileOp):
        sources += list(op.arguments)
        sources += list(op.before_region.block.last_op.operands)
        sources += list(op.after_region.block.last_op.operands)
    return sources


def group_cores(cores: list[CoreCoord], runtime_args: dict[CoreCoord, list[int]], steering: SteeringArgs,
                batch: bool, labels: dict[CoreCoord, object] | None = None) -> list[list[CoreCoord]]:
    """Split ``cores`` (row-wise order) into groups that can run in step: equal steering runtime
    args and equal ``labels`` (the splits earlier divergences made; none at first)."""
    if not batch:
        return [[c] for c in cores]
    labels = labels or {}
    groups: dict[tuple, list[CoreCoord]] = {}
    for core in cores:
        args = runtime_args.get(core, [])
        key = tuple(args[i] if i < len(args) else None for i in sorted(steering.runtime))
        groups.setdefault((labels.get(core), key), []).append(core)
    if steering.per_core or len(groups) == len(cores) > 1:
        # what steers differs on every core, but often only in ways the control flow does not see
        # (a bound checked the same way): cores start together and split where their values diverge
        groups = {}
        for core in cores:
            groups.setdefault(labels.get(core), []).append(core)
    return list(groups.values())


def refine(labels: dict[CoreCoord, object], divergence: Divergence) -> dict[CoreCoord, object] | None:
    """``labels`` with the diverged thread's cores told apart by their lanes' values (None when the
    values do not say which lane is which)."""
    values, cores = divergence.values, divergence.cores
    if cores is None or not isinstance(values, np.ndarray) or values.ndim == 0 or values.shape[0] != len(cores):
        return None
    refined = dict(labels)
    for core, value in zip(cores, values):
        refined[core] = (labels.get(core), np.asarray(value).tobytes())
    return refined


def uniform(value, what: str = "value"):
    """``value`` as one Python int when it is the same on every lane; else :class:`Divergence`."""
    if value.__class__ is int:
        return value
    if isinstance(value, np.ndarray):
        first = value.flat[0]
        if (value == first).all():
            return first.item()
        raise Divergence(what, value)
    if isinstance(value, (np.integer, np.bool_, bool)):
        return int(value)
    return value


_BOOL = np.dtype(bool)


def any_lane(x) -> bool:
    """``np.any`` for a per-lane array or a plain bool, without numpy's dispatch overhead (a
    boolean array's bytes are searched for a 1, several times faster than a reduction)."""
    if x.__class__ is np.ndarray:
        return b"\x01" in x.tobytes() if x.dtype is _BOOL else bool(x.any())
    return bool(x)


def all_lanes(x) -> bool:
    """``np.all`` for a per-lane array or a plain bool, without numpy's dispatch overhead."""
    if x.__class__ is np.ndarray:
        return b"\x00" not in x.tobytes() if x.dtype is _BOOL else bool(x.all())
    return bool(x)


def even(x: np.ndarray) -> bool:
    """Whether every lane of a per-lane array holds the same bits (then arithmetic on the first
    lane's value, as Python numbers, gives every lane's result); a byte comparison, far cheaper
    than an element-wise one."""
    lanes = len(x)
    if not lanes:
        return True
    data = x.tobytes()
    return data == data[:len(data) // lanes] * lanes


def lane_values(column: np.ndarray):
    """A per-lane column as an int when all lanes agree, else an int64 array."""
    first = column[0]
    if (column == first).all():
        return int(first)
    return column.astype(np.int64)
