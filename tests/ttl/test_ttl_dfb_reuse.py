"""Dataflow buffers of disjoint lifetimes share one circular buffer when an operation uses more
buffers than a node has (TT-Lang's ``--ttl-reuse-user-dfbs``, on by default): a chain of 40
intermediate buffers runs on 32 circular buffers against numpy, with C++ check-kernel accepts;
buffers that are live together, of another configuration, or not provably drained keep their own,
and ``--no-ttl-reuse-user-dfbs`` turns sharing off (an error at the 33rd buffer)."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from checkkernel import accessor_compile_args, check_kernels, require_accepted
from tilefold.codegen.cpp import emit_kernel
from tilefold.errors import KernelError
from ttl_helpers import compiled, expect_error, marked_line, tile_tensor, zeros

LINKS = 40


def _chain(options=None, links=LINKS, float32_every=0, tiles=1):
    """``out = inp + links`` through ``links`` intermediate buffers of ``tiles`` x ``tiles`` tile
    blocks, each filled from the previous one plus 1 by the compute kernel, which alone uses them
    (every ``float32_every``-th link is a float32 buffer when given)."""

    @ttl.operation(grid=(1, 1), options=options)
    def chain(inp, out):
        first = ttl.make_dataflow_buffer_like(inp, shape=(tiles, tiles), block_count=2)
        last = ttl.make_dataflow_buffer_like(out, shape=(tiles, tiles), block_count=2)
        formats = ["float32" if float32_every and i % float32_every == 0 else "bf16" for i in range(links)]
        links_dfbs = [ttl.make_dfb(f, shape=(tiles, tiles), block_count=2) for f in formats]  # error

        @ttl.datamovement()
        def read():
            with first.reserve() as blk:
                ttl.copy(inp[0:tiles, 0:tiles], blk).wait()

        @ttl.compute()
        def compute():
            source = first
            for link in links_dfbs:
                with source.wait() as x, link.reserve() as y:
                    y.store(x + 1.0)
                source = link
            with source.wait() as x, last.reserve() as y:
                y.store(x)

        @ttl.datamovement()
        def write():
            with last.wait() as blk:
                ttl.copy(blk, out[0:tiles, 0:tiles]).wait()

    return chain


def _run(operation):
    inp = ttnn.from_numpy(np.random.default_rng(1).integers(-8, 8, (32, 32)).astype(np.float32), dtype=ttnn.bfloat16,
                          layout=ttnn.TILE_LAYOUT)
    out = zeros((32, 32))
    operation(inp, out)
    return ttnn.to_numpy(inp), ttnn.to_numpy(out)


def test_a_chain_of_more_buffers_than_circular_buffers_runs_on_shared_ones():
    inp, out = _run(_chain())
    np.testing.assert_array_equal(out, inp + LINKS)


def test_the_shared_program_has_few_circular_buffers_and_its_kernels_pass_check_kernel(tmp_path):
    result = compiled(_chain(), tile_tensor((32, 32)), zeros((32, 32)))
    indices = {cb.index for cb in result.program.circular_buffers}
    assert len(indices) == len(result.program.circular_buffers) <= 4     # first, last and two taking turns
    program = result.program
    jobs = []
    for kernel in program.kernels:
        path = tmp_path / kernel.source_file
        path.write_text(emit_kernel(kernel.function))
        role = "compute" if kernel.is_compute else ("reader" if kernel.processor == "RISCV_0" else "writer")
        jobs.append((path, role, accessor_compile_args(program, kernel) or None))
    for check in check_kernels(jobs):
        require_accepted(check)


def test_buffers_of_another_configuration_take_turns_among_themselves():
    operation = _chain(float32_every=3)
    inp, out = _run(operation)
    np.testing.assert_array_equal(out, inp + LINKS)
    result = compiled(operation, tile_tensor((32, 32)), zeros((32, 32)))
    formats = sorted(cb.data_format.name for cb in result.program.circular_buffers)
    assert len(formats) <= 6 and "Float32" in formats


@pytest.mark.parametrize("options", ["--no-ttl-reuse-user-dfbs", "--ttl-reuse-user-dfbs=false",
                                     "--ttl-reuse-user-dfbs --ttl-reuse-user-dfbs=0"])
def test_sharing_turned_off_is_the_error_at_the_buffer_past_the_limit(options):
    def run():
        _run(_chain(options=options))

    expect_error(run, _chain, KernelError, "dataflow buffer number 33", "reuse buffers or make fewer")


def test_an_on_off_option_takes_true_or_false():
    from tilefold.errors import KernelValueError

    with pytest.raises(KernelValueError, match="is on or off"):
        _chain(options="--ttl-reuse-user-dfbs=maybe")


def test_buffers_live_at_the_same_time_keep_their_own():
    @ttl.operation(grid=(1, 1))
    def all_at_once(inp, out):
        first = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        last = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        held = [ttl.make_dfb("bf16", shape=(1, 1), block_count=1) for _ in range(31)]   # error

        @ttl.datamovement()
        def read():
            with first.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            with first.wait() as x:
                for dfb in held:               # every buffer is filled before any is drained
                    with dfb.reserve() as y:
                        y.store(x)
                for dfb in held:
                    with dfb.wait() as y, last.reserve() as z:
                        z.store(y)

        @ttl.datamovement()
        def write():
            for _ in range(31):
                with last.wait() as blk:
                    ttl.copy(blk, out[0, 0]).wait()

    line = marked_line(test_buffers_live_at_the_same_time_keep_their_own)
    try:
        _run(all_at_once)
    except KernelError as exc:
        assert f":{line}: " in str(exc) and "reuse buffers or make fewer" in str(exc), str(exc)
    else:
        raise AssertionError("33 buffers live at once ran on 32 circular buffers")


def test_an_unbalanced_buffer_is_not_shared():
    from tilefold.frontend.ttl.dfb_reuse import shared_circular_buffers

    op = _chain(links=4)
    built = op.build((tile_tensor((32, 32)), zeros((32, 32))), {})
    indices = {d.index for d in built.capture.dataflow_buffers if not d.hidden}
    shared = shared_circular_buffers(built.module, indices)
    assert len(set(shared.values())) == 2 and len(shared) == 4        # the four links take two buffers in turn
    from tilefold.ir import ttl as ir
    push = next(op for op in built.module.walk() if isinstance(op, ir.CBPushOp)
                and op.cb.owner.index in shared and shared[op.cb.owner.index] != op.cb.owner.index)
    unbalanced = push.cb.owner.index
    push.detach()
    push.erase()                                                       # that link's block is never pushed
    assert unbalanced not in shared_circular_buffers(built.module, indices)


def test_buffers_needing_more_l1_than_a_node_has_take_turns():
    values = np.random.default_rng(3).integers(-8, 8, (256, 256)).astype(np.float32)
    inp = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = zeros((256, 256))
    _chain(links=10, tiles=8)(inp, out)            # ten 256 KiB stages: more L1 than a node has
    np.testing.assert_array_equal(ttnn.to_numpy(out), values + 10)
    from tilefold.errors import L1OverflowError
    with pytest.raises(L1OverflowError, match="need .* B of L1 on each node"):
        _chain(options="--no-ttl-reuse-user-dfbs", links=10, tiles=8)(inp, zeros((256, 256)))


def test_buffers_of_different_kernels_never_take_turns():
    """A reader's bounce buffers and the compute kernel's chain both fit the pattern, but the two
    kernels run at once: sharing across them would hand the reader's blocks to the chain."""
    links, bounces = 30, 4

    @ttl.operation(grid=(2, 1))
    def op(inp, inp2, out, out2):
        first = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        last = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        token = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        chain = [ttl.make_dfb("bf16", shape=(1, 1), block_count=2) for _ in range(links)]
        bounce = [ttl.make_dfb("bf16", shape=(1, 1), block_count=2) for _ in range(bounces)]

        @ttl.datamovement()
        def read():
            x, _ = ttl.node(dims=2)
            with first.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()
            for i, b in enumerate(bounce):          # held until the compute kernel's chain is done
                if x == 0:
                    with b.reserve() as blk:
                        ttl.copy(inp2[0, i], blk).wait()
            if x == 0:
                with token.wait() as t:
                    pass
            for i, b in enumerate(bounce):
                if x == 0:
                    with b.wait() as blk:
                        ttl.copy(blk, out2[0, i]).wait()

        @ttl.compute()
        def compute():
            x, _ = ttl.node(dims=2)
            source = first
            for link in chain:
                with source.wait() as a, link.reserve() as y:
                    y.store(a + 1.0)
                source = link
            with source.wait() as a, last.reserve() as y:
                y.store(a)
                if x == 0:
                    with token.reserve() as t:
                        t.store(a * 0.0)

        @ttl.datamovement()
        def write():
            x, _ = ttl.node(dims=2)
            with last.wait() as blk:
                ttl.copy(blk, out[0, x]).wait()

    rng = np.random.default_rng(5)
    a = rng.integers(-8, 8, (32, 32)).astype(np.float32)
    a2 = rng.integers(-8, 8, (32, 32 * bounces)).astype(np.float32) + 100
    out, out2 = zeros((32, 64)), zeros((32, 32 * bounces))
    op(ttnn.from_numpy(a, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT),
       ttnn.from_numpy(a2, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT), out, out2)
    np.testing.assert_array_equal(ttnn.to_numpy(out), np.concatenate([a, a], 1) + links)
    np.testing.assert_array_equal(ttnn.to_numpy(out2), a2)


