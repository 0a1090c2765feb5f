"""The TT-Metalium kernel API (ttnn 0.69) as a table: one row per device function.

Reads: nothing. Writes: nothing. This table is the single description of the kernel API
that the rest of tilefold reads: :mod:`tilefold.ir.ttkernel` generates one ``ttkernel.<name>``
op per row, :mod:`tilefold.frontend.pykernel` maps Python calls to those ops (filling
defaults), the C++ emitter prints ``name<templates>(args)`` and includes ``header``, the
Python emitter prints ``k.name(args, template=value)`` and the simulator implements every
row once under the same name (``configures`` rows by one configuration call, ``sfpu`` rows by
their function in :mod:`tilefold.ir.sfpu`, the SFPU functions' own table).

Operand kinds: ``u32`` (uint32_t: integer or index SSA value), ``u64`` (uint64_t NOC
address), ``i32`` (int), ``f32`` (float), ``bool``, ``accessor`` (a TensorAccessor value),
``l1_ptr`` (a uint32 L1 address the C++ passes as ``volatile tt_l1_ptr uint32_t*``).
Thread kinds: ``noc`` (BRISC / NCRISC data movement), ``compute`` (TRISC), ``any``.

Costs (``cost``, one of :data:`COSTS`): the term of the cost model (:mod:`tilefold.arch.costs`,
:meth:`tilefold.arch.Arch.call_cycles`) the simulator charges for one call — per tile for tile
calls, per packet for NOC transfers (which also take their transfer time), and on top of any
wait. ``free`` calls read a value the core already holds (a runtime argument, a CB's page size,
the core's coordinates) and cost nothing in the model.

Parameter roles (:data:`PARAM_ROLES`, one entry per parameter name of the table): ``cb`` (a
circular buffer: the operand is a ``!ttkernel.cb`` value, see :mod:`tilefold.ir.ttkernel`), ``dst`` (a DST slot of a compute call,
checked against the DST capacity), ``per_lane`` (an address, page id, NOC coordinate or value
that may differ between the cores one simulated thread stands for) and ``scalar`` (anything
else: counts, tile indices, flags, float bits).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilefold.ir.sfpu import INTEGER_ARITHMETIC, INTEGER_SFPU_OPS, SFPU, SFPU_OPS


PARAM_ROLES: dict[str, str] = {
    **dict.fromkeys(("cb", "in0_cb", "in1_cb", "in_cb", "new_in_cb", "old_in_cb", "out_cb", "scaler_cb", "srca_cb",
                     "srcb_cb"), "cb"),
    **dict.fromkeys(("dst_condition", "dst_false", "dst_in", "dst_in0", "dst_in1", "dst_index", "dst_out",
                     "dst_true"), "dst"),
    **dict.fromkeys(("accessor", "addr", "dst_local_l1_addr", "dst_noc_addr", "dst_noc_addr_multicast", "incr",
                     "noc_x", "noc_x_end", "noc_x_start", "noc_y", "noc_y_end", "noc_y_start", "offset", "page_id",
                     "sem_addr", "src_local_l1_addr", "src_noc_addr", "val", "value"), "per_lane"),
    **dict.fromkeys(("alpha_bits", "alpha_recip_bits", "arg_index", "beta_bits", "beta_reciprocal_bits", "block",
                     "ct_dim", "decimals", "exponent", "first", "in0_tile_index", "in1_tile_index", "in_tile_index",
                     "kt_dim", "l1_acc_en", "linked", "max_bits", "min_bits", "ntiles", "num_dests", "num_pages",
                     "num_rows", "out_tile_index", "output_index", "rt_dim", "scalar_bits", "scale_bits", "scaler_tile_index", "semaphore_id",
                     "scale_bf16_bits", "size", "slope_bits", "threshold_bits", "transpose", "value_bits",
                     "vector_mode"), "scalar"),
}


@dataclass(frozen=True)
class Param:
    name: str
    kind: str = "u32"
    default: int | float | bool | None = None   # None: required

    @property
    def role(self) -> str:
        """``cb``, ``dst``, ``per_lane`` or ``scalar`` (see :data:`PARAM_ROLES`)."""
        return PARAM_ROLES[self.name]


@dataclass(frozen=True)
class TemplateParam:
    """A compile-time parameter printed as a C++ template argument (``kind`` is ``bool``,
    ``uint32_t`` — a number, printed in hex — or the name of a C++ enum such as ``PoolType``),
    stored as an op property. An enum value passed as a ``uint32_t`` template argument
    (``typecast_tile<IN_DTYPE, OUT_DTYPE>``) prints with its ``cpp_cast``."""

    name: str
    kind: str
    default: bool | int | str | None     # None: required
    choices: tuple[str, ...] = ()
    cpp_cast: str = ""                   # printed before the value: ``(uint32_t)`` for a uint32_t parameter
    omit_default: bool = False           # left out of the C++ when last and at its default (the header's)


# The cost-model terms an API row can cost (see the module docstring).
COSTS = ("free", "riscv_call", "cb_op", "noc_issue", "barrier", "compute_call", "fpu_eltwise_tile", "matmul",
         "reduce_tile", "transpose_tile", "pack", "sfpu")


@dataclass(frozen=True)
class ApiFunction:
    name: str
    params: tuple[Param, ...] = ()
    result: str | None = None
    thread: str = "any"
    header: str | None = None
    templates: tuple[TemplateParam, ...] = ()
    cpp_name: str | None = None          # C++ function when it differs from ``name`` (overloads)
    cpp_type_template: str | None = None  # a fixed leading template type, e.g. get_arg_val<uint32_t>
    doc: str = ""
    # Shorter C++ overloads: (argument count, which given argument fills each parameter).
    short_forms: tuple[tuple[int, tuple[int, ...]], ...] = ()
    configures: bool = False             # only configures the engines (an init, uninit or reconfig call)
    sfpu: str | None = None               # the row of tilefold.ir.sfpu this call runs
    init: str | None = None               # the configuring call this call needs before it runs
    family: str | None = None             # its init family: calls of one family share how they are configured
    # what the call does besides its result: "pure" (nothing), "read" (reads state others write),
    # "write" (changes state: CBs, DST, L1, the NOC ...); the ttkernel op's effect trait
    effects: str = "write"
    # what one call costs in the cost model (:data:`COSTS`; ``sfpu`` costs ``cost_family``'s cycles)
    cost: str | None = None
    cost_family: str | None = None
    # an FPU element-wise row: its operation (add, sub, mul) and the broadcast of in1 (rows, cols,
    # scalar; None for none)
    eltwise: tuple[str, str | None] | None = None

    @property
    def cpp_function(self) -> str:
        return self.cpp_name or self.name

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


_DATAFLOW_H = "api/dataflow/dataflow_api.h"
_P = Param


def _df(name, params=(), result=None, cost="riscv_call", **kw):
    return ApiFunction(name, tuple(params), result, thread="noc", header=_DATAFLOW_H, cost=cost, **kw)


POOL_TYPE = TemplateParam("pool_type", "PoolType", "SUM", ("SUM", "AVG", "MAX"))
REDUCE_DIM = TemplateParam("reduce_dim", "ReduceDim", "REDUCE_ROW", ("REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR"))
# reduce_init / reduce_tile / reduce_uninit<true>: the reduction in full float32 (needs a 32-bit DST)
ENFORCE_FP32 = TemplateParam("enforce_fp32_accumulation", "bool", False, omit_default=True)

# Macros a header reads before it can be included: header -> ((macro, template parameter), ...).
# ``api/compute/reduce.h`` (0.69) uses REDUCE_OP / REDUCE_DIM as the default template arguments of
# reduce_init / reduce_tile, so a kernel including it defines them, as TT-Metal's softmax kernels
# do; the value is the kernel's first call with that template parameter.
HEADER_MACROS: dict[str, tuple[tuple[str, TemplateParam], ...]] = {
    "api/compute/reduce.h": (("REDUCE_OP", POOL_TYPE), ("REDUCE_DIM", REDUCE_DIM)),
}

# Headers a header needs included before it: header -> (headers, ...). 0.69's
# ``api/compute/binary_remainder.h`` names ``reinterpret`` without ``sfpi::``, and the LLK of
# ``api/compute/binary_comp.h`` (lt_int32_tile ...) names sfpi's constants without it; TT-NN's
# binary SFPU kernels include other SFPU headers first (``api/compute/eltwise_binary_sfpu.h``,
# ``api/compute/eltwise_unary/sqrt.h``), whose code brings sfpi's names into scope.
HEADER_PREREQUISITES: dict[str, tuple[str, ...]] = {
    "api/compute/binary_remainder.h": ("api/compute/eltwise_binary_sfpu.h",),
    "api/compute/binary_comp.h": ("api/compute/eltwise_unary/sqrt.h",),
}

DATAFLOW_API: tuple[ApiFunction, ...] = (
    # runtime arguments (also usable from compute kernels)
    ApiFunction("get_arg_val", (_P("arg_index"),), "u32", thread="any", effects="pure", cpp_type_template="uint32_t",
                cost="free", doc="Per-core runtime argument."),
    ApiFunction("get_common_arg_val", (_P("arg_index"),), "u32", thread="any", effects="pure",
                cpp_type_template="uint32_t", cost="free",
                doc="Runtime argument common to every core of the kernel."),
    # circular buffers (both thread kinds; compute gets them from api/compute/cb_api.h)
    ApiFunction("cb_reserve_back", (_P("cb"), _P("num_pages")), cost="cb_op"),
    ApiFunction("cb_push_back", (_P("cb"), _P("num_pages")), cost="cb_op"),
    ApiFunction("cb_wait_front", (_P("cb"), _P("num_pages")), cost="cb_op"),
    ApiFunction("cb_pop_front", (_P("cb"), _P("num_pages")), cost="cb_op"),
    ApiFunction("read_tile_value", (_P("cb"), _P("in_tile_index"), _P("offset")), "u32", thread="compute",
                header="api/compute/cb_api.h", effects="read", cost="riscv_call",
                doc="Word `offset` (uint32) of waited page `in_tile_index` of a CB, the same on the three TRISCs."),
    _df("cb_pages_available_at_front", (_P("cb"), _P("num_pages")), "u32", effects="read",
        doc="Whether `num_pages` pushed pages wait at the CB's front (C++ returns bool); never blocks."),
    _df("get_write_ptr", (_P("cb"),), "u32", effects="read"),
    _df("get_read_ptr", (_P("cb"),), "u32", effects="read"),
    _df("get_tile_size", (_P("cb"),), "u32", effects="pure", cost="free"),
    # NOC transfers
    _df("noc_async_read", (_P("src_noc_addr", "u64"), _P("dst_local_l1_addr"), _P("size")), cost="noc_issue"),
    _df("noc_async_write", (_P("src_local_l1_addr"), _P("dst_noc_addr", "u64"), _P("size")), cost="noc_issue"),
    _df("noc_async_read_page", (_P("page_id"), _P("accessor", "accessor"), _P("dst_local_l1_addr"),
                                _P("offset", default=0)), cost="noc_issue"),
    _df("noc_async_write_page", (_P("page_id"), _P("accessor", "accessor"), _P("src_local_l1_addr"),
                                 _P("size", default=0), _P("offset", default=0)), cost="noc_issue"),
    _df("get_noc_addr", (_P("page_id"), _P("accessor", "accessor"), _P("offset", default=0)), "u64",
        effects="pure", doc="NOC address of a page of a TensorAccessor."),
    _df("get_noc_addr_xy", (_P("noc_x"), _P("noc_y"), _P("addr")), "u64", cpp_name="get_noc_addr", effects="pure",
        doc="NOC address of an L1 address on the core at NOC coordinates (x, y)."),
    _df("get_noc_multicast_addr", (_P("noc_x_start"), _P("noc_y_start"), _P("noc_x_end"), _P("noc_y_end"),
                                   _P("addr")), "u64", effects="pure"),
    _df("noc_async_write_multicast", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"), _P("size"),
                                      _P("num_dests"), _P("linked", "bool", False)), cost="noc_issue"),
    _df("noc_async_write_multicast_loopback_src", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                                   _P("size"), _P("num_dests"), _P("linked", "bool", False)),
        cost="noc_issue"),
    _df("noc_async_read_barrier", cost="barrier"),
    _df("noc_async_write_barrier", cost="barrier"),
    _df("noc_async_writes_flushed", cost="barrier"),
    _df("noc_async_atomic_barrier", cost="barrier"),
    # semaphores
    _df("get_semaphore", (_P("semaphore_id"),), "u32", effects="pure"),
    _df("noc_semaphore_set", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_wait", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_wait_min", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_inc", (_P("addr", "u64"), _P("incr")), cost="noc_issue"),
    _df("noc_semaphore_set_remote", (_P("src_local_l1_addr"), _P("dst_noc_addr", "u64")), cost="noc_issue"),
    # one 32-bit word written over the NOC without a source in L1 (the simulator takes semaphore targets)
    _df("noc_inline_dw_write", (_P("addr", "u64"), _P("val")), cost="noc_issue"),
    _df("noc_semaphore_set_multicast", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                        _P("num_dests"), _P("linked", "bool", False)), cost="noc_issue"),
    _df("noc_semaphore_set_multicast_loopback_src", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                                     _P("num_dests"), _P("linked", "bool", False)), cost="noc_issue"),
    # where am I
    ApiFunction("get_absolute_logical_x", (), "u32", effects="pure", cost="free", doc="This core's logical x."),
    ApiFunction("get_absolute_logical_y", (), "u32", effects="pure", cost="free", doc="This core's logical y."),
)


def _cp(name, params=(), header="api/compute/compute_kernel_api.h", **kw):
    return ApiFunction(name, tuple(_P(p) if isinstance(p, str) else p for p in params), None,
                       thread="compute", header=header, **kw)


def _init(name, params=(), header="api/compute/compute_kernel_api.h", **kw):
    """A call that only configures the engines (init, uninit, reconfig)."""
    return _cp(name, params, header, configures=True, cost="compute_call", **kw)


_ELTWISE_BINARY_H = "api/compute/eltwise_binary.h"
_BCAST_H = "api/compute/bcast.h"
_MATMUL_H = "api/compute/matmul.h"
_WHERE_H = "api/compute/eltwise_unary/where.h"
_TYPECAST_H = "api/compute/eltwise_unary/typecast.h"
# the data formats typecast_tile converts between (0.69's typecast.h)
TYPECAST_FORMATS = ("Float32", "Float16_b", "Bfp8_b", "Bfp4_b", "Int32", "UInt32", "UInt16", "UInt8")
TYPECAST_TEMPLATES = (TemplateParam("in_dtype", "DataFormat", None, TYPECAST_FORMATS, "(uint32_t)"),
                      TemplateParam("out_dtype", "DataFormat", None, TYPECAST_FORMATS, "(uint32_t)"))

BCAST_TYPE = TemplateParam("bcast_type", "BroadcastType", None, ("ROW", "COL", "SCALAR"))
_FPU_TILE_ARGS = ("in0_cb", "in1_cb", "in0_tile_index", "in1_tile_index", "dst_index")

COMPUTE_API: list[ApiFunction] = [
    _init("compute_kernel_hw_startup", ("in0_cb", "in1_cb", "out_cb"), "api/compute/compute_kernel_hw_startup.h",
          short_forms=((2, (0, 0, 1)),), doc="compute_kernel_hw_startup(icb, ocb) is (icb, icb, ocb)."),
    _init("binary_op_init_common", ("in0_cb", "in1_cb", "out_cb"), _ELTWISE_BINARY_H),
    _init("unary_op_init_common", ("in_cb", "out_cb"), "api/compute/eltwise_unary/eltwise_unary.h"),
    _init("init_sfpu", ("in_cb", "out_cb"), "api/compute/eltwise_unary/eltwise_unary.h"),
    _cp("tile_regs_acquire", (), "api/compute/reg_api.h", cost="compute_call"),
    _cp("tile_regs_commit", (), "api/compute/reg_api.h", cost="compute_call"),
    _cp("tile_regs_wait", (), "api/compute/reg_api.h", cost="compute_call"),
    _cp("tile_regs_release", (), "api/compute/reg_api.h", cost="compute_call"),
    _init("copy_tile_init", ("in_cb",), "api/compute/tile_move_copy.h"),
    _init("copy_tile_to_dst_init_short_with_dt", ("old_in_cb", "new_in_cb"), "api/compute/tile_move_copy.h"),
    _cp("copy_tile", ("in_cb", "in_tile_index", "dst_index"), "api/compute/tile_move_copy.h", init="copy_tile_init",
        family="copy", cost="fpu_eltwise_tile"),
    _init("copy_dest_values_init", (), "api/compute/copy_dest_values.h"),
    _cp("copy_dest_values", ("dst_in", "dst_out"), "api/compute/copy_dest_values.h", init="copy_dest_values_init",
        family="copy_dest", cost="sfpu", cost_family="copy"),
    _init("reconfig_data_format", ("srca_cb", "srcb_cb"), "api/compute/reconfig_data_format.h"),
    _init("reconfig_data_format_srca", ("srca_cb",), "api/compute/reconfig_data_format.h"),
    _init("pack_reconfig_data_format", ("out_cb",), "api/compute/pack.h"),
    _cp("pack_reconfig_l1_acc", ("l1_acc_en",), "api/compute/pack.h", cost="compute_call",
        doc="1: later packs add DST to the tiles already at their L1 place; 0: they overwrite them."),
    _cp("pack_tile", ("dst_index", "out_cb", Param("out_tile_index", default=0)), "api/compute/pack.h",
        init="pack_reconfig_data_format", family="pack", cost="pack",
        templates=(TemplateParam("out_of_order_output", "bool", False),)),
    _init("pack_rows_init", ("num_rows",), "api/compute/pack.h",
          doc="pack_rows packs the first num_rows rows of a DST tile (16 values each, 1 to 64)."),
    _cp("pack_rows", ("dst_index", "out_cb", Param("output_index", default=0)), "api/compute/pack.h",
        init="pack_rows_init", family="pack_rows", cost="pack",
        doc="DST[dst_index]'s first num_rows rows of 16 values, in DST's order, to out_cb from page output_index."),
    _init("pack_rows_uninit", (), "api/compute/pack.h", doc="The packer back to packing whole tiles."),
    _cp("pack_tile_block", ("dst_index", "out_cb", "ntiles"), "api/compute/pack.h", init="pack_reconfig_data_format",
        family="pack", cost="pack",
        doc="DST[dst_index .. dst_index+ntiles) to the next ntiles pages of out_cb, as ntiles pack_tile calls."),
    # FPU element-wise (tiles from two CBs into DST)
    _init("add_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _init("sub_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _init("mul_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _cp("add_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H, init="add_tiles_init", family="eltwise",
        cost="fpu_eltwise_tile", eltwise=("add", None)),
    _cp("sub_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H, init="sub_tiles_init", family="eltwise",
        cost="fpu_eltwise_tile", eltwise=("sub", None)),
    _cp("mul_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H, init="mul_tiles_init", family="eltwise",
        cost="fpu_eltwise_tile", eltwise=("mul", None)),
    # one tile broadcast into DST: its first row (ROW), first column (COL) or [0,0] (SCALAR); a full init
    # (the unpacker, math engine and packer configured for in_cb / out_cb), 32-bit tiles of a CB unpacked
    # to DST (UnpackToDestFp32) moved whole, others through SrcB
    _init("unary_bcast_init", ("in_cb", "out_cb"), _BCAST_H, templates=(BCAST_TYPE,)),
    _cp("unary_bcast", ("in_cb", "in_tile_index", "dst_index"), _BCAST_H, templates=(BCAST_TYPE,),
        init="unary_bcast_init", family="unary_bcast", cost="fpu_eltwise_tile"),
    # FPU broadcasts: in1's first row (ROWS), first column (COLS) or [0,0] (SCALAR) broadcast
    _init("add_bcast_rows_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("add_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("add_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("sub_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("sub_tiles_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("mul_bcast_rows_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("mul_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _init("mul_tiles_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("add_tiles_bcast_rows", _FPU_TILE_ARGS, _BCAST_H, init="add_bcast_rows_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("add", "rows")),
    _cp("add_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H, init="add_bcast_cols_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("add", "cols")),
    _cp("add_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H, init="add_bcast_scalar_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("add", "scalar")),
    _cp("sub_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H, init="sub_bcast_cols_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("sub", "cols")),
    _cp("sub_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H, init="sub_tiles_bcast_scalar_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("sub", "scalar")),
    _cp("mul_tiles_bcast_rows", _FPU_TILE_ARGS, _BCAST_H, init="mul_bcast_rows_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("mul", "rows")),
    _cp("mul_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H, init="mul_bcast_cols_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("mul", "cols")),
    _cp("mul_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H, init="mul_tiles_bcast_scalar_init_short", family="bcast",
        cost="fpu_eltwise_tile", eltwise=("mul", "scalar")),
    # matmul
    _init("mm_init", ("in0_cb", "in1_cb", "out_cb", Param("transpose", default=0)), _MATMUL_H),
    _init("mm_init_short", ("in0_cb", "in1_cb", Param("transpose", default=0)), _MATMUL_H),
    _cp("matmul_tiles", _FPU_TILE_ARGS, _MATMUL_H, init="mm_init_short", family="matmul_tiles", cost="matmul"),
    _init("mm_block_init", ("in0_cb", "in1_cb", "out_cb", Param("transpose", default=0), Param("ct_dim", default=1),
                            Param("rt_dim", default=1), Param("kt_dim", default=1)), _MATMUL_H),
    _init("mm_block_init_short", ("in0_cb", "in1_cb", Param("transpose", default=0), Param("ct_dim", default=1),
                                  Param("rt_dim", default=1), Param("kt_dim", default=1)), _MATMUL_H),
    _cp("matmul_block", ("in0_cb", "in1_cb", "in0_tile_index", "in1_tile_index", "dst_index", "transpose",
                         "ct_dim", "rt_dim", "kt_dim"), _MATMUL_H, init="mm_block_init_short", family="matmul_block",
        cost="matmul",
        doc="rt_dim x ct_dim output tiles at dst_index.. from one K step: in0 rows strided by kt_dim."),
    # reduce (scaler tile from a second CB)
    _init("reduce_init", ("in_cb", "scaler_cb", "out_cb"), "api/compute/reduce.h",
          templates=(POOL_TYPE, REDUCE_DIM, ENFORCE_FP32)),
    _cp("reduce_tile", ("in_cb", "scaler_cb", "in_tile_index", "scaler_tile_index", "dst_index"),
        "api/compute/reduce.h", templates=(POOL_TYPE, REDUCE_DIM, ENFORCE_FP32), init="reduce_init", family="reduce",
        cost="reduce_tile"),
    # (0.69's icb argument matters only on Wormhole, where no reduction enforces float32)
    _init("reduce_uninit", (), "api/compute/reduce.h", templates=(ENFORCE_FP32,)),
    # transpose
    _init("transpose_wh_init", ("in_cb", "out_cb"), "api/compute/transpose_wh.h"),
    _init("transpose_wh_init_short", ("in_cb",), "api/compute/transpose_wh.h"),
    _cp("transpose_wh_tile", ("in_cb", "in_tile_index", "dst_index"), "api/compute/transpose_wh.h",
        init="transpose_wh_init_short", family="transpose", cost="transpose_tile"),
    _init("transpose_wh_dest_init_short", (), "api/compute/transpose_wh_dest.h"),
    _cp("transpose_wh_dest", ("dst_index",), "api/compute/transpose_wh_dest.h", init="transpose_wh_dest_init_short",
        family="transpose_dest", cost="transpose_tile",
        doc="Transpose the tile in DST slot dst_index in place."),
    # tilize / untilize (manage DST themselves)
    _init("tilize_init", ("in_cb", "block", "out_cb"), "api/compute/tilize.h"),
    _cp("tilize_block", ("in_cb", "block", "out_cb"), "api/compute/tilize.h", init="tilize_init", family="tilize",
        cost="fpu_eltwise_tile"),
    _init("tilize_uninit", ("in_cb", "out_cb"), "api/compute/tilize.h"),
    _init("untilize_init", ("in_cb",), "api/compute/untilize.h"),
    _cp("untilize_block", ("in_cb", "block", "out_cb"), "api/compute/untilize.h", init="untilize_init",
        family="untilize", cost="fpu_eltwise_tile"),
    _init("untilize_uninit", ("in_cb",), "api/compute/untilize.h"),
]


def _sfpu_rows(arity: str, slots: tuple[str, ...]) -> None:
    """The API rows of the SFPU functions of one arity (tilefold.ir.sfpu): each one's init (once)
    and its call."""
    for op in SFPU_OPS:
        if op.arity != arity:
            continue
        cpp = {"cpp_type_template": op.cpp_templates}
        if not any(f.name == op.init for f in COMPUTE_API) and arity != "scalar":
            init_cpp = f"{op.cpp_name}_init" if op.cpp_name else None
            init_templates = tuple(TemplateParam(n, "uint32_t", d, omit_default=True) for n, d in op.init_templates)
            COMPUTE_API.append(_init(op.init, (), op.header, cpp_name=init_cpp, templates=init_templates, **cpp))
        COMPUTE_API.append(_cp(op.call, slots + tuple(Param(n, k) for n, k in op.params), op.header, sfpu=op.name,
                               init=op.init, family="sfpu", cost="sfpu", cost_family=op.cost,
                               cpp_name=op.cpp_name, **cpp))


# SFPU on DST slots: two slots into a third, where, one slot in place, one slot with a float scalar
_sfpu_rows("binary", ("dst_in0", "dst_in1", "dst_out"))
COMPUTE_API.append(_init("where_tile_init", (), _WHERE_H))
COMPUTE_API.append(_cp("where_tile", ("dst_condition", "dst_true", "dst_false", "dst_out"), _WHERE_H,
                       init="where_tile_init", family="where", cost="sfpu", cost_family="where",
                       templates=(TemplateParam("data_format", "DataFormat", "Float16_b",
                                                ("Float16_b", "Float32", "Int32", "UInt32", "UInt16")),)))
# the SFPU's integer functions on DST slots (tilefold.ir.sfpu.INTEGER_SFPU_OPS): each its own init;
# a function of several formats takes it as a template argument (and so does mul_int_tile's init)
INTEGER_BINARY_FORMATS = INTEGER_ARITHMETIC
_INT_FORMAT = (TemplateParam("data_format", "DataFormat", None, INTEGER_ARITHMETIC),)
for _int in INTEGER_SFPU_OPS:
    _templates = () if _int.data_format else _INT_FORMAT
    COMPUTE_API.append(_init(_int.init, (), _int.header, templates=_INT_FORMAT if _int.templated_init else ()))
    COMPUTE_API.append(_cp(_int.call, ("dst_in0", "dst_in1", "dst_out"), _int.header, init=_int.init, family="sfpu",
                           cost="sfpu", cost_family=_int.block_op if _int.block_op in ("add", "sub", "mul", "max",
                                                                                       "min") else "compare",
                           templates=_templates,
                           doc=f"dst_out = {_int.block_op}(dst_in0, dst_in1) on the integers of "
                               f"{_int.data_format or 'data_format'}."))
COMPUTE_API.append(_cp("fill_tile_int", ("dst_index", Param("value", "u32")), "api/compute/eltwise_unary/fill.h",
                       init="fill_tile_init", family="sfpu", cost="sfpu", cost_family="fill",
                       templates=(TemplateParam("data_format", "DataFormat", None, INTEGER_BINARY_FORMATS),),
                       doc="Fills DST slot dst_index with the integer value (its 32 bits) of data_format."))
_sfpu_rows("unary", ("dst_index",))
COMPUTE_API.append(_init("typecast_tile_init", (), _TYPECAST_H, templates=TYPECAST_TEMPLATES))
COMPUTE_API.append(_cp("typecast_tile", ("dst_index",), _TYPECAST_H, templates=TYPECAST_TEMPLATES,
                       init="typecast_tile_init", family="sfpu", cost="sfpu", cost_family="copy",
                       doc="Converts the tile in DST slot dst_index from in_dtype to out_dtype in place."))
_sfpu_rows("scalar", ("dst_index",))
COMPUTE_API.append(_init("binop_with_scalar_tile_init", (), SFPU["add_unary"].header))

API: dict[str, ApiFunction] = {f.name: f for f in (*DATAFLOW_API, *COMPUTE_API)}
# The calls that move DST tiles to a CB (DST index first, output CB second).
PACK_CALLS = frozenset({"pack_tile", "pack_tile_block", "pack_rows"})

# Ops that are not plain calls (constructors, compile-time values, L1 pointer access) are
# defined by hand in tilefold.ir.ttkernel; their names are listed here for the front ends.
SPECIAL_OPS = (
    "get_compile_time_arg_val",
    "tensor_accessor_args",
    "tensor_accessor",
    "my_x",
    "my_y",
    "l1_load",
    "l1_store",
)


def api_function(name: str) -> ApiFunction | None:
    return API.get(name)


__all__ = ["Param", "TemplateParam", "ApiFunction", "API", "COSTS", "SPECIAL_OPS", "api_function",
           "POOL_TYPE", "REDUCE_DIM", "HEADER_MACROS", "TYPECAST_FORMATS"]
