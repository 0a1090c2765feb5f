"""``ttl.wait_any`` with a negative start: selection starts at ``start % len(requests)`` as in
Python, for a compile-time start and for a runtime one (a node coordinate minus a number).
Three loopback receives, all complete: the one at the normalised start is taken. Run on the
simulated device against numpy; the C++ checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import compiled, tile_tensor, zeros


def _three_way(start: int, runtime: bool):
    @ttl.operation(grid=(1, 1))
    def three_way(a, out):
        """One node sends tiles 0, 1, 2 of ``a`` to itself through three pipe nets, posts the three
        receives, selects one from ``start`` on and writes the selected block to ``out``."""
        pipes = [ttl.Pipe(src=(0, 0), dst=(0, 0)) for _ in range(3)]
        nets = [ttl.PipeNet([p]) for p in pipes]
        tiles = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=3)
        got = [ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2) for _ in range(3)]

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            t0 = tiles.wait()
            s0 = ttl.copy(t0, pipes[0])
            t1 = tiles.wait()
            s1 = ttl.copy(t1, pipes[1])
            t2 = tiles.wait()
            s2 = ttl.copy(t2, pipes[2])
            b0 = got[0].reserve()
            b1 = got[1].reserve()
            b2 = got[2].reserve()
            r0 = ttl.copy(pipes[0], b0)
            r1 = ttl.copy(pipes[1], b1)
            r2 = ttl.copy(pipes[2], b2)
            s0.wait()
            s1.wait()
            s2.wait()
            t0.pop()
            t1.pop()
            t2.pop()
            first = ttl.node(dims=1) + start if runtime else start
            chosen = ttl.wait_any((r0, r1, r2), start=first).index()
            if chosen == 0:
                b0.push()
                with got[0].wait() as res:
                    ttl.copy(res, out[0, 0]).wait()
            if chosen == 1:
                b1.push()
                with got[1].wait() as res:
                    ttl.copy(res, out[0, 0]).wait()
            if chosen == 2:
                b2.push()
                with got[2].wait() as res:
                    ttl.copy(res, out[0, 0]).wait()

        @ttl.datamovement()
        def reader():
            for t in range(3):
                with tiles.reserve() as blk:
                    ttl.copy(a[0, t], blk).wait()

        del nets

    return three_way


@pytest.mark.parametrize("runtime", [False, True], ids=["compile_time", "runtime"])
def test_a_negative_start_counts_from_the_end_like_python(runtime):
    a = tile_tensor((32, 96), seed=5)
    tiles = np.split(ttnn.to_numpy(a), 3, axis=1)
    for start in (-1, -2, -4, 4):
        out = zeros((32, 32))
        _three_way(start, runtime)(a, out)
        np.testing.assert_array_equal(ttnn.to_numpy(out), tiles[start % 3], err_msg=f"start {start}")


def test_the_start_reaching_the_selection_is_normalised(tmp_path, check_kernel):
    """A compile-time start reaches the lowered kernel as ``start % n``; a runtime one is reduced
    with a signed remainder moved up by n when negative (unsigned, -1 would be 2**32 - 1, and
    (2**32 - 1) % 3 is 0, not 2). Both kernels pass check-kernel."""
    from xdsl.dialects import arith

    from tilefold.codegen.cpp import emit_kernel
    from tilefold.ir.context import parse_module
    from tilefold.ir.ttkernel import constant_int

    jobs = []
    for runtime in (False, True):
        result = compiled(_three_way(-1, runtime), tile_tensor((32, 96)), zeros((32, 32)))
        program = result.program
        kernel = next(k for k in program.kernels if k.name == "dm")
        # the lowered kernel as ttl-tidy-kernels finds it (it folds a constant start into its uses)
        lowered = next(op for op in parse_module(dict(result.dumps)["lower-affine"]).ops
                       if getattr(op, "sym_name", None) is not None and op.sym_name.data == "dm")
        scan_from = [op.results[0] for op in lowered.walk()
                     if op.results and op.results[0].name_hint == "scan_from"]
        assert len(scan_from) == 1, "no scan start in the lowered kernel"
        if runtime:
            assert isinstance(scan_from[0].owner, arith.SelectOp), scan_from[0].owner
        else:
            assert constant_int(scan_from[0]) == 2, scan_from[0].owner
        source = emit_kernel(kernel.function)
        path = tmp_path / f"dm{int(runtime)}.cpp"
        path.write_text(source)
        jobs.append((path, "reader", check_kernel.accessor_compile_args(program, kernel)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
