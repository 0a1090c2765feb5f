"""Which CBs a compute kernel unpacks straight to DST as float32 (``UnpackToDestFp32``).

Reads: a compute kernel's ttkernel function and the data formats of its CBs. Writes: nothing;
:func:`unpack_to_dest_mode` returns the ``ComputeConfig.unpack_to_dest_mode`` the compilers give
the kernel.

The unpacker feeds the FPU through 19-bit source registers, so a float32 tile loses its low 13
mantissa bits on the way. Calls that only move a tile into DST (``copy_tile``,
``unary_bcast``, ``transpose_wh_tile``, ``tilize_block``, ``untilize_block``) can instead have the unpacker write
it into DST directly, when DST is 32-bit (``fp32_dest_acc_en``) and the host sets the CB's mode
to ``UnpackToDestFp32`` — what TT-Metal's tilize and untilize factories do for float32. A CB
qualifies when it is float32, int32 or uint32 (whose 32 bits the source registers cannot carry) and every call that unpacks it is one of those; a CB an FPU call
(element-wise, matmul, reduce) also reads stays ``Default``, as FPU calls read through the source
registers whatever the mode. CB operands must be constants or compile-time arguments whose values
are given; with any other CB operand on an unpacking call nothing qualifies.

The TT-Lang compiler, as TT-Lang's own does, unpacks float32 to DST only for the plain moves
(:data:`TTL_FLOAT32_TO_DEST_CALLS`): its ``ttl.math.transpose`` and ``ttl.block.broadcast`` of
float32 read through the source registers and come back cut to TF32, which TT-Lang's programs
expect. 32-bit integers, which the source registers cannot carry at all, unpack to DST for every
one of the calls.
"""

from __future__ import annotations

from xdsl.dialects import func

from tilefold.ir.ttkernel import CBOp, GetCompileTimeArgValOp, constant_int
from tilefold.ir.ttkernel_api import api_function
from tilefold.layout.formats import DataFormat

# 32-bit formats the source registers would cut: float32 to TF32, integers altogether
_TO_DEST_FORMATS = (DataFormat.Float32, DataFormat.Int32, DataFormat.UInt32)
TO_DEST_CALLS = frozenset({"copy_tile", "unary_bcast", "transpose_wh_tile", "tilize_block", "untilize_block"})
TTL_FLOAT32_TO_DEST_CALLS = frozenset({"copy_tile", "tilize_block", "untilize_block"})
UNPACKED_PARAMS = frozenset({"in_cb", "in0_cb", "in1_cb", "scaler_cb"})


def _cb_index(value, compile_args) -> int | None:
    """The CB index ``value`` names: a constant, or ``get_compile_time_arg_val(i)`` whose value
    ``compile_args[i]`` is an integer (all arguments before it integers too)."""
    c = constant_int(value)
    if c is not None:
        return c
    owner = value.owner.index.owner if isinstance(value.owner, CBOp) else value.owner
    if isinstance(owner, GetCompileTimeArgValOp):
        i = owner.arg_index
        if i < len(compile_args) and all(isinstance(a, int) for a in compile_args[:i + 1]):
            return compile_args[i]
    return None


def unpacked_cbs(function: func.FuncOp, compile_args=()) -> dict[int, set[str]] | None:
    """CB index → the calls that unpack it; None when an unpacking call names a CB that is neither
    a constant nor a known compile-time argument."""
    compile_args = list(compile_args)
    reads: dict[int, set[str]] = {}
    for op in function.walk():
        if not op.name.startswith("ttkernel."):
            continue
        name = op.name.removeprefix("ttkernel.")
        api = api_function(name)
        if api is None or api.configures:
            continue
        for param, operand in zip(api.param_names, op.operands):
            if param in UNPACKED_PARAMS:
                cb = _cb_index(operand, compile_args)
                if cb is None:
                    return None
                reads.setdefault(cb, set()).add(name)
    return reads


def float32_source_reads(function: func.FuncOp, formats: dict[int, DataFormat], compile_args=(),
                         float32_calls: frozenset[str] = TO_DEST_CALLS) -> set[str]:
    """The calls of a compute kernel that read a float32 CB through the source registers (its
    values cut to TF32): every unpacking call of such a CB but the moves ``float32_calls``."""
    reads = unpacked_cbs(function, compile_args) or {}
    return {call for cb, calls in reads.items() if formats.get(cb) is DataFormat.Float32
            for call in calls - float32_calls}


def unpack_to_dest_mode(function: func.FuncOp, formats: dict[int, DataFormat], fp32_dest_acc_en: bool,
                        compile_args=(), float32_calls: frozenset[str] = TO_DEST_CALLS) -> dict[int, str]:
    """``{cb: "UnpackToDestFp32"}`` for each int32 or uint32 CB only ``copy_tile`` / ``unary_bcast`` /
    ``transpose_wh_tile`` / ``tilize_block`` / ``untilize_block`` unpack, and each float32 CB only
    ``float32_calls`` (by default the same) unpack, when DST is 32-bit; else empty. ``compile_args``
    are the kernel's compile-time arguments (CB indexes passed that way)."""
    if not fp32_dest_acc_en:
        return {}
    reads = unpacked_cbs(function, compile_args)
    if not reads:
        return {}
    return {cb: "UnpackToDestFp32" for cb, unpacking in sorted(reads.items())
            if formats.get(cb) in _TO_DEST_FORMATS
            and unpacking <= (float32_calls if formats[cb] is DataFormat.Float32 else TO_DEST_CALLS)}
