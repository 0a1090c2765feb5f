"""Tile nests run as block operations: the same bytes, DST, clocks, counters and errors as the calls
one at a time (the batch forced off by replacing ``tile_batches.flush`` with the call-by-call path)."""

from __future__ import annotations

import contextlib
import io
import runpy

import numpy as np
import pytest

from tilefold.errors import CircularBufferError, DstError, TilefoldError
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import tile_batches
from tilefold.sim.device import Device

from simhelpers import A, B, EXAMPLES, OUT, example_scripts, random_tiles, run_two_input, step_model, where

SCRIPTS = example_scripts()


@contextlib.contextmanager
def one_call_at_a_time():
    original = tile_batches.flush
    tile_batches.flush = lambda ctx, queue, key=None: tile_batches._one_by_one(ctx, queue)
    try:
        yield
    finally:
        tile_batches.flush = original


@pytest.fixture
def batches(monkeypatch):
    """Counts the queues that ran as a batch."""
    count = [0]
    apply_time = tile_batches._Plan.apply_time

    def counted(plan):
        count[0] += 1
        apply_time(plan)

    monkeypatch.setattr(tile_batches._Plan, "apply_time", counted)
    return count


def same_run(a, b) -> None:
    assert a.perf.cycles == b.perf.cycles
    assert a.perf.counters == b.perf.counters
    for name in a.pages:
        np.testing.assert_array_equal(a.pages[name], b.pages[name])
    for ta, tb in zip(a.perf.threads, b.perf.threads):
        assert (ta.kernel, ta.role) == (tb.kernel, tb.role)
        np.testing.assert_array_equal(ta.end_cycles, tb.end_cycles)
        np.testing.assert_array_equal(ta.busy_cycles, tb.busy_cycles)
        np.testing.assert_array_equal(ta.stall_cycles, tb.stall_cycles)


@pytest.fixture
def compare_modes(monkeypatch, batches):
    """Every Device.run also runs with tile calls one at a time, and must give the same run."""
    original = Device.run
    runs = []

    def run(self, program, inputs=None, **kwargs):
        before = batches[0]
        try:
            batched = original(self, program, inputs, **kwargs)
        except TilefoldError as err:
            with one_call_at_a_time(), pytest.raises(type(err)) as single:
                original(self, program, inputs, **kwargs)
            assert str(single.value) == str(err)
            runs.append(batches[0] - before)
            raise
        with one_call_at_a_time():
            single = original(self, program, inputs, **kwargs)
        same_run(batched, single)
        runs.append(batches[0] - before)
        return batched

    monkeypatch.setattr(Device, "run", run)
    return runs


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_examples_batched_equal_one_call_at_a_time(script, compare_modes):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(TilefoldError):
        if script.parent.name == "pykernel":
            runpy.run_path(str(script), run_name="__main__")
        else:
            runpy.run_path(str(script), run_name="example")["main"]()
    assert compare_modes, f"{script.name} ran nothing on the device"


def test_the_ttl_examples_do_run_batches(compare_modes):
    for name in ("eltwise_multitile", "softmax", "matmul_single_node", "broadcast"):
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(str(EXAMPLES / "ttl" / f"{name}.py"), run_name="example")["main"]()
    assert all(compare_modes), compare_modes


# -- kernels with tile loops: numerics, fp32 DST, formats, broadcasts, errors ---------------------------


