"""A float32 expression whose values fill DST's four float32 slots before its last op: the
result takes a slot those values used (one output tile per acquire) instead of a fifth one, as
``x0 * x1 + (x0 - x1) * (x1 + x0)`` needs. Run on the simulated device against numpy (float32
SFPU arithmetic rounds as numpy's float32 does); the C++ through ``check-kernel``."""

from __future__ import annotations

import re

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import recorded_programs, tile_tensor, zeros


@ttl.operation(grid=(1, 1))
def crossed(x0, x1, y):
    x0_dfb = ttl.make_dataflow_buffer_like(x0, shape=(2, 2), block_count=2)
    x1_dfb = ttl.make_dataflow_buffer_like(x1, shape=(2, 2), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2), block_count=2)

    @ttl.compute()
    def compute():
        with x0_dfb.wait() as a, x1_dfb.wait() as b, y_dfb.reserve() as o:
            o.store(a * b + (a - b) * (b + a))

    @ttl.datamovement()
    def read():
        with x0_dfb.reserve() as a:
            ttl.copy(x0[0:2, 0:2], a).wait()
        with x1_dfb.reserve() as b:
            ttl.copy(x1[0:2, 0:2], b).wait()

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as o:
            ttl.copy(o, y[0:2, 0:2]).wait()


def _tensors():
    return tile_tensor((64, 64), seed=31, dtype="float32"), tile_tensor((64, 64), seed=32, dtype="float32")


def test_the_result_shares_a_slot_with_the_values_before_it():
    x0, x1 = _tensors()
    y = zeros((64, 64), "float32")
    crossed(x0, x1, y)
    a, b = ttnn.to_numpy(x0), ttnn.to_numpy(x1)
    np.testing.assert_array_equal(ttnn.to_numpy(y), a * b + (a - b) * (b + a))


def test_its_compute_kernel_packs_from_the_last_slot_and_compiles(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        crossed(*_tensors(), zeros((64, 64), "float32"))
    compute = next(k for k in programs[0].kernels if k.is_compute)
    source = emit_kernel(compute.function)
    slots = {int(n) for n in re.findall(r"copy_tile\(\w+, [^,]+, (\d+)\)", source)}
    assert slots and max(slots) <= 3               # four float32 slots, the last one the result's
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))
