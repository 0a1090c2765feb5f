"""What PyKernel accepts and the IR it builds for it: calls, constants, variables, control flow."""

from __future__ import annotations

import importlib.util
import inspect

import pytest
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType, i32, i64

from pykernel_helpers import assert_round_trips, filecheck, marked_line, op_names
from tilefold.ir.ttkernel import COMPUTE_CONFIG_ATTR, THREAD_ATTR, compute_config, constant_int
from tilefold.ir.ttkernel_api import API, PACK_CALLS
from tilefold.pykernel import *

CB_IN = CBIndex.c_0
CB_OUT = CBIndex.c_16
TILE_BYTES = 2 * 1024
DEBUG = False
FILL_VALUE = 0.25


def ops(kernel, name):
    return [op for op in kernel.function.walk() if op.name == name]


def constants(op):
    return [constant_int(v) for v in op.operands]


# --- calls ---------------------------------------------------------------------------------


def test_positional_keyword_default_and_template_arguments():
    @compute_kernel
    def k():
        reduce_init(CB_IN, CBIndex.c_2, CB_OUT, pool_type="MAX", reduce_dim="REDUCE_COL")
        tile_regs_acquire()
        reduce_tile(in_cb=CB_IN, scaler_cb=CBIndex.c_2, in_tile_index=3, scaler_tile_index=0, dst_index=1,
                    pool_type="MAX")
        tile_regs_commit()
        tile_regs_wait()
        pack_tile(1, CB_OUT, out_of_order_output=True)
        pack_tile(1, CB_OUT, 3)
        tile_regs_release()

    (init,) = ops(k, "ttkernel.reduce_init")
    assert init.template_values() == {"pool_type": "MAX", "reduce_dim": "REDUCE_COL",
                                      "enforce_fp32_accumulation": False}
    (reduce,) = ops(k, "ttkernel.reduce_tile")
    assert constants(reduce) == [0, 2, 3, 0, 1]
    assert reduce.template_values() == {"pool_type": "MAX", "reduce_dim": "REDUCE_ROW",      # table defaults
                                        "enforce_fp32_accumulation": False}
    assert "reduce_dim" not in reduce.properties
    first, second = ops(k, "ttkernel.pack_tile")
    assert constants(first) == [1, 16, 0]           # out_tile_index=0 filled in from the table
    assert first.template_values() == {"out_of_order_output": True}
    assert constants(second) == [1, 16, 3]
    assert "out_of_order_output" not in second.properties


def test_float_bool_and_u64_parameters():
    @compute_kernel
    def compute():
        tile_regs_acquire()
        fill_tile(0, -1.5)
        fill_tile(1, FILL_VALUE)
        fill_tile(2, 3)
        tile_regs_commit()
        tile_regs_wait()
        tile_regs_release()

    @writer_kernel
    def writer():
        noc_async_write_multicast(get_write_ptr(CB_OUT), 0x1000, 32, 4, linked=True)
        noc_async_write_multicast(get_write_ptr(CB_OUT), 0x1000, 32, 4)

    values = [op.operands[1].owner.value.value.data for op in ops(compute, "ttkernel.fill_tile")]
    assert values == [-1.5, 0.25, 3.0]
    assert all(op.operands[1].type.name == "f32" for op in ops(compute, "ttkernel.fill_tile"))
    linked, unlinked = ops(writer, "ttkernel.noc_async_write_multicast")
    assert linked.dst_noc_addr_multicast.type == i64 and constant_int(linked.dst_noc_addr_multicast) == 0x1000
    assert constant_int(linked.linked) == -1        # i1 true (a one-bit signless integer prints as -1 / true)
    assert constant_int(unlinked.linked) == 0
    assert_round_trips(compute)
    assert_round_trips(writer)


def _template_sample(t):
    """A value of template parameter ``t``: its last choice, a number (``uint32_t``) or True."""
    return t.choices[-1] if t.choices else 0x3F000000 if t.kind == "uint32_t" else True


def _call_source(fn) -> str:
    """A call of ``fn`` with one value of the right kind per parameter (templates as keywords)."""
    sample = {"u32": "1", "i32": "1", "u64": "4096", "f32": "1.0", "bool": "True", "accessor": "s",
              "l1_ptr": "l1_ptr(get_semaphore(0))"}
    args = [sample[p.kind] for p in fn.params]
    args += [f"{t.name}={_template_sample(t)!r}" for t in fn.templates]
    return f"{fn.name}({', '.join(args)})"


