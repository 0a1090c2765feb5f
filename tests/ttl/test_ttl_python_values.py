"""Python's meaning of values in kernels: ``a or b`` / ``a and b`` give the operand that decides (not
its truth) and stop at a compile-time operand that decides; truth values count 0 / 1 in arithmetic
(``(n > 1) + (k > 2)``, ``int(n > 1)``); ``abs()`` of a runtime integer; a helper whose nested
``def`` returns, or which returns a name holding a tuple beside tuple literals; a runtime conditional
expression of two tuples; ``sum()`` of runtime integers; list comprehensions over compile-time items
and starred unpacking; ``break`` and ``for ... else`` in a helper's loops; ``2 ** e`` of a runtime ``e``; a loop variable after a ``break``, and after a loop (its last item, or its value before a loop that did not run; an inner loop reusing an outer loop's variable); ``functools.partial`` and ``*args`` / ``**kwargs`` in calls; a loop appending runtime values to a list; ``~x``; ``//`` and ``%`` by a runtime or a negative divisor (signed
on the device too). Each node copies the
tile these values pick; the expected tiles come from the same code run as Python."""

from __future__ import annotations

import functools

import numpy as np

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import tile_tensor, zeros

NODES, STEPS, ROWS, COLS = 4, 4, 4, 4
TABLE = (2, 0, 3)


def pick(n, k):
    """The tile (row, column) node ``n`` copies at step ``k`` — Python, and the kernels' code."""
    def inner(v):
        if v > 2:
            return v - 3
        return v + 1

    def place(a, b):
        t = (a, b)
        if a == b:
            return t
        return b % 4, a % 4

    s = (2 and 3) + (0 or 1) + (n or 2) + (k and n)            # the deciding operands, not truths
    r = (s + (n > 1) + (k > 2) + int(n > 0)) % ROWS
    c = (abs(n - k) + inner(k) + (STEPS > 9 and TABLE[k] == 3) + (n < 2 or TABLE[0] == 2)) % COLS
    r, c = (r, c) if n > k else (c, (sum((n, k, 1)) + c) % COLS)
    first, *rest = [(i * 3) % 4 for i in range(4) if i != 2]        # 0, [3, 1]
    shifted = [n + i for i in (first, rest[0])]
    r = (r + shifted[1] + first) % ROWS
    count = 0
    for i in range(3):                   # a helper's loop leaving with break, and its else
        if (n + i) % 2 == 0:
            count += 1
        else:
            break
    else:
        count += 10
    for i in range(2):
        count += i
    else:
        count += 2 ** (k % 3)           # a power of two to a runtime exponent
    for v in range(k, 6):                # the loop variable after a break: the item it broke at
        if v * (n + 1) > 4:
            break
    c = (c + count + v + ~(k - 5)) % COLS
    w = k
    for w in range(n, 3):                # after the loop: its last item, or w's value before it
        count += 1
    for j in range(2):
        for j in range(3):               # an inner loop reusing the outer loop's variable
            count += 1
        w = w + j
    for u in range(3, -1, -1):           # counting down: u ends at 0
        count += u
    for t in range(n, n + 2):
        t = t * 2                        # the body assigns the variable
    c = (c + w + u + t) % COLS
    wrap = functools.partial(lambda a, b, m: (a + b) % m, m=COLS)
    spread = (c, k)
    c = wrap(*spread)                    # a partial of a lambda; runtime values spread with * and **
    r = wrap(r, **{"b": n})
    rows = []
    for i in range(2):
        rows.append(n * 2 + i)           # a loop filling a Python list with runtime values
    r = (r + rows[1]) % ROWS
    c = (c + (n - 5) // (k + 1) + (k - n) % -3) % COLS      # a runtime divisor, a negative one
    return place(r, c)


@ttl.operation(grid=(NODES,))
def picked(x, y):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(STEPS):
            with x_dfb.wait() as a, y_dfb.reserve() as o:
                o.store(a + a)

    @ttl.datamovement()
    def read():
        n = ttl.node(dims=1)
        for k in range(STEPS):
            r, c = pick(n, k)
            with x_dfb.reserve() as a:
                ttl.copy(x[r, c], a).wait()

    @ttl.datamovement()
    def write():
        n = ttl.node(dims=1)
        for k in range(STEPS):
            with y_dfb.wait() as o:
                ttl.copy(o, y[n, k]).wait()


def test_kernel_values_follow_python():
    x = tile_tensor((32 * ROWS, 32 * COLS), seed=8)
    y = zeros((32 * NODES, 32 * STEPS))
    picked(x, y)
    tiles = ttnn.to_numpy(x).reshape(ROWS, 32, COLS, 32)
    expected = np.block([[2 * tiles[pick(n, k)[0], :, pick(n, k)[1], :] for k in range(STEPS)]
                         for n in range(NODES)])
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


def test_its_reader_compiles_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from ttl_helpers import recorded_programs

    with recorded_programs() as programs:
        picked(tile_tensor((32 * ROWS, 32 * COLS), seed=9), zeros((32 * NODES, 32 * STEPS)))
    program = programs[0]
    reader = next(k for k in program.kernels if k.name == "read")
    path = tmp_path / "read.cpp"
    path.write_text(emit_kernel(reader.function))
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader", check_kernel.accessor_compile_args(
        program, reader)))
