"""The TT-Metalium kernel API (ttnn 0.69) as a table: one row per device function.

Reads: nothing. Writes: nothing. This table is the single description of the kernel API
that the rest of tilefold reads: :mod:`tilefold.ir.ttkernel` generates one ``ttkernel.<name>``
op per row, :mod:`tilefold.frontend.pykernel` maps Python calls to those ops (filling
defaults), the C++ emitter prints ``name<templates>(args)`` and includes ``header``, the
Python emitter prints ``k.name(args, template=value)`` and the simulator implements every
row under the same name.

Operand kinds: ``u32`` (uint32_t: integer or index SSA value), ``u64`` (uint64_t NOC
address), ``i32`` (int), ``f32`` (float), ``bool``, ``accessor`` (a TensorAccessor value),
``l1_ptr`` (a uint32 L1 address the C++ passes as ``volatile tt_l1_ptr uint32_t*``).
Thread kinds: ``noc`` (BRISC / NCRISC data movement), ``compute`` (TRISC), ``any``.

Parameter roles (:data:`PARAM_ROLES`, one entry per parameter name of the table): ``cb`` (a
circular-buffer index, checked against the CB count), ``dst`` (a DST slot of a compute call,
checked against the DST capacity), ``per_lane`` (an address, page id, NOC coordinate or value
that may differ between the cores one simulated thread stands for) and ``scalar`` (anything
else: counts, tile indices, flags, float bits).
"""

from __future__ import annotations

from dataclasses import dataclass


PARAM_ROLES: dict[str, str] = {
    **dict.fromkeys(("cb", "in0_cb", "in1_cb", "in_cb", "new_in_cb", "old_in_cb", "out_cb", "scaler_cb", "srca_cb",
                     "srcb_cb"), "cb"),
    **dict.fromkeys(("dst_condition", "dst_false", "dst_in", "dst_in0", "dst_in1", "dst_index", "dst_out",
                     "dst_true"), "dst"),
    **dict.fromkeys(("accessor", "addr", "dst_local_l1_addr", "dst_noc_addr", "dst_noc_addr_multicast", "incr",
                     "noc_x", "noc_x_end", "noc_x_start", "noc_y", "noc_y_end", "noc_y_start", "offset", "page_id",
                     "sem_addr", "src_local_l1_addr", "src_noc_addr", "value"), "per_lane"),
    **dict.fromkeys(("alpha_bits", "alpha_recip_bits", "arg_index", "beta_bits", "beta_reciprocal_bits", "block",
                     "ct_dim", "decimals", "exponent", "first", "in0_tile_index", "in1_tile_index", "in_tile_index",
                     "kt_dim", "l1_acc_en", "linked", "max_bits", "min_bits", "ntiles", "num_dests", "num_pages",
                     "out_tile_index", "rt_dim", "scalar_bits", "scale_bits", "scaler_tile_index", "semaphore_id",
                     "size", "slope_bits", "threshold_bits", "transpose", "value_bits"), "scalar"),
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
    """A compile-time parameter printed as a C++ template argument (``kind`` is ``bool``
    or the name of a C++ enum such as ``PoolType``), stored as an op property."""

    name: str
    kind: str
    default: bool | str
    choices: tuple[str, ...] = ()


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

    @property
    def cpp_function(self) -> str:
        return self.cpp_name or self.name

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)


_DATAFLOW_H = "api/dataflow/dataflow_api.h"
_P = Param


def _df(name, params=(), result=None, **kw):
    return ApiFunction(name, tuple(params), result, thread="noc", header=_DATAFLOW_H, **kw)


POOL_TYPE = TemplateParam("pool_type", "PoolType", "SUM", ("SUM", "AVG", "MAX"))
REDUCE_DIM = TemplateParam("reduce_dim", "ReduceDim", "REDUCE_ROW", ("REDUCE_ROW", "REDUCE_COL", "REDUCE_SCALAR"))

