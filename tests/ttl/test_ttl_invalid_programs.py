"""Invalid TT-Lang programs as TT-Lang's own test suite writes them: one clear tilefold error at the
user's line (marked ``# error``), of the exception type TT-Lang raises where that is sensible; and
the accepted forms next to them, run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import copy_kernels, expect_error, tile_tensor, zeros


def test_diagnostics_module_and_language_module_names():
    from tilefold.ttl import ttl as language
    from tilefold.ttl.diagnostics import TTLangCompileError

    assert language.operation is ttl.operation and TTLangCompileError is KernelError
    with pytest.raises(KernelError, match="ttl.diagnostics.format_mlir_error is not supported by tilefold yet"):
        from tilefold.ttl.diagnostics import format_mlir_error  # noqa: F401 - TT-Lang's MLIR formatter


def test_ir_module_gives_mlir_error_and_names_what_it_lacks():
    from tilefold.ttl.ir import MLIRError

    assert MLIRError is KernelError
    with pytest.raises(KernelError, match="ttl.ir.Context is not supported by tilefold yet"):
        from tilefold.ttl.ir import Context  # noqa: F401 - TT-Lang's MLIR bindings


def test_range_where_the_block_has_no_dimension_hints_at_a_scalar_index():
    from tilefold.ttl.diagnostics import TTLangCompileError

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a)

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:2, 0, 0], blk).wait()  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    x = ttnn.from_numpy(np.ones((2, 32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    expect_error(lambda: op(x, zeros((32, 32))), test_range_where_the_block_has_no_dimension_hints_at_a_scalar_index,
                 TTLangCompileError, "must have the same shape", "with an integer (a scalar index, not a range)")


def test_method_chained_on_a_call_that_returns_nothing():
    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a).push()  # error

        copy_kernels(x_dfb, y_dfb, x, y)

    expect_error(lambda: op(tile_tensor((32, 32)), zeros((32, 32))), test_method_chained_on_a_call_that_returns_nothing,
                 KernelError, "b.store(a) returns no value", "b.push as two statements")


def _scaled(**options):
    @ttl.operation(grid=(1, 1), **options)
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a * 2.0)

        copy_kernels(x_dfb, y_dfb, x, y)

    return op


def test_memory_space_and_tiled_arguments():
    x, y = tile_tensor((32, 32), seed=2), zeros((32, 32))
    _scaled(memory_space="L1", tiled=True)(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), ttnn.to_numpy(x).astype(np.float32) * 2,
                               rtol=1e-2, atol=1e-2)

    with pytest.raises(ValueError, match=r"memory_space='INVALID'\): memory_space is 'L1' or 'DRAM'"):
        _scaled(memory_space="INVALID")
    with pytest.raises(ValueError, match=r"tiled=False\): only tiled=True is supported; drop the argument"):
        _scaled(tiled=False)


def test_block_count_is_checked_before_the_tensor():
    def run():
        ttl.make_dataflow_buffer_like(None, shape=(1, 1), block_count=0)  # error

    expect_error(run, test_block_count_is_checked_before_the_tensor, ValueError,
                 "block_count=0): block_count must be an integer from 1 to 32")


def _two_consumers(on_some_nodes: bool):
    """``shared`` is consumed by compute on every node and by write — on every node, or (the race is
    on those nodes only) past the first column."""
    @ttl.operation(grid=(2, 1))
    def op(x, y):
        shared = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        scratch = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with shared.wait() as a, scratch.reserve() as b:
                b.store(a)

        @ttl.datamovement()
        def read():
            with shared.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            col, _ = ttl.node(dims=2)
            if not on_some_nodes or col != 0:
                with shared.wait() as blk:  # error
                    ttl.copy(blk, y[0, 0]).wait()

    return op


@pytest.mark.parametrize("on_some_nodes", [False, True])
def test_two_consumer_kernels_of_one_buffer(on_some_nodes):
    expect_error(lambda: _two_consumers(on_some_nodes)(tile_tensor((32, 32)), zeros((32, 32))), _two_consumers,
                 KernelError, "shared has two consumer kernels: write pops from it, as compute does",
                 "make one buffer per consumer")


def test_compiler_option_strings():
    x, y = tile_tensor((32, 32), seed=3), zeros((32, 32))
    op = _scaled(options="--no-ttl-maximize-dst --ttl-l1-budget=1000000")
    op(x, y, options="--ttl-matmul-full-fp32 --ttl-reuse-user-dfbs --ttl-relax-dfb-spsc --ttl-force-subblock=1,2")
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), ttnn.to_numpy(x).astype(np.float32) * 2,
                               rtol=1e-2, atol=1e-2)

    def run():
        op(x, y, options="--fast-math")  # error

    expect_error(run, test_compiler_option_strings, ValueError, "'--fast-math' is not a TT-Lang compiler option",
                 "--ttl-maximize-dst")


def test_pipe_lowering_options_and_the_options_of_the_environment(monkeypatch):
    """TT-Lang's pipe lowering options (``--ttl-pipe-batch-tiles N`` with its value after a space, as
    TT-Lang's tests write it) are accepted, also from ``TTLANG_COMPILER_OPTIONS``; a bad one there is
    an error naming the variable at the operation's line."""
    x, y = tile_tensor((32, 32), seed=5), zeros((32, 32))
    monkeypatch.setenv("TTLANG_COMPILER_OPTIONS", "--no-ttl-pipe-computed-addresses")
    op = _scaled(options="--ttl-pipe-batch-tiles 4 --no-ttl-pipe-capacity-sync --ttl-sram-allocation-strategy=greedy")
    op(x, y, options="--ttl-pipe-batch-tiles=2 --ttl-pipe-capacity-sync")
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), ttnn.to_numpy(x).astype(np.float32) * 2,
                               rtol=1e-2, atol=1e-2)
    monkeypatch.setenv("TTLANG_COMPILER_OPTIONS", "--ttl-pipe-batch")

    def run():
        op(x, y, options="--ttl-pipe-batch-tiles 4")  # error

    expect_error(run, test_pipe_lowering_options_and_the_options_of_the_environment, ValueError,
                 "TTLANG_COMPILER_OPTIONS:", "'--ttl-pipe-batch' is not a TT-Lang compiler option")


