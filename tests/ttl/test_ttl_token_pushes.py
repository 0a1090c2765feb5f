"""A block pushed with nothing written into it is a token, as TT-Lang's programs use one to say
"done" (its consumer waits on it and pops it without reading it): that runs. A consumer that reads
the blocks of a buffer whose every push is a token is an error at the read; one whose buffer is
also pushed written gets a warning there. Simulated against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def acknowledged_copy(inp, out):
    in_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    ack_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(3):
            with ack_dfb.wait():
                pass
            with in_dfb.wait() as x, out_dfb.reserve() as y:
                y.store(ttl.math.abs(x))

    @ttl.datamovement()
    def reader():
        for i in range(3):
            signal = ack_dfb.reserve()
            signal.push()            # nothing written: the block is only a token
            with in_dfb.reserve() as b:
                ttl.copy(inp[0, i], b).wait()

    @ttl.datamovement()
    def writer():
        for i in range(3):
            with out_dfb.wait() as b:
                ttl.copy(b, out[0, i]).wait()


def _token_then_read():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            first = dfb.reserve()
            second = dfb.reserve()
            first.push()
            second.push()

        @ttl.datamovement()
        def writer():
            for i in range(2):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i]).wait()  # error

    return op


def _some_tokens():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def reader():
            with dfb.reserve() as data:
                ttl.copy(inp[0, 0], data).wait()
            with dfb.reserve():
                pass

        @ttl.datamovement()
        def writer():
            for i in range(2):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, i]).wait()

    return op


def test_a_token_block_signals_its_consumer_and_the_program_runs():
    inp, out = tile_tensor((32, 96), seed=2), zeros((32, 96))
    acknowledged_copy(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.abs(ttnn.to_numpy(inp)))


def test_reading_the_blocks_of_a_buffer_only_tokens_are_pushed_into_is_an_error_at_the_read():
    expect_error(lambda: _token_then_read()(tile_tensor((32, 64)), zeros((32, 64))), _token_then_read, KernelError,
                 "blk is read here, but first was pushed into dfb at", "only wait on and pop blocks used as tokens")


def test_reading_a_buffer_pushed_both_written_and_as_a_token_is_a_warning():
    inp, out = tile_tensor((32, 64), seed=5), zeros((32, 64))
    with pytest.warns(UserWarning, match="with nothing written into it, so this reads whatever its pages held"):
        _some_tokens()(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out)[:, :32], ttnn.to_numpy(inp)[:, :32])


def _fill_with_a_shape_template(named: bool):
    # the first reserve() is stored into; the second only gives fill() its shape and is pushed
    # unwritten after it: the wait() gets the filled block
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        s_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            if named:
                t = s_dfb.reserve()
                t.store(ttl.math.fill(s_dfb.reserve(), 3.0))
            else:
                s_dfb.reserve().store(ttl.math.fill(s_dfb.reserve(), 3.0))
            s = s_dfb.wait()
            o_dfb.reserve().store(s + s)

        @ttl.datamovement()
        def reader():
            pass

        @ttl.datamovement()
        def writer():
            o = o_dfb.wait()
            ttl.copy(o, out[0, 0]).wait()

    return op


@pytest.mark.parametrize("named", [False, True], ids=["inline", "named"])
def test_blocks_acquired_in_one_statement_are_taken_in_pythons_order_and_the_wait_gets_the_first(named):
    import warnings

    out = zeros((32, 32))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*with nothing written into it")   # the wait reads the filled block
        warnings.filterwarnings("ignore", message="pages left in circular buffers")  # the template block stays
        _fill_with_a_shape_template(named)(tile_tensor((32, 32)), out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.full((32, 32), 6.0, np.float32))
