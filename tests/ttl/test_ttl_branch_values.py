"""Block values first assigned under a condition, as kernels are often written:
``if k == 0: acc = a @ b`` / ``else: acc = acc + a @ b`` in a K loop (its first iteration is built
on its own, where ``k`` is known, and the rest of the loop knows ``k`` is past it), and ``if i == 0:
v = exp(x)`` / ``else: v = -x`` or ``v = exp(x) if i == 0 else -x`` on a node coordinate followed
by ``o.store(v)`` (the statements reading ``v`` are built at the end of both branches). Each gives
the same bits as the same kernel written without the condition."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import copy_kernels, node_column_kernels, tile_tensor, zeros


def _matmul(form: str):
    @ttl.operation(grid=(1, 1))
    def k_loop(a, b, out):
        kblocks = a.shape[1] // 32
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

        @ttl.compute()
        def compute():
            with o_dfb.reserve() as o:
                if form == "peeled":
                    with a_dfb.wait() as ab, b_dfb.wait() as bb:
                        acc = ab @ bb
                    for _ in range(1, kblocks):
                        with a_dfb.wait() as ab, b_dfb.wait() as bb:
                            acc = acc + ab @ bb
                else:
                    for k in range(kblocks):
                        with a_dfb.wait() as ab, b_dfb.wait() as bb:
                            if form == "k == 0" and k == 0 or form == "not k" and not k:
                                acc = ab @ bb
                            elif form == "k > 0" and k > 0:
                                acc = acc + ab @ bb
                            elif form == "k > 0":
                                acc = ab @ bb
                            else:
                                acc = acc + ab @ bb
                o.store(acc)

        @ttl.datamovement()
        def read():
            for k in range(kblocks):
                with a_dfb.reserve() as ka, b_dfb.reserve() as kb:
                    ttl.copy(a[0:1, k:k + 1], ka).wait()
                    ttl.copy(b[k:k + 1, 0:2], kb).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0:1, 0:2]).wait()

    return k_loop


@pytest.mark.parametrize("k_tiles", [1, 4])
def test_an_accumulator_first_assigned_on_the_first_k_step_matches_the_peeled_loop(k_tiles):
    a, b = tile_tensor((32, 32 * k_tiles), seed=1), tile_tensor((32 * k_tiles, 64), seed=2)
    results = {}
    for form in ("peeled", "k == 0", "not k", "k > 0"):
        out = zeros((32, 64))
        _matmul(form)(a, b, out)
        results[form] = ttnn.to_numpy(out)
    for form, got in results.items():
        np.testing.assert_array_equal(got, results["peeled"], err_msg=form)
    reference = ttnn.to_numpy(a).astype(np.float64) @ ttnn.to_numpy(b)
    np.testing.assert_allclose(results["peeled"], reference, rtol=0.02, atol=0.05 * np.abs(reference).max())


def _per_node(form: str):
    @ttl.operation(grid=(2, 1))
    def chosen(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            i = ttl.node(dims=1)
            with x_dfb.wait() as xb, o_dfb.reserve() as o:
                if form == "stored in branches":
                    if i == 0:
                        o.store(ttl.math.exp(xb))
                    else:
                        o.store(ttl.math.neg(xb) * xb)
                elif form == "if":
                    if i == 0:
                        v = ttl.math.exp(xb)
                    else:
                        v = ttl.math.neg(xb)
                        v = v * xb
                    o.store(v)
                else:
                    v = ttl.math.exp(xb) if i == 0 else ttl.math.neg(xb) * xb
                    o.store(v)

        node_column_kernels(x_dfb, o_dfb, x, out)

    return chosen


def test_a_block_value_chosen_by_a_node_coordinate_is_stored_as_each_branch_computes_it():
    x = tile_tensor((32, 64), seed=4)
    results = {}
    for form in ("stored in branches", "if", "conditional expression"):
        out = zeros((32, 64))
        _per_node(form)(x, out)
        results[form] = ttnn.to_numpy(out)
    for form, got in results.items():
        np.testing.assert_array_equal(got, results["stored in branches"], err_msg=form)
    v = ttnn.to_numpy(x)
    np.testing.assert_allclose(results["if"][:, :32], np.exp(v[:, :32]), rtol=0.02)
    np.testing.assert_allclose(results["if"][:, 32:], -v[:, 32:] ** 2, rtol=0.02, atol=1e-2)


@ttl.operation(grid=(1, 1))
def loose_softplus(x, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as xb, o_dfb.reserve() as o:
            o.store(ttl.math.softplus(xb, 1.0, 20.0))  # warned

    copy_kernels(x_dfb, o_dfb, x, out)


def test_a_reciprocal_parameter_that_is_not_the_reciprocal_warns_and_is_used_as_given():
    x, out = tile_tensor((32, 32), seed=5, dtype="float32"), zeros((32, 32), dtype="float32")
    with pytest.warns(UserWarning, match=r"beta_reciprocal=20.0 is not 1/beta \(beta=1.0\)") as caught:
        loose_softplus(x, out)
    assert caught[0].filename == __file__
    v = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(out), 20 * np.log1p(np.exp(v)), rtol=0.02)


def test_the_peeled_and_joined_compute_kernels_compile_against_the_real_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel
    from ttl_helpers import compiled

    programs = [compiled(_matmul("k == 0"), tile_tensor((32, 128)), tile_tensor((128, 64)), zeros((32, 64))).program,
                compiled(_per_node("conditional expression"), tile_tensor((32, 64)), zeros((32, 64))).program]
    jobs = []
    for n, program in enumerate(programs):
        kernel = next(k for k in program.kernels if k.is_compute)
        path = tmp_path / f"compute_{n}.cpp"
        path.write_text(emit_kernel(kernel.function))
        jobs.append((path, "compute", check_kernel.accessor_compile_args(program, kernel) or None))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)


@ttl.operation(grid=(2, 1))
def two_guarded_steps(x, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    s_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        i = ttl.node(dims=1)
        first = s_dfb.reserve()
        first.store(x_dfb.wait())
        if i == 0:
            state = s_dfb.wait()
            step = s_dfb.reserve()
            step.store(state + state)
        if i == 0:
            state = s_dfb.wait()
            step = s_dfb.reserve()
            step.store(state * state)
        o = o_dfb.reserve()
        o.store(s_dfb.wait())

    node_column_kernels(x_dfb, o_dfb, x, out)


def test_names_an_if_assigns_and_a_later_if_assigns_again_keep_each_ifs_releases():
    # (the second if reads state only after assigning it: the first if is not joined with it)
    x, out = tile_tensor((32, 64), seed=6, dtype="float32"), zeros((32, 64), dtype="float32")
    two_guarded_steps(x, out)
    v, got = ttnn.to_numpy(x), ttnn.to_numpy(out)
    np.testing.assert_allclose(got[:, :32], (2 * v[:, :32]) ** 2, rtol=1e-5)      # node 0: both steps
    np.testing.assert_array_equal(got[:, 32:], v[:, 32:])                          # node 1: neither


@ttl.operation(grid=(1, 1))
def per_block_maximum(x, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        for b in range(2):
            with o_dfb.reserve() as o:
                acc = None                  # each iteration starts afresh: nothing is handed on
                for _ in range(2):
                    with x_dfb.wait() as xb:
                        m = ttl.math.abs(xb)
                        acc = m if acc is None else ttl.math.max(acc, m)
                if b == 0:
                    acc = acc + ttl.block.fill(1.0, shape=acc.shape)
                o.store(acc)

    @ttl.datamovement()
    def read():
        for t in range(4):
            with x_dfb.reserve() as blk:
                ttl.copy(x[0, t], blk).wait()

    @ttl.datamovement()
    def write():
        for b in range(2):
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, b]).wait()


def test_a_loop_testing_its_variable_whose_body_starts_a_name_afresh_is_not_peeled():
    x, out = tile_tensor((32, 128), seed=7, dtype="float32"), zeros((32, 64), dtype="float32")
    per_block_maximum(x, out)
    v = ttnn.to_numpy(x)
    tiles = [np.abs(v[:, 32 * t:32 * t + 32]) for t in range(4)]
    expected = np.concatenate([np.maximum(tiles[0], tiles[1]) + 1, np.maximum(tiles[2], tiles[3])], axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(out), expected, rtol=1e-6)
