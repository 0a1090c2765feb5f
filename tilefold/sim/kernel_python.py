"""The simulator's Python emitter: a ttkernel function printed as a Python function the simulator runs.

Reads: one ``func.func`` of ttkernel / arith / scf / memref ops. Writes: Python source text
``def <name>(k): ...`` in which every TT-Metalium call becomes a call on the kernel
context ``k`` with the same name and arguments (``k.cb_reserve_back(cb_in, 8)``), control
flow stays Python control flow, and each line remembers the user's file:line it came
from. The C++ emitter prints the same IR, so the simulator runs exactly what the C++ says.

Values in the generated code are Python ints (the same on every core the thread stands
for) or numpy integer arrays (one value per core); loop bounds, branch conditions and
array indices go through ``k.range`` / ``k.cond`` / ``k.index``, which insist the value is
the same on every core. A page-transfer nest (:mod:`tilefold.ir.page_loops`) is printed with
queued calls (``k.noc_async_read_page_later``) and ``k.flush_pages()`` after it, which the
simulator executes as one batch with the same effects; a tile nest (:mod:`tilefold.ir.tile_loops`)
likewise, with ``k.copy_tile_later`` ... and ``k.flush_tiles()``; one whose calls depend only on
values fixed for the whole kernel is guarded by ``if not k.replay_tile_nest(n, (values, ...)):``,
so that a thread that queued it before with those values reuses that queue. The emitter decides
nothing: it prints.
"""

from __future__ import annotations

import keyword
import linecache
import re
from dataclasses import dataclass, field
from itertools import count
from typing import Callable

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType
from xdsl.ir import Block, Operation, SSAValue

from tilefold.errors import SourceLocation
from tilefold.ir.locations import source_location
from tilefold.sim import extern_calls
from tilefold.ir.page_loops import QUEUEABLE_CALLS, is_page_transfer_nest
from tilefold.ir.tile_loops import QUEUEABLE_TILE_CALLS, is_tile_nest, nest_inputs
from tilefold.ir.ttkernel import (
    ApiCallOp,
    CBOp,
    AssertInRangeOp,
    KernelAssertOp,
    DPrintCBOp,
    DPrintOp,
    DPrintTilesOp,
    ExternCallOp,
    GetCompileTimeArgValOp,
    L1LoadOp,
    L1StoreOp,
    MyXOp,
    MyYOp,
    TensorAccessorArgsOp,
    TensorAccessorOp,
)

_U32_MASK = "0xFFFFFFFF"

_BINARY = {
    "arith.addi": "+", "arith.muli": "*", "arith.divui": "//", "arith.remui": "%",
    "arith.andi": "&", "arith.ori": "|", "arith.xori": "^", "arith.shli": "<<", "arith.shrui": ">>",
    "arith.shrsi": ">>", "arith.addf": "+", "arith.subf": "-", "arith.mulf": "*", "arith.divf": "/",
}
_CALLS = {
    "arith.divsi": "k.divsi", "arith.remsi": "k.remsi", "arith.floordivsi": "k.floordiv",
    "arith.ceildivui": "k.ceildiv", "arith.ceildivsi": "k.ceildiv", "arith.maxui": "k.max",
    "arith.minui": "k.min", "arith.maxsi": "k.max", "arith.minsi": "k.min",
}
# signed operations of i32 values (held as uint32): their Python on the int32 readings ``a``, ``b``
_SIGNED_I32 = {"arith.maxsi": "k.max({a}, {b})", "arith.minsi": "k.min({a}, {b})",
               "arith.shrsi": "{a} >> ({b_raw} & 31)", "arith.divsi": "k.divsi({a}, {b})",
               "arith.remsi": "k.remsi({a}, {b})"}
_CMPI = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">=", 6: "<", 7: "<=", 8: ">", 9: ">="}
_IDENTITY = {"arith.index_cast", "arith.extsi", "arith.sitofp", "arith.uitofp", "arith.extf", "arith.truncf"}


