"""The ``ttkernel`` dialect: one function per RISC-V kernel, in TT-Metalium API terms.

Reads: the API table of :mod:`tilefold.ir.ttkernel_api`. Writes: xDSL op and type classes.

Every row of the table becomes an op ``ttkernel.<name>`` whose operands are the API
function's parameters in order and whose properties are its template parameters; it
prints as ``ttkernel.cb_reserve_back(%cb, %n) : !ttkernel.cb, i32``. A handful of ops that are
not plain calls are defined by hand below (circular buffers, compile-time args, TensorAccessor
construction, NOC coordinates of the core, L1 pointer access, calls of a user's C++ functions).

Circular buffers have a type of their own, ``!ttkernel.cb``: every CB parameter of the table
(role ``cb``) takes one, so an op's operand verifier checks CB-ness by type. ``ttkernel.cb(%i)``
makes the CB of an integer index (a constant or a compile-time argument, as TT-Metalium's
``uint32_t cb_id``); both emitters print the index itself, so a CB costs nothing at run time.
:func:`api_call` takes integer indices for CB parameters and makes their ``ttkernel.cb`` op
(:func:`cb_value`). Control flow and scalars use ``scf``,
``arith`` and ``func``; a kernel is a ``func.func`` with the attribute
``ttkernel.thread = "noc" | "compute"`` (compute kernels also carry
``ttkernel.compute_config``).

Each op verifies what is knowable from the op alone: it is used in a kernel of the right
thread kind, a constant CB index is within 0–31 (``ttkernel.cb``), a constant DST index is within the DST
capacity of the kernel's compute config. Whole-kernel checks (tile-register protocol) are
in :mod:`tilefold.ir.verify`.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    Float32Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from tilefold.ir.lazy_format import op_with_format
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryReadEffect, MemoryWriteEffect, Pure
from xdsl.utils.exceptions import VerifyException

from tilefold.arch import ARCHS, Arch
from tilefold.ir.metadata import ComputeConfigAttr
from tilefold.ir.ttkernel_api import API, ApiFunction

THREAD_ATTR = "ttkernel.thread"
COMPUTE_CONFIG_ATTR = "ttkernel.compute_config"
# The IR does not name its device: operands are checked against what every device allows.
NUM_CIRCULAR_BUFFERS = max(a.max_circular_buffers for a in ARCHS.values())   # a device checks its own


@irdl_attr_definition
class TensorAccessorArgsType(ParametrizedAttribute, TypeAttribute):
    """Compile-time description of a buffer's distribution (``TensorAccessorArgs<N>()``)."""

    name = "ttkernel.tensor_accessor_args"


@irdl_attr_definition
class TensorAccessorType(ParametrizedAttribute, TypeAttribute):
    """A ``TensorAccessor``: args + base address + page size; maps page ids to NOC addresses."""

    name = "ttkernel.tensor_accessor"


@irdl_attr_definition
class CBType(ParametrizedAttribute, TypeAttribute):
    """A circular buffer of the core (``ttkernel.cb(%index)``): the type of every CB operand."""

    name = "ttkernel.cb"


_INT = base(IntegerType) | base(IndexType)
_CB = base(CBType)
_KIND_CONSTRAINT = {
    "u32": _INT,
    "i32": _INT,
    "u64": _INT,
    "l1_ptr": _INT,
    "bool": base(IntegerType),
    "f32": base(Float32Type),
    "accessor": base(TensorAccessorType),
}
_RESULT_TYPE = {"u32": i32, "u64": i64, "i32": i32}


# --- helpers shared by the verifiers ---------------------------------------------------


