// RUN: configure-tensor-accessor
// Input: the IR the pass runs on (as in tests/passes, test_stage_de.test_configure_tensor_accessor_chains_accessor_args); output: FileChecked below.

builtin.module {
  func.func @gemm_kernel(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [256 : i64, 256 : i64], B = [256 : i64, 256 : i64], C = [256 : i64, 256 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.B_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64], index = 1 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.C_l = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer", scope = "fragment">, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [4 : i64, 4 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 7 : i64, 1 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 0 : i64, 4 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 0 : i64, 5 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 0 : i64, 6 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 0 : i64, 7 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [0 : i64, 1 : i64, 8 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 1 : i64, 9 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 1 : i64, 10 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 1 : i64, 11 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 1 : i64, 12 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 1 : i64, 13 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 1 : i64, 14 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 1 : i64, 15 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64]], tt.k_elems = 256 : i64, tt.logical_grid = [4 : i64, 4 : i64], tt.core_grid = [8 : i64, 8 : i64], tt.global_roles = #tt.roles<A = "input", B = "input", C = "output">, tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>, tt.tile_dfg = #tt.tile_dfg<edges = [#tt.dfg_edge<buffer = "A_s", cb = 0 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>, #tt.dfg_edge<buffer = "B_s", cb = 1 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>, #tt.dfg_edge<buffer = "C_l", cb = 16 : i64, producer = "compute", consumer = "writer", pages = 4 : i64, depth = 8 : i64>]>, tt.kernels = #tt.kernels<reader = "reader", compute = "compute", writer = "writer">} {
    func.return
  }
  func.func @reader() attributes {ttkernel.thread = "noc"} {
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %0 = arith.constant 0 : i32
    %1 = arith.constant 1 : i32
    scf.for %i = %0 to %count step %1 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %2 = arith.constant 0 : i32
      %3 = arith.constant 8 : i32
      %4 = arith.constant 1 : i32
      scf.for %k = %2 to %3 step %4 : i32 {
        %5 = arith.constant 16 : i32
        %6 = arith.muli %m, %5 : i32
        %7 = arith.addi %6, %k : i32
        tile.cb_event "produce_begin" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
        tile.read_block %7 {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
        tile.cb_event "produce_end" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
        %8 = arith.constant 8 : i32
        %9 = arith.muli %k, %8 : i32
        %10 = arith.constant 2 : i32
        %11 = arith.muli %n, %10 : i32
        %12 = arith.addi %9, %11 : i32
        tile.cb_event "produce_begin" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
        tile.read_block %12 {buffer = "B", cb = 1 : i32, rows = 1 : i32, cols = 2 : i32, row_stride = 8 : i32}
        tile.cb_event "produce_end" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
      }
    }
    func.return
  }
  func.func @compute() attributes {ttkernel.thread = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>} {
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %0 = arith.constant 0 : i32
    %1 = arith.constant 1 : i32
    scf.for %i = %0 to %count step %1 : i32 {
      %2 = arith.constant 0 : i32
      %3 = arith.constant 8 : i32
      tile.dst_section attributes {mode = "open"} math {
      ^bb0:
      } pack {
      ^bb0:
      }
      %4 = arith.constant 1 : i32
      scf.for %k = %2 to %3 step %4 : i32 {
        tile.cb_event "consume" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
        tile.cb_event "consume" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
        tile.dst_section attributes {mode = "continue"} math {
          %5 = arith.constant 0 : i32
          %cb_5 = ttkernel.cb(%5) : i32
          %6 = arith.constant 1 : i32
          %cb_6 = ttkernel.cb(%6) : i32
          %7 = arith.constant 2 : i32
          ttkernel.matmul_block(%cb_5, %cb_6, %5, %5, %5, %5, %7, %7, %6) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32, i32, i32, i32, i32
        } pack {
        ^bb0:
        }
        tile.cb_event "release" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
        tile.cb_event "release" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
      }
      tile.cb_event "produce_begin" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
      tile.dst_section attributes {mode = "close"} math {
      ^bb0:
      } pack {
        %8 = arith.constant 0 : i32
        %9 = arith.constant 16 : i32
        %cb_9 = ttkernel.cb(%9) : i32
        %10 = arith.constant 4 : i32
        ttkernel.pack_tile_block(%8, %cb_9, %10) : i32, !ttkernel.cb, i32
      }
      tile.cb_event "produce_end" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
    }
    func.return
  }
  func.func @writer() attributes {ttkernel.thread = "noc"} {
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %0 = arith.constant 0 : i32
    %1 = arith.constant 1 : i32
    scf.for %i = %0 to %count step %1 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %2 = arith.constant 16 : i32
      %3 = arith.muli %m, %2 : i32
      %4 = arith.constant 2 : i32
      %5 = arith.muli %n, %4 : i32
      %6 = arith.addi %3, %5 : i32
      tile.cb_event "consume" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
      tile.write_block %6 {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
      tile.cb_event "release" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
    }
    func.return
  }
}

// CHECK:      func.func @reader() attributes {ttkernel.thread = "noc", tt.compile_args = ["A", "B"]} {
// CHECK-NEXT:   %A_addr = tile.runtime_arg "A_addr" {tensor = "A"}
// CHECK-NEXT:   %A_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32}
// CHECK-NEXT:   %[[PAGE:.*]] = arith.constant 2048 : i32
// CHECK-NEXT:   %A = ttkernel.tensor_accessor(%A_args, %A_addr, %[[PAGE]])
// CHECK-NEXT:   %B_addr = tile.runtime_arg "B_addr" {tensor = "B"}
// CHECK-NEXT:   %B_args = ttkernel.tensor_accessor_args(%A_args)
// CHECK:        %B = ttkernel.tensor_accessor(%B_args, %B_addr,
// CHECK:        tile.read_block %{{.*}}, %A : !ttkernel.tensor_accessor {buffer = "A"
// CHECK:        tile.read_block %{{.*}}, %B : !ttkernel.tensor_accessor {buffer = "B"
// CHECK:      func.func @writer() attributes {ttkernel.thread = "noc", tt.compile_args = ["C"]} {
