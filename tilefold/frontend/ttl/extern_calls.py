"""``ttl.call_extern_func``: a kernel calls a C++ function of a user's header.

Reads: the call's arguments (evaluated by the kernel builder). Writes: one ``ttkernel.extern_call``
op (:class:`~tilefold.ir.ttkernel.ExternCallOp`), printed by the C++ emitter after
``#include "<header>"``. Function arguments are runtime integers, compile-time numbers and
dataflow buffers (passed as their circular buffer index); template arguments are compile-time
numbers, ``ttl.get_dfb_id(dfb)`` (the index) and ``ttl.dfb_descriptor(dfb)`` (a
``ttlang::DFBDescriptor<index, pages per block, block count, page bytes>`` type). With
``result_type=ttl.ScalarType.I32`` (``I64``, ``U32``, ``BOOL``) the call's value is a runtime
integer of the kernel. The C++ body is opaque: the simulator cannot run it, so a simulated kernel
that reaches the call stops with an error at its line (:mod:`tilefold.sim.extern_calls`); with
``TTLANG_COMPILE_ONLY=1`` the operation and its C++ are built without running. The blocks a kernel
holds of a buffer it passes count as written (reserved) or read (waited) by the C++. A buffer
named in ``dfb_effects=`` (blocks the C++ reserves, pushes, waits on or pops itself) is bound in the
kernel and left out of the checks that count a buffer's blocks: those counts are partly in the C++.
So is a buffer the call is handed (a function argument, ``ttl.get_dfb_id``, ``ttl.dfb_descriptor``,
``dfb_dependencies=``) without an effect or access description, and, with
``unknown_dfb_access=True``, every buffer of the operation, as TT-Lang counts them.

Outside a kernel function these names raise an error naming the user's line.
"""

from __future__ import annotations

import enum
import math
import os
import re
import struct

from tilefold.caller import user_location
from tilefold.errors import KernelError

_CPP_NAME = re.compile(r"(::)?[A-Za-z_]\w*(::[A-Za-z_]\w*)*")
# keyword arguments TT-Lang uses to describe what the C++ does with buffers; they change no C++
_METADATA = ("dfb_dependencies", "dfb_accesses", "dfb_effects", "unknown_dfb_access")


class ScalarType(enum.Enum):
    """``ttl.ScalarType``: the C++ type of an external function's result (``result_type=``)."""

    I32 = "i32"
    I64 = "i64"
    U32 = "u32"
    BOOL = "bool"


class DispatchCondition:
    """``ttl.DispatchCondition(ttl.ScalarType.X)``: names the value of an external call
    (``condition_result=``) that decides whether the operation's work runs; the call returns a
    runtime integer of that type, as with ``result_type=``."""

    def __init__(self, scalar_type=ScalarType.I32):
        if not isinstance(scalar_type, ScalarType):
            raise KernelError(f"ttl.DispatchCondition({scalar_type!r}): give a ttl.ScalarType "
                              f"({', '.join(t.name for t in ScalarType)})", user_location())
        self.scalar_type = scalar_type


class DFBNote:
    """What ``ttl.DFBAccess.X(dfb)`` / ``ttl.DFBEffect.X(dfb, tiles=n)`` / ``DFBEffect.repeat(n, [...])``
    make in a kernel: a description of what the C++ does with a buffer (``dfb_accesses=`` /
    ``dfb_effects=``), which changes no C++."""

    def __init__(self, kind: str, dfb=None, count=None, items=()):
        self.kind, self.dfb, self.count, self.items = kind, dfb, count, tuple(items)


class DFBAccess:
    """``ttl.DFBAccess.inspect(dfb)`` / ``ttl.DFBAccess.interface_preserved(dfb)``: the C++ reads a
    buffer's description (its interface: index, pointers, page size) and leaves it as it was,
    without a transaction."""

    @staticmethod
    def inspect(dfb):
        _device_only("DFBAccess.inspect")

    @staticmethod
    def interface_preserved(dfb):
        _device_only("DFBAccess.interface_preserved")


