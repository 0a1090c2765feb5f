// RUN: ttl-annotate-cb-associations
// Input: the IR the pass runs on (as in tests/passes, test_pass_later_stages.test_annotations_name_each_access_buffer_and_the_module_table); output: FileChecked below.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>} {
    %cb0 = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb1 = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb2 = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %a = ttl.cb_wait %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %b = ttl.cb_wait %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %o = ttl.cb_reserve %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    ttl.init_sfpu(%cb0, %cb2) : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>, !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    ttl.tile_regs_acquire
    %0 = arith.constant 0 : index
    %1 = arith.constant 1 : index
    %2 = arith.constant 2 : index
    scf.for %i0 = %0 to %2 step %1 {
      scf.for %i1 = %0 to %2 step %1 {
        %out_lin = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
        %3 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
        %4 = arith.constant 0 : index
        %extracted = tensor.extract %a[%i0, %i1] : tensor<2x2x!ttcore.tile<32x32, bf16>>
        %5, %6 = ttl.copy_tile %extracted, %3, %4 : !ttcore.tile<32x32, bf16>, index, index -> !ttl.dst, !ttcore.tile<32x32, bf16>
        %7 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
        %8 = arith.constant 1 : index
        %extracted_1 = tensor.extract %b[%i0, %i1] : tensor<2x2x!ttcore.tile<32x32, bf16>>
        %9, %10 = ttl.copy_tile %extracted_1, %7, %8 : !ttcore.tile<32x32, bf16>, index, index -> !ttl.dst, !ttcore.tile<32x32, bf16>
        %11 = ttl.tile_add %6, %10 {dst_idx = 2 : i32, ttl.dst_output} : !ttcore.tile<32x32, bf16>
      }
    } {ttl.dst_footprint = 2 : i32}
    ttl.tile_regs_commit
    ttl.tile_regs_wait
    %12 = arith.constant 0 : index
    %13 = arith.constant 1 : index
    %14 = arith.constant 2 : index
    scf.for %p0 = %12 to %14 step %13 {
      scf.for %p1 = %12 to %14 step %13 {
        %cb_tile = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%p0, %p1)
        ttl.pack_tile %cb_tile, %cb_tile, %o {ttl.dst_footprint = 2 : i32, ttl.sequential} : tensor<2x2x!ttcore.tile<32x32, bf16>>
      }
    } {ttl.dst_footprint = 2 : i32}
    ttl.tile_regs_release
    ttl.cb_pop %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    ttl.cb_pop %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    ttl.cb_push %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    func.return
  }
}

// CHECK: ttl.circular_buffers = [#ttl.cb_entry<index = 0 : i64, name = "c_0", shape = [2 : i64, 2 : i64], data_format = "Float16_b", layout = "TILE", block_count = 2 : i64, page_size = 2048 : i64, block_pages = 4 : i64, num_pages = 8 : i64>
//     CHECK: ttl.copy_tile {{.*}}ttl.cb_index = [0 : i32], ttl.cb_tile_offset = [0 : i32]
//     CHECK: ttl.copy_tile {{.*}}ttl.cb_index = [1 : i32]
//     CHECK: ttl.pack_tile {{.*}}ttl.cb_index = [2 : i32]
