"""``c + a @ b`` in one store: the tiles of ``c`` are copied into the matmul's output slots and
``matmul_block`` adds its K steps onto them (it accumulates into DST), so the compute kernel has
no SFPU add and one DST slot fewer per output tile. Run on the simulated device against numpy
(exact, on small integers), the C++ structure checked and passed through ``check-kernel``."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled, zeros

M, K, N = 4, 2, 4          # tiles: a 16-tile output block, larger than DST (sub-blocks)


def _matmul_op(expression):
    @ttl.operation(grid=(1, 1))
    def op(a, b, c, out):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(M, K), block_count=1)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(K, N), block_count=1)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(M, N), block_count=1)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(M, N), block_count=1)

        @ttl.compute()
        def compute():
            with a_dfb.wait() as x, b_dfb.wait() as y, c_dfb.wait() as z, o_dfb.reserve() as o:
                o.store(expression(x, y, z))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as x, b_dfb.reserve() as y, c_dfb.reserve() as z:
                ttl.copy(a[0:M, 0:K], x).wait()
                ttl.copy(b[0:K, 0:N], y).wait()
                ttl.copy(c[0:M, 0:N], z).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as o:
                ttl.copy(o, out[0:M, 0:N]).wait()

    return op


ADDEND_FIRST = _matmul_op(lambda x, y, z: z + x @ y)
ADDEND_LAST = _matmul_op(lambda x, y, z: x @ y + z)
RELU_OF_SUM = _matmul_op(lambda x, y, z: ttl.math.relu(z + x @ y))
DIFFERENCE = _matmul_op(lambda x, y, z: z - x @ y)


def _integers(shape, seed, low, high):
    values = np.random.default_rng(seed).integers(low, high + 1, shape).astype(np.float32)
    return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def _tensors():
    # sums of at most 64 products of -1, 0, 1 plus -4..4: exact in bfloat16 at every step
    return (_integers((32 * M, 32 * K), 1, -1, 1), _integers((32 * K, 32 * N), 2, -1, 1),
            _integers((32 * M, 32 * N), 3, -4, 4), zeros((32 * M, 32 * N)))


@pytest.mark.parametrize("op, reference", [
    (ADDEND_FIRST, lambda p, c: c + p), (ADDEND_LAST, lambda p, c: p + c),
    (RELU_OF_SUM, lambda p, c: np.maximum(c + p, 0)), (DIFFERENCE, lambda p, c: c - p)])
def test_an_addend_of_a_matmul_gives_the_exact_sum(op, reference):
    a, b, c, out = _tensors()
    op(a, b, c, out)
    product = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_array_equal(ttnn.to_numpy(out), reference(product, ttnn.to_numpy(c).astype(np.float64)))


def _compute_source(op, tmp_path):
    program = compiled(op, *_tensors()).program
    compute = next(k for k in program.kernels if k.is_compute)
    source = emit_kernel(compute.function)
    path = tmp_path / "compute.cpp"
    path.write_text(source)
    require_accepted(check_kernels([(path, "compute", accessor_compile_args(program, compute) or None)])[0])
    return source


@pytest.mark.parametrize("op", [ADDEND_FIRST, ADDEND_LAST, RELU_OF_SUM])
def test_the_addend_is_copied_into_the_output_slots_before_the_matmul(op, tmp_path):
    source = _compute_source(op, tmp_path)
    assert "add_binary_tile" not in source
    # every acquire: the addend's tiles into DST, then the K steps onto them
    regions = source.split("tile_regs_acquire();")[1:]
    assert regions and all(r.index("copy_tile(") < r.index("matmul_block(") for r in regions)
    # no slot is held for the product beside the addend: a sub-block of 1 x 4 tiles fills DST
    # (4 tiles of 32 bits; with the product in a slot of its own it would be 1 x 2)
    assert "matmul_block(" in source and ", 0, 4, 1, 2);" in source      # ct = 4, rt = 1, kt = 2


def test_a_difference_keeps_the_product_in_a_slot_of_its_own(tmp_path):
    source = _compute_source(DIFFERENCE, tmp_path)
    assert "sub_binary_tile" in source
