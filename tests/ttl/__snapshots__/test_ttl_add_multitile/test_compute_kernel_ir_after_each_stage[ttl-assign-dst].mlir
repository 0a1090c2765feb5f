func.func @add_compute() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute", ttl.fpu_binary_ops = false, ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>} {
  %lhs_cb = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32, name = "lhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %rhs_cb = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32, name = "rhs_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %out_cb = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32, name = "out_cb"} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  %l = ttl.cb_wait %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %r = ttl.cb_wait %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %o = ttl.cb_reserve %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %0 = tensor.empty() : tensor<2x2x!ttcore.tile<32x32, bf16>>
  %1 = ttl.attach_cb %0, %out_cb : tensor<2x2x!ttcore.tile<32x32, bf16>>, !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  %2 = ttl.compute ins(%l, %r : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>) outs(%1 : tensor<2x2x!ttcore.tile<32x32, bf16>>) attributes {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"], ttl.dst_footprint = 2 : i32} {
  ^bb0(%3: !ttcore.tile<32x32, bf16>, %4: !ttcore.tile<32x32, bf16>, %5: !ttcore.tile<32x32, bf16>):
    %out_lin = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = -1 : i32, ttl.dst_output_index} : index
    %6 = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = 0 : i32} : index
    %7 = arith.constant 0 : index
    %8, %9 = ttl.copy_tile %3, %6, %7 : !ttcore.tile<32x32, bf16>, index, index -> !ttl.dst, !ttcore.tile<32x32, bf16>
    %10 = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = 1 : i32} : index
    %11 = arith.constant 1 : index
    %12, %13 = ttl.copy_tile %4, %10, %11 : !ttcore.tile<32x32, bf16>, index, index -> !ttl.dst, !ttcore.tile<32x32, bf16>
    %14 = ttl.tile_add %9, %13 {dst_idx = 2 : i32, ttl.dst_output} : !ttcore.tile<32x32, bf16>
    ttl.yield %14 : !ttcore.tile<32x32, bf16>
  } -> tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.store %2, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
  ttl.cb_pop %lhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_pop %rhs_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  ttl.cb_push %out_cb : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
  func.return
}
