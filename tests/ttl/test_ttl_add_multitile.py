"""TT-Lang multi-tile lowering: the 2 × 2 multi-tile add through every stage of the TT-Lang pipeline, and its C++.

The IR of the compute kernel after each pass is checked for the structure the seed shows (FileCheck)
and kept as a snapshot reviewed like code; so are the three C++ kernels. Differences from the seed,
on purpose:

* the factory's C++ reserves and pushes the whole output block (``cb_reserve_back(cb, 4)`` /
  ``cb_push_back(cb, 4)``) inside the per-tile pack loop, which on hardware would reserve and push
  four blocks for one; the reserve and the push here stay where the kernel writes them (``o =
  out_cb.reserve()`` before the compute, ``o.push()`` after), around the same compute-then-pack
  structure;
* the factory's Stage 3 and Stage 4 disagree on the add's ``dst_idx`` (2 vs 0); here it is the footprint
  (2) with ``ttl.dst_output``: the add writes DST slot ``footprint + linear index`` in both, as the
  seed's Stage 6 and C++ do;
* the pack loop holds ``ttl.pack_tile %dst_slot, %cb_tile, %block`` instead of the factory's
  ``ttl.store`` + ``tensor.insert`` pair, whose ``%result`` is not defined in that loop.
"""

from __future__ import annotations

import numpy as np
import pytest

from tilefold.codegen.cpp import emit_kernel
from tilefold.ir.context import print_ir, parse_module
from ttl_helpers import filecheck, load_example, tile_tensor, zeros, compiled

STAGES = ["ttl", "convert-ttl-to-compute", "ttl-set-compute-kernel-config", "ttl-assign-dst",
          "ttl-insert-tile-regs-sync", "ttl-lower-to-loops", "ttl-annotate-cb-associations",
          "convert-ttl-to-ttkernel", "lower-affine", "ttl-tidy-kernels",
          "ttl-trim-inits", "ttl-hoist-inits"]


@pytest.fixture(scope="module")
def seed():
    example = load_example("add_multitile")
    return compiled(example.add_multitile_kernel, tile_tensor((64, 64), 1), tile_tensor((64, 64), 2), zeros((64, 64)))


def compute_kernel_text(module_text: str) -> str:
    module = parse_module(module_text)
    kernel = next(op for op in module.ops if op.sym_name.data == "add_compute")
    return print_ir(kernel)


def test_pipeline_runs_the_seed_passes_in_order(seed):
    assert [name for name, _ in seed.dumps] == STAGES


@pytest.mark.parametrize("stage", STAGES)
def test_compute_kernel_ir_after_each_stage(seed, stage, mlir_snapshot):
    text = dict(seed.dumps)[stage]
    assert compute_kernel_text(text) == mlir_snapshot


def test_stage1_block_level_add(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["ttl"]), """
    CHECK: ttl.bind_cb {cb_index = 0 : i32, block_count = 2 : i32{{.*}}} : !ttl.cb<[2, 2], !ttcore.tile<32x32, bf16>, 2>
    CHECK: ttl.bind_cb {cb_index = 1
    CHECK: ttl.bind_cb {cb_index = 2
    CHECK: %[[L:.+]] = ttl.cb_wait %lhs_cb {{.*}} -> tensor<2x2x!ttcore.tile<32x32, bf16>>
    CHECK: %[[R:.+]] = ttl.cb_wait %rhs_cb
    CHECK: %[[O:.+]] = ttl.cb_reserve %out_cb
    CHECK: %[[S:.+]] = ttl.add %[[L]], %[[R]]
    CHECK: ttl.store %[[S]], %[[O]]
    CHECK: ttl.cb_pop %lhs_cb
    CHECK: ttl.cb_pop %rhs_cb
    CHECK: ttl.cb_push %out_cb
    """)


def test_stage2_one_compute_with_a_tile_add(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["convert-ttl-to-compute"]), """
    CHECK: tensor.empty() : tensor<2x2x!ttcore.tile<32x32, bf16>>
    CHECK: ttl.attach_cb {{.*}}, %out_cb
    CHECK: ttl.compute ins(%l, %r : {{.*}}) outs({{.*}}) attributes {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
    CHECK: ^bb0(%[[A:.+]]: !ttcore.tile<32x32, bf16>, %[[B:.+]]: !ttcore.tile<32x32, bf16>, %{{.+}}: !ttcore.tile<32x32, bf16>):
    CHECK-NEXT: %[[T:.+]] = ttl.tile_add %[[A]], %[[B]] : !ttcore.tile<32x32, bf16>
    CHECK-NEXT: ttl.yield %[[T]]
    """)


