"""Invalid TT-Lang programs: each gives one tilefold error at the user's line, saying what to change.

The line each error must point at is marked ``# error`` in the test.
"""

from __future__ import annotations

import pytest

import tilefold.ttl as ttl
import numpy as np

import tilefold.ttnn as ttnn
from tilefold.errors import (CompileError, DeadlockError, KernelAssertError, KernelError, L1OverflowError,
                             SemaphoreError)
from ttl_helpers import copy_kernels, expect_error, marked_line, tile_tensor, zeros


def tensors(n=2, shape=(64, 64)):
    return [tile_tensor(shape, seed=i) for i in range(n - 1)] + [zeros(shape)]




def compute_and_write(x_dfb, y_dfb, y):
    """The compute kernel storing each block of ``x_dfb`` into ``y_dfb`` and a writer of ``y_dfb``'s
    block to ``y``'s first tile: the rest of an operation whose test writes its reader."""

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a, y_dfb.reserve() as b:
            b.store(a)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


def test_grid_without_dimensions_is_refused_where_the_operation_is_decorated():
    def decorate():
        @ttl.operation(grid=())  # error
        def op(x, y):
            pass

    error = expect_error(decorate, test_grid_without_dimensions_is_refused_where_the_operation_is_decorated,
                         KernelError, "has no dimensions", "grid=(nodes,)")
    assert isinstance(error, ValueError)


@pytest.mark.parametrize("grid, named", [((0, 2), "dimension 0 is 0"), ((2, -1), "dimension 1 is -1"),
                                         ((1, 1, 0), "dimension 2 is 0")])
def test_a_grid_naming_no_node_is_refused_where_the_operation_is_decorated(grid, named):
    def decorate():
        ttl.operation(grid=grid)  # error

    error = expect_error(decorate, test_a_grid_naming_no_node_is_refused_where_the_operation_is_decorated,
                         KernelError, f"grid={grid!r}) names no node ({named})")
    assert isinstance(error, ValueError)


def test_three_dimensional_grid_larger_than_the_device():
    """Its first dimension is a device-mesh axis: three chips of 3x2 nodes, more than are simulated."""
    @ttl.operation(grid=(3, 3, 2))  # error
    def op(x, y):
        pass

    ttnn.set_num_devices(2)
    try:
        expect_error(lambda: op(*tensors()), test_three_dimensional_grid_larger_than_the_device, KernelError,
                     "spans 3 chips (3) but 2 are simulated", "--num-devices 3")
    finally:
        ttnn.set_num_devices(None)


def test_grid_larger_than_the_chosen_device():
    """With the device chosen (--arch), a grid it cannot hold is an error naming the boards that can."""
    from tilefold.frontend.ttl.session import configured

    @ttl.operation(grid=(9, 2))  # error
    def op(x, y):
        pass

    with configured(arch="n150"):
        expect_error(lambda: op(*tensors()), test_grid_larger_than_the_chosen_device, KernelError, "8x8",
                     "grid='full'", "--arch blackhole", "--arch p150-full")


def test_grid_larger_than_every_board():
    @ttl.operation(grid=(14, 2))  # error
    def op(x, y):
        pass

    expect_error(lambda: op(*tensors()), test_grid_larger_than_every_board, KernelError, "8x8", "grid='full'")


@pytest.mark.parametrize("count", [0, 33])
def test_block_count_outside_1_to_32(count):
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=count)  # error

        op(*tensors())

    expect_error(run, test_block_count_outside_1_to_32, KernelError, f"block_count={count}", "from 1 to 32")


def test_shape_mismatch_without_broadcast():
    @ttl.operation(grid=(1, 1))
    def op(x, w, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 2))
        w_dfb = ttl.make_dataflow_buffer_like(w, shape=(2, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, w_dfb.wait() as b, y_dfb.reserve() as out:
                out.store(a * b)  # error

    expect_error(lambda: op(*tensors(3)), test_shape_mismatch_without_broadcast, KernelError,
                 "shapes 2x2 and 2x1", "ttl.block.broadcast(x, dims=[...], shape=...)")


def test_copy_of_a_slice_into_a_block_of_another_shape():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 2))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                xf = ttl.copy(x[0:2, 0], blk)  # error
                xf.wait()

    expect_error(lambda: op(*tensors()), test_copy_of_a_slice_into_a_block_of_another_shape, KernelError,
                 "2x1 tiles", "is 2x2", "same shape")


def test_transfer_never_waited():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            for r in range(2):
                with x_dfb.reserve() as blk:
                    xf = ttl.copy(x[r, 0], blk)  # error

    expect_error(lambda: op(*tensors()), test_transfer_never_waited, KernelError, "never waited", ".wait()")


def test_kernel_with_parameters():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        @ttl.compute()
        def compute(a_blk):  # error
            pass

    expect_error(lambda: op(*tensors()), test_kernel_with_parameters, KernelError,
                 "takes parameters (a_blk) without defaults", "give them defaults")


