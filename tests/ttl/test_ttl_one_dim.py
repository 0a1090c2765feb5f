"""1-D tensors and 1-D dataflow buffers: ``a[t]`` is tile ``t`` of a 1-D tensor (32 elements), a
buffer of ``shape=(n,)`` holds blocks of ``n`` such tiles, and ``broadcast(x, dims=[0])`` of a
one-element block replicates its element. The device holds a 1-D tensor as one row (elements in
row 0 of each tile, the last tile padded). Simulated against numpy; the kernels' C++ is checked
against the real headers."""

from __future__ import annotations

import numpy as np
import pytest
from checkkernel import accessor_compile_args, check_kernels, require_accepted

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError
from tilefold.program.from_ttl import circular_buffer_table
from ttl_helpers import compiled, expect_error

BLOCK = 2


@ttl.operation(grid=(1, 1))
def add_and_copy(a, b, total, same):
    """total = a + b and same = a, over blocks of BLOCK tiles of 1-D tensors."""
    blocks = -(-a.shape[0] // 32) // BLOCK
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK,))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK,))
    total_dfb = ttl.make_dataflow_buffer_like(total, shape=(BLOCK,))
    same_dfb = ttl.make_dataflow_buffer_like(same, shape=(BLOCK,))

    @ttl.datamovement()
    def read():
        for i in range(blocks):
            with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
                xa = ttl.copy(a[i * BLOCK:(i + 1) * BLOCK], a_blk)
                xb = ttl.copy(b[i * BLOCK:(i + 1) * BLOCK], b_blk)
                xa.wait()
                xb.wait()

    @ttl.compute()
    def compute():
        for _ in range(blocks):
            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, total_dfb.reserve() as t_blk, \
                    same_dfb.reserve() as s_blk:
                t_blk.store(a_blk + b_blk)
                s_blk.store(a_blk)

    @ttl.datamovement()
    def write():
        for i in range(blocks):
            with total_dfb.wait() as t_blk, same_dfb.wait() as s_blk:
                ttl.copy(t_blk, total[i * BLOCK:(i + 1) * BLOCK]).wait()
                ttl.copy(s_blk, same[i * BLOCK:(i + 1) * BLOCK]).wait()


@ttl.operation(grid=(1, 1))
def scale_and_shift(a, s, y):
    """y = a * s + 1 for a 1-D ``a`` and a one-element ``s``, broadcast over blocks of BLOCK tiles."""
    blocks = a.shape[0] // 32 // BLOCK
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK,))
    s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1,), block_count=1)
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK,))

    @ttl.datamovement()
    def read():
        with s_dfb.reserve() as s_blk:
            ttl.copy(s[0], s_blk).wait()
        for i in range(blocks):
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[i * BLOCK:(i + 1) * BLOCK], a_blk).wait()

    @ttl.compute()
    def compute():
        with s_dfb.wait() as s_blk:
            for _ in range(blocks):
                with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
                    y_blk.store(a_blk * ttl.math.broadcast(s_blk, y_blk, dims=[0]) + 1.0)

    @ttl.datamovement()
    def write():
        for i in range(blocks):
            with y_dfb.wait() as y_blk:
                ttl.copy(y_blk, y[i * BLOCK:(i + 1) * BLOCK]).wait()


def _vector(n, seed, dtype=ttnn.bfloat16):
    values = np.random.default_rng(seed).uniform(-2, 2, n).astype(np.float32)
    t = ttnn.from_numpy(values, dtype=dtype, layout=ttnn.TILE_LAYOUT)
    return t, ttnn.to_numpy(t)          # the values as the device holds them


