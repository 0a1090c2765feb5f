"""A loop accumulator the loop only adds to (``acc += a @ b``) takes one block of L1: each step
packs its addend onto the block with the packer's L1 accumulation. A program whose buffers fit
with one accumulator block and not with two runs and matches numpy; the same loop written as
``acc = acc + a @ b`` keeps the two-block form and does not fit. A freshly reserved block that a
loop only adds to (``out_blk += x``) sums from zero. Run on the simulated device."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import L1OverflowError
from ttl_helpers import compiled, marked_line

TS = 32
BM, BN, BK, NK = 8, 8, 16, 2        # a, b: 2 blocks of 128 tiles; out: 1 block of 64; acc: 64 tiles


def _matmul(summed: bool):
    if summed:
        @ttl.operation(grid=(1, 1))
        def matmul(a, b, out):
            a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
            b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
            out_dfb = ttl.make_dataflow_buffer_like(out, shape=(BM, BN), block_count=1)

            @ttl.compute()
            def compute():
                with out_dfb.reserve() as out_blk:
                    acc = ttl.block.fill(0, shape=out_blk.shape)
                    for _ in range(NK):
                        with a_dfb.wait() as x, b_dfb.wait() as y:
                            acc += x @ y
                    out_blk.store(acc)

            @ttl.datamovement()
            def read():
                for k in range(NK):
                    with a_dfb.reserve() as x, b_dfb.reserve() as y:
                        ttl.copy(a[0:BM, k * BK:(k + 1) * BK], x).wait()
                        ttl.copy(b[k * BK:(k + 1) * BK, 0:BN], y).wait()

            @ttl.datamovement()
            def write():
                with out_dfb.wait() as o:
                    ttl.copy(o, out[0:BM, 0:BN]).wait()

        return matmul

    @ttl.operation(grid=(1, 1))
    def matmul(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BM, BK), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BK, BN), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(BM, BN), block_count=1)

        @ttl.compute()
        def compute():
            with out_dfb.reserve() as out_blk:
                acc = ttl.block.fill(0, shape=out_blk.shape)
                for _ in range(NK):  # accumulator
                    with a_dfb.wait() as x, b_dfb.wait() as y:
                        acc = acc + x @ y       # reads acc: the two-block form
                out_blk.store(acc)

        @ttl.datamovement()
        def read():
            for k in range(NK):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0:BM, k * BK:(k + 1) * BK], x).wait()
                    ttl.copy(b[k * BK:(k + 1) * BK, 0:BN], y).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0:BM, 0:BN]).wait()

    return matmul


def _tensors():
    rng = np.random.default_rng(1)
    a = rng.random((BM * TS, NK * BK * TS), dtype=np.float32)
    b = rng.random((NK * BK * TS, BN * TS), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    tensors.append(ttnn.from_numpy(np.zeros((BM * TS, BN * TS), np.float32), dtype=ttnn.bfloat16,
                                   layout=ttnn.TILE_LAYOUT))
    return tensors


def test_an_accumulator_of_one_block_fits_where_two_do_not_and_matches_numpy():
    tensors = _tensors()
    matmul = _matmul(summed=True)
    result = compiled(matmul, *tensors)
    acc = [cb for cb in result.program.circular_buffers if "accumulator" in (cb.name or "")]
    assert [cb.num_pages for cb in acc] == [BM * BN]                 # one block
    used = sum(cb.total_size for cb in result.program.circular_buffers)
    arch = result.program.arch
    assert used <= arch.l1_free < used + acc[0].total_size           # a second block would not fit
    compute = emit_kernel(next(k for k in result.program.kernels if k.is_compute).function)
    assert "pack_reconfig_l1_acc(1);" in compute and "pack_reconfig_l1_acc(0);" in compute
    matmul(*tensors)
    a, b = (ttnn.to_numpy(t).astype(np.float64) for t in tensors[:2])
    exact = a @ b
    error = np.abs(ttnn.to_numpy(tensors[2]) - exact).max() / np.abs(exact).max()
    # bfloat16 throughout: DST rounds the sum after each of the 32 K tiles, L1 after each block
    assert error < 2 ** -5, error


def test_the_two_block_form_of_the_same_loop_does_not_fit():
    matmul = _matmul(summed=False)
    with pytest.raises(L1OverflowError) as info:
        matmul(*_tensors())
    assert "acc (accumulator)" in str(info.value)
    assert str(info.value).startswith(f"{__file__}:{marked_line(matmul.function, '# accumulator')}: ")


@ttl.operation(grid="full")
def matmul_1d(a_tensor, b_tensor, out_tensor, block_h, block_w, block_inner_dim, blocks_per_node_n):
    """A row of A blocks multicast from node 0 to the working nodes, each node computing
    ``blocks_per_node_n`` output blocks with ``acc += a @ b`` over K (TT-Lang's 1-D mcast matmul)."""
    Mt, Kt, Nt = a_tensor.shape[0] // TS, a_tensor.shape[1] // TS, b_tensor.shape[1] // TS
    num_working_nodes = Nt // (blocks_per_node_n * block_w)
    num_blocks_m, num_blocks_k = Mt // block_h, Kt // block_inner_dim
    a_dfb = ttl.make_dataflow_buffer_like(a_tensor, shape=(block_h, block_inner_dim), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b_tensor, shape=(block_inner_dim, block_w), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out_tensor, shape=(block_h, block_w), block_count=1)
    net = ttl.PipeNet([ttl.Pipe((0,), (slice(1, num_working_nodes),))])

    def block_slice(offset, size):
        return slice(offset * size, (offset + 1) * size)

    @ttl.compute()
    def mm_compute():
        node = ttl.node(dims=1)
        if node >= num_working_nodes:
            return
        for _ in range(num_blocks_m):
            for _ in range(blocks_per_node_n):
                with out_dfb.reserve() as out_blk:
                    acc = ttl.block.fill(0, shape=out_blk.shape)
                    for _ in range(num_blocks_k):
                        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk:
                            acc += a_blk @ b_blk
                    out_blk.store(acc)

    @ttl.datamovement()
    def mm_reader():
        node = ttl.node(dims=1)
        if node >= num_working_nodes:
            return
        for block_m in range(num_blocks_m):
            for _ in range(blocks_per_node_n):
                for block_k in range(num_blocks_k):
                    with a_dfb.reserve() as a_blk:
                        def pipe_src(pipe):
                            ttl.copy(a_tensor[block_slice(block_m, block_h), block_slice(block_k, block_inner_dim)],
                                     a_blk).wait()
                            ttl.copy(a_blk, pipe).wait()

                        def pipe_dst(pipe):
                            ttl.copy(pipe, a_blk).wait()

                        net.if_src(pipe_src)
                        net.if_dst(pipe_dst)

    @ttl.datamovement()
    def mm_writer():
        node = ttl.node(dims=1)
        if node >= num_working_nodes:
            return
        for block_m in range(num_blocks_m):
            for block_n in range(blocks_per_node_n):
                for block_k in range(num_blocks_k):
                    with b_dfb.reserve() as b_blk:
                        ttl.copy(b_tensor[block_slice(block_k, block_inner_dim),
                                          block_slice(block_n + node * blocks_per_node_n, block_w)], b_blk).wait()
                with out_dfb.wait() as out_blk:
                    ttl.copy(out_blk, out_tensor[block_slice(block_m, block_h),
                                                 block_slice(block_n + node * blocks_per_node_n, block_w)]).wait()


def test_the_1d_multicast_matmul_at_the_l1_limit_matches_numpy():
    """The (TS*8, N, TS*16, 2, 8, 8, 16) case — a, b 2 blocks of 128 tiles, out and the
    accumulator one block of 64 — on 2 working nodes instead of 120, with 2 K blocks."""
    rng = np.random.default_rng(2)
    M, N, K = TS * 8, 2 * TS * 2 * 8, TS * 16 * 2
    a = rng.random((M, K), dtype=np.float32)
    b = rng.random((K, N), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a, b)]
    tensors.append(ttnn.from_numpy(np.zeros((M, N), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))
    matmul_1d(*tensors, 8, 8, 16, 2)
    exact = ttnn.to_numpy(tensors[0]).astype(np.float64) @ ttnn.to_numpy(tensors[1]).astype(np.float64)
    error = np.abs(ttnn.to_numpy(tensors[2]) - exact).max() / np.abs(exact).max()
    assert error < 2 ** -5, error


# -- a reserved block that only ``+=`` fills: the sum starts at zero (the first step stores) ----------

NT = 3


@ttl.operation(grid=(1, 1))
def summed_into_reserved_block(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=1)

    @ttl.compute()
    def compute():
        total = out_dfb.reserve()
        for _ in range(NT):
            x = a_dfb.wait()
            y = b_dfb.wait()
            total += x * y - y
            x.pop()
            y.pop()
        total.push()

    @ttl.datamovement()
    def read():
        for t in range(NT):
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[t:t + 1, 0:2], x).wait()
                ttl.copy(b[t:t + 1, 0:2], y).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:2]).wait()


