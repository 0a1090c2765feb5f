// RUN: tt-multicast-reuse
// Input: a 4 x 4 grid of 2 x 2-tile blocks on 8 x 2 cores, A and B read per K step; output: the A blocks a run of four cores shares and the B blocks a column of two shares are read by one core and multicast, with the semaphore handshake.

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
        tile.cb_event "produce_begin" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
        tile.read_block %9, %A : !ttkernel.tensor_accessor {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
        tile.cb_event "produce_end" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
        %10 = arith.constant 8 : i32
        %11 = arith.muli %k, %10 : i32
        %12 = arith.constant 2 : i32
        %13 = arith.muli %n, %12 : i32
        %14 = arith.addi %11, %13 : i32
        tile.cb_event "produce_begin" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
        tile.read_block %14, %B : !ttkernel.tensor_accessor {buffer = "B", cb = 1 : i32, rows = 1 : i32, cols = 2 : i32, row_stride = 8 : i32}
        tile.cb_event "produce_end" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
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
      tile.cb_event "consume" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
      tile.write_block %7, %C : !ttkernel.tensor_accessor {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
      tile.cb_event "release" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
    }
    func.return
  }
}


// CHECK:      func.func @gemm_kernel
// CHECK-SAME: tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">, #tt.runtime_arg<name = "A_s_mcast_role">, #tt.runtime_arg<name = "A_s_mcast_start_noc_x", role = "noc_x", core = "A_s_mcast_start">, #tt.runtime_arg<name = "A_s_mcast_start_noc_y", role = "noc_y", core = "A_s_mcast_start">, #tt.runtime_arg<name = "A_s_mcast_end_noc_x", role = "noc_x", core = "A_s_mcast_end">, #tt.runtime_arg<name = "A_s_mcast_end_noc_y", role = "noc_y", core = "A_s_mcast_end">, #tt.runtime_arg<name = "A_s_mcast_receivers">, #tt.runtime_arg<name = "B_s_mcast_role">, #tt.runtime_arg<name = "B_s_mcast_start_noc_x", role = "noc_x", core = "B_s_mcast_start">, #tt.runtime_arg<name = "B_s_mcast_start_noc_y", role = "noc_y", core = "B_s_mcast_start">, #tt.runtime_arg<name = "B_s_mcast_end_noc_x", role = "noc_x", core = "B_s_mcast_end">, #tt.runtime_arg<name = "B_s_mcast_end_noc_y", role = "noc_y", core = "B_s_mcast_end">, #tt.runtime_arg<name = "B_s_mcast_receivers">]
// CHECK-SAME: tt.core_runtime_args = {{\[\[}}0 : i64, 0 : i64, 0 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64, 1 : i64, 1 : i64, 0 : i64, 3 : i64, 0 : i64, 3 : i64, 1 : i64, 0 : i64, 1 : i64, 0 : i64, 1 : i64, 1 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 4 : i64, 8 : i64, 4 : i64, 2 : i64, 0 : i64, 0 : i64, 0 : i64, 0 : i64, 0 : i64,
// CHECK-SAME: tt.multicast_groups = #tt.multicast_groups<A_s = #tt.multicast<cb = 0 : i64, axis = "row", sender_sem = 0 : i64, receiver_sem = 1 : i64, groups = {{\[\[}}0 : i64, 0 : i64, 1 : i64, 0 : i64, 3 : i64, 0 : i64], [4 : i64, 0 : i64, 5 : i64, 0 : i64, 7 : i64, 0 : i64], [0 : i64, 1 : i64, 1 : i64, 1 : i64, 3 : i64, 1 : i64], [4 : i64, 1 : i64, 5 : i64, 1 : i64, 7 : i64, 1 : i64]]>, B_s = #tt.multicast<cb = 1 : i64, axis = "column", sender_sem = 2 : i64, receiver_sem = 3 : i64, groups = {{\[\[}}0 : i64, 0 : i64, 0 : i64, 1 : i64, 0 : i64, 1 : i64],
// CHECK-SAME: tt.sync_barriers = #tt.sync_barriers<A_s_sender = #tt.semaphore<id = 0 : i64, initial_value = 0 : i64, buffer = "A_s", side = "sender">, A_s_receiver = #tt.semaphore<id = 1 : i64, initial_value = 0 : i64, buffer = "A_s", side = "receiver">, B_s_sender = #tt.semaphore<id = 2 : i64, {{.*}}, B_s_receiver = #tt.semaphore<id = 3 : i64,
// CHECK:      func.func @reader()
// CHECK:        %A_s_role = tile.runtime_arg "A_s_mcast_role"
// CHECK:        %A_s_receivers = tile.runtime_arg "A_s_mcast_receivers"
// CHECK:        %A_s_sender_sem = ttkernel.get_semaphore(%{{.*}}) : (i32) -> i32
// CHECK:        %A_s_receiver_sem = ttkernel.get_semaphore(%{{.*}}) : (i32) -> i32
// CHECK:        scf.for %k
// CHECK:          tile.cb_event "produce_begin" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
// CHECK-NEXT:     %[[#RECV:]] = arith.constant 2 : i32
// CHECK-NEXT:     %[[#IS_RECV:]] = arith.cmpi eq, %A_s_role, %[[#RECV]] : i32
// CHECK-NEXT:     scf.if %[[#IS_RECV]] {
// CHECK-NEXT:       %[[#INVALID:]] = arith.constant 0 : i32
// CHECK-NEXT:       ttkernel.noc_semaphore_set(%A_s_receiver_sem, %[[#INVALID]]) : i32, i32
// CHECK-NEXT:       %[[#SENDER:]] = ttkernel.get_noc_addr_xy(%A_s_start_noc_x, %A_s_start_noc_y, %A_s_sender_sem) : (i32, i32, i32) -> i64
// CHECK-NEXT:       %[[#ONE:]] = arith.constant 1 : i32
// CHECK-NEXT:       ttkernel.noc_semaphore_inc(%[[#SENDER]], %[[#ONE]]) : i64, i32
// CHECK-NEXT:       %[[#VALID:]] = arith.constant 1 : i32
// CHECK-NEXT:       ttkernel.noc_semaphore_wait(%A_s_receiver_sem, %[[#VALID]]) : i32, i32
// CHECK-NEXT:     } else {
// CHECK-NEXT:       tile.read_block %{{.*}}, %A : !ttkernel.tensor_accessor {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
// CHECK-NEXT:       %[[#SEND:]] = arith.constant 1 : i32
// CHECK-NEXT:       %[[#IS_SEND:]] = arith.cmpi eq, %A_s_role, %[[#SEND]] : i32
// CHECK-NEXT:       scf.if %[[#IS_SEND]] {
// CHECK-NEXT:         ttkernel.noc_semaphore_wait(%A_s_sender_sem, %A_s_receivers) : i32, i32
// CHECK-NEXT:         %[[#ZERO:]] = arith.constant 0 : i32
// CHECK-NEXT:         ttkernel.noc_semaphore_set(%A_s_sender_sem, %[[#ZERO]]) : i32, i32
// CHECK-NEXT:         %[[#INDEX:]] = arith.constant 0 : i32
// CHECK-NEXT:         %cb0 = ttkernel.cb(%[[#INDEX]]) : i32
// CHECK-NEXT:         %[[#L1:]] = ttkernel.get_write_ptr(%cb0) : (!ttkernel.cb) -> i32
// CHECK-NEXT:         %[[#DATA:]] = ttkernel.get_noc_multicast_addr(%A_s_start_noc_x, %A_s_start_noc_y, %A_s_end_noc_x, %A_s_end_noc_y, %[[#L1]]) : (i32, i32, i32, i32, i32) -> i64
// CHECK-NEXT:         %[[#BYTES:]] = arith.constant 4096 : i32
// CHECK-NEXT:         %[[#NOLINK:]] = arith.constant false
// CHECK-NEXT:         ttkernel.noc_async_write_multicast(%[[#L1]], %[[#DATA]], %[[#BYTES]], %A_s_receivers, %[[#NOLINK]]) : i32, i64, i32, i32, i1
// CHECK-NEXT:         %[[#SET:]] = arith.constant 1 : i32
// CHECK-NEXT:         ttkernel.noc_semaphore_set(%A_s_receiver_sem, %[[#SET]]) : i32, i32
// CHECK-NEXT:         %[[#SEM:]] = ttkernel.get_noc_multicast_addr(%A_s_start_noc_x, %A_s_start_noc_y, %A_s_end_noc_x, %A_s_end_noc_y, %A_s_receiver_sem) : (i32, i32, i32, i32, i32) -> i64
// CHECK-NEXT:         %{{.*}} = arith.constant false
// CHECK-NEXT:         ttkernel.noc_semaphore_set_multicast(%A_s_receiver_sem, %[[#SEM]], %A_s_receivers, %{{.*}}) : i32, i64, i32, i1
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:     tile.cb_event "produce_end" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
// CHECK:          tile.cb_event "produce_begin" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
// CHECK:            ttkernel.noc_async_write_multicast(%{{.*}}, %{{.*}}, %{{.*}}, %B_s_receivers, %{{.*}})
// CHECK:        ttkernel.noc_async_write_barrier()
// CHECK-NEXT:   func.return
