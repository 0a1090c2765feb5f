"""The IR PyKernel builds computes what C++ on uint32_t / uint64_t computes.

A small reference interpreter runs the arith / scf / memref ops of a kernel on runtime
arguments and collects what it stores through an ``l1_ptr``; the same expressions are
computed with numpy ``uint32`` / ``uint64`` arithmetic (wrap-around, unsigned division and
shifts, unsigned comparisons) and compared, over random arguments.
"""

from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tilefold.ir.ttkernel import constant_int
from tilefold.pykernel import *

OUT = 0x1000
U32 = st.integers(0, 2**32 - 1)


@reader_kernel
def arithmetic():
    a = get_arg_val(0)
    b = get_arg_val(1)
    out = l1_ptr(OUT)
    out[0] = a + b * 3
    out[1] = a - b
    out[2] = (a * b) // (b | 1)
    out[3] = a % (b | 1)
    out[4] = (a >> 3) ^ (b << 2)
    out[5] = (a & 0xFF00) | (b & 0xFF)
    out[6] = -a + ~b
    out[7] = (a < b) + (a >= b) * 2 + (a == b) * 4
    out[8] = min(a, b) + max(a, 7)
    out[9] = a if a > b else b
    out[10] = 5 - 7 + a
    out[11] = uint32((uint64(a) * b) >> 16)
    out[12] = a < b < 1000
    out[13] = not a
    out[14] = (a > 5 and b > 5) or a == 3
    acc = 0
    for i in range(0, b & 15, 2):
        acc += a ^ i
    out[15] = acc
    n = a & 7
    total = 0
    while n > 0:
        total += n * n
        n -= 1
    out[16] = total
    if a % 3 == 0:
        branch = a // 3
    elif a % 3 == 1:
        branch = b
    else:
        branch = 9
    out[17] = branch


def reference(a: int, b: int) -> dict[int, int]:
    u32, u64 = np.uint32, np.uint64
    A, B = u32(a), u32(b)
    with np.errstate(over="ignore"):
        values = [
            A + B * u32(3),
            A - B,
            (A * B) // (B | u32(1)),
            A % (B | u32(1)),
            (A >> u32(3)) ^ (B << u32(2)),
            (A & u32(0xFF00)) | (B & u32(0xFF)),
            u32(0) - A + ~B,
            u32(A < B) + u32(A >= B) * u32(2) + u32(A == B) * u32(4),
            min(A, B) + max(A, u32(7)),
            A if A > B else B,
            u32(0xFFFFFFFE) + A,
            u32((u64(a) * u64(b)) >> u64(16) & u64(0xFFFFFFFF)),
            u32(A < B and B < 1000),
            u32(a == 0),
            u32((a > 5 and b > 5) or a == 3),
            np.sum(np.arange(0, b & 15, 2, dtype=np.uint32) ^ A, dtype=np.uint32),
            u32(sum(n * n for n in range(1, (a & 7) + 1))),
            u32(a // 3 if a % 3 == 0 else (b if a % 3 == 1 else 9)),
        ]
    return {i: int(v) for i, v in enumerate(values)}


class _Interpreter:
    """Runs the ops tilefold's front end emits (integers as Python ints, masked to their width)."""

    BINARY = {
        "arith.addi": lambda x, y, w: x + y, "arith.subi": lambda x, y, w: x - y,
        "arith.muli": lambda x, y, w: x * y, "arith.divui": lambda x, y, w: x // y,
        "arith.remui": lambda x, y, w: x % y, "arith.shli": lambda x, y, w: x << y,
        "arith.shrui": lambda x, y, w: x >> y, "arith.andi": lambda x, y, w: x & y,
        "arith.ori": lambda x, y, w: x | y, "arith.xori": lambda x, y, w: x ^ y,
        "arith.minui": lambda x, y, w: min(x, y), "arith.maxui": lambda x, y, w: max(x, y),
    }
    PREDICATES = {0: lambda x, y: x == y, 1: lambda x, y: x != y, 6: lambda x, y: x < y,
                  7: lambda x, y: x <= y, 8: lambda x, y: x > y, 9: lambda x, y: x >= y}

    def __init__(self, args: list[int]):
        self.args = args
        self.env: dict = {}
        self.l1: dict[int, int] = {}

    @staticmethod
    def width(value) -> int:
        t = value.type
        return 64 if t.name == "index" else t.width.data

    def set(self, value, result: int) -> None:
        self.env[value] = result & ((1 << self.width(value)) - 1)

    def block(self, block) -> list[int]:
        for op in block.ops:
            if op.name in ("scf.yield", "scf.condition"):
                return [self.env[v] for v in op.operands]
            self.op(op)
        return []

    def op(self, op) -> None:
        name, env = op.name, self.env
        if name == "arith.constant":
            self.set(op.result, constant_int(op.result))
        elif name == "ttkernel.get_arg_val":
            self.set(op.result, self.args[env[op.arg_index]])
        elif name in self.BINARY:
            self.set(op.result, self.BINARY[name](env[op.lhs], env[op.rhs], self.width(op.result)))
        elif name == "arith.cmpi":
            self.set(op.result, int(self.PREDICATES[op.predicate.value.data](env[op.lhs], env[op.rhs])))
        elif name in ("arith.extui", "arith.trunci", "arith.index_cast"):
            self.set(op.result, env[op.input])
        elif name == "arith.select":
            self.set(op.result, env[op.lhs] if env[op.cond] else env[op.rhs])
        elif name == "memref.alloca":
            env[op.memref] = [0] * max(1, int(np.prod(op.memref.type.get_shape())))
        elif name == "memref.load":
            self.set(op.res, env[op.memref][env[op.indices[0]] if op.indices else 0])
        elif name == "memref.store":
            env[op.memref][env[op.indices[0]] if op.indices else 0] = env[op.value]
        elif name == "ttkernel.l1_store":
            self.l1[env[op.index]] = env[op.value]
        elif name == "scf.for":
            iv = op.body.block.args[0]
            for i in range(env[op.lb], env[op.ub], env[op.step]):
                self.set(iv, i)
                self.block(op.body.block)
        elif name == "scf.if":
            region = op.true_region if env[op.cond] else op.false_region
            results = self.block(region.block) if region.blocks else []
            for value, result in zip(op.results, results):
                self.set(value, result)
        elif name == "scf.while":
            while self.block(op.before_region.block)[0]:
                self.block(op.after_region.block)
        elif name != "func.return":
            raise NotImplementedError(name)


def run(kernel, args: list[int]) -> dict[int, int]:
    interpreter = _Interpreter(args)
    interpreter.block(kernel.function.body.block)
    return interpreter.l1


@settings(max_examples=100, deadline=None)
@given(a=U32, b=U32)
@example(a=0, b=0)
@example(a=2**32 - 1, b=2**32 - 1)
@example(a=3, b=999)
def test_kernel_arithmetic_matches_numpy_uint32(a, b):
    assert run(arithmetic, [a, b]) == reference(a, b)


def test_the_interpreter_can_tell_signed_from_unsigned():
    # a kernel using signed semantics would give a different answer here
    a, b = 2**31 + 5, 3
    got = run(arithmetic, [a, b])
    assert got[2] == ((a * b) % 2**32) // 3
    assert got[7] == 2               # a >= b unsigned (signed, a would be negative and a < b)
