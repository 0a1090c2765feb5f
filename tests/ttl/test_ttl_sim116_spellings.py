"""Spellings of TT-Lang 1.1's simulator that its programs use: ``make_dataflow_buffer_like(
likeness_tensor=...)``, ``ttl.math.hardtanh(x, min_val=, max_val=)``, ``len(block)`` (its tiles), a
transfer handle's ``is_completed`` and ``can_wait()``; a TT-NN enum member tilefold lacks and a
tensor printed in a kernel are one line at the user's file:line. Simulated against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import expect_error, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def clipped_copy(a, y):
    a_dfb = ttl.make_dataflow_buffer_like(likeness_tensor=a, shape=(2, 2), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(likeness_tensor=y, shape=(2, 2), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, y_dfb.reserve() as o:
            assert len(x) == 4 and len(x + x) == 4
            o.store(ttl.math.hardtanh(x, min_val=-0.5, max_val=0.25))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as blk:
            xf = ttl.copy(a[0:2, 0:2], blk)
            assert xf.can_wait() and not xf.is_completed
            xf.wait()
            assert xf.is_completed

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0:2, 0:2]).wait()


def test_likeness_tensor_min_val_max_val_len_and_the_handle_queries_of_ttl_lang_1_1():
    a, y = tile_tensor((64, 64), seed=3, dtype="float32"), zeros((64, 64), dtype="float32")
    clipped_copy(a, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), np.clip(ttnn.to_numpy(a), -0.5, 0.25))


def test_a_buffer_given_its_tensor_twice_is_one_line():
    def twice():
        @ttl.operation(grid=(1, 1))
        def op(a, y):
            ttl.make_dataflow_buffer_like(a, (1, 1), likeness_tensor=a)  # error

        op(zeros((32, 32)), zeros((32, 32)))

    expect_error(twice, twice, KernelError, "got the tensor twice (as tensor and as likeness_tensor): give one")


@ttl.operation(grid=(1, 1))
def printed_tensor(a, y):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, y_dfb.reserve() as o:
            o.store(x)

    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        print("a:", a, num_pages=1)  # warned
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, 0]).wait()


def test_a_tensor_printed_in_a_kernel_warns_that_its_pages_are_not_printed():
    a, y = tile_tensor((32, 32), seed=1), zeros((32, 32))
    with pytest.warns(UserWarning, match=r"print\(a\) prints the tensor's description, not its pages") as caught:
        printed_tensor(a, y)
    assert caught[0].filename == __file__
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(a))


def test_a_ttnn_enum_member_tilefold_lacks_names_the_members_it_has():
    with pytest.raises(AttributeError) as info:
        ttnn.TensorMemoryLayout.ND_SHARDED  # error
    assert str(info.value).startswith(f"{__file__}:")
    assert "ttnn.TensorMemoryLayout.ND_SHARDED is not supported by tilefold yet; it has INTERLEAVED" in str(info.value)
    assert not hasattr(ttnn.BufferType, "SYSTEM_MEMORY") and ttnn.BufferType["L1"] is ttnn.BufferType.L1