@compute_kernel
def chain_loop():
    n = get_arg_val(0)
    init_sfpu(A, OUT)
    cb_wait_front(A, n)
    cb_wait_front(B, n)
    cb_reserve_back(OUT, n)
    for block in range(n // 2):
        tile_regs_acquire()
        for i in range(2):
            copy_tile_init(A)
            copy_tile(A, block * 2 + i, 0)
            copy_tile(B, block * 2 + i, 1)
            exp_tile_init()
            exp_tile(0)
            mul_binary_tile_init()
            mul_binary_tile(0, 1, 2 + i)
            relu_tile_init()
            relu_tile(2 + i)
        tile_regs_commit()
        tile_regs_wait()
        for i in range(2):
            pack_tile(2 + i, OUT)
        tile_regs_release()
    cb_push_back(OUT, n)
    cb_pop_front(A, n)
    cb_pop_front(B, n)


@compute_kernel
def fpu_loop():
    n = get_arg_val(0)
    binary_op_init_common(A, B, OUT)
    cb_wait_front(A, n)
    cb_wait_front(B, n)
    cb_reserve_back(OUT, n)
    for t in range(n):
        tile_regs_acquire()
        for i in range(1):
            add_bcast_rows_init_short(A, B)
            add_tiles_bcast_rows(A, B, t, t, 0)
            fill_tile_init()
            fill_tile(1, 0.5)
            sub_binary_tile_init()
            sub_binary_tile(0, 1, 2)
        tile_regs_commit()
        tile_regs_wait()
        for i in range(1):
            pack_tile(2, OUT, t, out_of_order_output=True)
        tile_regs_release()
    cb_push_back(OUT, n)
    cb_pop_front(A, n)
    cb_pop_front(B, n)


@pytest.mark.parametrize("kernel", [chain_loop, fpu_loop], ids=["sfpu", "fpu"])
@pytest.mark.parametrize("dtype,out_dtype,fp32", [("bfloat16", "bfloat16", False), ("float32", "float32", True),
                                                  ("bfloat16", "bfloat8_b", False), ("float32", "bfloat16", False)])
def test_tile_loops_match_one_call_at_a_time(kernel, dtype, out_dtype, fp32, batches):
    from tilefold.program import ComputeConfig

    a, b = random_tiles((64, 256), 1), random_tiles((64, 256), 2)
    config = ComputeConfig(fp32_dest_acc_en=fp32)
    batched = run_two_input(kernel, a, b, (64, 256), dtype=dtype, out_dtype=out_dtype, config=config,
                            compute_args=[16])
    assert batches[0] > 0
    with one_call_at_a_time():
        single = run_two_input(kernel, a, b, (64, 256), dtype=dtype, out_dtype=out_dtype, config=config,
                               compute_args=[16])
    same_run(batched, single)


@compute_kernel
def reads_unwritten():
    init_sfpu(A, OUT)
    exp_tile_init()
    cb_wait_front(A, 2)
    cb_reserve_back(OUT, 2)
    tile_regs_acquire()
    for i in range(2):
        copy_tile(A, i, i)
        exp_tile(i + 2)  # reads a slot nothing wrote
    tile_regs_commit()
    tile_regs_wait()
    tile_regs_release()
    cb_push_back(OUT, 2)
    cb_pop_front(A, 2)


@compute_kernel
def packs_unreserved():
    init_sfpu(A, OUT)
    cb_wait_front(A, 2)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    copy_tile(A, 0, 0)
    tile_regs_commit()
    tile_regs_wait()
    for i in range(2):
        pack_tile(0, OUT)  # the second page is not reserved
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 2)


@compute_kernel
def copies_unwaited():
    init_sfpu(A, OUT)
    cb_wait_front(A, 1)
    cb_reserve_back(OUT, 1)
    tile_regs_acquire()
    for i in range(2):
        copy_tile(A, i, i)  # tile 1 was not waited for
    tile_regs_commit()
    tile_regs_wait()
    pack_tile(0, OUT)
    tile_regs_release()
    cb_push_back(OUT, 1)
    cb_pop_front(A, 1)


@pytest.mark.parametrize("kernel,error,marker", [
    (reads_unwritten, DstError, "exp_tile(i + 2)"),
    (packs_unreserved, CircularBufferError, "pack_tile(0, OUT)"),
    (copies_unwaited, CircularBufferError, "copy_tile(A, i, i)"),
])
def test_errors_in_tile_loops_name_the_call(kernel, error, marker):
    a = random_tiles((64, 32), 3)
    messages = []
    for mode in (contextlib.nullcontext(), one_call_at_a_time()):
        with mode, pytest.raises(error) as info:
            run_two_input(kernel, a, a, (64, 32))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(where(kernel, marker) + ":"), messages[0]


# -- loops over rounds of DST (acquire ... release in the loop) run as one batch ---------------


def test_a_loop_over_rounds_of_dst_is_one_batch(batches):
    a, b = random_tiles((64, 256), 1), random_tiles((64, 256), 2)
    run_two_input(chain_loop, a, b, (64, 256), compute_args=[16])
    assert batches[0] == 1          # eight rounds of acquire, commit, wait, release: one queue
    # (a hand-over in the wrong order inside such a loop is rejected before the run, by the
    # kernel verifier, so a batch never meets one)



