func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>, ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "cb", index = 1 : i64>, #ttl.arg<kind = "cb", index = 2 : i64>], ttl.runtime_args = []} {
  %lhs_cb = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %0 = ttkernel.cb(%lhs_cb) : i32
  %rhs_cb = ttkernel.get_compile_time_arg_val(1 : i32) : i32
  %1 = ttkernel.cb(%rhs_cb) : i32
  %out_cb = ttkernel.get_compile_time_arg_val(2 : i32) : i32
  %2 = ttkernel.cb(%out_cb) : i32
  %3 = arith.constant 4 : index
  ttkernel.cb_wait_front(%0, %3) : !ttkernel.cb, index
  %4 = arith.constant 4 : index
  ttkernel.cb_wait_front(%1, %4) : !ttkernel.cb, index
  %5 = arith.constant 4 : index
  ttkernel.cb_reserve_back(%2, %5) : !ttkernel.cb, index
  ttkernel.init_sfpu(%0, %2) : !ttkernel.cb, !ttkernel.cb
  ttkernel.tile_regs_acquire()
  %6 = arith.constant 0 : index
  %7 = arith.constant 1 : index
  %8 = arith.constant 2 : index
  scf.for %i0 = %6 to %8 step %7 {
    scf.for %i1 = %6 to %8 step %7 {
      %out_lin = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %9 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %10 = arith.constant 0 : index
      ttkernel.copy_tile_init(%0) : !ttkernel.cb
      ttkernel.copy_tile(%0, %9, %10) : !ttkernel.cb, index, index
      %11 = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%i0, %i1)
      %12 = arith.constant 1 : index
      ttkernel.copy_tile_init(%1) : !ttkernel.cb
      ttkernel.copy_tile(%1, %11, %12) : !ttkernel.cb, index, index
      ttkernel.add_binary_tile_init()
      %13 = arith.constant 2 : index
      %dst_out = arith.addi %out_lin, %13 : index
      ttkernel.add_binary_tile(%10, %12, %dst_out) : index, index, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_commit()
  ttkernel.tile_regs_wait()
  %14 = arith.constant 0 : index
  %15 = arith.constant 1 : index
  %16 = arith.constant 2 : index
  scf.for %p0 = %14 to %16 step %15 {
    scf.for %p1 = %14 to %16 step %15 {
      %cb_tile = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%p0, %p1)
      %17 = arith.constant 2 : index
      %pack_dst = arith.addi %cb_tile, %17 : index
      ttkernel.pack_tile(%pack_dst, %2, %cb_tile) {out_of_order_output = false} : index, !ttkernel.cb, index
    }
  } {ttl.dst_footprint = 2 : i32}
  ttkernel.tile_regs_release()
  %18 = arith.constant 4 : index
  ttkernel.cb_pop_front(%0, %18) : !ttkernel.cb, index
  %19 = arith.constant 4 : index
  ttkernel.cb_pop_front(%1, %19) : !ttkernel.cb, index
  %20 = arith.constant 4 : index
  ttkernel.cb_push_back(%2, %20) : !ttkernel.cb, index
  func.return
}
