// RUN: lower-affine
// Input: the IR the pass runs on (as in tests/passes, test_pass_later_stages.test_ttkernel_lowering_of_a_reader); output: FileChecked below.

builtin.module attributes {ttl.circular_buffers = [#ttl.cb_entry<index = 0 : i64, name = "c_0", shape = [1 : i64, 2 : i64], data_format = "Float16_b", layout = "TILE", block_count = 2 : i64, page_size = 2048 : i64, block_pages = 2 : i64, num_pages = 4 : i64>]} {
  func.func @read() attributes {ttkernel.thread = "noc", ttl.kernel_role = "datamovement", ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "accessor", index = 0 : i64>], ttl.runtime_args = [#ttl.arg<kind = "address", index = 0 : i64>, #ttl.arg<kind = "node", index = 1 : i64>]} {
    %cb0 = ttkernel.get_compile_time_arg_val(0 : i32) : i32
    %cb_cb0 = ttkernel.cb(%cb0) : i32
    %x_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args
    %0 = arith.constant 0 : i32
    %1 = ttkernel.get_arg_val(%0) : (i32) -> i32
    %x_addr = arith.index_cast %1 : i32 to index
    %2 = arith.constant 2048 : i32
    %x = ttkernel.tensor_accessor(%x_args, %x_addr, %2) : !ttkernel.tensor_accessor_args, index, i32
    %3 = arith.constant 1 : i32
    %4 = ttkernel.get_arg_val(%3) : (i32) -> i32
    %node_y = arith.index_cast %4 : i32 to index
    %5 = arith.constant 2 : index
    ttkernel.cb_reserve_back(%cb_cb0, %5) : !ttkernel.cb, index
    %blk_addr = ttkernel.get_write_ptr(%cb_cb0) : (!ttkernel.cb) -> i32
    %c2 = arith.constant 2 : index
    %6 = arith.constant 4 : index
    %7 = arith.muli %node_y, %6 : index
    %8 = arith.constant 2 : index
    %first_page = arith.addi %7, %8 : index
    %9 = arith.constant 0 : index
    %10 = arith.constant 1 : index
    %11 = arith.constant 2 : index
    scf.for %t = %9 to %11 step %10 {
      %page = arith.addi %first_page, %t : index
      %12 = arith.constant 2048 : index
      %13 = arith.muli %t, %12 : index
      %14 = arith.index_cast %13 : index to i32
      %15 = arith.addi %blk_addr, %14 : i32
      %16 = arith.constant 0 : i32
      ttkernel.noc_async_read_page(%page, %x, %15, %16) : index, !ttkernel.tensor_accessor, i32, i32
    }
    ttkernel.noc_async_read_barrier()
    %17 = arith.constant 2 : index
    ttkernel.cb_push_back(%cb_cb0, %17) : !ttkernel.cb, index
    func.return
  }
}

// CHECK: ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "accessor", index = 0 : i64>], ttl.runtime_args = [#ttl.arg<kind = "address", index = 0 : i64>, #ttl.arg<kind = "node", index = 1 : i64>]
//     CHECK: %[[INDEX:.+]] = ttkernel.get_compile_time_arg_val(0 : i32)
//     CHECK: %[[CB:.+]] = ttkernel.cb(%[[INDEX]]) : i32
//     CHECK: %[[ARGS:.+]] = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32}
//     CHECK: %[[ACC:.+]] = ttkernel.tensor_accessor(%[[ARGS]], %{{.+}}, %{{.+}})
//     CHECK: %[[Y:.+]] = arith.index_cast
//     CHECK: ttkernel.cb_reserve_back(%[[CB]], %{{.+}})
//     CHECK: %[[ADDR:.+]] = ttkernel.get_write_ptr(%[[CB]])
//     CHECK: %[[ROW:.+]] = arith.muli %node_y, %{{.+}} : index
//     CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
//     CHECK: ttkernel.noc_async_read_page(%{{.+}}, %[[ACC]], %{{.+}}, %{{.+}})
//     CHECK: ttkernel.noc_async_read_barrier()
//     CHECK: ttkernel.cb_push_back(%[[CB]], %{{.+}})
