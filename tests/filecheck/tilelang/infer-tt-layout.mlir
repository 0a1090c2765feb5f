// RUN: infer-tt-layout
// Input: the IR the pass runs on (as in tests/passes, test_stage_a.test_infer_tt_layout_defaults_to_dram_interleaved); output: FileChecked below.

builtin.module {
  func.func @gemm_kernel(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [256 : i64, 256 : i64], B = [256 : i64, 256 : i64], C = [256 : i64, 256 : i64]>} {
    tile.kernel attributes {grid = array<i32: 4, 4>} {
    ^bb0(%bx: i32, %by: i32):
      %A_s = tile.alloc {name = "A_s", scope = "shared"} : memref<64x32xbf16, "shared">
      %B_s = tile.alloc {name = "B_s", scope = "shared"} : memref<32x64xbf16, "shared">
      %C_l = tile.alloc {name = "C_l", scope = "fragment"} : memref<64x64xf32, "fragment">
      tile.fill %C_l {value = 0.000000e+00 : f32} : memref<64x64xf32, "fragment">
      %0 = arith.constant 0 : i32
      %1 = arith.constant 8 : i32
      tile.for %0 to %1 attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
      ^bb0(%k: i32):
        %2 = arith.constant 64 : i32
        %3 = arith.muli %by, %2 : i32
        %4 = arith.constant 32 : i32
        %5 = arith.muli %k, %4 : i32
        tile.copy %A, %A_s[%3, %5] : memref<256x256xbf16>, memref<64x32xbf16, "shared">
        %6 = arith.constant 32 : i32
        %7 = arith.muli %k, %6 : i32
        %8 = arith.constant 64 : i32
        %9 = arith.muli %bx, %8 : i32
        tile.copy %B, %B_s[%7, %9] : memref<256x256xbf16>, memref<32x64xbf16, "shared">
        tile.gemm %A_s, %B_s, %C_l {transpose_a = false, transpose_b = false, clear_accum = false} : memref<64x32xbf16, "shared">, memref<32x64xbf16, "shared">, memref<64x64xf32, "fragment">
      }
      %10 = arith.constant 64 : i32
      %11 = arith.muli %by, %10 : i32
      %12 = arith.constant 64 : i32
      %13 = arith.muli %bx, %12 : i32
      tile.copy %C_l, %C[%11, %13] : memref<64x64xf32, "fragment">, memref<256x256xbf16>
    }
    func.return
  }
}

// CHECK: tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>
