// Reads num_tiles tiles of an interleaved buffer into CB c_0, one page at a time.
func.func @reader_tiles() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %src_addr = ttkernel.get_arg_val(%c0) : (i32) -> i32 loc("reader_tiles.py":8:4)
  %num_tiles = ttkernel.get_arg_val(%c1) : (i32) -> i32 loc("reader_tiles.py":9:4)
  %start_id = ttkernel.get_arg_val(%c2) : (i32) -> i32 loc("reader_tiles.py":10:4)
  %cb_in = ttkernel.get_compile_time_arg_val(0 : i32) : i32 loc("reader_tiles.py":11:4)
  %cb_cb_in = ttkernel.cb(%cb_in) : i32
  %src_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args loc("reader_tiles.py":12:4)
  %tile_bytes = ttkernel.get_tile_size(%cb_cb_in) : (!ttkernel.cb) -> i32 loc("reader_tiles.py":13:4)
  %src = ttkernel.tensor_accessor(%src_args, %src_addr, %tile_bytes) : !ttkernel.tensor_accessor_args, i32, i32 loc("reader_tiles.py":14:4)
  scf.for %i = %c0 to %num_tiles step %c1 : i32 {
    ttkernel.cb_reserve_back(%cb_cb_in, %c1) : !ttkernel.cb, i32 loc("reader_tiles.py":16:8)
    %l1_write_addr = ttkernel.get_write_ptr(%cb_cb_in) : (!ttkernel.cb) -> i32 loc("reader_tiles.py":17:8)
    %0 = arith.addi %start_id, %i : i32 loc("reader_tiles.py":18:8)
    ttkernel.noc_async_read_page(%0, %src, %l1_write_addr, %c0) : i32, !ttkernel.tensor_accessor, i32, i32 loc("reader_tiles.py":18:8)
    ttkernel.noc_async_read_barrier() loc("reader_tiles.py":19:8)
    ttkernel.cb_push_back(%cb_cb_in, %c1) : !ttkernel.cb, i32 loc("reader_tiles.py":20:8)
  } loc("reader_tiles.py":15:4)
  func.return
}
