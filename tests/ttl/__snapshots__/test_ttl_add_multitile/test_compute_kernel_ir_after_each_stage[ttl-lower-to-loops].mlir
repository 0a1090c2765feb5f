func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttl.fpu_binary_ops = false, ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>} {
  %lhs_cb = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32, name = "lhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %rhs_cb = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32, name = "rhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %out_cb = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32, name = "out_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %l = ttl.cb_wait %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %r = ttl.cb_wait %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %o = ttl.cb_reserve %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.init_sfpu(%lhs_cb, %out_cb) : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>, !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.tile_regs_acquire
  %0 = arith.constant 0 : index
  %1 = arith.constant 1 : index
  %2 = arith.constant 2 : index
  scf.for %i0 = %0 to %2 step %1 {
    scf.for %i1 = %0 to %2 step %1 {
      %out_lin = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %3 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %4 = arith.constant 0 : index
      %extracted = tensor.extract %l[%i0, %i1] : tensor<2x2x!ttcore.tile<32x32, bf16>>
      %5, %6 = ttl.copy_tile %extracted, %3, %4 : !ttcore.tile<32x32, bf16>, index, index -> !ttl.dst, !ttcore.tile<32x32, bf16>
      %7 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %8 = arith.constant 1 : index
      %extracted_1 = tensor.extract %r[%i0, %i1] : tensor<2x2x!ttcore.tile<32x32, bf16>>
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
  ttl.cb_pop %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_pop %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_push %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  func.return
}
