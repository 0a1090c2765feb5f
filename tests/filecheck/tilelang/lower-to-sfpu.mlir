// RUN: lower-to-sfpu
// Input: the IR the pass runs on (as in tests/passes, test_stage_c.test_lower_to_sfpu_fused_relu); output: FileChecked below.

builtin.module {
  func.func @fused_kernel(%A: memref<128x128xbf16>, %B: memref<128x128xbf16>, %C: memref<128x128xbf16>, %Y: memref<128x128xbf16>) attributes {tile.params = ["A", "B", "C", "Y"], tt.vector_layouts = #tt.vector_layouts<>, tt.schedule = #tt.schedule<policy = "contiguous", order = "row_major">, tt.shard = #tt.shard<layout = "tiled", interleaved = true, tile_shape = [32 : i64, 32 : i64]>, tt.padded_shapes = #tt.shapes<A = [128 : i64, 128 : i64], B = [128 : i64, 128 : i64], C = [128 : i64, 128 : i64], Y = [128 : i64, 128 : i64]>, tt.buffer.A = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.B = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.C = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.buffer.Y = #tt.buffer<memory = "DRAM", layout = "interleaved", tile_shape = [32 : i64, 32 : i64], dtype = "bf16", shape = [128 : i64, 128 : i64], padded_shape = [128 : i64, 128 : i64]>, tt.cb.a = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.b = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 1 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.c = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 2 : i64, producer = "reader", consumer = "compute", scope = "shared">, tt.cb.y = #tt.cb<page_size = 2048 : i64, depth = 8 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer", scope = "fragment">, tt.tensor_accessor.A = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.B = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.C = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.tensor_accessor.Y = #tt.tensor_accessor<kind = "interleaved", is_dram = true, page_size = 2048 : i64, aligned_page_size = 2048 : i64, compile_time_args = 2 : i64>, tt.partition_mode = "global", tt.grid_tiles = [2 : i64, 2 : i64], tt.block_tiles = [2 : i64, 2 : i64], tt.grid_axes = #tt.grid_axes<m = 1 : i64, n = 0 : i64>, tt.shard_grid = [1 : i64, 1 : i64], tt.local_shape_tiles = [2 : i64, 2 : i64], tt.core_ranges = [[0 : i64, 0 : i64, 3 : i64, 0 : i64]], tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">], tt.core_runtime_args = [[0 : i64, 0 : i64, 0 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [1 : i64, 0 : i64, 1 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [2 : i64, 0 : i64, 2 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64], [3 : i64, 0 : i64, 3 : i64, 1 : i64, 2 : i64, 1 : i64, 2 : i64]], tt.logical_grid = [2 : i64, 2 : i64], tt.core_grid = [8 : i64, 8 : i64], tt.global_roles = #tt.roles<A = "input", B = "input", C = "input", Y = "output">, tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>} {
    %a = tile.alloc {name = "a", scope = "shared"} : memref<64x64xbf16, "shared">
    %b = tile.alloc {name = "b", scope = "shared"} : memref<64x64xbf16, "shared">
    %c = tile.alloc {name = "c", scope = "shared"} : memref<64x64xbf16, "shared">
    %y = tile.alloc {name = "y", scope = "fragment"} : memref<64x64xbf16, "fragment">
    %start_id = tile.runtime_arg "start_id"
    %count = tile.runtime_arg "count"
    %Nt = tile.runtime_arg "Nt"
    %0 = arith.constant 0 : i32
    tile.for %0 to %count attributes {step = 1 : i32, kind = "persistent"} {
    ^bb0(%i: i32):
      %tid = arith.addi %start_id, %i : i32
      %m = arith.divui %tid, %Nt : i32
      %n = arith.remui %tid, %Nt : i32
      %1 = arith.constant 8 : i32
      %2 = arith.muli %m, %1 : i32
      %3 = arith.constant 2 : i32
      %4 = arith.muli %n, %3 : i32
      %5 = arith.addi %2, %4 : i32
      tile.read_block %5 {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 4 : i32}
      %6 = arith.constant 8 : i32
      %7 = arith.muli %m, %6 : i32
      %8 = arith.constant 2 : i32
      %9 = arith.muli %n, %8 : i32
      %10 = arith.addi %7, %9 : i32
      tile.read_block %10 {buffer = "B", cb = 1 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 4 : i32}
      %11 = arith.constant 8 : i32
      %12 = arith.muli %m, %11 : i32
      %13 = arith.constant 2 : i32
      %14 = arith.muli %n, %13 : i32
      %15 = arith.addi %12, %14 : i32
      tile.read_block %15 {buffer = "C", cb = 2 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 4 : i32}
      tile.parallel attributes {extents = array<i32: 64, 64>} {
      ^bb0(%i_1: i32, %j: i32):
        %16 = tile.load %a[%i_1, %j] : memref<64x64xbf16, "shared">
        %17 = tile.load %b[%i_1, %j] : memref<64x64xbf16, "shared">
        %18 = arith.mulf %16, %17 : f32
        %19 = tile.load %c[%i_1, %j] : memref<64x64xbf16, "shared">
        %20 = arith.addf %18, %19 : f32
        %21 = arith.constant 0.000000e+00 : f32
        %22 = arith.maximumf %20, %21 : f32
        tile.store %22, %y[%i_1, %j] : memref<64x64xbf16, "fragment">
      }
      %23 = arith.constant 8 : i32
      %24 = arith.muli %m, %23 : i32
      %25 = arith.constant 2 : i32
      %26 = arith.muli %n, %25 : i32
      %27 = arith.addi %24, %26 : i32
      tile.write_block %27 {buffer = "Y", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 4 : i32}
    }
    func.return
  }
}

// CHECK:      tile.stmt attributes {kind = "eltwise", reads = ["a", "b", "c"], writes = ["y"]} {
// CHECK:        scf.for %t = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
// CHECK-NEXT:     tile.dst_section attributes {mode = "section"} math {
// CHECK:            ttkernel.copy_tile(%[[A:.*]], %t, %[[D0:.*]]) : !ttkernel.cb, i32, i32
// CHECK:            ttkernel.copy_tile(%[[B:.*]], %t, %[[D1:.*]]) : !ttkernel.cb, i32, i32
// CHECK-NEXT:       ttkernel.mul_binary_tile(%[[D0]], %[[D1]], %[[D0]])
// CHECK:            ttkernel.copy_tile(%{{.*}}, %t, %[[D1]])
// CHECK-NEXT:       ttkernel.add_binary_tile(%[[D0]], %[[D1]], %[[D0]])
// CHECK-NEXT:       ttkernel.relu_tile(%[[D0]])
// CHECK-NEXT:     } pack {
// CHECK:            ttkernel.pack_tile(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT:  tile.parallel
