"""Each compute call of the API table names the init it needs and its init family; each call's
side effects are a trait of its ttkernel op, so xDSL's dead-code elimination keeps what writes."""

from __future__ import annotations

from xdsl.transforms.dead_code_elimination import region_dce

from tilefold.ir.context import parse_module, print_ir
from tilefold.ir.ttkernel_api import API


def test_every_init_a_call_names_is_a_configuring_row_of_the_table():
    for fn in API.values():
        if fn.init is not None:
            assert fn.init in API and API[fn.init].configures, (fn.name, fn.init)
            assert fn.family is not None, fn.name


def test_compute_calls_without_an_init_are_the_dst_protocol_the_l1_accumulation_switch_and_cb_reads():
    bare = {f.name for f in API.values() if f.thread == "compute" and not f.configures and f.init is None}
    assert bare == {"tile_regs_acquire", "tile_regs_commit", "tile_regs_wait", "tile_regs_release",
                    "pack_reconfig_l1_acc", "read_tile_value"}


def test_only_calls_with_a_result_are_free_of_writes():
    for fn in API.values():
        assert fn.effects in ("pure", "read", "write"), fn.name
        if fn.result is None:
            assert fn.effects == "write", fn.name


KERNEL = """
builtin.module {
  func.func @reader() attributes {ttkernel.thread = "noc"} {
    %c0 = arith.constant 0 : i32
    %cb_c0 = ttkernel.cb(%c0) : i32
    %c1 = arith.constant 1 : i32
    %unused_arg = ttkernel.get_arg_val(%c1) : (i32) -> i32
    %unused_ptr = ttkernel.get_write_ptr(%cb_c0) : (!ttkernel.cb) -> i32
    %x = ttkernel.my_x() : i32
    ttkernel.cb_reserve_back(%cb_c0, %c1) : !ttkernel.cb, i32
    ttkernel.cb_push_back(%cb_c0, %c1) : !ttkernel.cb, i32
    func.return
  }
}
"""


def test_dead_code_elimination_drops_unused_reads_and_keeps_every_write():
    module = parse_module(KERNEL)
    region_dce(module.body)
    text = print_ir(module)
    assert "get_arg_val" not in text and "get_write_ptr" not in text and "my_x" not in text
    assert "cb_reserve_back" in text and "cb_push_back" in text
