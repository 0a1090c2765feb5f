"""The kernels a ``ttl.DFBReset`` / ``ttl.DFBReconfiguration`` names meet at its point: each waits
there until all have arrived (token buffers to and from a hub kernel). A program whose buffers
start over between two phases runs and matches numpy, and its three kernels pass the real 0.69
headers; one where a kernel waits before the point for a block another kernel sends only after it
stops with the waits named at the user's lines, as it would hang on the device; a meeting of the
two data movement kernels alone needs no compute kernel."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import DeadlockError
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled

TS = 32

compute_k = ttl.Kernel(ttl.KernelKind.COMPUTE)
reader_k = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
writer_k = ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT)
phase_end = ttl.DFBReconfiguration(participants=(compute_k, reader_k, writer_k), discard_dfb_state=True)


@ttl.operation(grid=(1, 1))
def two_phases(x, out):
    """Phase one doubles tile 0, phase two negates tile 1; the buffers start over in between."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute(kernel=compute_k)
    def compute():
        with x_dfb.wait() as a, o_dfb.reserve() as o:
            o.store(a * 2.0)
        ttl.reconfigure_dfbs(phase_end)
        with x_dfb.wait() as a, o_dfb.reserve() as o:
            o.store(-a)

    @ttl.datamovement(kernel=reader_k)
    def read():
        with x_dfb.reserve() as a:
            ttl.copy(x[0:1, 0:1], a).wait()
        ttl.reconfigure_dfbs(phase_end)
        with x_dfb.reserve() as a:
            ttl.copy(x[1:2, 0:1], a).wait()

    @ttl.datamovement(kernel=writer_k)
    def write():
        with o_dfb.wait() as o:
            ttl.copy(o, out[0:1, 0:1]).wait()
        ttl.reconfigure_dfbs(phase_end)
        with o_dfb.wait() as o:
            ttl.copy(o, out[1:2, 0:1]).wait()


@ttl.operation(grid=(2, 1))
def waits_across_the_point(x, out):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute(kernel=compute_k)
    def compute():
        ttl.reconfigure_dfbs(phase_end)

    @ttl.datamovement(kernel=reader_k)
    def read():
        ttl.reconfigure_dfbs(phase_end)
        with x_dfb.reserve() as a:                  # sent only after the point ...
            ttl.copy(x[0:1, 0:1], a).wait()

    @ttl.datamovement(kernel=writer_k)
    def write():
        x_node, _ = ttl.node(dims=2)
        if x_node == 0:                             # (a count known only on the node: the simulator's to find)
            with x_dfb.wait() as a:                 # ... awaited before it: waits forever  # blocked
                ttl.copy(a, out[0:1, 0:1]).wait()
        ttl.reconfigure_dfbs(phase_end)


movers = ttl.DFBReconfiguration(participants=(ttl.KernelKind.DATA_MOVEMENT,))


@ttl.operation(grid=(1, 1))
def movers_meet(x, out):
    """The two data movement kernels meet (the first is the hub); the compute kernel does not."""
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def read():
        with x_dfb.reserve() as a:
            ttl.copy(x[0:1, 0:1], a).wait()
        ttl.reconfigure_dfbs(movers)

    @ttl.datamovement()
    def write():
        ttl.reconfigure_dfbs(movers)
        with x_dfb.wait() as a:
            ttl.copy(a, out[0:1, 0:1]).wait()


def _tensors(rows: int):
    values = np.random.default_rng(rows).standard_normal((rows * TS, TS)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    return x, out


def _barriers(result) -> list[str]:
    return [cb.name for cb in result.program.circular_buffers if (cb.name or "").startswith("barrier")]


def test_two_phases_meet_at_the_point_and_match_numpy(tmp_path):
    x, out = _tensors(2)
    result = compiled(two_phases, x, out)
    # the buffers start over (discard_dfb_state=True): a data movement kernel is the hub, which
    # checks, once all have arrived, that no block pushed before the point is left
    assert sorted(_barriers(result)) == ["barrier compute to read", "barrier read to compute",
                                         "barrier read to write", "barrier write to read"]
    jobs = []
    for k in result.program.kernels:
        path = tmp_path / f"{k.name}.cpp"
        path.write_text(emit_kernel(k.function))
        role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(result.program, k) or None))
    for check in check_kernels(jobs):
        require_accepted(check)
    two_phases(x, out)
    a = ttnn.to_numpy(x)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([a[:TS] * 2, -a[TS:]]))