def test_kernel_parameters_with_defaults_take_them():
    """A kernel function is called with no arguments: parameters with defaults hold them."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read(row=1, cols=(0, 1)):
            for c in cols:
                with x_dfb.reserve() as blk:
                    ttl.copy(x[row, c], blk).wait()

        @ttl.compute()
        def compute(scale=3.0):
            for _ in range(2):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a * scale)

        @ttl.datamovement()
        def write(row=0):
            for c in range(2):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[row, c]).wait()

    x, y = tensors()
    op(x, y)
    got, want = ttnn.to_numpy(y), ttnn.to_numpy(x)
    np.testing.assert_allclose(got[:32], want[32:] * 3.0, rtol=1e-2)


def test_block_shape_with_more_dimensions_than_the_tensor():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1, 1))  # error

    expect_error(lambda: op(*tensors()), test_block_shape_with_more_dimensions_than_the_tensor, KernelError,
                 "shape=(1, 1, 1) has 3 dimensions, but the tensor has 2", "give shape=(1, 1)")


def test_with_on_something_that_is_not_a_buffer_block():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.compute()
        def compute():
            with x_dfb as blk:  # error
                pass

    expect_error(lambda: op(*tensors()), test_with_on_something_that_is_not_a_buffer_block, KernelError,
                 "dfb.reserve() or dfb.wait()", "x_dfb")


def test_more_than_32_dataflow_buffers():
    """33 buffers the kernels use do not fit a node's 32 circular buffers: an error at the line of
    the 33rd (unused ones do not count, see test_ttl_unused_buffers.py)."""
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            dfbs = [ttl.make_dataflow_buffer_like(x, shape=(1, 1)) for _ in range(32)]
            last = ttl.make_dataflow_buffer_like(x, shape=(1, 1))  # error
            dfbs.append(last)

            @ttl.datamovement()
            def fill():
                for d in dfbs:
                    with d.reserve() as blk:
                        ttl.copy(x[0, 0], blk).wait()

        op(*tensors())

    expect_error(run, test_more_than_32_dataflow_buffers, KernelError, "number 33", "at most 32")


def test_a_blackhole_node_has_64_circular_buffers():
    """TT-Metal gives a Blackhole core 64 circular buffers (a Wormhole core 32): 33 buffers in a
    chain run on a p150, compared with numpy."""
    from tilefold.frontend.ttl.session import configured, settings

    @ttl.operation(grid=(1, 1))
    def chain(x, y):
        bufs = [ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=1) for _ in range(33)]

        @ttl.compute()
        def compute():
            for i in range(32):
                with bufs[i].wait() as v, bufs[i + 1].reserve() as w:
                    w.store(v + v)

        @ttl.datamovement()
        def read():
            with bufs[0].reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with bufs[32].wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    x, y = tensors()
    with configured():
        settings().arch = "blackhole"
        chain(x, y)
    expected = np.zeros((64, 64), np.float32)
    expected[:32, :32] = ttnn.to_numpy(x)[:32, :32] * 2.0 ** 32
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


def test_l1_overflow():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(16, 16), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(16, 16), block_count=2)  # the one past the budget: # error

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:16, 0:16], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:16, 0:16]).wait()

    expect_error(lambda: op(*tensors(shape=(512, 512))), test_l1_overflow, L1OverflowError, "x_dfb 1048576 B",
                 "smaller blocks")


def test_copy_into_a_waited_block_before_reading_it():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def write():
            with x_dfb.wait() as blk:
                ttl.copy(y[0, 0], blk).wait()  # error

    expect_error(lambda: op(*tensors()), test_copy_into_a_waited_block_before_reading_it, KernelError,
                 "has not been read", "destroy")


def test_producer_pushes_more_blocks_than_the_consumer_takes():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))

        @ttl.compute()
        def compute():
            for _ in range(2):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        @ttl.datamovement()
        def read():
            for r in range(2):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[r, 0], blk).wait()
            for _ in range(3):      # three more than the compute kernel takes, one more than x_dfb holds
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, 1], blk).wait()  # error

        @ttl.datamovement()
        def write():
            for r in range(2):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[r, 0]).wait()

    expect_error(lambda: op(*tensors()), test_producer_pushes_more_blocks_than_the_consumer_takes, KernelError,
                 "receives 5 blocks", "takes only 2")


def test_producer_pushes_more_than_taken_on_some_nodes_is_caught_by_the_simulator():
    """Counts that depend on the node are not known before running: the simulated device finds the
    extra block left in the buffer of node 1 (a warning: no harm to the device), not a hang."""
    from tilefold.errors import LeftoverBlocksWarning

    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        @ttl.datamovement()
        def read():
            col, _ = ttl.node(dims=2)
            for r in range(col + 1):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[r, col], blk).wait()

        @ttl.datamovement()
        def write():
            col, _ = ttl.node(dims=2)
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, col]).wait()

    with pytest.warns(LeftoverBlocksWarning, match=r"c_0 on core \(1,0\): 1 pages pushed and never popped"):
        op(*tensors())


def test_dst_overflow_names_the_line_and_the_tile_count():
    @ttl.operation(grid=(1, 1), fp32_dest_acc_en=True)
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))
        copy_kernels(x_dfb, y_dfb, x, y)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                # a balanced product of 16 values: more partial products live at once than DST holds
                b.store(((((a + 1.0) * (a + 2.0)) * ((a + 3.0) * (a + 4.0)))  # error
                         * (((a + 5.0) * (a + 6.0)) * ((a + 7.0) * (a + 8.0))))
                        * ((((a + 9.0) * (a + 10.0)) * ((a + 11.0) * (a + 12.0)))
                           * (((a + 13.0) * (a + 14.0)) * ((a + 15.0) * (a + 16.0)))))

    expect_error(lambda: op(*tensors()), test_dst_overflow_names_the_line_and_the_tile_count, CompileError,
                 "DST tiles for each output tile", "gives 4")


def test_block_math_in_a_data_movement_kernel():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            with x_dfb.wait() as blk:
                z = blk + blk  # error

    expect_error(lambda: op(*tensors()), test_block_math_in_a_data_movement_kernel, KernelError,
                 "computed by the compute kernel")


def test_block_never_released():
    """A kernel that releases blocks itself at their buffers (dfb.push() / pop()) must release each
    one; a kernel that never does, or pushes and pops only some named blocks, has its other blocks
    released where their names die (test_ttl_implicit_release)."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))

        @ttl.datamovement()
        def read():
            blk = x_dfb.reserve()  # error
            ttl.copy(x[0, 0], blk).wait()
            other = y_dfb.reserve()
            ttl.copy(x[0, 0], other).wait()
            y_dfb.push()

    expect_error(lambda: op(*tensors()), test_block_never_released, KernelError, "never released", "blk.push()")


