"""The ttkernel dialect: one op per API function, MLIR text round trip, and the verifiers that
reject statically knowable misuse at the user's line."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import i32
from xdsl.utils.exceptions import VerifyException

from tilefold.errors import KernelError
from tilefold.ir.context import parse_module, print_ir
from tilefold.ir.ttkernel import API_OPS, CBOp, CBType, TTKernel, api_call, constant_int
from tilefold.ir.ttkernel_api import API
from tilefold.ir.verify import verify_kernel_module

HEADER = 'builtin.module {\n  func.func @k() attributes {ttkernel.thread = "%s"%s} {\n'
FOOTER = "    func.return\n  }\n}\n"


def kernel(thread: str, body: str, config: str = "") -> str:
    return HEADER % (thread, config) + body + FOOTER


def test_every_api_function_is_an_op_with_its_parameters():
    assert len(API_OPS) == len(API) > 150
    for name, cls in API_OPS.items():
        assert cls.name == f"ttkernel.{name}"
        assert [d[0] for d in cls.get_irdl_definition().operands] == list(API[name].param_names)
    assert {"noc_async_read_page", "noc_async_write_page", "matmul_tiles", "tilize_block", "pack_tile",
            "reduce_tile", "transpose_wh_tile", "noc_semaphore_wait", "exp_tile", "tile_regs_acquire"} <= set(API_OPS)
    assert not {"noc_async_read_tile", "noc_async_write_tile", "acquire_dst", "release_dst"} & set(API_OPS)


def test_every_cb_parameter_takes_a_cb_and_only_cb_parameters_do():
    for name, cls in API_OPS.items():
        constraints = dict(cls.get_irdl_definition().operands)
        for p in API[name].params:
            constraint = constraints[p.name].constr
            assert constraint.verifies([CBType()]) == (p.role == "cb"), (name, p.name)
            assert not (p.role == "cb" and constraint.verifies([i32])), (name, p.name)


def test_an_integer_where_a_cb_belongs_is_refused_by_type():
    with pytest.raises(VerifyException, match="i32 should be of base attribute ttkernel.cb"):
        parse_module(kernel("noc", '    %0 = arith.constant 0 : i32\n    ttkernel.cb_push_back(%0, %0) : i32, i32\n'))


def test_api_call_makes_one_cb_per_integer_index_right_after_it():
    module = parse_module(kernel("noc", '    %0 = arith.constant 3 : i32\n    %1 = arith.constant 1 : i32\n'))
    block = module.body.block.first_op.body.block
    index, pages = block.first_op.result, block.first_op.next_op.result
    for name in ("cb_reserve_back", "cb_push_back"):
        block.insert_op_before(api_call(name, [index, pages]), block.last_op)
    cbs = [op for op in block.ops if isinstance(op, CBOp)]
    assert len(cbs) == 1 and cbs[0].prev_op is index.owner and constant_int(cbs[0].result) == 3
    verify_kernel_module(module)


def test_printed_cbs_are_named_after_their_index():
    module = parse_module(kernel("noc", '    %0 = arith.constant 16 : i32\n'
                                        '    %in_dfb = ttkernel.get_compile_time_arg_val(0) : i32\n'))
    block = module.body.block.first_op.body.block
    index, arg = block.first_op.result, block.first_op.next_op.result
    for cb in (index, arg):
        block.insert_op_before(api_call("cb_push_back", [cb, index]), block.last_op)
    text = print_ir(module)
    assert "%cb16 = ttkernel.cb(%0) : i32" in text and "%cb_in_dfb = ttkernel.cb(%in_dfb) : i32" in text


def test_text_round_trip_with_locations():
    text = kernel("noc", """\
    %0 = arith.constant 0 : i32 loc("r.py":3:4)
    %1 = ttkernel.get_arg_val(%0) : (i32) -> i32 loc("r.py":4:4)
    %2 = ttkernel.tensor_accessor_args() {cta_offset = 1 : i32} : !ttkernel.tensor_accessor_args loc("r.py":5:4)
    %3 = ttkernel.tensor_accessor(%2, %1, %1) : !ttkernel.tensor_accessor_args, i32, i32 loc("r.py":6:4)
    ttkernel.noc_async_read_page(%0, %3, %1, %0) : i32, !ttkernel.tensor_accessor, i32, i32 loc("r.py":7:4)
    ttkernel.noc_async_read_barrier() loc("r.py":8:4)