def test_every_api_function_of_the_table_is_callable(tmp_path):
    noc = [fn for fn in API.values() if fn.thread in ("noc", "any")]
    compute = [fn for fn in API.values() if fn.thread in ("compute", "any")]
    regs = {"tile_regs_acquire", "tile_regs_commit", "tile_regs_wait", "tile_regs_release"}
    lines = ["from tilefold.pykernel import *", "", "@reader_kernel", "def noc_kernel():",
             "    s = TensorAccessor(TensorAccessorArgs(0), 0, 2048)"]
    lines += [f"    {_call_source(fn)}" for fn in noc]
    lines += ["", "@compute_kernel", "def compute_kernel_with_everything():"]
    for fn in compute:
        if fn.name in regs:
            continue
        call = _call_source(fn)
        if fn.name in PACK_CALLS:
            call = f"tile_regs_acquire(); tile_regs_commit(); tile_regs_wait(); {call}; tile_regs_release()"
        elif fn.thread == "compute" and any(p.startswith("dst") for p in fn.param_names):
            call = f"tile_regs_acquire(); {call}; tile_regs_commit(); tile_regs_wait(); tile_regs_release()"
        lines.append(f"    {call}")
    path = tmp_path / "all_api_calls.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location("all_api_calls", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    for kernel, fns in ((module.noc_kernel, noc), (module.compute_kernel_with_everything, compute)):
        called = [op for op in kernel.function.walk() if op.name.startswith("ttkernel.")
                  and op.name.removeprefix("ttkernel.") in API]
        names = [op.name.removeprefix("ttkernel.") for op in called]
        for fn in fns:
            assert fn.name in names, fn.name
        for op in called:
            fn = API[op.name.removeprefix("ttkernel.")]
            assert len(op.operands) == len(fn.params)
            for t in fn.templates:
                assert op.template_values()[t.name] == _template_sample(t)
    assert len({fn.name for fn in noc} | {fn.name for fn in compute}) == len(API)


def test_kernel_call_to_a_module_attribute():
    import tilefold.pykernel as pk

    @reader_kernel
    def k():
        pk.cb_push_back(pk.CBIndex.c_3, 2)

    (push,) = ops(k, "ttkernel.cb_push_back")
    assert constants(push) == [3, 2]


# --- constants -------------------------------------------------------------------------------