@dataclass
class PythonKernel:
    """A kernel as Python: its source, the callable, and the map back to user lines."""

    name: str
    source: str
    filename: str
    line_locations: dict[int, SourceLocation]
    function: Callable = field(repr=False)

    def location_of_line(self, line: int) -> SourceLocation | None:
        """The user's file:line for a line of the generated source (nearest earlier line)."""
        while line > 0:
            loc = self.line_locations.get(line)
            if loc is not None:
                return loc
            line -= 1
        return None


class _Printer:
    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.names: dict[SSAValue, str] = {}
        self.used: set[str] = {"k"}
        self.counter = count()
        self.lines: list[str] = []
        self.locations: dict[int, SourceLocation] = {}
        self.queuing: frozenset[str] = frozenset()   # inside a queued nest: the calls printed as *_later
        self.nests = count()                         # numbers of the tile nests that may be replayed

    # -- naming -------------------------------------------------------------------------

    def fresh(self, hint: str | None) -> str:
        base = re.sub(r"\W", "_", hint) if hint else ""
        if base and not base[0].isdigit() and not keyword.iskeyword(base) and base not in self.used:
            self.used.add(base)
            return base
        while True:
            name = f"{base or 'v'}{next(self.counter)}" if base else f"v{next(self.counter)}"
            if name not in self.used:
                self.used.add(name)
                return name

    def define(self, value: SSAValue, name: str | None = None) -> str:
        name = name or self.fresh(value.name_hint)
        self.names[value] = name
        return name

    def ref(self, value: SSAValue) -> str:
        owner = value.owner
        if isinstance(owner, CBOp):
            return self.ref(owner.index)   # a CB is its index
        if isinstance(owner, arith.ConstantOp):
            attr = owner.value
            if isinstance(attr, IntegerAttr):
                v = attr.value.data
                if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
                    return "True" if v else "False"
                return str(v)
            if isinstance(attr, FloatAttr):
                v = float(attr.value.data)
                return repr(v) if v == v and abs(v) != float("inf") else f"float({str(v)!r})"
        return self.names[value]

    # -- output -------------------------------------------------------------------------

    def emit(self, depth: int, text: str, op: Operation | None = None) -> None:
        self.lines.append("    " * depth + text)
        if op is not None:
            loc = source_location(op)
            if loc is not None:
                self.locations[len(self.lines) + 1] = loc  # +1: the def line comes first

    # -- ops ----------------------------------------------------------------------------

    def block(self, block: Block, depth: int) -> None:
        emitted = len(self.lines)
        for op in block.ops:
            self.op(op, depth)
        if len(self.lines) == emitted:
            self.emit(depth, "pass")

    def op(self, op: Operation, depth: int) -> None:
        name = op.name
        r = op.results
        if isinstance(op, (arith.ConstantOp, CBOp)):
            return  # constants and CBs print inline at their uses
        if name in _SIGNED_I32 and _is_int(r[0], 32):
            # i32 values are held as uint32: read as int32 for the signed operation, held as uint32 again
            a, b = (f"k.signed32({self.ref(v)})" for v in op.operands)
            expr = _SIGNED_I32[name].format(a=a, b=b, b_raw=self.ref(op.operands[1]))
            self.emit(depth, f"{self.define(r[0])} = ({expr}) & {_U32_MASK}", op)
        elif name == "arith.shli" and _is_int(r[0], 32):     # RISC-V's sll: the amount's low 5 bits
            expr = f"({self.ref(op.operands[0])} << ({self.ref(op.operands[1])} & 31)) & {_U32_MASK}"
            self.emit(depth, f"{self.define(r[0])} = {expr}", op)
        elif name in _BINARY:
            expr = f"{self.ref(op.operands[0])} {_BINARY[name]} {self.ref(op.operands[1])}"
            self.emit(depth, f"{self.define(r[0])} = {expr}", op)
        elif name == "arith.subi":
            expr = f"({self.ref(op.operands[0])} - {self.ref(op.operands[1])})"
            if _is_int(r[0], 32):
                expr += f" & {_U32_MASK}"
            self.emit(depth, f"{self.define(r[0])} = {expr}", op)
        elif name in _CALLS:
            self.emit(depth, f"{self.define(r[0])} = {_CALLS[name]}({self.args(op.operands)})", op)
        elif name == "arith.cmpi":
            predicate = op.predicate.value.data
            a, b = (self.ref(v) for v in op.operands)
            if 2 <= predicate <= 5 and _is_int(op.operands[0], 32):     # slt sle sgt sge of int32 values
                a, b = f"k.signed32({a})", f"k.signed32({b})"
            self.emit(depth, f"{self.define(r[0])} = {a} {_CMPI[predicate]} {b}", op)
        elif name == "arith.select":
            self.emit(depth, f"{self.define(r[0])} = k.select({self.args(op.operands)})", op)
        elif name == "arith.extui":
            src = self.ref(op.operands[0])
            expr = f"k.to_int({src})" if _is_int(op.operands[0], 1) else src
            self.emit(depth, f"{self.define(r[0])} = {expr}", op)
        elif name == "arith.trunci":
            width = op.results[0].type.width.data
            self.emit(depth, f"{self.define(r[0])} = {self.ref(op.operands[0])} & {hex((1 << width) - 1)}", op)
        elif name in ("arith.index_cast", "arith.extsi") and _is_int(op.operands[0], 32):
            # an int32 held as uint32 becomes a wider signed integer: its sign extended
            self.emit(depth, f"{self.define(r[0])} = k.signed32({self.ref(op.operands[0])})", op)
        elif name in _IDENTITY:
            self.emit(depth, f"{self.define(r[0])} = {self.ref(op.operands[0])}", op)
        elif name == "arith.negf":
            self.emit(depth, f"{self.define(r[0])} = -{self.ref(op.operands[0])}", op)
        elif name == "arith.bitcast":
            self.emit(depth, f"{self.define(r[0])} = k.bitcast({self.ref(op.operands[0])}, "
                             f"{str(op.results[0].type)!r})", op)
        elif isinstance(op, scf.ForOp):
            self.for_op(op, depth)
        elif isinstance(op, scf.IfOp):
            self.if_op(op, depth)
        elif isinstance(op, scf.WhileOp):
            self.while_op(op, depth)
        elif isinstance(op, memref.AllocaOp):
            self.alloca(op, depth)
        elif isinstance(op, memref.LoadOp):
            target = self.names[op.memref]
            if op.indices:
                target += f"[k.index({self.ref(op.indices[0])})]"
            self.emit(depth, f"{self.define(r[0])} = {target}", op)
        elif isinstance(op, memref.StoreOp):
            target = self.names[op.memref]
            if op.indices:
                target += f"[k.index({self.ref(op.indices[0])})]"
            self.emit(depth, f"{target} = {self.ref(op.value)}", op)
        elif isinstance(op, func.ReturnOp):
            self.emit(depth, "return", op)
        elif isinstance(op, ApiCallOp):
            self.api_call(op, depth)
        elif isinstance(op, GetCompileTimeArgValOp):
            self.emit(depth, f"{self.define(r[0])} = k.get_compile_time_arg_val({op.arg_index})", op)
        elif isinstance(op, TensorAccessorArgsOp):
            if op.prev is not None:
                call = f"k.tensor_accessor_args(prev={self.ref(op.prev)})"
            else:
                call = f"k.tensor_accessor_args(cta_offset={op.cta_offset.value.data})"
            self.emit(depth, f"{self.define(r[0])} = {call}", op)
        elif isinstance(op, TensorAccessorOp):
            self.emit(depth, f"{self.define(r[0])} = k.tensor_accessor({self.args(op.operands)})", op)
        elif isinstance(op, (MyXOp, MyYOp)):
            self.emit(depth, f"{self.define(r[0])} = k.{name.removeprefix('ttkernel.')}()", op)
        elif isinstance(op, L1LoadOp):
            self.emit(depth, f"{self.define(r[0])} = k.l1_load({self.args(op.operands)}, {op.width.value.data})",
                      op)
        elif isinstance(op, L1StoreOp):
            self.emit(depth, f"k.l1_store({self.args(op.operands)}, {op.width.value.data})", op)
        elif isinstance(op, AssertInRangeOp):
            self.emit(depth, f"k.assert_in_range({self.ref(op.value)}, {op.upper.value.data}, "
                             f"{op.message.data!r})", op)
        elif isinstance(op, KernelAssertOp):
            self.emit(depth, f"k.kernel_assert({self.ref(op.condition)}, {tuple(op.texts)!r}, "
                             f"({self.args(op.values)}{',' if op.values else ''}))", op)
        elif isinstance(op, ExternCallOp):
            self.emit(depth, extern_calls.python_call(op, self), op)
        elif isinstance(op, DPrintTilesOp):
            self.emit(depth, f"k.dprint_tiles({self.ref(op.cb)}, {op.first.value.data}, {op.count.value.data}, "
                             f"{op.side.data!r})", op)
        elif isinstance(op, DPrintCBOp):
            self.emit(depth, f"k.dprint_cb({self.ref(op.cb)})", op)
        elif isinstance(op, DPrintOp):
            self.emit(depth, f"k.dprint({tuple(op.texts)!r}, ({self.args(op.values)}{',' if op.values else ''}), "
                             f"{op.compute_thread!r})", op)
        elif isinstance(op, (scf.YieldOp, scf.ConditionOp)):
            raise AssertionError("terminators are printed by their parent op")
        else:
            raise NotImplementedError(f"the Python emitter has no rule for {name}")

    def args(self, values) -> str:
        return ", ".join(self.ref(v) for v in values)

    def api_call(self, op: ApiCallOp, depth: int) -> None:
        fn = op.api
        parts = [self.ref(v) for v in op.operands]
        parts += [f"{key}={value!r}" for key, value in op.template_values().items()]
        name = f"{fn.name}_later" if fn.name in self.queuing else fn.name
        call = f"k.{name}({', '.join(parts)})"
        if op.results:
            call = f"{self.define(op.results[0])} = {call}"
        self.emit(depth, call, op)

    def alloca(self, op: memref.AllocaOp, depth: int) -> None:
        mtype = op.memref.type
        assert isinstance(mtype, MemRefType)
        shape = mtype.get_shape()
        name = self.define(op.memref)
        if len(shape) == 0:
            self.emit(depth, f"{name} = 0", op)
        elif len(shape) == 1:
            self.emit(depth, f"{name} = [0] * {shape[0]}", op)
        else:
            raise NotImplementedError("the Python emitter prints rank-0 and rank-1 local arrays only")

    def assign(self, depth: int, names: list[str], values: list[SSAValue], op: Operation) -> None:
        if names:
            self.emit(depth, f"{', '.join(names)} = {', '.join(self.ref(v) for v in values)}", op)

    def for_op(self, op: scf.ForOp, depth: int) -> None:
        # A nest whose page transfers (tilefold.sim.page_batches) or tile calls
        # (tilefold.sim.tile_batches) are queued and executed together after it: same effects,
        # in order, since nothing else runs meanwhile.
        if not self.queuing:
            for is_nest, calls, flush in ((is_page_transfer_nest, QUEUEABLE_CALLS, "k.flush_pages()"),
                                          (is_tile_nest, QUEUEABLE_TILE_CALLS, "k.flush_tiles()")):
                if is_nest(op):
                    self.queuing = calls
                    try:
                        self._queued_nest(op, depth, calls is QUEUEABLE_TILE_CALLS)
                    finally:
                        self.queuing = frozenset()
                    self.emit(depth, flush, op)
                    return
        self._for_loop(op, depth)

    def _queued_nest(self, op: scf.ForOp, depth: int, tiles: bool) -> None:
        """A nest's queuing loop; a tile nest whose calls depend only on values fixed for the whole
        kernel (:func:`nest_inputs`) runs only when the thread has not queued it with those values
        before (``k.replay_tile_nest`` then hands the recorded queue to the flush)."""
        inputs = nest_inputs(op) if tiles else None
        if inputs is None:
            self._for_loop(op, depth)
            return
        refs = "".join(f"{self.ref(v)}, " for v in inputs if not isinstance(v.owner, arith.ConstantOp))
        self.emit(depth, f"if not k.replay_tile_nest({next(self.nests)}, ({refs})):", op)
        self._for_loop(op, depth + 1)

    def _for_loop(self, op: scf.ForOp, depth: int) -> None:
        body = op.body.block
        iv, *iter_args = body.args
        carried = [self.define(res) for res in op.results]
        for arg, name in zip(iter_args, carried):
            self.names[arg] = name
        self.assign(depth, carried, list(op.iter_args), op)
        loop_var = self.define(iv)
        self.emit(depth, f"for {loop_var} in k.range({self.ref(op.lb)}, {self.ref(op.ub)}, {self.ref(op.step)}):",
                  op)
        self._body_with_yield(body, depth + 1, carried)

    def _body_with_yield(self, body: Block, depth: int, targets: list[str]) -> None:
        emitted = len(self.lines)
        for inner in body.ops:
            if isinstance(inner, scf.YieldOp):
                self.assign(depth, targets, list(inner.operands), inner)
            else:
                self.op(inner, depth)
        if len(self.lines) == emitted:
            self.emit(depth, "pass")

    def if_op(self, op: scf.IfOp, depth: int) -> None:
        results = [self.define(res) for res in op.results]
        self.emit(depth, f"if k.cond({self.ref(op.cond)}):", op)
        self._body_with_yield(op.true_region.block, depth + 1, results)
        if op.false_region.blocks and (results or not _only_yield(op.false_region.block)):
            self.emit(depth, "else:")
            self._body_with_yield(op.false_region.block, depth + 1, results)

    def while_op(self, op: scf.WhileOp, depth: int) -> None:
        before = op.before_region.block
        after = op.after_region.block
        state = [self.define(arg) for arg in before.args]
        results = [self.define(res) for res in op.results]
        self.assign(depth, state, list(op.arguments), op)
        self.emit(depth, "while True:", op)
        self.emit(depth + 1, "k.step()", op)
        for inner in before.ops:
            if isinstance(inner, scf.ConditionOp):
                self.emit(depth + 1, f"if not k.cond({self.ref(inner.condition)}):", inner)
                self.assign(depth + 2, results, list(inner.args), inner)
                self.emit(depth + 2, "break")
                after_names = [self.define(arg) for arg in after.args]
                self.assign(depth + 1, after_names, list(inner.args), inner)
            else:
                self.op(inner, depth + 1)
        self._body_with_yield(after, depth + 1, state)


