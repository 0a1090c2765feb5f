"""A reserved block written in one branch of a runtime ``if`` only holds what its pages held on the
other path: pushing it after the ``if`` is a warning at the user's line naming the ``if`` (it runs,
the other path's tiles holding what the slot held — here nothing ever wrote it: zeros), while
writing it in both branches runs with no warning and matches numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import marked_line

TS = 32
N = 4


def _operation(both_branches: bool):
    @ttl.operation(grid=(1, 1))
    def halves(a, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            for i in range(N):
                with a_dfb.wait() as x, o_dfb.reserve() as o:
                    if i % 2 == 0:  # the if
                        o.store(x * 2.0)
                    elif both_branches:
                        o.store(-x)
                

        @ttl.datamovement()
        def read():
            for i in range(N):
                with a_dfb.reserve() as x:
                    ttl.copy(a[i, 0], x).wait()

        @ttl.datamovement()
        def write():
            for i in range(N):
                with o_dfb.wait() as o:
                    ttl.copy(o, out[i, 0]).wait()

    return halves


def _tensors():
    values = np.random.default_rng(3).standard_normal((N * TS, TS)).astype(np.float32)
    a = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return a, out


def test_a_block_written_in_both_branches_matches_numpy():
    a, out = _tensors()
    _operation(True)(a, out)
    x = ttnn.to_numpy(a).reshape(N, TS, TS)
    expected = np.stack([x[i] * 2 if i % 2 == 0 else -x[i] for i in range(N)]).reshape(N * TS, TS)
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


def test_a_block_written_in_one_branch_only_is_a_warning_where_it_is_pushed():
    a, out = _tensors()
    operation = _operation(False)
    with pytest.warns(UserWarning, match="o is pushed here, but on one path through the if at .* nothing was written "
                                         "into it") as caught:
        operation(a, out)
    line = marked_line(_operation, "# the if")
    assert any(w.filename == __file__ and w.lineno == line for w in caught)
    x = ttnn.to_numpy(a).reshape(N, TS, TS)
    expected = np.stack([x[i] * 2 if i % 2 == 0 else np.zeros((TS, TS), np.float32) for i in range(N)])
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected.reshape(N * TS, TS))


def test_a_block_written_in_both_branches_warns_nothing(recwarn):
    a, out = _tensors()
    _operation(True)(a, out)
    assert not [w for w in recwarn if "one path through the if" in str(w.message)]
