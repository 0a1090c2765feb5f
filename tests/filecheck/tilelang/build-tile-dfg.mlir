// RUN: build-tile-dfg
// Input: the IR the pass runs on (as in tests/passes, test_stage_c.test_build_tile_dfg_places_cb_versions); output: FileChecked below.

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
      %1 = arith.constant 0 : i32
      %2 = arith.constant 8 : i32
      tile.stmt attributes {kind = "matmul_open", reads = [], writes = []} {
        tile.dst_section attributes {mode = "open"} math {
        ^bb0:
        } pack {
        ^bb0:
        }
      }
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
        tile.stmt attributes {kind = "matmul_step", reads = ["A_s", "B_s"], writes = []} {
          tile.dst_section attributes {mode = "continue"} math {
            %11 = arith.constant 0 : i32
            %cb_11 = ttkernel.cb(%11) : i32
            %12 = arith.constant 1 : i32
            %cb_12 = ttkernel.cb(%12) : i32
            %13 = arith.constant 2 : i32
            ttkernel.matmul_block(%cb_11, %cb_12, %11, %11, %11, %11, %13, %13, %12) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32, i32, i32, i32, i32
          } pack {
          ^bb0:
          }
        }
      }
      tile.stmt attributes {kind = "matmul_pack", reads = [], writes = ["C_l"]} {
        tile.dst_section attributes {mode = "close"} math {
        ^bb0:
        } pack {
          %14 = arith.constant 0 : i32
          %15 = arith.constant 16 : i32
          %cb_15 = ttkernel.cb(%15) : i32
          %16 = arith.constant 4 : i32
          ttkernel.pack_tile_block(%14, %cb_15, %16) : i32, !ttkernel.cb, i32
        }
      }
      %17 = arith.constant 16 : i32
      %18 = arith.muli %m, %17 : i32
      %19 = arith.constant 2 : i32
      %20 = arith.muli %n, %19 : i32
      %21 = arith.addi %18, %20 : i32
      tile.write_block %21 {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
    }
    func.return
  }
}

// CHECK:      tt.tile_dfg = #tt.tile_dfg<edges = [#tt.dfg_edge<buffer = "A_s", cb = 0 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>
// CHECK:      tile.for
// CHECK:        tile.cb_event "produce_begin" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
// CHECK-NEXT:   tile.read_block
// CHECK-NEXT:   tile.cb_event "produce_end" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
// CHECK:        tile.cb_event "consume" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
// CHECK-NEXT:   tile.cb_event "consume" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
// CHECK-NEXT:   tile.stmt attributes {kind = "matmul_step"
// CHECK:        tile.cb_event "release" {cb = 1 : i32
// CHECK-NEXT:   tile.cb_event "release" {cb = 0 : i32
// CHECK:      tile.cb_event "produce_begin" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
// CHECK-NEXT: tile.stmt attributes {kind = "matmul_pack"
// CHECK:      tile.cb_event "produce_end" {cb = 16 : i32
// CHECK:      tile.cb_event "consume" {cb = 16 : i32
// CHECK-NEXT: tile.write_block
// CHECK-NEXT: tile.cb_event "release" {cb = 16 : i32
