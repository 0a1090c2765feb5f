"""Dataflow buffers no kernel uses are not allocated: no circular buffer, no L1, nothing in the
emitted kernels; a warning names each at its line, and only the used ones count against the 32
circular buffers of a node. Run on the simulated device against numpy."""

from __future__ import annotations

import inspect
import warnings

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled, marked_line


@ttl.operation(grid=(1, 1))
def many_buffers(inp, out):
    dfbs = [ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2) for _ in range(33)]
    cb7 = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)  # unused
    first, middle, last = dfbs[0], dfbs[20], dfbs[32]

    @ttl.compute()
    def compute():
        with first.wait() as a, last.reserve() as o:
            o.store(a + a)
        with last.wait() as a, middle.reserve() as o:
            o.store(a)

    @ttl.datamovement()
    def read():
        with first.reserve() as blk:
            ttl.copy(inp[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with middle.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def _tensors():
    x = np.random.default_rng(0).standard_normal((32, 32)).astype(np.float32)
    inp = ttnn.from_numpy(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return x, inp, out


def test_34_declared_3_used_runs_and_warns_about_the_rest():
    _, inp, out = _tensors()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        many_buffers(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp).astype(np.float32) * 2)
    unused = [w for w in caught if "is declared but no kernel uses it" in str(w.message)]
    assert len(unused) == 31, [str(w.message) for w in caught]
    cb7 = next(w for w in unused if str(w.message).startswith("dfb cb7 "))
    assert str(cb7.message) == "dfb cb7 is declared but no kernel uses it; it is not allocated"
    assert cb7.filename == inspect.getsourcefile(many_buffers.function)
    assert cb7.lineno == marked_line(many_buffers.function, "# unused")


def test_unused_buffers_get_no_circular_buffer_nor_code():
    _, inp, out = _tensors()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = compiled(many_buffers, inp, out)
    cbs = result.program.circular_buffers
    assert sorted(cb.index for cb in cbs) == [0, 1, 2]           # used ones, renumbered in order
    sources = "".join(emit_kernel(k.function) for k in result.program.kernels)
    assert "cb7" not in sources and "get_compile_time_arg_val(3)" not in sources
    assert sum(cb.total_size for cb in cbs) == 3 * 2 * 2048
