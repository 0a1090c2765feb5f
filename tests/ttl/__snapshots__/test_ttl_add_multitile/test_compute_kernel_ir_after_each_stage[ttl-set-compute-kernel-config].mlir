func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttl.fpu_binary_ops = false, ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>} {
  %lhs_cb = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32, name = "lhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %rhs_cb = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32, name = "rhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %out_cb = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32, name = "out_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %l = ttl.cb_wait %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %r = ttl.cb_wait %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %o = ttl.cb_reserve %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %0 = tensor.empty() : tensor<2x2x!ttcore.tile<32x32, bf16>>
  %1 = ttl.attach_cb %0, %out_cb : tensor<2x2x!ttcore.tile<32x32, bf16>>, !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %2 = ttl.compute ins(%l, %r : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>) outs(%1 : tensor<2x2x!ttcore.tile<32x32, bf16>>) attributes {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} {
  ^bb0(%3: !ttcore.tile<32x32, bf16>, %4: !ttcore.tile<32x32, bf16>, %5: !ttcore.tile<32x32, bf16>):
    %6 = ttl.tile_add %3, %4 : !ttcore.tile<32x32, bf16>
    ttl.yield %6 : !ttcore.tile<32x32, bf16>
  } -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.store %2, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.cb_pop %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_pop %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_push %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  func.return
}
