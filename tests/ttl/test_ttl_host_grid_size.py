"""On the host, after an operation call, ``ttl.grid_size`` reports the grid that call ran on
(``grid="full"`` resolved to the device's compute grid), as TT-Lang's tests check it; the result
of the call itself is compared with numpy on the simulated device."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid="full")
def plus_one(a, out):
    cols, rows = ttl.grid_size(dims=2)
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, out_dfb.reserve() as o:
            o.store(x + 1)

    @ttl.datamovement()
    def read():
        c, r = ttl.node(dims=2)
        with a_dfb.reserve() as x:
            ttl.copy(a[r, c], x).wait()

    @ttl.datamovement()
    def write():
        c, r = ttl.node(dims=2)
        with out_dfb.wait() as o:
            ttl.copy(o, out[r, c]).wait()


def test_grid_size_on_the_host_after_a_call_is_the_grid_it_ran_on():
    device = ttnn.open_device(device_id=0)
    grid = device.compute_with_storage_grid_size()
    shape = (grid.y * 32, grid.x * 32)
    values = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros(shape, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    plus_one(a, out)
    assert ttl.grid_size(dims=2) == (grid.x, grid.y)
    assert ttl.grid_size(dims=1) == grid.x * grid.y
    want = ttnn.to_numpy(a).astype(np.float64) + 1
    np.testing.assert_allclose(ttnn.to_numpy(out), want, rtol=2 ** -7, atol=2 ** -7)
    ttnn.close_device(device)


@ttl.operation(grid="full")
def gather_by_number(a, out):
    """Node (c, r) copies tile ``r * cols + c`` of ``a``'s one row of tiles to its tile of ``out``,
    with ``cols`` from the name ``grid`` (the resolved grid, which TT-Lang's simulator gives an
    operation's body)."""
    cols, rows = grid  # noqa: F821 - given to the body as a global
    dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        c, r = ttl.node(dims=2)
        with dfb.reserve() as x:
            ttl.copy(a[0, r * cols + c], x).wait()

    @ttl.datamovement()
    def write():
        c, r = ttl.node(dims=2)
        with dfb.wait() as x:
            ttl.copy(x, out[r, c]).wait()


def test_an_operation_body_sees_its_resolved_grid_as_grid():
    cols, rows = 8, 8
    values = np.repeat(np.arange(cols * rows, dtype=np.float32), 32)[None, :].repeat(32, axis=0)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32 * rows, 32 * cols), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    gather_by_number(a, out)
    numbers = np.arange(rows * cols, dtype=np.float32).reshape(rows, cols)
    np.testing.assert_array_equal(ttnn.to_numpy(out)[::32, ::32], numbers)
