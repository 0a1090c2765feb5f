// RUN: lower-shared-to-cb
// Input: the IR the pass runs on (as in tests/passes, test_stage_c.test_lower_shared_to_cb_roles_and_pages); output: FileChecked below.

builtin.module {
  func.func @gemm_kernel(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [256 : i64, 256 : i64], B = [256 : i64, 256 : i64], C = [256 : i64, 256 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64]>, tt.cb.B_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64]>, tt.cb.C_l = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64]>, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [4 : i64, 4 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 7 : i64, 1 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 0 : i64, 4 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 0 : i64, 5 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 0 : i64, 6 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 0 : i64, 7 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [0 : i64, 1 : i64, 8 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 1 : i64, 9 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 1 : i64, 10 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 1 : i64, 11 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 1 : i64, 12 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 1 : i64, 13 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 1 : i64, 14 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 1 : i64, 15 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64]], tt.k_elems = 256 : i64, tt.logical_grid = [4 : i64, 4 : i64], tt.core_grid = [8 : i64, 8 : i64]} {
    %A_s = tile.alloc {name = "A_s", scope = "shared"} : memref<64x32xbf16, "shared">
    %B_s = tile.alloc {name = "B_s", scope = "shared"} : memref<32x64xbf16, "shared">
    %C_l = tile.alloc {name = "C_l", scope = "fragment"} : memref<64x64xf32, "fragment">
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %0 = arith.constant 0 : i32
    tile.for %0 to %count attributes {step = 1 : i32, kind = "persistent"} {
    ^bb0(%i: i32):
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %1 = arith.constant 0 : i32
      tile.fill %C_l {value = 0.000000e+00 : f32} : memref<64x64xf32, "fragment">
      %2 = arith.constant 0 : i32
      %3 = arith.constant 8 : i32
      tile.for %2 to %3 attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
      ^bb0(%k: i32):
        %4 = arith.constant 64 : i32
        %5 = arith.muli %m, %4 : i32
        %6 = arith.constant 32 : i32
        %7 = arith.muli %k, %6 : i32
        tile.copy %A, %A_s[%5, %7] : memref<256x256xbf16>, memref<64x32xbf16, "shared">
        %8 = arith.constant 32 : i32
        %9 = arith.muli %k, %8 : i32
        %10 = arith.constant 64 : i32
        %11 = arith.muli %n, %10 : i32
        tile.copy %B, %B_s[%9, %11] : memref<256x256xbf16>, memref<32x64xbf16, "shared">
        tile.gemm %A_s, %B_s, %C_l {transpose_a = false, transpose_b = false, clear_accum = false} : memref<64x32xbf16, "shared">, memref<32x64xbf16, "shared">, memref<64x64xf32, "fragment">
      }
      %12 = arith.constant 64 : i32
      %13 = arith.muli %m, %12 : i32
      %14 = arith.constant 64 : i32
      %15 = arith.muli %n, %14 : i32
      tile.copy %C_l, %C[%13, %15] : memref<64x64xf32, "fragment">, memref<256x256xbf16>
    }
    func.return
  }
}

// CHECK: tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">
// CHECK-SAME: tt.cb.B_s = #tt.cb<{{.*}}index = 1 : i64, producer = "reader", consumer = "compute"
// CHECK-SAME: tt.cb.C_l = #tt.cb<{{.*}}index = 16 : i64, producer = "compute", consumer = "writer"
// CHECK-SAME: tt.global_roles = #tt.roles<A = "input", B = "input", C = "output">
// CHECK-SAME: tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>
// CHECK:      tile.for
// CHECK:        %[[ROW:.*]] = arith.muli %m, %{{.*}} : i32
// CHECK:        %[[PAGE:.*]] = arith.addi %[[ROW]], %k : i32
// CHECK-NEXT:   tile.read_block %[[PAGE]] {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
// CHECK:        tile.read_block %{{.*}} {buffer = "B", cb = 1 : i32, rows = 1 : i32, cols = 2 : i32, row_stride = 8 : i32}
// CHECK:        tile.gemm %A_s, %B_s, %C_l
// CHECK:      tile.write_block %{{.*}} {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
