"""``ttl.Semaphore``: barriers between the nodes of an operation, as TT-Lang's semaphore spec
examples write them — many nodes increment node 0's copy (``get_remote((0, 0)).inc(1)``) while
node 0 waits for the count (``wait_eq``); node 0 sets every node's copy
(``get_remote_multicast().set(1)``) while the others wait. Each test moves data through DRAM so
that its result is right only if the barrier orders the nodes. Simulated against numpy; C++
checked against the real headers; misuse is one line at the user's file:line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error


@ttl.operation(grid=(2, 2))
def gather_after_barrier(inp, scratch, out):
    """Nodes 1..3 copy their tile of ``inp`` to ``scratch`` and then increment node 0's barrier;
    node 0 waits for all three and copies ``scratch`` to ``out``."""
    node_num = ttl.node(dims=1)
    barrier = ttl.Semaphore()
    node_0 = barrier.get_remote((0, 0))
    others = ttl.grid_size(dims=1) - 1
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        if node_num != 0:
            with dfb.reserve() as blk:
                ttl.copy(inp[0, node_num:node_num + 1], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, scratch[0, node_num:node_num + 1]).wait()
            node_0.inc(1)
        else:
            barrier.wait_eq(others)
            for t in range(1, others + 1):
                with dfb.reserve() as blk:
                    ttl.copy(scratch[0, t:t + 1], blk).wait()
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, t:t + 1]).wait()

    @ttl.compute()
    def compute():
        pass


@ttl.operation(grid=(2, 2))
def broadcast_after_barrier(inp, scratch, out):
    """Node 0 copies tile 0 of ``inp`` to ``scratch`` and sets every node's barrier; the others
    wait for it and copy that tile to their own tile of ``out``."""
    node_num = ttl.node(dims=1)
    barrier = ttl.Semaphore(initial_value=0)
    everyone = barrier.get_remote_multicast()
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        if node_num == 0:
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0:1], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, scratch[0, 0:1]).wait()
            everyone.set(1)
        else:
            barrier.wait_eq(1)
            with dfb.reserve() as blk:
                ttl.copy(scratch[0, 0:1], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, node_num:node_num + 1]).wait()

    @ttl.compute()
    def compute():
        pass


def _tiles():
    v = np.zeros((32, 4 * 32), np.float32)
    for t in range(4):
        v[:, t * 32:(t + 1) * 32] = t + 1
    return v


def test_many_to_one_barrier_orders_the_writes_before_the_read():
    v = _tiles()
    out = ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)
    gather_after_barrier(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT),
                         out)
    expected = v.copy()
    expected[:, :32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_one_to_many_barrier_by_multicast():
    v = _tiles()
    out = ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)
    broadcast_after_barrier(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT),
                            out)
    expected = np.ones_like(v)
    expected[:, :32] = 0
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_semaphore_kernels_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    v = _tiles()
    for op in (gather_after_barrier, broadcast_after_barrier):
        program = compiled(op, ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT),
                           ttnn.zeros(v.shape, layout=ttnn.TILE_LAYOUT)).program
        kernel = next(k for k in program.kernels if k.name == "dm")
        path = tmp_path / f"{op.name}.cpp"
        path.write_text(emit_kernel(kernel.function))
        check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                                check_kernel.accessor_compile_args(program, kernel)))


def test_a_semaphore_in_a_compute_kernel_names_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(x):
        barrier = ttl.Semaphore()

        @ttl.compute()
        def compute():
            barrier.wait_eq(1)  # error

        @ttl.datamovement()
        def dm():
            pass

    expect_error(lambda: op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)),
                 test_a_semaphore_in_a_compute_kernel_names_the_users_line, KernelError, "@ttl.datamovement")


def test_a_remote_node_outside_the_grid_names_the_users_line():
    @ttl.operation(grid=(2, 1))
    def op(x):
        ttl.Semaphore().get_remote((2, 0))  # error

    expect_error(lambda: op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT)),
                 test_a_remote_node_outside_the_grid_names_the_users_line, KernelError, "outside the 2x1 grid")


def test_a_semaphore_value_beyond_32_bits_names_the_users_line():
    """A semaphore is one 32-bit word: 2**40 would be cut to its low bits."""
    def initial():
        @ttl.operation(grid=(1, 1))
        def op(x):
            ttl.Semaphore(2**40)  # error

        op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    def setting():
        @ttl.operation(grid=(1, 1))
        def op(x):
            barrier = ttl.Semaphore(0)

            @ttl.datamovement()
            def dm():
                barrier.set(2**32)  # error

        op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    expect_error(initial, initial, KernelError, "ttl.Semaphore(initial_value=1099511627776): a semaphore is a 32-bit "
                 "word")
    expect_error(setting, setting, KernelError, "set(4294967296): a semaphore holds a non-negative integer of 32 bits")


@ttl.operation(grid=(2, 1))
def handoff_by_remote_set(inp, scratch, out):
    """``ttl.Semaphore(2)`` starts at 2 on both nodes: node 0 passes ``wait_ge(2)`` at once, copies its
    tile to ``scratch`` and sets node 1's copy to 7 (``get_remote`` made in the kernel, ``set``); node 1
    waits for 7 and copies ``scratch`` to ``out``."""
    x, _ = ttl.node(dims=2)
    flag = ttl.Semaphore(2)
    dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def dm():
        if x == 0:
            flag.wait_ge(2)
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, scratch[0, 0]).wait()
            flag.get_remote((1, 0)).set(7)
        else:
            flag.wait_eq(7)
            with dfb.reserve() as blk:
                ttl.copy(scratch[0, 0], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()


def test_initial_value_wait_ge_and_a_remote_set_made_in_the_kernel(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    v = _tiles()[:, :32].copy()
    tensors = [ttnn.from_numpy(a, layout=ttnn.TILE_LAYOUT) for a in (v, np.zeros_like(v), np.zeros_like(v))]
    handoff_by_remote_set(*tensors)
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[2]), v)
    program = compiled(handoff_by_remote_set, *tensors).program
    assert [s.initial_value for s in program.semaphores][-1] == 2
    dm = next(k for k in program.kernels if k.name == "dm")
    text = emit_kernel(dm.function)
    assert "noc_inline_dw_write(" in text and "noc_semaphore_wait_min(" in text
    path = tmp_path / "dm.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader", check_kernel.accessor_compile_args(program, dm)))
