"""``a @ b`` on 3-D blocks: one matrix product per batch index, as TT-Lang's batched matmul spec
example writes it (a 2-D ``b`` unsqueezed and broadcast over the batch, a bias, an accumulator
over K blocks); run on the simulated device against numpy, C++ checked against the real headers."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, tile_tensor, zeros

TILE = 32


@ttl.operation(grid=(1, 1))
def batched(a, b, y):
    """y[l] = a[l] @ b[l] for blocks of (L, M, K) and (L, K, N) tiles; the output block of
    L·M·N tiles is larger than DST, so it is computed in sub-blocks."""
    L, M, K = (s // TILE if i else s for i, s in enumerate(a.shape))
    N = b.shape[-1] // TILE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(L, M, K), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(L, K, N), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(L, M, N), block_count=1)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[0:L, 0:M, 0:K], ab).wait()
            ttl.copy(b[0:L, 0:K, 0:N], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
            yb.store(ab @ bb)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0:L, 0:M, 0:N]).wait()


def _bf16(x):
    return x.astype(np.float64)


def test_a_batched_matmul_larger_than_dst_matches_numpy():
    a = tile_tensor((4, 64, 64), seed=1)
    b = tile_tensor((4, 64, 64), seed=2)
    y = zeros((4, 64, 64))
    batched(a, b, y)
    expected = np.matmul(_bf16(ttnn.to_numpy(a)), _bf16(ttnn.to_numpy(b)))
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=3e-2, atol=0.3)


L, M, N, K = 2, 64, 64, 128
LB, MB, NB, KB = 2, 1, 2, 2


@ttl.operation(grid=(1, 1))
def batched_matmul_bias(a, b, c, y):
    """y = a @ b + c with a of (L, M, K), b of (K, N) and c of (M, N), in blocks of
    (LB, MB, KB) @ (KB, NB); partial products accumulate over K blocks in a loop-carried block."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(LB, MB, KB))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(KB, NB))
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(MB, NB))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(LB, MB, NB))
    lb, mb, nb, kb = L // LB, M // TILE // MB, N // TILE // NB, K // TILE // KB

    @ttl.datamovement()
    def read():
        for l_block in range(lb):
            ls = slice(l_block * LB, (l_block + 1) * LB)
            for m_block in range(mb):
                ms = slice(m_block * MB, (m_block + 1) * MB)
                for n_block in range(nb):
                    ns = slice(n_block * NB, (n_block + 1) * NB)
                    with c_dfb.reserve() as c_blk:
                        ttl.copy(c[ms, ns], c_blk).wait()
                    for k_block in range(kb):
                        ks = slice(k_block * KB, (k_block + 1) * KB)
                        with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                            a_xf = ttl.copy(a[ls, ms, ks], a_blk)
                            b_xf = ttl.copy(b[ks, ns], b_blk)
                            a_xf.wait()
                            b_xf.wait()

    @ttl.compute()
    def compute():
        for _ in range(lb):
            for _ in range(mb):
                for _ in range(nb):
                    with y_dfb.reserve() as y_blk:
                        acc = ttl.block.fill(0, shape=(LB, MB, NB))
                        for _ in range(kb):
                            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                                b_all = ttl.block.broadcast(ttl.block.unsqueeze(b_blk, dims=[0]), dims=[0],
                                                            shape=(LB, KB, NB))
                                acc += a_blk @ b_all
                        with c_dfb.wait() as c_blk:
                            c_all = ttl.block.broadcast(ttl.block.unsqueeze(c_blk, dims=[0]), dims=[0],
                                                        shape=(LB, MB, NB))
                            acc = acc + c_all
                        y_blk.store(acc)

    @ttl.datamovement()
    def write():
        for l_block in range(lb):
            for m_block in range(mb):
                for n_block in range(nb):
                    with y_dfb.wait() as y_blk:
                        ttl.copy(y_blk, y[l_block * LB:(l_block + 1) * LB, m_block * MB:(m_block + 1) * MB,
                                          n_block * NB:(n_block + 1) * NB]).wait()


def test_batched_matmul_with_bias_as_the_spec_writes_it():
    a = tile_tensor((L, M, K), seed=3)
    b = tile_tensor((K, N), seed=4)
    c = tile_tensor((M, N), seed=5)
    y = zeros((L, M, N))
    batched_matmul_bias(a, b, c, y)
    expected = np.matmul(_bf16(ttnn.to_numpy(a)), _bf16(ttnn.to_numpy(b))) + _bf16(ttnn.to_numpy(c))
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=3e-2, atol=0.3)


def test_batched_matmul_compiles_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    # 4 batches of 1x2 output tiles: 2 batches per sub-block of the 32-bit DST (4 tiles) a matmul kernel gets
    program = compiled(batched, tile_tensor((4, 32, 64)), tile_tensor((4, 64, 64)), zeros((4, 32, 64))).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    text = emit_kernel(kernel.function)
    assert text.count("matmul_block(") >= 2          # one call per batch index of a sub-block
    path = tmp_path / "compute.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_batch_dims_that_differ_name_the_users_line():
    @ttl.operation(grid=(1, 1))
    def op(a, b, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1, 1), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(3, 1, 1), block_count=1)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
                yb.store(ab @ bb)  # error

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
                ttl.copy(a[0:2, 0:1, 0:1], ab).wait()
                ttl.copy(b[0:3, 0:1, 0:1], bb).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:2, 0:1, 0:1]).wait()

    expect_error(lambda: op(tile_tensor((2, 32, 32)), tile_tensor((3, 32, 32)), zeros((2, 32, 32))),
                 test_batch_dims_that_differ_name_the_users_line, KernelError, "same batch dims")


@ttl.operation(grid=(1, 1))
def batch_times_matrix(a, b, y):
    """(2, 2, 3) @ (3, 2) tiles: the 2-D right operand broadcast over the batch, as numpy's matmul
    broadcasts it."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2, 3), block_count=1)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(3, 2), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2, 2), block_count=1)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as ab, b_dfb.reserve() as bb:
            ttl.copy(a[0:2, 0:2, 0:3], ab).wait()
            ttl.copy(b[0:3, 0:2], bb).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as ab, b_dfb.wait() as bb, y_dfb.reserve() as yb:
            yb.store(ab @ bb)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as yb:
            ttl.copy(yb, y[0:2, 0:2, 0:2]).wait()


def test_a_matrix_right_operand_is_broadcast_over_the_batch():
    a, b, y = tile_tensor((2, 64, 96), seed=3), tile_tensor((96, 64), seed=4), zeros((2, 64, 64))
    batch_times_matrix(a, b, y)
    expected = np.matmul(_bf16(ttnn.to_numpy(a)), _bf16(ttnn.to_numpy(b)))
    np.testing.assert_allclose(ttnn.to_numpy(y), expected, rtol=3e-2, atol=0.3)
