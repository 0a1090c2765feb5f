// RUN: ttl-set-compute-kernel-config
// Input: the IR the pass runs on (as in tests/passes, test_pass_later_stages.test_config_defaults_to_16_bit_dst_and_hifi4); output: FileChecked below.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute"} {
    %cb0 = ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb1 = ttl.bind_cb {cb_index = 1 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %cb2 = ttl.bind_cb {cb_index = 2 : i32, block_count = 2 : i32} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    %a = ttl.cb_wait %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %b = ttl.cb_wait %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %o = ttl.cb_reserve %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    %s = ttl.add %a, %b : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>> -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    ttl.store %s, %o : tensor<2x2x!ttcore.tile<32x32, bf16>>, tensor<2x2x!ttcore.tile<32x32, bf16>>
    ttl.cb_pop %cb0 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    ttl.cb_pop %cb1 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    ttl.cb_push %cb2 : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    func.return
  }
}

// CHECK: ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>
