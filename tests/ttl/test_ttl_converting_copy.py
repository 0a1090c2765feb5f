"""``ttl.copy`` between a tensor and a block of the other float format (bfloat16 / float32), as
TT-Lang's spec examples do with a float32 input and a ``ttnn.zeros`` (bfloat16) output: the data
movement core converts through a staging area — bfloat16 widens exactly, float32 rounds to
nearest even. Simulated against numpy (ml_dtypes), C++ checked against the real headers."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros


@ttl.operation(grid=(2, 1))
def through(inp, out, like_out: bool):
    """Each node moves its column of tiles from ``inp`` to ``out`` through a buffer like ``out``
    (the read converts) or like ``inp`` (the write converts)."""
    dfb = ttl.make_dataflow_buffer_like(out if like_out else inp, shape=(2, 1), block_count=2)

    @ttl.datamovement()
    def read():
        nx, _ = ttl.node(dims=2)
        with dfb.reserve() as blk:
            ttl.copy(inp[0:2, nx:nx + 1], blk).wait()

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def write():
        nx, _ = ttl.node(dims=2)
        with dfb.wait() as blk:
            ttl.copy(blk, out[0:2, nx:nx + 1]).wait()


def _values():
    v = np.random.default_rng(11).standard_normal((64, 64)).astype(np.float32)
    v[0, :4] = [1.00390625, 1.01171875, -2.0078125, 3.0]     # ties: round to even both ways
    return v


def _to_bf16(v):
    return v.astype(ml_dtypes.bfloat16).astype(np.float32)


def test_float32_to_bfloat16_rounds_to_nearest_even_on_read_and_on_write():
    v = _values()
    for like_out in (True, False):
        inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
        out = zeros((64, 64))
        through(inp, out, like_out)
        np.testing.assert_array_equal(ttnn.to_numpy(out), _to_bf16(v))


def test_bfloat16_to_float32_is_exact_on_read_and_on_write():
    v = _to_bf16(_values())
    for like_out in (True, False):
        inp = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        out = zeros((64, 64), "float32")
        through(inp, out, like_out)
        np.testing.assert_array_equal(ttnn.to_numpy(out), v)


def test_converting_copies_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    inp = tile_tensor((64, 64), dtype="float32")
    program = compiled(through, inp, zeros((64, 64)), True).program
    for name, kind in (("read", "reader"), ("write", "writer")):
        kernel = next(k for k in program.kernels if k.name == name)
        path = tmp_path / f"{name}.cpp"
        path.write_text(emit_kernel(kernel.function))
        check_kernel.require_accepted(check_kernel.check_kernel(path, kind,
                                                                check_kernel.accessor_compile_args(program, kernel)))


def test_a_block_float_copy_still_names_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()  # error

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    expect_error(lambda: op(tile_tensor((32, 32), dtype="bfloat8_b"), zeros((32, 32))),
                 test_a_block_float_copy_still_names_the_users_line, KernelError,
                 "converts only between bfloat16 and float32")


@ttl.operation(grid=(1, 1))
def rows_through(inp, out, like_out: bool):
    """Row-major pixels (N, H, W, C) copied one pixel row of C channels at a time through a buffer
    like ``out`` (the read converts) or like ``inp`` (the write converts)."""
    n, h, w, c = inp.shape
    dfb = ttl.make_dataflow_buffer_like(out if like_out else inp, shape=(c,), block_count=2)

    @ttl.datamovement()
    def read():
        for i in range(h):
            for j in range(w):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i, j, :], blk).wait()

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def write():
        for i in range(h):
            for j in range(w):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i, j, :]).wait()


def test_row_major_copies_convert_row_by_row_on_read_and_on_write():
    # 24 channels: a float32 row is 96 bytes, a bfloat16 row 48, both padded to 16-byte pages
    # differently from 24 elements only when the widths are not multiples — 20 channels checks that
    for channels in (24, 20):
        v = np.random.default_rng(channels).standard_normal((1, 2, 3, channels)).astype(np.float32)
        for like_out in (True, False):
            inp = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
            out = ttnn.zeros((1, 2, 3, channels), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
            rows_through(inp, out, like_out)
            np.testing.assert_array_equal(ttnn.to_numpy(out), _to_bf16(v))
            back = ttnn.zeros((1, 2, 3, channels), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
            rows_through(out, back, like_out)
            np.testing.assert_array_equal(ttnn.to_numpy(back), _to_bf16(v))


def test_row_major_converting_copies_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    inp = ttnn.from_numpy(np.ones((1, 2, 2, 20), np.float32), dtype=ttnn.float32, layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.zeros((1, 2, 2, 20), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    # a buffer like the output: the reader converts; like the input: the writer does
    for like_out, name, kind in ((True, "read", "reader"), (False, "write", "writer")):
        program = compiled(rows_through, inp, out, like_out).program
        for kernel in [k for k in program.kernels if k.name == name]:
            path = tmp_path / f"{name}.cpp"
            path.write_text(emit_kernel(kernel.function))
            check_kernel.require_accepted(check_kernel.check_kernel(
                path, kind, check_kernel.accessor_compile_args(program, kernel)))
