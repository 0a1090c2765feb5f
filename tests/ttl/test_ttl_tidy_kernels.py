"""``ttl-tidy-kernels``: the lowered kernels' index arithmetic is folded, in the IR the C++ and the
simulator both come from, and the program computes what it did."""

from __future__ import annotations

import re

import numpy as np
from xdsl.dialects import arith

import tilefold.ttl as ttl
from tilefold.codegen.cpp import emit_kernel
from tilefold.ir.context import parse_module
from ttl_helpers import compiled, load_example, tile_tensor, zeros

# index arithmetic that a fold removes: a constant times or plus a constant, `x + 0`, `x * 1`, `x * 0`
FOLDABLE_CPP = re.compile(r"\b\d+u? [*+] \d+\b|[+] 0\b(?!\.)|[*] [01]\b(?!\.)")


def _foldable(op) -> bool:
    if not isinstance(op, (arith.AddiOp, arith.MuliOp)):
        return False
    constants = [o.owner.value.value.data for o in op.operands if isinstance(o.owner, arith.ConstantOp)]
    return len(constants) == 2 or 0 in constants or (isinstance(op, arith.MuliOp) and 1 in constants)


def _matmul():
    example = load_example("matmul_single_node")
    return example, compiled(example.matmul_single_node, tile_tensor((128, 256), 1), tile_tensor((256, 128), 2),
                             tile_tensor((128, 128), 3), zeros((128, 128)))


def test_index_arithmetic_is_folded_in_the_ir_and_the_cpp():
    _, result = _matmul()
    before = parse_module(dict(result.dumps)["lower-affine"])
    assert any(_foldable(op) for op in before.walk()), "the lowering no longer builds foldable index arithmetic"
    for kernel in result.program.kernels:
        assert not [op for op in kernel.function.walk() if _foldable(op)], kernel.name
        cpp = emit_kernel(kernel.function)
        assert not FOLDABLE_CPP.findall(cpp), (kernel.name, FOLDABLE_CPP.findall(cpp))


def test_the_tidied_matmul_still_computes_its_result():
    example, _ = _matmul()
    result, reference = example.main(m=128, k=256, n=128, seed=4)
    np.testing.assert_allclose(result, reference, rtol=0.05, atol=0.5)


@ttl.operation(grid=(1, 1))
def _two_waits(a, b, out):
    """Two transfers waited for one after the other, as TT-Lang's tutorials write them."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(2):
            with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
                o.store(x + y)

    @ttl.datamovement()
    def read():
        for t in range(2):
            with a_dfb.reserve() as x, b_dfb.reserve() as y:
                tx_a = ttl.copy(a[0, t], x)
                tx_b = ttl.copy(b[0, t], y)
                tx_a.wait()
                tx_b.wait()

    @ttl.datamovement()
    def write():
        for t in range(2):
            with o_dfb.wait() as o:
                ttl.copy(o, out[0, t]).wait()


def test_a_barrier_right_after_the_same_barrier_is_dropped():
    import tilefold.ttnn as ttnn

    a, b, out = tile_tensor((32, 64), 1), tile_tensor((32, 64), 2), zeros((32, 64))
    program = compiled(_two_waits, a, b, out).program
    reader = emit_kernel(next(k for k in program.kernels if k.name == "read").function)
    assert reader.count("noc_async_read_barrier();") == 1, reader
    _two_waits(a, b, out)
    expected = (ttnn.to_numpy(a).astype(np.float32) + ttnn.to_numpy(b)).astype(np.float32)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-2)
