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
      %out_lin = arith.constant 2 : index
      %out_lin_1 = arith.muli %i0, %out_lin : index
      %out_lin_2 = arith.addi %out_lin_1, %i1 : index
      %6 = arith.constant 2 : index
      %7 = arith.muli %i0, %6 : index
      %8 = arith.addi %7, %i1 : index
      %9 = arith.constant 0 : index
      ttkernel.copy_tile_init(%cb_lhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_lhs_cb, %8, %9) : !ttkernel.cb, index, index
      %10 = arith.constant 2 : index
      %11 = arith.muli %i0, %10 : index
      %12 = arith.addi %11, %i1 : index
      %13 = arith.constant 1 : index
      ttkernel.copy_tile_init(%cb_rhs_cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb_rhs_cb, %12, %13) : !ttkernel.cb, index, index
      ttkernel.add_binary_tile_init()
      %14 = arith.constant 2 : index
      %dst_out = arith.addi %out_lin_2, %14 : index
      ttkernel.add_binary_tile(%9, %13, %dst_out) : index, index, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_commit()
  ttkernel.tile_regs_wait()
  %15 = arith.constant 0 : index
  %16 = arith.constant 1 : index
  %17 = arith.constant 2 : index
  scf.for %p0 = %15 to %17 step %16 {
    scf.for %p1 = %15 to %17 step %16 {
      %cb_tile = arith.constant 2 : index
      %cb_tile_1 = arith.muli %p0, %cb_tile : index
      %cb_tile_2 = arith.addi %cb_tile_1, %p1 : index
      %18 = arith.constant 2 : index
      %pack_dst = arith.addi %cb_tile_2, %18 : index
      ttkernel.pack_tile(%pack_dst, %cb_out_cb, %cb_tile_2) {out_of_order_output = false} : index, !ttkernel.cb, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_release()
  %19 = arith.constant 4 : index
  ttkernel.cb_pop_front(%cb_lhs_cb, %19) : !ttkernel.cb, index
  %20 = arith.constant 4 : index
  ttkernel.cb_pop_front(%cb_rhs_cb, %20) : !ttkernel.cb, index
  %21 = arith.constant 4 : index
  ttkernel.cb_push_back(%cb_out_cb, %21) : !ttkernel.cb, index
  func.return
}
