"""``Block.store_rows(x)`` / ``accumulate_rows(x)``: the rows of one 32x32 tile packed into a block
of tiles 32 wide (``pack_rows``).

A reserved block of ``n`` tiles of ``h`` x 32 takes the first ``n·h·2`` rows of 16 values of the
tile in DST's order (the faces one after another): a 16x32 tile gets the tile's top half as it is,
1x32 tiles the values in DST's order, a 32x32 tile all of it; ``accumulate_rows`` adds with the
packer's L1 accumulation. Results are compared bit for bit with numpy; the compute kernel's C++ is
checked against the real headers; misuse is one error at the user's line.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from tilefold.sim.engine_config import EngineConfig
from ttl_helpers import expect_error, recorded_programs


def _faces(tile: np.ndarray) -> np.ndarray:
    """A 32x32 tile's values in DST's order: face 0 (rows 0-15, columns 0-15), face 1, face 2, face 3."""
    return np.concatenate([tile[:16, :16].ravel(), tile[:16, 16:].ravel(), tile[16:, :16].ravel(),
                           tile[16:, 16:].ravel()])


def _rows_op(out_shape, addends: int):
    """Node (0, 0) stores ``2 * x0`` into one reserved block of ``out_shape`` tiles with store_rows,
    then adds ``x1 .. x_addends`` with accumulate_rows, and writes the block out."""

    @ttl.operation(grid=(1, 1))
    def rows(inp, out):
        in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=out_shape, block_count=1)

        @ttl.compute()
        def compute():
            with out_dfb.reserve() as out_blk:
                with in_dfb.wait() as first:
                    out_blk.store_rows(first * 2.0)
                for _ in range(addends):
                    with in_dfb.wait() as more:
                        out_blk.accumulate_rows(more)

        @ttl.datamovement()
        def read():
            for j in range(addends + 1):
                with in_dfb.reserve() as blk:
                    ttl.copy(inp[0, j], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0:out_shape[0], 0:out_shape[1]]).wait()

    return rows


def _inputs(dtype, np_dtype, tiles: int):
    values = np.random.default_rng(7).standard_normal((32, 32 * tiles)).astype(np.float32).astype(np_dtype)
    return values, ttnn.from_numpy(values.astype(np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT)


def _expected(values: np.ndarray, np_dtype, count: int) -> np.ndarray:
    """The first ``count`` values in DST order of 2·x0, then + x1, + x2 ... each rounded to the format."""
    total = (_faces(values[:, :32].astype(np.float32)) * 2).astype(np_dtype)
    for j in range(1, values.shape[1] // 32):
        total = (total.astype(np.float32) + _faces(values[:, 32 * j:32 * j + 32].astype(np.float32))).astype(np_dtype)
    return total[:count]


@pytest.mark.parametrize("dtype, np_dtype", [(ttnn.bfloat16, ml_dtypes.bfloat16), (ttnn.float32, np.float32)])
def test_a_16x32_tile_takes_the_top_half_of_the_sum(dtype, np_dtype):
    values, inp = _inputs(dtype, np_dtype, 3)
    out = ttnn.from_numpy(np.zeros((14, 32), np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile((16, 32)))
    _rows_op((1, 1), 2)(inp, out)
    top = _expected(values, np_dtype, 512)                      # faces 0 and 1: rows 0-15 of the tile
    expected = np.concatenate([top[:256].reshape(16, 16), top[256:].reshape(16, 16)], axis=1)[:14]
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np_dtype), expected)


def test_fourteen_1x32_tiles_take_the_first_448_values_in_dst_order():
    values, inp = _inputs(ttnn.float32, np.float32, 2)
    out = ttnn.from_numpy(np.zeros((1, 448), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile((1, 32)))
    _rows_op((1, 14), 1)(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out).ravel(), _expected(values, np.float32, 448))


def test_a_32x32_tile_takes_the_whole_tile_as_a_store_does():
    values, inp = _inputs(ttnn.bfloat16, ml_dtypes.bfloat16, 2)
    out = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    _rows_op((1, 1), 1)(inp, out)
    expected = (values[:, :32].astype(np.float32) * 2).astype(ml_dtypes.bfloat16).astype(np.float32) \
        + values[:, 32:].astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected.astype(ml_dtypes.bfloat16).astype(np.float32))


NODES = 4


def _tree_sum():
    """Each node's tile goes to node (0, 0) over a pipe; the root stores its own with store_rows and
    adds each received one with accumulate_rows into a 16x32 tile (the sum's top half)."""
    net = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=(0, 0)) for x in range(1, NODES)])

    @ttl.operation(grid=(NODES, 1))
    def tree_sum(source, output):
        staged = ttl.make_dataflow_buffer_like(source, shape=(1, 1), block_count=1)
        received = ttl.make_dataflow_buffer_like(source, shape=(1, 1), block_count=NODES - 1)
        out_dfb = ttl.make_dataflow_buffer_like(output, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def exchange():
            x, _ = ttl.node(dims=2)
            with staged.reserve() as blk:
                ttl.copy(source[0, x], blk).wait()

            def receive(pipe):
                with received.reserve() as blk:
                    ttl.copy(pipe, blk).wait()

            net.if_dst(receive)

            def send(pipe):
                with staged.wait() as blk:
                    ttl.copy(blk, pipe).wait()

            net.if_src(send)

        @ttl.compute()
        def compute():
            x, _ = ttl.node(dims=2)
            if x == 0:
                with out_dfb.reserve() as out_blk:
                    with staged.wait() as own:
                        out_blk.store_rows(own)
                    for _ in range(NODES - 1):
                        with received.wait() as other:
                            out_blk.accumulate_rows(other)

        @ttl.datamovement()
        def store():
            x, _ = ttl.node(dims=2)
            if x == 0:
                with out_dfb.wait() as blk:
                    ttl.copy(blk, output[0, 0]).wait()

    return tree_sum


def test_a_root_node_sums_received_tiles_into_rows():
    values = np.random.default_rng(11).standard_normal((32, 32 * NODES)).astype(np.float32)
    source = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    output = ttnn.from_numpy(np.zeros((16, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT,
                             tile=ttnn.Tile((16, 32)))
    _tree_sum()(source, output)
    total = values[:, :32].copy()
    for x in range(1, NODES):
        total = (total + values[:, 32 * x:32 * x + 32]).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(output), total[:16])


def test_the_compute_kernel_packs_rows_and_passes_the_real_headers(tmp_path, check_kernel):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.frontend.ttl import session

    with recorded_programs() as programs:
        with session.configured(project_dir=tmp_path / "projects"):
            _, inp = _inputs(ttnn.bfloat16, ml_dtypes.bfloat16, 2)
            out = ttnn.from_numpy(np.zeros((1, 448), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                                  tile=ttnn.Tile((1, 32)))
            _rows_op((1, 14), 1)(inp, out)
    (program,) = programs
    jobs = []
    for k in program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        text = emit_kernel(k.function)
        path.write_text(text)
        if k.is_compute:
            compute = text
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, check_kernel.accessor_compile_args(program, k)))
    # 14 1x32 tiles hold 448 values: 28 rows of 16; the second store adds in L1
    assert compute.count("pack_rows_init(28);") == 2 and compute.count("pack_rows_uninit();") == 2, compute
    assert "pack_reconfig_l1_acc(1);" in compute and "pack_tile(" not in compute, compute
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
    require_hosts_accepted(check_hosts(sorted((tmp_path / "projects").glob("*/main.cpp"))))


def _one_store(source_tile=(32, 32), source_shape=(1, 1), source_dtype="bf16", dest_dtype="bf16", dest_shape=(1, 14),
               dest_tile=(1, 32), misuse=None):
    """An operation whose compute kernel makes one row store (the line marked ``# error``); ``misuse``:
    the block waited for instead of reserved ("wait"), accumulate_rows first ("accumulate") or a
    number for the block ("number")."""

    @ttl.operation(grid=(1, 1))
    def one_store():
        src_dfb = ttl.make_dfb(source_dtype, shape=source_shape, block_count=1, tile=source_tile)
        dst_dfb = ttl.make_dfb(dest_dtype, shape=dest_shape, block_count=1, tile=dest_tile)

        @ttl.datamovement()
        def produce():
            with src_dfb.reserve():
                pass
            if misuse == "wait":
                with dst_dfb.reserve():
                    pass
            else:
                with dst_dfb.wait():
                    pass

        @ttl.compute()
        def compute():
            with src_dfb.wait() as s:
                if misuse == "wait":
                    with dst_dfb.wait() as d:
                        d.store_rows(s)  # error
                elif misuse == "accumulate":
                    with dst_dfb.reserve() as d:
                        d.accumulate_rows(s)  # error
                elif misuse == "number":
                    with dst_dfb.reserve() as d:
                        d.store_rows(3)  # error
                else:
                    with dst_dfb.reserve() as d:
                        d.store_rows(s)  # error

    return one_store


@pytest.mark.parametrize("kwargs, fragments", [
    ({"misuse": "wait"}, ("d.store_rows() stores into a block from reserve()",)),
    ({"misuse": "accumulate"}, ("store_rows() into it first",)),
    ({"misuse": "number"}, ("takes a block of one 32x32 tile, not",)),
    ({"source_tile": (16, 32)}, ("s holds 16x32 tiles",)),
    ({"source_shape": (1, 2)}, ("this one is 1x2",)),
    ({"dest_dtype": "f32"}, ("the value is bfloat16 but d is float32", "typecast")),
    ({"source_dtype": ttnn.int32, "dest_dtype": ttnn.int32}, ("rows are packed into bfloat16 and float32 buffers",)),
    ({"dest_shape": (1, 28), "dest_tile": (1, 16)}, ("holds 1x16 tiles", "tiles 32 wide")),
    ({"dest_shape": (1, 33)}, ("holds 1056 values", "at most 1024")),
])
def test_a_row_store_that_cannot_be_packed_is_one_error_at_its_line(kwargs, fragments):
    import inspect

    with pytest.raises(KernelError) as info:
        _one_store(**kwargs)()
    lines, start = inspect.getsourcelines(_one_store)
    marked = [start + i for i, text in enumerate(lines) if text.rstrip().endswith("# error")]
    message = str(info.value)
    assert any(message.startswith(f"{__file__}:{line}: ") for line in marked), message
    for fragment in fragments:
        assert fragment in message, message


def test_computing_on_a_buffer_of_small_tiles_names_the_row_stores():
    @ttl.operation(grid=(1, 1))
    def computes(inp, out):
        a = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        b = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a.wait() as x, b.reserve() as y:
                y.store(x)  # error

        @ttl.datamovement()
        def dm():
            with a.reserve() as x:
                ttl.copy(inp[0, 0], x).wait()
            with b.wait() as y:
                ttl.copy(y, out[0, 0]).wait()

    out = ttnn.from_numpy(np.zeros((16, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile((16, 32)))
    inp = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: computes(inp, out), test_computing_on_a_buffer_of_small_tiles_names_the_row_stores,
                 KernelError, "b holds 16x32 tiles", "y.store_rows(x)")


def test_the_packer_packs_rows_only_between_pack_rows_init_and_uninit():
    engines = EngineConfig(lambda cb: (cb, ttnn.bfloat16))
    engines.apply("init_sfpu", (0, 1), {})
    assert engines.check_pack("pack_tile", 1) is None
    assert "without pack_rows_init" in engines.check_pack("pack_rows", 1)
    engines.apply("pack_rows_init", (28,), {})
    assert engines.check_pack("pack_rows", 1) is None
    assert "pack_rows_uninit() first" in engines.check_pack("pack_tile", 1)
    engines.apply("pack_rows_uninit", (), {})
    assert engines.check_pack("pack_tile", 1) is None
