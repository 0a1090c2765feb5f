"""Stages D and E: the kernel split, TensorAccessors, CB calls, engine inits, the DST protocol,
runtime-argument indices and the final checks."""

import pytest
import tilelang_kernels as kernels
from tilelang_pass_helpers import ir_before, run_pass, through
from tilelang_helpers import filecheck

from tilefold.errors import CompileError
from tilefold.ir.context import parse_module, print_ir
from tilefold.ir.attributes import kernel_function


def test_split_device_kernel():
    filecheck(through(kernels.gemm(), "split-device-kernel"), """
CHECK:      func.func @gemm_kernel(%A: memref<256x256xbf16>
CHECK-SAME: tt.kernels = #tt.kernels<reader = "reader", compute = "compute", writer = "writer">
CHECK-NEXT:   func.return
CHECK:      func.func @reader() attributes {ttkernel.thread = "noc"} {
CHECK:        scf.for %i = %{{.*}} to %count step %{{.*}} : i32 {
CHECK:          scf.for %k =
CHECK:            tile.cb_event "produce_begin" {cb = 0 : i32
CHECK-NEXT:       tile.read_block
CHECK-NEXT:       tile.cb_event "produce_end" {cb = 0 : i32
CHECK-NOT:        tile.cb_event "consume"
CHECK:      func.func @compute() attributes {ttkernel.thread = "compute", ttkernel.compute_config = #ttkernel.compute_config<math_fidelity = "HiFi4", fp32_dest_acc_en = true
CHECK:          tile.dst_section attributes {mode = "open"}
CHECK:          scf.for %k =
CHECK-NEXT:       tile.cb_event "consume" {cb = 0 : i32
CHECK-NEXT:       tile.cb_event "consume" {cb = 1 : i32
CHECK-NEXT:       tile.dst_section attributes {mode = "continue"} math {
CHECK:            ttkernel.matmul_block
CHECK:          tile.cb_event "produce_begin" {cb = 16 : i32, pages = 4 : i32
CHECK-NEXT:     tile.dst_section attributes {mode = "close"}
CHECK:      func.func @writer() attributes {ttkernel.thread = "noc"} {
CHECK:            tile.cb_event "consume" {cb = 16 : i32
CHECK-NEXT:       tile.write_block
CHECK-NEXT:       tile.cb_event "release" {cb = 16 : i32
""")


def test_configure_tensor_accessor_chains_accessor_args():
    filecheck(through(kernels.gemm(), "configure-tensor-accessor"), """
CHECK:      func.func @reader() attributes {ttkernel.thread = "noc", tt.compile_args = ["A", "B"]} {
CHECK-NEXT:   %A_addr = tile.runtime_arg "A_addr" {tensor = "A"}
CHECK-NEXT:   %A_args = ttkernel.tensor_accessor_args() {cta_offset = 0 : i32}
CHECK-NEXT:   %[[PAGE:.*]] = arith.constant 2048 : i32
CHECK-NEXT:   %A = ttkernel.tensor_accessor(%A_args, %A_addr, %[[PAGE]])
CHECK-NEXT:   %B_addr = tile.runtime_arg "B_addr" {tensor = "B"}
CHECK-NEXT:   %B_args = ttkernel.tensor_accessor_args(%A_args)
CHECK:        %B = ttkernel.tensor_accessor(%B_args, %B_addr,
CHECK:        tile.read_block %{{.*}}, %A : !ttkernel.tensor_accessor {buffer = "A"
CHECK:        tile.read_block %{{.*}}, %B : !ttkernel.tensor_accessor {buffer = "B"
CHECK:      func.func @writer() attributes {ttkernel.thread = "noc", tt.compile_args = ["C"]} {
""")


def test_tensor_accessor_guardrail():
    """Without the accessor metadata the TensorAccessorArgs would be default-constructed."""
    text = ir_before(kernels.gemm(), "configure-tensor-accessor", debuginfo=True)
    module = parse_module(text)
    del kernel_function(module).attributes["tt.tensor_accessor.B"]
    with pytest.raises(CompileError) as info:
        run_pass(print_ir(module, debuginfo=True), "configure-tensor-accessor")
    message = str(info.value)
    assert "TensorAccessor guardrail" in message and "default-constructed" in message
    assert message.startswith(kernels.__file__)


def test_lower_cb_intrinsics_reads_a_block_per_push():
    filecheck(through(kernels.gemm(), "lower-cb-intrinsics"), """
CHECK-LABEL: func.func @reader()
CHECK:         ttkernel.cb_reserve_back(%{{.*}}, %{{.*}}) : !ttkernel.cb, i32
CHECK:         scf.if
CHECK:           ttkernel.noc_semaphore_wait
CHECK:         } else {
CHECK-NEXT:      %[[INDEX:.*]] = arith.constant 0 : i32
CHECK-NEXT:      %[[CB:.*]] = ttkernel.cb(%[[INDEX]]) : i32
CHECK-NEXT:      %l1_write_addr = ttkernel.get_write_ptr(%[[CB]])
CHECK:           scf.for %r =
CHECK:             ttkernel.noc_async_read_page(%{{.*}}, %A, %{{.*}}, %{{.*}}) : i32, !ttkernel.tensor_accessor, i32, i32
CHECK:           ttkernel.noc_async_read_barrier()
CHECK:           ttkernel.noc_async_write_multicast
CHECK:         ttkernel.cb_push_back
CHECK-LABEL: func.func @writer()
CHECK:         ttkernel.cb_wait_front
CHECK:         %l1_read_addr = ttkernel.get_read_ptr
CHECK:           ttkernel.noc_async_write_page(%{{.*}}, %C, %{{.*}}, %{{.*}}, %{{.*}})
CHECK:         ttkernel.noc_async_writes_flushed()
CHECK:         ttkernel.cb_pop_front
CHECK:       ttkernel.noc_async_write_barrier()
CHECK-NEXT:  func.return
""")


