"""An element-wise expression whose per-tile DST need fits one ``tile_regs_acquire`` compiles for any
block size: each input is copied into DST just before its first use, and the block is split into
DST-sized sub-blocks (one tile each when only one fits). Run on the simulated device against numpy;
the compute C++ passes ``check-kernel``."""

from __future__ import annotations

import numpy as np
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled, tile_tensor, zeros

COLS = 4


@ttl.operation(grid=(1, 1))
def scaled_fma(a, b, c, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, COLS), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, COLS), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, COLS), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, COLS), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y, c_dfb.wait() as z, o_dfb.reserve() as o:
            o.store(0.001 * (x * y + z))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as x:
            ttl.copy(a[0:1, 0:COLS], x).wait()
        with b_dfb.reserve() as y:
            ttl.copy(b[0:1, 0:COLS], y).wait()
        with c_dfb.reserve() as z:
            ttl.copy(c[0:1, 0:COLS], z).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:COLS]).wait()


def _tensors():
    shape = (32, 32 * COLS)
    return [tile_tensor(shape, seed=s, dtype="float32") for s in range(3)] + [zeros(shape, dtype="float32")]


def test_float32_chain_needing_all_of_dst_per_tile_runs_one_tile_per_acquire():
    a, b, c, out = _tensors()
    scaled_fma(a, b, c, out)
    x, y, z = (ttnn.to_numpy(t).astype(np.float64) for t in (a, b, c))
    np.testing.assert_allclose(ttnn.to_numpy(out), 0.001 * (x * y + z), rtol=1e-5, atol=1e-7)


def test_float32_chain_compute_kernel_passes_check_kernel(tmp_path):
    program = compiled(scaled_fma, *_tensors()).program
    compute = next(k for k in program.kernels if k.is_compute)
    source = emit_kernel(compute.function)
    assert source.count("tile_regs_acquire()") == 1 and "for (" in source
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    require_accepted(check_kernels([(path, "compute", accessor_compile_args(program, compute) or None)])[0])


BOX, INV_BOX, DT = 8.0, 0.125, 0.25


@ttl.operation(grid=(1, 1))
def wrapped_position(p, v, out):
    """A periodic position update as molecular-dynamics kernels write it: ``new_p`` is used twice
    and each ``ttl.math.fill`` is a constant tile."""
    p_dfb = ttl.make_dataflow_buffer_like(p, shape=(1, 1), block_count=2)
    v_dfb = ttl.make_dataflow_buffer_like(v, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with p_dfb.wait() as x, v_dfb.wait() as dx, o_dfb.reserve() as o:
            new_p = x + dx * ttl.math.fill(x, DT)
            o.store(new_p - ttl.math.fill(x, BOX) * ttl.math.floor(new_p * ttl.math.fill(x, INV_BOX)))

    @ttl.datamovement()
    def read():
        with p_dfb.reserve() as x:
            ttl.copy(p[0, 0], x).wait()
        with v_dfb.reserve() as dx:
            ttl.copy(v[0, 0], dx).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def test_a_value_used_twice_and_constant_fills_fit_a_float32_acquire():
    """Computed once and each fill placed just before its reader, with binary results written over
    operands read for the last time, the expression needs 3 slots and the result (4 with fp32)."""
    rng = np.random.default_rng(3)
    p_host = rng.uniform(0, BOX, (32, 32)).astype(np.float32)
    v_host = rng.uniform(-8, 8, (32, 32)).astype(np.float32)
    p, v = (ttnn.from_numpy(a, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for a in (p_host, v_host))
    out = zeros((32, 32), dtype="float32")
    wrapped_position(p, v, out)
    new_p = p_host.astype(np.float64) + v_host * DT
    expected = new_p - BOX * np.floor(new_p * INV_BOX)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-5, atol=1e-5)
    program = compiled(wrapped_position, p, v, out).program
    source = emit_kernel(next(k for k in program.kernels if k.is_compute).function)
    assert source.count("fill_tile(") == 3 and source.count("mul_binary_tile(") == 3


K_BOND, R0 = 40.0, 1.5


@ttl.operation(grid=(1, 1))
def bond_force(r_sq_in, mask_in, out):
    """A harmonic bond force, -k (r - r0) / r · mask, with r = r² · rsqrt(r²): a constant chain
    ``neg(fill)`` written first in the expression is computed just before its reader."""
    r_dfb = ttl.make_dataflow_buffer_like(r_sq_in, shape=(1, 1), block_count=2)
    m_dfb = ttl.make_dataflow_buffer_like(mask_in, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with r_dfb.wait() as r_sq, m_dfb.wait() as mask, o_dfb.reserve() as o:
            r_inv = ttl.math.rsqrt(r_sq)
            r = r_sq * r_inv
            o.store(ttl.math.neg(ttl.math.fill(r_sq, K_BOND)) * (r - ttl.math.fill(r_sq, R0)) * r_inv * mask)

    @ttl.datamovement()
    def read():
        with r_dfb.reserve() as x:
            ttl.copy(r_sq_in[0, 0], x).wait()
        with m_dfb.reserve() as x:
            ttl.copy(mask_in[0, 0], x).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def test_a_constant_chain_is_computed_where_it_is_read():
    rng = np.random.default_rng(5)
    r_sq = rng.uniform(0.5, 4.0, (32, 32)).astype(np.float32)
    mask = (rng.uniform(0, 1, (32, 32)) > 0.3).astype(np.float32)
    a, m = (ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (r_sq, mask))
    out = zeros((32, 32), dtype="float32")
    bond_force(a, m, out)
    r = np.sqrt(r_sq.astype(np.float64))
    np.testing.assert_allclose(ttnn.to_numpy(out), -K_BOND * (r - R0) / r * mask, rtol=2e-3, atol=1e-3)


@ttl.operation(grid=(1, 1), fp32_dest_acc_en=True)
def _long_product_chain(a, b, c, d, out):
    """``a*b*c - d*a*b*b*c``: held from first to last reader, its inputs alone would take the four
    slots of a float32 DST; read again from their buffers before each later reader it fits."""
    dfbs = [ttl.make_dataflow_buffer_like(t, shape=(1, 2), block_count=2) for t in (a, b, c, d)]
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with dfbs[0].wait() as av, dfbs[1].wait() as bv, dfbs[2].wait() as cv, dfbs[3].wait() as dv:
            with o_dfb.reserve() as o:
                o.store(av * bv * cv - dv * av * bv * bv * cv)

    @ttl.datamovement()
    def read():
        for dfb, t in zip(dfbs, (a, b, c, d)):
            with dfb.reserve() as blk:
                ttl.copy(t[0:1, 0:2], blk).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0:1, 0:2]).wait()


def test_inputs_read_by_several_ops_are_copied_again_when_dst_is_short(tmp_path):
    tensors = [tile_tensor((32, 64), seed=20 + s, dtype="float32") for s in range(4)] + [zeros((32, 64), "float32")]
    _long_product_chain(*tensors)
    a, b, c, d = (ttnn.to_numpy(t).astype(np.float64) for t in tensors[:4])
    np.testing.assert_allclose(ttnn.to_numpy(tensors[4]), a * b * c - d * a * b * b * c, rtol=1e-4, atol=1e-4)
    program = compiled(_long_product_chain, *tensors).program
    compute = next(k for k in program.kernels if k.is_compute)
    source = emit_kernel(compute.function)
    assert source.count("copy_tile(") > 4          # inputs copied again
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    require_accepted(check_kernels([(path, "compute", accessor_compile_args(program, compute) or None)])[0])
