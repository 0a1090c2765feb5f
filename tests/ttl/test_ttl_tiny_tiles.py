"""TT-Lang data movement on tiles other than 32x32, and ``ttl.copy(..., byte_count=n)``.

Buffers like a tensor of 1x32 / 16x32 tiles (or ``ttl.make_dfb(..., tile=(h, w))``) hold one page
per such tile; copies between a tensor slice and a block move those pages. A copy between two
blocks, and a pipe send / receive, with ``byte_count=n`` moves only the first ``n`` bytes (the rest
of the destination keeps its bytes). Results are compared byte for byte with numpy; the kernels
and ``main.cpp`` are checked against the real headers; misuse is one error at the user's line.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error

ROWS = 14
WIDTH = 32
FULL = (32, WIDTH)


def _byte_counted_round_trip(dtype: str, byte_count: int):
    """Node (0, 0) stages 14 1x32 pages into a 32x32 page (first ``byte_count`` bytes), writes it
    out and sends that prefix to node (1, 0), which writes what it received and copies the prefix
    back into 14 1x32 pages."""

    @ttl.operation(grid=(2, 1))
    def round_trip(inp, send_seed, receive_seed, compact_seed, local_out, pipe_out, compact_out):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        compact_in = ttl.make_dataflow_buffer_like(inp, shape=(ROWS, 1), block_count=1)
        send_dfb = ttl.make_dfb(dtype, shape=(1, 1), block_count=1, tile=FULL)
        receive_dfb = ttl.make_dfb(dtype, shape=(1, 1), block_count=1, tile=FULL)
        compact_back = ttl.make_dataflow_buffer_like(compact_out, shape=(ROWS, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with send_dfb.reserve() as blk:
                    ttl.copy(send_seed[0:1, 0:1], blk).wait()
                with send_dfb.wait():
                    pass
                with compact_in.reserve() as rows:
                    ttl.copy(inp[0:ROWS, 0:1], rows).wait()
                with compact_in.wait() as rows:
                    with send_dfb.reserve() as blk:
                        ttl.copy(rows, blk, byte_count=byte_count).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, local_out[0:1, 0:1]).wait()
                    ttl.copy(blk, pipe, byte_count=byte_count).wait()

            net.if_src(send)

            def receive(pipe):
                with receive_dfb.reserve() as blk:
                    ttl.copy(receive_seed[0:1, 0:1], blk).wait()
                with receive_dfb.wait():
                    pass
                with compact_back.reserve() as rows:
                    ttl.copy(compact_seed[0:ROWS, 0:1], rows).wait()
                with compact_back.wait():
                    pass
                with receive_dfb.reserve() as blk:
                    ttl.copy(pipe, blk, byte_count=byte_count).wait()
                with receive_dfb.wait() as blk:
                    ttl.copy(blk, pipe_out[0:1, 0:1]).wait()
                    with compact_back.reserve() as rows:
                        ttl.copy(blk, rows, byte_count=byte_count).wait()
                with compact_back.wait() as rows:
                    ttl.copy(rows, compact_out[0:ROWS, 0:1]).wait()

            net.if_dst(receive)

        @ttl.datamovement()
        def idle():
            pass

    return round_trip


CASES = [("bf16", ttnn.bfloat16, ml_dtypes.bfloat16, ROWS * WIDTH * 2), ("bf16", ttnn.bfloat16, ml_dtypes.bfloat16, 3),
         ("float32", ttnn.float32, np.float32, ROWS * WIDTH * 4), ("float32", ttnn.float32, np.float32, 5),
         ("bf16", ttnn.bfloat16, ml_dtypes.bfloat16, 64)]


def _tensors(tt_dtype, np_dtype):
    values = ((np.arange(ROWS * WIDTH) % 97) - 48).astype(np.float32).reshape(ROWS, WIDTH).astype(np_dtype)
    seed = np.float32(1024.0001220703125)
    host = {"inp": values, "send_seed": np.full(FULL, -seed, np.float32).astype(np_dtype),
            "receive_seed": np.full(FULL, seed, np.float32).astype(np_dtype),
            "compact_seed": np.full((ROWS, WIDTH), -2 * seed, np.float32).astype(np_dtype)}
    host.update(local_out=np.zeros(FULL, np_dtype), pipe_out=np.zeros(FULL, np_dtype),
                compact_out=np.zeros((ROWS, WIDTH), np_dtype))
    tiles = {"inp": (1, 32), "compact_seed": (1, 32), "compact_out": (1, 32)}
    device = {name: ttnn.from_numpy(v.astype(np.float32), dtype=tt_dtype, layout=ttnn.TILE_LAYOUT,
                                    tile=ttnn.Tile(tiles.get(name, FULL)))
              for name, v in host.items()}
    return host, device


def _bytes_of_tiles(values: np.ndarray, tile) -> np.ndarray:
    """The bytes of ``values`` (rows of 32) in 1x32 / 32x32 device pages: face order within a tile."""
    h, w = tile
    out = []
    for r in range(0, values.shape[0], h):
        t = values[r:r + h]
        faces = [t[:16, :16], t[:16, 16:], t[16:, :16], t[16:, 16:]] if h == 32 else [t[:, :16], t[:, 16:]]
        out.extend(f.reshape(-1) for f in faces)
    return np.concatenate(out).view(np.uint8)


def _from_tile_bytes(data: np.ndarray, like: np.ndarray, tile) -> np.ndarray:
    """Inverse of :func:`_bytes_of_tiles`."""
    h, _ = tile
    flat = data.view(like.dtype)
    out = np.empty_like(like)
    pos = 0
    for r in range(0, like.shape[0], h):
        if h == 32:
            for rs, cs in ((slice(0, 16), slice(0, 16)), (slice(0, 16), slice(16, 32)),
                           (slice(16, 32), slice(0, 16)), (slice(16, 32), slice(16, 32))):
                out[r:r + h][rs, cs] = flat[pos:pos + 256].reshape(16, 16)
                pos += 256
        else:
            for cs in (slice(0, 16), slice(16, 32)):
                out[r:r + h, cs] = flat[pos:pos + 16 * h].reshape(h, 16)
                pos += 16 * h
    return out


@pytest.mark.parametrize("dtype, tt_dtype, np_dtype, byte_count", CASES)
def test_byte_counted_copies_move_the_prefix_and_keep_the_rest(dtype, tt_dtype, np_dtype, byte_count):
    host, device = _tensors(tt_dtype, np_dtype)
    _byte_counted_round_trip(dtype, byte_count)(*device.values())
    source = _bytes_of_tiles(host["inp"], (1, 32))          # the 14 1x32 pages, one after another

    def with_prefix(seed, tile):
        data = _bytes_of_tiles(seed, tile).copy()
        data[:byte_count] = source[:byte_count]
        return _from_tile_bytes(data, seed, tile)

    full = with_prefix(host["send_seed"], FULL)
    received = with_prefix(host["receive_seed"], FULL)
    compact = with_prefix(host["compact_seed"], (1, 32))
    for name, expected in (("local_out", full), ("pipe_out", received), ("compact_out", compact)):
        got = ttnn.to_numpy(device[name]).astype(np_dtype)
        np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8), err_msg=name)


@ttl.operation(grid=(1, 1))
def copy_rows(inp, out):
    """Rows 3..8 of a tensor of 1x32 tiles into rows 0..5 of another (tiles are rows), a block of
    two of its tile columns at a time."""
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(6, 2), block_count=2)

    @ttl.datamovement()
    def read():
        with dfb.reserve() as blk:
            ttl.copy(inp[3:9, 0:2], blk).wait()

    @ttl.datamovement()
    def write():
        with dfb.wait() as blk:
            ttl.copy(blk, out[0:6, 1:3]).wait()


@pytest.mark.parametrize("tile, dtype", [((1, 32), ttnn.bfloat16), ((1, 32), ttnn.float32), ((8, 32), ttnn.bfloat16),
                                         ((16, 32), ttnn.float32)])
def test_slices_of_tensors_of_small_tiles_copy_whole_tiles(tile, dtype):
    h, w = tile
    values = np.random.default_rng(3).standard_normal((9 * h, 2 * w)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=dtype, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile(tile))
    out = ttnn.from_numpy(np.zeros((6 * h, 3 * w), np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile(tile))
    copy_rows(inp, out)
    expected = np.zeros((6 * h, 3 * w), np.float32)
    expected[:, w:] = ttnn.to_numpy(inp)[3 * h:9 * h]
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@ttl.operation(grid=(1, 1))
def whole_block_copy(inp, out):
    """``ttl.copy(a, b)`` between blocks of the same bytes without byte_count: all of ``a``."""
    a = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)
    b = ttl.make_dataflow_buffer_like(out, shape=(2, 1), block_count=1)

    @ttl.datamovement()
    def dm():
        with a.reserve() as x:
            ttl.copy(inp[0:2, 0:1], x).wait()
        with a.wait() as x, b.reserve() as y:
            ttl.copy(x, y).wait()
        with b.wait() as y:
            ttl.copy(y, out[0:2, 0:1]).wait()


def test_a_block_copies_into_another_block_whole():
    values = np.random.default_rng(4).standard_normal((2, 32)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, 32)))
    out = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, 32)))
    whole_block_copy(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def _rows_tensor(rows=ROWS, tile=(1, 32)):
    return ttnn.from_numpy(np.zeros((rows, WIDTH), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                           tile=ttnn.Tile(tile))


def _byte_count_op(byte_count):
    @ttl.operation(grid=(1, 1))
    def bad_count(inp):
        a = ttl.make_dataflow_buffer_like(inp, shape=(ROWS, 1), block_count=1)
        b = ttl.make_dfb("bf16", shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:ROWS, 0:1], x).wait()
            with a.wait() as x, b.reserve() as y:
                ttl.copy(x, y, byte_count=byte_count).wait()  # error
            with b.wait():
                pass

    return bad_count


@pytest.mark.parametrize("byte_count, fragment", [(0, "byte_count is a positive int"),
                                                  (-4, "byte_count is a positive int"),
                                                  (2.5, "byte_count is a positive int"),
                                                  (True, "byte_count is a positive int"),
                                                  (ROWS * WIDTH * 2 + 1, "x holds 896 bytes")])
def test_a_byte_count_that_is_not_a_positive_int_or_too_large_is_one_error(byte_count, fragment):
    op = _byte_count_op(byte_count)
    expect_error(lambda: op(_rows_tensor()), _byte_count_op, KernelError, fragment)


def test_a_byte_count_past_the_destination_block_is_one_error():
    @ttl.operation(grid=(1, 1))
    def too_long(inp):
        a = ttl.make_dfb("bf16", shape=(1, 1), block_count=1)
        b = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with a.reserve() as x, b.reserve() as y:
                ttl.copy(x, y, byte_count=200).wait()  # error

    expect_error(lambda: too_long(_rows_tensor(2)), test_a_byte_count_past_the_destination_block_is_one_error,
                 KernelError, "byte_count=200", "holds 128 bytes")


def test_byte_count_on_a_tensor_copy_is_one_error():
    @ttl.operation(grid=(1, 1))
    def on_tensor(inp):
        a = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:2, 0:1], x, byte_count=64).wait()  # error

    expect_error(lambda: on_tensor(_rows_tensor(2)), test_byte_count_on_a_tensor_copy_is_one_error, KernelError,
                 "slice of tensor inp", "drop byte_count=")


def test_a_compute_kernel_computes_element_wise_on_1x32_tiles():
    """exp of one 1x32 tile: its two 1x16 faces in the first row of DST's faces 0 and 1."""

    @ttl.operation(grid=(1, 1))
    def computes(inp, out):
        a = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with a.wait() as x, b.reserve() as y:
                y.store(ttl.math.exp(x))

        @ttl.datamovement()
        def read():
            with a.reserve() as x:
                ttl.copy(inp[0, 0], x).wait()

        @ttl.datamovement()
        def write():
            with b.wait() as y:
                ttl.copy(y, out[0, 0]).wait()

    values = np.linspace(-2, 2, WIDTH, dtype=np.float32).reshape(1, WIDTH)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, 32)))
    out = _rows_tensor(1)
    computes(inp, out)
    held = ttnn.to_numpy(inp).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float32)[:, :32], np.exp(held[:, :32]), rtol=1e-2)