# -- matmul K steps inside a tile nest -----------------------------------------------------------


@compute_kernel
def matmul_rounds():
    mt = get_arg_val(0)
    kt = get_arg_val(1)
    nt = get_arg_val(2)
    mm_block_init(A, B, OUT, 0, nt, 1, kt)
    cb_wait_front(A, mt * kt)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, mt * nt)
    for m in range(mt):            # one round of DST per output row: a nest of matmul, SFPU and packs
        tile_regs_acquire()
        for k in range(kt):
            mm_block_init_short(A, B, 0, nt, 1, kt)
            matmul_block(A, B, m * kt + k, k * nt, 0, 0, nt, 1, kt)
        for j in range(nt):
            relu_tile_init()
            relu_tile(j)
        tile_regs_commit()
        tile_regs_wait()
        for j in range(nt):
            pack_tile(j, OUT, m * nt + j, out_of_order_output=True)
        tile_regs_release()
    cb_push_back(OUT, mt * nt)
    cb_pop_front(A, mt * kt)
    cb_pop_front(B, kt * nt)


@compute_kernel
def matmul_left_pending():
    kt = get_arg_val(0)
    nt = get_arg_val(1)
    mm_block_init(A, B, OUT, 0, nt, 1, kt)
    cb_wait_front(A, kt)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, nt)
    tile_regs_acquire()
    for k in range(kt):            # a nest of K steps only: its run is still open when the nest ends
        matmul_block(A, B, k, k * nt, 0, 0, nt, 1, kt)
    tile_regs_commit()
    tile_regs_wait()
    for j in range(nt):
        pack_tile(j, OUT)
    tile_regs_release()
    cb_push_back(OUT, nt)
    cb_pop_front(A, kt)
    cb_pop_front(B, kt * nt)


@pytest.mark.parametrize("fidelity", ["HiFi4", "HiFi3", "LoFi"])
@pytest.mark.parametrize("fp32", [False, True])
def test_matmul_in_tile_nests_matches_one_call_at_a_time(fidelity, fp32, batches, monkeypatch):
    """The nest's three rounds of DST each make a one-row matmul run over the next in0 row: the
    batch multiplies them as one three-row block (``_Plan._chain_values``), with the numbers and
    cycles of the calls made one at a time."""
    from tilefold.program import ComputeConfig

    config = ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=fp32)
    a, b = random_tiles((96, 128), 7), random_tiles((128, 64), 8)
    chains = []
    chain_values = tile_batches._Plan._chain_values
    monkeypatch.setattr(tile_batches._Plan, "_chain_values",
                        lambda plan, chain: chains.append(len(chain)) or chain_values(plan, chain))
    batched = run_two_input(matmul_rounds, a, b, (96, 64), config=config, compute_args=[3, 4, 2])
    assert batches[0] == 1 and chains == [3]
    with one_call_at_a_time():
        single = run_two_input(matmul_rounds, a, b, (96, 64), config=config, compute_args=[3, 4, 2])
    same_run(batched, single)
    if fidelity == "HiFi4":
        _close_to_steps(batched.outputs["out"], np.maximum(step_model(a, b, fp32), 0), fp32)

    a, b = random_tiles((32, 160), 9), random_tiles((160, 96), 10)
    batches[0] = 0
    batched = run_two_input(matmul_left_pending, a, b, (32, 96), config=config, compute_args=[5, 3])
    assert batches[0] == 2          # the K loop and the pack loop
    with one_call_at_a_time():
        single = run_two_input(matmul_left_pending, a, b, (32, 96), config=config, compute_args=[5, 3])
    same_run(batched, single)
    if fidelity == "HiFi4":
        _close_to_steps(batched.outputs["out"], step_model(a, b, fp32), fp32)