def test_push_while_the_copy_into_the_block_is_in_flight():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            blk = x_dfb.reserve()
            xf = ttl.copy(x[0, 0], blk)
            blk.push()  # error
            xf.wait()

    expect_error(lambda: op(*tensors()), test_push_while_the_copy_into_the_block_is_in_flight, KernelError,
                 "still writing it", "wait()")


def test_a_bare_copy_is_waited_before_its_block_is_pushed():
    """A copy whose handle nothing keeps (``ttl.copy(x[0, 0], blk)`` as a statement) is waited for
    before its block's explicit push, as TT-Lang waits a bare copy before the block's next use."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            blk = x_dfb.reserve()
            ttl.copy(x[0, 0], blk)
            blk.push()

        @ttl.compute()
        def idle():
            pass

        @ttl.datamovement()
        def write():
            blk = x_dfb.wait()
            ttl.copy(blk, y[0, 0])
            blk.pop()

    x, y = tensors()
    op(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:32, :32], ttnn.to_numpy(x)[:32, :32])


def test_slice_extent_must_be_known_at_compile_time():
    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            col, _ = ttl.node(dims=2)
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:col, 0], blk).wait()  # error

    expect_error(lambda: op(*tensors()), test_slice_extent_must_be_known_at_compile_time, KernelError,
                 "not a compile-time number")


def test_slice_outside_the_tensor():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 2))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 1:3], blk).wait()  # error

    expect_error(lambda: op(*tensors()), test_slice_outside_the_tensor, KernelError, "outside the tensor")


def test_a_slice_a_loop_moves_outside_the_tensor_names_the_tiles_it_reaches():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            for i in range(2):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, i + 2], blk).wait()  # error

    x = ttnn.zeros((32, 96), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(x, x), test_a_slice_a_loop_moves_outside_the_tensor_names_the_tiles_it_reaches,
                 KernelError, "starts at tile 2 to 3", "so it reaches tiles 2..3, outside the tensor (3 tiles")


def test_a_receive_kept_posted_into_the_next_iteration_is_named():
    """A receive block re-acquired in a branch of a loop, so that the other one stays posted until a
    later ttl.wait_any, is not supported: the error says so (not that nothing accumulates)."""
    pa, pb = ttl.Pipe(src=(1, 0), dst=(0, 0)), ttl.Pipe(src=(0, 1), dst=(0, 0))

    @ttl.operation(grid=(2, 2))
    def op(x, y):
        s_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        la = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        lb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm0():
            nx, ny = ttl.node(dims=2)
            if nx == 1 and ny == 0:
                for k in range(2):
                    with s_dfb.reserve() as s:
                        ttl.copy(x[k, 0], s).wait()
                        ttl.copy(s, pa).wait()
            if nx == 0 and ny == 1:
                for k in range(2):
                    with s_dfb.reserve() as s:
                        ttl.copy(x[k, 1], s).wait()
                        ttl.copy(s, pb).wait()
            if nx == 0 and ny == 0:
                ba, bb = la.reserve(), lb.reserve()
                ra, rb = ttl.copy(pa, ba), ttl.copy(pb, bb)
                for step in range(4):
                    sel = ttl.wait_any((ra, rb), start=0).index()
                    if sel == 0:  # error
                        ba.push()
                        if step < 2:
                            ba = la.reserve()
                            ra = ttl.copy(pa, ba)
                    else:
                        bb.push()
                        if step < 2:
                            bb = lb.reserve()
                            rb = ttl.copy(pb, bb)

        @ttl.datamovement()
        def dm1():
            nx, ny = ttl.node(dims=2)
            if nx == 0 and ny == 0:
                for k in range(2):
                    with la.wait() as a, lb.wait() as b:
                        ttl.copy(a, y[k, 0]).wait()
                        ttl.copy(b, y[k, 1]).wait()

    x = ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(x, x), test_a_receive_kept_posted_into_the_next_iteration_is_named, KernelError,
                 "ba holds a block before this branch and is bound to another block inside it", "on every iteration")


def test_a_poll_that_never_ends_names_the_threads_blocked_behind_it():
    """The root's ttl.wait_any polls for receives its producers never send: they are stuck reserving a
    buffer nobody pops. The error at the poll lists them."""
    pipes = [ttl.Pipe(src=(1, 0), dst=(0, 0)), ttl.Pipe(src=(2, 0), dst=(0, 0))]

    @ttl.operation(grid=(3, 1))
    def op(x, y):
        s_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        l0 = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        l1 = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm0():
            nx, ny = ttl.node(dims=2)
            if nx >= 1:
                for step in range(3):
                    with s_dfb.reserve() as s:              # pushed, never popped: the third one waits
                        ttl.copy(x[step, 0], s).wait()
                        if nx == 1:
                            ttl.copy(s, pipes[0]).wait()
                        else:
                            ttl.copy(s, pipes[1]).wait()
            if nx == 0 and ny == 0:
                for step in range(3):
                    b0, b1 = l0.reserve(), l1.reserve()
                    r0, r1 = ttl.copy(pipes[0], b0), ttl.copy(pipes[1], b1)
                    ttl.wait_any((r0, r1), start=0)  # error
                    r0.wait()
                    r1.wait()
                    b0.push()
                    b1.push()

        @ttl.datamovement()
        def dm1():
            nx, ny = ttl.node(dims=2)
            if nx == 0 and ny == 0:
                for step in range(3):
                    with l0.wait() as a, l1.wait() as b:
                        ttl.copy(a, y[step, 0]).wait()
                        ttl.copy(b, y[step, 1]).wait()

    x = ttnn.zeros((96, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(x, ttnn.zeros((96, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)),
                 test_a_poll_that_never_ends_names_the_threads_blocked_behind_it, SemaphoreError,
                 "polls L1 in a loop that no other thread will ever change",
                 "the other threads that could change it are blocked", "cb_reserve_back(c_0, 1) (s_dfb)")


def test_matmul_inner_dimensions_must_agree():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(2, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as out:
                out.store(a @ a)  # error

    expect_error(lambda: op(*tensors()), test_matmul_inner_dimensions_must_agree, KernelError, "(M, K) @ (K, N)")


def test_copy_in_a_compute_kernel():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.compute()
        def compute():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()  # error

    expect_error(lambda: op(*tensors()), test_copy_in_a_compute_kernel, KernelError, "@ttl.datamovement()")


def test_unsupported_statement():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        @ttl.datamovement()
        def read():
            try:  # error
                pass
            finally:
                pass

    expect_error(lambda: op(*tensors()), test_unsupported_statement, KernelError, "try is not supported")


def test_an_operation_is_called_with_device_tensors():
    import numpy as np

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        pass

    with pytest.raises(KernelError) as info:
        op(np.zeros((32, 32)), zeros((32, 32)))
    assert "argument 'x' is ndarray" in str(info.value)


def test_a_buffer_of_row_major_uint16_elements():
    import numpy as np

    import tilefold.ttnn as ttnn

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)  # error
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        copy_kernels(x_dfb, y_dfb, x, y)

    x = ttnn.from_numpy(np.arange(1024, dtype=np.uint16).reshape(32, 32), dtype=ttnn.uint16,
                        layout=ttnn.ROW_MAJOR_LAYOUT)
    expect_error(lambda: op(x, zeros((32, 32))), test_a_buffer_of_row_major_uint16_elements, KernelError,
                 "a buffer of uint16 row-major elements is not supported by tilefold yet", "bfloat16, float32")


def test_a_block_larger_than_the_tensor():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(4, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(4, 1), block_count=2)

        @ttl.compute()
        def compute():
            for _ in range(x.shape[0] // 128):
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        @ttl.datamovement()
        def read():
            for r in range(x.shape[0] // 128):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[r * 4:r * 4 + 4, 0:1], blk).wait()  # error

        @ttl.datamovement()
        def write():
            for r in range(x.shape[0] // 128):
                with y_dfb.wait() as blk:
                    ttl.copy(blk, y[r * 4:r * 4 + 4, 0:1]).wait()

    expect_error(lambda: op(*tensors()), test_a_block_larger_than_the_tensor, KernelError,
                 "dimension 0 selects 4 tiles but the tensor has only 2", "make the block smaller")


def test_assert_in_a_kernel_is_checked_when_the_kernel_is_built():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        n = x.shape[1] // 32
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            assert n >= 1, "at least one tile"
            for t in range(n):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[0, t], blk).wait()

        @ttl.datamovement()
        def write():
            assert n % 3 == 0, f"{n} tiles is not a multiple of 3"  # error
            for t in range(n):
                with x_dfb.wait() as blk:
                    ttl.copy(blk, y[0, t]).wait()

    expect_error(lambda: op(*tensors()), test_assert_in_a_kernel_is_checked_when_the_kernel_is_built,
                 KernelError, "assertion failed: 2 tiles is not a multiple of 3")


def runtime_assert_op(limit: int):
    """Two nodes copy their tile; the reader asserts, on the node's runtime column, that it is below
    ``limit`` (TT-Metal's ASSERT, checked on each core)."""

    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def read():
            nx, _ = ttl.node(dims=2)
            assert 0 <= nx < limit, f"node {nx} is past {limit}"  # error
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, nx], blk).wait()

        @ttl.datamovement()
        def write():
            nx, _ = ttl.node(dims=2)
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[0, nx]).wait()

    return op


