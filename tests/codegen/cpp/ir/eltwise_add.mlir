// out = a + b tile by tile: CB c_0 + CB c_1 -> CB c_16, per_core_tiles from compile-time arg 0.
func.func @eltwise_add() attributes {ttkernel.thread = "compute"} {
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %c1 = arith.constant 1 : i32
  %cb_c1 = ttkernel.cb(%c1) : i32
  %c16 = arith.constant 16 : i32
  %cb_c16 = ttkernel.cb(%c16) : i32
  %per_core_tiles = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  ttkernel.binary_op_init_common(%cb_c0, %cb_c1, %cb_c16) : !ttkernel.cb, !ttkernel.cb, !ttkernel.cb
  ttkernel.add_tiles_init(%cb_c0, %cb_c1) : !ttkernel.cb, !ttkernel.cb
  scf.for %i = %c0 to %per_core_tiles step %c1 : i32 {
    ttkernel.cb_wait_front(%cb_c0, %c1) : !ttkernel.cb, i32
    ttkernel.cb_wait_front(%cb_c1, %c1) : !ttkernel.cb, i32
    ttkernel.cb_reserve_back(%cb_c16, %c1) : !ttkernel.cb, i32
    ttkernel.tile_regs_acquire()
    ttkernel.add_tiles(%cb_c0, %cb_c1, %c0, %c0, %c0) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32
    ttkernel.tile_regs_commit()
    ttkernel.tile_regs_wait()
    ttkernel.pack_tile(%c0, %cb_c16, %c0) : i32, !ttkernel.cb, i32
    ttkernel.tile_regs_release()
    ttkernel.cb_push_back(%cb_c16, %c1) : !ttkernel.cb, i32
    ttkernel.cb_pop_front(%cb_c0, %c1) : !ttkernel.cb, i32
    ttkernel.cb_pop_front(%cb_c1, %c1) : !ttkernel.cb, i32
  }
  func.return
}
