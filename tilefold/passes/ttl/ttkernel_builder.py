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

A kernel with more runtime arguments than TT-Metalium's table holds (a node receiving from dozens of
pipes: six small numbers each) packs its small ones — coordinates, slots, semaphore indices and
flags, each below 2**16 — two to a word, low half first, and unpacks them with a mask and a shift;
``ttl.runtime_arg_words`` then lists the arguments each word holds, which the program builder packs
the same way.
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ArrayAttr, FloatAttr, IndexType, IntegerAttr, f32, i1, i32
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from tilefold.arch import HALF_WORD, Arch
from tilefold.ir import ttl
from tilefold.ir.ttkernel import CBOp, GetCompileTimeArgValOp, api_call
from tilefold.ir.ttkernel_api import API
from tilefold.ir.ttl_metadata import NOC_FIELDS, RUNTIME_WORDS_ATTR, KernelArgAttr

COMPILE_ARGS_ATTR = "ttl.compile_args"
RUNTIME_ARGS_ATTR = "ttl.runtime_args"
MAX_RUNTIME_ARGS = Arch.max_runtime_args      # the table of runtime arguments (unique and common) of a kernel
# the runtime arguments whose values are always below 2**16 (coordinates, slots, indices, flags)
_SMALL_FIELDS = {"pipe": {"x", "y", "x0", "y0", "x1", "y1", "self", "index", "src_slot", "dests", "remote",
                          "loopback"},
                 "pipe_peer": {"x", "y", "x0", "y0", "x1", "y1", "device"},
                 "noc": set(NOC_FIELDS), "noc_rect": set(NOC_FIELDS)}
_SMALL_FIELDS["pipe_named"] = _SMALL_FIELDS["pipe"]


def is_small(descriptor: KernelArgAttr) -> bool:
    """Whether a runtime argument's value is always below 2**16 (it may share a word)."""
    f = descriptor.to_dict()
    return f["kind"] == "node" or f.get("field") in _SMALL_FIELDS.get(f["kind"], ())


class KernelEmitter:
    """Argument bookkeeping and op insertion for one kernel."""

    def __init__(self, kernel: func.FuncOp):
        self.kernel = kernel
        self.entry = kernel.body.block
        self.compile_args: list[KernelArgAttr] = []
        self.runtime_args: list[KernelArgAttr] = []
        self.runtime_values: dict[KernelArgAttr, SSAValue] = {}
        self.runtime_reads: list[tuple[Operation, Operation]] = []     # each argument's index constant and read
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
        if len(self.runtime_args) > MAX_RUNTIME_ARGS:
            self.pack_runtime_args()
        Builder(InsertPoint.before(self.entry.first_op)).insert(self.prologue)
        self.kernel.attributes[COMPILE_ARGS_ATTR] = ArrayAttr(self.compile_args)
        self.kernel.attributes[RUNTIME_ARGS_ATTR] = ArrayAttr(self.runtime_args)

    def pack_runtime_args(self) -> None:
        """Pairs of small runtime arguments share a word (see the module docstring): each read takes
        its word's index and its half, the low one masked, the high one shifted down."""
        small = [i for i, d in enumerate(self.runtime_args) if is_small(d)]
        pairs = {small[k]: (small[k], small[k + 1]) for k in range(0, len(small) - 1, 2)}
        paired = {j for i, j in pairs.values()}
        words: list[tuple[int, ...]] = []
        half: dict[int, tuple[int, int]] = {}          # argument -> (its word, 0 low / 1 high)
        for i in range(len(self.runtime_args)):
            if i in paired:
                continue
            members = pairs.get(i, (i,))
            for h, member in enumerate(members):
                half[member] = (len(words), h)
            words.append(members)
        extra: dict[int, list[Operation]] = {}         # a read -> the ops taking its half
        for i, (const, read) in enumerate(self.runtime_reads):
            word, h = half[i]
            const.properties["value"] = IntegerAttr(word, i32)
            if len(words[word]) == 1:
                continue
            value = read.results[0]
            amount = arith.ConstantOp(IntegerAttr(HALF_WORD - 1 if h == 0 else 16, i32))
            take = arith.AndIOp(value, amount.result) if h == 0 else arith.ShRUIOp(value, amount.result)
            for use in [u for u in value.uses if u.operation is not take]:
                use.operation.operands = [take.result if o is value else o for o in use.operation.operands]
            extra[id(read)] = [amount, take]
        prologue = []
        for op in self.prologue:
            prologue.append(op)
            for added in extra.get(id(op), ()):
                added.location = op.location
                prologue.append(added)
        self.prologue = prologue
        self.kernel.attributes[RUNTIME_WORDS_ATTR] = ArrayAttr([ArrayAttr([IntegerAttr(i, i32) for i in w])
                                                               for w in words])

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
            self.runtime_reads.append((const, value))
            cast = self.at_start(arith.IndexCastOp(value.results[0], IndexType()))
            if name:
                cast.result.name_hint = name
            self.runtime_values[descriptor] = cast.result
        return self.runtime_values[descriptor]


def is_ttl(op: Operation) -> bool:
    return op.name.startswith("ttl.") or op.name in ("tensor.extract", "tensor.empty")


__all__ = ["KernelEmitter", "is_ttl", "is_small", "COMPILE_ARGS_ATTR", "RUNTIME_ARGS_ATTR", "MAX_RUNTIME_ARGS", "ttl"]