class DFBEffect:
    """``ttl.DFBEffect.reserve/push/wait/pop(dfb, tiles=n)`` and ``repeat(count, [effects])``: the
    buffer transactions the C++ makes itself (in ``dfb_effects=``)."""

    @staticmethod
    def reserve(dfb, tiles=1):
        _device_only("DFBEffect.reserve")

    @staticmethod
    def push(dfb, tiles=1):
        _device_only("DFBEffect.push")

    @staticmethod
    def wait(dfb, tiles=1):
        _device_only("DFBEffect.wait")

    @staticmethod
    def pop(dfb, tiles=1):
        _device_only("DFBEffect.pop")

    @staticmethod
    def repeat(count, effects):
        _device_only("DFBEffect.repeat")


def note_handlers(builder) -> dict:
    """The kernel builder's handlers of ``ttl.DFBAccess.*`` / ``ttl.DFBEffect.*`` (by function id)."""
    from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

    def buffer_note(what, kind):
        def handle(args, kwargs, node):
            kwargs = dict(kwargs)
            tiles = kwargs.pop("tiles", 1) if kind != "inspect" else None
            if len(args) != 1 or kwargs or not isinstance(args[0], DataflowBuffer):
                raise builder.error(f"ttl.{what}(dfb{'' if tiles is None else ', tiles=n'}) takes one dataflow "
                                    "buffer", node)
            if tiles is not None and not (isinstance(tiles, int) and not isinstance(tiles, bool) and tiles >= 0):
                raise builder.error(f"ttl.{what}(dfb, tiles=...) takes a non-negative integer, not "
                                    f"{builder.describe(tiles)}", node)
            return DFBNote(kind, args[0], tiles)
        return handle

    def repeat(args, kwargs, node):
        values = list(args) + [kwargs[k] for k in ("count", "effects") if k in kwargs]
        if len(values) != 2 or not (isinstance(values[0], int) and values[0] >= 0) \
                or not isinstance(values[1], (list, tuple)) or not all(isinstance(e, DFBNote) for e in values[1]):
            raise builder.error("ttl.DFBEffect.repeat(count, [effects]) takes a non-negative integer and a list of "
                                "ttl.DFBEffect values", node)
        return DFBNote("repeat", None, values[0], values[1])

    out = {id(DFBAccess.inspect): buffer_note("DFBAccess.inspect", "inspect"),
           id(DFBAccess.interface_preserved): buffer_note("DFBAccess.interface_preserved", "inspect"),
           id(DFBEffect.repeat): repeat}
    for name in ("reserve", "push", "wait", "pop"):
        out[id(getattr(DFBEffect, name))] = buffer_note(f"DFBEffect.{name}", name)
    return out


class DFBId:
    """``ttl.get_dfb_id(dfb)`` in a kernel: the buffer's circular buffer index, as a template argument."""

    def __init__(self, dfb):
        self.dfb = dfb


class DFBDescriptor:
    """``ttl.dfb_descriptor(dfb)`` in a kernel: a ``ttlang::DFBDescriptor`` template argument."""

    def __init__(self, dfb):
        self.dfb = dfb


def _device_only(name: str):
    raise KernelError(f"ttl.{name} describes work on the device; call it inside a @ttl.compute() or "
                      "@ttl.datamovement() kernel function", user_location())


def call_extern_func(header, name, func_args=(), template_args=(), result_type=None, kernel=None, **options):
    """``ttl.call_extern_func(header, name, func_args=[...], template_args=[...], result_type=None,
    kernel=None)``: call the C++ function ``name`` declared in ``header`` (inside a kernel)."""
    _device_only("call_extern_func")


def get_dfb_id(dfb):
    """``ttl.get_dfb_id(dfb)``: a buffer's circular buffer index, in ``template_args`` of an external call."""
    _device_only("get_dfb_id")


def dfb_descriptor(dfb):
    """``ttl.dfb_descriptor(dfb)``: a buffer's ``ttlang::DFBDescriptor`` type, in ``template_args``."""
    _device_only("dfb_descriptor")


def raw_addr(tensor):
    """``ttl.raw_addr(tensor)``: the base address of a tensor argument's buffer, a runtime integer (for
    ``func_args`` of an external call)."""
    _device_only("raw_addr")


# -- in a kernel ------------------------------------------------------------------------------


def dfb_marker(kind):
    """The handler of ``ttl.get_dfb_id`` / ``ttl.dfb_descriptor`` inside a kernel."""
    from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

    def handle(builder, args, kwargs, node):
        what = f"ttl.{'get_dfb_id' if kind is DFBId else 'dfb_descriptor'}"
        if len(args) != 1 or kwargs or not isinstance(args[0], DataflowBuffer):
            raise builder.error(f"{what}(dfb) takes one dataflow buffer", node)
        return kind(args[0])

    return handle


