// RUN: rasterization-tt
// Input: a 4 x 4 block grid whose schedule asks for the Z order; output: the order chosen and the raster it is walked in.

builtin.module {
  func.func @gemm_kernel(%A: memref<128x128xbf16>) attributes {tile.params = ["A"], tt.schedule = #tt.schedule<policy = "contiguous", order = "z_order">, tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64]} {
    func.return
  }
}

// CHECK:      func.func @gemm_kernel
// CHECK-SAME: tt.schedule = #tt.schedule<policy = "contiguous", order = "z_order">
// CHECK-SAME: tt.raster = #tt.raster<order = "z_order", k = 0 : i64, rows = 4 : i64, cols = 4 : i64>
