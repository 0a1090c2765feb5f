"""``TTLANG_COMPILE_ONLY=1``: an operation call compiles its kernels (with every compile-time error at
the user's line) and does not run them; torch tensors stand for device tensors of their shape and
dtype. Without it the same call runs on the simulator."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


def _broadcast_op(dims):
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute_fn():
            with inp_dfb.wait() as i, out_dfb.reserve() as o:
                o.store(ttl.block.broadcast(i, dims=dims, shape=(1, 1)))  # error

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with out_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return op


def test_a_compile_only_call_leaves_its_outputs_unwritten(monkeypatch):
    inp, out = tile_tensor((32, 32), seed=1), zeros((32, 32))
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    _broadcast_op([1])(inp, out)
    assert not ttnn.to_numpy(out).any()
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "0")
    _broadcast_op([1])(inp, out)
    x = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.broadcast_to(x[:, :1], x.shape))   # column 0 across


@pytest.mark.parametrize("dim", [2, -3, 10])
def test_a_broadcast_dimension_outside_the_block_is_an_error_when_compiling(monkeypatch, dim):
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    expect_error(lambda: _broadcast_op([dim])(tile_tensor((32, 32)), zeros((32, 32))), _broadcast_op, KernelError,
                 f"Invalid broadcast dimension {dim}; the block is 2-D")


def test_torch_tensors_are_compiled_for_their_shape_and_dtype(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    inp, out = torch.ones((32, 32), dtype=torch.bfloat16), torch.zeros((32, 32), dtype=torch.bfloat16)
    _broadcast_op([1])(inp, out)
    expect_error(lambda: _broadcast_op([2])(inp, out), _broadcast_op, KernelError, "Invalid broadcast dimension 2")


def test_torch_tensors_are_refused_when_the_call_runs(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.delenv("TTLANG_COMPILE_ONLY", raising=False)
    with pytest.raises(KernelError, match="a TT-Lang operation takes device tensors"):
        _broadcast_op([1])(torch.ones((32, 32)), torch.zeros((32, 32)))


def _push_unwritten():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def dm():
            with dfb.reserve() as blk:
                pass
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()  # error

    return op


def test_reading_a_block_pushed_unwritten_is_a_warning_in_a_compile_only_build_and_an_error_in_a_run(monkeypatch):
    """TT-Lang's compiler builds a kernel that pushes a block it never wrote (its compile tests do);
    a consumer reading it would send whatever L1 held, so a run rejects the read — also after a
    compile-only build of the same call."""
    inp, out, op = tile_tensor((32, 32), seed=1), zeros((32, 32)), _push_unwritten()
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="was pushed into dfb at .* with nothing written into it.*TTLANG_COMPILE_ONLY"):
        op(inp, out)
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "0")
    expect_error(lambda: op(inp, out), _push_unwritten, KernelError,
                 "blk is read here, but blk was pushed into dfb at", "with nothing written into it")


def _double_copy():
    @ttl.operation(grid=(2, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm_read():
            x, _ = ttl.node(dims=2)
            with dfb.reserve() as blk:
                tx = ttl.copy(inp[0, 0], blk)
                if x == 0:
                    tx = ttl.copy(inp[0, 1], blk)  # error
                tx.wait()

        @ttl.datamovement()
        def dm_write():
            x, _ = ttl.node(dims=2)
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, x]).wait()

        @ttl.compute()
        def idle():
            pass

    return op


def test_two_copies_into_one_block_at_once_are_a_warning_in_a_compile_only_build(monkeypatch):
    """The second copy may land before the first: the block's value is undefined when run."""
    inp, out, op = tile_tensor((32, 64), seed=2), zeros((32, 64)), _double_copy()
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="already being written by ttl.copy.*either order"):
        op(inp, out)
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "0")
    expect_error(lambda: op(inp, out), _double_copy, KernelError, "blk is already being written")


def _past_the_tensor():
    @ttl.operation(grid=(4, 1))
    def op(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def dm():
            x, _ = ttl.node(dims=2)
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, x]).wait()  # error

        @ttl.compute()
        def idle():
            pass

    return op


def test_a_slice_past_the_tensor_over_the_nodes_is_a_warning_in_a_compile_only_build(monkeypatch):
    """Nodes 2 and 3 would write past a 2-tile-wide tensor: an error when run, a warning (and a
    runtime check in the kernel) when only built."""
    inp, out, op = tile_tensor((32, 64), seed=3), zeros((32, 64)), _past_the_tensor()
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="outside the tensor.*TTLANG_COMPILE_ONLY"):
        op(inp, out)
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "0")
    expect_error(lambda: op(inp, out), _past_the_tensor, KernelError, "outside the tensor (2 tiles")


def _reads_reserved_blocks():
    @ttl.operation(grid=(1, 1))
    def op(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 2), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.reserve() as x, b_dfb.reserve() as y, o_dfb.reserve() as o:
                o.store(ttl.math.relu(x @ y))  # error

        @ttl.datamovement()
        def read():
            pass

        @ttl.datamovement()
        def write():
            pass

    return op


def test_reading_reserved_blocks_nothing_wrote_is_a_warning_in_a_compile_only_build(monkeypatch):
    """A benchmark kernel that computes on blocks it reserved and never filled (no data movement at
    all) compiles with a warning, as TT-Lang builds it; a run refuses the read at the line."""
    a, b, out = tile_tensor((64, 64), seed=1), tile_tensor((64, 64), seed=2), zeros((64, 64))
    op = _reads_reserved_blocks()
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="x is read before anything was written into it"):
        op(a, b, out)
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "0")
    expect_error(lambda: op(a, b, out), _reads_reserved_blocks, KernelError,
                 "x is read before anything was written into it")


def _waits_more_than_pushed():
    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        a_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait():
                pass  # error

        @ttl.datamovement()
        def dm():
            pass

    return op


def test_unbalanced_block_counts_stop_a_run_but_not_a_compile_only_build(monkeypatch):
    """A kernel skeleton whose buffer is waited for but never filled (TT-Lang's lit tests build such):
    the build goes on with a warning at the line; a run stops there with the error."""
    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="a_dfb is waited for 1 time but its producer pushes only 0 blocks"):
        _waits_more_than_pushed()(tile_tensor((32, 32)), zeros((32, 32)))
    monkeypatch.delenv("TTLANG_COMPILE_ONLY")
    expect_error(lambda: _waits_more_than_pushed()(tile_tensor((32, 32)), zeros((32, 32))), _waits_more_than_pushed,
                 KernelError, "a_dfb is waited for 1 time but its producer pushes only 0 blocks")