def test_assert_on_a_runtime_value_is_checked_on_each_core():
    x, y = tensors()
    runtime_assert_op(2)(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:32], ttnn.to_numpy(x)[:32])
    expect_error(lambda: runtime_assert_op(1)(*tensors()), runtime_assert_op, KernelAssertError,
                 "assertion failed: node 1 is past 1", "(1,0)")


def test_a_runtime_assert_is_watcher_assert_in_cpp(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from ttl_helpers import compiled

    program = compiled(runtime_assert_op(2), *tensors()).program
    kernel = next(k for k in program.kernels if k.name == "read")
    text = emit_kernel(kernel.function)
    assert '#include "api/debug/assert.h"' in text and "ASSERT(" in text
    path = tmp_path / "read.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "brisc",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_node_and_grid_size_outside_an_operation():
    def node():
        ttl.node(dims=1)  # error

    def size():
        ttl.grid_size()  # error

    from tilefold.frontend.ttl import capture

    capture._LAST.clear()          # before any operation call (after one, the host sees its grid)
    expect_error(node, node, RuntimeError, "ttl.node: node not available outside a @ttl.operation")
    expect_error(size, size, RuntimeError, "ttl.grid_size: grid not available outside a @ttl.operation")


MODULE_LEVEL_DFB = ttl.make_dataflow_buffer_like(zeros((32, 32)), shape=(1, 1), block_count=2)


def test_a_buffer_made_outside_an_operation_is_refused_only_where_an_operation_uses_it():
    """As in TT-Lang, a dataflow buffer may be made anywhere; an operation uses those made in its
    body, and one of its kernels using another is an error at that line."""
    @ttl.operation(grid=(1, 1))
    def uses_its_own(x, y):
        MODULE_LEVEL_DFB = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)   # shadows the other
        copy_kernels(MODULE_LEVEL_DFB, MODULE_LEVEL_DFB, x, y)

    x, y = tensors(shape=(32, 32))
    uses_its_own(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))

    @ttl.operation(grid=(1, 1))
    def uses_the_outer(x, y):
        @ttl.datamovement()
        def read():
            with MODULE_LEVEL_DFB.reserve() as blk:  # error
                ttl.copy(x[0, 0], blk).wait()

        @ttl.compute()
        def idle():
            pass

    expect_error(lambda: uses_the_outer(*tensors(shape=(32, 32))),
                 test_a_buffer_made_outside_an_operation_is_refused_only_where_an_operation_uses_it, KernelError,
                 "MODULE_LEVEL_DFB was made outside this operation", "make it there")


