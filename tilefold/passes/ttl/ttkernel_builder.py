"""Emitting ttkernel IR for one kernel during ``convert-ttl-to-ttkernel``: arguments and small helpers.

Reads: a kernel function. Writes: ``ttkernel.get_compile_time_arg_val`` / ``get_arg_val`` ops at the
kernel's start, and records on the function which argument is which, as lists of ``#ttl.arg``
(:class:`tilefold.ir.ttl_metadata.KernelArgAttr`):

* ``ttl.compile_args`` — ``cb`` (a circular buffer index), ``accessor`` (``TensorAccessorArgs`` of an
  operation tensor, several compile-time args);
* ``ttl.runtime_args`` — ``node`` (the node's logical x / y), ``address`` (of a tensor),
  ``pipe_count`` (pipes of a net in a role), ``pipe`` (one field of one pipe: ``x0 y0 x1 y1`` NOC
  rectangle, ``dests``, ``remote``, ``loopback`` of a source; ``x y`` NOC coordinates of the
  source, ``self`` of a destination), ``pipe_peer`` (a logical coordinate of the other end of one
  pipe, ``ttl.pipe_peer``).

The program builder (:mod:`tilefold.program.from_ttl`) reads these lists to give every
core its arguments. Runtime values are ``index`` (the ttkernel API takes index or i32 operands).
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IndexType, IntegerAttr, f32, i1, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tilefold.ir import ttl
from tilefold.ir.ttkernel import CBOp, GetCompileTimeArgValOp, api_call
from tilefold.ir.ttkernel_api import API
from tilefold.ir.ttl_metadata import KernelArgAttr

COMPILE_ARGS_ATTR = "ttl.compile_args"
RUNTIME_ARGS_ATTR = "ttl.runtime_args"


class KernelEmitter:
    """Argument bookkeeping and op insertion for one kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.entry = kernel.body.block
        self.compile_args: list[KernelArgAttr] = []
        self.runtime_args: list[KernelArgAttr] = []
        self.runtime_values: dict[KernelArgAttr, SSAValue] = {}
        self.prologue: list[Operation] = []

    # -- inserting ----------------------------------------------------------------------------

    @staticmethod
    def before(op: Operation, anchor: Operation, location=None) -> Operation:
        """Insert ``op`` before ``anchor`` (xDSL's Builder) with ``location`` (default: the anchor's)."""
        Builder(InsertPoint.before(anchor)).insert(op)
        op.location = location if location is not None else anchor.location
        return op

    def at_start(self, op: Operation) -> Operation:
        """An op of the kernel's prologue (argument reads), in order, before everything else."""
        op.location = self.kernel.location
        self.prologue.append(op)
        return op

    def finish(self) -> None:
        Builder(InsertPoint.before(self.entry.first_op)).insert(self.prologue)
        self.kernel.attributes[COMPILE_ARGS_ATTR] = ArrayAttr(self.compile_args)
        self.kernel.attributes[RUNTIME_ARGS_ATTR] = ArrayAttr(self.runtime_args)

    def index(self, value: int, anchor: Operation) -> SSAValue:
        return self.before(arith.ConstantOp(IntegerAttr(value, IndexType())), anchor).result

    def i32(self, value: int, anchor: Operation) -> SSAValue:
        return self.before(arith.ConstantOp(IntegerAttr(value, i32)), anchor).result

    def f32(self, value: float, anchor: Operation) -> SSAValue:
        return self.before(arith.ConstantOp(FloatAttr(float(value), f32)), anchor).result

    def call(self, name: str, operands: list, anchor: Operation, templates: dict | None = None, location=None):
        """``ttkernel.<name>(operands...)``; parameters left out take their API defaults."""
        operands = list(operands)
        for param in API[name].params[len(operands):]:
            if param.default is None:
                raise AssertionError(f"{name}: missing argument {param.name}")
            if param.kind == "bool":
                operands.append(self.before(arith.ConstantOp(IntegerAttr(int(param.default), i1)), anchor,
                                            location).result)
            else:
                operands.append(self.before(arith.ConstantOp(IntegerAttr(int(param.default), i32)), anchor,
                                            location).result)
        return self.before(api_call(name, operands, templates), anchor, location)

    def add(self, a: SSAValue, b: SSAValue, anchor: Operation) -> SSAValue:
        return self.before(arith.AddiOp(a, b), anchor).result

    def mul(self, a: SSAValue, b: SSAValue, anchor: Operation) -> SSAValue:
        return self.before(arith.MuliOp(a, b), anchor).result

    def to_i32(self, value: SSAValue | int, anchor: Operation) -> SSAValue:
        if isinstance(value, int):
            return self.i32(value, anchor)
        if isinstance(value.type, IndexType):
            return self.before(arith.IndexCastOp(value, i32), anchor).result
        return value

    # -- arguments ----------------------------------------------------------------------------

    def compile_arg(self, descriptor: KernelArgAttr, name: str | None = None) -> SSAValue:
        index = len(self.compile_args)
        self.compile_args.append(descriptor)
        op = self.at_start(GetCompileTimeArgValOp(index))
        if name:
            op.result.name_hint = name
        if descriptor.kind.data == "cb":
            return self.at_start(CBOp(op.result)).result   # a CB argument is a !ttkernel.cb
        return op.result

    def tensor_address(self, index: int, name: str) -> SSAValue:
        """The base address of the operation's tensor ``index`` (``name``), the runtime argument the
        host passes (shared by its ``TensorAccessor`` and ``ttl.raw_addr``)."""
        return self.runtime(KernelArgAttr.of("address", index), f"{name}_addr")

    def runtime(self, descriptor: KernelArgAttr, name: str | None = None) -> SSAValue:
        """The ``index`` value of a runtime argument (read once, at the kernel's start)."""
        if descriptor not in self.runtime_values:
            k = len(self.runtime_args)
            self.runtime_args.append(descriptor)
            const = self.at_start(arith.ConstantOp(IntegerAttr(k, i32)))
            value = self.at_start(api_call("get_arg_val", [const.result]))
            cast = self.at_start(arith.IndexCastOp(value.results[0], IndexType()))
            if name:
                cast.result.name_hint = name
            self.runtime_values[descriptor] = cast.result
        return self.runtime_values[descriptor]


def is_ttl(op: Operation) -> bool:
    return op.name.startswith("ttl.") or op.name in ("tensor.extract", "tensor.empty")


__all__ = ["KernelEmitter", "is_ttl", "COMPILE_ARGS_ATTR", "RUNTIME_ARGS_ATTR", "ttl"]
