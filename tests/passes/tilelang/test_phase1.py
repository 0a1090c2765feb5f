"""tensorize_tt and legalize_global_access: TileLang element notation → block copies and gemm."""

import tilelang_kernels as kernels
from tilelang_pass_helpers import through
from tilelang_helpers import filecheck


def test_tensorize_tile_notation_matmul_notation():
    filecheck(through(kernels.tile_notation_matmul, "tensorize-tt"), """
CHECK:      ^bb0(%bx: i32, %by: i32):
CHECK:      %A_tile = tile.alloc {name = "A_tile", scope = "shared"} : memref<32x32xf16, "shared">
CHECK-NEXT: %B_tile = tile.alloc {name = "B_tile", scope = "shared"} : memref<32x32xf16, "shared">
CHECK-NEXT: %C_acc = tile.alloc {name = "C_acc", scope = "fragment"} : memref<32x32xf32, "fragment">
CHECK-NEXT: tile.fill %C_acc {value = 0.000000e+00 : f32}
CHECK-NEXT: tile.for %{{.*}} to %{{.*}} attributes {step = 1 : i32, kind = "serial"} {
CHECK-NEXT: ^bb0(%kt: i32):
CHECK:        %[[ROW:.*]] = arith.muli %bx, %{{.*}} : i32
CHECK:        %[[COL:.*]] = arith.muli %by, %{{.*}} : i32
CHECK:        %[[K:.*]] = arith.muli %kt, %{{.*}} : i32
CHECK-NEXT:   tile.copy %A, %A_tile[%[[ROW]], %[[K]]]
CHECK-NEXT:   tile.copy %B, %B_tile[%[[K]], %[[COL]]]
CHECK-NEXT:   tile.gemm %A_tile, %B_tile, %C_acc
CHECK-NEXT: }
CHECK-NOT:  tile.parallel
CHECK:      tile.copy %C_acc, %C[
""")


def test_non_matching_loops_are_left_alone():
    text = through(kernels.gemm(), "tensorize-tt")
    filecheck(text, """
CHECK:     tile.for
CHECK:     tile.gemm %A_s, %B_s, %C_l
CHECK-NOT: tile.alloc {name = "{{.*}}_tile"
""")


def test_global_accesses_become_block_copies():
    filecheck(through(kernels.tile_add, "legalize-global-access"), """
CHECK:      %A_blk = tile.alloc {name = "A_blk", scope = "shared"} : memref<32x32xbf16, "shared">
CHECK-NEXT: %B_blk = tile.alloc {name = "B_blk", scope = "shared"} : memref<32x32xbf16, "shared">
CHECK-NEXT: %C_out = tile.alloc {name = "C_out", scope = "fragment"} : memref<32x32xbf16, "fragment">
CHECK:      tile.copy %A, %A_blk[
CHECK:      tile.copy %B, %B_blk[
CHECK:      tile.parallel attributes {extents = array<i32: 32, 32>} {
CHECK-NEXT: ^bb0(%i: i32, %j: i32):
CHECK-NEXT:   %[[A:.*]] = tile.load %A_blk[%i, %j]
CHECK-NEXT:   %[[B:.*]] = tile.load %B_blk[%i, %j]
CHECK-NEXT:   %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
CHECK-NEXT:   tile.store %[[S]], %C_out[%i, %j]
CHECK-NEXT: }
CHECK:      tile.copy %C_out, %C[
""")
