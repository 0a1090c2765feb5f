// RUN: insert-compute-init
// Input: the IR the pass runs on (as in tests/passes, test_stage_de.test_insert_compute_init_hoists_loop_invariant_inits); output: FileChecked below.

builtin.module {
  func.func @gemm_kernel(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xbf16>) attributes {tile.params = ["A", "B", "C"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [256 : i64, 256 : i64], B = [256 : i64, 256 : i64], C = [256 : i64, 256 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [256 : i64, 256 : i64], padded_shape = [256 : i64, 256 : i64]>, tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.B_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64], index = 1 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.C_l = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer", scope = "fragment">, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [4 : i64, 4 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [4 : i64, 4 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 7 : i64, 1 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 0 : i64, 4 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 0 : i64, 5 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 0 : i64, 6 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 0 : i64, 7 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [0 : i64, 1 : i64, 8 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [1 : i64, 1 : i64, 9 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [2 : i64, 1 : i64, 10 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [3 : i64, 1 : i64, 11 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [4 : i64, 1 : i64, 12 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [5 : i64, 1 : i64, 13 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [6 : i64, 1 : i64, 14 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64], [7 : i64, 1 : i64, 15 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64]], tt.k_elems = 256 : i64, tt.logical_grid = [4 : i64, 4 : i64], tt.core_grid = [8 : i64, 8 : i64], tt.global_roles = #tt.roles<A = "input", B = "input", C = "output">, tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>, tt.tile_dfg = #tt.tile_dfg<edges = [#tt.dfg_edge<buffer = "A_s", cb = 0 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>, #tt.dfg_edge<buffer = "B_s", cb = 1 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>, #tt.dfg_edge<buffer = "C_l", cb = 16 : i64, producer = "compute", consumer = "writer", pages = 4 : i64, depth = 8 : i64>]>, tt.kernels = #tt.kernels<reader = "reader", compute = "compute", writer = "writer">} {
    func.return
  }
  func.func @reader() attributes {ttkernel.thread = "noc", tt.compile_args = ["A", "B"]} {
    %A_addr = tile.runtime_arg "A_addr" {tensor = "A"}
    %A_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32} : !ttkernel.tensor_accessor_args
    %0 = arith.constant 2048 : i32
    %A = ttkernel.tensor_accessor(%A_args, %A_addr, %0) : !ttkernel.tensor_accessor_args, i32, i32
    %B_addr = tile.runtime_arg "B_addr" {tensor = "B"}
    %B_args = ttkernel.tensor_accessor_args(%A_args) : !ttkernel.tensor_accessor_args
    %1 = arith.constant 2048 : i32
    %B = ttkernel.tensor_accessor(%B_args, %B_addr, %1) : !ttkernel.tensor_accessor_args, i32, i32
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %2 = arith.constant 0 : i32
    %3 = arith.constant 1 : i32
    scf.for %i = %2 to %count step %3 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %4 = arith.constant 0 : i32
      %5 = arith.constant 8 : i32
      %6 = arith.constant 1 : i32
      scf.for %k = %4 to %5 step %6 : i32 {
        %7 = arith.constant 16 : i32
        %8 = arith.muli %m, %7 : i32
        %9 = arith.addi %8, %k : i32
        %10 = arith.constant 0 : i32
        %cb_10 = ttkernel.cb(%10) : i32
        %11 = arith.constant 2 : i32
        ttkernel.cb_reserve_back(%cb_10, %11) : !ttkernel.cb, i32
        %12 = arith.constant 0 : i32
        %cb_12 = ttkernel.cb(%12) : i32
        %l1_write_addr = ttkernel.get_write_ptr(%cb_12) : (!ttkernel.cb) -> i32
        %13 = arith.constant 0 : i32
        %14 = arith.constant 2 : i32
        %15 = arith.constant 1 : i32
        scf.for %r = %13 to %14 step %15 : i32 {
          %16 = arith.constant 8 : i32
          %17 = arith.muli %r, %16 : i32
          %18 = arith.addi %9, %17 : i32
          %19 = arith.constant 2048 : i32
          %20 = arith.muli %r, %19 : i32
          %21 = arith.addi %l1_write_addr, %20 : i32
          %22 = arith.constant 0 : i32
          %23 = arith.addi %18, %22 : i32
          %24 = arith.constant 2048 : i32
          %25 = arith.muli %22, %24 : i32
          %26 = arith.addi %21, %25 : i32
          %27 = arith.constant 0 : i32
          ttkernel.noc_async_read_page(%23, %A, %26, %27) : i32, !ttkernel.tensor_accessor, i32, i32
        }
        ttkernel.noc_async_read_barrier()
        %28 = arith.constant 0 : i32
        %cb_28 = ttkernel.cb(%28) : i32
        %29 = arith.constant 2 : i32
        ttkernel.cb_push_back(%cb_28, %29) : !ttkernel.cb, i32
        %30 = arith.constant 8 : i32
        %31 = arith.muli %k, %30 : i32
        %32 = arith.constant 2 : i32
        %33 = arith.muli %n, %32 : i32
        %34 = arith.addi %31, %33 : i32
        %35 = arith.constant 1 : i32
        %cb_35 = ttkernel.cb(%35) : i32
        %36 = arith.constant 2 : i32
        ttkernel.cb_reserve_back(%cb_35, %36) : !ttkernel.cb, i32
        %37 = arith.constant 1 : i32
        %cb_37 = ttkernel.cb(%37) : i32
        %l1_write_addr_1 = ttkernel.get_write_ptr(%cb_37) : (!ttkernel.cb) -> i32
        %38 = arith.constant 0 : i32
        %39 = arith.constant 8 : i32
        %40 = arith.muli %38, %39 : i32
        %41 = arith.addi %34, %40 : i32
        %42 = arith.constant 4096 : i32
        %43 = arith.muli %38, %42 : i32
        %44 = arith.addi %l1_write_addr_1, %43 : i32
        %45 = arith.constant 0 : i32
        %46 = arith.constant 2 : i32
        %47 = arith.constant 1 : i32
        scf.for %c = %45 to %46 step %47 : i32 {
          %48 = arith.addi %41, %c : i32
          %49 = arith.constant 2048 : i32
          %50 = arith.muli %c, %49 : i32
          %51 = arith.addi %44, %50 : i32
          %52 = arith.constant 0 : i32
          ttkernel.noc_async_read_page(%48, %B, %51, %52) : i32, !ttkernel.tensor_accessor, i32, i32
        }
        ttkernel.noc_async_read_barrier()
        %53 = arith.constant 1 : i32
        %cb_53 = ttkernel.cb(%53) : i32
        %54 = arith.constant 2 : i32
        ttkernel.cb_push_back(%cb_53, %54) : !ttkernel.cb, i32
      }
    }
    func.return
  }
  func.func @compute() attributes {ttkernel.thread = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>, tt.compile_args = []} {
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
        %5 = arith.constant 0 : i32
        %cb_5 = ttkernel.cb(%5) : i32
        %6 = arith.constant 2 : i32
        ttkernel.cb_wait_front(%cb_5, %6) : !ttkernel.cb, i32
        %7 = arith.constant 1 : i32
        %cb_7 = ttkernel.cb(%7) : i32
        %8 = arith.constant 2 : i32
        ttkernel.cb_wait_front(%cb_7, %8) : !ttkernel.cb, i32
        tile.dst_section attributes {mode = "continue"} math {
          %9 = arith.constant 0 : i32
          %cb_9 = ttkernel.cb(%9) : i32
          %10 = arith.constant 1 : i32
          %cb_10 = ttkernel.cb(%10) : i32
          %11 = arith.constant 2 : i32
          ttkernel.matmul_block(%cb_9, %cb_10, %9, %9, %9, %9, %11, %11, %10) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32, i32, i32, i32, i32
        } pack {
        ^bb0:
        }
        %12 = arith.constant 1 : i32
        %cb_12 = ttkernel.cb(%12) : i32
        %13 = arith.constant 2 : i32
        ttkernel.cb_pop_front(%cb_12, %13) : !ttkernel.cb, i32
        %14 = arith.constant 0 : i32
        %cb_14 = ttkernel.cb(%14) : i32
        %15 = arith.constant 2 : i32
        ttkernel.cb_pop_front(%cb_14, %15) : !ttkernel.cb, i32
      }
      %16 = arith.constant 16 : i32
      %cb_16 = ttkernel.cb(%16) : i32
      %17 = arith.constant 4 : i32
      ttkernel.cb_reserve_back(%cb_16, %17) : !ttkernel.cb, i32
      tile.dst_section attributes {mode = "close"} math {
      ^bb0:
      } pack {
        %18 = arith.constant 0 : i32
        %19 = arith.constant 16 : i32
        %cb_19 = ttkernel.cb(%19) : i32
        %20 = arith.constant 4 : i32
        ttkernel.pack_tile_block(%18, %cb_19, %20) : i32, !ttkernel.cb, i32
      }
      %21 = arith.constant 16 : i32
      %cb_21 = ttkernel.cb(%21) : i32
      %22 = arith.constant 4 : i32
      ttkernel.cb_push_back(%cb_21, %22) : !ttkernel.cb, i32
    }
    func.return
  }
  func.func @writer() attributes {ttkernel.thread = "noc", tt.compile_args = ["C"]} {
    %C_addr = tile.runtime_arg "C_addr" {tensor = "C"}
    %C_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32} : !ttkernel.tensor_accessor_args
    %0 = arith.constant 2048 : i32
    %C = ttkernel.tensor_accessor(%C_args, %C_addr, %0) : !ttkernel.tensor_accessor_args, i32, i32
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %1 = arith.constant 0 : i32
    %2 = arith.constant 1 : i32
    scf.for %i = %1 to %count step %2 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %3 = arith.constant 16 : i32
      %4 = arith.muli %m, %3 : i32
      %5 = arith.constant 2 : i32
      %6 = arith.muli %n, %5 : i32
      %7 = arith.addi %4, %6 : i32
      %8 = arith.constant 16 : i32
      %cb_8 = ttkernel.cb(%8) : i32
      %9 = arith.constant 4 : i32
      ttkernel.cb_wait_front(%cb_8, %9) : !ttkernel.cb, i32
      %10 = arith.constant 16 : i32
      %cb_10 = ttkernel.cb(%10) : i32
      %l1_read_addr = ttkernel.get_read_ptr(%cb_10) : (!ttkernel.cb) -> i32
      %11 = arith.constant 0 : i32
      %12 = arith.constant 2 : i32
      %13 = arith.constant 1 : i32
      scf.for %r = %11 to %12 step %13 : i32 {
        %14 = arith.constant 8 : i32
        %15 = arith.muli %r, %14 : i32
        %16 = arith.addi %7, %15 : i32
        %17 = arith.constant 4096 : i32
        %18 = arith.muli %r, %17 : i32
        %19 = arith.addi %l1_read_addr, %18 : i32
        %20 = arith.constant 0 : i32
        %21 = arith.constant 2 : i32
        %22 = arith.constant 1 : i32
        scf.for %c = %20 to %21 step %22 : i32 {
          %23 = arith.addi %16, %c : i32
          %24 = arith.constant 2048 : i32
          %25 = arith.muli %c, %24 : i32
          %26 = arith.addi %19, %25 : i32
          %27 = arith.constant 0 : i32
          %28 = arith.constant 0 : i32
          ttkernel.noc_async_write_page(%23, %C, %26, %27, %28) : i32, !ttkernel.tensor_accessor, i32, i32, i32
        }
      }
      ttkernel.noc_async_writes_flushed()
      %29 = arith.constant 16 : i32
      %cb_29 = ttkernel.cb(%29) : i32
      %30 = arith.constant 4 : i32
      ttkernel.cb_pop_front(%cb_29, %30) : !ttkernel.cb, i32
    }
    ttkernel.noc_async_write_barrier()
    func.return
  }
}

// CHECK-LABEL: func.func @compute()
// CHECK:         ttkernel.compute_kernel_hw_startup
// CHECK:         ttkernel.mm_block_init_short(
// CHECK:         scf.for %i =
// CHECK-NOT:       ttkernel.mm_block_init_short
// CHECK:           ttkernel.matmul_block
// CHECK-LABEL: func.func @writer()