def test_a_copy_between_a_tensor_and_a_buffer_of_other_tiles_is_one_error():
    @ttl.operation(grid=(1, 1))
    def mismatched(inp):
        a = ttl.make_dfb("bf16", shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:1, 0:1], x).wait()  # error

    expect_error(lambda: mismatched(_rows_tensor(1)),
                 test_a_copy_between_a_tensor_and_a_buffer_of_other_tiles_is_one_error, KernelError,
                 "inp (1x32 tiles) and x (32x32 tiles)")


def test_a_send_and_a_receive_of_different_byte_counts_is_one_error():
    @ttl.operation(grid=(2, 1))
    def differ(inp):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])
        a = ttl.make_dataflow_buffer_like(inp, shape=(2, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            def send(pipe):
                with a.reserve() as x:
                    ttl.copy(inp[0:2, 0:1], x).wait()
                with a.wait() as x:
                    ttl.copy(x, pipe, byte_count=64).wait()

            def receive(pipe):
                with a.reserve() as x:
                    ttl.copy(pipe, x, byte_count=32).wait()  # error
                with a.wait():
                    pass

            net.if_src(send)
            net.if_dst(receive)

    expect_error(lambda: differ(_rows_tensor(2)), test_a_send_and_a_receive_of_different_byte_counts_is_one_error,
                 KernelError, "moves 64 bytes", "byte_count=32 here")


def test_kernels_and_main_cpp_compile_against_the_real_headers(tmp_path, check_kernel):
    import tilefold.run.ttl as runner
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.frontend.ttl import session

    programs = []
    original = runner.run_operation

    def recording(operation, capture, compiled, *rest):
        programs.append((capture.name, compiled.program))
        return original(operation, capture, compiled, *rest)

    runner.run_operation = recording
    try:
        with session.configured(project_dir=tmp_path / "projects"):
            _, device = _tensors(ttnn.bfloat16, ml_dtypes.bfloat16)
            _byte_counted_round_trip("bf16", 3)(*device.values())
    finally:
        runner.run_operation = original
    jobs = []
    texts = []
    for name, program in programs:
        for k in program.kernels:
            path = tmp_path / f"{name}_{k.name}.cpp"
            text = emit_kernel(k.function)
            texts.append(text)
            path.write_text(text)
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, check_kernel.accessor_compile_args(program, k)))
    kernels = "\n".join(texts)
    assert "noc_async_write(" in kernels and "get_noc_addr(my_x[noc_index], my_y[noc_index]" in kernels, kernels
    assert "noc_async_write_multicast" in kernels and ", 3, " in kernels
    mains = sorted((tmp_path / "projects").glob("*/main.cpp"))
    host = "\n".join(p.read_text() for p in mains)
    assert "set_tile_dims(" in host and "tt::tt_metal::Tile({1, 32})" in host, host
    assert "CircularBufferConfig(896," in host and ", 64).set_tile_dims(" in host      # 14 1x32 bf16 pages of 64 B
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
    require_hosts_accepted(check_hosts(mains))


