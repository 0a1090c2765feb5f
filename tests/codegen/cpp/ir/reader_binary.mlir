// Reads tiles start_id.. of two interleaved buffers into CB c_0 and CB c_1; the second buffer's
// TensorAccessorArgs follow the first's in the compile-time arguments.
func.func @reader_binary() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %c1 = arith.constant 1 : i32
  %cb_c1 = ttkernel.cb(%c1) : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %a_addr = ttkernel.get_arg_val(%c0) : (i32) -> i32
  %b_addr = ttkernel.get_arg_val(%c1) : (i32) -> i32
  %num_tiles = ttkernel.get_arg_val(%c2) : (i32) -> i32
  %start_id = ttkernel.get_arg_val(%c3) : (i32) -> i32
  %a_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32} : !ttkernel.tensor_accessor_args
  %b_args = ttkernel.tensor_accessor_args(%a_args) : !ttkernel.tensor_accessor_args
  %tile_bytes = ttkernel.get_tile_size(%cb_c0) : (!ttkernel.cb) -> i32
  %a = ttkernel.tensor_accessor(%a_args, %a_addr, %tile_bytes) : !ttkernel.tensor_accessor_args, i32, i32
  %b = ttkernel.tensor_accessor(%b_args, %b_addr, %tile_bytes) : !ttkernel.tensor_accessor_args, i32, i32
  %end = arith.addi %start_id, %num_tiles : i32
  scf.for %i = %start_id to %end step %c1 : i32 {
    ttkernel.cb_reserve_back(%cb_c0, %c1) : !ttkernel.cb, i32
    ttkernel.cb_reserve_back(%cb_c1, %c1) : !ttkernel.cb, i32
    %0 = ttkernel.get_write_ptr(%cb_c0) : (!ttkernel.cb) -> i32
    ttkernel.noc_async_read_page(%i, %a, %0, %c0) : i32, !ttkernel.tensor_accessor, i32, i32
    %1 = ttkernel.get_write_ptr(%cb_c1) : (!ttkernel.cb) -> i32
    ttkernel.noc_async_read_page(%i, %b, %1, %c0) : i32, !ttkernel.tensor_accessor, i32, i32
    ttkernel.noc_async_read_barrier()
    ttkernel.cb_push_back(%cb_c0, %c1) : !ttkernel.cb, i32
    ttkernel.cb_push_back(%cb_c1, %c1) : !ttkernel.cb, i32
  }
  func.return
}
