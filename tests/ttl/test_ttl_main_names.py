"""Names of TT-Lang's main branch that programs write beside the language itself: the types of
kernel values in annotations (``ttl.TensorBlock``, ``ttl.CopyTransferHandler``, ``ttl.ReceiveRequest``,
``ttl.ReadyReceive``, ``ttl.DFBAllocationGroup``) and ``ttl.math.exp(x, iterations=8)``; run on
the simulator against numpy, or the clear error at the user's line."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def load(tensor, blk: ttl.TensorBlock) -> ttl.CopyTransferHandler:
    """A helper annotated with TT-Lang's type names (evaluated when it is defined)."""
    return ttl.copy(tensor[0, 0], blk)


def _exp_op(iterations):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        i_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with i_dfb.wait() as x, o_dfb.reserve() as y:
                y.store(ttl.math.exp(x, iterations=iterations))  # error

        @ttl.datamovement()
        def read():
            with i_dfb.reserve() as blk:
                load(inp, blk).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return op


def test_annotated_helpers_and_exp_with_its_iteration_count():
    inp, out = tile_tensor((32, 32), seed=2), zeros((32, 32))
    _exp_op(8)(inp, out)
    np.testing.assert_allclose(ttnn.to_numpy(out), np.exp(ttnn.to_numpy(inp)), rtol=2 ** -6, atol=1e-3)


def test_exp_takes_only_the_whole_tiles_iteration_count():
    expect_error(lambda: _exp_op(4)(tile_tensor((32, 32)), zeros((32, 32))), _exp_op, KernelError,
                 "ttl.math.exp iterations must be 8, got 4")


def test_the_type_names_match_the_kernel_values_and_host_objects():
    from tilefold.frontend.ttl import values

    group = ttl.make_dfb_allocation_group()
    assert isinstance(group, ttl.DFBAllocationGroup)
    block = values.Block.__new__(values.Block)
    assert isinstance(block, ttl.TensorBlock) and not isinstance(block, ttl.CopyTransferHandler)
    assert not isinstance(object(), ttl.ReceiveRequest) and not isinstance(3, ttl.ReadyReceive)
