"""``ttl.block.broadcast`` inside a tile: ``unary_bcast_init<BroadcastType::ROW|COL|SCALAR>(cb, out)``
and ``unary_bcast<...>(cb, tile, slot)``, as TT-Lang lowers it (no internal zero tile). As TT-Lang's
compiler does, a float32 broadcast reads through the source register SRCB, so its values come
back cut to TF32, while a float32 buffer only copied into DST is unpacked straight to a 32-bit
DST (``UnpackToDestFp32``); 32-bit integers are unpacked to DST for the broadcast too, whole.
bfloat16 results round once, on the add.
Against numpy on the simulated device; the compute kernel passes check-kernel, the host check-host."""

from __future__ import annotations

import numpy as np
import pytest
from checkhost import check_hosts, require_hosts_accepted
from checkkernel import check_kernels, compiled_kernel_jobs, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.frontend.ttl import session
from tilefold.sim.tile_math import round_bf16, to_tf32
from ttl_helpers import compiled

# broadcast kind -> dims of a (2, 2)-tile block, the broadcast block's shape in tiles
_CASES = {"rows": ([0], (1, 2)), "cols": ([1], (2, 1)), "scalar": ([0, 1], (1, 1))}


def _broadcast_add(kind):
    dims, (r, s) = _CASES[kind]

    @ttl.operation(grid=(1, 1))
    def op(a, c, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(r, s), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=2)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, c_dfb.wait() as y, o_dfb.reserve() as o:
                o.store(x + ttl.block.broadcast(y, dims=dims, shape=x.shape))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as blk:
                ttl.copy(a[0:2, 0:2], blk).wait()
            with c_dfb.reserve() as blk:
                ttl.copy(c[0:r, 0:s], blk).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0:2, 0:2]).wait()

    return op


def _broadcast_of(c: np.ndarray, kind: str) -> np.ndarray:
    """The (64, 64) values the broadcast gives: each output tile from the broadcast block's tile in
    its row (cols) or column (rows) of tiles, its first row, first column or first value repeated."""
    out = np.empty((64, 64), c.dtype)
    for i in range(2):
        for j in range(2):
            ti, tj = (0, j) if kind == "rows" else (i, 0) if kind == "cols" else (0, 0)
            tile = c[32 * ti:32 * ti + 32, 32 * tj:32 * tj + 32]
            first = {"rows": tile[:1, :], "cols": tile[:, :1], "scalar": tile[:1, :1]}[kind]
            out[32 * i:32 * i + 32, 32 * j:32 * j + 32] = np.broadcast_to(first, (32, 32))
    return out


def _inputs(dtype, seed):
    rng = np.random.default_rng(seed)
    a, c = (rng.uniform(-2, 2, (64, 64)).astype(np.float32) for _ in range(2))
    if dtype is ttnn.bfloat16:
        a, c = round_bf16(a), round_bf16(c)
    return a, c


def _tensors(a, c, dtype):
    return (ttnn.from_numpy(a, dtype=dtype, layout=ttnn.TILE_LAYOUT),
            ttnn.from_numpy(c, dtype=dtype, layout=ttnn.TILE_LAYOUT),
            ttnn.zeros((64, 64), dtype=dtype, layout=ttnn.TILE_LAYOUT))


@pytest.mark.parametrize("kind", sorted(_CASES))
def test_a_float32_broadcast_is_cut_to_tf32_and_the_copied_operand_is_exact(kind):
    a, c = _inputs(ttnn.float32, 1)
    x, y, out = _tensors(a, c, ttnn.float32)
    _broadcast_add(kind)(x, y, out)
    expected = a + to_tf32(_broadcast_of(c, kind))            # one float32 add on the SFPU
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


@pytest.mark.parametrize("kind", sorted(_CASES))
def test_a_bfloat16_broadcast_rounds_once(kind):
    a, c = _inputs(ttnn.bfloat16, 2)
    x, y, out = _tensors(a, c, ttnn.bfloat16)
    _broadcast_add(kind)(x, y, out)
    expected = round_bf16(a + _broadcast_of(c, kind))
    np.testing.assert_array_equal(ttnn.to_numpy(out).astype(np.float32), expected)


@pytest.mark.parametrize("kind", sorted(_CASES))
def test_the_broadcast_is_unary_bcast_and_the_kernels_compile(kind, tmp_path):
    template = {"rows": "ROW", "cols": "COL", "scalar": "SCALAR"}[kind]
    built = compiled(_broadcast_add(kind), *_tensors(*_inputs(ttnn.float32, 3), ttnn.float32))
    kernel = next(k for k in built.program.kernels if k.is_compute)
    assert kernel.config.fp32_dest_acc_en
    # the copied input is unpacked to DST whole; the broadcast one reads through SRCB
    assert [m for _, m in kernel.config.unpack_to_dest_mode] == ["UnpackToDestFp32"]
    jobs = compiled_kernel_jobs(built, tmp_path)
    text = next(path.read_text() for path, role, _ in jobs if role == "compute")
    assert f"unary_bcast_init<BroadcastType::{template}>(" in text
    assert f"unary_bcast<BroadcastType::{template}>(" in text
    assert "add_tiles_bcast" not in text and "zero" not in text
    for result in check_kernels(jobs):
        require_accepted(result)


def test_the_host_program_unpacks_the_copied_buffer_to_dst(tmp_path):
    a, c = _inputs(ttnn.float32, 4)
    with session.configured(project_dir=tmp_path):
        _broadcast_add("rows")(*_tensors(a, c, ttnn.float32))
    mains = sorted(tmp_path.glob("*/main.cpp"))
    assert "UnpackToDestMode::UnpackToDestFp32" in mains[0].read_text()
    require_hosts_accepted(check_hosts(mains))


@pytest.mark.parametrize("dtype", [ttnn.int32, ttnn.uint32], ids=["int32", "uint32"])
@pytest.mark.parametrize("kind", sorted(_CASES))
def test_a_32_bit_integer_broadcast_keeps_its_words(kind, dtype, tmp_path):
    """unary_bcast unpacks 32-bit words straight to DST: the integers broadcast exactly, and the sum
    wraps as the format's words do (add_int_tile)."""
    rng = np.random.default_rng(5)
    np_type = np.int32 if dtype is ttnn.int32 else np.uint32
    info = np.iinfo(np_type)
    a, c = (rng.integers(info.min, info.max, (64, 64), dtype=np.int64).astype(np_type) for _ in range(2))
    x, y = (ttnn.from_numpy(v, dtype=dtype, layout=ttnn.TILE_LAYOUT) for v in (a, c))
    out = ttnn.zeros((64, 64), dtype=dtype, layout=ttnn.TILE_LAYOUT)
    _broadcast_add(kind)(x, y, out)
    expected = (a.astype(np.int64) + _broadcast_of(c, kind).astype(np.int64)).astype(np_type)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)
    jobs = compiled_kernel_jobs(compiled(_broadcast_add(kind), x, y, out), tmp_path)
    assert "unary_bcast<BroadcastType::" in next(path.read_text() for path, role, _ in jobs if role == "compute")
    for result in check_kernels(jobs):
        require_accepted(result)
