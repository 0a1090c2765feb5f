func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>, ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "cb", index = 1 : i64>, #ttl.arg<kind = "cb", index = 2 : i64>], ttl.runtime_args = []} {
  %lhs_cb = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %cb_lhs_cb = ttkernel.cb(%lhs_cb) : i32
  %rhs_cb = ttkernel.get_compile_time_arg_val(1 : i32) : i32
  %cb_rhs_cb = ttkernel.cb(%rhs_cb) : i32
  %out_cb = ttkernel.get_compile_time_arg_val(2 : i32) : i32
  %cb_out_cb = ttkernel.cb(%out_cb) : i32
  %0 = arith.constant 4 : index
  ttkernel.cb_wait_front(%cb_lhs_cb, %0) : !ttkernel.cb, index
  %1 = arith.constant 4 : index
  ttkernel.cb_wait_front(%cb_rhs_cb, %1) : !ttkernel.cb, index
  %2 = arith.constant 4 : index
  ttkernel.cb_reserve_back(%cb_out_cb, %2) : !ttkernel.cb, index
  ttkernel.init_sfpu(%cb_lhs_cb, %cb_out_cb) : !ttkernel.cb, !ttkernel.cb
  ttkernel.tile_regs_acquire()
  %3 = arith.constant 0 : index
  %4 = arith.constant 1 : index
  %5 = arith.constant 2 : index
  scf.for %i0 = %3 to %5 step %4 {
    scf.for %i1 = %3 to %5 step %4 {
      %out_lin = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %6 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %7 = arith.constant 0 : index
      ttkernel.copy_tile_init(%cb_lhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_lhs_cb, %6, %7) : !ttkernel.cb, index, index
      %8 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %9 = arith.constant 1 : index
      ttkernel.copy_tile_init(%cb_rhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_rhs_cb, %8, %9) : !ttkernel.cb, index, index
      ttkernel.add_binary_tile_init()
      %10 = arith.constant 2 : index
      %dst_out = arith.addi %out_lin, %10 : index
      ttkernel.add_binary_tile(%7, %9, %dst_out) : index, index, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_commit()
  ttkernel.tile_regs_wait()
  %11 = arith.constant 0 : index
  %12 = arith.constant 1 : index
  %13 = arith.constant 2 : index
  scf.for %p0 = %11 to %13 step %12 {
    scf.for %p1 = %11 to %13 step %12 {
      %cb_tile = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%p0, %p1)
      %14 = arith.constant 2 : index
      %pack_dst = arith.addi %cb_tile, %14 : index
      ttkernel.pack_tile(%pack_dst, %cb_out_cb, %cb_tile) {out_of_order_output = false} : index, !ttkernel.cb, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_release()
  %15 = arith.constant 4 : index
  ttkernel.cb_pop_front(%cb_lhs_cb, %15) : !ttkernel.cb, index
  %16 = arith.constant 4 : index
  ttkernel.cb_pop_front(%cb_rhs_cb, %16) : !ttkernel.cb, index
  %17 = arith.constant 4 : index
  ttkernel.cb_push_back(%cb_out_cb, %17) : !ttkernel.cb, index
  func.return
}