def test_operation_with_an_unknown_keyword():
    def make():
        ttl.operation(grid=(1, 1), totally_unknown_option=42)  # error

    expect_error(make, make, TypeError, "unexpected keyword argument 'totally_unknown_option'", "it takes grid")


def test_operation_takes_ttl_langs_structural_keywords():
    """``num_outs=1``, ``indexing_maps`` and ``iterator_types`` are accepted as TT-Lang accepts them;
    what TT-Lang rejects is a ValueError at the user's line."""
    ttl.operation(grid=(1, 1), num_outs=1, indexing_maps=[lambda i, j: (i, j)], iterator_types=["parallel", "parallel"])

    def two_outputs():
        ttl.operation(grid=(1, 1), num_outs=2)  # error

    def types_without_maps():
        ttl.operation(grid=(1, 1), iterator_types=["parallel"])  # error

    def maps_of_another_rank():
        ttl.operation(grid=(1, 1), indexing_maps=[lambda i: (i,)], iterator_types=["parallel", "parallel"])  # error

    expect_error(two_outputs, two_outputs, ValueError, "num_outs must be 1")
    expect_error(types_without_maps, types_without_maps, ValueError, "indexing_maps must be set")
    expect_error(maps_of_another_rank, maps_of_another_rank, ValueError, "a map takes 1 dimensions")


def test_a_math_function_missing_an_argument_names_it():
    @ttl.operation(grid=(1, 1))
    def where_of_two(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def c():
            with a_dfb.wait() as x, o_dfb.reserve() as o:
                o.store(ttl.math.where(x, x))  # error

        @ttl.datamovement()
        def r():
            with a_dfb.reserve() as x:
                ttl.copy(a[0, 0], x).wait()

        @ttl.datamovement()
        def w():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0, 0]).wait()

    expect_error(lambda: where_of_two(tile_tensor((32, 32)), zeros((32, 32))),
                 test_a_math_function_missing_an_argument_names_it, KernelError,
                 "ttl.math.where(condition, true_value, false_value) is missing 'false_value'")


def test_a_module_where_a_block_belongs_is_named_as_the_user_imported_it():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            ttl.copy(x[0, 0], ttl).wait()  # error

        @ttl.datamovement()
        def write():
            ttl.copy(x_dfb.wait(), y[0, 0]).wait()

    err = expect_error(lambda: op(*tensors()), test_a_module_where_a_block_belongs_is_named_as_the_user_imported_it,
                       KernelError, "not a tensor slice into module ttl")
    assert "tilefold/ttl.py" not in str(err)


class _Settings:
    pass


SETTINGS = _Settings()


def test_an_object_without_a_repr_is_named_by_its_type():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

        @ttl.datamovement()
        def read():
            ttl.copy(x[0, 0], SETTINGS).wait()  # error

        @ttl.datamovement()
        def write():
            ttl.copy(x_dfb.wait(), y[0, 0]).wait()

    err = expect_error(lambda: op(*tensors()), test_an_object_without_a_repr_is_named_by_its_type, KernelError,
                       "not a tensor slice into a _Settings object")
    assert "0x" not in str(err)


def test_a_block_never_written_nor_released_says_both():
    """A reserved block nothing writes and nothing pushes: the error asks for both, not only the
    push (which would meet the next error, pushing an unwritten block)."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))

        @ttl.datamovement()
        def read():
            blk = x_dfb.reserve()  # error
            other = y_dfb.reserve()
            ttl.copy(x[0, 0], other).wait()
            y_dfb.push()

    expect_error(lambda: op(*tensors()), test_a_block_never_written_nor_released_says_both, KernelError,
                 "blk is reserved but never written or pushed", "then call blk.push()")


def test_a_misspelt_attribute_of_a_block_is_an_error_where_it_is_read():
    """``blk.shap`` (for ``blk.shape``) names the attributes a block has, also when nothing calls it."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                rows = blk.shap[0]  # error
                ttl.copy(x[0:rows, 0], blk).wait()

        compute_and_write(x_dfb, y_dfb, y)

    expect_error(lambda: op(*tensors()), test_a_misspelt_attribute_of_a_block_is_an_error_where_it_is_read,
                 KernelError, "block blk has no attribute 'shap'", "shape, dtype, tile")