def enclosing_kernel(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def kernel_thread(kernel: func.FuncOp) -> str | None:
    attr = kernel.attributes.get(THREAD_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def compute_config(kernel: func.FuncOp) -> dict:
    """The compute config stored on a compute kernel, with defaults filled in."""
    config = {"math_fidelity": "HiFi4", "fp32_dest_acc_en": False, "dst_full_sync_en": False,
              "math_approx_mode": False}
    attr = kernel.attributes.get(COMPUTE_CONFIG_ATTR)
    if isinstance(attr, ComputeConfigAttr):
        config.update(attr.to_dict())
    return config


def compute_config_attr(math_fidelity="HiFi4", fp32_dest_acc_en=False, dst_full_sync_en=False,
                        math_approx_mode=False) -> ComputeConfigAttr:
    """The typed ``#ttkernel.compute_config`` (checks its fields)."""
    return ComputeConfigAttr.from_dict({"math_fidelity": math_fidelity, "fp32_dest_acc_en": bool(fp32_dest_acc_en),
                                        "dst_full_sync_en": bool(dst_full_sync_en),
                                        "math_approx_mode": bool(math_approx_mode)})


def dst_capacity(kernel: func.FuncOp, arch: Arch | None = None) -> int:
    """DST tiles per acquire for the kernel's compute config on ``arch`` (without one: the
    fewest any device gives)."""
    config = compute_config(kernel)
    archs = [arch] if arch is not None else ARCHS.values()
    return min(a.dst_capacity(config["fp32_dest_acc_en"], config["dst_full_sync_en"]) for a in archs)


def float_bits(value: float) -> int:
    """The bit pattern of a float32 as the i32 value a ttkernel call takes (SFPU scalar
    parameters are float bits in a ``uint32_t``; an i32 attribute holds them signed)."""
    return int(np.float32(value).view(np.int32))


def constant_int(value: SSAValue) -> int | None:
    """The integer a value holds when it is an ``arith.constant`` (or the CB of one), else None."""
    owner = value.owner
    if isinstance(owner, CBOp):
        owner = owner.index.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _check_thread(op: Operation, wanted: str) -> None:
    if wanted == "any":
        return
    kernel = enclosing_kernel(op)
    if kernel is None:
        return
    thread = kernel_thread(kernel)
    if thread is not None and thread != wanted:
        what = "a compute" if wanted == "compute" else "a data-movement"
        raise VerifyException(
            f"{op.name.removeprefix('ttkernel.')} is {what} API call but kernel @{kernel.sym_name.data} "
            f"is a {'compute' if thread == 'compute' else 'data-movement'} kernel; move it to the "
            f"{'compute' if wanted == 'compute' else 'reader or writer'} kernel"
        )


def _check_operands(op: Operation, fn: ApiFunction) -> None:
    for param, value in zip(fn.params, op.operands):
        c = constant_int(value)
        if c is None:
            continue
        if param.role == "dst":
            kernel = enclosing_kernel(op)
            if kernel is not None:
                capacity = dst_capacity(kernel)
                if not 0 <= c < capacity:
                    cfg = compute_config(kernel)
                    raise VerifyException(
                        f"{fn.name}: DST index {c} is beyond the {capacity} tiles one tile_regs_acquire gives "
                        f"(fp32_dest_acc_en={cfg['fp32_dest_acc_en']}, dst_full_sync_en={cfg['dst_full_sync_en']})"
                    )


class ApiCallOp(IRDLOperation):
    """Base of the generated ops: one TT-Metalium API call."""

    @property
    def api(self) -> ApiFunction:
        """The API table row this op calls."""
        return API[self.name.removeprefix("ttkernel.")]

    def verify_(self) -> None:
        _check_thread(self, self.api.thread)
        _check_operands(self, self.api)

    def template_values(self) -> dict[str, bool | int | str]:
        """Template parameters with defaults filled in (a ``uint32_t`` one as an int)."""
        values: dict[str, bool | int | str] = {}
        for t in self.api.templates:
            attr = self.properties.get(t.name)
            if attr is None:
                values[t.name] = t.default
            elif t.kind == "uint32_t":
                values[t.name] = int(attr.data, 0)
            elif isinstance(attr, StringAttr):
                values[t.name] = attr.data
            else:
                values[t.name] = bool(attr.value.data)
        return values


def _class_name(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


# the effect trait of a row's ``effects``: xDSL's dead-code elimination removes unused results of
# pure and read-only calls and keeps every call that writes
EFFECT_TRAITS = {"pure": Pure, "read": MemoryReadEffect, "write": MemoryWriteEffect}


def _make_op(fn: ApiFunction) -> type[ApiCallOp]:
    fields: dict = {"name": f"ttkernel.{fn.name}", "__doc__": fn.doc or f"``{fn.cpp_function}``"}
    for p in fn.params:
        fields[p.name] = operand_def(_CB if p.role == "cb" else _KIND_CONSTRAINT[p.kind])
    for t in fn.templates:
        fields[t.name] = opt_prop_def(BoolAttr if t.kind == "bool" else StringAttr)
    if fn.result is not None:
        fields["result"] = result_def(_KIND_CONSTRAINT[fn.result])
    operands = " `,` ".join(f"${p.name}" for p in fn.params)
    head = f"`(` {operands} `)` " if fn.params else "`(` `)` "
    if fn.params and fn.result:
        tail = "attr-dict `:` functional-type(operands, results)"
    elif fn.params:
        tail = "attr-dict `:` type(operands)"
    elif fn.result:
        tail = "attr-dict `:` type(results)"
    else:
        tail = "attr-dict"
    fields["irdl_options"] = (ParsePropInAttrDict(),)
    fields["traits"] = traits_def(EFFECT_TRAITS[fn.effects]())
    cls = type(_class_name(fn.name), (ApiCallOp,), fields)
    cls.__module__ = __name__
    return op_with_format(cls, head + tail)


API_OPS: dict[str, type[ApiCallOp]] = {name: _make_op(fn) for name, fn in API.items()}
globals().update({cls.__name__: cls for cls in API_OPS.values()})


def result_type(kind: str) -> Attribute:
    return _RESULT_TYPE[kind]


def api_call(name: str, operands: list[SSAValue | Operation], templates: dict | None = None) -> ApiCallOp:
    """Build the op for API function ``name`` (operands in the table's order). A CB parameter
    takes a ``!ttkernel.cb`` value or an integer index already in the IR (its :func:`cb_value`)."""
    cls = API_OPS[name]
    fn = API[name]
    operands = [cb_value(SSAValue.get(o)) if p.role == "cb" else o for p, o in zip(fn.params, operands)] + \
        list(operands[len(fn.params):])
    properties: dict[str, Attribute] = {}
    for t in fn.templates:
        if templates and t.name in templates:
            v = templates[t.name]
            if t.kind == "bool":
                properties[t.name] = BoolAttr.from_bool(bool(v))
            else:
                properties[t.name] = StringAttr(f"0x{int(v):08X}" if t.kind == "uint32_t" else str(v))
    result_types = [result_type(fn.result)] if fn.result else []
    return cls.create(operands=[SSAValue.get(o) for o in operands], result_types=result_types,
                      properties=properties)


# --- ops that are not plain calls ----------------------------------------------------------


@irdl_op_definition
class CBOp(IRDLOperation):
    """``ttkernel.cb(%index)``: the circular buffer with index ``%index`` (``tt::CBIndex``)."""

    name = "ttkernel.cb"
    index = operand_def(_INT)
    result = result_def(CBType())
    traits = traits_def(Pure())
    assembly_format = "`(` $index `)` attr-dict `:` type($index)"

    def __init__(self, index: SSAValue | Operation):
        super().__init__(operands=[index], result_types=[CBType()])
        self.result.name_hint = cb_name(self.index)

    def verify_(self) -> None:
        c = constant_int(self.index)
        if c is not None and not 0 <= c < NUM_CIRCULAR_BUFFERS:
            users = sorted({use.operation.name.removeprefix("ttkernel.") for use in self.result.uses})
            raise VerifyException(f"{', '.join(users) or 'ttkernel.cb'}: circular buffer index {c} is outside "
                                  f"0-{NUM_CIRCULAR_BUFFERS - 1}")


def cb_name(index: SSAValue) -> str | None:
    """The name printed IR gives the CB of ``index``: ``cb<N>`` for a constant index N (as
    ``tt::CBIndex::c_<N>``), ``cb_<name>`` for a named index (a dataflow buffer's argument)."""
    c = constant_int(index)
    if c is not None:
        return f"cb{c}"
    return f"cb_{index.name_hint}" if index.name_hint else None


def cb_value(index: SSAValue) -> SSAValue:
    """The ``!ttkernel.cb`` value of ``index`` (itself when it is one): the ``ttkernel.cb`` op right
    after the index's definition, made on first use and shared by every later call."""
    if isinstance(index.type, CBType):
        return index
    for use in index.uses:
        if isinstance(use.operation, CBOp):
            return use.operation.result
    op = CBOp(index)
    owner = index.owner
    if isinstance(owner, Block):
        if owner.first_op is None:
            owner.add_op(op)
        else:
            owner.insert_op_before(op, owner.first_op)
    elif owner.parent_block() is not None:
        owner.parent_block().insert_op_after(op, owner)
        op.location = owner.location
    else:
        raise ValueError(f"a CB index must be in the IR before a call takes it ({owner.name} is not)")
    return op.result


@irdl_op_definition
class GetCompileTimeArgValOp(IRDLOperation):
    """``get_compile_time_arg_val(index)``: a compile-time argument of the kernel."""

    name = "ttkernel.get_compile_time_arg_val"
    traits = traits_def(Pure())
    index = prop_def(IntegerAttr)
    result = result_def(i32)
    assembly_format = "`(` $index `)` attr-dict `:` type($result)"

    def __init__(self, index: int):
        super().__init__(properties={"index": IntegerAttr(index, i32)}, result_types=[i32])

    @property
    def arg_index(self) -> int:
        return self.index.value.data

    def verify_(self) -> None:
        if self.arg_index < 0:
            raise VerifyException(f"compile-time argument index {self.arg_index} is negative")


@irdl_op_definition
class TensorAccessorArgsOp(IRDLOperation):
    """``TensorAccessorArgs<cta_offset>()`` or chained after ``prev`` with
    ``TensorAccessorArgs<prev.next_compile_time_args_offset()>()``."""

    name = "ttkernel.tensor_accessor_args"
    traits = traits_def(Pure())
    prev = opt_operand_def(TensorAccessorArgsType)
    cta_offset = opt_prop_def(IntegerAttr)
    crta_offset = opt_prop_def(IntegerAttr)
    result = result_def(TensorAccessorArgsType)
    assembly_format = "`(` ($prev^)? `)` attr-dict `:` type($result)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cta_offset: int | None = None, prev: SSAValue | Operation | None = None,
                 crta_offset: int | None = None):
        props: dict[str, Attribute] = {}
        if cta_offset is not None:
            props["cta_offset"] = IntegerAttr(cta_offset, i32)
        if crta_offset is not None:
            props["crta_offset"] = IntegerAttr(crta_offset, i32)
        super().__init__(operands=[[prev] if prev is not None else []], properties=props,
                         result_types=[TensorAccessorArgsType()])

    def verify_(self) -> None:
        if (self.prev is None) == (self.cta_offset is None):
            raise VerifyException(
                "tensor_accessor_args needs exactly one of a compile-time offset or the previous accessor args"
            )


@irdl_op_definition
class TensorAccessorOp(IRDLOperation):
    """``TensorAccessor(args, bank_base_address, page_size)``."""

    name = "ttkernel.tensor_accessor"
    traits = traits_def(Pure())
    args = operand_def(TensorAccessorArgsType)
    bank_base_address = operand_def(_INT)
    page_size = operand_def(_INT)
    result = result_def(TensorAccessorType)
    assembly_format = "`(` $args `,` $bank_base_address `,` $page_size `)` attr-dict `:` type(operands)"

    def __init__(self, args, bank_base_address, page_size):
        super().__init__(operands=[args, bank_base_address, page_size], result_types=[TensorAccessorType()])


class _NocCoordOp(IRDLOperation):
    """This core's NOC coordinate (``my_x[noc_index]`` / ``my_y[noc_index]``): data movement only."""

    traits = traits_def(Pure())
    result = result_def(i32)
    assembly_format = "`(` `)` attr-dict `:` type($result)"

    def __init__(self):
        super().__init__(result_types=[i32])

    def verify_(self) -> None:
        _check_thread(self, "noc")


@irdl_op_definition
class MyXOp(_NocCoordOp):
    """``my_x[noc_index]``: this core's NOC x coordinate."""

    name = "ttkernel.my_x"


@irdl_op_definition
class MyYOp(_NocCoordOp):
    """``my_y[noc_index]``: this core's NOC y coordinate."""

    name = "ttkernel.my_y"


_L1_WIDTHS = (8, 16, 32)


@irdl_op_definition
class L1LoadOp(IRDLOperation):
    """``reinterpret_cast<volatile tt_l1_ptr uintW_t*>(addr)[index]``."""

    name = "ttkernel.l1_load"
    traits = traits_def(MemoryReadEffect())
    addr = operand_def(_INT)
    index = operand_def(_INT)
    width = prop_def(IntegerAttr)
    result = result_def(i32)
    assembly_format = "`(` $addr `,` $index `)` attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, addr, index, width: int = 32):
        super().__init__(operands=[addr, index], properties={"width": IntegerAttr(width, i32)},
                         result_types=[i32])

    def verify_(self) -> None:
        if self.width.value.data not in _L1_WIDTHS:
            raise VerifyException(f"l1_load width must be one of {_L1_WIDTHS} bits")


@irdl_op_definition
class L1StoreOp(IRDLOperation):
    """``reinterpret_cast<volatile tt_l1_ptr uintW_t*>(addr)[index] = value``."""

    name = "ttkernel.l1_store"
    traits = traits_def(MemoryWriteEffect())
    addr = operand_def(_INT)
    index = operand_def(_INT)
    value = operand_def(_INT)
    width = prop_def(IntegerAttr)
    assembly_format = "`(` $addr `,` $index `,` $value `)` attr-dict `:` type(operands)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, addr, index, value, width: int = 32):
        super().__init__(operands=[addr, index, value], properties={"width": IntegerAttr(width, i32)})

    def verify_(self) -> None:
        if self.width.value.data not in _L1_WIDTHS:
            raise VerifyException(f"l1_store width must be one of {_L1_WIDTHS} bits")


@irdl_op_definition
class AssertInRangeOp(IRDLOperation):
    """``ASSERT(value <= upper)``: TT-Metal's watcher assert that ``value`` (unsigned, so also ``>= 0``)
    lies in ``0..upper``; ``message`` says what the value is (printed as a comment, and by the simulator
    when the assert trips)."""

    name = "ttkernel.assert_in_range"   # no effect trait: never dead
    value = operand_def(_INT)
    upper = prop_def(IntegerAttr)
    message = prop_def(StringAttr)
    assembly_format = "$value attr-dict `:` type($value)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value, upper: int, message: str):
        super().__init__(operands=[value], properties={"upper": IntegerAttr(upper, i64),
                                                       "message": StringAttr(message)})

    def verify_(self) -> None:
        if self.upper.value.data < 0:
            raise VerifyException("assert_in_range needs an upper bound >= 0")


class _MessageParts:
    """Texts around runtime integers (``parts`` holds one more text than there are ``values``)."""

    @property
    def texts(self) -> list[str]:
        return [p.data for p in self.parts.data]

    def verify_(self) -> None:
        if len(self.parts.data) != len(self.values) + 1:
            raise VerifyException(f"{self.name} needs one more text part than values")


@irdl_op_definition
class KernelAssertOp(_MessageParts, IRDLOperation):
    """``ASSERT(condition)``: a kernel's own ``assert`` on runtime values, a TT-Metal watcher assert.
    Its message is ``parts`` around runtime ``values`` (printed as a comment, and by the simulator,
    with the values, when the assert trips)."""

    name = "ttkernel.assert"   # no effect trait: never dead
    condition = operand_def(i1)
    values = var_operand_def()
    parts = prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, condition, parts: list[str], values=()):
        super().__init__(operands=[condition, list(values)],
                         properties={"parts": ArrayAttr([StringAttr(p) for p in parts])})


@irdl_op_definition
class DPrintOp(_MessageParts, IRDLOperation):
    """``DPRINT << part0 << value0 << part1 ... << ENDL()``: TT-Metal's debug print of texts and
    runtime integers; ``parts`` holds one more text than there are values (the texts around them).
    In a compute kernel one thread prints, so a line appears once per core: the math thread
    (``DPRINT_MATH``), or ``thread`` ("unpack" / "pack": the one printing the tiles that follow)."""

    name = "ttkernel.dprint"   # no effect trait: never dead
    values = var_operand_def()
    parts = prop_def(ArrayAttr)
    thread = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, parts: list[str], values, thread: str | None = None):
        props = {"parts": ArrayAttr([StringAttr(p) for p in parts])}
        if thread is not None:
            props["thread"] = StringAttr(thread)
        super().__init__(operands=[list(values)], properties=props)

    @property
    def compute_thread(self) -> str:
        return self.thread.data if self.thread is not None else "math"