def build_call(builder, args, kwargs, node):
    """``ttl.call_extern_func(...)`` in a kernel: checks its arguments and emits the call; returns
    its value (a runtime integer) or None."""
    from tilefold.ir.ttkernel import EXTERN_RESULT_TYPES, ExternCallOp   # not at import: tilefold.ttl loads no IR

    what = "ttl.call_extern_func"
    kwargs = dict(kwargs)
    names = ("header", "name", "func_args", "template_args", "result_type", "kernel")
    if len(args) > len(names):
        raise builder.error(f"{what} takes at most {len(names)} positional arguments "
                            f"({', '.join(names)})", node)
    for key, value in zip(names, args):
        if key in kwargs:
            raise builder.error(f"{what}: {key} is given twice", node)
        kwargs[key] = value
    for key in ("header", "name"):
        if key not in kwargs:
            raise builder.error(f"{what}(header, name, ...) needs the {key}", node)
    header, callee = kwargs.pop("header"), kwargs.pop("name")
    func_args, template_args = kwargs.pop("func_args", ()) or (), kwargs.pop("template_args", ()) or ()
    result_type, selector = kwargs.pop("result_type", None), kwargs.pop("kernel", None)
    condition = kwargs.pop("condition_result", None)
    if condition is not None:
        if not isinstance(condition, DispatchCondition):
            raise builder.error(f"{what}: condition_result must be a ttl.DispatchCondition, not "
                                f"{builder.describe(condition)}", node)
        if result_type is not None and result_type is not condition.scalar_type:
            raise builder.error(f"{what}: result_type={result_type} differs from the type of its condition_result "
                                f"({condition.scalar_type})", node)
        result_type = condition.scalar_type
    include_paths = kwargs.pop("include_paths", ()) or ()
    dependencies = kwargs.pop("dfb_dependencies", ()) or ()
    described = set()                          # buffers whose use by the C++ the call describes
    for note in _effect_notes(kwargs.pop("dfb_effects", ()) or ()):
        builder.cb_value(note.dfb)             # a buffer the C++ reserves, pushes, waits on or pops
        builder.extern_effects.add(note.dfb.index)
        described.add(note.dfb.index)
    accesses = kwargs.pop("dfb_accesses", ()) or ()
    described |= {n.dfb.index for n in (accesses if isinstance(accesses, (list, tuple)) else ())
                  if isinstance(n, DFBNote) and n.dfb is not None}
    if kwargs.pop("unknown_dfb_access", False) is True:
        # the C++ may reserve, push, wait on or pop any of the operation's buffers: none is counted
        builder.extern_effects.update(d.index for d in builder.operation.dataflow_buffers if not d.hidden)
    for key in [k for k in kwargs if k in _METADATA]:
        kwargs.pop(key)
    if kwargs:
        raise builder.error(f"{what} has no argument {sorted(kwargs)[0]}=; it takes header, name, func_args, "
                            "template_args, result_type, condition_result, kernel and include_paths", node)

    if not isinstance(header, str) or not header.strip() or any(c in header for c in '"\n<>'):
        raise builder.error(f"{what}: the header must be a string, the path of a C++ header, not "
                            f"{builder.describe(header)}", node)
    if not isinstance(callee, str) or not _CPP_NAME.fullmatch(callee):
        raise builder.error(f"{what}: the function name must be a C++ name such as \"my_function\" or "
                            f"\"ns::my_function\", not {builder.describe(callee)}", node)
    if result_type is not None and not isinstance(result_type, ScalarType):
        raise builder.error(f"{what}: result_type must be a ttl.ScalarType ({', '.join(t.name for t in ScalarType)}) "
                            f"or None, not {builder.describe(result_type)}", node)
    _check_kernel(builder, selector, node)
    if not isinstance(include_paths, (list, tuple)) or not all(isinstance(p, str) for p in include_paths):
        raise builder.error(f"{what}: include_paths must be a list of folder names", node)
    if not isinstance(func_args, (list, tuple)):
        raise builder.error(f"{what}: func_args must be a list, not {builder.describe(func_args)}", node)
    if not isinstance(template_args, (list, tuple)):
        raise builder.error(f"{what}: template_args must be a list, not {builder.describe(template_args)}", node)

    operands = [_func_arg(builder, value, i, node) for i, value in enumerate(func_args)]
    templates, template_cbs, seen = [], [], {}
    for i, value in enumerate(template_args):
        text = _template_arg(builder, value, i, node)
        if isinstance(value, (DFBId, DFBDescriptor)):
            if value.dfb.index not in seen:
                seen[value.dfb.index] = len(template_cbs)
                template_cbs.append(builder.cb_value(value.dfb))
            text = text.format(k=seen[value.dfb.index])
        templates.append(text)
    for dfb in dependencies if isinstance(dependencies, (list, tuple)) else ():
        if hasattr(dfb, "index") and hasattr(dfb, "block_pages"):
            builder.cb_value(dfb)          # a buffer the C++ uses: bound in this kernel
    location = builder.location(node)
    buffers = [v for v in func_args if hasattr(v, "block_pages")] + \
        [v.dfb for v in template_args if isinstance(v, (DFBId, DFBDescriptor))] + \
        [v for v in (dependencies if isinstance(dependencies, (list, tuple)) else ()) if hasattr(v, "block_pages")]
    _held_blocks_used(builder, buffers, location)
    # a buffer the C++ is handed without a description of what it does with it may move its blocks
    builder.extern_effects.update(d.index for d in buffers if d.index not in described)
    op = builder.emit(ExternCallOp(header, callee, operands, templates, template_cbs,
                                   EXTERN_RESULT_TYPES[result_type.value] if result_type is not None else None,
                                   _find_header(header, include_paths, location.file)))
    if result_type is None:
        return None
    from tilefold.frontend.ttl.scalars import Scalar

    return Scalar.opaque(op.result)


