"""TT-Lang's newer operation spellings: ``ttl.Kernel(ttl.KernelKind...)`` handles named by
``@ttl.compute(kernel=...)`` / ``@ttl.datamovement(kernel=...)``, ``ttl.make_dfb(dtype, shape,
block_count)`` for a buffer no tensor describes, ``ttl.make_dfb_allocation_group()`` (its buffers
take turns in one L1 area), ``ttl.block.fill(..., dtype=blk.dtype)`` and ``with dfb.wait():`` without
a name. Simulated against numpy; misuse is one line at the user's file:line."""

from __future__ import annotations

import ml_dtypes
import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error

reader_kernel = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
compute_kernel = ttl.Kernel(ttl.KernelKind.COMPUTE)
writer_kernel = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)


@ttl.operation(grid=(1, 1))
def handoff_then_copy(x, y):
    """The reader waits for the compute kernel's handoff block (a buffer of no tensor) before it
    reads the tile the compute kernel then adds ``handoff``'s fill value (2.0) to."""
    group = ttl.make_dfb_allocation_group()
    first = ttl.make_dataflow_buffer_like(x, shape=(1, 2), block_count=1, allocation_group=group)
    second = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2, allocation_group=group)
    handoff = ttl.make_dfb("bf16", shape=(1, 1), block_count=2)
    out = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement(kernel=reader_kernel)
    def read():
        with first.reserve() as blk:
            ttl.copy(x[0:1, 0:2], blk).wait()
        with handoff.wait():
            pass
        with second.reserve() as blk:
            ttl.copy(x[0, 1], blk).wait()

    @ttl.compute(kernel=compute_kernel)
    def compute():
        with first.wait():
            pass
        with handoff.reserve() as done:
            done.store(ttl.block.fill(2.0, shape=done.shape, dtype=done.dtype))
        with second.wait() as b, out.reserve() as o:
            o.store(b + ttl.block.fill(2.0, shape=b.shape, dtype=b.dtype))

    @ttl.datamovement(kernel=writer_kernel)
    def write():
        with out.wait() as o:
            ttl.copy(o, y[0, 0]).wait()


def test_kernel_handles_a_dfb_of_no_tensor_and_an_allocation_group():
    v = np.random.default_rng(4).uniform(-1, 1, (32, 64)).astype(ml_dtypes.bfloat16)
    y = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    handoff_then_copy(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), y)
    expected = (v[:, 32:].astype(np.float32) + 2.0).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


def test_a_kernel_handle_of_the_other_kind_names_the_users_line():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x):
            @ttl.compute(kernel=reader_kernel)  # error
            def compute():
                pass

        op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    expect_error(run, test_a_kernel_handle_of_the_other_kind_names_the_users_line, KernelError,
                 "ttl.KernelKind.COMPUTE")


def test_make_dfb_with_an_unknown_data_type_names_the_users_line():
    def run():
        @ttl.operation(grid=(1, 1))
        def op(x):
            ttl.make_dfb("int4", shape=(1, 1))  # error

        op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    expect_error(run, test_make_dfb_with_an_unknown_data_type_names_the_users_line, KernelError, "bf16, fp32")


def test_a_kernel_handle_used_as_a_block_is_named_as_the_user_wrote_it():
    compute_kernel = ttl.Kernel(ttl.KernelKind.COMPUTE)

    def run():
        @ttl.operation(grid=(1, 1))
        def op(x, y):
            a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
            b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

            @ttl.datamovement()
            def reader():
                ttl.copy(x[0, 0], a.reserve()).wait()

            @ttl.datamovement()
            def writer():
                ttl.copy(b.wait(), y[0, 0]).wait()

            @ttl.compute(kernel=compute_kernel)
            def compute():
                b.reserve()
                compute_kernel.store(a.wait())  # error

        op(ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT), ttnn.zeros((32, 32), layout=ttnn.TILE_LAYOUT))

    expect_error(run, test_a_kernel_handle_used_as_a_block_is_named_as_the_user_wrote_it, KernelError,
                 "ttl.Kernel(ttl.KernelKind.COMPUTE) has no attribute 'store'")


def test_a_shared_compilation_cache_argument_is_accepted():
    """``@ttl.operation(factory_cache=..., factory_cache_key=...)``: TT-Lang's cache shared between
    operations; the operation runs as without it."""
    cache = {}

    @ttl.operation(grid=(1, 1), factory_cache=cache, factory_cache_key=("layer", 7))
    def copy_tile(x, y):
        dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    v = np.random.default_rng(1).uniform(-1, 1, (32, 32)).astype(ml_dtypes.bfloat16)
    y = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    copy_tile(ttnn.from_numpy(v, layout=ttnn.TILE_LAYOUT), y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), v.astype(np.float32))
