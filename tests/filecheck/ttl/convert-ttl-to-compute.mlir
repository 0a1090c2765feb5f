// RUN: convert-ttl-to-compute
// Input: the IR the pass runs on (as in tests/passes, test_pass_convert_ttl_to_compute.test_elementwise_chain_fuses_into_one_compute); output: FileChecked below.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute"} {
    %cb0 = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb1 = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb2 = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %a = ttl.cb_wait %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %b = ttl.cb_wait %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %o = ttl.cb_reserve %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %s = ttl.mul %a, %b : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %t = ttl.add_scalar %s {value = 1.000000e+00 : f32} : tensor<2x2x!ttcore.tile<32x32, bf16>> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %u = ttl.exp %t : tensor<2x2x!ttcore.tile<32x32, bf16>> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    ttl.store %u, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
    func.return
  }
}

// CHECK: %[[E:.+]] = tensor.empty() : tensor<2x2x!ttcore.tile<32x32, bf16>>
//     CHECK: %[[O:.+]] = ttl.attach_cb %[[E]], %cb2
//     CHECK: %[[R:.+]] = ttl.compute ins(%a, %b : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>) outs(%[[O]] : tensor<2x2x!ttcore.tile<32x32, bf16>>)
//     CHECK-SAME: iterator_types = ["parallel", "parallel"]
//     CHECK: ^bb0(%[[X:.+]]: !ttcore.tile<32x32, bf16>, %[[Y:.+]]: !ttcore.tile<32x32, bf16>, %{{.+}}: !ttcore.tile<32x32, bf16>):
//     CHECK-NEXT: %[[M:.+]] = ttl.tile_mul %[[X]], %[[Y]]
//     CHECK-NEXT: %[[A:.+]] = ttl.tile_add_scalar %[[M]] {value = 1.000000e+00 : f32}
//     CHECK-NEXT: %[[Z:.+]] = ttl.tile_exp %[[A]]
//     CHECK-NEXT: ttl.yield %[[Z]]
//     CHECK: ttl.store %[[R]], %o
//     CHECK-NOT: ttl.mul
//     CHECK-NOT: ttl.exp