@ttl.operation(grid=(1, 1))
def matmul_into_reserved_block(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(2, 2), block_count=1)

    @ttl.compute()
    def compute():
        with out_dfb.reserve() as o:
            for _ in range(NT):
                with a_dfb.wait() as x, b_dfb.wait() as y:
                    o += x @ y

    @ttl.datamovement()
    def read():
        for k in range(NT):
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                ttl.copy(a[0:2, k:k + 1], x).wait()
                ttl.copy(b[k:k + 1, 0:2], y).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:2, 0:2]).wait()


def _bf16(values):
    return ttnn.from_numpy(values.astype(np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def test_adding_into_a_freshly_reserved_block_in_a_loop_sums_from_zero(tmp_path, check_kernel):
    rng = np.random.default_rng(5)
    a, b = _bf16(rng.standard_normal((NT * TS, 2 * TS))), _bf16(rng.standard_normal((NT * TS, 2 * TS)))
    out = _bf16(np.full((TS, 2 * TS), 7.0))       # whatever L1 or the tensor held before does not count
    result = compiled(summed_into_reserved_block, a, b, out)
    compute = emit_kernel(next(k for k in result.program.kernels if k.is_compute).function)
    assert "pack_reconfig_l1_acc(1);" in compute
    summed_into_reserved_block(a, b, out)
    x, y = (ttnn.to_numpy(t).astype(np.float64).reshape(NT, TS, 2 * TS) for t in (a, b))
    exact = (x * y - y).sum(axis=0)
    assert np.abs(ttnn.to_numpy(out) - exact).max() <= 2 ** -5 * np.abs(exact).max()
    path = tmp_path / "compute.cpp"
    path.write_text(compute)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


def test_a_matmul_added_into_a_reserved_block_in_a_loop_matches_numpy():
    rng = np.random.default_rng(6)
    a, b = _bf16(rng.standard_normal((2 * TS, NT * TS))), _bf16(rng.standard_normal((NT * TS, 2 * TS)))
    out = _bf16(np.zeros((2 * TS, 2 * TS)))
    matmul_into_reserved_block(a, b, out)
    exact = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    assert np.abs(ttnn.to_numpy(out) - exact).max() <= 2 ** -5 * np.abs(exact).max()


# -- a reserved block only ``+=`` fills and nothing reads: summed in its own L1 by the packer ------


def _partials_matmul(bm, bn, bk, nk):
    """TT-Lang's K-split partials: ``p = partial.reserve()``, ``p += a @ b`` over K, ``p.push()``."""
    @ttl.operation(grid=(1, 1))
    def partials(a, b, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(bm, bk), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(bk, bn), block_count=2)
        partial_dfb = ttl.make_dataflow_buffer_like(out, shape=(bm, bn), block_count=2)

        @ttl.compute()
        def compute():
            p = partial_dfb.reserve()
            for _ in range(nk):
                x = a_dfb.wait()
                y = b_dfb.wait()
                p += x @ y
                x.pop()
                y.pop()
            p.push()

        @ttl.datamovement()
        def read():
            for k in range(nk):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0:bm, k * bk:(k + 1) * bk], x).wait()
                    ttl.copy(b[k * bk:(k + 1) * bk, 0:bn], y).wait()

        @ttl.datamovement()
        def write():
            with partial_dfb.wait() as o:
                ttl.copy(o, out[0:bm, 0:bn]).wait()

    return partials