""")
    module = parse_module(text)
    verify_kernel_module(module)
    printed = print_ir(module, debuginfo=True)
    assert print_ir(parse_module(printed), debuginfo=True) == printed
    assert 'loc("r.py":7:4)' in printed


@pytest.mark.parametrize("thread, body, config, message", [
    ("noc", '%0 = arith.constant 0 : i32\n    %c = ttkernel.cb(%0) : i32\n    ttkernel.pack_tile(%0, %c, %0) : i32, !ttkernel.cb, i32 loc("k.py":9:1)\n', "",
     "pack_tile is a compute API call but kernel @k is a data-movement kernel"),
    ("compute", '%0 = arith.constant 0 : i32\n    ttkernel.noc_async_read_barrier() loc("k.py":9:1)\n', "",
     "noc_async_read_barrier is a data-movement API call but kernel @k is a compute kernel"),
    ("noc", '%0 = arith.constant 70 : i32\n    %c = ttkernel.cb(%0) : i32 loc("k.py":9:1)\n    ttkernel.cb_push_back(%c, %0) : !ttkernel.cb, i32\n', "",
     "circular buffer index 70 is outside 0-63"),     # no device has more (Blackhole 64; a Program checks its own)
    ("compute", '%0 = arith.constant 8 : i32\n    %1 = arith.constant 0 : i32\n    ttkernel.tile_regs_acquire()\n'
                '    %c = ttkernel.cb(%1) : i32\n    ttkernel.copy_tile(%c, %1, %0) : !ttkernel.cb, i32, i32 loc("k.py":9:1)\n', "",
     "DST index 8 is beyond the 8 tiles"),
    ("compute", '%0 = arith.constant 4 : i32\n    %1 = arith.constant 0 : i32\n    ttkernel.tile_regs_acquire()\n'
                '    %c = ttkernel.cb(%1) : i32\n    ttkernel.copy_tile(%c, %1, %0) : !ttkernel.cb, i32, i32 loc("k.py":9:1)\n',
     ', ttkernel.compute_config = #ttkernel.compute_config<fp32_dest_acc_en = true>', "DST index 4 is beyond the 4 tiles"),
    ("compute", '%0 = arith.constant 0 : i32\n    %c = ttkernel.cb(%0) : i32\n    ttkernel.pack_tile(%0, %c, %0) : i32, !ttkernel.cb, i32 loc("k.py":9:1)\n', "",
     "pack_tile while DST is released"),
    ("compute", '%0 = arith.constant 0 : i32\n    ttkernel.tile_regs_acquire()\n'
                '    ttkernel.tile_regs_commit()\n    %c = ttkernel.cb(%0) : i32\n    ttkernel.pack_tile(%0, %c, %0) : i32, !ttkernel.cb, i32 loc("k.py":9:1)\n',
     "", "pack_tile while DST is committed"),
    ("compute", '%0 = arith.constant 0 : i32\n    %c = ttkernel.cb(%0) : i32\n    ttkernel.add_tiles(%c, %c, %0, %0, %0) : !ttkernel.cb, !ttkernel.cb, i32, i32, i32 '
                'loc("k.py":9:1)\n', "", "add_tiles writes DST while it is released"),
])
def test_verifiers_reject_misuse_at_the_users_line(thread, body, config, message):
    module = parse_module(kernel(thread, "    " + body, config))
    with pytest.raises(KernelError) as err:
        verify_kernel_module(module)
    assert str(err.value).startswith("k.py:9: ")
    assert message in str(err.value)


def test_tile_regs_protocol_through_loops():
    good = kernel("compute", """\
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %cb = ttkernel.cb(%c0) : i32
    scf.for %i = %c0 to %c4 step %c1 : i32 {
      ttkernel.tile_regs_acquire()
      ttkernel.copy_tile(%cb, %c0, %c0) : !ttkernel.cb, i32, i32
      ttkernel.tile_regs_commit()
      ttkernel.tile_regs_wait()
      ttkernel.pack_tile(%c0, %cb, %c0) : i32, !ttkernel.cb, i32
      ttkernel.tile_regs_release()
    }
""")
    verify_kernel_module(parse_module(good))
    bad = good.replace("      ttkernel.tile_regs_release()\n", "").replace(
        "scf.for %i = %c0 to %c4 step %c1 : i32 {", "scf.for %i = %c0 to %c4 step %c1 : i32 {")
    bad = bad.replace("    }\n    func.return", '    } loc("k.py":12:1)\n    func.return')
    with pytest.raises(KernelError, match="k.py:12: the loop body leaves DST waited"):
        verify_kernel_module(parse_module(bad))


def test_dialect_registers_accessor_types():
    names = {t.name for t in TTKernel.attributes}
    assert {"ttkernel.tensor_accessor_args", "ttkernel.tensor_accessor"} <= names