def _converting_copy(tile):
    @ttl.operation(grid=(1, 1))
    def converting(inp, out):
        a = ttl.make_dfb("bf16", shape=(4, 1), block_count=1, tile=ttnn.Tile(tile))

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:4, 0:1], x).wait()
            with a.wait() as x:
                ttl.copy(x, out[0:4, 0:1]).wait()

    return converting


@pytest.mark.parametrize("tile", [(1, 32), (16, 32)])
def test_a_float32_tensor_of_small_tiles_converts_through_a_bfloat16_buffer_of_them(tile):
    h, w = tile
    values = np.random.default_rng(5).standard_normal((4 * h, w)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile(tile))
    out = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile(tile))
    _converting_copy(tile)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), values.astype(ml_dtypes.bfloat16).astype(np.float32))


def test_make_dfb_with_a_tile_that_does_not_exist_is_one_error():
    @ttl.operation(grid=(1, 1))
    def odd(inp):
        a = ttl.make_dfb("bf16", shape=(1, 1), block_count=1, tile=(3, 32))  # error

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:1, 0:1], x).wait()

    expect_error(lambda: odd(_rows_tensor(1)), test_make_dfb_with_a_tile_that_does_not_exist_is_one_error,
                 KernelError, "tile=(3, 32)", "1x32")


def test_unsafe_element_access_on_a_block_of_small_tiles_is_one_error():
    @ttl.operation(grid=(1, 1))
    def peek(inp):
        a = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0:1, 0:1], x).wait()
                ttl.unsafe.element_read(x, 0, 0)  # error

    expect_error(lambda: peek(_rows_tensor(1)), test_unsafe_element_access_on_a_block_of_small_tiles_is_one_error,
                 KernelError, "a block of 1x32 tiles", "not supported by tilefold yet")
