"""The ``acc = None`` idiom: ``acc = x if acc is None else acc + x`` over a runtime loop sums its
blocks (the first iteration is built on its own), against numpy."""

from __future__ import annotations

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import marked_line, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def row_of_products(a, b, c):
    """c[0, n] = sum over k of a[0, k] @ b[k, n], one output tile per n."""
    k_tiles = a.shape[1] // ttl.TILE_SIZE
    n_tiles = b.shape[1] // ttl.TILE_SIZE
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(n_tiles):
            acc = None
            for _ in range(k_tiles):
                with a_dfb.wait() as x, b_dfb.wait() as y:
                    product = x @ y
                    acc = product if acc is None else acc + product
            with c_dfb.reserve() as out:
                out.store(acc)

    @ttl.datamovement()
    def read():
        for n in range(n_tiles):
            for k in range(k_tiles):
                with a_dfb.reserve() as x, b_dfb.reserve() as y:
                    ttl.copy(a[0, k], x).wait()
                    ttl.copy(b[k, n], y).wait()

    @ttl.datamovement()
    def write():
        for n in range(n_tiles):
            with c_dfb.wait() as out:
                ttl.copy(out, c[0, n]).wait()


def test_acc_none_then_sum_over_a_runtime_loop():
    a = tile_tensor((32, 128), seed=14, scale=0.5)
    b = tile_tensor((128, 64), seed=15, scale=0.5)
    c = zeros((32, 64))
    row_of_products(a, b, c)
    expected = ttnn.to_numpy(a).astype(np.float32) @ ttnn.to_numpy(b).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(c).astype(np.float32), expected, rtol=2e-2, atol=5e-2)


def _partial_first(kind: str):
    @ttl.operation(grid=(1, 1))
    def partial_first(a, c):
        """The ``acc = None`` idiom with its first assignment on one path only: inside a runtime
        ``if``, or after a runtime ``continue``."""
        k_tiles = a.shape[1] // ttl.TILE_SIZE
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            acc = None
            for _ in range(k_tiles):
                with a_dfb.wait() as x:
                    if kind == "if":
                        if ttl.node(dims=1) == 0:
                            acc = x if acc is None else acc + x  # error: if
                    else:
                        if ttl.node(dims=1) == 1:
                            continue
                        acc = x if acc is None else acc + x  # error: continue
            with c_dfb.reserve() as out:
                out.store(acc)

        @ttl.datamovement()
        def read():
            for k in range(k_tiles):
                with a_dfb.reserve() as x:
                    ttl.copy(a[0, k], x).wait()

        @ttl.datamovement()
        def write():
            with c_dfb.wait() as out:
                ttl.copy(out, c[0, 0]).wait()

    return partial_first


def test_acc_none_first_assigned_on_one_path_only_says_what_to_change():
    import inspect

    import pytest

    from tilefold.errors import KernelError

    for kind in ("if", "continue"):
        with pytest.raises(KernelError) as info:
            _partial_first(kind)(tile_tensor((32, 96)), zeros((32, 32)))
        message = str(info.value)
        line = marked_line(_partial_first, f"# error: {kind}")
        assert message.startswith(f"{inspect.getsourcefile(_partial_first)}:{line}: name 'acc' is not defined here: "), \
            message
        for fragment in ("every path of the first iteration", "compile-time trip count", "runtime if",
                         "after a continue", "acc = ttl.math.fill(x, 0)"):
            assert fragment in message, message