@irdl_op_definition
class DPrintTilesOp(IRDLOperation):
    """TT-Metal's ``DPRINT << TileSlice(...)`` of ``count`` tiles of circular buffer ``cb``, from tile
    ``first`` past its read pointer (``side`` "front": pages waited for) or its write pointer ("back":
    pages reserved), one line per tile row. A compute kernel prints from the unpacker (front) or the
    packer (back), the threads that see those pointers."""

    name = "ttkernel.dprint_tiles"   # no effect trait: never dead
    cb = operand_def()
    first = prop_def(IntegerAttr)
    count = prop_def(IntegerAttr)
    side = prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cb: SSAValue, first: int, count: int, side: str):
        super().__init__(operands=[cb], properties={"first": IntegerAttr(first, i32), "count": IntegerAttr(count, i32),
                                                    "side": StringAttr(side)})

    def verify_(self) -> None:
        if self.side.data not in ("front", "back"):
            raise VerifyException(f"{self.name}: side must be front or back, not {self.side.data!r}")


@irdl_op_definition
class DPrintCBOp(IRDLOperation):
    """One ``DPRINT`` line of circular buffer ``cb``'s state as TT-Metal's ``print_cb_details`` shows it:
    its size, limit, page size, page count and read / write pointers."""

    name = "ttkernel.dprint_cb"   # no effect trait: never dead
    cb = operand_def()
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, cb: SSAValue):
        super().__init__(operands=[cb])


