"""insert_compute_init (Stage D4): the init calls that configure the Tensix engines for each op.

Reads: the ``@compute`` kernel's math and pack ops (ttkernel calls with constant CB / tile
arguments, in ``tile.dst_section`` regions and ``scf`` control flow) and ``tt.cb.*``
(each CB's data format).

The engines keep their configuration until it is changed, so an init is needed only where
the op about to run wants a different one. Five settings are tracked along the program:
the FPU operation (``copy_tile_init(cb)``, ``mm_block_init_short(in0, in1, 0, ct, rt, kt)``,
``add_bcast_cols_init_short(a, b)``, ``reduce_init<pool, dim>(in, scaler, out)``, which a
reduction ends with ``reduce_uninit()``), the SFPU operation (``exp_tile_init()``, ``add_binary_tile_init()``,
``binop_with_scalar_tile_init()`` ...), the formats of the two unpacker source registers
(``reconfig_data_format[_srca]``: srcA is in1 of a matmul, in0 of a broadcast, the input of
a copy or reduce) and the packer's output format (``pack_reconfig_data_format(cb)``).

Writes: ``compute_kernel_hw_startup(srcA cb, srcB cb, out cb)`` at the top of the kernel,
then each needed init right before the op that needs it. A loop whose body leaves the
engines as it needs them at its start gets its inits before the loop, not in every
iteration (the loop body's settings are computed to a fixed point).

Errors: none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.builder import Builder
from xdsl.rewriter import InsertPoint

from tilefold.ir import tile
from tilefold.ir.ttkernel import ApiCallOp, api_call, constant_int
from tilefold.ir.sfpu import SFPU
from tilefold.ir.ttkernel_api import PACK_CALLS
from tilefold.layout.formats import data_format
from tilefold.passes.tilelang.affine import constant_op
from tilefold.ir.attributes import kernel_function
from tilefold.ir.attributes import cb_entries

FIELDS = ("fpu", "sfpu", "srca", "srcb", "pack")


@dataclass(frozen=True)
class Setting:
    """One engine setting: compared by ``key``; ``make(at)`` emits the call that establishes it
    (an unpacker format instead names the CB ``cb`` that has it)."""

    key: tuple
    make: Callable = None
    cb: int | None = None

    def __eq__(self, other) -> bool:
        return isinstance(other, Setting) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


State = dict  # field -> Setting | None


def merge(a: State, b: State) -> State:
    return {f: a.get(f) if a.get(f) == b.get(f) else None for f in FIELDS}


def _call(name: str, args: list[int], templates: dict | None = None):
    def make(at: Callable):
        return at(api_call(name, [at(constant_op(a)).result for a in args], templates))
    return make


class Planner:
    """Walks the compute kernel with the engine settings (see the module docstring)."""

    def __init__(self, formats: dict[int, object]):
        self.formats = formats

    def fmt(self, cb: int):
        return self.formats.get(cb)

    # -- what an op needs -----------------------------------------------------------------------

    def needs(self, op: ApiCallOp) -> list[tuple[str, Setting]]:
        """The engine settings ``op`` runs with, by its row's init family and init call."""
        fn = op.api
        name, family, init = fn.name, fn.family, fn.init
        args = [constant_int(v) for v in op.operands]
        if family in ("copy", "transpose"):
            cb = args[0]
            return [("srca", self.source(cb)), ("fpu", Setting((family, self.fmt(cb)), _call(init, [cb])))]
        if family == "matmul_block":
            in0, in1, _, _, _, _, ct, rt, kt = args
            return [("srca", self.source(in1)), ("srcb", self.source(in0)),
                    ("fpu", Setting(("matmul", in0, in1, ct, rt, kt), _call(init, [in0, in1, 0, ct, rt, kt])))]
        if family == "bcast":
            in0, in1 = args[0], args[1]
            return [("srca", self.source(in0)), ("srcb", self.source(in1)),
                    ("fpu", Setting(("bcast", name, in0, in1), _call(init, [in0, in1])))]
        if family == "reduce":
            cb, scaler = args[0], args[1]
            templates = op.template_values()
            out = self.section_output(op)
            key = ("reduce", templates["pool_type"], templates["reduce_dim"], cb, scaler, out)
            return [("srca", self.source(cb)), ("srcb", self.source(scaler)),
                    ("fpu", Setting(key, _call(init, [cb, scaler, out], templates)))]
        if family == "pack":
            cb = args[1]
            return [("pack", Setting((self.fmt(cb),), _call(init, [cb])))]
        if family == "sfpu":
            sfpu = SFPU[fn.sfpu]
            # one setting per function (the scalar ops share theirs); functions that share an init
            # still each run it, as the API asks
            key = {"unary": sfpu.name, "scalar": "binop_with_scalar", "binary": sfpu.call}[sfpu.arity]
            return [("sfpu", Setting((key,), _call(init, [])))]
        if family in ("transpose_dest", "where", "copy_dest"):
            return [("sfpu", Setting((name,), _call(init, [])))]
        return []

    def source(self, cb: int) -> Setting:
        """An unpacker source register holding tiles of ``cb``'s format."""
        return Setting((self.fmt(cb),), cb=cb)

    def section_output(self, op: Operation) -> int:
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, tile.DstSectionOp):
            parent = parent.parent_op()
        if parent is not None:
            for o in parent.pack.walk():
                if isinstance(o, ApiCallOp) and o.api.name in PACK_CALLS:
                    return constant_int(o.operands[1])
        return 16

    # -- applying settings ------------------------------------------------------------------------

    def transition(self, state: State, wanted: list[tuple[str, Setting]], at: Callable | None) -> State:
        """Emit (when ``at`` is given) the calls that move ``state`` to ``wanted``."""
        state = dict(state)
        pending = [(f, s) for f, s in wanted if state.get(f) != s]
        if not pending:
            return state
        formats = dict((f, s) for f, s in pending if f in ("srca", "srcb"))
        if formats and at is not None:
            wanted_formats = dict((f, s) for f, s in wanted if f in ("srca", "srcb"))
            if "srcb" in formats:
                a = wanted_formats.get("srca") or state.get("srca")
                _call("reconfig_data_format", [a.cb, formats["srcb"].cb])(at)
            else:
                _call("reconfig_data_format_srca", [formats["srca"].cb])(at)
        state.update(formats)
        for f, s in pending:
            if f in ("srca", "srcb"):
                continue
            old = state.get(f)
            if at is not None:
                if f == "fpu" and old is not None and old.key[0] == "reduce" and s.key[0] != "reduce":
                    at(api_call("reduce_uninit", []))
                s.make(at)
            state[f] = s
        return state

    # -- walking ----------------------------------------------------------------------------------

    def block(self, block: Block, state: State, emit: bool) -> State:
        for op in list(block.ops):
            state = self.op(op, state, emit)
        return state

    def op(self, op: Operation, state: State, emit: bool) -> State:
        if isinstance(op, scf.ForOp):
            return self.loop(op, state, emit)
        if isinstance(op, scf.IfOp):
            then = self.block(op.true_region.block, state, emit)
            other = self.block(op.false_region.block, state, emit) if op.false_region.blocks else state
            return merge(then, other)
        if isinstance(op, tile.DstSectionOp):
            state = self.block(op.math.block, state, emit)
            return self.block(op.pack.block, state, emit)
        if isinstance(op, ApiCallOp):
            if op.api.name == "reduce_uninit":
                return {**state, "fpu": None, "srca": None, "srcb": None}
            return self.transition(state, self.needs(op), _before(op) if emit else None)
        return state

    def loop(self, op: scf.ForOp, state: State, emit: bool) -> State:
        body = op.body.block
        steady = self.block(body, state, emit=False)
        for _ in range(len(FIELDS) + 1):
            out = self.block(body, steady, emit=False)
            merged = merge(steady, out)
            if merged == steady:
                break
            steady = merged
        wanted = [(f, s) for f, s in steady.items() if s is not None]
        entry = self.transition(state, wanted, _before(op) if emit else None)
        self.block(body, steady, emit)
        return merge(entry, steady)


