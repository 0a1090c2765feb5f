"""A tile nest whose calls depend only on values fixed for the whole kernel is queued once per thread
and replayed after: the same bytes, clocks and counters as queueing it every time; a nest that reads
a value of an enclosing loop, or a local variable, is queued every time."""

from __future__ import annotations

import contextlib
import io
import runpy

import numpy as np
import pytest
from xdsl.dialects import arith, scf

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.ir.tile_loops import nest_inputs
from tilefold.sim.compute_api import ComputeApi
from tilefold.sim.device import Device

from compute_ir import compute_kernel
from simhelpers import EXAMPLES

TILE = 32
BLOCK, K_BLOCKS, BLOCKS = 2, 3, 2      # 2x2-tile blocks, 3 K steps per output block, 2x2 output blocks


@ttl.operation(grid=(1, 1))
def accumulate(a, b, y):
    """The K loop of TT-Lang's multi-tile matmul tutorial: the running sum goes through a buffer."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(BLOCK, BLOCK), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(BLOCK, BLOCK), block_count=2)
    acc_dfb = ttl.make_dataflow_buffer_like(y, shape=(BLOCK, BLOCK), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(BLOCKS * BLOCKS):
            with acc_dfb.reserve() as acc:
                acc.store(ttl.block.fill(0, shape=acc.shape))
            for _ in range(K_BLOCKS):
                with a_dfb.wait() as x, b_dfb.wait() as w, acc_dfb.wait() as pre:
                    with acc_dfb.reserve() as acc:
                        acc.store(pre + x @ w)
            with acc_dfb.wait() as done:
                pass

    @ttl.datamovement()
    def read():
        for m in range(BLOCKS):
            for n in range(BLOCKS):
                for k in range(K_BLOCKS):
                    with a_dfb.reserve() as x, b_dfb.reserve() as w:
                        ttl.copy(a[m * BLOCK:(m + 1) * BLOCK, k * BLOCK:(k + 1) * BLOCK], x).wait()
                        ttl.copy(b[k * BLOCK:(k + 1) * BLOCK, n * BLOCK:(n + 1) * BLOCK], w).wait()

    @ttl.datamovement()
    def write():
        pass


@pytest.fixture
def runs(monkeypatch):
    """The results of every Device.run, and the number of replayed nests."""
    original_run, original_replay = Device.run, ComputeApi.replay_tile_nest
    state = {"runs": [], "replays": 0}

    def run(self, program, inputs=None, **kwargs):
        result = original_run(self, program, inputs, **kwargs)
        state["runs"].append(result)
        return result

    def replay(self, nest, values):
        replayed = original_replay(self, nest, values)
        state["replays"] += replayed
        return replayed

    monkeypatch.setattr(Device, "run", run)
    monkeypatch.setattr(ComputeApi, "replay_tile_nest", replay)
    return state


def _same(a, b) -> None:
    assert a.perf.cycles == b.perf.cycles
    assert a.perf.counters == b.perf.counters
    for ta, tb in zip(a.perf.threads, b.perf.threads):
        np.testing.assert_array_equal(ta.end_cycles, tb.end_cycles)
        np.testing.assert_array_equal(ta.busy_cycles, tb.busy_cycles)
        np.testing.assert_array_equal(ta.stall_cycles, tb.stall_cycles)
    for name in a.outputs:
        np.testing.assert_array_equal(a.outputs[name], b.outputs[name])


def _integers(shape, seed):
    values = np.random.default_rng(seed).integers(-1, 2, shape).astype(np.float32)
    return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)


def _run_accumulate():
    size, depth = BLOCKS * BLOCK * TILE, K_BLOCKS * BLOCK * TILE
    a, b = _integers((size, depth), 1), _integers((depth, size), 2)
    y = ttnn.zeros((size, size), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    accumulate(a, b, y)
    return a, b


def test_a_replayed_nest_runs_as_the_queued_one(runs, monkeypatch):
    a, b = _run_accumulate()
    replays = runs["replays"]
    # every K step's nest after the first is a replay
    assert replays >= BLOCKS * BLOCKS * K_BLOCKS - 1
    monkeypatch.setattr(ComputeApi, "replay_tile_nest", lambda self, nest, values: False)
    _run_accumulate()
    _same(*runs["runs"])


@pytest.mark.parametrize("name", ["matmul_single_node", "softmax", "batched_matmul_bias", "eltwise_multitile"])
def test_examples_run_the_same_without_replays(name, runs, monkeypatch):
    with contextlib.redirect_stdout(io.StringIO()):
        runpy.run_path(str(EXAMPLES / "ttl" / f"{name}.py"), run_name="example")["main"]()
        monkeypatch.setattr(ComputeApi, "replay_tile_nest", lambda self, nest, values: False)
        runpy.run_path(str(EXAMPLES / "ttl" / f"{name}.py"), run_name="example")["main"]()
    done = runs["runs"]
    assert len(done) % 2 == 0 and done
    for replayed, queued in zip(done[:len(done) // 2], done[len(done) // 2:]):
        _same(replayed, queued)


def _inputs(body: str):
    module = compute_kernel("%local = memref.alloca() : memref<1xindex>\n"
                            "scf.for %outer = %c0 to %c4 step %c1 {\nttkernel.tile_regs_acquire()\n"
                            f"scf.for %i = %c0 to %c4 step %c1 {{\n{body}\n}}\nttkernel.tile_regs_commit()\n"
                            "ttkernel.tile_regs_wait()\nttkernel.tile_regs_release()\n}")
    outer = next(op for op in module.walk() if isinstance(op, scf.ForOp))
    inner = next(op for op in outer.body.walk() if isinstance(op, scf.ForOp))
    return nest_inputs(inner)


def test_a_nest_of_kernel_values_may_be_replayed():
    inputs = _inputs("""        ttkernel.copy_tile_init(%cb) : !ttkernel.cb
        ttkernel.copy_tile(%cb, %i, %i) : !ttkernel.cb, index, index""")
    assert inputs is not None
    assert {v.name_hint for v in inputs if not isinstance(v.owner, arith.ConstantOp)} == {"cb"}


@pytest.mark.parametrize("body", [
    """        %s = arith.addi %i, %outer : index
        ttkernel.copy_tile(%cb, %s, %i) : !ttkernel.cb, index, index""",
    """        %s = memref.load %local[%c0] : memref<1xindex>
        ttkernel.copy_tile(%cb, %s, %i) : !ttkernel.cb, index, index""",
], ids=["an enclosing loop's index", "a local variable"])
def test_a_nest_reading_values_that_change_is_queued_every_time(body):
    assert _inputs(body) is None
