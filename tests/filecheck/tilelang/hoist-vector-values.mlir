// RUN: hoist-vector-values
// Input: a row standardization with its per-row mean and scale written inside the loops over the whole block; output: FileChecked below.

builtin.module {
  func.func @standardize(%X: memref<64x128xbf16>, %Y: memref<64x128xbf16>) attributes {tile.params = ["X", "Y"]} {
    tile.kernel attributes {grid = array<i32: 2>} {
    ^bb0(%bx: i32):
      %x = tile.alloc {name = "x", scope = "shared"} : memref<32x128xbf16, "shared">
      %total = tile.alloc {name = "total", scope = "fragment"} : memref<32xf32, "fragment">
      %xm = tile.alloc {name = "xm", scope = "fragment"} : memref<32x128xf32, "fragment">
      %sq = tile.alloc {name = "sq", scope = "fragment"} : memref<32x128xf32, "fragment">
      %ss = tile.alloc {name = "ss", scope = "fragment"} : memref<32xf32, "fragment">
      %y = tile.alloc {name = "y", scope = "fragment"} : memref<32x128xbf16, "fragment">
      %0 = arith.constant 32 : i32
      %1 = arith.muli %bx, %0 : i32
      %2 = arith.constant 0 : i32
      tile.copy %X, %x[%1, %2] : memref<64x128xbf16>, memref<32x128xbf16, "shared">
      tile.reduce %x, %total {kind = "sum", dim = 1 : i32, clear = true} : memref<32x128xbf16, "shared">, memref<32xf32, "fragment">
      tile.parallel attributes {extents = array<i32: 32, 128>} {
      ^bb0(%i: i32, %j: i32):
        %3 = tile.load %x[%i, %j] : memref<32x128xbf16, "shared">
        %4 = tile.load %total[%i] : memref<32xf32, "fragment">
        %5 = arith.constant 7.812500e-03 : f32
        %6 = arith.mulf %4, %5 : f32
        %7 = arith.subf %3, %6 : f32
        tile.store %7, %xm[%i, %j] : memref<32x128xf32, "fragment">
      }
      tile.parallel attributes {extents = array<i32: 32, 128>} {
      ^bb0(%i_1: i32, %j_1: i32):
        %8 = tile.load %xm[%i_1, %j_1] : memref<32x128xf32, "fragment">
        %9 = tile.load %xm[%i_1, %j_1] : memref<32x128xf32, "fragment">
        %10 = arith.mulf %8, %9 : f32
        tile.store %10, %sq[%i_1, %j_1] : memref<32x128xf32, "fragment">
      }
      tile.reduce %sq, %ss {kind = "sum", dim = 1 : i32, clear = true} : memref<32x128xf32, "fragment">, memref<32xf32, "fragment">
      tile.parallel attributes {extents = array<i32: 32, 128>} {
      ^bb0(%i_2: i32, %j_2: i32):
        %11 = tile.load %xm[%i_2, %j_2] : memref<32x128xf32, "fragment">
        %12 = tile.load %ss[%i_2] : memref<32xf32, "fragment">
        %13 = arith.constant 7.812500e-03 : f32
        %14 = arith.mulf %12, %13 : f32
        %15 = arith.constant 1.000000e-05 : f32
        %16 = arith.addf %14, %15 : f32
        %17 = tile.math "rsqrt"(%16)
        %18 = arith.mulf %11, %17 : f32
        tile.store %18, %y[%i_2, %j_2] : memref<32x128xbf16, "fragment">
      }
      %19 = arith.constant 32 : i32
      %20 = arith.muli %bx, %19 : i32
      %21 = arith.constant 0 : i32
      tile.copy %y, %Y[%20, %21] : memref<32x128xbf16, "fragment">, memref<64x128xbf16>
    }
    func.return
  }
}

// The mean total[i] * (1 / 128) is computed once per row into total_v, before the body that uses it
// CHECK:      %total_v = tile.alloc {name = "total_v", scope = "fragment"} : memref<32xf32, "fragment">
// CHECK:      %ss_v = tile.alloc {name = "ss_v", scope = "fragment"} : memref<32xf32, "fragment">
// CHECK:      tile.reduce %x, %total
// CHECK-NEXT: tile.parallel attributes {extents = array<i32: 32>} {
// CHECK-NEXT: ^bb0(%i: i32):
// CHECK-NEXT:   %{{.*}} = tile.load %total[%i] : memref<32xf32, "fragment">
// CHECK-NEXT:   %{{.*}} = arith.constant 7.812500e-03 : f32
// CHECK-NEXT:   %{{.*}} = arith.mulf
// CHECK-NEXT:   tile.store %{{.*}}, %total_v[%i] : memref<32xf32, "fragment">
// CHECK-NEXT: }
// The block body only subtracts the broadcast vector
// CHECK-NEXT: tile.parallel attributes {extents = array<i32: 32, 128>} {
// CHECK-NEXT: ^bb0(%i{{.*}}: i32, %j{{.*}}: i32):
// CHECK-NEXT:   %[[X:.*]] = tile.load %x[%i{{.*}}, %j{{.*}}]
// CHECK-NEXT:   %[[M:.*]] = tile.load %total_v[%i{{.*}}]
// CHECK-NEXT:   %{{.*}} = arith.subf %[[X]], %[[M]] : f32
// CHECK-NEXT:   tile.store
// CHECK-NEXT: }
// The scale rsqrt(ss[i] / 128 + eps) is computed once per row into ss_v after the second reduction
// CHECK:      tile.reduce %sq, %ss
// CHECK-NEXT: tile.parallel attributes {extents = array<i32: 32>} {
// CHECK:        tile.math "rsqrt"
// CHECK-NEXT:   tile.store %{{.*}}, %ss_v[%i{{.*}}] : memref<32xf32, "fragment">
// CHECK-NEXT: }
// CHECK-NEXT: tile.parallel attributes {extents = array<i32: 32, 128>} {
// CHECK-NEXT: ^bb0(%i{{.*}}: i32, %j{{.*}}: i32):
// CHECK-NEXT:   %[[XM:.*]] = tile.load %xm[%i{{.*}}, %j{{.*}}]
// CHECK-NEXT:   %[[S:.*]] = tile.load %ss_v[%i{{.*}}]
// CHECK-NEXT:   %{{.*}} = arith.mulf %[[XM]], %[[S]] : f32
// CHECK-NEXT:   tile.store
// CHECK-NEXT: }
