// RUN: ttl-assign-dst
// Input: the IR the pass runs on (as in tests/passes, test_pass_assign_dst.test_binary_takes_a_fresh_slot_unary_works_in_place_result_at_footprint_plus_index); output: FileChecked below.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.fpu_binary_ops = false, ttl.kernel_role = "compute"} {
    %cb0 = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb1 = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb2 = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %x = ttl.cb_wait %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %y = ttl.cb_wait %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %o = ttl.cb_reserve %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %empty = tensor.empty() : tensor<2x2x!ttcore.tile<32x32, bf16>>
    %oa = ttl.attach_cb %empty, %cb2 : tensor<2x2x!ttcore.tile<32x32, bf16>>, !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %r = ttl.compute ins(%x, %y : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>) outs(%oa : tensor<2x2x!ttcore.tile<32x32, bf16>>) attributes {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} {
    ^bb0(%xt: !ttcore.tile<32x32, bf16>, %yt: !ttcore.tile<32x32, bf16>, %out: !ttcore.tile<32x32, bf16>):
      %s = ttl.tile_add %xt, %yt : !ttcore.tile<32x32, bf16>
      %e = ttl.tile_exp %s : !ttcore.tile<32x32, bf16>
      ttl.yield %e : !ttcore.tile<32x32, bf16>
    } -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    ttl.store %r, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
    func.return
  }
}

// CHECK: ttl.compute
//     CHECK-SAME: ttl.dst_footprint = 2 : i32
//     CHECK: %[[OUT:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {{.*}}ttl.dst_output_index
//     CHECK: %[[I:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = 0 : i32}
//     CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
//     CHECK-NEXT: ttl.copy_tile %xt, %[[I]], %[[C0]]
//     CHECK: %[[C1:.+]] = arith.constant 1 : index
//     CHECK-NEXT: ttl.copy_tile %yt, %{{.+}}, %[[C1]]
//     CHECK-NEXT: ttl.tile_add {{.*}} {dst_idx = 2 : i32, ttl.dst_output}
//     CHECK-NEXT: ttl.tile_exp {{.*}} {dst_idx = 2 : i32, ttl.dst_output}