# the C++ types of an external call's scalar result (``ttl.ScalarType``)
EXTERN_RESULT_TYPES = {"i32": "int32_t", "i64": "int64_t", "u32": "uint32_t", "bool": "bool"}


@irdl_op_definition
class ExternCallOp(IRDLOperation):
    """``callee<template...>(args...)``: a C++ function of a user's header (``ttl.call_extern_func``),
    printed after ``#include "header"`` as the user wrote the header's path.

    The first ``arg_count`` operands are the function arguments (runtime integers, constants,
    dataflow buffers — a circular buffer index — and, in a data movement kernel, ``TensorAccessor``
    values); the rest are the buffers the template arguments
    name. Each template argument is a string: ``int:N``, ``bool:0|1``, ``float:BITS`` (an f32 bit
    pattern, unsigned), ``dfb_id:K`` (the index of the K-th template buffer) or
    ``dfb_descriptor:K:PAGES:BLOCKS:PAGE_BYTES`` (a ``ttlang::DFBDescriptor`` type). The optional
    result is a runtime integer declared with the C++ type ``result_ctype``. ``header_path`` is
    the header's file on disk when the front end found one (a project copies it). The simulator
    cannot run the C++: reaching the call stops a simulated run with an error at its line."""

    name = "ttkernel.extern_call"   # no effect trait: never dead
    args = var_operand_def()
    result = opt_result_def(IndexType)
    header = prop_def(StringAttr)
    callee = prop_def(StringAttr)
    arg_count = prop_def(IntegerAttr)
    template_args = prop_def(ArrayAttr)
    result_ctype = opt_prop_def(StringAttr)
    header_path = opt_prop_def(StringAttr)
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, header: str, callee: str, args, template_args: list[str], template_cbs=(),
                 result_ctype: str | None = None, header_path: str | None = None):
        props = {"header": StringAttr(header), "callee": StringAttr(callee),
                 "arg_count": IntegerAttr(len(args), i32),
                 "template_args": ArrayAttr([StringAttr(t) for t in template_args])}
        if result_ctype is not None:
            props["result_ctype"] = StringAttr(result_ctype)
        if header_path:
            props["header_path"] = StringAttr(header_path)
        super().__init__(operands=[[*args, *template_cbs]], properties=props,
                         result_types=[[IndexType()] if result_ctype is not None else []])

    @property
    def call_args(self) -> list[SSAValue]:
        return list(self.args[:self.arg_count.value.data])

    @property
    def template_cbs(self) -> list[SSAValue]:
        return list(self.args[self.arg_count.value.data:])

    @property
    def templates(self) -> list[str]:
        return [t.data for t in self.template_args.data]

    def verify_(self) -> None:
        if not 0 <= self.arg_count.value.data <= len(self.args):
            raise VerifyException(f"{self.name}: arg_count {self.arg_count.value.data} is outside the operands")
        if self.result_ctype is not None and self.result_ctype.data not in EXTERN_RESULT_TYPES.values():
            raise VerifyException(f"{self.name}: result type {self.result_ctype.data!r} is not one of "
                                  f"{sorted(EXTERN_RESULT_TYPES.values())}")
        if (self.result_ctype is None) != (self.result is None):
            raise VerifyException(f"{self.name}: a result needs a result type and the reverse")
        cbs = len(self.template_cbs)
        for t in self.templates:
            kind, _, rest = t.partition(":")
            fields = rest.split(":")
            if kind in ("dfb_id", "dfb_descriptor"):
                if not (fields[0].isdigit() and int(fields[0]) < cbs) \
                        or len(fields) != (1 if kind == "dfb_id" else 4):
                    raise VerifyException(f"{self.name}: bad template argument {t!r}")
            elif kind not in ("int", "bool", "float") or len(fields) != 1:
                raise VerifyException(f"{self.name}: bad template argument {t!r}")