def test_module_constants_are_folded():
    @reader_kernel
    def k():
        cb_wait_front(CB_IN + 1, (3 + 5) * 2 // 3 % 4)
        cb_push_back(CB_OUT, TILE_BYTES >> 10 | 1)
        cb_pop_front(True, -1 + 2)

    (wait,), (push,), (pop,) = ops(k, "ttkernel.cb_wait_front"), ops(k, "ttkernel.cb_push_back"), \
        ops(k, "ttkernel.cb_pop_front")
    assert constants(wait) == [1, 1]                 # ((3 + 5) * 2 // 3) % 4 == 5 % 4
    assert constants(push) == [16, 3]                # 2048 >> 10 | 1
    assert constants(pop) == [1, 1]
    assert op_names(k.function) == ["ttkernel.cb_wait_front", "ttkernel.cb_push_back", "ttkernel.cb_pop_front"]


def test_negative_constant_is_a_uint32_bit_pattern():
    @reader_kernel
    def k():
        noc_semaphore_set(l1_ptr(get_semaphore(0)), 0 - 1)

    (op,) = ops(k, "ttkernel.noc_semaphore_set")
    assert constant_int(op.value) % 2**32 == 0xFFFFFFFF


def test_constant_if_keeps_only_the_branch_taken():
    @reader_kernel
    def k():
        if DEBUG:
            cb_push_back(CB_IN, 1)
        else:
            cb_push_back(CB_OUT, 1)
        while DEBUG:
            cb_pop_front(CB_IN, 1)

    (push,) = ops(k, "ttkernel.cb_push_back")
    assert constants(push) == [16, 1]
    assert not ops(k, "scf.if") and not ops(k, "scf.while") and not ops(k, "ttkernel.cb_pop_front")


def test_names_defined_after_the_kernel_are_seen():
    @reader_kernel
    def k():
        cb_push_back(LATER, 1)

    global LATER
    LATER = 7
    try:
        assert constants(ops(k, "ttkernel.cb_push_back")[0]) == [7, 1]
    finally:
        del LATER


def test_closure_constants():
    cb = CBIndex.c_5

    @reader_kernel
    def k():
        cb_push_back(cb, 1)

    assert constants(ops(k, "ttkernel.cb_push_back")[0]) == [5, 1]


# --- variables --------------------------------------------------------------------------------


def test_single_assignments_are_named_ssa_values_and_mutables_are_allocas():
    @reader_kernel
    def k():
        once = get_arg_val(0)
        twice = 1
        twice = 2
        n = get_arg_val(1)
        if n > 2:
            branch = n + 1
        else:
            branch = 0
        for i in range(n):
            inside = i * 2
            cb_push_back(CB_IN, inside)
        cb_push_back(CB_IN, branch + once + twice)

    filecheck(k.ir(), """
CHECK:      %once = ttkernel.get_arg_val
CHECK-NEXT: %twice = memref.alloca() : memref<i32>
CHECK-NEXT: %[[ONE:[0-9]+]] = arith.constant 1 : i32
CHECK-NEXT: memref.store %[[ONE]], %twice[] : memref<i32>
CHECK-NEXT: %[[TWO:[0-9]+]] = arith.constant 2 : i32
CHECK-NEXT: memref.store %[[TWO]], %twice[] : memref<i32>
CHECK:      %n = ttkernel.get_arg_val
CHECK-NEXT: %branch = memref.alloca() : memref<i32>
CHECK:      scf.if
CHECK:        %[[B:[0-9]+]] = arith.addi %n, %{{[0-9]+}} : i32
CHECK-NEXT:   memref.store %[[B]], %branch[] : memref<i32>
CHECK-NEXT: } else {
CHECK:        memref.store %{{[0-9]+}}, %branch[] : memref<i32>
CHECK:      scf.for %i = %{{[0-9]+}} to %n step %{{[0-9]+}} : i32 {
CHECK:        %inside = arith.muli %i, %{{[0-9]+}} : i32
CHECK:        ttkernel.cb_push_back(%{{cb0[_0-9]*}}, %inside)
CHECK:      memref.load %branch[]
CHECK:      memref.load %twice[]
""")


def test_a_value_carried_between_iterations_is_declared_before_the_loop():
    @reader_kernel
    def k():
        for i in range(4):
            if i > 0:
                cb_push_back(CB_IN, prev)
            prev = i
        for j in range(4):
            addr = get_write_ptr(CB_IN)
            addr += j
            cb_push_back(CB_IN, addr)

    body = k.function.body.block
    top = [op.name for op in body.ops]
    assert top[0] == "memref.alloca" and body.first_op.memref.name_hint == "prev"
    second_loop = [op for op in body.ops if isinstance(op, scf.ForOp)][1]
    declared_inside = [op for op in second_loop.body.block.ops if isinstance(op, memref.AllocaOp)]
    assert [op.memref.name_hint for op in declared_inside] == ["addr"]


def test_64_bit_values_widen_32_bit_ones():
    @reader_kernel
    def k():
        base = get_arg_val(0)
        addr = get_noc_addr_xy(my_x(), my_y(), base)
        addr += base
        wide = uint64(0)
        wide = wide + 1
        low = uint32(addr)
        noc_async_read(addr + 64, low, 32)

    filecheck(k.ir(), """
CHECK:      %addr = memref.alloca() : memref<i64>
CHECK:      ttkernel.get_noc_addr_xy(%{{[0-9]+}}, %{{[0-9]+}}, %base) : (i32, i32, i32) -> i64
CHECK:      %[[W:[0-9]+]] = arith.extui %base : i32 to i64
CHECK-NEXT: %[[S:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[W]] : i64
CHECK-NEXT: memref.store %[[S]], %addr[] : memref<i64>
CHECK-NEXT: %wide = memref.alloca() : memref<i64>
CHECK-NEXT: %[[Z:[0-9]+]] = arith.constant 0 : i64
CHECK-NEXT: memref.store %[[Z]], %wide[] : memref<i64>
CHECK:      arith.constant 1 : i64
CHECK:      %low = arith.trunci %{{[0-9]+}} : i64 to i32
CHECK:      %[[C64:[0-9]+]] = arith.constant 64 : i64
CHECK-NEXT: %[[A:[0-9]+]] = arith.addi %{{[0-9]+}}, %[[C64]] : i64
CHECK:      ttkernel.noc_async_read(%[[A]], %low, %{{[0-9]+}}) : i64, i32, i32
""")


def test_arrays_and_l1_pointers():
    @reader_kernel
    def k():
        pages = array(uint32, 8)
        for i in range(8):
            pages[i] = i * 3
        p = l1_ptr(get_semaphore(0))
        p[0] = pages[7]
        half = l1_ptr(get_write_ptr(CB_IN), width=16)
        half[1] += 1
        noc_semaphore_wait(p, 1)

    (alloca,) = ops(k, "memref.alloca")
    assert isinstance(alloca.memref.type, MemRefType) and alloca.memref.type.get_shape() == (8,)
    assert alloca.memref.type.get_element_type() == i32 and alloca.memref.name_hint == "pages"
    stores = ops(k, "ttkernel.l1_store")
    assert [op.width.value.data for op in stores] == [32, 16]
    (load,) = ops(k, "ttkernel.l1_load")
    assert load.width.value.data == 16 and constant_int(load.index) == 1
    (wait,) = ops(k, "ttkernel.noc_semaphore_wait")
    assert wait.sem_addr.owner.name == "ttkernel.get_semaphore"
    assert_round_trips(k)


def test_accessor_args_chained_after_the_previous_ones():
    @reader_kernel
    def k():
        a_args = TensorAccessorArgs(2)
        b_args = TensorAccessorArgs(after=a_args)
        b = TensorAccessor(b_args, get_arg_val(0), TILE_BYTES)
        noc_async_read_page(0, b, get_write_ptr(CB_IN))

    first, second = ops(k, "ttkernel.tensor_accessor_args")
    assert first.cta_offset.value.data == 2 and first.prev is None
    assert second.prev is first.result and second.cta_offset is None


# --- control flow and operators -----------------------------------------------------------------


def test_unsigned_operators_and_chained_comparisons():
    @reader_kernel
    def k():
        a = get_arg_val(0)
        b = get_arg_val(1)
        c = a // b + a % b + (a >> 2) + (a << 1) + (a & b) + (a | b) + (a ^ b) - b * 3
        if 0 < a <= b and not a == b or a != 7:
            cb_push_back(CB_IN, c)

    names = op_names(k.function)
    for op in ("arith.divui", "arith.remui", "arith.shrui", "arith.shli", "arith.andi", "arith.ori",
               "arith.xori", "arith.subi", "arith.muli"):
        assert op in names, op
    predicates = [op.predicate.value.data for op in ops(k, "arith.cmpi")]
    assert predicates == [6, 7, 0, 1]       # ult (0 < a), ule (a <= b), eq, ne: unsigned comparisons


def test_short_circuit_when_the_right_side_calls():
    @reader_kernel
    def k():
        n = get_arg_val(0)
        if n > 0 and get_arg_val(n) > 4:
            cb_push_back(CB_IN, 1)

    filecheck(k.ir(), """
CHECK:      %[[FIRST:[0-9]+]] = arith.cmpi ugt, %n
CHECK-NEXT: %[[BOTH:[0-9]+]] = scf.if %[[FIRST]] -> (i1) {
CHECK-NEXT:   %[[ARG:[0-9]+]] = ttkernel.get_arg_val(%n)
CHECK:        %[[SECOND:[0-9]+]] = arith.cmpi ugt, %[[ARG]]
CHECK-NEXT:   scf.yield %[[SECOND]] : i1
CHECK-NEXT: } else {
CHECK-NEXT:   %[[FALSE:[0-9]+]] = arith.constant false
CHECK-NEXT:   scf.yield %[[FALSE]] : i1
CHECK-NEXT: }
CHECK-NEXT: scf.if %[[BOTH]] {
""")
    assert_round_trips(k)


def test_while_and_elif():
    @reader_kernel
    def k():
        n = get_arg_val(0)
        while n > 0:
            if n % 3 == 0:
                cb_push_back(CB_IN, 3)
            elif n % 3 == 1:
                cb_push_back(CB_IN, 1)
            else:
                cb_push_back(CB_IN, 2)
            n -= 1

    filecheck(k.ir(), """
CHECK:      %n = memref.alloca() : memref<i32>
CHECK:      scf.while () : () -> () {
CHECK-NEXT:   %[[N:[0-9]+]] = memref.load %n[] : memref<i32>
CHECK:        %[[C:[0-9]+]] = arith.cmpi ugt, %[[N]]
CHECK-NEXT:   scf.condition(%[[C]])
CHECK-NEXT: } do {
CHECK:        scf.if
CHECK:        } else {
CHECK:          scf.if
CHECK:          } else {
CHECK:        arith.subi
CHECK:        memref.store %{{[0-9]+}}, %n[] : memref<i32>
CHECK-NEXT:   scf.yield
""")
    assert_round_trips(k, debuginfo=[False])


def test_while_round_trips_with_locations():
    @reader_kernel
    def k():
        n = get_arg_val(0)
        while n > 0:
            n -= 1

    assert_round_trips(k, debuginfo=[True])


def test_min_max_and_conditional_expression():
    @reader_kernel
    def k():
        a = get_arg_val(0)
        b = get_arg_val(1)
        cb_push_back(CB_IN, min(a, b, 8) + max(a, 2) + (a if a > b else 5))

    names = op_names(k.function)
    assert names.count("arith.minui") == 2 and names.count("arith.maxui") == 1 and "arith.select" in names


# --- helpers -----------------------------------------------------------------------------------


@inline
def page_address(base, page, page_bytes=TILE_BYTES):
    offset = page * page_bytes  # helper line
    base += offset
    return base


def test_inline_helpers_take_keywords_defaults_and_return_values():
    @reader_kernel
    def k():
        start = get_arg_val(0)
        a = page_address(start, get_arg_val(1))
        b = page_address(start, page=get_arg_val(2), page_bytes=64)
        cb_push_back(CB_IN, a + b)

    muls = ops(k, "arith.muli")
    assert len(muls) == 2
    assert {m.location.line.data for m in muls} == {marked_line(page_address.python_function, "# helper line")}
    assert muls[0].location.filename.data == __file__
    # the helper assigns its parameter, so each call gets a 'base' local initialised with the argument
    bases = [op for op in ops(k, "memref.alloca") if op.memref.name_hint == "base"]
    assert len(bases) == 2
    assert [constant_int(m.rhs) for m in muls] == [TILE_BYTES, 64]


@inline
def shifted(addr, by=0):
    return addr + by


def test_a_variable_assigned_a_helper_result_takes_its_width():
    @reader_kernel
    def k():
        x = 0
        x = shifted(by=4, addr=get_noc_addr_xy(1, 2, 3))
        y = 0
        y = shifted(get_arg_val(0))
        noc_async_read(x, y, 4)

    x, y = ops(k, "memref.alloca")
    assert (x.memref.name_hint, x.memref.type.get_element_type()) == ("x", i64)
    assert (y.memref.name_hint, y.memref.type.get_element_type()) == ("y", i32)


# --- kernels ---------------------------------------------------------------------------------


def test_kernel_object():
    @compute_kernel(math_fidelity="LoFi", fp32_dest_acc_en=True)
    def configured():
        """A docstring is fine."""
        pass

    @kernel(thread="compute")
    def plain():
        return

    assert configured.function.sym_name.data == "configured"
    assert configured.function.attributes[THREAD_ATTR].data == "compute"
    assert compute_config(configured.function)["math_fidelity"] == "LoFi"
    assert compute_config(configured.function)["fp32_dest_acc_en"] is True
    assert COMPUTE_CONFIG_ATTR not in plain.function.attributes
    assert plain.thread == "compute" and plain.role == "kernel"
    assert configured.source_file == __file__
    assert configured.module.body.block.first_op is configured.function
    assert configured.ir().startswith("builtin.module {\n  func.func @configured() attributes")
    assert "loc(" in configured.ir(debuginfo=True)
    assert list(inspect.signature(cb_reserve_back).parameters) == ["cb", "num_pages"]
