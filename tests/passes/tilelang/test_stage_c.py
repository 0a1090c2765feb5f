"""Stage C: CBs from dataflow, element-wise bodies on the SFPU, tile intrinsics, CB versions."""

import pytest
import tilelang_kernels as kernels
from tilelang_pass_helpers import ir_before, run_pass, through
from tilelang_helpers import filecheck


def test_lower_shared_to_cb_roles_and_pages():
    filecheck(through(kernels.gemm(), "lower-shared-to-cb"), """
CHECK: tt.cb.A_s = #tt.cb<page_size = 2048 : i64, depth = 6 : i64, data_format = "Float16_b", block_tiles = [2 : i64, 1 : i64], index = 0 : i64, producer = "reader", consumer = "compute", scope = "shared">
CHECK-SAME: tt.cb.B_s = #tt.cb<{{.*}}index = 1 : i64, producer = "reader", consumer = "compute"
CHECK-SAME: tt.cb.C_l = #tt.cb<{{.*}}index = 16 : i64, producer = "compute", consumer = "writer"
CHECK-SAME: tt.global_roles = #tt.roles<A = "input", B = "input", C = "output">
CHECK-SAME: tt.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true, dst_full_sync_en = false, math_approx_mode = false>
CHECK:      tile.for
CHECK:        %[[ROW:.*]] = arith.muli %m, %{{.*}} : i32
CHECK:        %[[PAGE:.*]] = arith.addi %[[ROW]], %k : i32
CHECK-NEXT:   tile.read_block %[[PAGE]] {buffer = "A", cb = 0 : i32, rows = 2 : i32, cols = 1 : i32, row_stride = 8 : i32}
CHECK:        tile.read_block %{{.*}} {buffer = "B", cb = 1 : i32, rows = 1 : i32, cols = 2 : i32, row_stride = 8 : i32}
CHECK:        tile.gemm %A_s, %B_s, %C_l
CHECK:      tile.write_block %{{.*}} {buffer = "C", cb = 16 : i32, rows = 2 : i32, cols = 2 : i32, row_stride = 8 : i32}
""")


def test_lower_shared_to_cb_intermediates():
    """softmax: x comes from the reader, y goes to the writer, the rest stays in compute."""
    filecheck(through(kernels.row_softmax, "lower-shared-to-cb"), """
CHECK: tt.cb.x = #tt.cb<{{.*}}index = 0 : i64, producer = "reader", consumer = "compute"
CHECK-SAME: tt.cb.y = #tt.cb<page_size = 2048 : i64, depth = 4 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 2 : i64], index = 16 : i64, producer = "compute", consumer = "writer"
CHECK-SAME: tt.cb.m = #tt.cb<page_size = 4096 : i64, depth = 1 : i64, data_format = "Float32", block_tiles = [1 : i64, 1 : i64], index = 24 : i64, producer = "compute", consumer = "compute"
CHECK-SAME: tt.cb.e = #tt.cb<page_size = 4096 : i64, depth = 2 : i64, data_format = "Float32", block_tiles = [1 : i64, 2 : i64], index = 25 : i64
""")


def test_lower_to_sfpu_fused_relu():
    filecheck(through(kernels.fused(), "lower-to-sfpu"), """
CHECK:      tile.stmt attributes {kind = "eltwise", reads = ["a", "b", "c"], writes = ["y"]} {
CHECK:        scf.for %t = %{{.*}} to %{{.*}} step %{{.*}} : i32 {
CHECK-NEXT:     tile.dst_section attributes {mode = "section"} math {
CHECK:            ttkernel.copy_tile(%[[A:.*]], %t, %[[D0:.*]]) : !ttkernel.cb, i32, i32
CHECK:            ttkernel.copy_tile(%[[B:.*]], %t, %[[D1:.*]]) : !ttkernel.cb, i32, i32
CHECK-NEXT:       ttkernel.mul_binary_tile(%[[D0]], %[[D1]], %[[D0]])
CHECK:            ttkernel.copy_tile(%{{.*}}, %t, %[[D1]])
CHECK-NEXT:       ttkernel.add_binary_tile(%[[D0]], %[[D1]], %[[D0]])
CHECK-NEXT:       ttkernel.relu_tile(%[[D0]])
CHECK-NEXT:     } pack {
CHECK:            ttkernel.pack_tile(%{{.*}}, %{{.*}}, %{{.*}})
CHECK-NOT:  tile.parallel
""")


