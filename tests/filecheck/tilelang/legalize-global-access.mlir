// RUN: legalize-global-access
// Input: the IR the pass runs on (as in tests/passes, test_phase1.test_global_accesses_become_block_copies); output: FileChecked below.

builtin.module {
  func.func @tile_add(%A: memref<64x96xbf16>, %B: memref<64x96xbf16>, %C: memref<64x96xbf16>) attributes {tile.params = ["A", "B", "C"]} {
    tile.kernel attributes {grid = array<i32: 3, 2>} {
    ^bb0(%bx: i32, %by: i32):
      tile.parallel attributes {extents = array<i32: 32, 32>} {
      ^bb0(%i: i32, %j: i32):
        %0 = arith.constant 32 : i32
        %1 = arith.muli %by, %0 : i32
        %2 = arith.addi %1, %i : i32
        %3 = arith.constant 32 : i32
        %4 = arith.muli %bx, %3 : i32
        %5 = arith.addi %4, %j : i32
        %6 = tile.load %A[%2, %5] : memref<64x96xbf16>
        %7 = arith.constant 32 : i32
        %8 = arith.muli %by, %7 : i32
        %9 = arith.addi %8, %i : i32
        %10 = arith.constant 32 : i32
        %11 = arith.muli %bx, %10 : i32
        %12 = arith.addi %11, %j : i32
        %13 = tile.load %B[%9, %12] : memref<64x96xbf16>
        %14 = arith.addf %6, %13 : f32
        %15 = arith.constant 32 : i32
        %16 = arith.muli %by, %15 : i32
        %17 = arith.addi %16, %i : i32
        %18 = arith.constant 32 : i32
        %19 = arith.muli %bx, %18 : i32
        %20 = arith.addi %19, %j : i32
        tile.store %14, %C[%17, %20] : memref<64x96xbf16>
      }
    }
    func.return
  }
}

// CHECK:      %A_blk = tile.alloc {name = "A_blk", scope = "shared"} : memref<32x32xbf16, "shared">
// CHECK-NEXT: %B_blk = tile.alloc {name = "B_blk", scope = "shared"} : memref<32x32xbf16, "shared">
// CHECK-NEXT: %C_out = tile.alloc {name = "C_out", scope = "fragment"} : memref<32x32xbf16, "fragment">
// CHECK:      tile.copy %A, %A_blk[
// CHECK:      tile.copy %B, %B_blk[
// CHECK:      tile.parallel attributes {extents = array<i32: 32, 32>} {
// CHECK-NEXT: ^bb0(%i: i32, %j: i32):
// CHECK-NEXT:   %[[A:.*]] = tile.load %A_blk[%i, %j]
// CHECK-NEXT:   %[[B:.*]] = tile.load %B_blk[%i, %j]
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
// CHECK-NEXT:   tile.store %[[S]], %C_out[%i, %j]
// CHECK-NEXT: }
// CHECK:      tile.copy %C_out, %C[
