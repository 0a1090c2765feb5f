"""TT-Lang's pre-1.0 spellings: each is accepted with the meaning of its 1.x replacement
(``ttl.TensorAccessor`` of tiles is the tensor, ``buffer_factor=`` is ``block_count=`` wherever a
buffer is made) or is one error at the user's line naming what 1.x writes."""

from __future__ import annotations

import math

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros

ROWS_PER_BLOCK = 2


@ttl.kernel(grid=(2, 1))
def triple_columns(x, y):
    """Pre-1.0 style throughout: tile accessors, circular buffers with buffer_factor, ttl.core,
    slice objects, push / pop on the buffers and ttl.Program; each node takes half the columns."""
    rows = x.shape[0] // ttl.TILE_SHAPE[0]
    cols = x.shape[1] // ttl.TILE_SHAPE[1]
    per_node = math.ceil(cols / ttl.grid_size(dims=1))
    x_tiles = ttl.TensorAccessor(x, index_type=ttl.IndexType.TILE)
    y_tiles = ttl.TensorAccessor(y, index_type=ttl.IndexType.TILE)
    x_cb = ttl.make_circular_buffer_like(x, shape=(ROWS_PER_BLOCK, 1), buffer_factor=2)
    y_cb = ttl.make_circular_buffer_like(y, shape=(ROWS_PER_BLOCK, 1), buffer_factor=2)

    @ttl.compute()
    def compute_func():
        first = ttl.core(dims=1) * per_node
        for _ in range(first, min(first + per_node, cols)):
            for _ in range(rows // ROWS_PER_BLOCK):
                blk = x_cb.wait()
                out = y_cb.reserve()
                out.store(blk * 3.0)
                y_cb.push()
                x_cb.pop()

    @ttl.datamovement()
    def dm0():
        first = ttl.core(dims=1) * per_node
        for c in range(first, min(first + per_node, cols)):
            for r in range(rows // ROWS_PER_BLOCK):
                rs = slice(r * ROWS_PER_BLOCK, (r + 1) * ROWS_PER_BLOCK)
                blk = x_cb.reserve()
                ttl.copy(x_tiles[rs, slice(c, c + 1)], blk).wait()
                x_cb.push()

    @ttl.datamovement()
    def dm1():
        first = ttl.core(dims=1) * per_node
        for c in range(first, min(first + per_node, cols)):
            for r in range(rows // ROWS_PER_BLOCK):
                rs = slice(r * ROWS_PER_BLOCK, (r + 1) * ROWS_PER_BLOCK)
                blk = y_cb.wait()
                ttl.copy(blk, y_tiles[rs, slice(c, c + 1)]).wait()
                y_cb.pop()

    return ttl.Program(compute_func, dm0, dm1)(x, y)


def test_a_pre_1_0_program_with_tile_accessors_runs_as_its_1_x_spelling():
    x = tile_tensor((128, 96), seed=5)
    y = zeros((128, 96))
    triple_columns(x, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), v * 3.0, rtol=1e-2, atol=1e-2)


@ttl.operation(grid=(1, 1))
def through_a_buffer_of_no_tensor(x, y):
    """``ttl.make_dfb(..., buffer_factor=1)``: the pre-1.0 keyword is the block count here too."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    staged = ttl.make_dfb("bf16", shape=(1, 1), buffer_factor=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, 0], blk).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as blk, staged.reserve() as s:
            s.store(blk + blk)
        with staged.wait() as s, y_dfb.reserve() as out:
            out.store(s + 1.0)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


def test_make_dfb_takes_buffer_factor_as_its_block_count():
    x = tile_tensor((32, 32), seed=6)
    y = zeros((32, 32))
    through_a_buffer_of_no_tensor(x, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), v * 2 + 1, rtol=1e-2, atol=1e-2)


def _operation_with(body):
    """An operation whose body is ``body(x)``, called on one tile."""
    @ttl.operation(grid=(1, 1))
    def op(x):
        body(x)

    op(tile_tensor((32, 32)))


def test_block_count_and_buffer_factor_together_is_one_error():
    def run():
        _operation_with(lambda x: ttl.make_dfb("bf16", (1, 1), 2, buffer_factor=2))  # error

    expect_error(run, test_block_count_and_buffer_factor_together_is_one_error, KernelError,
                 "ttl.make_dfb: give block_count or buffer_factor (its pre-1.0 name), not both")


def test_a_tensor_accessor_of_other_than_tiles_names_the_1_x_spelling():
    def run():
        _operation_with(lambda x: ttl.TensorAccessor(x, index_type="ELEMENT"))  # error

    expect_error(run, test_a_tensor_accessor_of_other_than_tiles_names_the_1_x_spelling, KernelError,
                 "only ttl.IndexType.TILE exists", "index the tensor itself")


def test_is_tiled_names_the_1_x_layout_check():
    def run():
        _operation_with(lambda x: ttl.is_tiled(x, ttl.TILE_SHAPE))  # error

    error = expect_error(run, test_is_tiled_names_the_1_x_layout_check, KernelError,
                         "ttl.is_tiled(t, shape) is pre-1.0 TT-Lang", "t.layout == ttnn.TILE_LAYOUT")
    assert "\n" not in str(error)


def test_compute_config_names_the_1_x_settings():
    def run():
        ttl.kernel(grid=(1, 1), compute_config=object())  # error

    expect_error(run, test_compute_config_names_the_1_x_settings, TypeError,
                 "compute_config=...) is pre-1.0 TT-Lang", "fp32_dest_acc_en=", "math_fidelity=")


def test_an_extra_kernel_keyword_names_the_enclosing_scope():
    def run():
        ttl.kernel(grid="auto", granularity=2)  # error

    expect_error(run, test_an_extra_kernel_keyword_names_the_enclosing_scope, TypeError,
                 "unexpected keyword argument 'granularity'", "set granularity = 2 before the operation")


def test_the_pre_1_0_api_module_is_one_error_under_tilefolds_own_name():
    def run():
        from tilefold.ttl.ttl_api import pykernel_gen  # noqa: F401  # error

    expect_error(run, test_the_pre_1_0_api_module_is_one_error_under_tilefolds_own_name, KernelError,
                 "ttl.ttl_api (pykernel_gen, dma, TensorAccessor) is TT-Lang's API before 1.0", "@ttl.operation")


def test_a_private_function_of_ttl_api_is_not_called_pre_1_0():
    def run():
        from tilefold.ttl.ttl_api import _detect_device_arch  # noqa: F401  # error

    expect_error(run, test_a_private_function_of_ttl_api_is_not_called_pre_1_0, KernelError,
                 "ttl.ttl_api._detect_device_arch is a private function of TT-Lang's own implementation")


@ttl.kernel(grid=(1, 1))
def math_spellings_before_ttl_block(x, m, y):
    """Before ttl.block, mask, where, fill, transpose and broadcast were ttl.math functions."""
    x_cb = ttl.make_circular_buffer_like(x, shape=(1, 1), buffer_factor=2)
    m_cb = ttl.make_circular_buffer_like(m, shape=(1, 1), buffer_factor=2)
    y_cb = ttl.make_circular_buffer_like(y, shape=(1, 1), buffer_factor=2)

    @ttl.compute()
    def compute():
        with x_cb.wait() as xb, m_cb.wait() as mb, y_cb.reserve() as yb:
            hidden = ttl.math.mask(ttl.math.transpose(xb), mb)
            yb.store(ttl.math.where(mb, ttl.math.fill(xb, 2.0), hidden) + ttl.math.broadcast(xb, dims=[1]))

    @ttl.datamovement()
    def read():
        with x_cb.reserve() as a, m_cb.reserve() as b:
            ttl.copy(x[0, 0], a).wait()
            ttl.copy(m[0, 0], b).wait()

    @ttl.datamovement()
    def write():
        with y_cb.wait() as a:
            ttl.copy(a, y[0, 0]).wait()


def test_block_functions_under_their_pre_1_0_ttl_math_names():
    x = tile_tensor((32, 32), seed=7)
    bits = (np.random.default_rng(8).random((32, 32)) < 0.3).astype(np.float32)
    m = ttnn.from_numpy(bits, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = zeros((32, 32))
    math_spellings_before_ttl_block(x, m, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    expected = np.where(bits == 1, 2.0, v.T) + v[:, :1]
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), expected, rtol=1e-2, atol=2e-2)


@ttl.kernel(grid=(1, 1))
def one_pass_per_block(x, y):
    """A buffer's block count read as ``block_count`` (1.x) and ``buffer_factor`` (pre-1.0), in the
    body and in kernels: three tiles, one per block of a three-block buffer."""
    x_cb = ttl.make_circular_buffer_like(x, shape=(1, 1), buffer_factor=3)
    y_cb = ttl.make_circular_buffer_like(y, shape=(1, 1), buffer_factor=2)
    blocks = x_cb.buffer_factor

    @ttl.compute()
    def compute():
        for _ in range(x_cb.buffer_factor):
            with x_cb.wait() as a, y_cb.reserve() as out:
                out.store(a + 1.0)

    @ttl.datamovement()
    def read():
        for i in range(x_cb.block_count):
            with x_cb.reserve() as a:
                ttl.copy(x[i, 0], a).wait()

    @ttl.datamovement()
    def write():
        for i in range(blocks):
            with y_cb.wait() as out:
                ttl.copy(out, y[i, 0]).wait()


def test_a_buffers_block_count_under_both_names():
    x = tile_tensor((96, 32), seed=9)
    y = zeros((96, 32))
    one_pass_per_block(x, y)
    v = ttnn.to_numpy(x).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(y).astype(np.float32), v + 1.0, rtol=1e-2, atol=1e-2)


def test_a_bad_buffer_factor_is_named_as_written():
    def run():
        _operation_with(lambda x: ttl.make_circular_buffer_like(x, shape=(1, 1), buffer_factor=0))  # error

    expect_error(run, test_a_bad_buffer_factor_is_named_as_written, ValueError,
                 "make_dataflow_buffer_like(buffer_factor=0): buffer_factor must be an integer from 1 to")


def test_the_ttlang_package_before_1_0_is_one_error_at_the_scripts_import(tmp_path):
    """Scripts of TT-Lang before 1.0 imported ``ttlang.ttl_api`` / ``ttlang.d2m_api``: under
    ``tilefold sim`` that import is one error at the script's line naming the 1.x API."""
    from tilefold.cli.ttl_scripts import run_script

    script = tmp_path / "old_script.py"
    script.write_text("import math\nfrom ttlang.d2m_api import *\nfrom ttlang.utils.correctness import assert_allclose\n")
    with pytest.raises(KernelError) as info:
        run_script(script)
    message = str(info.value)
    assert message.startswith(f"{script}:2: ttlang.d2m_api (pykernel_gen, dma, TensorAccessor) is TT-Lang's API "
                              "before 1.0"), message
    assert "`import ttl` with @ttl.operation" in message
