// Sums each row of Wt tiles into one tile (REDUCE_ROW), then takes exp of the sums.
func.func @reduce_rows() attributes {ttkernel.thread = "compute"} {
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %cb_c2 = ttkernel.cb(%c2) : i32
  %c16 = arith.constant 16 : i32
  %cb_c16 = ttkernel.cb(%c16) : i32
  %Ht = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %Wt = ttkernel.get_compile_time_arg_val(1 : i32) : i32
  ttkernel.compute_kernel_hw_startup(%cb_c0, %cb_c2, %cb_c16) : !ttkernel.cb, !ttkernel.cb, !ttkernel.cb
  ttkernel.reduce_init(%cb_c0, %cb_c2, %cb_c16) {pool_type = "SUM", reduce_dim = "REDUCE_ROW"} : !ttkernel.cb, !ttkernel.cb, !ttkernel.cb
  ttkernel.cb_wait_front(%cb_c2, %c1) : !ttkernel.cb, i32
  scf.for %h = %c0 to %Ht step %c1 : i32 {
    ttkernel.tile_regs_acquire()
    scf.for %w = %c0 to %Wt step %c1 : i32 {
      ttkernel.cb_wait_front(%cb_c0, %c1) : !ttkernel.cb, i32
      ttkernel.reduce_tile(%cb_c0, %cb_c2, %c0, %c0, %c0) {pool_type = "SUM", reduce_dim = "REDUCE_ROW"} : !ttkernel.cb, !ttkernel.cb, i32, i32, i32
      ttkernel.cb_pop_front(%cb_c0, %c1) : !ttkernel.cb, i32
    }
    ttkernel.exp_tile_init()
    ttkernel.exp_tile(%c0) : i32
    ttkernel.tile_regs_commit()
    ttkernel.cb_reserve_back(%cb_c16, %c1) : !ttkernel.cb, i32
    ttkernel.tile_regs_wait()
    ttkernel.pack_tile(%c0, %cb_c16, %c0) {out_of_order_output = false} : i32, !ttkernel.cb, i32
    ttkernel.tile_regs_release()
    ttkernel.cb_push_back(%cb_c16, %c1) : !ttkernel.cb, i32
  }
  ttkernel.reduce_uninit()
  func.return
}