def _effect_notes(effects) -> list:
    """The buffer transactions of ``dfb_effects=`` (``DFBEffect.repeat`` unrolled into its items)."""
    notes = []
    for note in effects if isinstance(effects, (list, tuple)) else ():
        if isinstance(note, DFBNote) and note.kind == "repeat":
            notes += _effect_notes(note.items)
        elif isinstance(note, DFBNote) and note.dfb is not None and note.kind != "inspect":
            notes.append(note)
    return notes


def _held_blocks_used(builder, buffers, location) -> None:
    """The C++ works on the blocks this kernel holds of the buffers it is given: a reserved block
    counts as written (it may be pushed), a waited one as read."""
    for index in dict.fromkeys(d.index for d in buffers):
        ends = getattr(builder, "held", {}).get(index, {})
        for kind, blocks in ends.items():
            for block in blocks:
                if not block.status.released:
                    (block.status.store if kind == "reserve" else block.status.read)(location)


def _check_kernel(builder, selector, node) -> None:
    """``kernel=``: one selector, or a tuple of them, naming this kernel (its kind, or the
    ``ttl.Kernel`` its kernel function selects)."""
    from tilefold.frontend.ttl.kernels import Kernel, check_selector, selector_kind

    if selector is None:
        return
    what = "ttl.call_extern_func"
    location = builder.location(node)
    own = getattr(builder.definition, "selector", None)
    selectors = list(selector) if isinstance(selector, tuple) else [selector]
    if not selectors:
        raise builder.error(f"{what}: kernel= takes a ttl.KernelKind, a ttl.Kernel or a tuple of them, not ()", node)
    if len(selectors) == 1:
        check_selector(selectors[0], builder.kind, what, location)
    kinds = [selector_kind(s, what, location) for s in selectors]
    # a kernel the body's split made (an operation without kernel functions) is the ttl.Kernel it was
    # made for
    implicit = getattr(builder.definition, "implicit", False)
    mine = [s for s, kind in zip(selectors, kinds) if kind == builder.kind
            and (not isinstance(s, Kernel) or s is own or implicit)]
    if not mine:
        raise builder.error(f"{what}: kernel= names no kernel this {builder.kind} kernel function "
                            f"({builder.definition.name}) is; give its kind or the ttl.Kernel of its decorator", node)