@pytest.mark.parametrize("n", [256, 250], ids=["whole_tiles", "padded_last_tile"])
def test_1d_add_and_copy_over_several_tiles_matches_numpy(n):
    a, a_np = _vector(n, 1)
    b, b_np = _vector(n, 2)
    total = ttnn.zeros((n,), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    same = ttnn.zeros((n,), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    add_and_copy(a, b, total, same)
    expected = ttnn.to_numpy(ttnn.from_numpy(a_np + b_np, dtype=ttnn.bfloat16))     # bfloat16 on pack
    assert ttnn.to_numpy(total).shape == (n,)
    np.testing.assert_array_equal(ttnn.to_numpy(total), expected)
    np.testing.assert_array_equal(ttnn.to_numpy(same), a_np)


def test_one_element_operand_broadcasts_over_a_multi_tile_1d_block():
    a, a_np = _vector(256, 3, ttnn.float32)
    s = ttnn.from_numpy(np.array([-0.75], dtype=np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    y = ttnn.empty((256,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    scale_and_shift(a, s, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), a_np * -0.75 + 1.0, rtol=1e-6, atol=1e-6)


@ttl.operation(grid=(1, 1))
def vector_sum(a, y):
    """y = sum(a) over the two tiles of a 1-D ``a``: reduce_sum along a 1-D block's one dimension."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2,))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1,))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as a_blk:
            ttl.copy(a[0:2], a_blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a_blk, y_dfb.reserve() as y_blk:
            y_blk.store(ttl.math.reduce_sum(a_blk, dims=[0], shape=(1,)))

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0]).wait()


def test_reduce_sum_along_a_1d_block_sums_its_elements():
    a, a_np = _vector(64, 7, ttnn.float32)
    y = ttnn.zeros((1,), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    vector_sum(a, y)
    assert ttnn.to_numpy(y).shape == (1,)
    np.testing.assert_allclose(ttnn.to_numpy(y), [a_np.astype(np.float64).sum()], rtol=1e-2, atol=2e-2)


def test_a_1d_buffer_is_a_row_of_tiles_on_the_device():
    a, _ = _vector(256, 4)
    s = ttnn.from_numpy(np.array([2.0], dtype=np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((256,), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    tables = {e.name: (e.shape, e.num_pages) for e in circular_buffer_table(compiled(scale_and_shift, a, s, y).module)}
    assert tables["a_dfb"] == ((1, BLOCK), 2 * BLOCK)      # blocks of BLOCK tiles, two of them
    assert tables["s_dfb"] == ((1, 1), 1)


def test_1d_program_kernels_pass_check_kernel(tmp_path):
    a, _ = _vector(256, 5)
    s = ttnn.from_numpy(np.array([2.0], dtype=np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((256,), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    program = compiled(scale_and_shift, a, s, y).program
    jobs = []
    for k in program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, k)))
    for result in check_kernels(jobs):
        require_accepted(result)


def test_the_tt_lang_script_form_runs_under_sim(tmp_path, capsys):
    """``from sim import ttl, ttnn``, ``@ttl.kernel`` and 1-D host tensors as TT-Lang scripts write them."""
    from tilefold.cli.main import main as cli_main

    script = tmp_path / "one_dim.py"
    script.write_text(
        "import numpy as np\n"
        "from sim import ttl, ttnn\n\n\n"
        "@ttl.kernel(grid=(1, 1))\n"
        "def offset(A, B, Y):\n"
        "    NT = A.shape[0] // ttl.TILE_SHAPE[0]\n"
        "    a_dfb = ttl.make_dataflow_buffer_like(A, shape=(1,))\n"
        "    b_dfb = ttl.make_dataflow_buffer_like(B, shape=(1,))\n"
        "    y_dfb = ttl.make_dataflow_buffer_like(Y, shape=(1,))\n\n"
        "    @ttl.datamovement()\n"
        "    def read():\n"
        "        for nt in range(NT):\n"
        "            with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:\n"
        "                xa = ttl.copy(A[nt], a_blk)\n"
        "                xb = ttl.copy(B[0], b_blk)\n"
        "                xa.wait()\n"
        "                xb.wait()\n\n"
        "    @ttl.compute()\n"
        "    def compute():\n"
        "        for _ in range(NT):\n"
        "            with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:\n"
        "                y_blk.store(a_blk**2 + ttl.math.broadcast(b_blk**2, y_blk, dims=[0]))\n\n"
        "    @ttl.datamovement()\n"
        "    def write():\n"
        "        for nt in range(NT):\n"
        "            with y_dfb.wait() as y_blk:\n"
        "                ttl.copy(y_blk, Y[nt]).wait()\n\n\n"
        "A = ttnn.from_numpy(np.full((128,), 4.0, dtype=np.float32))\n"
        "B = ttnn.from_numpy(np.array([3.0], dtype=np.float32))\n"
        "Y = ttnn.empty((128,), dtype=ttnn.float32)\n"
        "offset(A, B, Y)\n"
        "print('RESULT', sorted(set(Y.to_numpy().tolist())), Y.to_numpy().shape)\n")
    assert cli_main(["sim", str(script)]) == 0
    assert "RESULT [25.0] (128,)" in capsys.readouterr().out


# -- errors at the user's line ---------------------------------------------------------------------


def _one_tile_tensors():
    a, _ = _vector(64, 6)
    s = ttnn.from_numpy(np.array([1.0], dtype=np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y = ttnn.zeros((64,), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return a, s, y


def test_broadcast_along_a_dimension_a_1d_block_lacks_names_it():
    @ttl.operation(grid=(1, 1))
    def bad(a, s, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1,))
        s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1,))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1,))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as a_blk, s_dfb.reserve() as s_blk:
                ttl.copy(a[0], a_blk).wait()
                ttl.copy(s[0], s_blk).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as a_blk, s_dfb.wait() as s_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk + ttl.math.broadcast(s_blk, y_blk, dims=[1]))  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as y_blk:
                ttl.copy(y_blk, y[0]).wait()

    expect_error(lambda: bad(*_one_tile_tensors()), test_broadcast_along_a_dimension_a_1d_block_lacks_names_it,
                 KernelError, "broadcast: Invalid broadcast dimension 1", "1-D", "no dimension 1")


def test_a_1d_block_and_a_2d_block_do_not_mix():
    @ttl.operation(grid=(1, 1))
    def bad(a, s, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1,))
        s_dfb = ttl.make_dataflow_buffer_like(s, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1,))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as a_blk, s_dfb.reserve() as s_blk:
                ttl.copy(a[0], a_blk).wait()
                ttl.copy(s[0, 0], s_blk).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as a_blk, s_dfb.wait() as s_blk, y_dfb.reserve() as y_blk:
                y_blk.store(a_blk + s_blk)  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as y_blk:
                ttl.copy(y_blk, y[0]).wait()

    expect_error(lambda: bad(*_one_tile_tensors()), test_a_1d_block_and_a_2d_block_do_not_mix, KernelError,
                 "shapes (1,) and 1x1")


def test_a_tile_index_past_the_end_of_a_1d_tensor_names_the_tiles():
    @ttl.operation(grid=(1, 1))
    def bad(a, s, y):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1,))

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as a_blk:
                ttl.copy(a[2], a_blk).wait()  # error

        @ttl.compute()
        def compute():
            with a_dfb.wait() as a_blk:
                pass

    expect_error(lambda: bad(*_one_tile_tensors()), test_a_tile_index_past_the_end_of_a_1d_tensor_names_the_tiles,
                 KernelError, "outside the tensor (2 tiles; shape 2)")
