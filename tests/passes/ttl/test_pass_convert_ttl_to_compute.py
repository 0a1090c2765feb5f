"""convert-ttl-to-compute: block expressions → one fused ttl.compute per store (FileCheck on IR text)."""

from ttl_pass_helpers import T, cb, compute_kernel, filecheck, run

TT = f"tensor<2x2x{T}>"


def kernel(body, binds=((0, "2, 2", 2, T), (1, "2, 2", 2, T), (2, "2, 2", 2, T))):
    return compute_kernel(body, list(binds))


def test_elementwise_chain_fuses_into_one_compute():
    text = kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("2, 2")} -> {TT}
  %b = ttl.cb_wait %cb1 : {cb("2, 2")} -> {TT}
  %o = ttl.cb_reserve %cb2 : {cb("2, 2")} -> {TT}
  %s = ttl.mul %a, %b : {TT}, {TT} -> {TT}
  %t = ttl.add_scalar %s {{value = 1.0 : f32}} : {TT} -> {TT}
  %u = ttl.exp %t : {TT} -> {TT}
  ttl.store %u, %o : {TT}, {TT}""")
    filecheck(run(text, "convert-ttl-to-compute"), f"""
    CHECK: %[[E:.+]] = tensor.empty() : {TT}
    CHECK: %[[O:.+]] = ttl.attach_cb %[[E]], %cb2
    CHECK: %[[R:.+]] = ttl.compute ins(%a, %b : {TT}, {TT}) outs(%[[O]] : {TT})
    CHECK-SAME: iterator_types = ["parallel", "parallel"]
    CHECK: ^bb0(%[[X:.+]]: {T}, %[[Y:.+]]: {T}, %{{{{.+}}}}: {T}):
    CHECK-NEXT: %[[M:.+]] = ttl.tile_mul %[[X]], %[[Y]]
    CHECK-NEXT: %[[A:.+]] = ttl.tile_add_scalar %[[M]] {{value = 1.000000e+00 : f32}}
    CHECK-NEXT: %[[Z:.+]] = ttl.tile_exp %[[A]]
    CHECK-NEXT: ttl.yield %[[Z]]
    CHECK: ttl.store %[[R]], %o
    CHECK-NOT: ttl.mul
    CHECK-NOT: ttl.exp
    """)


def test_broadcast_reads_the_block_with_a_constant_map_and_no_internal_buffer():
    text = kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("2, 2")} -> {TT}
  %b = ttl.cb_wait %cb1 : {cb("2, 1")} -> tensor<2x1x{T}>
  %o = ttl.cb_reserve %cb2 : {cb("2, 2")} -> {TT}
  %bb = ttl.bcast %b {{dims = array<i64: 1>}} : tensor<2x1x{T}> -> {TT}
  %s = ttl.add %a, %bb : {TT}, {TT} -> {TT}
  ttl.store %s, %o : {TT}, {TT}""", ((0, "2, 2", 2, T), (1, "2, 1", 2, T), (2, "2, 2", 2, T)))
    filecheck(run(text, "convert-ttl-to-compute"), f"""
    CHECK-NOT: scratch
    CHECK: ttl.compute ins(%a, %b : {TT}, tensor<2x1x{T}>)
    CHECK-SAME: indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>]
    CHECK: %[[B:.+]] = ttl.tile_bcast %{{{{.+}}}} {{bcast_kind = "cols"}}
    CHECK-NEXT: ttl.tile_add %{{{{.+}}}}, %[[B]]
    CHECK-NOT: ttl.cb_pop
    CHECK: func.return
    """)


def test_matmul_iterates_m_n_k_with_k_a_reduction():
    text = kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("2, 3")} -> tensor<2x3x{T}>
  %b = ttl.cb_wait %cb1 : {cb("3, 2")} -> tensor<3x2x{T}>
  %c = ttl.cb_wait %cb2 : {cb("2, 2")} -> {TT}
  %o = ttl.cb_reserve %cb3 : {cb("2, 2")} -> {TT}
  %m = ttl.matmul %a, %b : tensor<2x3x{T}>, tensor<3x2x{T}> -> {TT}
  %s = ttl.add %c, %m : {TT}, {TT} -> {TT}
  ttl.store %s, %o : {TT}, {TT}""", ((0, "2, 3", 2, T), (1, "3, 2", 2, T), (2, "2, 2", 2, T), (3, "2, 2", 2, T)))
    filecheck(run(text, "convert-ttl-to-compute"), f"""
    CHECK: ttl.compute ins(%c, %a, %b : {TT}, tensor<2x3x{T}>, tensor<3x2x{T}>)
    CHECK-SAME: indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
    CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
    CHECK: %[[M:.+]] = ttl.tile_matmul
    CHECK-NEXT: ttl.tile_add %{{{{.+}}}}, %[[M]]
    """)


def test_reduction_under_a_broadcast_is_materialized_in_an_internal_buffer():
    text = kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("1, 2")} -> tensor<1x2x{T}>
  %o = ttl.cb_reserve %cb1 : {cb("1, 2")} -> tensor<1x2x{T}>
  %m = ttl.reduce_max %a {{dims = array<i64: 1>}} : tensor<1x2x{T}> -> tensor<1x1x{T}>
  %mb = ttl.bcast %m {{dims = array<i64: 1>}} : tensor<1x1x{T}> -> tensor<1x2x{T}>
  %s = ttl.sub %a, %mb : tensor<1x2x{T}>, tensor<1x2x{T}> -> tensor<1x2x{T}>
  ttl.store %s, %o : tensor<1x2x{T}>, tensor<1x2x{T}>""", ((0, "1, 2", 2, T), (1, "1, 2", 2, T)))
    filecheck(run(text, "convert-ttl-to-compute"), f"""
    CHECK: %[[S:.+]] = ttl.bind_cb {{cb_index = 2 : i32, block_count = 1 : i32, name = "scratch:reduce_max"}}
    CHECK: %[[R:.+]] = ttl.cb_reserve %[[S]]
    CHECK: %[[MAX:.+]] = ttl.compute ins(%a, %scaler_tile{{{{.*}}}} : tensor<1x2x{T}>, tensor<1x1x{T}>)
    CHECK-SAME: iterator_types = ["parallel", "reduction"]
    CHECK: ttl.tile_reduce_max {{{{.*}}}}reduce_dim = "REDUCE_ROW"
    CHECK: ttl.store %[[MAX]], %[[R]]
    CHECK: ttl.cb_push %[[S]]
    CHECK: %[[W:.+]] = ttl.cb_wait %[[S]]
    CHECK: ttl.compute ins(%a, %[[W]] : tensor<1x2x{T}>, tensor<1x1x{T}>)
    CHECK: ttl.tile_bcast {{{{.*}}}}bcast_kind = "cols"
    CHECK: ttl.tile_sub
    CHECK: ttl.store
    CHECK-NEXT: ttl.cb_pop %[[S]]
    """)
