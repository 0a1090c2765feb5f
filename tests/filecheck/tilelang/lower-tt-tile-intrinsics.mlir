// RUN: lower-tt-tile-intrinsics
// Input: the IR the pass runs on (as in tests/passes, test_stage_c.test_gemm_accumulates_in_dst_across_the_k_loop); output: FileChecked below.

builtin.module {
  func.func @gemm_kernel(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [256 : i64, 256 : i64], B = [256 : i64, 256 : i64], C = [256 : i64, 256 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.B_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64], index = 1 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.C_l = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer", scope = "fragment">, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [4 : i64, 4 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 7 : i64, 1 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 0 : i64, 4 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 0 : i64, 5 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 0 : i64, 6 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 0 : i64, 7 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [0 : i64, 1 : i64, 8 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 1 : i64, 9 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 1 : i64, 10 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 1 : i64, 11 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 1 : i64, 12 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 1 : i64, 13 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 1 : i64, 14 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 1 : i64, 15 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64]], tt.k_elems = 256 : i64, tt.logical_grid = [4 : i64, 4 : i64], tt.core_grid = [8 : i64, 8 : i64], tt.global_roles = #tt.roles<A = "input", B = "input", C = "output">, tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>} {
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
      tile.fill %C_l {value = 0.000000e+00 : f32} : memref<64x64xf32, "fragment">
      %1 = arith.constant 0 : i32
      %2 = arith.constant 8 : i32
      tile.for %1 to %2 attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
      ^bb0(%k: i32):
        %3 = arith.constant 16 : i32
        %4 = arith.muli %m, %3 : i32
        %5 = arith.addi %4, %k : i32
        tile.read_block %5 {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
        %6 = arith.constant 8 : i32
        %7 = arith.muli %k, %6 : i32
        %8 = arith.constant 2 : i32
        %9 = arith.muli %n, %8 : i32
        %10 = arith.addi %7, %9 : i32
        tile.read_block %10 {buffer = "B", cb = 1 : i32, rows = 1 : i32, cols = 2 : i32, row_stride = 8 : i32}
        tile.gemm %A_s, %B_s, %C_l {transpose_a = false, transpose_b = false, clear_accum = false} : memref<64x32xbf16, "shared">, memref<32x64xbf16, "shared">, memref<64x64xf32, "fragment">
      }
      %11 = arith.constant 16 : i32
      %12 = arith.muli %m, %11 : i32
      %13 = arith.constant 2 : i32
      %14 = arith.muli %n, %13 : i32
      %15 = arith.addi %12, %14 : i32
      tile.write_block %15 {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
    }
    func.return
  }
}

// CHECK-NOT:  tile.fill %C_l
// CHECK:      tile.stmt attributes {kind = "matmul_open", reads = [], writes = []} {
// CHECK-NEXT:   tile.dst_section attributes {mode = "open"}
// CHECK:      tile.for
// CHECK:        tile.stmt attributes {kind = "matmul_step", reads = ["A_s", "B_s"], writes = []} {
// CHECK-NEXT:     tile.dst_section attributes {mode = "continue"} math {
// CHECK:            ttkernel.matmul_block(%{{.*}}) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32, i32, i32, i32, i32
// CHECK:      tile.stmt attributes {kind = "matmul_pack", reads = [], writes = ["C_l"]} {
// CHECK-NEXT:   tile.dst_section attributes {mode = "close"} math {
// CHECK:        } pack {
// CHECK:        ttkernel.pack_tile_block(
