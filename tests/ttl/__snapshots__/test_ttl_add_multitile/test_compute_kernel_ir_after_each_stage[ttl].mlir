func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttl.fpu_binary_ops = false} {
  %lhs_cb = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32, name = "lhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %rhs_cb = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32, name = "rhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %out_cb = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32, name = "out_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %l = ttl.cb_wait %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %r = ttl.cb_wait %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %o = ttl.cb_reserve %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %0 = ttl.add %l, %r : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.store %0, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.cb_pop %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_pop %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_push %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  func.return
}
