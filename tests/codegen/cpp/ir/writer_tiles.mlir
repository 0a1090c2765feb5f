// Writes num_pages tiles from CB cb_out (compile-time arg 0) to an interleaved buffer.
func.func @writer_tiles() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %dst_addr = ttkernel.get_arg_val(%c0) : (i32) -> i32
  %num_pages = ttkernel.get_arg_val(%c1) : (i32) -> i32
  %start_id = ttkernel.get_arg_val(%c2) : (i32) -> i32
  %cb_out = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %cb_cb_out = ttkernel.cb(%cb_out) : i32
  %dst_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args
  %page_bytes = ttkernel.get_tile_size(%cb_cb_out) : (!ttkernel.cb) -> i32
  %dst = ttkernel.tensor_accessor(%dst_args, %dst_addr, %page_bytes) : !ttkernel.tensor_accessor_args, i32, i32
  %0 = arith.addi %start_id, %num_pages : i32
  scf.for %i = %start_id to %0 step %c1 : i32 {
    ttkernel.cb_wait_front(%cb_cb_out, %c1) : !ttkernel.cb, i32
    %l1_read_addr = ttkernel.get_read_ptr(%cb_cb_out) : (!ttkernel.cb) -> i32
    ttkernel.noc_async_write_page(%i, %dst, %l1_read_addr, %c0, %c0) : i32, !ttkernel.tensor_accessor, i32, i32, i32
    ttkernel.noc_async_writes_flushed()
    ttkernel.cb_pop_front(%cb_cb_out, %c1) : !ttkernel.cb, i32
  }
  ttkernel.noc_async_write_barrier()
  func.return
}