# Macros a header reads before it can be included: header -> ((macro, template parameter), ...).
# ``api/compute/reduce.h`` (0.69) uses REDUCE_OP / REDUCE_DIM as the default template arguments of
# reduce_init / reduce_tile, so a kernel including it defines them, as TT-Metal's softmax kernels
# do; the value is the kernel's first call with that template parameter.
HEADER_MACROS: dict[str, tuple[tuple[str, TemplateParam], ...]] = {
    "api/compute/reduce.h": (("REDUCE_OP", POOL_TYPE), ("REDUCE_DIM", REDUCE_DIM)),
}

DATAFLOW_API: tuple[ApiFunction, ...] = (
    # runtime arguments (also usable from compute kernels)
    ApiFunction("get_arg_val", (_P("arg_index"),), "u32", thread="any", cpp_type_template="uint32_t",
                doc="Per-core runtime argument."),
    ApiFunction("get_common_arg_val", (_P("arg_index"),), "u32", thread="any", cpp_type_template="uint32_t",
                doc="Runtime argument common to every core of the kernel."),
    # circular buffers (both thread kinds; compute gets them from api/compute/cb_api.h)
    ApiFunction("cb_reserve_back", (_P("cb"), _P("num_pages"))),
    ApiFunction("cb_push_back", (_P("cb"), _P("num_pages"))),
    ApiFunction("cb_wait_front", (_P("cb"), _P("num_pages"))),
    ApiFunction("cb_pop_front", (_P("cb"), _P("num_pages"))),
    _df("get_write_ptr", (_P("cb"),), "u32"),
    _df("get_read_ptr", (_P("cb"),), "u32"),
    _df("get_tile_size", (_P("cb"),), "u32"),
    # NOC transfers
    _df("noc_async_read", (_P("src_noc_addr", "u64"), _P("dst_local_l1_addr"), _P("size"))),
    _df("noc_async_write", (_P("src_local_l1_addr"), _P("dst_noc_addr", "u64"), _P("size"))),
    _df("noc_async_read_page", (_P("page_id"), _P("accessor", "accessor"), _P("dst_local_l1_addr"),
                                _P("offset", default=0))),
    _df("noc_async_write_page", (_P("page_id"), _P("accessor", "accessor"), _P("src_local_l1_addr"),
                                 _P("size", default=0), _P("offset", default=0))),
    _df("get_noc_addr", (_P("page_id"), _P("accessor", "accessor"), _P("offset", default=0)), "u64",
        doc="NOC address of a page of a TensorAccessor."),
    _df("get_noc_addr_xy", (_P("noc_x"), _P("noc_y"), _P("addr")), "u64", cpp_name="get_noc_addr",
        doc="NOC address of an L1 address on the core at NOC coordinates (x, y)."),
    _df("get_noc_multicast_addr", (_P("noc_x_start"), _P("noc_y_start"), _P("noc_x_end"), _P("noc_y_end"),
                                   _P("addr")), "u64"),
    _df("noc_async_write_multicast", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"), _P("size"),
                                      _P("num_dests"), _P("linked", "bool", False))),
    _df("noc_async_write_multicast_loopback_src", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                                   _P("size"), _P("num_dests"), _P("linked", "bool", False))),
    _df("noc_async_read_barrier"),
    _df("noc_async_write_barrier"),
    _df("noc_async_writes_flushed"),
    _df("noc_async_atomic_barrier"),
    # semaphores
    _df("get_semaphore", (_P("semaphore_id"),), "u32"),
    _df("noc_semaphore_set", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_wait", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_wait_min", (_P("sem_addr", "l1_ptr"), _P("value"))),
    _df("noc_semaphore_inc", (_P("addr", "u64"), _P("incr"))),
    _df("noc_semaphore_set_remote", (_P("src_local_l1_addr"), _P("dst_noc_addr", "u64"))),
    _df("noc_semaphore_set_multicast", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                        _P("num_dests"), _P("linked", "bool", False))),
    _df("noc_semaphore_set_multicast_loopback_src", (_P("src_local_l1_addr"), _P("dst_noc_addr_multicast", "u64"),
                                                     _P("num_dests"), _P("linked", "bool", False))),
    # where am I
    ApiFunction("get_absolute_logical_x", (), "u32", doc="This core's logical x."),
    ApiFunction("get_absolute_logical_y", (), "u32", doc="This core's logical y."),
)