def _only_yield(block: Block) -> bool:
    ops = list(block.ops)
    return len(ops) == 1 and isinstance(ops[0], scf.YieldOp) and not ops[0].operands


def _is_int(value: SSAValue, width: int) -> bool:
    return isinstance(value.type, IntegerType) and value.type.width.data == width


_serial = count()


def emit_python_source(kernel: func.FuncOp) -> tuple[str, dict[int, SourceLocation]]:
    """Python source of ``kernel`` and the map from its lines to the user's lines."""
    printer = _Printer(kernel)
    printer.block(kernel.body.block, 1)
    name = re.sub(r"\W", "_", kernel.sym_name.data)
    header = f"def {name}(k):"
    doc = source_location(kernel)
    lines = [header] + printer.lines
    source = "\n".join(lines) + "\n"
    locations = dict(printer.locations)
    if doc is not None:
        locations.setdefault(1, doc)
    return source, locations


def emit_python(kernel: func.FuncOp) -> PythonKernel:
    """Compile ``kernel`` to a Python function ``f(k)``; its source is registered with
    :mod:`linecache` so tracebacks and debuggers show it."""
    source, locations = emit_python_source(kernel)
    name = kernel.sym_name.data
    filename = f"<tilefold kernel {name} #{next(_serial)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    namespace: dict = {}
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace[re.sub(r"\W", "_", name)]
    return PythonKernel(name, source, filename, locations, fn)
