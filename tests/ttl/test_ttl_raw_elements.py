"""ttl.raw_element_read / ttl.raw_element_write in data movement kernels: element copies, constants,
compare-and-swap and a running maximum on float32 and bfloat16 blocks, against numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import recorded_programs


def _bits(values, dtype: str):
    if dtype == "float32":
        return np.asarray(values, np.float32).view(np.uint32)
    return np.asarray(values).astype(ml_dtypes.bfloat16).view(np.uint16)


@ttl.operation(grid=(1, 1))
def element_copy(inp, out):
    """Element (0, 5) to (0, 0), and (40, 37) to (33, 1), of 2x2-tile blocks (other tiles and faces)."""
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(2, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm_read():
        with inp_dfb.reserve() as blk:
            ttl.copy(inp[0:2, 0:2], blk).wait()

    @ttl.datamovement()
    def dm_write():
        with inp_dfb.wait() as rblk:
            val = ttl.raw_element_read(rblk, 0, 5)
            far = ttl.raw_element_read(rblk, 40, 37)
            with out_dfb.reserve() as wblk:
                ttl.raw_element_write(wblk, 0, 0, val)
                ttl.raw_element_write(wblk, 33, 1, far)
                ttl.copy(wblk, out[0:2, 0:2]).wait()


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_an_element_is_copied_between_blocks(dtype):
    v = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
    x = ttnn.from_numpy(v, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((64, 64), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)
    element_copy(x, y)
    held, got = ttnn.to_numpy(x), ttnn.to_numpy(y)
    expected = np.zeros((64, 64), np.float32)
    expected[0, 0], expected[33, 1] = held[0, 5], held[40, 37]
    np.testing.assert_array_equal(_bits(got, dtype), _bits(expected, dtype))


def constant_write(value):
    @ttl.operation(grid=(1, 1))
    def constant_write(out):
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm_write():
            with out_dfb.reserve() as wblk:
                ttl.raw_element_write(wblk, 0, 0, value)
                ttl.raw_element_write(wblk, 17, 20, -2.5)
                ttl.copy(wblk, out[0, 0]).wait()

    return constant_write


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_a_float_constant_is_written_truncated_to_bfloat16(dtype):
    y = ttnn.zeros((32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)
    constant_write(3.14)(y)
    got = ttnn.to_numpy(y)
    f32 = int(np.float32(3.14).view(np.uint32))
    expected_bits = f32 if dtype == "float32" else f32 >> 16          # truncated, not rounded
    assert int(_bits(got, dtype)[0, 0]) == expected_bits
    assert got[17, 20] == -2.5
    rest = got.copy()
    rest[0, 0] = rest[17, 20] = 0
    assert not rest.any()


def sort_pair(out_dtype_differs: bool = False):
    @ttl.operation(grid=(1, 1))
    def sort_pair(inp, out):
        """Elements (0, 0) and (0, 1) in order with a > b; their minimum at (1, 0) with a < b ... else."""
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with inp_dfb.wait() as rblk:
                with out_dfb.reserve() as wblk:
                    a = ttl.raw_element_read(rblk, 0, 0)
                    b = ttl.raw_element_read(rblk, 0, 1)
                    ttl.raw_element_write(wblk, 0, 0, a)
                    ttl.raw_element_write(wblk, 0, 1, b)
                    if a > b:
                        ttl.raw_element_write(wblk, 0, 0, b)
                        ttl.raw_element_write(wblk, 0, 1, a)
                    if a < b:
                        ttl.raw_element_write(wblk, 1, 0, a)
                    else:
                        ttl.raw_element_write(wblk, 1, 0, b)
                    ttl.raw_element_write(wblk, 2, 0, 1.0)
                    if a == b:
                        ttl.raw_element_write(wblk, 2, 0, 2.0)
                    if a >= 0.5:
                        ttl.raw_element_write(wblk, 3, 0, 1.0)
                    ttl.copy(wblk, out[0, 0]).wait()

    return sort_pair


PAIRS = [(5.0, 2.0), (2.0, 5.0), (-3.0, -1.0), (-1.0, -3.0), (-2.0, 4.0), (4.0, -2.0), (0.0, -0.0), (-0.0, 0.0),
         (1.5, 1.5), (0.5, 0.25), (float("nan"), 1.0), (-7.0, float("inf")), (float("-inf"), -1e30)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_compare_and_swap_orders_two_elements_as_ieee_compares_them(dtype):
    kernel = sort_pair()
    for a, b in PAIRS:
        v = np.zeros((32, 32), np.float32)
        v[0, 0], v[0, 1] = a, b
        x = ttnn.from_numpy(v, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)
        y = ttnn.zeros((32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)
        kernel(x, y)
        held, got = ttnn.to_numpy(x), ttnn.to_numpy(y)
        a, b = held[0, 0], held[0, 1]
        first, second = (b, a) if a > b else (a, b)
        expected = [first, second, a if a < b else b, 2.0 if a == b else 1.0, 1.0 if a >= 0.5 else 0.0]
        got_values = [got[0, 0], got[0, 1], got[1, 0], got[2, 0], got[3, 0]]
        np.testing.assert_array_equal(_bits(got_values, dtype), _bits(expected, dtype), err_msg=f"a={a} b={b}")


@ttl.operation(grid=(1, 1))
def row_max(inp, out):
    """The greatest element of row 3 at (0, 0) of a float32 block, and its bfloat16 truncation at (0, 1)."""
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm_read():
        with inp_dfb.reserve() as blk:
            ttl.copy(inp[0, 0:2], blk).wait()

    @ttl.datamovement()
    def dm_write():
        with inp_dfb.wait() as rblk:
            with out_dfb.reserve() as wblk:
                best = ttl.raw_element_read(rblk, 3, 0)
                for c in range(1, 64):
                    val = ttl.raw_element_read(rblk, 3, c)
                    if val > best:
                        best = val
                ttl.raw_element_write(wblk, 0, 0, best)
                ttl.copy(wblk, out[0, 0]).wait()


def test_a_running_maximum_over_a_row_carries_the_read_value():
    v = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32) - 3.0
    x = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    row_max(x, y)
    assert ttnn.to_numpy(y)[0, 0] == v[3].max()


@ttl.operation(grid=(1, 1))
def narrowing_copy(inp, out):
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm_write():
        with inp_dfb.reserve() as rblk:
            ttl.copy(inp[0, 0], rblk).wait()
            with out_dfb.reserve() as wblk:
                for c in range(32):
                    ttl.raw_element_write(wblk, 0, c, ttl.raw_element_read(rblk, 0, c))
                ttl.copy(wblk, out[0, 0]).wait()


def test_a_float32_element_written_into_a_bfloat16_block_is_truncated():
    v = np.random.default_rng(9).standard_normal((32, 32)).astype(np.float32)
    v[0, 7] = np.nan
    x = ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    narrowing_copy(x, y)
    got = _bits(ttnn.to_numpy(y)[0], "bfloat16")
    expected = (v[0].view(np.uint32) >> 16).astype(np.uint16)
    assert np.isnan(ttnn.to_numpy(y)[0, 7])
    got[7] = expected[7] = 0
    np.testing.assert_array_equal(got, expected)


def test_raw_element_access_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        for dtype in (ttnn.float32, ttnn.bfloat16):
            sort_pair()(ttnn.zeros((32, 32), dtype=dtype, layout=ttnn.TILE_LAYOUT),
                        ttnn.zeros((32, 32), dtype=dtype, layout=ttnn.TILE_LAYOUT))
        row_max(ttnn.zeros((32, 64), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
                ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))
        narrowing_copy(ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
                       ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))
    assert len(programs) == 4
    for i, program in enumerate(programs):
        kernel = next(k for k in program.kernels if k.name == "dm_write")
        path = tmp_path / f"dm_write_{i}.cpp"
        path.write_text(emit_kernel(kernel.function))
        check_kernel.require_accepted(check_kernel.check_kernel(path, "writer", check_kernel.accessor_compile_args(
            program, kernel)))


def test_arithmetic_on_read_elements_is_refused_at_its_line():
    from ttl_helpers import expect_error

    @ttl.operation(grid=(1, 1))
    def element_sum(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm_write():
            with inp_dfb.reserve() as rblk:
                ttl.copy(inp[0, 0], rblk).wait()
                a = ttl.raw_element_read(rblk, 0, 0)
                b = ttl.raw_element_read(rblk, 0, 1)
                with out_dfb.reserve() as wblk:
                    ttl.raw_element_write(wblk, 0, 0, a + b)  # error
                    ttl.copy(wblk, out[0, 0]).wait()

    def run():
        element_sum(ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
                    ttnn.zeros((32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))

    expect_error(run, test_arithmetic_on_read_elements_is_refused_at_its_line, Exception, "a + b",
                 "is not supported by tilefold yet")


def _gather_by_index(offset: int = 0):
    """Row ``read_index(idx, 0, i) + offset`` of ``table`` becomes row ``i`` of ``out`` (four rows)."""
    @ttl.operation(grid=(1, 1))
    def gather(table, idx, out):
        idx_dfb = ttl.make_dataflow_buffer_like(idx, shape=(1, 1), block_count=1)
        row_dfb = ttl.make_dataflow_buffer_like(table, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with idx_dfb.reserve() as d:
                ttl.copy(idx[0, 0], d).wait()
            with idx_dfb.wait() as blk:
                for i in range(4):
                    r = ttl.read_index(blk, 0, i) + offset
                    with row_dfb.reserve() as d:
                        ttl.copy(table[r:r + 1, 0:1], d).wait()

        @ttl.datamovement()
        def write():
            for i in range(4):
                with row_dfb.wait() as d:
                    ttl.copy(d, out[i:i + 1, 0:1]).wait()

        @ttl.compute()
        def compute():
            pass

    return gather


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_read_index_picks_the_tile_rows_an_element_names(dtype, tmp_path, check_kernel):
    """``ttl.read_index(blk, r, c)``: an element as an integer, truncated toward zero, used as the
    start of a tensor slice (TT-Lang's embedding gather, KV-cache append)."""
    from tilefold.codegen.cpp import emit_kernel
    from ttl_helpers import compiled

    gather = _gather_by_index()
    table = np.random.default_rng(4).standard_normal((8 * 32, 32)).astype(np.float32)
    index = np.zeros((32, 32), np.float32)
    index[0, :4] = [5.9, 0.2, 7.0, 3.5]                        # rows 5, 0, 7, 3 (truncated)
    tensors = (ttnn.from_numpy(table, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT),
               ttnn.from_numpy(index, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT),
               ttnn.zeros((4 * 32, 32), dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT))
    gather(*tensors)
    stored = ttnn.to_numpy(tensors[0])
    want = np.concatenate([stored[r * 32:(r + 1) * 32] for r in (5, 0, 7, 3)])
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[2]), want)
    program = compiled(gather, *tensors).program
    kernel = next(k for k in program.kernels if k.name == "read")
    path = tmp_path / "read.cpp"
    path.write_text(emit_kernel(kernel.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_element_access_in_a_body_without_kernel_functions():
    """Element reads, writes and ``read_index`` run in a data movement kernel (with the blocks they
    use), and a copy of a block that kernel holds goes with it (TT-Lang's KV-cache patch)."""

    @ttl.operation(grid=(1, 1))
    def patch(cache, k, pos, out):
        pos_dfb = ttl.make_dataflow_buffer_like(pos, shape=(1, 1), block_count=1)
        k_dfb = ttl.make_dataflow_buffer_like(k, shape=(1, 1), block_count=1)
        band_dfb = ttl.make_dataflow_buffer_like(cache, shape=(1, 1), block_count=1)
        pd = pos_dfb.reserve()
        ttl.copy(pos[0, 0], pd)
        pos_blk = pos_dfb.wait()
        r = ttl.read_index(pos_blk, 0, 0)
        row = ttl.read_index(pos_blk, 0, 1)
        kd = k_dfb.reserve()
        ttl.copy(k[0:1, 0:1], kd)
        bd = band_dfb.reserve()
        ttl.copy(cache[r:r + 1, 0:1], bd)
        band = band_dfb.wait()
        kb = k_dfb.wait()
        for c in range(32):
            ttl.raw_element_write(band, row, c, ttl.raw_element_read(kb, 0, c))
        ttl.copy(band, out[r:r + 1, 0:1])

    rng = np.random.default_rng(6)
    cache = rng.standard_normal((4 * 32, 32)).astype(np.float32)
    key = rng.standard_normal((32, 32)).astype(np.float32)
    pos = np.zeros((32, 32), np.float32)
    pos[0, :2] = [2, 17]                                       # tile row 2, row 17 of it
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (cache, key, pos)]
    out = ttnn.from_numpy(cache, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    patch(*tensors, out)
    want = cache.copy()
    want[2 * 32 + 17] = key[0]
    np.testing.assert_array_equal(ttnn.to_numpy(out), want)


def test_read_index_of_negative_and_fractional_values_reads_int32_bits_as_signed():
    """``read_index`` works on the element's 32 bits: its exponent, negative for magnitudes below
    one, is compared and shifted as the device's int32 does (the simulator holds such values as
    uint32 and reads them signed for those operations), so -2.5 is -2 and 0.2 is 0."""
    from tilefold.sim.kernel_python import emit_python_source
    from ttl_helpers import compiled

    gather = _gather_by_index(offset=2)
    table = np.random.default_rng(5).standard_normal((4 * 32, 32)).astype(np.float32)
    index = np.zeros((32, 32), np.float32)
    index[0, :4] = [-2.5, 0.2, -0.7, 1.9]                      # -2, 0, 0, 1: rows 0, 2, 2, 3
    tensors = (ttnn.from_numpy(table, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
               ttnn.from_numpy(index, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT),
               ttnn.zeros((4 * 32, 32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))
    gather(*tensors)
    want = np.concatenate([table[r * 32:(r + 1) * 32] for r in (0, 2, 2, 3)])
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[2]), want)
    kernel = next(k for k in compiled(gather, *tensors).program.kernels if k.name == "read")
    source, _ = emit_python_source(kernel.function)
    assert "k.signed32(" in source and "& 31)) & 0xFFFFFFFF" in source
