// RUN: tensorize-tt
// Input: the IR the pass runs on (as in tests/passes, test_phase1.test_tensorize_tile_notation_matmul_notation); output: FileChecked below.

builtin.module {
  func.func @tile_notation_matmul(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.params = ["A", "B", "C"]} {
    tile.kernel attributes {grid = array<i32: 8, 8>} {
    ^bb0(%bx: i32, %by: i32):
      %0 = arith.constant 0 : i32
      %1 = arith.constant 8 : i32
      tile.for %0 to %1 attributes {step = 1 : i32, kind = "serial"} {
      ^bb0(%kt: i32):
        tile.parallel attributes {extents = array<i32: 32, 32>} {
        ^bb0(%i: i32, %j: i32):
          %2 = arith.constant 32 : i32
          %3 = arith.muli %bx, %2 : i32
          %4 = arith.addi %3, %i : i32
          %5 = arith.constant 32 : i32
          %6 = arith.muli %by, %5 : i32
          %7 = arith.addi %6, %j : i32
          %8 = tile.load %C[%4, %7] : memref<256x256xf16>
          %9 = arith.constant 32 : i32
          %10 = arith.muli %bx, %9 : i32
          %11 = arith.addi %10, %i : i32
          %12 = arith.constant 32 : i32
          %13 = arith.muli %kt, %12 : i32
          %14 = arith.addi %13, %j : i32
          %15 = tile.load %A[%11, %14] : memref<256x256xf16>
          %16 = arith.constant 32 : i32
          %17 = arith.muli %kt, %16 : i32
          %18 = arith.addi %17, %i : i32
          %19 = arith.constant 32 : i32
          %20 = arith.muli %by, %19 : i32
          %21 = arith.addi %20, %j : i32
          %22 = tile.load %B[%18, %21] : memref<256x256xf16>
          %23 = arith.mulf %15, %22 : f32
          %24 = arith.addf %8, %23 : f32
          %25 = arith.constant 32 : i32
          %26 = arith.muli %bx, %25 : i32
          %27 = arith.addi %26, %i : i32
          %28 = arith.constant 32 : i32
          %29 = arith.muli %by, %28 : i32
          %30 = arith.addi %29, %j : i32
          tile.store %24, %C[%27, %30] : memref<256x256xf16>
        }
      }
    }
    func.return
  }
}

// CHECK:      ^bb0(%bx: i32, %by: i32):
// CHECK:      %A_tile = tile.alloc {name = "A_tile", scope = "shared"} : memref<32x32xf16, "shared">
// CHECK-NEXT: %B_tile = tile.alloc {name = "B_tile", scope = "shared"} : memref<32x32xf16, "shared">
// CHECK-NEXT: %C_acc = tile.alloc {name = "C_acc", scope = "fragment"} : memref<32x32xf32, "fragment">
// CHECK-NEXT: tile.fill %C_acc {value = 0.000000e+00 : f32}
// CHECK-NEXT: tile.for %{{.*}} to %{{.*}} attributes {step = 1 : i32, kind = "serial"} {
// CHECK-NEXT: ^bb0(%kt: i32):
// CHECK:        %[[ROW:.*]] = arith.muli %bx, %{{.*}} : i32
// CHECK:        %[[COL:.*]] = arith.muli %by, %{{.*}} : i32
// CHECK:        %[[K:.*]] = arith.muli %kt, %{{.*}} : i32
// CHECK-NEXT:   tile.copy %A, %A_tile[%[[ROW]], %[[K]]]
// CHECK-NEXT:   tile.copy %B, %B_tile[%[[K]], %[[COL]]]
// CHECK-NEXT:   tile.gemm %A_tile, %B_tile, %C_acc
// CHECK-NEXT: }
// CHECK-NOT:  tile.parallel
// CHECK:      tile.copy %C_acc, %C[
