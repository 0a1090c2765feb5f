// Reads 32 row-major sticks per block into CB c_0 (the reader of the TT-Metal tilize factory): the NOC
// addresses of a block's sticks are gathered in a local array first; stick_id and
// l1_write_addr are mutable locals.
func.func @tilize_reader() attributes {ttkernel.thread = "noc"} {
  %c0 = arith.constant 0 : i32
  %cb_c0 = ttkernel.cb(%c0) : i32
  %c1 = arith.constant 1 : i32
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %c8 = arith.constant 8 : i32
  %c32 = arith.constant 32 : i32
  %stick_size = ttkernel.get_compile_time_arg_val(0 : i32) : i32
  %src_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args
  %src_addr = ttkernel.get_arg_val(%c0) : (i32) -> i32
  %num_sticks = ttkernel.get_arg_val(%c1) : (i32) -> i32
  %num_tiles_per_block = ttkernel.get_arg_val(%c3) : (i32) -> i32
  %block_width_size = ttkernel.get_arg_val(%c4) : (i32) -> i32
  %num_full_blocks_in_row = ttkernel.get_arg_val(%c5) : (i32) -> i32
  %start_stick_id = ttkernel.get_arg_val(%c8) : (i32) -> i32
  %s = ttkernel.tensor_accessor(%src_args, %src_addr, %stick_size) : !ttkernel.tensor_accessor_args, i32, i32
  %base_src_noc_addr = memref.alloca() : memref<32xi64>
  %stick_id = memref.alloca() : memref<i32>
  memref.store %start_stick_id, %stick_id[] : memref<i32>
  scf.for %i = %c0 to %num_sticks step %c32 : i32 {
    scf.for %j = %c0 to %c32 step %c1 : i32 {
      %0 = memref.load %stick_id[] : memref<i32>
      %1 = ttkernel.get_noc_addr(%0, %s, %c0) : (i32, !ttkernel.tensor_accessor, i32) -> i64
      %2 = arith.index_cast %j : i32 to index
      memref.store %1, %base_src_noc_addr[%2] : memref<32xi64>
      %3 = memref.load %stick_id[] : memref<i32>
      %4 = arith.addi %3, %c1 : i32
      memref.store %4, %stick_id[] : memref<i32>
    }
    scf.for %b = %c0 to %num_full_blocks_in_row step %c1 : i32 {
      ttkernel.cb_reserve_back(%cb_c0, %num_tiles_per_block) : !ttkernel.cb, i32
      %l1_write_addr = memref.alloca() : memref<i32>
      %5 = ttkernel.get_write_ptr(%cb_c0) : (!ttkernel.cb) -> i32
      memref.store %5, %l1_write_addr[] : memref<i32>
      scf.for %k = %c0 to %c32 step %c1 : i32 {
        %6 = arith.index_cast %k : i32 to index
        %7 = memref.load %base_src_noc_addr[%6] : memref<32xi64>
        %8 = memref.load %l1_write_addr[] : memref<i32>
        ttkernel.noc_async_read(%7, %8, %block_width_size) : i64, i32, i32
        %9 = memref.load %l1_write_addr[] : memref<i32>
        %10 = arith.addi %9, %block_width_size : i32
        memref.store %10, %l1_write_addr[] : memref<i32>
        %11 = memref.load %base_src_noc_addr[%6] : memref<32xi64>
        %12 = arith.extui %block_width_size : i32 to i64
        %13 = arith.addi %11, %12 : i64
        memref.store %13, %base_src_noc_addr[%6] : memref<32xi64>
      }
      ttkernel.noc_async_read_barrier()
      ttkernel.cb_push_back(%cb_c0, %num_tiles_per_block) : !ttkernel.cb, i32
    }
  }
  func.return
}
