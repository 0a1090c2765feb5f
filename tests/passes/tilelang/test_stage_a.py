"""Stage A (metadata) and its prelude: defaults, padding, tt.buffer, tt.cb, TensorAccessor metadata."""

import pytest
import tilelang_kernels as kernels
from tilelang_pass_helpers import through
from tilelang_helpers import filecheck

from tilefold.errors import CompileError, L1OverflowError

import tilefold.language as T


def test_apply_tt_defaults():
    filecheck(through(kernels.gemm(), "apply-tt-defaults"), """
CHECK: tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">
CHECK-SAME: tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>
""")


def test_user_schedule_fields_are_checked():
    prim = T.annotate_tt_schedule(kernels.gemm(), {"order": "spiral"})
    with pytest.raises(CompileError) as info:
        through(prim, "apply-tt-defaults")
    assert "order 'spiral' is not one of row_major, match_shard" in str(info.value)
    assert str(info.value).startswith(__file__)


def test_tile_pad_rounds_to_tiles_and_blocks():
    # 200x168x100 in 64x64x32 blocks: M -> 4 blocks of 64, N -> 3 of 64, K -> 4 of 32
    filecheck(through(kernels.gemm(200, 168, 100), "tile-pad-tt"), """
CHECK: tt.padded_shapes = #tt.shapes<A = [256 : i64, 128 : i64], B = [128 : i64, 192 : i64], C = [256 : i64, 192 : i64]>
""")


def test_infer_tt_layout_defaults_to_dram_interleaved():
    filecheck(through(kernels.gemm(), "infer-tt-layout"), """
CHECK: tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>
""")


def test_infer_tt_layout_nd_shard_projection():
    """Mixed axes: B and H fold into rows with M, N stays columns."""
    @T.prim_func
    def k(A: T.Tensor((2, 8, 64, 128), "bfloat16"), C: T.Tensor((2, 8, 64, 128), "bfloat16")):
        with T.Kernel(4, 16) as (bx, by):
            a = T.alloc_shared((64, 32), "bfloat16")
            T.copy(A[by // 8, by % 8, 0, bx * 32], a)
            T.copy(a, C[by // 8, by % 8, 0, bx * 32])

    prim = T.annotate_tt_layout(k, {"A": {"memory": "DRAM", "layout": "sharded",
                                          "nd_shard": {"axes": ["B", "H", "M", "N"], "grid": [2, 4, 1, 2]}}})
    filecheck(through(prim, "infer-tt-layout"), """
CHECK: tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "sharded",
CHECK-SAME: nd_shard = #tt.nd_shard<axes = ["B", "H", "M", "N"], grid = [2 : i64, 4 : i64, 1 : i64, 2 : i64], shard_shape_elems = [1 : i64, 2 : i64, 64 : i64, 64 : i64], order = "row_major", align_tiles = true, projected_grid = [8 : i64, 2 : i64], projected_shard_tiles = [4 : i64, 2 : i64]>
""")


def test_halo_is_rejected():
    prim = T.annotate_tt_layout(kernels.gemm(), {"A": {"layout": "sharded", "nd_shard": {"grid": [2, 2],
                                                                                       "halo": [1, 1]}}})
    with pytest.raises(CompileError) as info:
        through(prim, "infer-tt-layout")
    assert "halo unsupported" in str(info.value)
    assert str(info.value).startswith(__file__)


def test_l1_shard_must_be_tile_aligned():
    prim = T.annotate_tt_layout(kernels.gemm(), {"C": {"memory": "L1", "layout": "sharded",
                                                       "nd_shard": {"shard_shape_elems": [48, 64]}}})
    with pytest.raises(CompileError) as info:
        through(prim, "infer-tt-layout")
    assert "is not tile-aligned" in str(info.value)


def test_l1_overflow():
    big = kernels.gemm(M=2048, N=2048, K=2048, bm=256, bn=256, bk=64)
    prim = T.annotate_tt_layout(big, {"A": {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [1, 1]}}})
    with pytest.raises(L1OverflowError) as info:
        through(prim, "infer-tt-layout")
    assert "need 8388608 B but a core of n150 has" in str(info.value)
    assert str(info.value).startswith(__file__)


def test_propagate_tt_layout_cb_geometry():
    # the A block is 2x1 tiles copied in a 3-stage pipelined loop; C is double-buffered
    filecheck(through(kernels.gemm(), "propagate-tt-layout"), """
CHECK: tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64]>
CHECK-SAME: tt.cb.B_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64]>
CHECK-SAME: tt.cb.C_l = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64]>
""")


def test_attach_tensor_accessor():
    prim = T.annotate_tt_layout(kernels.gemm(), {"B": {"layout": "sharded", "nd_shard": {"grid": [2, 2]}}})
    filecheck(through(prim, "attach-tensor-accessor"), """
CHECK: tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>
CHECK-SAME: tt.tensor_accessor.B = #tt.tensor_accessor<kind = "sharded", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = {{[0-9]+}} : i64>
""")


@pytest.mark.parametrize("layout, message", [
    ({"A": {"memroy": "L1"}}, "annotate_tt_layout for A: unknown field 'memroy'; use memory, layout, tile_shape, "
                              "dtype, nd_shard"),
    ({"A": {"layout": "sharded", "nd_shard": {"gird": [2, 2]}}}, "unknown nd_shard field 'gird'"),
    ({"A": {"layout": "sharded", "nd_shard": [2, 2]}}, "layout='sharded' needs nd_shard="),
])
def test_an_annotation_field_the_layout_record_has_not_is_an_error_at_the_annotation(layout, message):
    prim = T.annotate_tt_layout(kernels.gemm(), layout)
    with pytest.raises(CompileError) as info:
        prim.module()
    assert message in str(info.value)
    assert str(info.value).startswith(__file__)


def test_an_unknown_schedule_field_is_an_error_at_the_annotation():
    prim = T.annotate_tt_schedule(kernels.gemm(), {"order": "row_major", "polcy": "contiguous"})
    with pytest.raises(CompileError) as info:
        prim.module()
    assert "annotate_tt_schedule: unknown field 'polcy'; use policy and order" in str(info.value)
    assert str(info.value).startswith(__file__)