def test_lower_to_sfpu_broadcasts_vectors_onto_a_zero_tile():
    filecheck(through(kernels.row_softmax, "lower-to-sfpu"), """
CHECK:      tt.cb.zero_tile = #tt.cb<page_size = 2048 : i64, depth = 1 : i64, data_format = "Float16_b", block_tiles = [1 : i64, 1 : i64], index = 27 : i64
CHECK:      tile.fill %zero_tile {value = 0.000000e+00 : f32}
CHECK-NEXT: tile.for
CHECK:      tile.stmt attributes {kind = "eltwise", reads = ["x", "m", "zero_tile"], writes = ["e"]} {
CHECK:        ttkernel.copy_tile
CHECK:        ttkernel.add_tiles_bcast_cols(%[[ZERO:.*]], %[[M:.*]], %{{.*}}, %{{.*}}, %{{.*}})
CHECK-NEXT:   ttkernel.sub_binary_tile
CHECK-NEXT:   ttkernel.exp_tile
CHECK:      tile.stmt attributes {kind = "eltwise", reads = ["e", "s", "zero_tile"], writes = ["y"]} {
CHECK:        ttkernel.div_binary_tile
""")


def test_gemm_accumulates_in_dst_across_the_k_loop():
    filecheck(through(kernels.gemm(), "lower-tt-tile-intrinsics"), """
CHECK-NOT:  tile.fill %C_l
CHECK:      tile.stmt attributes {kind = "matmul_open", reads = [], writes = []} {
CHECK-NEXT:   tile.dst_section attributes {mode = "open"}
CHECK:      tile.for
CHECK:        tile.stmt attributes {kind = "matmul_step", reads = ["A_s", "B_s"], writes = []} {
CHECK-NEXT:     tile.dst_section attributes {mode = "continue"} math {
CHECK:            ttkernel.matmul_block(%{{.*}}) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32, i32, i32, i32, i32
CHECK:      tile.stmt attributes {kind = "matmul_pack", reads = [], writes = ["C_l"]} {
CHECK-NEXT:   tile.dst_section attributes {mode = "close"} math {
CHECK:        } pack {
CHECK:        ttkernel.pack_tile_block(
""")


def test_gemm_accumulates_partials_in_l1_when_the_block_exceeds_dst():
    # four K steps: the packer adds each step's sums to the partials block in L1; every step but
    # the last two pops the block unread so the next packs onto the same pages; the peeled last
    # step reloads the sums once and packs C
    filecheck(through(kernels.gemm(bm=128, bn=128, bk=64), "lower-tt-tile-intrinsics"), """
CHECK:      tt.cb.C_l_partials = #tt.cb<page_size = 4096 : i64, depth = 16 : i64, data_format = "Float32"
CHECK:      %[[LAST:.*]] = arith.constant 3 : i32
CHECK:      tile.for %{{.*}} to %[[LAST]] attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
CHECK:        tile.stmt attributes {kind = "matmul_spill", reads = ["A_s", "B_s"], writes = []} {
CHECK-NEXT:     %[[NOT_FIRST:.*]] = arith.cmpi ugt, %k
CHECK-NEXT:     %[[FLAG:.*]] = arith.extui %[[NOT_FIRST]] : i1 to i32
CHECK-NEXT:     ttkernel.pack_reconfig_l1_acc(%[[FLAG]])
CHECK:          scf.for %sub
CHECK:            tile.dst_section attributes {mode = "section"} math {
CHECK-NOT:          ttkernel.copy_tile
CHECK:              ttkernel.matmul_block
CHECK:            } pack {
CHECK-NEXT:         tile.cb_event "produce_begin" {cb = 24 : i32, pages = 4 : i32
CHECK:              ttkernel.pack_tile_block(%{{.*}}, %{{.*}}, %{{.*}})
CHECK-NEXT:         tile.cb_event "produce_end" {cb = 24 : i32
CHECK:          %[[NEXT:.*]] = arith.addi %k, %{{.*}}
CHECK-NEXT:     %[[MORE:.*]] = arith.cmpi ult, %[[NEXT]], %[[LAST]]
CHECK-NEXT:     scf.if %[[MORE]] {
CHECK-NEXT:       tile.cb_event "consume" {cb = 24 : i32, pages = 16 : i32, buffer = "C_l_partials"}
CHECK-NEXT:       tile.cb_event "release" {cb = 24 : i32, pages = 16 : i32, buffer = "C_l_partials"}
CHECK:      tile.stmt attributes {kind = "matmul_final", reads = ["A_s", "B_s"], writes = ["C_l"]} {
CHECK:        ttkernel.pack_reconfig_l1_acc(%{{.*}})
CHECK:        tile.cb_event "consume" {cb = 24 : i32, pages = 4 : i32
CHECK-COUNT-4: ttkernel.copy_tile
CHECK:        ttkernel.pack_tile(%{{.*}}, %{{.*}}, %{{.*}}) {out_of_order_output = true}
""")


