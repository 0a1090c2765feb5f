"""Stage B: the work partition (global / local_shard) and the persistent per-core loop."""

import pytest
import tilelang_kernels as kernels
from tilelang_pass_helpers import through
from tilelang_helpers import filecheck

import tilefold.language as T
from tilefold.errors import CompileError

L1_C = {"memory": "L1", "layout": "sharded", "nd_shard": {"grid": [2, 2]}}


def test_global_partition_dram_interleaved():
    # 16 blocks of 2x2 tiles on an 8x8 grid: one block per core on the first 16 cores, row by row
    filecheck(through(kernels.gemm(), "layout-aware-work-partition"), """
CHECK: tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64]
CHECK-SAME: tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [4 : i64, 4 : i64]
CHECK-SAME: tt.core_ranges = {{\\[\\[}}0 : i64, 0 : i64, 7 : i64, 1 : i64{{\\]\\]}}
CHECK-SAME: tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">]
CHECK-SAME: tt.core_runtime_args = {{\\[\\[}}0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64],
CHECK-SAME: [7 : i64, 1 : i64, 15 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64]]
CHECK-SAME: tt.k_elems = 256 : i64
""")


def test_global_partition_splits_uneven_work():
    # 13x13 one-tile blocks = 169 blocks on 64 cores: 41 cores take 3, 23 take 2
    @T.prim_func
    def k(A: T.Tensor((416, 416), "bfloat16"), C: T.Tensor((416, 416), "bfloat16")):
        with T.Kernel(13, 13) as (bx, by):
            a = T.alloc_shared((32, 32), "bfloat16")
            T.copy(A[by * 32, bx * 32], a)
            T.copy(a, C[by * 32, bx * 32])

    filecheck(through(k, "layout-aware-work-partition"), """
CHECK: tt.core_ranges = {{\\[\\[}}0 : i64, 0 : i64, 7 : i64, 7 : i64{{\\]\\]}}
CHECK-SAME: tt.core_runtime_args = {{\\[\\[}}0 : i64, 0 : i64, 0 : i64, 3 : i64, 13 : i64, 1 : i64, 13 : i64], [1 : i64, 0 : i64, 3 : i64, 3 : i64,
CHECK-SAME: [0 : i64, 5 : i64, 120 : i64, 3 : i64, 13 : i64, 1 : i64, 13 : i64], [1 : i64, 5 : i64, 123 : i64, 2 : i64,
CHECK-SAME: [7 : i64, 7 : i64, 167 : i64, 2 : i64, 13 : i64, 1 : i64, 13 : i64]]
""")


def test_local_shard_partition():
    """L1-sharded output: the cores are the shard grid and carry their shard coordinates."""
    filecheck(through(kernels.sharded_add(layout_c=L1_C), "layout-aware-work-partition"), """
CHECK: tt.partition_mode = "local_shard", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64]
CHECK-SAME: tt.shard_grid = [2 : i64, 2 : i64], tt.local_shape_tiles = [2 : i64, 2 : i64]
CHECK-SAME: tt.core_ranges = {{\\[\\[}}0 : i64, 0 : i64, 1 : i64, 1 : i64{{\\]\\]}}
CHECK-SAME: tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">, #tt.runtime_arg<name = "Sm">, #tt.runtime_arg<name = "Sn">, #tt.runtime_arg<name = "Gy">, #tt.runtime_arg<name = "Gx">, #tt.runtime_arg<name = "sy">, #tt.runtime_arg<name = "sx">]
CHECK-SAME: tt.core_runtime_args = {{\\[\\[}}0 : i64, 0 : i64, 0 : i64, 4 : i64, 4 : i64, 1 : i64, 4 : i64, 2 : i64, 2 : i64, 2 : i64, 2 : i64, 0 : i64, 0 : i64],
CHECK-SAME: [1 : i64, 0 : i64, 0 : i64, 4 : i64, 4 : i64, 1 : i64, 4 : i64, 2 : i64, 2 : i64, 2 : i64, 2 : i64, 0 : i64, 1 : i64],
CHECK-SAME: [0 : i64, 1 : i64, 0 : i64, 4 : i64, 4 : i64, 1 : i64, 4 : i64, 2 : i64, 2 : i64, 2 : i64, 2 : i64, 1 : i64, 0 : i64],
CHECK-SAME: [1 : i64, 1 : i64, 0 : i64, 4 : i64, 4 : i64, 1 : i64, 4 : i64, 2 : i64, 2 : i64, 2 : i64, 2 : i64, 1 : i64, 1 : i64]]
""")


def test_l1_shards_must_be_whole_blocks():
    layout = {"memory": "L1", "layout": "sharded", "nd_shard": {"shard_shape_elems": [32, 256]}}
    with pytest.raises(CompileError) as info:
        through(kernels.sharded_add(layout_c=layout), "layout-aware-work-partition")
    assert "are not whole 2x2-tile output blocks" in str(info.value)


def test_persistent_loop_global():
    filecheck(through(kernels.gemm(), "grid-to-core-grid"), """
CHECK:      %A_s = tile.alloc
CHECK:      %start_id = tile.runtime_arg "start_id"
CHECK-NEXT: %count = tile.runtime_arg "count"
CHECK-NEXT: %Nt = tile.runtime_arg "Nt"
CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0 : i32
CHECK-NEXT: tile.for %[[ZERO]] to %count attributes {step = 1 : i32, kind = "persistent"} {
CHECK-NEXT: ^bb0(%i: i32):
CHECK-NEXT:   %tid = arith.addi %start_id, %i : i32
CHECK-NEXT:   %m = arith.divui %tid, %Nt : i32
CHECK-NEXT:   %n = arith.remui %tid, %Nt : i32
CHECK-NOT:    tile.kernel
CHECK:        arith.muli %m,
CHECK:        tile.copy %A, %A_s[
""")


def test_persistent_loop_local_shard():
    filecheck(through(kernels.sharded_add(layout_c=L1_C), "grid-to-core-grid"), """
CHECK:      %Sm = tile.runtime_arg "Sm"
CHECK-NEXT: %Sn = tile.runtime_arg "Sn"
CHECK-NEXT: %sy = tile.runtime_arg "sy"
CHECK-NEXT: %sx = tile.runtime_arg "sx"
CHECK:      %tid = arith.addi %start_id, %i : i32
CHECK-NEXT: %[[ROW0:.*]] = arith.muli %sy, %Sm : i32
CHECK-NEXT: %[[ROW:.*]] = arith.divui %tid, %Sn : i32
CHECK-NEXT: %m = arith.addi %[[ROW0]], %[[ROW]] : i32
CHECK-NEXT: %[[COL0:.*]] = arith.muli %sx, %Sn : i32
CHECK-NEXT: %[[COL:.*]] = arith.remui %tid, %Sn : i32
CHECK-NEXT: %n = arith.addi %[[COL0]], %[[COL]] : i32
""")