def _cp(name, params=(), header="api/compute/compute_kernel_api.h", **kw):
    return ApiFunction(name, tuple(_P(p) if isinstance(p, str) else p for p in params), None,
                       thread="compute", header=header, **kw)


_ELTWISE_BINARY_H = "api/compute/eltwise_binary.h"
_BCAST_H = "api/compute/bcast.h"
_BINARY_SFPU_H = "api/compute/eltwise_binary_sfpu.h"
_MATMUL_H = "api/compute/matmul.h"

_FPU_TILE_ARGS = ("in0_cb", "in1_cb", "in0_tile_index", "in1_tile_index", "dst_index")

COMPUTE_API: list[ApiFunction] = [
    _cp("compute_kernel_hw_startup", ("in0_cb", "in1_cb", "out_cb"), "api/compute/compute_kernel_hw_startup.h",
        short_forms=((2, (0, 0, 1)),), doc="compute_kernel_hw_startup(icb, ocb) is (icb, icb, ocb)."),
    _cp("binary_op_init_common", ("in0_cb", "in1_cb", "out_cb"), _ELTWISE_BINARY_H),
    _cp("unary_op_init_common", ("in_cb", "out_cb"), "api/compute/eltwise_unary/eltwise_unary.h"),
    _cp("init_sfpu", ("in_cb", "out_cb"), "api/compute/eltwise_unary/eltwise_unary.h"),
    _cp("tile_regs_acquire", (), "api/compute/reg_api.h"),
    _cp("tile_regs_commit", (), "api/compute/reg_api.h"),
    _cp("tile_regs_wait", (), "api/compute/reg_api.h"),
    _cp("tile_regs_release", (), "api/compute/reg_api.h"),
    _cp("copy_tile_init", ("in_cb",), "api/compute/tile_move_copy.h"),
    _cp("copy_tile_to_dst_init_short_with_dt", ("old_in_cb", "new_in_cb"), "api/compute/tile_move_copy.h"),
    _cp("copy_tile", ("in_cb", "in_tile_index", "dst_index"), "api/compute/tile_move_copy.h"),
    _cp("copy_dest_values_init", (), "api/compute/copy_dest_values.h"),
    _cp("copy_dest_values", ("dst_in", "dst_out"), "api/compute/copy_dest_values.h"),
    _cp("reconfig_data_format", ("srca_cb", "srcb_cb"), "api/compute/reconfig_data_format.h"),
    _cp("reconfig_data_format_srca", ("srca_cb",), "api/compute/reconfig_data_format.h"),
    _cp("pack_reconfig_data_format", ("out_cb",), "api/compute/pack.h"),
    _cp("pack_reconfig_l1_acc", ("l1_acc_en",), "api/compute/pack.h",
        doc="1: later packs add DST to the tiles already at their L1 place; 0: they overwrite them."),
    _cp("pack_tile", ("dst_index", "out_cb", Param("out_tile_index", default=0)), "api/compute/pack.h",
        templates=(TemplateParam("out_of_order_output", "bool", False),)),
    _cp("pack_tile_block", ("dst_index", "out_cb", "ntiles"), "api/compute/pack.h",
        doc="DST[dst_index .. dst_index+ntiles) to the next ntiles pages of out_cb, as ntiles pack_tile calls."),
    # FPU element-wise (tiles from two CBs into DST)
    _cp("add_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _cp("sub_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _cp("mul_tiles_init", ("in0_cb", "in1_cb"), _ELTWISE_BINARY_H),
    _cp("add_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H),
    _cp("sub_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H),
    _cp("mul_tiles", _FPU_TILE_ARGS, _ELTWISE_BINARY_H),
    # FPU broadcasts: in1's first row (ROWS), first column (COLS) or [0,0] (SCALAR) broadcast
    _cp("add_bcast_rows_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("add_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("add_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("sub_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("sub_tiles_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("mul_bcast_rows_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("mul_bcast_cols_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("mul_tiles_bcast_scalar_init_short", ("in0_cb", "in1_cb"), _BCAST_H),
    _cp("add_tiles_bcast_rows", _FPU_TILE_ARGS, _BCAST_H),
    _cp("add_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H),
    _cp("add_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H),
    _cp("sub_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H),
    _cp("sub_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H),
    _cp("mul_tiles_bcast_rows", _FPU_TILE_ARGS, _BCAST_H),
    _cp("mul_tiles_bcast_cols", _FPU_TILE_ARGS, _BCAST_H),
    _cp("mul_tiles_bcast_scalar", _FPU_TILE_ARGS, _BCAST_H),
    # matmul
    _cp("mm_init", ("in0_cb", "in1_cb", "out_cb", Param("transpose", default=0)), _MATMUL_H),
    _cp("mm_init_short", ("in0_cb", "in1_cb", Param("transpose", default=0)), _MATMUL_H),
    _cp("matmul_tiles", _FPU_TILE_ARGS, _MATMUL_H),
    _cp("mm_block_init", ("in0_cb", "in1_cb", "out_cb", Param("transpose", default=0), Param("ct_dim", default=1),
                          Param("rt_dim", default=1), Param("kt_dim", default=1)), _MATMUL_H),
    _cp("mm_block_init_short", ("in0_cb", "in1_cb", Param("transpose", default=0), Param("ct_dim", default=1),
                                Param("rt_dim", default=1), Param("kt_dim", default=1)), _MATMUL_H),
    _cp("matmul_block", ("in0_cb", "in1_cb", "in0_tile_index", "in1_tile_index", "dst_index", "transpose",
                         "ct_dim", "rt_dim", "kt_dim"), _MATMUL_H,
        doc="rt_dim x ct_dim output tiles at dst_index.. from one K step: in0 rows strided by kt_dim."),
    # reduce (scaler tile from a second CB)
    _cp("reduce_init", ("in_cb", "scaler_cb", "out_cb"), "api/compute/reduce.h", templates=(POOL_TYPE, REDUCE_DIM)),
    _cp("reduce_tile", ("in_cb", "scaler_cb", "in_tile_index", "scaler_tile_index", "dst_index"),
        "api/compute/reduce.h", templates=(POOL_TYPE, REDUCE_DIM)),
    _cp("reduce_uninit", (), "api/compute/reduce.h"),
    # transpose
    _cp("transpose_wh_init", ("in_cb", "out_cb"), "api/compute/transpose_wh.h"),
    _cp("transpose_wh_init_short", ("in_cb",), "api/compute/transpose_wh.h"),
    _cp("transpose_wh_tile", ("in_cb", "in_tile_index", "dst_index"), "api/compute/transpose_wh.h"),
    _cp("transpose_wh_dest_init_short", (), "api/compute/transpose_wh_dest.h"),
    _cp("transpose_wh_dest", ("dst_index",), "api/compute/transpose_wh_dest.h",
        doc="Transpose the tile in DST slot dst_index in place."),
    # tilize / untilize (manage DST themselves)
    _cp("tilize_init", ("in_cb", "block", "out_cb"), "api/compute/tilize.h"),
    _cp("tilize_block", ("in_cb", "block", "out_cb"), "api/compute/tilize.h"),
    _cp("tilize_uninit", ("in_cb", "out_cb"), "api/compute/tilize.h"),
    _cp("untilize_init", ("in_cb",), "api/compute/untilize.h"),
    _cp("untilize_block", ("in_cb", "block", "out_cb"), "api/compute/untilize.h"),
    _cp("untilize_uninit", ("in_cb",), "api/compute/untilize.h"),
    # SFPU binary on DST slots
]

# SFPU binary ops on DST (in0, in1 -> out): name -> header
_SFPU_BINARY = {
    "add_binary_tile": _BINARY_SFPU_H, "sub_binary_tile": _BINARY_SFPU_H, "mul_binary_tile": _BINARY_SFPU_H,
    "div_binary_tile": _BINARY_SFPU_H, "rsub_binary_tile": _BINARY_SFPU_H, "power_binary_tile": _BINARY_SFPU_H,
    "eq_binary_tile": _BINARY_SFPU_H, "ne_binary_tile": _BINARY_SFPU_H, "lt_binary_tile": _BINARY_SFPU_H,
    "gt_binary_tile": _BINARY_SFPU_H, "le_binary_tile": _BINARY_SFPU_H, "ge_binary_tile": _BINARY_SFPU_H,
    "binary_max_tile": "api/compute/binary_max_min.h", "binary_min_tile": "api/compute/binary_max_min.h",
}
for _name, _hdr in _SFPU_BINARY.items():
    COMPUTE_API.append(_cp(f"{_name}_init", (), _hdr))
    COMPUTE_API.append(_cp(_name, ("dst_in0", "dst_in1", "dst_out"), _hdr))

COMPUTE_API.append(_cp("where_tile_init", (), "api/compute/eltwise_unary/where.h"))
COMPUTE_API.append(_cp("where_tile", ("dst_condition", "dst_true", "dst_false", "dst_out"),
                       "api/compute/eltwise_unary/where.h",
                       templates=(TemplateParam("data_format", "DataFormat", "Float16_b",
                                                ("Float16_b", "Float32", "Int32", "UInt32", "UInt16")),)))

# SFPU unary ops in place on one DST slot: name -> (header, extra params)
_U = "api/compute/eltwise_unary/"
_CKA = "api/compute/compute_kernel_api.h"
SFPU_UNARY: dict[str, tuple[str, tuple[Param, ...]]] = {
    "exp": (_U + "exp.h", ()),
    "exp2": (_CKA, ()),
    "log": (_CKA, ()),
    "sqrt": (_U + "sqrt.h", ()),
    "rsqrt": (_U + "rsqrt.h", ()),
    "recip": (_U + "recip.h", ()),
    "square": (_CKA, ()),
    "tanh": (_CKA, ()),
    "sigmoid": (_CKA, ()),
    "relu": (_U + "relu.h", ()),
    "gelu": (_U + "gelu.h", ()),
    "silu": (_CKA, ()),
    "sin": (_U + "trigonometry.h", ()),
    "cos": (_U + "trigonometry.h", ()),
    "abs": (_CKA, ()),
    "negative": (_U + "negative.h", ()),
    "floor": (_U + "rounding.h", ()),
    "ceil": (_U + "rounding.h", ()),
    "sign": (_CKA, ()),
    "fill": (_U + "fill.h", (Param("value", "f32"),)),
    "clamp": (_U + "clamp.h", (Param("min_bits"), Param("max_bits"))),
    "unary_max": (_CKA, (Param("value_bits"),)),
    "unary_min": (_CKA, (Param("value_bits"),)),
    "power": (_CKA, (Param("exponent"),)),
    "trunc": (_U + "rounding.h", ()),
    "gtz": (_U + "comp.h", ()),
    "gez": (_U + "comp.h", ()),
    "ltz": (_U + "comp.h", ()),
    "lez": (_U + "comp.h", ()),
    "eqz": (_U + "comp.h", ()),
    "nez": (_U + "comp.h", ()),
    "unary_gt": (_U + "comp.h", (Param("value_bits"),)),
    "unary_ge": (_U + "comp.h", (Param("value_bits"),)),
    "unary_lt": (_U + "comp.h", (Param("value_bits"),)),
    "unary_le": (_U + "comp.h", (Param("value_bits"),)),
    "unary_eq": (_U + "comp.h", (Param("value_bits"),)),
    "unary_ne": (_U + "comp.h", (Param("value_bits"),)),
    "cumsum": ("api/compute/cumsum.h", (Param("first"),)),
    "asin": (_U + "trigonometry.h", ()),
    "acos": (_U + "trigonometry.h", ()),
    "atan": (_U + "trigonometry.h", ()),
    "sinh": (_U + "trigonometry.h", ()),
    "cosh": (_U + "trigonometry.h", ()),
    "asinh": (_U + "trigonometry.h", ()),
    "acosh": (_U + "trigonometry.h", ()),
    "atanh": (_U + "trigonometry.h", ()),
    "tan": (_U + "trigonometry.h", ()),
    "softsign": (_U + "activations.h", ()),
    "hardsigmoid": (_U + "activations.h", ()),
    "celu": (_U + "activations.h", (Param("alpha_bits"), Param("alpha_recip_bits"))),
    "elu": (_U + "elu.h", (Param("alpha_bits"),)),
    "selu": (_U + "selu.h", (Param("scale_bits"), Param("alpha_bits"))),
    "leaky_relu": (_U + "relu.h", (Param("slope_bits"),)),
    "prelu": (_U + "prelu.h", (Param("alpha_bits"),)),
    "softplus": (_U + "softplus.h", (Param("beta_bits"), Param("beta_reciprocal_bits"), Param("threshold_bits"))),
    "threshold": (_U + "threshold.h", (Param("threshold_bits"), Param("value_bits"))),
    "expm1": (_CKA, ()),
    "signbit": (_CKA, ()),
    "log1p": (_U + "log1p.h", ()),
    "frac": (_U + "rounding.h", ()),
    "round": (_U + "rounding.h", (Param("decimals", "i32"),)),
}
# functions without a *_tile_init of their own in 0.69 (they share the rounding / scalar inits)
_INIT_ALIASES = {"floor": "rounding_op_tile_init", "ceil": "rounding_op_tile_init", "trunc": "rounding_op_tile_init",
                 "frac": "rounding_op_tile_init", "round": "rounding_op_tile_init"}


def sfpu_init_name(name: str) -> str:
    """The init call of the SFPU unary ``<name>_tile`` (the rounding ops share ``rounding_op_tile_init``)."""
    return _INIT_ALIASES.get(name, f"{name}_tile_init")


for _name, (_hdr, _extra) in SFPU_UNARY.items():
    _init = sfpu_init_name(_name)
    if not any(f.name == _init for f in COMPUTE_API):
        COMPUTE_API.append(_cp(_init, (), _hdr))
    COMPUTE_API.append(_cp(f"{_name}_tile", (Param("dst_index"),) + _extra, _hdr))

# scalar binops on one DST slot (param is the float's bits)
for _name in ("add_unary_tile", "sub_unary_tile", "mul_unary_tile", "div_unary_tile", "rsub_unary_tile"):
    COMPUTE_API.append(_cp(_name, ("dst_index", "scalar_bits"), _U + "binop_with_scalar.h"))
COMPUTE_API.append(_cp("binop_with_scalar_tile_init", (), _U + "binop_with_scalar.h"))

API: dict[str, ApiFunction] = {f.name: f for f in (*DATAFLOW_API, *COMPUTE_API)}
# The calls that move DST tiles to a CB (DST index first, output CB second).
PACK_CALLS = frozenset({"pack_tile", "pack_tile_block"})

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


__all__ = ["Param", "TemplateParam", "ApiFunction", "API", "SFPU_UNARY", "SPECIAL_OPS", "api_function",
           "POOL_TYPE", "REDUCE_DIM", "HEADER_MACROS"]