@pytest.fixture
def simulator_checks_only(monkeypatch):
    """The meeting counts left to the simulator, as for counts only a run can know (the build's
    check is turned off)."""
    from tilefold.frontend.ttl import meeting_check

    monkeypatch.setattr(meeting_check, "check_meeting_counts", lambda *args, **kwargs: None)


def test_a_wait_across_the_point_is_an_error_at_the_wait_when_the_operation_is_built():
    from tilefold.errors import KernelError

    x, out = _tensors(1)
    with pytest.raises(KernelError) as info:
        compiled(waits_across_the_point, x, out)
    blocked = next(i for i, line in enumerate(open(__file__).read().splitlines(), 1) if line.endswith("# blocked"))
    assert f"{__file__}:{blocked}" in str(info.value) and "on node (0, 0)" in str(info.value)


def test_a_wait_across_the_point_stops_with_the_blocked_kernels_named(simulator_checks_only):
    x, out = _tensors(1)
    with pytest.raises(DeadlockError) as info:
        waits_across_the_point(x, out)
    message = str(info.value)
    assert "writer kernel write" in message and "reader kernel read" in message and "compute kernel compute" in message
    blocked = next(i for i, line in enumerate(open(__file__).read().splitlines(), 1) if line.endswith("# blocked"))
    assert f"{__file__}:{blocked}: writer kernel write" in message
    # the hub (read) waits for the writer's arrival, the compute kernel for the hub's release
    assert "(barrier write to read)" in message and "(barrier read to compute)" in message


def test_the_data_movement_kernels_meet_without_the_compute_kernel():
    x, out = _tensors(1)
    result = compiled(movers_meet, x, out)
    assert sorted(_barriers(result)) == ["barrier read to write", "barrier write to read"]
    movers_meet(x, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(x))


def _crossing(discard: bool, both_sides: bool):
    """Node 1's reader pushes a block before the point that its writer pops only after it. With
    ``both_sides``, node 0 uses the buffer on both sides of the point, so a reconfiguration that
    discards the buffers' state installs a new one: node 1's block is lost."""
    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    point = ttl.DFBReconfiguration(participants=kernels, discard_dfb_state=discard)
    k_compute, k_read, k_write = kernels

    @ttl.operation(grid=(2, 1))
    def crossing(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute(kernel=k_compute)
        def compute():
            ttl.reconfigure_dfbs(point)

        @ttl.datamovement(kernel=k_read)
        def read():
            x, _ = ttl.node(dims=2)
            with dfb.reserve() as blk:
                ttl.copy(inp[0, x], blk).wait()
            ttl.reconfigure_dfbs(point)                                     # the point
            if both_sides and x == 0:
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, 2], blk).wait()

        @ttl.datamovement(kernel=k_write)
        def write():
            x, _ = ttl.node(dims=2)
            if both_sides and x == 0:
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, 0]).wait()
            ttl.reconfigure_dfbs(point)
            with dfb.wait() as blk:
                ttl.copy(blk, out[0, 1 + x]).wait()

    return crossing


def test_a_block_pushed_before_a_discarding_point_and_popped_after_it_is_an_error_naming_the_node(
        simulator_checks_only):
    from tilefold.errors import SimulationError

    inp = ttnn.from_numpy(np.arange(32 * 96, dtype=np.float32).reshape(32, 96), dtype=ttnn.bfloat16,
                          layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(SimulationError) as info:
        _crossing(discard=True, both_sides=True)(inp, out)
    message = str(info.value)
    line = next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith("# the point"))
    assert f"{__file__}:{line}" in message and "core (1,0)" in message
    assert "holds a block pushed before this point that no kernel popped before it" in message


