func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>, ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "cb", index = 1 : i64>, #ttl.arg<kind = "cb", index = 2 : i64>], ttl.runtime_args = []} {
  %0 = arith.constant 2 : index
  %1 = arith.constant 0 : index
  %2 = arith.constant 1 : index
  %lhs_cb = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %cb_lhs_cb = ttkernel.cb(%lhs_cb) : i32
  %rhs_cb = ttkernel.get_compile_time_arg_val(1 : i32) : i32
  %cb_rhs_cb = ttkernel.cb(%rhs_cb) : i32
  %out_cb = ttkernel.get_compile_time_arg_val(2 : i32) : i32
  %cb_out_cb = ttkernel.cb(%out_cb) : i32
  %3 = arith.constant 4 : index
  ttkernel.cb_wait_front(%cb_lhs_cb, %3) : !ttkernel.cb, index
  ttkernel.cb_wait_front(%cb_rhs_cb, %3) : !ttkernel.cb, index
  ttkernel.cb_reserve_back(%cb_out_cb, %3) : !ttkernel.cb, index
  ttkernel.init_sfpu(%cb_lhs_cb, %cb_out_cb) : !ttkernel.cb, !ttkernel.cb
  ttkernel.tile_regs_acquire()
  scf.for %i0 = %1 to %0 step %2 {
    scf.for %i1 = %1 to %0 step %2 {
      %out_lin = arith.muli %i0, %0 : index
      %out_lin_1 = arith.addi %out_lin, %i1 : index
      ttkernel.copy_tile_init(%cb_lhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_lhs_cb, %out_lin_1, %1) : !ttkernel.cb, index, index
      ttkernel.copy_tile_init(%cb_rhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_rhs_cb, %out_lin_1, %2) : !ttkernel.cb, index, index
      ttkernel.add_binary_tile_init()
      %dst_out = arith.addi %out_lin_1, %0 : index
      ttkernel.add_binary_tile(%1, %2, %dst_out) : index, index, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_commit()
  ttkernel.tile_regs_wait()
  scf.for %p0 = %1 to %0 step %2 {
    scf.for %p1 = %1 to %0 step %2 {
      %cb_tile = arith.muli %p0, %0 : index
      %cb_tile_1 = arith.addi %cb_tile, %p1 : index
      %pack_dst = arith.addi %cb_tile_1, %0 : index
      ttkernel.pack_tile(%pack_dst, %cb_out_cb, %cb_tile_1) {out_of_order_output = false} : index, !ttkernel.cb, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_release()
  ttkernel.cb_pop_front(%cb_lhs_cb, %3) : !ttkernel.cb, index
  ttkernel.cb_pop_front(%cb_rhs_cb, %3) : !ttkernel.cb, index
  ttkernel.cb_push_back(%cb_out_cb, %3) : !ttkernel.cb, index
  func.return
}
