// RUN: convert-ttl-to-compute,ttl-set-compute-kernel-config,ttl-assign-dst,ttl-insert-tile-regs-sync,ttl-lower-to-loops,ttl-annotate-cb-associations,convert-ttl-to-ttkernel
// Input: the ttl IR the TT-Lang pipeline starts from; the lowering needs the passes before it in one run (as in tests/passes, test_pass_later_stages.test_ttkernel_lowering_of_a_compute_kernel); output: FileChecked below.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.fpu_binary_ops = false, ttl.kernel_role = "compute"} {
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

// CHECK: ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "cb", index = 1 : i64>, #ttl.arg<kind = "cb", index = 2 : i64>], ttl.runtime_args = []
//     CHECK: %[[I0:.+]] = ttkernel.get_compile_time_arg_val(0 : i32)
//     CHECK: %[[C0:.+]] = ttkernel.cb(%[[I0]]) : i32
//     CHECK: %[[I2:.+]] = ttkernel.get_compile_time_arg_val(2 : i32)
//     CHECK: %[[C2:.+]] = ttkernel.cb(%[[I2]]) : i32
//     CHECK: ttkernel.cb_wait_front(%[[C0]], %{{.+}})
//     CHECK: ttkernel.cb_reserve_back(%[[C2]], %{{.+}})
//     CHECK: ttkernel.init_sfpu(%[[C0]], %[[C2]])
//     CHECK: ttkernel.copy_tile_init(%[[C0]])
//     CHECK: ttkernel.add_binary_tile_init()
//     CHECK: ttkernel.pack_tile({{.*}}) {out_of_order_output = false}
//     CHECK: ttkernel.cb_pop_front(%[[C0]], %{{.+}})
//     CHECK: ttkernel.cb_push_back(%[[C2]], %{{.+}})