@compute_kernel
def matmul_twice_over_k():
    kt = get_arg_val(0)
    nt = get_arg_val(1)
    mm_block_init(A, B, OUT, 0, nt, 2, kt)
    cb_wait_front(A, 2 * kt)
    cb_wait_front(B, kt * nt)
    cb_reserve_back(OUT, 2 * nt)
    tile_regs_acquire()
    for k in range(kt):            # a run of K steps into empty DST tiles
        matmul_block(A, B, k, k * nt, 0, 0, nt, 2, kt)
    for k in range(kt):            # the same again, added to what the first run left
        matmul_block(A, B, k, k * nt, 0, 0, nt, 2, kt)
    tile_regs_commit()
    tile_regs_wait()
    for j in range(2 * nt):
        pack_tile(j, OUT)
    tile_regs_release()
    cb_push_back(OUT, 2 * nt)
    cb_pop_front(A, 2 * kt)
    cb_pop_front(B, kt * nt)


@pytest.mark.parametrize("fidelity", ["HiFi4", "HiFi3", "LoFi"])
def test_long_k_runs_into_large_blocks_match_one_call_at_a_time(fidelity, batches, monkeypatch):
    """K runs of four steps into a 2x4-tile block of a 16-bit DST (each step rounds): the batch
    keeps the running sum row-major (``PendingMatmul._add_steps``) and gives the numbers and
    cycles of the calls one at a time, into empty DST tiles and into tiles holding the first
    run's sum."""
    from tilefold.program import ComputeConfig
    from tilefold.sim import matmul_blocks

    config = ComputeConfig(math_fidelity=fidelity)
    a, b = random_tiles((64, 128), 11), random_tiles((128, 128), 12)
    sums = []
    add_steps = matmul_blocks.PendingMatmul._add_steps
    monkeypatch.setattr(matmul_blocks.PendingMatmul, "_add_steps",
                        lambda pending, steps: sums.append(pending.started) or add_steps(pending, steps))
    batched = run_two_input(matmul_twice_over_k, a, b, (64, 128), config=config, compute_args=[4, 4])
    assert sums == [False, True]
    with one_call_at_a_time():
        single = run_two_input(matmul_twice_over_k, a, b, (64, 128), config=config, compute_args=[4, 4])
    same_run(batched, single)
    monkeypatch.setattr(matmul_blocks, "_FACE_ROWS_MIN", 1 << 40)       # each step's product into DST on its own
    step_by_step = run_two_input(matmul_twice_over_k, a, b, (64, 128), config=config, compute_args=[4, 4])
    same_run(batched, step_by_step)
    if fidelity == "HiFi4":
        doubled = np.concatenate([a, a], axis=1), np.concatenate([b, b], axis=0)
        assert np.array_equal(batched.outputs["out"], step_model(*doubled, False))


def _close_to_steps(out, model, fp32: bool) -> None:
    """A 32-bit DST sums a run's K steps in another order (see tilefold.sim.matmul_blocks)."""
    if fp32:
        np.testing.assert_allclose(out, model, rtol=2 ** -7, atol=1e-6)
    else:
        assert np.array_equal(out, model)


@pytest.mark.parametrize("fidelity", ["HiFi4", "HiFi3"])
def test_row_runs_of_one_in0_row_share_one_product_with_the_same_numbers(fidelity, monkeypatch):
    """Sub-blocked matmuls multiply one in0 row segment per run (rt = 1); the segments of one in0
    row are multiplied together in one product (``BlockProducts._segment``). Every element is the
    same exact sum as each run's own product: outputs and cycles equal the per-run products'."""
    from tilefold.program import ComputeConfig
    from tilefold.sim import matmul_blocks

    config = ComputeConfig(math_fidelity=fidelity, fp32_dest_acc_en=True)
    a, b = random_tiles((96, 128), 11), random_tiles((128, 64), 12)
    calls = []
    segment = matmul_blocks.BlockProducts._segment

    def counted(self, *args):
        result = segment(self, *args)
        calls.append(result is not None)
        return result

    monkeypatch.setattr(matmul_blocks.BlockProducts, "_segment", counted)
    monkeypatch.setattr(tile_batches._Plan, "_chains", lambda plan, runs: [[run] for run in runs])  # run by run
    shared = run_two_input(matmul_rounds, a, b, (96, 64), config=config, compute_args=[3, 4, 2])
    assert any(calls)
    monkeypatch.setattr(matmul_blocks.BlockProducts, "_segment", lambda self, *args: None)
    own = run_two_input(matmul_rounds, a, b, (96, 64), config=config, compute_args=[3, 4, 2])
    same_run(shared, own)