@pytest.mark.parametrize("discard,both_sides", [(False, True), (True, False)])
def test_a_block_crossing_a_point_that_keeps_its_buffer_arrives(discard, both_sides):
    """Without discard_dfb_state, or for a buffer no kernel uses on both sides of the point (a
    reader filling it before, a writer draining it after), the buffer keeps its blocks."""
    values = np.random.default_rng(5).standard_normal((32, 96)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    if both_sides:
        # node 0's writer pops its first block before the point, node 1's only after it
        _crossing(discard, both_sides)(inp, out)
        a = ttnn.to_numpy(inp)
        np.testing.assert_array_equal(ttnn.to_numpy(out)[:, 32:96], np.concatenate([a[:, 64:96], a[:, 32:64]], 1))
        return
    _crossing(discard, both_sides)(inp, out)
    a = ttnn.to_numpy(inp)
    np.testing.assert_array_equal(ttnn.to_numpy(out)[:, 32:96], a[:, 0:64])


def test_a_reset_checks_the_buffers_it_names(simulator_checks_only):
    from tilefold.errors import SimulationError

    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    reset = ttl.DFBReset(participants=kernels)
    k_compute, k_read, k_write = kernels

    @ttl.operation(grid=(2, 1))
    def leaves_a_block(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.compute(kernel=k_compute)
        def compute():
            ttl.reset_dfbs(reset, dfbs=[dfb])

        @ttl.datamovement(kernel=k_read)
        def read():
            for i in range(2):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, i], blk).wait()
            ttl.reset_dfbs(reset, dfbs=[dfb])

        @ttl.datamovement(kernel=k_write)
        def write():
            x, _ = ttl.node(dims=2)
            if x == 0:                              # (a count known only on the node: the simulator's to find)
                with dfb.wait() as blk:             # one of the two blocks: the other is left at the reset
                    ttl.copy(blk, out[0, 0]).wait()
            ttl.reset_dfbs(reset, dfbs=[dfb])

    _, out = _tensors(1)
    inp = ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(SimulationError, match="ttl.reset_dfbs\\(\\): dfb holds a block pushed before this point"):
        leaves_a_block(inp, out)


def _point_program(reader_blocks: int, writer_blocks: int, discard: bool, block_count: int = 2):
    """The reader pushes ``reader_blocks`` blocks before a reconfiguration point and the writer
    pops ``writer_blocks`` before it (the rest after it), with loops of constant trip counts: the
    counts at the point are known before running."""
    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    point = ttl.DFBReconfiguration(participants=kernels, discard_dfb_state=discard)
    k_compute, k_read, k_write = kernels

    @ttl.operation(grid=(1, 1))
    def counted(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=block_count)

        @ttl.compute(kernel=k_compute)
        def compute():
            ttl.reconfigure_dfbs(point)

        @ttl.datamovement(kernel=k_read)
        def read():
            for i in range(reader_blocks):
                with dfb.reserve() as blk:                                  # reserved
                    ttl.copy(inp[0, i], blk).wait()
            ttl.reconfigure_dfbs(point)                                     # reader's point
            for i in range(3 - reader_blocks):
                with dfb.reserve() as blk:
                    ttl.copy(inp[0, reader_blocks + i], blk).wait()

        @ttl.datamovement(kernel=k_write)
        def write():
            for i in range(writer_blocks):
                with dfb.wait() as blk:                                     # waited
                    ttl.copy(blk, out[0, i]).wait()
            ttl.reconfigure_dfbs(point)                                     # writer's point
            for i in range(3 - writer_blocks):
                with dfb.wait() as blk:
                    ttl.copy(blk, out[0, writer_blocks + i]).wait()

    return counted


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(open(__file__).read().splitlines(), 1) if text.endswith(marker))


