"""The TT-Metal tilize factory's tilize kernels (and the exp example) written in PyKernel: IR structure,
source locations, MLIR round trip, and use by a host Program."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc

from pykernel_helpers import EXAMPLES, filecheck, load_example, op_names
from tilefold.ir.context import parse_module, print_ir
from tilefold.ir.ttkernel import THREAD_ATTR, CBType, constant_int
from tilefold.ir.verify import verify_kernel_module
from tilefold.program import ComputeConfig, DataMovementConfig, Program

READER_CHECKS = """
CHECK-LABEL: func.func @reader_unary_stick_layout_split_rows_interleaved() attributes {ttkernel.thread = "noc"}
CHECK:      %[[C0:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT: %src_addr = ttkernel.get_arg_val(%[[C0]]) : (i32) -> i32
CHECK:      %[[C1:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT: %num_sticks = ttkernel.get_arg_val(%[[C1]]) : (i32) -> i32
CHECK:      %[[C8:[0-9]+]] = arith.constant 8 : i32
CHECK-NEXT: %start_stick_id = ttkernel.get_arg_val(%[[C8]]) : (i32) -> i32
CHECK-NEXT: %stick_size = ttkernel.get_compile_time_arg_val(0 : i32) : i32
CHECK-NEXT: %src_tensor_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args
CHECK-NEXT: %s = ttkernel.tensor_accessor(%src_tensor_args, %src_addr, %stick_size)
CHECK-NEXT: %base_src_noc_addr = memref.alloca() : memref<32xi64>
CHECK-NEXT: %stick_id = memref.alloca() : memref<i32>
CHECK-NEXT: memref.store %start_stick_id, %stick_id[] : memref<i32>
CHECK:      %[[C32:[0-9]+]] = arith.constant 32 : i32
CHECK-NEXT: scf.for %i = %{{[0-9]+}} to %num_sticks step %[[C32]] : i32 {
CHECK:        scf.for %j = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} : i32 {
CHECK-NEXT:     %[[ID:[0-9]+]] = memref.load %stick_id[] : memref<i32>
CHECK-NEXT:     %[[OFFSET:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:     %[[ADDR:[0-9]+]] = ttkernel.get_noc_addr(%[[ID]], %s, %[[OFFSET]]) : (i32, !ttkernel.tensor_accessor, i32) -> i64
CHECK-NEXT:     %[[J:[0-9]+]] = arith.index_cast %j : i32 to index
CHECK-NEXT:     memref.store %[[ADDR]], %base_src_noc_addr[%[[J]]] : memref<32xi64>
CHECK-NEXT:     %[[OLD:[0-9]+]] = memref.load %stick_id[] : memref<i32>
CHECK-NEXT:     %[[ONE:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT:     %[[NEW:[0-9]+]] = arith.addi %[[OLD]], %[[ONE]] : i32
CHECK-NEXT:     memref.store %[[NEW]], %stick_id[] : memref<i32>
CHECK-NEXT:   }
CHECK:        scf.for %block = %{{[0-9]+}} to %num_full_blocks_in_row step %{{[0-9]+}} : i32 {
CHECK-NEXT:     %[[CB:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:     %[[CBV:cb0(_[0-9]+)?]] = ttkernel.cb(%[[CB]]) : i32
CHECK-NEXT:     ttkernel.cb_reserve_back(%[[CBV]], %num_tiles_per_block) : !ttkernel.cb, i32
CHECK-NEXT:     %l1_write_addr = memref.alloca() : memref<i32>
CHECK-NEXT:     %[[CB2:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:     %[[CBV2:cb0(_[0-9]+)?]] = ttkernel.cb(%[[CB2]]) : i32
CHECK-NEXT:     %[[PTR:[0-9]+]] = ttkernel.get_write_ptr(%[[CBV2]]) : (!ttkernel.cb) -> i32
CHECK-NEXT:     memref.store %[[PTR]], %l1_write_addr[] : memref<i32>
CHECK:          scf.for %k = %{{[0-9]+}} to %{{[0-9]+}} step %{{[0-9]+}} : i32 {
CHECK:            %[[SRC:[0-9]+]] = memref.load %base_src_noc_addr[%{{[0-9]+}}] : memref<32xi64>
CHECK-NEXT:       %[[DST:[0-9]+]] = memref.load %l1_write_addr[] : memref<i32>
CHECK-NEXT:       ttkernel.noc_async_read(%[[SRC]], %[[DST]], %block_width_size) : i64, i32, i32
CHECK:            arith.addi %{{[0-9]+}}, %block_width_size : i32
CHECK-NEXT:       memref.store %{{[0-9]+}}, %l1_write_addr[] : memref<i32>
CHECK:            %[[WIDE:[0-9]+]] = arith.extui %block_width_size : i32 to i64
CHECK-NEXT:       %[[NEXT:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[WIDE]] : i64
CHECK-NEXT:       memref.store %[[NEXT]], %base_src_noc_addr[%{{[0-9]+}}] : memref<32xi64>
CHECK-NEXT:     }
CHECK-NEXT:     ttkernel.noc_async_read_barrier()
CHECK-NEXT:     %[[CB3:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:     %[[CBV3:cb0(_[0-9]+)?]] = ttkernel.cb(%[[CB3]]) : i32
CHECK-NEXT:     ttkernel.cb_push_back(%[[CBV3]], %num_tiles_per_block) : !ttkernel.cb, i32
CHECK-NEXT:   }
CHECK-NEXT:   %[[ZERO:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:   %[[ANY:[0-9]+]] = arith.cmpi ugt, %num_leftover_tiles, %[[ZERO]] : i32
CHECK-NEXT:   scf.if %[[ANY]] {
CHECK:          ttkernel.cb_reserve_back(%{{cb0[_0-9]*}}, %num_leftover_tiles) : !ttkernel.cb, i32
CHECK:          ttkernel.noc_async_read(%{{[0-9]+}}, %{{[0-9]+}}, %leftover_width_in_row) : i64, i32, i32
CHECK:          ttkernel.cb_push_back(%{{cb0[_0-9]*}}, %num_leftover_tiles) : !ttkernel.cb, i32
CHECK-NEXT:   }
CHECK-NEXT: }
CHECK-NEXT: func.return
"""

WRITER_CHECKS = """
CHECK-LABEL: func.func @writer_unary_interleaved_start_id() attributes {ttkernel.thread = "noc"}
CHECK:      %start_id = ttkernel.get_arg_val
CHECK-NEXT: %cb_id_out = ttkernel.get_compile_time_arg_val(0 : i32) : i32
CHECK-NEXT: %[[CB:cb_cb_id_out]] = ttkernel.cb(%cb_id_out) : i32
CHECK-NEXT: %dst_args = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32}
CHECK-NEXT: %page_bytes = ttkernel.get_tile_size(%[[CB]]) : (!ttkernel.cb) -> i32
CHECK-NEXT: %s = ttkernel.tensor_accessor(%dst_args, %dst_addr, %page_bytes)
CHECK-NEXT: %end_id = arith.addi %start_id, %num_pages : i32
CHECK-NEXT: %[[STEP:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT: scf.for %i = %start_id to %end_id step %[[STEP]] : i32 {
CHECK-NEXT:   %[[ONE:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT:   ttkernel.cb_wait_front(%[[CB]], %[[ONE]]) : !ttkernel.cb, i32
CHECK-NEXT:   %l1_read_addr = ttkernel.get_read_ptr(%[[CB]]) : (!ttkernel.cb) -> i32
CHECK-NEXT:   %[[SIZE:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:   %[[OFFSET:[0-9]+]] = arith.constant 0 : i32
CHECK-NEXT:   ttkernel.noc_async_write_page(%i, %s, %l1_read_addr, %[[SIZE]], %[[OFFSET]]) : i32, !ttkernel.tensor_accessor, i32, i32, i32
CHECK-NEXT:   ttkernel.noc_async_writes_flushed()
CHECK-NEXT:   %[[ONE2:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT:   ttkernel.cb_pop_front(%[[CB]], %[[ONE2]]) : !ttkernel.cb, i32
CHECK-NEXT: }
CHECK-NEXT: ttkernel.noc_async_write_barrier()
CHECK-NEXT: func.return
"""


@pytest.fixture(scope="module")
def tilize():
    return load_example("tilize")


def test_reader_reads_32_sticks_per_block(tilize):
    filecheck(tilize.reader_unary_stick_layout_split_rows_interleaved.ir(), READER_CHECKS)


def test_compute_is_the_wait_reserve_tilize_push_pop_loop(tilize):
    kernel = tilize.tilize
    assert kernel.function.attributes[THREAD_ATTR].data == "compute"
    assert op_names(kernel.function) == [
        "ttkernel.get_compile_time_arg_val", "ttkernel.get_compile_time_arg_val",
        "ttkernel.compute_kernel_hw_startup", "ttkernel.tilize_init",
        "scf.for",
        "ttkernel.cb_wait_front", "ttkernel.cb_reserve_back", "ttkernel.tilize_block", "ttkernel.cb_push_back",
        "ttkernel.cb_pop_front",
        "ttkernel.tilize_uninit",
    ]
    # the CB operands are the CBs of the constants 0 (c_0) and 16 (c_16), in the table's parameter order
    block = next(op for op in kernel.function.walk() if op.name == "ttkernel.tilize_block")
    assert all(isinstance(o.type, CBType) for o in (block.in_cb, block.out_cb))
    cbs = [constant_int(o) for o in (block.in_cb, block.out_cb)]
    assert cbs == [0, 16]
    assert block.block.name_hint == "per_core_block_tile_cnt"


def test_writer_writes_one_page_at_a_time_then_barriers(tilize):
    filecheck(tilize.writer_unary_interleaved_start_id.ir(), WRITER_CHECKS)


def _line_of(path, text: str) -> int:
    lines = path.read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, hits
    return hits[0]


def test_every_op_has_the_python_line_that_made_it(tilize):
    kernel = tilize.reader_unary_stick_layout_split_rows_interleaved
    path = EXAMPLES / "tilize.py"
    for op in kernel.function.walk():
        assert isinstance(op.location, FileLineColLoc), op
        assert op.location.filename.data == str(path)
    by_name = {}
    for op in kernel.function.walk():
        by_name.setdefault(op.name, []).append(op.location.line.data)
    assert by_name["ttkernel.get_noc_addr"] == [_line_of(path, "= get_noc_addr(stick_id, s)")]
    # ops of the inlined helper carry the helper's lines, once per call site
    assert by_name["ttkernel.noc_async_read"] == [_line_of(path, "noc_async_read(base_src_noc_addr[k]")] * 2
    assert by_name["ttkernel.cb_push_back"] == [_line_of(path, "cb_push_back(CB_IN, num_tiles)")] * 2
    assert kernel.function.location.line.data == _line_of(path, "def reader_unary_stick_layout_split_rows")
    push = next(op for op in kernel.function.walk() if op.name == "ttkernel.cb_push_back")
    assert push.location.column.data == 5  # the call starts in column 5 of the helper body


@pytest.mark.parametrize("example", ["tilize", "exp_tiles"])
@pytest.mark.parametrize("debuginfo", [False, True])
def test_mlir_text_round_trips(example, debuginfo):
    for kernel in load_example(example).KERNELS:
        text = kernel.ir(debuginfo=debuginfo)
        assert ("loc(" in text) == debuginfo
        module = parse_module(text)
        verify_kernel_module(module)
        assert print_ir(module, debuginfo=debuginfo) == text


def test_exp_compute_kernel_follows_the_tile_register_protocol():
    kernel = load_example("exp_tiles").exp_tiles
    loop_ops = [n for n in op_names(kernel.function) if n.startswith("ttkernel.tile_regs") or
                n in ("ttkernel.copy_tile", "ttkernel.exp_tile", "ttkernel.pack_tile")]
    assert loop_ops == ["ttkernel.tile_regs_acquire", "ttkernel.copy_tile", "ttkernel.exp_tile",
                        "ttkernel.tile_regs_commit", "ttkernel.tile_regs_wait", "ttkernel.pack_tile",
                        "ttkernel.tile_regs_release"]


def test_program_creates_kernels_from_pykernel_functions(tilize):
    program = Program("tilize")
    reader = program.create_kernel(tilize.reader_unary_stick_layout_split_rows_interleaved, (0, 0),
                                   DataMovementConfig("RISCV_0"))
    compute = program.create_kernel(tilize.tilize, (0, 0), ComputeConfig(), compile_args=[1, 8])
    writer = program.create_kernel(tilize.writer_unary_interleaved_start_id, (0, 0), DataMovementConfig("RISCV_1"),
                                   compile_args=[16])
    assert [k.function_name for k in (reader, compute, writer)] == [
        "reader_unary_stick_layout_split_rows_interleaved", "tilize", "writer_unary_interleaved_start_id"]
    functions = [op for op in program.module.body.block.ops if isinstance(op, func.FuncOp)]
    assert len(functions) == 3
    # the program holds its own copy; the kernel's module is left as it was
    assert tilize.tilize.function.attributes.get("ttkernel.compute_config") is None