def test_stage3_footprint_two_and_output_at_footprint_plus_index(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["ttl-assign-dst"]), """
    CHECK: ttl.compute
    CHECK-SAME: ttl.dst_footprint = 2 : i32
    CHECK: ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))> {{.*}}ttl.dst_output_index
    CHECK: %[[I0:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))>
    CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
    CHECK-NEXT: %{{.+}}, %[[D0:.+]] = ttl.copy_tile %{{.+}}, %[[I0]], %[[C0]]
    CHECK: %[[I1:.+]] = ttl.linearized_index affine_map<(d0, d1) -> (((d0 * 2) + d1))>
    CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
    CHECK-NEXT: %{{.+}}, %[[D1:.+]] = ttl.copy_tile %{{.+}}, %[[I1]], %[[C1]]
    CHECK-NEXT: ttl.tile_add %[[D0]], %[[D1]] {dst_idx = 2 : i32, ttl.dst_output}
    """)


def test_stage4_one_acquire_around_compute_and_pack(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["ttl-insert-tile-regs-sync"]), """
    CHECK: ttl.cb_reserve %out_cb
    CHECK: ttl.init_sfpu(%lhs_cb, %out_cb)
    CHECK-NEXT: ttl.tile_regs_acquire
    CHECK-NEXT: %[[R:.+]] = ttl.compute
    CHECK: ttl.tile_regs_commit
    CHECK-NEXT: ttl.tile_regs_wait
    CHECK-NEXT: ttl.store %[[R]], %o
    CHECK-NEXT: ttl.tile_regs_release
    CHECK-NEXT: ttl.cb_pop %lhs_cb
    """)


def test_stage5_compute_loop_then_pack_loop(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["ttl-lower-to-loops"]), """
    CHECK: ttl.tile_regs_acquire
    CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
    CHECK-NEXT: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
    CHECK: affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))> (%[[I]], %[[J]])
    CHECK: tensor.extract %l[%[[I]], %[[J]]]
    CHECK: ttl.copy_tile
    CHECK: tensor.extract %r[%[[I]], %[[J]]]
    CHECK: ttl.copy_tile
    CHECK: ttl.tile_add {{.*}} {dst_idx = 2 : i32, ttl.dst_output}
    CHECK: } {ttl.dst_footprint = 2 : i32}
    CHECK-NEXT: ttl.tile_regs_commit
    CHECK-NEXT: ttl.tile_regs_wait
    CHECK: scf.for
    CHECK-NEXT: scf.for
    CHECK: ttl.pack_tile %{{.+}}, %{{.+}}, %o {{.*}}ttl.dst_footprint = 2 : i32
    CHECK: } {ttl.dst_footprint = 2 : i32}
    CHECK-NEXT: ttl.tile_regs_release
    """)


def test_stage6_ttkernel_calls_with_output_at_footprint_plus_index(seed):
    filecheck(compute_kernel_text(dict(seed.dumps)["convert-ttl-to-ttkernel"]), """
    CHECK: %lhs_cb = ttkernel.get_compile_time_arg_val(0 : i32)
    CHECK-NEXT: %[[LHS:.+]] = ttkernel.cb(%lhs_cb) : i32
    CHECK-NEXT: %rhs_cb = ttkernel.get_compile_time_arg_val(1 : i32)
    CHECK-NEXT: %[[RHS:.+]] = ttkernel.cb(%rhs_cb) : i32
    CHECK-NEXT: %out_cb = ttkernel.get_compile_time_arg_val(2 : i32)
    CHECK-NEXT: %[[OUT_CB:.+]] = ttkernel.cb(%out_cb) : i32
    CHECK: ttkernel.init_sfpu(%[[LHS]], %[[OUT_CB]])
    CHECK: ttkernel.tile_regs_acquire()
    CHECK: %[[LIN:.+]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))>
    CHECK: %[[I0:.+]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))>
    CHECK: %[[S0:.+]] = arith.constant 0 : index
    CHECK: ttkernel.copy_tile_init(%[[LHS]])
    CHECK-NEXT: ttkernel.copy_tile(%[[LHS]], %[[I0]], %[[S0]])
    CHECK: %[[S1:.+]] = arith.constant 1 : index
    CHECK: ttkernel.copy_tile_init(%[[RHS]])
    CHECK-NEXT: ttkernel.copy_tile(%[[RHS]], %{{.+}}, %[[S1]])
    CHECK: ttkernel.add_binary_tile_init()
    CHECK-NEXT: %[[F:.+]] = arith.constant 2 : index
    CHECK-NEXT: %[[OUT:.+]] = arith.addi %[[LIN]], %[[F]] : index
    CHECK-NEXT: ttkernel.add_binary_tile(%[[S0]], %[[S1]], %[[OUT]])
    CHECK: ttkernel.tile_regs_commit()
    CHECK-NEXT: ttkernel.tile_regs_wait()
    CHECK: %[[CB:.+]] = affine.apply affine_map<(d0, d1) -> (((d0 * 2) + d1))>
    CHECK: %[[PACK:.+]] = arith.addi %[[CB]], %{{.+}} : index
    CHECK-NEXT: ttkernel.pack_tile(%[[PACK]], %[[OUT_CB]], %[[CB]]) {out_of_order_output = false}
    CHECK: ttkernel.tile_regs_release()
    """)