@ttl.operation(grid=(1, 1))
def partials_pushed_implicitly(a, b, out):
    """The same partials in a body without kernel functions and without push() / pop(): ``p`` is
    pushed once its name is dead, after the loop that summed into it."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(2, 1), block_count=2)
    partial_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    for k in range(NT):
        ttl.copy(a[0:1, 2 * k:2 * k + 2], a_dfb.reserve())
        ttl.copy(b[2 * k:2 * k + 2, 0:1], b_dfb.reserve())
    p = partial_dfb.reserve()
    for _ in range(NT):
        p += a_dfb.wait() @ b_dfb.wait()
    ttl.copy(partial_dfb.wait(), out[0:1, 0:1])


def test_partials_summed_in_l1_are_pushed_when_their_name_is_dead():
    rng = np.random.default_rng(8)
    a, b = _bf16(rng.standard_normal((TS, 2 * NT * TS))), _bf16(rng.standard_normal((2 * NT * TS, TS)))
    out = _bf16(np.zeros((TS, TS)))
    result = compiled(partials_pushed_implicitly, a, b, out)
    assert not any("accumulator" in (cb.name or "") for cb in result.program.circular_buffers)
    partials_pushed_implicitly(a, b, out)
    exact = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    assert np.abs(ttnn.to_numpy(out) - exact).max() <= 2 ** -6 * np.abs(exact).max()


def test_partials_added_into_a_reserved_block_take_no_buffer_of_their_own_and_match_numpy(tmp_path, check_kernel):
    bm, bn, bk, nk = 8, 8, 16, 2           # a, b: 2 blocks of 128 tiles; partials: 2 blocks of 64
    rng = np.random.default_rng(9)
    a = _bf16(rng.random((bm * TS, nk * bk * TS)))
    b = _bf16(rng.random((nk * bk * TS, bn * TS)))
    out = _bf16(np.zeros((bm * TS, bn * TS)))
    operation = _partials_matmul(bm, bn, bk, nk)
    result = compiled(operation, a, b, out)
    assert len(result.program.circular_buffers) == 3                    # no accumulator buffer
    used = sum(cb.total_size for cb in result.program.circular_buffers)
    assert used + bm * bn * 4096 > result.program.arch.l1_free          # a float32 one would not fit
    compute = emit_kernel(next(k for k in result.program.kernels if k.is_compute).function)
    assert "pack_reconfig_l1_acc(1);" in compute
    operation(a, b, out)
    exact = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    assert np.abs(ttnn.to_numpy(out) - exact).max() <= 2 ** -6 * np.abs(exact).max()
    path = tmp_path / "compute.cpp"
    path.write_text(compute)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


N_ADDS = 6


def _summed_after_a_store(plus_equals: bool):
    @ttl.operation(grid=(1, 1))
    def summed_after_a_store(start, delta, out):
        start_dfb = ttl.make_dataflow_buffer_like(start, shape=(1, 1), block_count=1)
        delta_dfb = ttl.make_dataflow_buffer_like(delta, shape=(1, 1), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

        @ttl.compute()
        def compute():
            with out_dfb.reserve() as out_blk, start_dfb.wait() as s:
                out_blk.store(s)
                for _ in range(N_ADDS):
                    with delta_dfb.wait() as d:
                        if plus_equals:
                            out_blk += d
                        else:
                            out_blk.store(d, acc=True)

        @ttl.datamovement()
        def read():
            with start_dfb.reserve() as s:
                ttl.copy(start[0:1, 0:1], s).wait()
            for _ in range(N_ADDS):
                with delta_dfb.reserve() as d:
                    ttl.copy(delta[0:1, 0:1], d).wait()

        @ttl.datamovement()
        def write():
            with out_dfb.wait() as o:
                ttl.copy(o, out[0:1, 0:1]).wait()

    return summed_after_a_store


@pytest.mark.parametrize("plus_equals", [True, False], ids=["plus-equals", "store-acc"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_a_block_summed_in_l1_rounds_to_its_own_format_at_each_step(dtype, plus_equals):
    """256 + 1 is a tie in bfloat16 (spacing 2 there) and rounds to even, 256: summed in a bfloat16
    block, each step's sum rounds back; a float32 block keeps every step. ``blk += d`` and
    ``blk.store(d, acc=True)`` both sum in the block's own L1."""
    fmt = getattr(ttnn, dtype)
    start = ttnn.from_numpy(np.full((TS, TS), 256.0, np.float32), dtype=fmt, layout=ttnn.TILE_LAYOUT)
    delta = ttnn.from_numpy(np.ones((TS, TS), np.float32), dtype=fmt, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((TS, TS), np.float32), dtype=fmt, layout=ttnn.TILE_LAYOUT)
    operation = _summed_after_a_store(plus_equals)
    result = compiled(operation, start, delta, out)
    assert len(result.program.circular_buffers) == 3                    # no accumulator buffer
    operation(start, delta, out)
    expected = 256.0 if dtype == "bfloat16" else 256.0 + N_ADDS
    assert np.all(ttnn.to_numpy(out) == expected)