SPECIAL_OP_CLASSES = (CBOp, GetCompileTimeArgValOp, TensorAccessorArgsOp, TensorAccessorOp, MyXOp, MyYOp,
                      L1LoadOp, L1StoreOp, AssertInRangeOp, KernelAssertOp, DPrintOp, DPrintTilesOp, DPrintCBOp,
                      ExternCallOp)

TTKernel = Dialect(
    "ttkernel",
    [*API_OPS.values(), *SPECIAL_OP_CLASSES],
    [CBType, TensorAccessorArgsType, TensorAccessorType, ComputeConfigAttr],
)

__all__ = [
    "TTKernel",
    "API_OPS",
    "ApiCallOp",
    "api_call",
    "CBOp",
    "CBType",
    "cb_value",
    "GetCompileTimeArgValOp",
    "TensorAccessorArgsOp",
    "TensorAccessorOp",
    "TensorAccessorArgsType",
    "TensorAccessorType",
    "MyXOp",
    "MyYOp",
    "L1LoadOp",
    "L1StoreOp",
    "AssertInRangeOp",
    "KernelAssertOp",
    "DPrintOp",
    "DPrintTilesOp",
    "DPrintCBOp",
    "ExternCallOp",
    "EXTERN_RESULT_TYPES",
    "THREAD_ATTR",
    "COMPUTE_CONFIG_ATTR",
    "compute_config",
    "compute_config_attr",
    "dst_capacity",
    "kernel_thread",
    "enclosing_kernel",
    "constant_int",
]
