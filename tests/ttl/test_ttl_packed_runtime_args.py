"""A node receiving from every other node of an 8x8 grid (63 pipes, six small numbers each) needs
more runtime arguments than TT-Metalium's table holds (341): its kernel packs the small ones two to a
word and unpacks them with a mask and a shift. The gather must land every tile in place, the C++
must read the halves, the host program must pass the packed words (symbolic NOC coordinates
included), and both must pass the real 0.69 headers; a kernel under the limit is left as it was."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.ir.ttl_metadata import RUNTIME_WORDS_ATTR
from ttl_helpers import compiled, tile_tensor, zeros

COLUMNS, ROWS = 8, 8


def gather_to_first_node(columns: int, rows: int):
    @ttl.operation(grid=(columns, rows))
    def gather(a, y):
        pipes = [ttl.Pipe(src=(x, r), dst=(0, 0)) for x in range(columns) for r in range(rows) if (x, r) != (0, 0)]
        net = ttl.PipeNet(pipes)
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        g_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def send():
            x, r = ttl.node(dims=2)
            with a_dfb.reserve() as blk:
                ttl.copy(a[r, x], blk).wait()
            with a_dfb.wait() as blk:
                net.if_src(lambda pipe: ttl.copy(blk, pipe).wait())
                if x == 0 and r == 0:
                    ttl.copy(blk, y[0, 0]).wait()

        @ttl.datamovement()
        def receive():
            def land(pipe):
                sx, sr = pipe.src
                with g_dfb.reserve() as g:
                    ttl.copy(pipe, g).wait()
                with g_dfb.wait() as g:
                    ttl.copy(g, y[sr, sx]).wait()

            net.if_dst(land)

    return gather


def _receiver(program):
    return next(k for k in program.kernels if k.name == "receive")


def test_a_63_pipe_gather_packs_its_receivers_arguments_and_lands_every_tile(tmp_path, check_kernel):
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import HostData, emit_kernel, write_project

    shape = (ROWS * 32, COLUMNS * 32)
    a, y = tile_tensor(shape, seed=5), zeros(shape)
    op = gather_to_first_node(COLUMNS, ROWS)
    op(a, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(a))

    program = compiled(op, a, zeros(shape)).program
    receiver = _receiver(program)
    words = receiver.function.attributes[RUNTIME_WORDS_ATTR].data
    assert sum(len(w.data) for w in words) > 341 >= len(words)
    assert max(len(args) for args in receiver.runtime_args.values()) == len(words)
    source = emit_kernel(receiver.function)
    assert "& 65535;" in source and ">> 16;" in source
    path = tmp_path / "receive.cpp"
    path.write_text(source)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, receiver)))
    project = tmp_path / "project"
    tiles = bytes(2048 * ROWS * COLUMNS)
    with pytest.warns(UserWarning, match="semaphores"):        # one a pipe: over a real core's 16 (a warning)
        write_project(program, project, HostData(inputs={"a": tiles, "y": tiles}))
    assert "_noc_x << 16))" in (project / "main.cpp").read_text()
    require_hosts_accepted(check_hosts([project / "main.cpp"]))


def test_a_kernel_under_the_limit_keeps_one_argument_a_word():
    shape = (2 * 32, 4 * 32)
    program = compiled(gather_to_first_node(4, 2), tile_tensor(shape), zeros(shape)).program
    assert RUNTIME_WORDS_ATTR not in _receiver(program).function.attributes