@ttl.operation(grid=(1, 1))
def summed_then_read(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        with out_dfb.reserve() as o:
            for _ in range(3):
                with a_dfb.wait() as x:
                    o += x
            o.store(o * 2.0)

    @ttl.datamovement()
    def read():
        for k in range(3):
            with a_dfb.reserve() as x:
                ttl.copy(a[k:k + 1, 0:1], x).wait()

    @ttl.datamovement()
    def write():
        with out_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:1]).wait()


def test_a_block_read_after_its_loop_keeps_the_sum_in_a_buffer_of_its_own():
    rng = np.random.default_rng(4)
    a = _bf16(rng.standard_normal((3 * TS, TS)))
    out = _bf16(np.zeros((TS, TS)))
    result = compiled(summed_then_read, a, out)
    assert any("accumulator" in (cb.name or "") for cb in result.program.circular_buffers)
    summed_then_read(a, out)
    exact = 2 * ttnn.to_numpy(a).astype(np.float64).reshape(3, TS, TS).sum(axis=0)
    assert np.abs(ttnn.to_numpy(out) - exact).max() <= 2 ** -6 * np.abs(exact).max()


@ttl.operation(grid=(1, 1))
def summed_on_even_steps(a, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)

    @ttl.compute()
    def compute():
        with o_dfb.reserve() as o:
            for i in range(N_ADDS):
                with a_dfb.wait() as x:
                    if i % 2 == 0:
                        o += x

    @ttl.datamovement()
    def read():
        for i in range(N_ADDS):
            with a_dfb.reserve() as x:
                ttl.copy(a[i, 0], x).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0, 0]).wait()


def test_a_block_summed_in_l1_may_be_added_to_inside_a_runtime_if():
    """Summed in its own L1, a block needs no storage of its own across the loop, so ``o += x``
    inside a runtime ``if`` adds on the steps that take it (float32: exact)."""
    values = np.random.default_rng(7).standard_normal((N_ADDS * TS, TS)).astype(np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((TS, TS), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    summed_on_even_steps(a, out)
    x = ttnn.to_numpy(a).reshape(N_ADDS, TS, TS)
    np.testing.assert_array_equal(ttnn.to_numpy(out), x[0::2].sum(axis=0, dtype=np.float32))