def _before(anchor: Operation) -> Callable:
    def at(op: Operation) -> Operation:
        Builder(InsertPoint.before(anchor)).insert(op)
        op.location = anchor.location
        return op
    return at


def _first(kernel: func.FuncOp, names, index: int) -> int | None:
    for op in kernel.walk():
        if isinstance(op, ApiCallOp) and op.api.name in names:
            return constant_int(op.operands[index])
    return None


class InsertComputeInit(ModulePass):
    """Engine configuration calls in the compute kernel (see the module docstring)."""

    name = "insert-compute-init"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        entries = cb_entries(kernel_function(op))
        formats = {cb["index"]: data_format(cb["data_format"]) for cb in entries.values()}
        compute = next((f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == "compute"), None)
        if compute is None or not any(isinstance(o, ApiCallOp) and o.api.thread == "compute"
                                      for o in compute.walk()):
            return
        src_a = _first(compute, ("copy_tile", "reduce_tile", "add_tiles_bcast_cols", "add_tiles_bcast_rows",
                                 "add_tiles_bcast_scalar", "transpose_wh_tile"), 0)
        mm_b = _first(compute, ("matmul_block",), 1)
        src_a = src_a if src_a is not None else mm_b
        src_b = _first(compute, ("matmul_block",), 0)
        out = _first(compute, PACK_CALLS, 1)
        src_a = src_a if src_a is not None else (out if out is not None else 0)
        src_b = src_b if src_b is not None else src_a
        out = out if out is not None else src_a
        planner = Planner(formats)
        entry = compute.body.block.first_op
        at = _before(entry)
        at(api_call("compute_kernel_hw_startup", [at(constant_op(v)).result for v in (src_a, src_b, out)]))
        state = {"fpu": None, "sfpu": None, "srca": planner.source(src_a), "srcb": planner.source(src_b),
                 "pack": Setting((planner.fmt(out),))}
        planner.block(compute.body.block, state, emit=True)
