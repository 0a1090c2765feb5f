// RUN: insert-dst-management
// Input: the IR the pass runs on (as in tests/passes, test_stage_de.test_insert_dst_management_element_wise); output: FileChecked below.

builtin.module {
  func.func @fused_kernel(%A: memref<128x128xbf16>, %B: memref<128x128xbf16>, %C: memref<128x128xbf16>, %Y: memref<128x128xbf16>) attributes {tile.params = ["A", "B", "C", "Y"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [128 : i64, 128 : i64], B = [128 : i64, 128 : i64], C = [128 : i64, 128 : i64], Y = [128 : i64, 128 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.Y = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.cb.a = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.b = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 1 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.c = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 2 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.y = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer", scope = "fragment">, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.Y = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [2 : i64, 2 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [2 : i64, 2 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 3 : i64, 0 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64]], tt.logical_grid = [2 : i64, 2 : i64], tt.core_grid = [8 : i64, 8 : i64], tt.global_roles = #tt.roles<A = "input", B = "input", C = "input", Y = "output">, tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>, tt.tile_dfg = #tt.tile_dfg<edges = [#tt.dfg_edge<buffer = "a", cb = 0 : i64, producer = "reader", consumer = "compute", pages = 4 : i64, depth = 8 : i64>, #tt.dfg_edge<buffer = "b", cb = 1 : i64, producer = "reader", consumer = "compute", pages = 4 : i64, depth = 8 : i64>, #tt.dfg_edge<buffer = "c", cb = 2 : i64, producer = "reader", consumer = "compute", pages = 4 : i64, depth = 8 : i64>, #tt.dfg_edge<buffer = "y", cb = 16 : i64, producer = "compute", consumer = "writer", pages = 4 : i64, depth = 8 : i64>]>, tt.kernels = #tt.kernels<reader = "reader", compute = "compute", writer = "writer">} {
    func.return
  }
  func.func @reader() attributes {ttkernel.thread = "noc", tt.compile_args = ["A", "B", "C"]} {
    %A_addr = tile.runtime_arg "A_addr" {tensor = "A"}
    %A_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32} : !ttkernel.tensor_accessor_args
    %0 = arith.constant 2048 : i32
    %A = ttkernel.tensor_accessor(%A_args, %A_addr, %0) : !ttkernel.tensor_accessor_args, i32, i32
    %B_addr = tile.runtime_arg "B_addr" {tensor = "B"}
    %B_args = ttkernel.tensor_accessor_args(%A_args) : !ttkernel.tensor_accessor_args
    %1 = arith.constant 2048 : i32
    %B = ttkernel.tensor_accessor(%B_args, %B_addr, %1) : !ttkernel.tensor_accessor_args, i32, i32
    %C_addr = tile.runtime_arg "C_addr" {tensor = "C"}
    %C_args = ttkernel.tensor_accessor_args(%B_args) : !ttkernel.tensor_accessor_args
    %2 = arith.constant 2048 : i32
    %C = ttkernel.tensor_accessor(%C_args, %C_addr, %2) : !ttkernel.tensor_accessor_args, i32, i32
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %3 = arith.constant 0 : i32
    %4 = arith.constant 1 : i32
    scf.for %i = %3 to %count step %4 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %5 = arith.constant 8 : i32
      %6 = arith.muli %m, %5 : i32
      %7 = arith.constant 2 : i32
      %8 = arith.muli %n, %7 : i32
      %9 = arith.addi %6, %8 : i32
      %10 = arith.constant 0 : i32
      %cb_10 = ttkernel.cb(%10) : i32
      %11 = arith.constant 4 : i32
      ttkernel.cb_reserve_back(%cb_10, %11) : !ttkernel.cb, i32
      %12 = arith.constant 0 : i32
      %cb_12 = ttkernel.cb(%12) : i32
      %l1_write_addr = ttkernel.get_write_ptr(%cb_12) : (!ttkernel.cb) -> i32
      %13 = arith.constant 0 : i32
      %14 = arith.constant 2 : i32
      %15 = arith.constant 1 : i32
      scf.for %r = %13 to %14 step %15 : i32 {
        %16 = arith.constant 4 : i32
        %17 = arith.muli %r, %16 : i32
        %18 = arith.addi %9, %17 : i32
        %19 = arith.constant 4096 : i32
        %20 = arith.muli %r, %19 : i32
        %21 = arith.addi %l1_write_addr, %20 : i32
        %22 = arith.constant 0 : i32
        %23 = arith.constant 2 : i32
        %24 = arith.constant 1 : i32
        scf.for %c = %22 to %23 step %24 : i32 {
          %25 = arith.addi %18, %c : i32
          %26 = arith.constant 2048 : i32
          %27 = arith.muli %c, %26 : i32
          %28 = arith.addi %21, %27 : i32
          %29 = arith.constant 0 : i32
          ttkernel.noc_async_read_page(%25, %A, %28, %29) : i32, !ttkernel.tensor_accessor, i32, i32
        }
      }
      ttkernel.noc_async_read_barrier()
      %30 = arith.constant 0 : i32
      %cb_30 = ttkernel.cb(%30) : i32
      %31 = arith.constant 4 : i32
      ttkernel.cb_push_back(%cb_30, %31) : !ttkernel.cb, i32
      %32 = arith.constant 8 : i32
      %33 = arith.muli %m, %32 : i32
      %34 = arith.constant 2 : i32
      %35 = arith.muli %n, %34 : i32
      %36 = arith.addi %33, %35 : i32
      %37 = arith.constant 1 : i32
      %cb_37 = ttkernel.cb(%37) : i32
      %38 = arith.constant 4 : i32
      ttkernel.cb_reserve_back(%cb_37, %38) : !ttkernel.cb, i32
      %39 = arith.constant 1 : i32
      %cb_39 = ttkernel.cb(%39) : i32
      %l1_write_addr_1 = ttkernel.get_write_ptr(%cb_39) : (!ttkernel.cb) -> i32
      %40 = arith.constant 0 : i32
      %41 = arith.constant 2 : i32
      %42 = arith.constant 1 : i32
      scf.for %r_1 = %40 to %41 step %42 : i32 {
        %43 = arith.constant 4 : i32
        %44 = arith.muli %r_1, %43 : i32
        %45 = arith.addi %36, %44 : i32
        %46 = arith.constant 4096 : i32
        %47 = arith.muli %r_1, %46 : i32
        %48 = arith.addi %l1_write_addr_1, %47 : i32
        %49 = arith.constant 0 : i32
        %50 = arith.constant 2 : i32
        %51 = arith.constant 1 : i32
        scf.for %c_1 = %49 to %50 step %51 : i32 {
          %52 = arith.addi %45, %c_1 : i32
          %53 = arith.constant 2048 : i32
          %54 = arith.muli %c_1, %53 : i32
          %55 = arith.addi %48, %54 : i32
          %56 = arith.constant 0 : i32
          ttkernel.noc_async_read_page(%52, %B, %55, %56) : i32, !ttkernel.tensor_accessor, i32, i32
        }
      }
      ttkernel.noc_async_read_barrier()
      %57 = arith.constant 1 : i32
      %cb_57 = ttkernel.cb(%57) : i32
      %58 = arith.constant 4 : i32
      ttkernel.cb_push_back(%cb_57, %58) : !ttkernel.cb, i32
      %59 = arith.constant 8 : i32
      %60 = arith.muli %m, %59 : i32
      %61 = arith.constant 2 : i32
      %62 = arith.muli %n, %61 : i32
      %63 = arith.addi %60, %62 : i32
      %64 = arith.constant 2 : i32
      %cb_64 = ttkernel.cb(%64) : i32
      %65 = arith.constant 4 : i32
      ttkernel.cb_reserve_back(%cb_64, %65) : !ttkernel.cb, i32
      %66 = arith.constant 2 : i32
      %cb_66 = ttkernel.cb(%66) : i32
      %l1_write_addr_2 = ttkernel.get_write_ptr(%cb_66) : (!ttkernel.cb) -> i32
      %67 = arith.constant 0 : i32
      %68 = arith.constant 2 : i32
      %69 = arith.constant 1 : i32
      scf.for %r_2 = %67 to %68 step %69 : i32 {
        %70 = arith.constant 4 : i32
        %71 = arith.muli %r_2, %70 : i32
        %72 = arith.addi %63, %71 : i32
        %73 = arith.constant 4096 : i32
        %74 = arith.muli %r_2, %73 : i32
        %75 = arith.addi %l1_write_addr_2, %74 : i32
        %76 = arith.constant 0 : i32
        %77 = arith.constant 2 : i32
        %78 = arith.constant 1 : i32
        scf.for %c_2 = %76 to %77 step %78 : i32 {
          %79 = arith.addi %72, %c_2 : i32
          %80 = arith.constant 2048 : i32
          %81 = arith.muli %c_2, %80 : i32
          %82 = arith.addi %75, %81 : i32
          %83 = arith.constant 0 : i32
          ttkernel.noc_async_read_page(%79, %C, %82, %83) : i32, !ttkernel.tensor_accessor, i32, i32
        }
      }
      ttkernel.noc_async_read_barrier()
      %84 = arith.constant 2 : i32
      %cb_84 = ttkernel.cb(%84) : i32
      %85 = arith.constant 4 : i32
      ttkernel.cb_push_back(%cb_84, %85) : !ttkernel.cb, i32
    }
    func.return
  }
  func.func @compute() attributes {ttkernel.thread = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>, tt.compile_args = []} {
    %0 = arith.constant 0 : i32
    %cb_0 = ttkernel.cb(%0) : i32
    %1 = arith.constant 0 : i32
    %cb_1 = ttkernel.cb(%1) : i32
    %2 = arith.constant 16 : i32
    %cb_2 = ttkernel.cb(%2) : i32
    ttkernel.compute_kernel_hw_startup(%cb_0, %cb_1, %cb_2) : !ttkernel.cb, !ttkernel.cb, !ttkernel.cb
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %3 = arith.constant 0 : i32
    %4 = arith.constant 1 : i32
    %5 = arith.constant 0 : i32
    %cb_5 = ttkernel.cb(%5) : i32
    ttkernel.copy_tile_init(%cb_5) : !ttkernel.cb
    ttkernel.relu_tile_init()
    scf.for %i = %3 to %count step %4 : i32 {
      %6 = arith.constant 0 : i32
      %cb_6 = ttkernel.cb(%6) : i32
      %7 = arith.constant 4 : i32
      ttkernel.cb_wait_front(%cb_6, %7) : !ttkernel.cb, i32
      %8 = arith.constant 1 : i32
      %cb_8 = ttkernel.cb(%8) : i32
      %9 = arith.constant 4 : i32
      ttkernel.cb_wait_front(%cb_8, %9) : !ttkernel.cb, i32
      %10 = arith.constant 2 : i32
      %cb_10 = ttkernel.cb(%10) : i32
      %11 = arith.constant 4 : i32
      ttkernel.cb_wait_front(%cb_10, %11) : !ttkernel.cb, i32
      %12 = arith.constant 16 : i32
      %cb_12 = ttkernel.cb(%12) : i32
      %13 = arith.constant 4 : i32
      ttkernel.cb_reserve_back(%cb_12, %13) : !ttkernel.cb, i32
      %14 = arith.constant 0 : i32
      %15 = arith.constant 4 : i32
      %16 = arith.constant 1 : i32
      scf.for %t = %14 to %15 step %16 : i32 {
        tile.dst_section attributes {mode = "section"} math {
          %17 = arith.constant 0 : i32
          %cb_17 = ttkernel.cb(%17) : i32
          ttkernel.copy_tile(%cb_17, %t, %17) : !ttkernel.cb, i32, i32
          %18 = arith.constant 1 : i32
          %cb_18 = ttkernel.cb(%18) : i32
          ttkernel.copy_tile(%cb_18, %t, %18) : !ttkernel.cb, i32, i32
          ttkernel.mul_binary_tile_init()
          ttkernel.mul_binary_tile(%17, %18, %17) : i32, i32, i32
          %19 = arith.constant 2 : i32
          %cb_19 = ttkernel.cb(%19) : i32
          ttkernel.copy_tile(%cb_19, %t, %18) : !ttkernel.cb, i32, i32
          ttkernel.add_binary_tile_init()
          ttkernel.add_binary_tile(%17, %18, %17) : i32, i32, i32
          ttkernel.relu_tile_init()
          ttkernel.relu_tile(%17) : i32
        } pack {
          %20 = arith.constant 0 : i32
          %21 = arith.constant 16 : i32
          %cb_21 = ttkernel.cb(%21) : i32
          ttkernel.pack_tile(%20, %cb_21, %20) : i32, !ttkernel.cb, i32
        }
      }
      %22 = arith.constant 16 : i32
      %cb_22 = ttkernel.cb(%22) : i32
      %23 = arith.constant 4 : i32
      ttkernel.cb_push_back(%cb_22, %23) : !ttkernel.cb, i32
      %24 = arith.constant 2 : i32
      %cb_24 = ttkernel.cb(%24) : i32
      %25 = arith.constant 4 : i32
      ttkernel.cb_pop_front(%cb_24, %25) : !ttkernel.cb, i32
      %26 = arith.constant 1 : i32
      %cb_26 = ttkernel.cb(%26) : i32
      %27 = arith.constant 4 : i32
      ttkernel.cb_pop_front(%cb_26, %27) : !ttkernel.cb, i32
      %28 = arith.constant 0 : i32
      %cb_28 = ttkernel.cb(%28) : i32
      %29 = arith.constant 4 : i32
      ttkernel.cb_pop_front(%cb_28, %29) : !ttkernel.cb, i32
    }
    func.return
  }
  func.func @writer() attributes {ttkernel.thread = "noc", tt.compile_args = ["Y"]} {
    %Y_addr = tile.runtime_arg "Y_addr" {tensor = "Y"}
    %Y_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32} : !ttkernel.tensor_accessor_args
    %0 = arith.constant 2048 : i32
    %Y = ttkernel.tensor_accessor(%Y_args, %Y_addr, %0) : !ttkernel.tensor_accessor_args, i32, i32
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %1 = arith.constant 0 : i32
    %2 = arith.constant 1 : i32
    scf.for %i = %1 to %count step %2 : i32 {
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %3 = arith.constant 8 : i32
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
        %14 = arith.constant 4 : i32
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
          ttkernel.noc_async_write_page(%23, %Y, %26, %27, %28) : i32, !ttkernel.tensor_accessor, i32, i32, i32
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
// CHECK:         ttkernel.cb_reserve_back
// CHECK:         scf.for %t =
// CHECK-NEXT:      ttkernel.tile_regs_acquire()
// CHECK:           ttkernel.relu_tile(
// CHECK-NEXT:      ttkernel.tile_regs_commit()
// CHECK-NEXT:      ttkernel.tile_regs_wait()
// CHECK:           ttkernel.pack_tile
// CHECK-NEXT:      ttkernel.tile_regs_release()
// CHECK-NEXT:    }
// CHECK:         ttkernel.cb_push_back