def test_a_misspelt_method_of_a_buffer_names_its_methods():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            take = x_dfb.reserv  # error
            with take() as blk:
                ttl.copy(x[0, 0], blk).wait()

        compute_and_write(x_dfb, y_dfb, y)

    expect_error(lambda: op(*tensors()), test_a_misspelt_method_of_a_buffer_names_its_methods, KernelError,
                 "dataflow buffer x_dfb has no attribute 'reserv'", "reserve(), wait()")


@pytest.mark.parametrize("grid", [(1.5, 1), ("2", 1), (True, 1)])
def test_grid_sizes_that_are_not_integers(grid):
    """A fraction is not rounded down into a grid (nor a string or bool read as a size)."""
    def run():
        @ttl.operation(grid=grid)  # error
        def op(x, y):
            pass

        op(*tensors())

    expect_error(run, run, KernelError, "a tuple (columns, rows) of positive integers")


def test_misspelt_keywords_of_the_body_functions_name_the_one_meant():
    def buffer():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.make_dataflow_buffer_like(x, shapes=(1, 1), block_count=2)  # error

        op(*tensors())

    def semaphore():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.Semaphore(initial=1)  # error

        op(*tensors())

    def pipe():
        @ttl.operation(grid=(1, 2))
        def op(x, y):
            ttl.PipeNet([ttl.Pipe(srcc=(0, 0), dst=(0, 1))])  # error

        op(*tensors())

    def missing():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.make_dfb(ttnn.bfloat16)  # error

        op(*tensors())

    from tilefold.errors import KernelArgumentError

    error = expect_error(buffer, buffer, KernelArgumentError, "ttl.make_dataflow_buffer_like(): got an unexpected "
                         "keyword argument 'shapes' (did you mean shape=?); it takes tensor, shape, block_count")
    assert isinstance(error, TypeError)
    expect_error(semaphore, semaphore, KernelArgumentError, "ttl.Semaphore(): got an unexpected keyword argument "
                 "'initial' (did you mean initial_value=?)")
    expect_error(pipe, pipe, KernelArgumentError, "ttl.Pipe(): got an unexpected keyword argument 'srcc' (did you "
                 "mean src=?); it takes src, dst")
    expect_error(missing, missing, KernelArgumentError, "ttl.make_dfb(): missing a required argument: 'shape'")


def test_a_misspelt_keyword_of_node_in_a_kernel_is_not_ignored():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            n = ttl.node(dim=1)  # error
            with x_dfb.reserve() as blk:
                ttl.copy(x[n, 0], blk).wait()

        compute_and_write(x_dfb, y_dfb, y)

    expect_error(lambda: op(*tensors()), test_a_misspelt_keyword_of_node_in_a_kernel_is_not_ignored, KernelError,
                 "ttl.node(): got an unexpected keyword argument 'dim' (did you mean dims=?)")


def test_an_unknown_keyword_of_a_kernel_decorator():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        @ttl.compute(threads=2)  # error
        def compute():
            pass

    expect_error(lambda: op(*tensors()), test_an_unknown_keyword_of_a_kernel_decorator, KernelError,
                 "@ttl.compute() got an unexpected keyword argument 'threads'", "takes kernel=")


def _scaled_by(expression):
    """An operation whose compute kernel stores ``expression(a)`` of its one input block."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(expression(a))

        copy_kernels(x_dfb, y_dfb, x, y)

    return op


def test_a_number_beyond_float32_is_an_error_not_an_infinity():
    """The device holds a kernel's numbers as float32: 1e300 (or an int too large for any float) would
    be inf there, and 1e-300 zero — a division by it gives inf — so each is one error at the line."""
    def huge(a):
        return a * 1e300  # error

    expect_error(lambda: _scaled_by(huge)(*tensors()), huge, KernelError,
                 "the number 1e+300 is outside float32's range", "float('inf')")

    def huge_int(a):
        return a + ttl.math.fill(10**400, shape=(1, 1))  # error

    expect_error(lambda: _scaled_by(huge_int)(*tensors()), huge_int, KernelError,
                 "the number 10**400 is outside float32's range")

    def scale(a):
        return ttl.math.exp(a, scale=-1e39)  # error

    expect_error(lambda: _scaled_by(scale)(*tensors()), scale, KernelError, "the number -1e+39 is outside", "-inf")

    def tiny(a):
        return a / 1e-300  # error

    expect_error(lambda: _scaled_by(tiny)(*tensors()), tiny, KernelError,
                 "division of a block by 1e-300, which is zero as a float32")


def test_keywords_of_min_and_abs_in_a_kernel_are_not_ignored():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            r = min(1, 2, key=abs)  # error
            with x_dfb.reserve() as blk:
                ttl.copy(x[r, 0], blk).wait()

        compute_and_write(x_dfb, y_dfb, y)

    expect_error(lambda: op(*tensors()), test_keywords_of_min_and_abs_in_a_kernel_are_not_ignored, KernelError,
                 "min() in a kernel takes values only, not key=")


def test_two_kernel_functions_of_one_name():
    """Each kernel is a function of the program named as its def: a second of one name is an error at
    its def naming the first, not the IR's symbol clash without a line."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        @ttl.datamovement()
        def move():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def move():  # noqa: F811 - the mistake under test  # error
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    expect_error(lambda: op(*tensors()), test_two_kernel_functions_of_one_name, KernelError,
                 "operation 'op' already has a kernel function named 'move' (at ", "give each kernel function its own")