def test_gemm_over_two_k_steps_reloads_the_spilled_partials():
    filecheck(through(kernels.gemm(K=128, bm=128, bn=128, bk=64), "lower-tt-tile-intrinsics"), """
CHECK:      tt.cb.C_l_partials = #tt.cb<page_size = 4096 : i64, depth = 16 : i64, data_format = "Float32"
CHECK:      tile.for %{{.*}} to %[[LAST:.*]] attributes {step = 1 : i32, kind = "pipelined", num_stages = 3 : i32} {
CHECK:        tile.stmt attributes {kind = "matmul_spill", reads = ["A_s", "B_s"], writes = []} {
CHECK-NEXT:     %[[NOT_FIRST:.*]] = arith.cmpi ugt, %k
CHECK-NOT:      pack_reconfig_l1_acc
CHECK:          scf.for %sub
CHECK:            tile.dst_section attributes {mode = "section"} math {
CHECK-NEXT:         scf.if %[[NOT_FIRST]] {
CHECK-NEXT:           tile.cb_event "consume" {cb = 24 : i32, pages = 4 : i32, buffer = "C_l_partials"}
CHECK-COUNT-4:        ttkernel.copy_tile
CHECK:                tile.cb_event "release" {cb = 24 : i32
CHECK:              ttkernel.matmul_block
CHECK:            } pack {
CHECK-NEXT:         tile.cb_event "produce_begin" {cb = 24 : i32, pages = 4 : i32
CHECK:              ttkernel.pack_tile_block(%{{.*}}, %{{.*}}, %{{.*}})
CHECK-NEXT:         tile.cb_event "produce_end" {cb = 24 : i32
CHECK:      tile.stmt attributes {kind = "matmul_final", reads = ["A_s", "B_s"], writes = ["C_l"]} {
CHECK-NOT:    pack_reconfig_l1_acc
CHECK:        tile.cb_event "consume" {cb = 24 : i32
CHECK:        ttkernel.pack_tile(%{{.*}}, %{{.*}}, %{{.*}}) {out_of_order_output = true}
""")


def test_build_tile_dfg_places_cb_versions():
    filecheck(through(kernels.gemm(), "build-tile-dfg"), """
CHECK:      tt.tile_dfg = #tt.tile_dfg<edges = [#tt.dfg_edge<buffer = "A_s", cb = 0 : i64, producer = "reader", consumer = "compute", pages = 2 : i64, depth = 6 : i64>
CHECK:      tile.for
CHECK:        tile.cb_event "produce_begin" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
CHECK-NEXT:   tile.read_block
CHECK-NEXT:   tile.cb_event "produce_end" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
CHECK:        tile.cb_event "consume" {cb = 0 : i32, pages = 2 : i32, buffer = "A_s"}
CHECK-NEXT:   tile.cb_event "consume" {cb = 1 : i32, pages = 2 : i32, buffer = "B_s"}
CHECK-NEXT:   tile.stmt attributes {kind = "matmul_step"
CHECK:        tile.cb_event "release" {cb = 1 : i32
CHECK-NEXT:   tile.cb_event "release" {cb = 0 : i32
CHECK:      tile.cb_event "produce_begin" {cb = 16 : i32, pages = 4 : i32, buffer = "C_l"}
CHECK-NEXT: tile.stmt attributes {kind = "matmul_pack"
CHECK:      tile.cb_event "produce_end" {cb = 16 : i32
CHECK:      tile.cb_event "consume" {cb = 16 : i32
CHECK-NEXT: tile.write_block
CHECK-NEXT: tile.cb_event "release" {cb = 16 : i32
""")


def test_build_tile_dfg_constant_tiles_live_across_the_persistent_loop():
    filecheck(through(kernels.row_softmax, "build-tile-dfg"), """
CHECK:      tile.cb_event "produce_begin" {cb = 27 : i32, pages = 1 : i32, buffer = "zero_tile"}
CHECK-NEXT: tile.stmt attributes {kind = "fill", reads = [], writes = ["zero_tile"]}
CHECK:      tile.cb_event "consume" {cb = 27 : i32, pages = 1 : i32, buffer = "zero_tile"}
CHECK:      tile.for %{{.*}} to %count attributes {step = 1 : i32, kind = "persistent"}
CHECK:      tile.cb_event "release" {cb = 27 : i32, pages = 1 : i32, buffer = "zero_tile"}
""")


def test_build_tile_dfg_writing_a_block_larger_than_its_buffer_fails_in_that_pass(monkeypatch):
    """A pass that writes bad metadata stops at its own write, not in a later pass."""
    from xdsl.utils.exceptions import VerifyException

    from tilefold.passes.tilelang import build_tile_dfg

    text = ir_before(kernels.gemm(), "build-tile-dfg")
    real = build_tile_dfg.cb_entries

    def shallow(kernel_op):
        return {name: {**cb, "depth": 1} for name, cb in real(kernel_op).items()}

    monkeypatch.setattr(build_tile_dfg, "cb_entries", shallow)
    with pytest.raises(VerifyException, match="#tt.dfg_edge: a block of 2 pages does not fit the 1 pages"):
        run_pass(text, "build-tile-dfg")