def test_a_chain_in_a_body_without_kernel_functions():
    """``src = first`` before a loop that rebinds ``src``: the kernel the loop goes to repeats the
    first binding; its 36 links take turns in circular buffers."""

    @ttl.operation(grid=(1, 1))
    def op(inp, out):
        first = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
        last = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        links = [ttl.make_dfb("bf16", shape=(1, 1), block_count=2) for _ in range(36)]
        r = first.reserve()
        ttl.copy(inp[0:1, 0:1], r).wait()
        src = first
        for link in links:
            w = link.reserve()
            w.store(src.wait() + 1.0)
            src = link
        w = last.reserve()
        w.store(src.wait())
        ttl.copy(last.wait(), out[0:1, 0:1]).wait()

    inp, out = _run(op)
    np.testing.assert_array_equal(out, inp + 36)


def test_buffers_used_one_after_another_inside_an_if_take_turns():
    """40 staging buffers a data movement kernel fills and drains one after another inside one ``if``
    (TT-Lang's many-buffers test), then a pipe: an ``if`` runs its statements once, so they share."""
    count = 40

    @ttl.operation(grid=(2, 1))
    def many(inp, out):
        staging = [ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1) for _ in range(count)]
        send_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)
        receive_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=1)
        net = ttl.PipeNet([ttl.Pipe(src=(0, 0), dst=(1, 0))])

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            x, _ = ttl.node(dims=2)
            if x == 0:
                for dfb in staging:
                    with dfb.reserve() as b:
                        ttl.copy(inp[0, 0], b).wait()
                    with dfb.wait():
                        pass

            def send(pipe):
                with send_dfb.reserve() as b:
                    ttl.copy(inp[0, 0], b).wait()
                with send_dfb.wait() as b:
                    ttl.copy(b, pipe).wait()

            net.if_src(send)

            def receive(pipe):
                with receive_dfb.reserve() as b:
                    ttl.copy(pipe, b).wait()
                with receive_dfb.wait() as b:
                    ttl.copy(b, out[0, 0]).wait()

            net.if_dst(receive)

        @ttl.datamovement()
        def idle():
            pass

    inp, out = tile_tensor((32, 32), seed=2), zeros((32, 32))
    many(inp, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(inp))
    assert len(compiled(many, inp, out).program.circular_buffers) < 8