def test_a_lambda_as_a_kernel():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        ttl.compute()(lambda: None)  # error

    expect_error(lambda: op(*tensors()), test_a_lambda_as_a_kernel, KernelError,
                 "ttl.compute() takes a kernel written as a def function, not a lambda")


def test_a_numpy_array_in_a_kernel_is_named_by_its_shape_not_its_values():
    """The message stays one line: an array's repr would spread its values over many."""
    weights = np.ones((32, 32))

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a * weights)  # error

        copy_kernels(x_dfb, y_dfb, x, y)

    error = expect_error(lambda: op(*tensors()), test_a_numpy_array_in_a_kernel_is_named_by_its_shape_not_its_values,
                         KernelError, "a numpy array of shape (32, 32) (float64) is not a block or a block expression")
    assert "\n" not in str(error)


def test_the_public_buffer_constructor_and_make_dfb_refuse_what_they_cannot_take():
    from tilefold.errors import KernelValueError

    def nothing():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.DataflowBuffer(shape=(1, 1))  # error

        op(*tensors())

    def misspelt():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.DataflowBuffer(tensr=x, shape=(1, 1))  # error

        op(*tensors())

    def not_a_dtype():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.DataflowBuffer(tensor=x, shape=(1, 1), dtype="foo")  # error

        op(*tensors())

    def layout():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            ttl.make_dfb(ttnn.bfloat16, (1, 1), 2, layout="weird")  # error

        op(*tensors())

    expect_error(nothing, nothing, KernelError, "takes shape= and a tensor or a dtype")
    expect_error(misspelt, misspelt, KernelError, "takes shape= and a tensor or a dtype; not tensr=")
    expect_error(not_a_dtype, not_a_dtype, KernelValueError, "ttl.DataflowBuffer(dtype='foo'): give a TT-NN or torch "
                 "data type")
    expect_error(layout, layout, KernelError, "ttl.make_dfb(layout='weird'): give ttnn.TILE_LAYOUT or "
                 "ttnn.ROW_MAJOR_LAYOUT")


def test_the_value_of_a_helper_that_ends_in_raise_names_the_raise():
    """A kernel has no exceptions (a raise is an assert that fails where it is reached), so a helper
    ending in raise gives its caller no value: the error at the use names the raise, not None."""
    def checked(a):
        raise ValueError("unsupported block")

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(checked(a))  # error

        copy_kernels(x_dfb, y_dfb, x, y)

    expect_error(lambda: op(*tensors()), test_the_value_of_a_helper_that_ends_in_raise_names_the_raise, KernelError,
                 "the value of checked(), which has none: it ends in raise ValueError('unsupported block') (at ",
                 "is not a block or a block expression")


def test_a_buffer_attribute_assigned_in_the_body_is_an_error_there():
    """``x_dfb.block_count = 0`` skipped make_dataflow_buffer_like's checks and failed later at a wait."""
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)
        x_dfb.block_count = 0  # error

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        copy_kernels(x_dfb, y_dfb, x, y)

    expect_error(lambda: op(*tensors()), test_a_buffer_attribute_assigned_in_the_body_is_an_error_there, KernelError,
                 "x_dfb.block_count = ...: a dataflow buffer's block_count is set when it is made")


def test_a_signpost_is_named_by_a_string():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with ttl.signpost(3):  # error
                with x_dfb.wait() as a, y_dfb.reserve() as b:
                    b.store(a)

        copy_kernels(x_dfb, y_dfb, x, y)

    expect_error(lambda: op(*tensors()), test_a_signpost_is_named_by_a_string, KernelError,
                 "ttl.signpost(name) takes the region's name as a string, not int 3")


def test_a_signpost_around_host_code_is_a_region_that_does_nothing():
    """As TT-Lang's simulator: ``with ttl.signpost(name):`` around the call of an operation runs it
    unchanged; a name that is not a string is still one error at the user's line."""
    op = _scaled_by(lambda a: a * 2.0)
    x, y = tensors(shape=(32, 32))
    with ttl.signpost("host region"):
        op(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), ttnn.to_numpy(x).astype(np.float32) * 2, rtol=1e-2)
    expect_error(lambda: ttl.signpost(None),  # error
                 test_a_signpost_around_host_code_is_a_region_that_does_nothing,
                 KernelError, "ttl.signpost(name) takes the region's name as a string, not NoneType None")


def test_a_fill_of_a_runtime_value_says_the_value_must_be_known_when_the_kernel_is_built():
    @ttl.operation(grid=(2, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))
        copy_kernels(x_dfb, y_dfb, x, y)

        @ttl.compute()
        def compute():
            n = ttl.node(dims=1)
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a + ttl.block.fill(n + 1, shape=(1, 1)))  # error

    test = test_a_fill_of_a_runtime_value_says_the_value_must_be_known_when_the_kernel_is_built
    expect_error(lambda: op(*tensors()), test, KernelError, "n + 1 is only known on the device", "operation arguments")


