"""The TT-Lang passes after DST assignment, each checked on the IR it produces from a small kernel:
ttl-set-compute-kernel-config, ttl-insert-tile-regs-sync, ttl-lower-to-loops,
ttl-annotate-cb-associations, convert-ttl-to-ttkernel, lower-affine."""

from ttl_pass_helpers import F, T, cb, compute_kernel, filecheck, run

TT = f"tensor<2x2x{T}>"
BEFORE_SYNC = ("convert-ttl-to-compute", "ttl-set-compute-kernel-config", "ttl-assign-dst")
BEFORE_LOOPS = BEFORE_SYNC + ("ttl-insert-tile-regs-sync",)
BEFORE_ANNOTATE = BEFORE_LOOPS + ("ttl-lower-to-loops",)
BEFORE_TTKERNEL = BEFORE_ANNOTATE + ("ttl-annotate-cb-associations",)


def add_kernel(tile=T, shape="2, 2", expr="ttl.add %a, %b"):
    tt = f"tensor<{shape.replace(', ', 'x')}x{tile}>"
    binds = [(i, shape, 2, tile) for i in range(3)]
    return compute_kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb(shape, 2, tile)} -> {tt}
  %b = ttl.cb_wait %cb1 : {cb(shape, 2, tile)} -> {tt}
  %o = ttl.cb_reserve %cb2 : {cb(shape, 2, tile)} -> {tt}
  %s = {expr} : {tt}, {tt} -> {tt}
  ttl.store %s, %o : {tt}, {tt}
  ttl.cb_pop %cb0 : {cb(shape, 2, tile)}
  ttl.cb_pop %cb1 : {cb(shape, 2, tile)}
  ttl.cb_push %cb2 : {cb(shape, 2, tile)}""", binds)


def test_config_defaults_to_16_bit_dst_and_hifi4():
    filecheck(run(add_kernel(), "ttl-set-compute-kernel-config"), """
    CHECK: ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = false, dst_full_sync_en = false, math_approx_mode = false>
    """)


def test_config_uses_32_bit_dst_for_float32_tiles():
    filecheck(run(add_kernel(F), "ttl-set-compute-kernel-config"), """
    CHECK: fp32_dest_acc_en = true
    """)


def test_config_takes_the_operations_explicit_choice():
    text = add_kernel(F).replace('ttl.kernel_role = "compute"', 'ttl.kernel_role = "compute", '
                                 'ttl.fp32_dest_acc_en = false, ttl.math_fidelity = "LoFi"')
    filecheck(run(text, "ttl-set-compute-kernel-config"), """
    CHECK: math_fidelity = "LoFi", fp32_dest_acc_en = false
    """)


def test_sync_brackets_compute_and_pack():
    filecheck(run(add_kernel(), *BEFORE_SYNC, "ttl-insert-tile-regs-sync"), """
    CHECK: ttl.init_sfpu(%cb0, %cb2)
    CHECK-NEXT: ttl.tile_regs_acquire
    CHECK-NEXT: %[[R:.+]] = ttl.compute
    CHECK: ttl.tile_regs_commit
    CHECK-NEXT: ttl.tile_regs_wait
    CHECK-NEXT: ttl.store %[[R]], %o
    CHECK-NEXT: ttl.tile_regs_release
    """)


def test_sync_puts_init_before_the_sub_block_loops():
    filecheck(run(add_kernel(shape="4, 4"), *BEFORE_SYNC, "ttl-insert-tile-regs-sync"), """
    CHECK: ttl.init_sfpu
    CHECK-NEXT: scf.for
    CHECK: ttl.tile_regs_acquire
    CHECK-NEXT: ttl.compute
    CHECK: ttl.tile_regs_release
    CHECK: } {ttl.subblock_loop}
    """)


def test_loops_compute_then_pack():
    filecheck(run(add_kernel(), *BEFORE_LOOPS, "ttl-lower-to-loops"), f"""
    CHECK: ttl.tile_regs_acquire
    CHECK: scf.for %[[I:.+]] =
    CHECK-NEXT: scf.for %[[J:.+]] =
    CHECK: tensor.extract %a[%[[I]], %[[J]]] : {TT}
    CHECK: ttl.copy_tile
    CHECK: ttl.tile_add
    CHECK: }} {{ttl.dst_footprint = 2 : i32}}
    CHECK-NEXT: ttl.tile_regs_commit
    CHECK-NEXT: ttl.tile_regs_wait
    CHECK: scf.for %[[P:.+]] =
    CHECK-NEXT: scf.for %[[Q:.+]] =
    CHECK-NEXT: %[[SLOT:.+]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[P]], %[[Q]])
    CHECK: ttl.pack_tile %[[SLOT]], %{{{{.+}}}}, %o {{{{.*}}}}ttl.dst_footprint = 2 : i32, ttl.sequential
    CHECK-NOT: ttl.compute
    CHECK-NOT: ttl.store
    """)


def test_matmul_loops_one_matmul_block_per_k_step():
    a, b, o = f"tensor<2x3x{T}>", f"tensor<3x2x{T}>", f"tensor<2x2x{T}>"
    text = compute_kernel(f"""
  %a = ttl.cb_wait %cb0 : {cb("2, 3")} -> {a}
  %b = ttl.cb_wait %cb1 : {cb("3, 2")} -> {b}
  %o = ttl.cb_reserve %cb2 : {cb("2, 2")} -> {o}
  %m = ttl.matmul %a, %b : {a}, {b} -> {o}
  ttl.store %m, %o : {o}, {o}""", [(0, "2, 3", 2, T), (1, "3, 2", 2, T), (2, "2, 2", 2, T)])
    filecheck(run(text, *BEFORE_LOOPS, "ttl-lower-to-loops"), """
    CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step
    CHECK: %[[AT:.+]] = affine.apply affine_map<(d0, d1, d2) -> (((d0 * 3) + d2))>
    CHECK: %[[BT:.+]] = affine.apply affine_map<(d0, d1, d2) -> (((d2 * 2) + d1))>
    CHECK: ttl.matmul_block %a, %b, %[[AT]], %[[BT]] {rt = 2 : i32, ct = 2 : i32, kt = 3 : i32, dst_idx = 0 : i32}
    CHECK: ttl.tile_regs_commit
    """)


def test_annotations_name_each_access_buffer_and_the_module_table():
    filecheck(run(add_kernel(), *BEFORE_ANNOTATE, "ttl-annotate-cb-associations"), """
    CHECK: ttl.circular_buffers = [#ttl.cb_entry<index = 0 : i64, name = "c_0", shape = [2 : i64, 2 : i64], data_format = "Float16_b", layout = "TILE", block_count = 2 : i64, page_size = 2048 : i64, block_pages = 4 : i64, num_pages = 8 : i64>
    CHECK: ttl.copy_tile {{.*}}ttl.cb_index = [0 : i32], ttl.cb_tile_offset = [0 : i32]
    CHECK: ttl.copy_tile {{.*}}ttl.cb_index = [1 : i32]
    CHECK: ttl.pack_tile {{.*}}ttl.cb_index = [2 : i32]
    """)


def test_ttkernel_lowering_of_a_compute_kernel():
    text = run(add_kernel(), *BEFORE_TTKERNEL, "convert-ttl-to-ttkernel")
    filecheck(text, """
    CHECK: ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "cb", index = 1 : i64>, #ttl.arg<kind = "cb", index = 2 : i64>], ttl.runtime_args = []
    CHECK: %[[I0:.+]] = ttkernel.get_compile_time_arg_val(0 : i32)
    CHECK: %[[C0:.+]] = ttkernel.cb(%[[I0]]) : i32
    CHECK: %[[I2:.+]] = ttkernel.get_compile_time_arg_val(2 : i32)
    CHECK: %[[C2:.+]] = ttkernel.cb(%[[I2]]) : i32
    CHECK: ttkernel.cb_wait_front(%[[C0]], %{{.+}})
    CHECK: ttkernel.cb_reserve_back(%[[C2]], %{{.+}})
    CHECK: ttkernel.init_sfpu(%[[C0]], %[[C2]])
    CHECK: ttkernel.copy_tile_init(%[[C0]])
    CHECK: ttkernel.add_binary_tile_init()
    CHECK: ttkernel.pack_tile({{.*}}) {out_of_order_output = false}
    CHECK: ttkernel.cb_pop_front(%[[C0]], %{{.+}})
    CHECK: ttkernel.cb_push_back(%[[C2]], %{{.+}})
    """)
    assert " ttl." not in text.replace("ttl.kernel_role", "").replace("ttl.compile_args", "").replace(
        "ttl.runtime_args", "").replace("ttl.dst_footprint", "").replace("ttl.circular_buffers", "").replace(
        "ttl.dst_output_index", "").replace("ttl.operand", "")


def test_ttkernel_lowering_of_a_reader():
    tt = f"tensor<4x4x{T}>"
    text = f"""
func.func @read() attributes {{ttkernel.thread = "noc", ttl.kernel_role = "datamovement"}} {{
  %cb0 = ttl.bind_cb {{cb_index = 0 : i32, block_count = 2 : i32}} : {cb("1, 2")}
  %x = ttl.tensor {{index = 0 : i32, name = "x"}} : {tt}
  %n = ttl.node_coord {{dim = 1 : i32}} : index
  %blk = ttl.cb_reserve %cb0 : {cb("1, 2")} -> tensor<1x2x{T}>
  %c2 = arith.constant 2 : index
  %s = ttl.tensor_slice %x[%n, %c2] {{sizes = array<i64: 1, 2>}} : {tt} -> tensor<1x2x{T}>
  %xf = ttl.copy %s, %blk : tensor<1x2x{T}>, tensor<1x2x{T}>
  ttl.wait %xf
  ttl.cb_push %cb0 : {cb("1, 2")}
  func.return
}}"""
    filecheck(run(text, "ttl-annotate-cb-associations", "convert-ttl-to-ttkernel", "lower-affine"), """
    CHECK: ttl.compile_args = [#ttl.arg<kind = "cb", index = 0 : i64>, #ttl.arg<kind = "accessor", index = 0 : i64>], ttl.runtime_args = [#ttl.arg<kind = "address", index = 0 : i64>, #ttl.arg<kind = "node", index = 1 : i64>]
    CHECK: %[[INDEX:.+]] = ttkernel.get_compile_time_arg_val(0 : i32)
    CHECK: %[[CB:.+]] = ttkernel.cb(%[[INDEX]]) : i32
    CHECK: %[[ARGS:.+]] = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32}
    CHECK: %[[ACC:.+]] = ttkernel.tensor_accessor(%[[ARGS]], %{{.+}}, %{{.+}})
    CHECK: %[[Y:.+]] = arith.index_cast
    CHECK: ttkernel.cb_reserve_back(%[[CB]], %{{.+}})
    CHECK: %[[ADDR:.+]] = ttkernel.get_write_ptr(%[[CB]])
    CHECK: %[[ROW:.+]] = arith.muli %node_y, %{{.+}} : index
    CHECK: scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
    CHECK: ttkernel.noc_async_read_page(%{{.+}}, %[[ACC]], %{{.+}}, %{{.+}})
    CHECK: ttkernel.noc_async_read_barrier()
    CHECK: ttkernel.cb_push_back(%[[CB]], %{{.+}})
    """)
