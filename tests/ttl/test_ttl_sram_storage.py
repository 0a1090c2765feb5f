"""``ttl.SRAMStorage``: sharded L1 tensors kept across operation calls. One operation updates the
state each call and another reads it, on the simulator against numpy; preparing an operation
compiles it once for the later calls; a declared tensor used before ``allocate()`` or after
``close()`` is one error at the call's line."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from test_ttl_tensor_backed import increment_by
from ttl_helpers import expect_error


@ttl.operation(grid=(2, 1))
def accumulate(x, state):
    """Each node adds its row of tiles of ``x`` onto its own shard of ``state``."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(state, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(state, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        r = ttl.node(dims=2)[0]
        with x_dfb.reserve() as xb, s_dfb.reserve() as sb:
            ttl.copy(x[r, 0], xb).wait()
            ttl.copy(state[r, 0], sb).wait()

    @ttl.compute()
    def compute():
        with x_dfb.wait() as xb, s_dfb.wait() as sb, o_dfb.reserve() as ob:
            ob.store(xb + sb)

    @ttl.datamovement()
    def write():
        r = ttl.node(dims=2)[0]
        with o_dfb.wait() as ob:
            ttl.copy(ob, state[r, 0]).wait()


@ttl.operation(grid=(1, 1))
def scaled(state, out):
    """``out = 2 * state``."""
    s_dfb = ttl.make_dataflow_buffer_like(state, shape=(2, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with s_dfb.reserve() as sb:
            ttl.copy(state[0:2, 0:1], sb).wait()

    @ttl.compute()
    def compute():
        with s_dfb.wait() as sb, o_dfb.reserve() as ob:
            ob.store(sb + sb)

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as ob:
            ttl.copy(ob, out[0:2, 0:1]).wait()


def _declare(storage):
    return storage.tensor(shape=(64, 32), shard_shape=(32, 32), cores=((0, 0), (1, 0)), dtype=ttnn.float32,
                          layout=ttnn.TILE_LAYOUT, sharding=ttnn.TensorMemoryLayout.HEIGHT_SHARDED,
                          addressing="uniform", initialize="zeros")


@pytest.mark.parametrize("mesh", [False, True])
def test_state_persists_across_operation_calls(mesh):
    device = ttnn.open_mesh_device(ttnn.MeshShape(1, 1)) if mesh else ttnn.open_device(device_id=0)
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((64, 32)).astype(np.float32) for _ in range(3)]
    storage = ttl.SRAMStorage(device=device)
    state = _declare(storage)
    assert state.memory_config().buffer_type is ttnn.BufferType.L1
    inputs = [ttnn.from_numpy(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device) for x in xs]
    out = ttnn.from_numpy(np.zeros((64, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)
    assert storage.prepare_operation(accumulate, inputs[0], state) is accumulate
    assert storage.prepare_operation(scaled, state, out) is scaled
    np.testing.assert_array_equal(ttnn.to_numpy(state), 0)          # preparing ran nothing
    entries = device.num_program_cache_entries()
    with storage:
        storage.allocate()
        for x in inputs:
            accumulate(x, state)
        storage.submit(scaled, state, out)
        assert device.num_program_cache_entries() == entries      # the prepared programs ran
        np.testing.assert_allclose(ttnn.to_numpy(state), sum(xs), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ttnn.to_numpy(out), 2 * sum(xs), rtol=1e-6, atol=1e-6)
    (ttnn.close_mesh_device if mesh else ttnn.close_device)(device)


def test_a_storage_tensor_before_allocate_and_after_close():
    device = ttnn.open_device(device_id=0)
    storage = ttl.SRAMStorage(device=device)
    state = _declare(storage)
    out = ttnn.from_numpy(np.zeros((64, 32), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=device)

    def before():
        scaled(state, out)  # error

    expect_error(before, before, KernelError, "not allocated yet", "storage.allocate()")
    storage.allocate()
    scaled(state, out)
    storage.close()

    def after():
        scaled(state, out)  # error

    expect_error(after, after, KernelError, "was closed", "before storage.close()")
    ttnn.close_device(device)


@pytest.mark.parametrize("change, fragment", [
    (dict(shard_shape=(32, 16)), "whole 32x32 tiles"),
    (dict(cores=((0, 0),)), "makes 2 shards, and 1 cores are given"),
    (dict(cores=((0, 0), (0, 0))), "distinct (x, y) core pairs"),
    (dict(dtype=ttnn.bfloat8_b), "ttnn.bfloat16 or ttnn.float32"),
    (dict(addressing="spread"), "addressing='spread'"),
    (dict(initialize="ones"), "initialize='ones'"),
    (dict(sharding=ttnn.TensorMemoryLayout.INTERLEAVED), "HEIGHT_SHARDED"),
])
def test_declaration_mistakes(change, fragment):
    storage = ttl.SRAMStorage(device=ttnn.open_device(device_id=0))
    arguments = dict(shape=(64, 32), shard_shape=(32, 32), cores=((0, 0), (1, 0)), dtype=ttnn.float32,
                     layout=ttnn.TILE_LAYOUT) | change

    def declare():
        storage.tensor(**arguments)  # error

    expect_error(declare, declare, KernelError, fragment)


def test_a_storage_needs_a_device():
    def make():
        ttl.SRAMStorage(device=object())  # error

    expect_error(make, make, KernelError, "give a device (ttnn.open_device)")


def test_order_of_the_life_of_a_storage():
    storage = ttl.SRAMStorage(device=ttnn.open_device(device_id=0))

    def empty():
        storage.allocate()  # error

    expect_error(empty, empty, KernelError, "declares no tensor")
    _declare(storage)
    storage.allocate()

    def late():
        _declare(storage)  # error

    with pytest.raises(KernelError, match="cannot declare a tensor: the storage is already allocated"):
        late()


def test_block_sharded_state_on_cores_filling_a_rectangle_updated_in_place():
    """TT-Lang's persistent state: four cores listed one by one fill a 2x2 rectangle, the block
    sharding's grid; ``ttnn.full(optional_tensor=)`` sets it, two operations add to it in place."""
    device = ttnn.open_device(device_id=0)
    with ttl.SRAMStorage(device=device) as storage:
        state = storage.tensor(shape=(64, 64), shard_shape=(32, 32), cores=((0, 0), (1, 0), (0, 1), (1, 1)),
                               dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, addressing="uniform",
                               sharding=ttnn.TensorMemoryLayout.BLOCK_SHARDED)
        storage.allocate()
        assert storage.submit(ttnn.full, (64, 64), 1.0, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                              device=device, optional_tensor=state) is state
        for _ in range(2):
            increment_by(1.0)(state)
            increment_by(2.0)(state)
        np.testing.assert_array_equal(storage.submit(ttnn.to_numpy, state), np.full((64, 64), 7.0))
    ttnn.close_device(device)