@pytest.mark.parametrize("discard", [False, True])
def test_counts_known_before_running_are_checked_at_the_point_when_the_operation_is_built(discard):
    """Blocks that cannot pass a meeting point are an error when the operation is built — also
    for a build that is not run — at the reserve or wait that would wait forever, as TT-Lang's
    compiler rejects them: a writer waiting before the point for a block pushed after it; a reader
    reserving more before the point than the buffer holds and the writer frees there; with
    ``discard_dfb_state``, a block pushed before the point and popped after it (lost there)."""
    from tilefold.errors import KernelError

    inp = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError) as info:
        compiled(_point_program(0, 1, discard), inp, out)
    assert f"{__file__}:{_line('# waited')}" in str(info.value)
    assert "write waits for block 1 before the meeting of the kernels" in str(info.value)
    assert f"(line {_line('# writer' + chr(39) + 's point')})" in str(info.value)

    with pytest.raises(KernelError) as info:
        compiled(_point_program(3, 0, discard), inp, out)
    assert f"{__file__}:{_line('# reserved')}" in str(info.value)
    assert "read reserves block 3 before the meeting" in str(info.value) and "block_count=2" in str(info.value)

    crossing = _point_program(2, 1, discard)
    if discard:
        with pytest.raises(KernelError) as info:
            compiled(crossing, inp, out)
        assert f"{__file__}:{_line('# reader' + chr(39) + 's point')}" in str(info.value)
        assert "read pushes 2 block(s) before the meeting" in str(info.value) and "the rest are lost" in str(info.value)
        return
    values = np.random.default_rng(3).standard_normal((32, 96)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    crossing(inp, out)                              # the buffer keeps its state: the block arrives
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))


def test_a_block_lost_on_one_node_is_an_error_naming_the_node_when_the_operation_is_built():
    """The kernels are followed on each node when their counts depend on the node's coordinates."""
    from tilefold.errors import KernelError

    inp = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 96), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    with pytest.raises(KernelError) as info:
        compiled(_crossing(discard=True, both_sides=True), inp, out)
    assert f"{__file__}:{_line('# the point')}" in str(info.value) and "on node (1, 0)" in str(info.value)


def test_a_meeting_in_a_loop_is_followed_through_its_iterations():
    """A reset in every iteration of a loop, with a block more each iteration than the buffer
    frees there (TT-Lang's growing generations): the reserve that cannot be served is the error."""
    from tilefold.errors import KernelError

    kernels = (ttl.Kernel(ttl.KernelKind.COMPUTE), ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT),
               ttl.Kernel(ttl.KernelKind.DATA_MOVEMENT))
    reset = ttl.DFBReset(participants=kernels)
    k_compute, k_read, k_write = kernels

    def generations(extra: int):
        @ttl.operation(grid=(1, 1))
        def growing(inp, out):
            handoff = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
            scratch = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

            @ttl.compute(kernel=k_compute)
            def compute():
                for g in range(8):
                    ttl.reset_dfbs(reset, dfbs=[scratch])

            @ttl.datamovement(kernel=k_read)
            def read():
                for g in range(8):
                    for i in range(1 + extra):
                        with handoff.reserve() as blk:                      # growing
                            ttl.copy(inp[0, i], blk).wait()
                    ttl.reset_dfbs(reset, dfbs=[scratch])

            @ttl.datamovement(kernel=k_write)
            def write():
                for g in range(8):
                    ttl.reset_dfbs(reset, dfbs=[scratch])
                    with handoff.wait() as blk:
                        ttl.copy(blk, out[0, 0]).wait()
                for g in range(8 * extra):
                    with handoff.wait() as blk:
                        ttl.copy(blk, out[0, 1]).wait()

        return growing

    inp = ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    generations(0)(inp, out)                        # a block each iteration: it passes
    with pytest.raises(KernelError) as info:
        compiled(generations(1), inp, out)
    assert f"{__file__}:{_line('# growing')}" in str(info.value)
    assert "read reserves block 4 before the meeting" in str(info.value)
