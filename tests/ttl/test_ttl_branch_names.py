"""A name assigned in several runtime branches but not read after them is a plain name of each
branch, not a value carried out of them (TT-Lang's flash-attention chain reuses names in sibling
``if net.is_src()`` / ``if net.is_dst()`` branches); one read after the branches still carries it."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn


@ttl.operation(grid=(2, 1))
def by_role(a, out):
    """Node 0 (the pipe's source) writes a*2 to its column, node 1 (its destination) a+1; both
    branches name their value ``t``."""
    net = ttl.PipeNet([ttl.Pipe((0, 0), (1, 0))])
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        if net.is_src():
            with a_dfb.wait() as x, o_dfb.reserve() as y:
                t = x * 2.0
                y.store(t)
        if net.is_dst():
            with a_dfb.wait() as x, o_dfb.reserve() as y:
                t = x + 1.0
                y.store(t)

    @ttl.datamovement()
    def read():
        i = ttl.node(dims=1)
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, i], blk).wait()

    @ttl.datamovement()
    def write():
        i = ttl.node(dims=1)
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, i]).wait()


def test_a_name_reused_in_sibling_runtime_branches():
    a = np.random.default_rng(9).random((32, 64), dtype=np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, np.zeros_like(a))]
    by_role(*tensors)
    expected = np.concatenate([a[:, :32] * 2.0, a[:, 32:] + 1.0], axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(tensors[1]), expected, rtol=1e-6)


def test_carried_names_follow_liveness():
    import ast
    import textwrap

    from tilefold.frontend.ttl.variables import carried_names

    def names(src: str) -> set[str]:
        return carried_names(ast.parse(textwrap.dedent(src)).body[0])

    assert names("""
        def k():
            if c:
                t = 1
                use(t)
            if d:
                t = 2
                use(t)
    """) == set()
    assert names("""
        def k():
            if c:
                t = 1
            use(t)
    """) == {"t"}
    assert names("""
        def k():
            for i in range(3):
                if c:
                    t = i
            use(t)
    """) == {"t"}
    assert names("""
        def k():
            acc = 0
            for i in range(3):
                acc = acc + i
    """) == {"acc"}
    assert names("""
        def k():
            if c:
                t = 1
            def body(p):
                use(t)
            net.if_dst(body)
    """) == {"t"}
    # a nested function reads its names where it is used: here after each iteration binds t again
    assert names("""
        def k():
            for i in range(3):
                def body(p):
                    use(t)
                if c:
                    t = i
                    net.if_dst(body)
                elif d:
                    t = i + 1
                    net.if_dst(body)
    """) == set()
    # ... and a function defined before the branch reads t where it is used after it
    assert names("""
        def k():
            def body(p):
                use(t)
            if c:
                t = 1
            net.if_dst(body)
    """) == {"t"}


LINE = 4


@ttl.operation(grid=(LINE,))
def copy_prefix(x, out):
    """Node i copies tiles 0..i of ``x`` into its row of ``out``, stopping with a flag it carries
    through the loop as a Python bool (``done = False`` ... ``done = True``)."""
    dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def reader():
        i = ttl.node(dims=1)
        done = False
        for k in range(LINE):
            if not done:
                with dfb.reserve() as b:
                    ttl.copy(x[0, k], b).wait()
                if k == i:
                    done = True

    @ttl.datamovement()
    def writer():
        i = ttl.node(dims=1)
        for k in range(LINE):
            if k <= i:
                with dfb.wait() as b:
                    ttl.copy(b, out[i, k]).wait()


def test_a_bool_flag_carried_through_a_runtime_loop():
    values = np.arange(LINE, dtype=np.float32).repeat(32)[None, :].repeat(32, axis=0) + 1
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((32 * LINE, 32 * LINE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    copy_prefix(x, out)
    tiles = ttnn.to_numpy(out)[::32, ::32]
    np.testing.assert_array_equal(tiles, np.tril(np.arange(1, LINE + 1, dtype=np.float32)[None, :].repeat(LINE, 0)))
