"""The simulated device as a whole: many cores, multicast and semaphores, lanes (batched cores)
versus one core per thread, the divergence fallback, traces, the cost model, Blackhole."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tilefold.arch import get_arch
from tilefold.arch.cores import CoreCoord, CoreRange, CoreRangeSet
from tilefold.program import ComputeConfig, DataMovementConfig, NocX, NocY, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device
from tilefold.sim import lanes

from simhelpers import grid, random_tiles

A, B, OUT = 0, 1, 16


@reader_kernel
def eltwise_reader():
    a = get_arg_val(0)
    b = get_arg_val(1)
    n = get_arg_val(2)
    start = get_arg_val(3)
    sa = TensorAccessor(TensorAccessorArgs(0), a, get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(2), b, get_tile_size(B))
    for i in range(start, start + n):
        cb_reserve_back(A, 1)
        noc_async_read_page(i, sa, get_write_ptr(A))
        cb_reserve_back(B, 1)
        noc_async_read_page(i, sb, get_write_ptr(B))
        noc_async_read_barrier()
        cb_push_back(A, 1)
        cb_push_back(B, 1)


@compute_kernel
def eltwise_compute():
    n = get_arg_val(0)
    binary_op_init_common(A, B, OUT)
    add_tiles_init(A, B)
    for i in range(n):
        cb_wait_front(A, 1)
        cb_wait_front(B, 1)
        tile_regs_acquire()
        add_tiles(A, B, 0, 0, 0)
        tile_regs_commit()
        tile_regs_wait()
        cb_reserve_back(OUT, 1)
        pack_tile(0, OUT)
        cb_push_back(OUT, 1)
        tile_regs_release()
        cb_pop_front(A, 1)
        cb_pop_front(B, 1)


@writer_kernel
def eltwise_writer():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    start = get_arg_val(2)
    s = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(OUT))
    for i in range(start, start + n):
        cb_wait_front(OUT, 1)
        noc_async_write_page(i, s, get_read_ptr(OUT))
        noc_async_writes_flushed()
        cb_pop_front(OUT, 1)
    noc_async_write_barrier()


def eltwise_program(shape, gx, gy, arch=None, uneven=False):
    prog = Program("add", arch=get_arch(arch))
    a, b = prog.add_buffer("a", shape, "bfloat16"), prog.add_buffer("b", shape, "bfloat16")
    c = prog.add_buffer("c", shape, "bfloat16", role="output")
    cores = grid(gx, gy)
    for idx in (A, B, OUT):
        prog.create_circular_buffer(cores, idx, a.page_size, 2, "bfloat16")
    ct = [a.accessor_args, b.accessor_args, c.accessor_args]
    r = prog.create_kernel(eltwise_reader, cores, DataMovementConfig("RISCV_0"), ct)
    k = prog.create_kernel(eltwise_compute, cores, ComputeConfig())
    w = prog.create_kernel(eltwise_writer, cores, DataMovementConfig("RISCV_1"), ct)
    ntiles, ncores = a.num_pages, cores.num_cores
    counts = [ntiles // ncores + (1 if uneven and i < ntiles % ncores else 0) for i in range(ncores)]
    counts[-1] += ntiles - sum(counts)
    start = 0
    for core, n in zip(cores.cores(), counts):
        prog.set_runtime_args(r, core, [a.address, b.address, n, start])
        prog.set_runtime_args(k, core, [n])
        prog.set_runtime_args(w, core, [c.address, n, start])
        start += n
    return prog


def add_ref(x, y):
    import ml_dtypes

    return (x + y).astype(ml_dtypes.bfloat16).astype(np.float32)


def test_steering_args_of_a_start_plus_count_loop():
    reader = lanes.steering_args(eltwise_reader.function)
    assert reader.runtime == frozenset({2}) and not reader.per_core
    assert lanes.steering_args(eltwise_compute.function).runtime == frozenset({0})


def test_batched_and_unbatched_runs_agree():
    prog = eltwise_program((128, 256), 4, 2)
    x, y = random_tiles((128, 256), 1), random_tiles((128, 256), 2)
    batched = Device().run(prog, {"a": x, "b": y})
    single = Device().run(prog, {"a": x, "b": y}, batch=False)
    assert batched.batched and not single.batched
    assert np.array_equal(batched.outputs["c"], add_ref(x, y))
    assert np.array_equal(single.outputs["c"], batched.outputs["c"])
    assert batched.perf.counters == single.perf.counters
    assert batched.perf.cycles == pytest.approx(single.perf.cycles, rel=0.10)


def test_uneven_work_splits_into_groups_of_equal_trip_count():
    prog = eltwise_program((96, 96), 4, 1, uneven=True)   # 9 tiles on 4 cores: 3, 2, 2, 2
    x, y = random_tiles((96, 96), 3), random_tiles((96, 96), 4)
    result = Device().run(prog, {"a": x, "b": y})
    assert np.array_equal(result.outputs["c"], add_ref(x, y))


@pytest.mark.parametrize("splits, batched", [(4, True), (1, False)])
def test_divergence_splits_the_cores_then_runs_one_core_per_thread(monkeypatch, splits, batched):
    # Pretend the slice found nothing steering: the per-core trip counts then diverge at run time,
    # the cores are split by trip count (3 tiles on one core, 2 on three) and the program runs
    # again; past the allowed number of splits, one core per thread.
    monkeypatch.setattr("tilefold.sim.device.steering_args", lambda fn: lanes.SteeringArgs(frozenset(), False))
    monkeypatch.setattr("tilefold.sim.device._KERNEL_CACHE", {})
    monkeypatch.setattr("tilefold.sim.device.MAX_SPLITS", splits)
    prog = eltwise_program((96, 96), 4, 1, uneven=True)
    x, y = random_tiles((96, 96), 5), random_tiles((96, 96), 6)
    result = Device().run(prog, {"a": x, "b": y})
    assert result.batched is batched
    readers = sorted(len(t.cores) for t in result.perf.threads if t.role == "reader")
    assert readers == ([1, 3] if batched else [1, 1, 1, 1])
    assert np.array_equal(result.outputs["c"], add_ref(x, y))


def test_blackhole():
    prog = eltwise_program((64, 128), 11, 1, arch="blackhole")
    x, y = random_tiles((64, 128), 7), random_tiles((64, 128), 8)
    result = Device("blackhole").run(prog, {"a": x, "b": y})
    assert np.array_equal(result.outputs["c"], add_ref(x, y))
    assert result.perf.arch_name == "p150"


def test_trace_has_a_track_per_core_thread(tmp_path):
    prog = eltwise_program((64, 64), 2, 1)
    path = tmp_path / "trace.json"
    Device().run(prog, {"a": random_tiles((64, 64)), "b": random_tiles((64, 64))}, trace=path)
    events = json.loads(path.read_text())["traceEvents"]
    spans = [e for e in events if e["ph"] == "X"]
    tracks = {(e["pid"], e["tid"]) for e in spans}
    assert len(tracks) == 6  # 2 cores x reader / compute / writer
    assert {"noc_async_read_page", "add_tiles", "pack_tile", "noc_async_write_page"} <= {e["name"] for e in spans}
    assert all(e["dur"] > 0 and e["ts"] >= 0 for e in spans)


def test_cost_model_is_dram_bound_for_eltwise():
    shape = (512, 512)
    prog = eltwise_program(shape, 8, 8)
    result = Device().run(prog, {"a": random_tiles(shape), "b": random_tiles(shape)})
    perf = result.perf
    arch = get_arch()
    nbytes = 3 * 512 * 512 * 2
    assert perf.counters.dram_read_bytes == 2 * 512 * 512 * 2 and perf.counters.dram_write_bytes == 512 * 512 * 2
    floor = nbytes / arch.dram_bandwidth * arch.clock_hz
    assert floor <= perf.cycles <= 8 * floor
    assert 0.1 < perf.dram_bandwidth_fraction <= 1.0
    assert perf.cores_used == 64
    assert "estimated device time (cost model)" in perf.summary()


# -- multicast and semaphores -------------------------------------------------------------------------


@reader_kernel
def mcast_sender():
    src = get_arg_val(0)
    x0 = get_arg_val(1)
    y0 = get_arg_val(2)
    x1 = get_arg_val(3)
    y1 = get_arg_val(4)
    receivers = get_arg_val(5)
    s = TensorAccessor(TensorAccessorArgs(0), src, get_tile_size(A))
    ready = get_semaphore(0)
    go = get_semaphore(1)
    noc_semaphore_wait(ready, receivers)
    cb_reserve_back(A, 1)
    addr = get_write_ptr(A)
    noc_async_read_page(0, s, addr)
    noc_async_read_barrier()
    noc_async_write_multicast(addr, get_noc_multicast_addr(x0, y0, x1, y1, addr), get_tile_size(A), receivers)
    noc_async_write_barrier()
    l1_ptr(go)[0] = 1
    noc_semaphore_set_multicast(go, get_noc_multicast_addr(x0, y0, x1, y1, go), receivers)
    noc_async_write_barrier()
    cb_push_back(A, 1)


@reader_kernel
def mcast_receiver():
    sender_x = get_arg_val(0)
    sender_y = get_arg_val(1)
    ready = get_semaphore(0)
    go = get_semaphore(1)
    cb_reserve_back(A, 1)
    noc_semaphore_inc(get_noc_addr_xy(sender_x, sender_y, ready), 1)
    noc_semaphore_wait(go, 1)
    cb_push_back(A, 1)


@writer_kernel
def write_own_tile():
    dst = get_arg_val(0)
    index = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(2), dst, get_tile_size(A))
    cb_wait_front(A, 1)
    noc_async_write_page(index, s, get_read_ptr(A))
    noc_async_write_barrier()
    cb_pop_front(A, 1)


def test_multicast_with_semaphore_handshake():
    prog = Program("mcast")
    src = prog.add_buffer("src", (32, 32), "bfloat16")
    dst = prog.add_buffer("dst", (32, 128), "bfloat16", role="output")
    everyone = grid(4, 1)
    sender = CoreRangeSet([CoreCoord(0, 0)])
    receivers = CoreRangeSet([CoreRange((1, 0), (3, 0))])
    prog.create_circular_buffer(everyone, A, src.page_size, 1, "bfloat16")
    prog.create_semaphore(everyone, 0)
    prog.create_semaphore(everyone, 0)
    ct = [src.accessor_args, dst.accessor_args]
    ks = prog.create_kernel(mcast_sender, sender, DataMovementConfig("RISCV_0"), ct)
    kr = prog.create_kernel(mcast_receiver, receivers, DataMovementConfig("RISCV_0"), ct)
    kw = prog.create_kernel(write_own_tile, everyone, DataMovementConfig("RISCV_1"), ct)
    first, last = CoreCoord(1, 0), CoreCoord(3, 0)
    prog.set_runtime_args(ks, (0, 0), [src.address, NocX(first), NocY(first), NocX(last), NocY(last), 3])
    for core in receivers:
        prog.set_runtime_args(kr, core, [NocX(CoreCoord(0, 0)), NocY(CoreCoord(0, 0))])
    for i, core in enumerate(everyone):
        prog.set_runtime_args(kw, core, [dst.address, i])
    x = random_tiles((32, 32), 9)
    result = Device().run(prog, {"src": x})
    assert np.array_equal(result.outputs["dst"], np.tile(x, (1, 4)))
    assert result.perf.counters.noc_bytes >= 4 * 2048


def test_native_outputs_keep_bfloat16_as_stored():
    import ml_dtypes

    from tilefold.ops.eltwise import eltwise_binary_multi_core

    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((64, 96)).astype(ml_dtypes.bfloat16) for _ in range(2))
    outputs = Device().run(eltwise_binary_multi_core((64, 96), "add", "bfloat16"), {"src0": a, "src1": b}).outputs
    native = outputs.native("dst")
    assert native.dtype == ml_dtypes.bfloat16 and outputs["dst"].dtype == np.float32
    np.testing.assert_array_equal(native.astype(np.float32), outputs["dst"])
    np.testing.assert_array_equal(native.view(np.uint16),
                                  (a.astype(np.float32) + b.astype(np.float32)).astype(ml_dtypes.bfloat16).view(np.uint16))
    with pytest.raises(KeyError):
        outputs.native("src0")