def test_insert_compute_init_hoists_loop_invariant_inits():
    filecheck(through(kernels.gemm(), "insert-compute-init"), """
CHECK-LABEL: func.func @compute()
CHECK:         ttkernel.compute_kernel_hw_startup
CHECK:         ttkernel.mm_block_init_short(
CHECK:         scf.for %i =
CHECK-NOT:       ttkernel.mm_block_init_short
CHECK:           ttkernel.matmul_block
CHECK-LABEL: func.func @writer()
""")


def test_insert_compute_init_switches_engines_per_op():
    filecheck(through(kernels.fused(), "insert-compute-init"), """
CHECK-LABEL: func.func @compute()
CHECK:         ttkernel.copy_tile_init
CHECK:         scf.for %t =
CHECK-NOT:       ttkernel.copy_tile_init
CHECK:           ttkernel.copy_tile
CHECK:           ttkernel.copy_tile
CHECK-NEXT:      ttkernel.mul_binary_tile_init()
CHECK-NEXT:      ttkernel.mul_binary_tile
CHECK:           ttkernel.copy_tile
CHECK-NEXT:      ttkernel.add_binary_tile_init()
CHECK-NEXT:      ttkernel.add_binary_tile
CHECK-NEXT:      ttkernel.relu_tile_init()
CHECK-NEXT:      ttkernel.relu_tile
""")


def test_insert_dst_management_element_wise():
    filecheck(through(kernels.fused(), "insert-dst-management"), """
CHECK-LABEL: func.func @compute()
CHECK:         ttkernel.cb_reserve_back
CHECK:         scf.for %t =
CHECK-NEXT:      ttkernel.tile_regs_acquire()
CHECK:           ttkernel.relu_tile(
CHECK-NEXT:      ttkernel.tile_regs_commit()
CHECK-NEXT:      ttkernel.tile_regs_wait()
CHECK:           ttkernel.pack_tile
CHECK-NEXT:      ttkernel.tile_regs_release()
CHECK-NEXT:    }
CHECK:         ttkernel.cb_push_back
""")


def test_insert_dst_management_k_loop():
    """The TileLang-TT architecture's K-loop pattern: acquire before the K loop, commit / pack / release after it."""
    filecheck(through(kernels.tile_notation_matmul, "insert-dst-management"), """
CHECK-LABEL: func.func @compute()
CHECK:         ttkernel.tile_regs_acquire()
CHECK-NOT:     ttkernel
CHECK:         scf.for %kt =
CHECK:           ttkernel.cb_wait_front
CHECK:           ttkernel.cb_wait_front
CHECK:           ttkernel.matmul_block
CHECK:           ttkernel.cb_pop_front
CHECK:           ttkernel.cb_pop_front
CHECK-NOT:       ttkernel.tile_regs
CHECK:         }
CHECK:         ttkernel.cb_reserve_back
CHECK-NEXT:    ttkernel.tile_regs_commit()
CHECK-NEXT:    ttkernel.tile_regs_wait()
CHECK:         ttkernel.pack_tile
CHECK-NEXT:    ttkernel.tile_regs_release()
CHECK:         ttkernel.cb_push_back
""")


def test_finalize_persistent_signature():
    filecheck(through(kernels.gemm(), "finalize-persistent-signature"), """
CHECK:      func.func @reader() attributes {{{.*}}tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">, [[MCAST:.*_mcast_receivers">]], #tt.runtime_arg<name = "A_addr", role = "address", tensor = "A">, #tt.runtime_arg<name = "B_addr", role = "address", tensor = "B">]} {
CHECK:        %A_addr = ttkernel.get_arg_val(%{{.*}}) : (i32) -> i32
CHECK:      func.func @compute() attributes {{{.*}}tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">, [[MCAST]]]} {
CHECK:      func.func @writer() attributes {{{.*}}tt.runtime_args = [#tt.runtime_arg<name = "start_id">, #tt.runtime_arg<name = "count">, #tt.runtime_arg<name = "Mt">, #tt.runtime_arg<name = "Kt">, #tt.runtime_arg<name = "Nt">, [[MCAST]], #tt.runtime_arg<name = "C_addr", role = "address", tensor = "C">]} {
CHECK-NOT:  tile.runtime_arg
""")


def test_verify_tt_ir_accepts_the_lowered_kernel():
    text = through(kernels.gemm(), "verify-tt-ir")
    assert "tile." not in text.split("func.func @reader")[1]