def _func_arg(builder, value, i: int, node):
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import Float32Type, IntegerAttr, i1

    from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer
    from tilefold.frontend.ttl.grid import NodeExpression
    from tilefold.frontend.ttl.scalars import Scalar

    if isinstance(value, DataflowBuffer):
        return builder.cb_value(value)
    if isinstance(value, NodeExpression):
        value = builder.node_expression(value, node)
    if isinstance(value, bool):
        return builder.emit(arith.ConstantOp(IntegerAttr(int(value), i1))).result
    if isinstance(value, (int, Scalar)):
        return builder.scalars.materialize(value)
    if isinstance(value, float):
        return builder.emit(arith.ConstantOp.from_float_and_width(value, Float32Type())).result
    argument = builder.operation.tensor_argument(value) if "Tensor" in type(value).__name__ else None
    if argument is not None:                         # its TensorAccessor, as ttl.copy addresses it
        if builder.kind != "datamovement":
            raise builder.error(f"ttl.call_extern_func: func_args[{i}] is tensor {argument.name}, which the C++ gets "
                                "as its TensorAccessor; only a data movement kernel has one: make the call in a "
                                "@ttl.datamovement() kernel", node)
        return builder.tensor_value(argument, node)
    if "Tensor" in type(value).__name__:
        raise builder.error(f"ttl.call_extern_func: func_args[{i}] is a tensor that is not an argument of the "
                            "operation; pass one of its tensor arguments", node)
    raise builder.error(f"ttl.call_extern_func: func_args[{i}] must be a scalar (an integer, a bool, a float or a "
                        f"runtime integer) or a dataflow buffer, not {builder.describe(value)}", node)


def _template_arg(builder, value, i: int, node) -> str:
    from tilefold.frontend.ttl.dataflow_buffers import DataflowBuffer

    if isinstance(value, bool):
        return f"bool:{int(value)}"
    if isinstance(value, int):
        if not -2 ** 63 <= value < 2 ** 64:
            raise builder.error(f"ttl.call_extern_func: template_args[{i}] = {value} does not fit 64 bits", node)
        return f"int:{value}"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise builder.error(f"ttl.call_extern_func: template_args[{i}] = {value} is not a finite number", node)
        return f"float:{struct.unpack('<I', struct.pack('<f', value))[0]}"
    if isinstance(value, DFBId):
        return "dfb_id:{k}"
    if isinstance(value, DFBDescriptor):
        d = value.dfb
        return f"dfb_descriptor:{{k}}:{d.block_pages}:{d.block_count}:{d.page_size}"
    if isinstance(value, DataflowBuffer):
        raise builder.error(f"ttl.call_extern_func: template_args[{i}] is dataflow buffer {value.name}, which is "
                            f"ambiguous: give ttl.get_dfb_id({value.name}) for its index or "
                            f"ttl.dfb_descriptor({value.name}) for its descriptor type", node)
    raise builder.error(f"ttl.call_extern_func: template_args[{i}] must be a compile-time integer, bool or float, "
                        f"ttl.get_dfb_id(dfb) or ttl.dfb_descriptor(dfb), not {builder.describe(value)}", node)


def _find_header(header: str, include_paths, user_file: str) -> str | None:
    """The header's file on disk: the path itself when absolute, else found in ``include_paths``
    (relative to the user's file), the user's file's folder or the working folder; None if none."""
    if os.path.isabs(header):
        return header if os.path.isfile(header) else None
    here = os.path.dirname(os.path.abspath(user_file)) if user_file else os.getcwd()
    folders = [p if os.path.isabs(p) else os.path.join(here, p) for p in include_paths] + [here, os.getcwd()]
    for folder in folders:
        path = os.path.normpath(os.path.join(folder, header))
        if os.path.isfile(path):
            return path
    return None


def raw_address(builder, args, kwargs, node):
    """``ttl.raw_addr(tensor)`` in a kernel: the tensor's base address, a runtime integer."""
    from tilefold.frontend.ttl.scalars import Scalar
    from tilefold.ir import ttl as ttl_ir

    argument = builder.operation.tensor_argument(args[0]) if len(args) == 1 and not kwargs else None
    if argument is None:
        raise builder.error("ttl.raw_addr(tensor) takes one tensor argument of the operation", node)
    op = builder.emit(ttl_ir.TensorAddressOp(argument.index, argument.name))
    op.result.name_hint = f"{argument.name}_addr"
    return Scalar.opaque(op.result)