def test_a_row_slice_starting_off_a_16_byte_boundary_at_run_time():
    """``x[0, 4 * i:4 * i + 8]`` of bfloat16 with ``i`` known on the device only: a start of 8 bytes
    is refused when the copy runs, as the same start known when the kernel is built is refused then
    (the NOC would deliver the bytes shifted)."""
    from tilefold.errors import DramAccessError

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        d = ttl.make_dataflow_buffer_like(x, shape=(8,), block_count=1)

        @ttl.datamovement()
        def read():
            i = ttl.node(dims=1) + 1
            with d.reserve() as blk:
                ttl.copy(x[0, 4 * i:4 * i + 8], blk).wait()  # error

        @ttl.datamovement()
        def write():
            with d.wait() as blk:
                ttl.copy(blk, y[0, 0:8]).wait()

    x, y = (ttnn.from_numpy(np.zeros((2, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
            for _ in range(2))
    expect_error(lambda: op(x, y), test_a_row_slice_starting_off_a_16_byte_boundary_at_run_time, DramAccessError,
                 "8 bytes past a 16-byte boundary", "start the transfer")


def test_a_pipe_receive_nothing_sends_into_names_the_pipe_net():
    """A receive whose sender never sends (its send sits under a branch no node takes) deadlocks; the
    report names the pipe net the receive waits on, where it was made."""

    @ttl.operation(grid=(2, 1))
    def op(x, y):
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])     # the net's line
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            node_x, _ = ttl.node(dims=2)
            with dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

                def send(pipe):
                    ttl.copy(blk, pipe).wait()

                if node_x == 5:
                    net.if_src(send)

                def receive(pipe):
                    ttl.copy(pipe, blk).wait()

                net.if_dst(receive)

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    with pytest.raises(DeadlockError) as info:
        op(tile_tensor((32, 32)), zeros((32, 32)))
    made = marked_line(test_a_pipe_receive_nothing_sends_into_names_the_pipe_net, "# the net's line")
    assert f"waiting for a block sent through the pipe net made at {__file__}:{made}" in str(info.value)


def test_a_semaphore_wait_nothing_satisfies_names_the_semaphore():
    """A wait on a ttl.Semaphore no node increments says which semaphore, where it was made."""

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        done = ttl.Semaphore()                                  # the semaphore's line
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            done.wait_min(1)
            with dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    with pytest.raises(DeadlockError) as info:
        op(tile_tensor((32, 32)), zeros((32, 32)))
    made = marked_line(test_a_semaphore_wait_nothing_satisfies_names_the_semaphore, "# the semaphore's line")
    assert f"waiting for the ttl.Semaphore made at {__file__}:{made} to reach 1" in str(info.value)



def test_two_kernels_of_one_node_consuming_one_buffer_are_named_in_the_deadlock():
    """Two kernels of one node wait on one buffer (each under a branch, so the compile-time check
    cannot see it): the one whose blocks the other popped waits forever; the report names both."""

    @ttl.operation(grid=(2, 1))
    def op(x, y, z):
        in_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        abs_dfb = ttl.make_dataflow_buffer_like(z, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            node_x, _ = ttl.node(dims=2)
            if node_x == 1:
                with in_dfb.wait() as t, abs_dfb.reserve() as o:
                    o.store(ttl.math.abs(t))

        @ttl.datamovement()
        def read():
            node_x, _ = ttl.node(dims=2)
            if node_x == 1:
                with in_dfb.reserve() as blk:
                    ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            node_x, _ = ttl.node(dims=2)
            if node_x == 1:
                with in_dfb.wait() as blk:
                    ttl.copy(blk, y[0, 0]).wait()
                with abs_dfb.wait() as blk:
                    ttl.copy(blk, z[0, 0]).wait()

    with pytest.raises(DeadlockError) as info:
        op(tile_tensor((32, 32)), zeros((32, 32)), zeros((32, 32)))
    message = str(info.value)
    assert "in_dfb has two consumer kernels on core (1,0)" in message
    assert "Make one dataflow buffer per consumer" in message


def test_an_operation_body_returning_a_value_is_refused_where_it_is_decorated():
    def decorate():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            def helper():
                return 1            # a nested function may return
            return y  # error

    expect_error(decorate, test_an_operation_body_returning_a_value_is_refused_where_it_is_decorated,
                 KernelError, "operation op returns y; an operation writes its output tensors and returns None")


def test_popping_a_name_carried_around_a_loop_across_two_buffers_says_what_it_holds():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        a_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            with b_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            cur = a_dfb.wait()
            for i in range(1):
                with o_dfb.reserve() as o:
                    o.store(cur + 1.0)
                cur.pop()  # error
                cur = b_dfb.wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    expect_error(lambda: op(*tensors()),
                 test_popping_a_name_carried_around_a_loop_across_two_buffers_says_what_it_holds, KernelError,
                 "cur is a value computed in the kernel, not a block of a dataflow buffer, so it has no 'pop'",
                 "keep one name per buffer")


def test_a_kernel_returning_a_constant_runs_with_a_warning_that_the_value_is_dropped():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()
            return 0  # warned

        @ttl.datamovement()
        def write():
            with x_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    x, y = tensors()
    with pytest.warns(UserWarning, match="a kernel function returns nothing: the value 0 is dropped") as caught:
        op(x, y)
    assert caught[0].lineno == marked_line(test_a_kernel_returning_a_constant_runs_with_a_warning_that_the_value_is_dropped,
                                            "# warned")
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:32, :32], ttnn.to_numpy(x)[:32, :32])
