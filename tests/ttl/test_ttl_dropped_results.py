"""A block written and pushed into a buffer no kernel waits on: when a tensor of the operation is
touched by no kernel (a writer kernel that lost its ``wait()``), the data would be dropped and that
tensor left as it was, so this is an error at the line that wrote the block; when every tensor is
read or written (a dead store), a warning there. A staging block (read before it is pushed) is
neither; run against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def test_a_result_pushed_into_a_buffer_nothing_waits_on():
    @ttl.operation(grid=(1, 1))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, out_dfb.reserve() as o:
                o.store(ttl.math.exp(xv))  # error

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            pass

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))), test_a_result_pushed_into_a_buffer_nothing_waits_on,
                 KernelError, "what is written into o here is never used", "out_dfb, which no kernel waits on",
                 "out_dfb.wait()")


def _load_nothing_reads():
    @ttl.operation(grid=(1, 1))
    def op(x, y, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        s_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, out_dfb.reserve() as o:
                with s_dfb.reserve() as s:
                    s.store(xv * xv)                    # a dead store: nothing reads it
                o.store(xv)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            with y_dfb.reserve() as blk:
                ttl.copy(y[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return op


def test_a_dead_store_or_a_load_nothing_reads_in_an_operation_touching_every_tensor_is_a_warning():
    """Every tensor is read or written, so no writer lost its wait(): the dropped blocks (a compute
    scratch result, a tile loaded and never used) are warnings at their lines, and the program
    runs, as TT-Lang's do."""
    import pytest

    x, y, out = tile_tensor((32, 32)), tile_tensor((32, 32), seed=1), zeros((32, 32))
    with pytest.warns(UserWarning, match="is never used: .* which no kernel waits on"):
        _load_nothing_reads()(x, y, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x))


def test_a_staging_block_and_a_compute_scratch_block_nobody_waits_on_still_run():
    """Blocks read before they are pushed: a data-movement staging block (copied in, then out) and
    a compute scratch block (stored, then read into the result)."""

    @ttl.operation(grid=(1, 1))
    def op(x, copy_out, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        stage_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        scratch_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv:
                with scratch_dfb.reserve() as s:
                    s.store(xv + xv)
                    with out_dfb.reserve() as o:
                        o.store(s * xv)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            with stage_dfb.reserve() as st:
                ttl.copy(x[0, 0], st).wait()
                ttl.copy(st, copy_out[0, 0]).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    x, copy_out, out = tile_tensor((32, 32)), zeros((32, 32)), zeros((32, 32))
    op(x, copy_out, out)
    xs = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(copy_out), xs)
    np.testing.assert_allclose(ttnn.to_numpy(out).astype(np.float32), 2 * xs * xs, rtol=2e-2, atol=2e-2)


def test_tiles_loaded_by_an_operation_that_writes_no_tensor_are_a_warning():
    """TT-Lang's tensor-slice spec example loads slices into a buffer nothing reads and writes no
    tensor: it runs, with a warning at the line that loaded them."""
    import pytest

    @ttl.operation(grid=(1, 1))
    def slices_only(a):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            for ct in range(2):             # two blocks: they fit the buffer, none is ever freed
                for rt in range(1):
                    with a_dfb.reserve() as blk:
                        ttl.copy(a[rt * 2:(rt + 1) * 2, ct:ct + 1], blk).wait()

        @ttl.compute()
        def idle():
            pass

    a = tile_tensor((128, 64), seed=5)
    with pytest.warns(UserWarning, match="never used.*the operation writes no tensor"):
        slices_only(a)
    assert np.isfinite(ttnn.to_numpy(a)).all()


def test_an_operation_touching_no_tensor_may_drop_its_results_with_a_warning():
    """A kernel timed on its own (TT-Lang's single-block benchmarks): it reads and writes no tensor,
    so nothing could see its results; pushing them where nothing waits is a warning, not an error."""
    import pytest

    @ttl.operation(grid=(1, 1))
    def fill_only(out):
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with out_dfb.reserve() as o:
                o.store(ttl.block.fill(-3.0, shape=o.shape))

        @ttl.datamovement()
        def read():
            pass

        @ttl.datamovement()
        def write():
            pass

    out = zeros((32, 32))
    with pytest.warns(UserWarning, match="the operation writes no tensor"):
        fill_only(out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), 0)


def test_a_dead_store_in_a_loop_packs_each_time_into_the_block_it_reserved():
    """The pushes into a buffer nothing waits on are dropped when they fit it (two blocks here), so
    its reserves reuse one block: a pack there is addressed by its index, not by the sequential
    pack position (which only a push resets); the loop's second store would otherwise write past
    the reserved page."""
    import warnings

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        a_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        dead_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            for i in range(2):
                with a_dfb.reserve() as b:
                    ttl.copy(inp[0, i], b).wait()

        @ttl.compute()
        def compute():
            for i in range(2):
                with a_dfb.wait() as a, dead_dfb.reserve() as d, o_dfb.reserve() as o:
                    t = a + a
                    d.store(t)
                    o.store(t)

        @ttl.datamovement()
        def write():
            for i in range(2):
                with o_dfb.wait() as b:
                    ttl.copy(b, out[0, i]).wait()

    x, out = tile_tensor((32, 64), seed=4), zeros((32, 64))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*no kernel waits on")
        op(x, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x) * 2)
