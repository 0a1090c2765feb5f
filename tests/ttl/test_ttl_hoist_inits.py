"""``ttl-hoist-inits``: an init a loop repeats on every trip runs once before the loop — and only
then. The matmul with an addend (its reload loop and its K loop) runs exactly on the simulator and
its C++ passes ``check-kernel``; kernels written as IR show the cases where an init must stay."""

from __future__ import annotations

import numpy as np
import pytest
from compute_ir import compute_kernel
from test_ttl_matmul_addend import ADDEND_FIRST, _compute_source, _tensors

import tilefold.ttnn as ttnn
from tilefold.ir.ttkernel import ApiCallOp
from tilefold.passes.ttl.hoist_inits import TtlHoistInits


def test_the_reload_and_k_loop_inits_run_once_per_sub_block(tmp_path):
    source = _compute_source(ADDEND_FIRST, tmp_path)           # passes check-kernel
    regions = source.split("tile_regs_acquire();")[1:]
    assert len(regions) == 1 and regions[0].count("copy_tile_init(") == 1
    region = regions[0]
    # copy_tile_init, the reload loop, mm_block_init_short, the K loop — in this order
    order = [region.index(text) for text in
             ("copy_tile_init(", "for (", "copy_tile(", "mm_block_init_short(", "for (uint32_t k", "matmul_block(")]
    assert order == sorted(order), region
    assert region.count("mm_block_init_short(") == 1


def test_the_hoisted_kernel_computes_the_exact_sum():
    a, b, c, out = _tensors()
    ADDEND_FIRST(a, b, c, out)
    product = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b).astype(np.float64)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(c).astype(np.float64) + product)


def _hoisted(body: str, upper: int = 4) -> bool:
    """Whether the pass moves the body's first init out of the loop."""
    loop = f"ttkernel.tile_regs_acquire()\nscf.for %i = %c0 to %c4 step %c1 {{\n{body}\n}}\n" \
           "ttkernel.tile_regs_commit()\nttkernel.tile_regs_wait()\nttkernel.tile_regs_release()"
    module = compute_kernel(loop, ("cb", "cb2"), upper)
    TtlHoistInits().apply(None, module)
    kernel = next(iter(module.ops))
    return any(isinstance(op, ApiCallOp) and op.api.configures for op in kernel.body.block.ops)


COPY = """      ttkernel.copy_tile_init(%cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb, %i, %i) : !ttkernel.cb, index, index"""


def test_an_init_a_loop_only_repeats_moves_out():
    assert _hoisted(COPY)


@pytest.mark.parametrize("body, upper, why", [
    (COPY, 0, "the loop never runs: nothing may be configured"),
    ("""      ttkernel.copy_tile(%cb, %i, %i) : !ttkernel.cb, index, index
      ttkernel.copy_tile_init(%cb) : !ttkernel.cb""", 4, "the first trip's copy_tile runs before the init"),
    ("""      ttkernel.copy_tile_init(%cb) : !ttkernel.cb
      ttkernel.copy_tile(%cb, %i, %c0) : !ttkernel.cb, index, index
      ttkernel.copy_tile_init(%cb2) : !ttkernel.cb
      ttkernel.copy_tile(%cb2, %i, %c1) : !ttkernel.cb, index, index""", 4, "two inits: each trip needs both again"),
    ("""      %z = ttkernel.get_compile_time_arg_val(2 : i32) : i32
      %cb3 = ttkernel.cb(%z) : i32
      ttkernel.copy_tile_init(%cb3) : !ttkernel.cb
      ttkernel.copy_tile(%cb3, %i, %i) : !ttkernel.cb, index, index""", 4, "its operand is made in the loop"),
])
def test_an_init_stays_in_its_loop(body, upper, why):
    assert not _hoisted(body, upper), why
