"""Random small programs with injected mistakes: every run ends in a ``tilefold.errors`` exception
or in the result a numpy model of the program predicts — never another exception, never a hang.

A copy pipeline (reader → compute → writer over one row of tiles) whose kernels take their
mistakes from runtime arguments (first page, page count, pages per step, a skipped barrier, a
DST slot, a skipped pop, the accessor's page size), on a host configuration with its own
mistakes (processor names, circular-buffer formats and sizes, missing runtime arguments). The
watchdog bounds every run; hypothesis draws a fixed number of cases."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilefold.errors import TilefoldError
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device

from simhelpers import grid, random_tiles

CB_IN, CB_OUT = 0, 16


@reader_kernel
def fuzz_reader():
    src = get_arg_val(0)
    first = get_arg_val(1)
    n = get_arg_val(2)
    step = get_arg_val(3)
    barrier = get_arg_val(4)
    page = get_arg_val(5)
    s = TensorAccessor(TensorAccessorArgs(0), src, page)
    for i in range(0, n, step):
        cb_reserve_back(CB_IN, step)
        for j in range(step):
            noc_async_read_page(first + i + j, s, get_write_ptr(CB_IN) + j * get_tile_size(CB_IN))
        if barrier == 1:
            noc_async_read_barrier()
        cb_push_back(CB_IN, step)
    noc_async_read_barrier()


@compute_kernel
def fuzz_compute():
    n = get_arg_val(0)
    slot = get_arg_val(1)
    unary_op_init_common(CB_IN, CB_OUT)
    copy_tile_init(CB_IN)
    for i in range(n):
        cb_wait_front(CB_IN, 1)
        tile_regs_acquire()
        copy_tile(CB_IN, 0, slot)
        tile_regs_commit()
        tile_regs_wait()
        cb_reserve_back(CB_OUT, 1)
        pack_tile(slot, CB_OUT)
        cb_push_back(CB_OUT, 1)
        tile_regs_release()
        cb_pop_front(CB_IN, 1)


@writer_kernel
def fuzz_writer():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    pop = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(CB_OUT))
    for i in range(n):
        cb_wait_front(CB_OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(CB_OUT))
        noc_async_write_barrier()
        if pop == 1:
            cb_pop_front(CB_OUT, 1)


FORMATS = {"bfloat16": 2048, "bfloat8_b": 1088, "float32": 4096}

VALID = {"first": 0, "extra": 0, "step": 1, "barrier": 1, "slot": 0, "pop": 1, "page": 2048,
         "cb_format": "bfloat16", "cb_page": "format", "reader": "RISCV_0", "drop_arg": None}

# each case: a valid program of 1-5 tiles and 1-4 CB pages, then zero to two mistakes
MISTAKES = {
    "first": st.integers(1, 2),                 # start past page 0 (the last pages fall off the end)
    "extra": st.sampled_from([-1, 1]),           # one page too few or too many
    "step": st.integers(2, 3),                   # pages per reserve / push
    "barrier": st.just(0),                       # push before the read barrier
    "slot": st.sampled_from([1, 7, 16]),         # a DST slot (16 is past a 16-bit DST's 8 tiles... and more)
    "pop": st.just(0),                           # the writer never pops
    "page": st.just(1024),                       # an accessor page size that is not the buffer's
    "cb_format": st.sampled_from(["bfloat8_b", "float32"]),
    "cb_page": st.just("half"),                  # CB pages half their format's tile
    "reader": st.sampled_from(["RISCV_1", "RISCV_2"]),
    "drop_arg": st.sampled_from(["reader", "writer"]),
}


@st.composite
def case(draw):
    c = dict(VALID, tiles=draw(st.integers(1, 5)), cb_pages=draw(st.integers(1, 4)))
    for kind in draw(st.lists(st.sampled_from(sorted(MISTAKES)), max_size=2, unique=True)):
        c[kind] = draw(MISTAKES[kind])
    return c


def build(c):
    prog = Program("fuzz")
    n = c["tiles"]
    src = prog.add_buffer("src", (32, 32 * n), "bfloat16")
    dst = prog.add_buffer("dst", (32, 32 * n), "bfloat16", role="output")
    cores = grid(1)
    page = FORMATS[c["cb_format"]] // (2 if c["cb_page"] == "half" else 1)
    prog.create_circular_buffer(cores, CB_IN, page, c["cb_pages"], c["cb_format"])
    prog.create_circular_buffer(cores, CB_OUT, 2048, 2, "bfloat16")
    ct = [src.accessor_args, dst.accessor_args]
    count = n - c["first"] + c["extra"]
    writer_proc = "RISCV_1" if c["reader"] != "RISCV_1" else "RISCV_0"
    r = prog.create_kernel(fuzz_reader, cores, DataMovementConfig(c["reader"]), ct)
    k = prog.create_kernel(fuzz_compute, cores, ComputeConfig())
    w = prog.create_kernel(fuzz_writer, cores, DataMovementConfig(writer_proc), ct)
    reader_args = [src.address, c["first"], max(count, 0), c["step"], c["barrier"], c["page"]]
    writer_args = [dst.address, max(count, 0), c["pop"]]
    if c["drop_arg"] == "reader":
        reader_args.pop()
    if c["drop_arg"] == "writer":
        writer_args.pop()
    prog.set_runtime_args(r, (0, 0), reader_args)
    prog.set_runtime_args(k, (0, 0), [max(count, 0), c["slot"]])
    prog.set_runtime_args(w, (0, 0), writer_args)
    return prog, max(count, 0)


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(case())
def test_mistakes_end_in_a_tilefold_error_or_the_modelled_result(c):
    x = random_tiles((32, 32 * c["tiles"]), 5)
    try:
        prog, count = build(c)
        result = Device().run(prog, {"src": x}, max_cycles=10_000_000)
    except TilefoldError as err:
        assert str(err)                       # a message, and the class says which kind of mistake
        return
    # no error: the program must have done what it says — pages first..first+count-1 copied to 0..count-1
    expected = np.zeros_like(x)
    f = c["first"]
    expected[:, :32 * count] = x[:, 32 * f:32 * (f + count)]
    np.testing.assert_array_equal(result.outputs["dst"], expected)
