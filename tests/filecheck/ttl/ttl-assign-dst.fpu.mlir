// RUN: ttl-assign-dst
// Input: the add-then-exp body of ttl-assign-dst.mlir with the FPU's binary ops on (the default): the add
// of two input tiles reads both from their circular buffers (ttl.tile_fpu_add with each operand's tile
// index), so no tile is copied into DST and the result alone takes a slot.

builtin.module {
  func.func @k() attributes {ttkernel.thread = "compute", ttl.kernel_role = "compute"} {
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
//     CHECK-SAME: ttl.dst_footprint = 0 : i32
//     CHECK-NOT: ttl.copy_tile
//     CHECK: %[[I:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = 0 : i32}
//     CHECK: %[[J:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {ttl.operand = 1 : i32}
//     CHECK: ttl.tile_fpu_add %xt, %yt [%[[I]], %[[J]]] {dst_idx = 0 : i32, ttl.dst_output}
//     CHECK-NEXT: ttl.tile_exp {{.*}} {dst_idx = 0 : i32, ttl.dst_output}