def test_stage7_affine_lowered_to_arith(seed):
    text = compute_kernel_text(dict(seed.dumps)["lower-affine"])
    assert "affine." not in text and "ttl." not in text.replace("ttl.kernel_role", "").replace(
        "ttl.compile_args", "").replace("ttl.runtime_args", "").replace("#ttl.arg<", "").replace(
        "ttl.dst_footprint", "")
    filecheck(text, """
    CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
    CHECK-NEXT: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
    CHECK: arith.muli %[[I]], %{{.+}} : index
    CHECK: arith.addi {{.*}}, %[[J]] : index
    CHECK: ttkernel.add_binary_tile
    """)


@pytest.mark.parametrize("kernel", ["add_compute", "dm_read", "dm_write"])
def test_cpp_kernel(seed, kernel, ttl_cpp_snapshot):
    function = next(k.function for k in seed.program.kernels if k.name == kernel)
    assert emit_kernel(function) == ttl_cpp_snapshot


def test_cpp_compute_kernel_has_the_seed_structure(seed):
    cpp = next(emit_kernel(k.function) for k in seed.program.kernels if k.name == "add_compute")
    filecheck(cpp, """
    CHECK: void kernel_main() {
    CHECK: cb_wait_front(lhs_cb, 4);
    CHECK: cb_wait_front(rhs_cb, 4);
    CHECK: cb_reserve_back(out_cb, 4);
    CHECK: init_sfpu(lhs_cb, out_cb);
    CHECK-NEXT: tile_regs_acquire();
    CHECK-NEXT: for (uint32_t [[I:.+]] = 0; [[I]] < 2; ++[[I]]) {
    CHECK-NEXT: for (uint32_t [[J:.+]] = 0; [[J]] < 2; ++[[J]]) {
    CHECK-NEXT: uint32_t [[ROW:.+]] = [[I]] * 2;
    CHECK-NEXT: uint32_t [[LIN:.+]] = [[ROW]] + [[J]];
    CHECK-NEXT: copy_tile_init(lhs_cb);
    CHECK-NEXT: copy_tile(lhs_cb, [[LIN]], 0);
    CHECK-NEXT: copy_tile_init(rhs_cb);
    CHECK-NEXT: copy_tile(rhs_cb, [[LIN]], 1);
    CHECK-NEXT: add_binary_tile_init();
    CHECK-NEXT: uint32_t [[OUT:.+]] = [[LIN]] + 2;
    CHECK-NEXT: add_binary_tile(0, 1, [[OUT]]);
    CHECK: tile_regs_commit();
    CHECK-NEXT: tile_regs_wait();
    CHECK-NEXT: for (uint32_t
    CHECK-NEXT: for (uint32_t
    CHECK: uint32_t [[PACK:.+]] = [[TILE:.+]] + 2;
    CHECK-NEXT: pack_tile<false>([[PACK]], out_cb, [[TILE]]);
    CHECK: tile_regs_release();
    CHECK-NEXT: cb_pop_front(lhs_cb, 4);
    CHECK-NEXT: cb_pop_front(rhs_cb, 4);
    CHECK-NEXT: cb_push_back(out_cb, 4);
    CHECK-NOT: cb_reserve_back
    """)


def test_runs_on_the_simulator():
    result, reference = load_example("add_multitile").main(seed=3)
    np.testing.assert_array_equal(result[:64, :64], reference[:64, :64])