def test_compiler_options_that_choose_storage_and_accumulation():
    """TT-Lang's options that pick how its compiler stores blocks and accumulates (tilefold makes its
    own choices) are accepted; a memory model TT-Lang does not have is an error naming the line."""
    x, y = tile_tensor((32, 32), seed=4), zeros((32, 32))
    op = _scaled(options="--ttl-specialize-cores --ttl-accumulation-strategy=l1-pack")
    op(x, y, options="--no-ttl-specialize-cores --ttl-memory-model=compiler-l1 --ttl-accumulation-strategy=dst")
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), ttnn.to_numpy(x).astype(np.float32) * 2,
                               rtol=1e-2, atol=1e-2)

    def run():
        op(x, y, options="--ttl-memory-model=cached")  # error

    expect_error(run, test_compiler_options_that_choose_storage_and_accumulation, ValueError,
                 "--ttl-memory-model takes a value, one of metal-cb, compiler-l1, compiler-sram")


@pytest.mark.parametrize("flag", ["fp32_dest_acc_en", "dst_full_sync_en", "math_approx_mode"])
def test_a_compute_flag_that_is_not_a_bool(flag):
    """math_approx_mode='no' is a true string: each compute flag takes True or False only."""
    from tilefold.errors import KernelValueError

    def run():
        @ttl.operation(grid=(1, 1), **{flag: "no"})  # error
        def op(x, y):
            pass

    expect_error(run, run, KernelValueError, f"@ttl.operation({flag}='no'): give True or False")
