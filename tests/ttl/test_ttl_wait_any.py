"""``ttl.wait_any``: a receiver posts receives from two senders and takes them in the order they
complete, with a rotating start; repeated waits of a receive; a node selecting among receives it
sent itself (loopback nets), pushing the selected block in the branch testing the index and
leaving the other pending; misuse errors at the user's line.
Run on the simulated device against numpy, C++ checked against the real headers."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError
from ttl_helpers import compiled, marked_line, recorded_programs, tile_tensor, zeros

BLOCKS = 4


def _two_senders(slow_a: int):
    @ttl.operation(grid=(3, 1))
    def two_senders(a, b, out, order):
        """Nodes 1 and 2 send BLOCKS tiles each to node 0 through two pipes into two landing buffers.
        Node 0 posts both receives, writes the block that completes first to column 2i of ``out`` and the
        other to column 2i + 1, and notes in ``order`` which came first (tile i holds a or b's tile).
        Node 1 reads its tile ``1 + slow_a`` times before sending it."""
        pipe_a = ttl.Pipe(src=(1, 0), dst=(0, 0))
        pipe_b = ttl.Pipe(src=(2, 0), dst=(0, 0))
        net_a = ttl.PipeNet([pipe_a])
        net_b = ttl.PipeNet([pipe_b])
        send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        land_a = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        land_b = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            x, _ = ttl.node(dims=2)
            if x == 0:
                start = 0
                for i in range(BLOCKS):
                    with land_a.reserve() as blk_a, land_b.reserve() as blk_b:
                        recv_a = ttl.copy(pipe_a, blk_a)
                        recv_b = ttl.copy(pipe_b, blk_b)
                        first = ttl.wait_any((recv_a, recv_b), start=start).index()
                        if first == 0:
                            recv_a.wait()
                            ttl.copy(blk_a, out[0, 2 * i]).wait()
                            ttl.copy(blk_a, order[0, i]).wait()
                            recv_b.wait()
                            ttl.copy(blk_b, out[0, 2 * i + 1]).wait()
                        else:
                            recv_b.wait()
                            ttl.copy(blk_b, out[0, 2 * i]).wait()
                            ttl.copy(blk_b, order[0, i]).wait()
                            recv_a.wait()
                            ttl.copy(blk_a, out[0, 2 * i + 1]).wait()
                        start = (first + 1) % 2
                    with land_a.wait(), land_b.wait():    # the blocks went to DRAM: free them
                        pass
            elif x == 1:
                for i in range(BLOCKS):
                    with send_dfb.reserve() as blk:
                        for _ in ttl.static_range(1 + slow_a):    # slow_a more reads: a sends later
                            ttl.copy(a[0, i], blk).wait()
                    with send_dfb.wait() as blk:
                        ttl.copy(blk, pipe_a).wait()
            else:
                for i in range(BLOCKS):
                    with send_dfb.reserve() as blk:
                        ttl.copy(b[0, i], blk).wait()
                    with send_dfb.wait() as blk:
                        ttl.copy(blk, pipe_b).wait()

        del net_a, net_b

    return two_senders


two_senders = _two_senders(0)


def _tiles(t):
    return np.split(ttnn.to_numpy(t), t.shape[-1] // 32, axis=1)


def _run_two_senders(operation, seed: int) -> list[str]:
    """Runs ``operation``, checks both blocks of every step reached DRAM, and returns which sender's
    block each step took first."""
    a, b = tile_tensor((32, BLOCKS * 32), seed=seed), tile_tensor((32, BLOCKS * 32), seed=seed + 1)
    out, order = zeros((32, 2 * BLOCKS * 32)), zeros((32, BLOCKS * 32))
    operation(a, b, out, order)
    tiles_a, tiles_b, got, first = _tiles(a), _tiles(b), _tiles(out), _tiles(order)
    taken = []
    for i in range(BLOCKS):
        a_first = np.array_equal(first[i], tiles_a[i])
        assert a_first or np.array_equal(first[i], tiles_b[i]), f"block {i} came from neither sender"
        expected = (tiles_a[i], tiles_b[i]) if a_first else (tiles_b[i], tiles_a[i])
        np.testing.assert_array_equal(got[2 * i], expected[0])
        np.testing.assert_array_equal(got[2 * i + 1], expected[1])
        taken.append("a" if a_first else "b")
    return taken


def test_a_receiver_takes_two_senders_blocks_in_completion_order():
    _run_two_senders(two_senders, seed=1)


def test_a_late_sender_is_taken_second_whatever_the_start():
    """Sender a reads its tile eight more times before sending: b's block is complete first at
    every step, so the selection takes b although the start rotates to a every other step."""
    assert _run_two_senders(_two_senders(8), seed=7) == ["b"] * BLOCKS


@ttl.operation(grid=(3, 1))
def rotating_start(a, b, out):
    """Both receives complete (waited for) before ``ttl.wait_any``: it takes the first complete one
    from ``start % 2`` on, so the start rotates the choice; the chosen block goes to column i."""
    pipe_a = ttl.Pipe(src=(1, 0), dst=(0, 0))
    pipe_b = ttl.Pipe(src=(2, 0), dst=(0, 0))
    net_a = ttl.PipeNet([pipe_a])
    net_b = ttl.PipeNet([pipe_b])
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    land_a = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    land_b = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(BLOCKS):
                with land_a.reserve() as blk_a, land_b.reserve() as blk_b:
                    recv_a = ttl.copy(pipe_a, blk_a)
                    recv_b = ttl.copy(pipe_b, blk_b)
                    recv_b.wait()
                    recv_a.wait()
                    recv_a.wait()           # a second wait observes the same transfer
                    chosen = ttl.wait_any((recv_a, recv_b), start=i + 3).index()
                    if chosen == 0:
                        ttl.copy(blk_a, out[0, i]).wait()
                    else:
                        ttl.copy(blk_b, out[0, i]).wait()
                with land_a.wait(), land_b.wait():    # the blocks went to DRAM: free them
                    pass
        elif x == 1:
            for i in range(BLOCKS):
                with send_dfb.reserve() as blk:
                    ttl.copy(a[0, i], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe_a).wait()
        else:
            for i in range(BLOCKS):
                with send_dfb.reserve() as blk:
                    ttl.copy(b[0, i], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe_b).wait()

    del net_a, net_b


def test_the_start_index_rotates_the_choice_among_complete_receives():
    a, b = tile_tensor((32, BLOCKS * 32), seed=3), tile_tensor((32, BLOCKS * 32), seed=4)
    out = zeros((32, BLOCKS * 32))
    rotating_start(a, b, out)
    tiles_a, tiles_b, got = _tiles(a), _tiles(b), _tiles(out)
    for i in range(BLOCKS):
        np.testing.assert_array_equal(got[i], tiles_a[i] if (i + 3) % 2 == 0 else tiles_b[i])


@ttl.operation(grid=(3, 1))
def select_twice(a, b, out):
    """Two selections over the same pending receives: the second may take the receive the first
    completed (it counts as complete and is not completed again) or the other one; then exact waits
    complete whatever is left, and both blocks go to DRAM."""
    pipe_a = ttl.Pipe(src=(1, 0), dst=(0, 0))
    pipe_b = ttl.Pipe(src=(2, 0), dst=(0, 0))
    net_a = ttl.PipeNet([pipe_a])
    net_b = ttl.PipeNet([pipe_b])
    send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    land_a = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
    land_b = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(BLOCKS):
                with land_a.reserve() as blk_a, land_b.reserve() as blk_b:
                    recv_a = ttl.copy(pipe_a, blk_a)
                    recv_b = ttl.copy(pipe_b, blk_b)
                    first = ttl.wait_any((recv_a, recv_b), start=i).index()
                    ttl.wait_any((recv_a, recv_b), start=first + 1)
                    recv_a.wait()
                    recv_b.wait()
                    ttl.copy(blk_a, out[0, 2 * i]).wait()
                    ttl.copy(blk_b, out[0, 2 * i + 1]).wait()
                with land_a.wait(), land_b.wait():    # the blocks went to DRAM: free them
                    pass
        elif x == 1:
            for i in range(BLOCKS):
                with send_dfb.reserve() as blk:
                    ttl.copy(a[0, i], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe_a).wait()
        else:
            for i in range(BLOCKS):
                with send_dfb.reserve() as blk:
                    ttl.copy(b[0, i], blk).wait()
                with send_dfb.wait() as blk:
                    ttl.copy(blk, pipe_b).wait()

    del net_a, net_b


def _run_interleaved(operation, seed: int) -> None:
    """Runs ``operation(a, b, out)`` on tiles of two seeds and checks ``out`` holds a's tile i at
    column 2i and b's at 2i + 1."""
    a, b = tile_tensor((32, BLOCKS * 32), seed=seed), tile_tensor((32, BLOCKS * 32), seed=seed + 1)
    out = zeros((32, 2 * BLOCKS * 32))
    operation(a, b, out)
    tiles_a, tiles_b, got = _tiles(a), _tiles(b), _tiles(out)
    for i in range(BLOCKS):
        np.testing.assert_array_equal(got[2 * i], tiles_a[i])
        np.testing.assert_array_equal(got[2 * i + 1], tiles_b[i])


def test_a_second_selection_over_the_same_receives_completes_each_once():
    _run_interleaved(select_twice, seed=5)


def _loopback(start: int, form: str, misuse: str = ""):
    @ttl.operation(grid=(1, 1))
    def loopback(a, out):
        """One node sends tiles 0 and 1 of ``a`` to itself through two pipe nets (sends first, then
        the receives are posted), selects one receive from ``start`` on and pushes only the selected
        block, in the branch that tests the selection, without an exact wait; that block goes to
        ``out``. The other receive and its block stay pending when the kernel ends."""
        pipe_x = ttl.Pipe(src=(0, 0), dst=(0, 0))
        pipe_y = ttl.Pipe(src=(0, 0), dst=(0, 0))
        net_x = ttl.PipeNet([pipe_x])
        net_y = ttl.PipeNet([pipe_y])
        tiles = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        got_x = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)
        got_y = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            tile_x = tiles.wait()
            sent_x = ttl.copy(tile_x, pipe_x)
            tile_y = tiles.wait()
            sent_y = ttl.copy(tile_y, pipe_y)
            blk_x = got_x.reserve()
            blk_y = got_y.reserve()
            recv_x = ttl.copy(pipe_x, blk_x)
            recv_y = ttl.copy(pipe_y, blk_y)
            sent_x.wait()
            sent_y.wait()
            tile_x.pop()
            tile_y.pop()
            ready = ttl.wait_any((recv_x, recv_y), start=start)
            chosen = ready.index()
            if form == "else":
                if chosen == 0:
                    blk_x.push()
                    with got_x.wait() as res:
                        ttl.copy(res, out[0, 0]).wait()
                else:
                    blk_y.push()
                    with got_y.wait() as res:
                        ttl.copy(res, out[0, 0]).wait()
            elif misuse == "other":
                if chosen == 1:
                    blk_x.push()  # error: other
            elif misuse == "again":
                if chosen == 0:
                    blk_x.push()
                got_x.reserve()  # error: again
            else:
                if chosen == 0:
                    blk_x.push()
                    with got_x.wait() as res:
                        ttl.copy(res, out[0, 0]).wait()
                if ready.index() == 1:
                    blk_y.push()
                    with got_y.wait() as res:
                        ttl.copy(res, out[0, 0]).wait()

        @ttl.datamovement()
        def reader():
            for t in range(2):
                with tiles.reserve() as blk:
                    ttl.copy(a[0, t], blk).wait()

        del net_x, net_y

    return loopback


def test_a_loopback_selection_pushes_the_selected_block_in_its_branch():
    """Both loopback receives are complete when the selection runs: it takes the one at ``start``;
    its block, pushed without an exact wait, reaches DRAM; the other stays pending."""
    a = tile_tensor((32, 64), seed=11)
    tiles = _tiles(a)
    for start, form in ((0, "ifs"), (1, "ifs"), (3, "else"), (2, "else")):
        out = zeros((32, 32))
        _loopback(start, form)(a, out)
        np.testing.assert_array_equal(ttnn.to_numpy(out), tiles[start % 2], err_msg=f"start {start}, {form}")


def test_pushing_a_block_in_the_branch_of_another_selection_is_an_error_at_its_line():
    _expect_error(_loopback(0, "", "other"), "other", "blk_x is pushed while ttl.copy", "call .wait() on it first")


def test_acquiring_after_a_block_pushed_on_one_path_only_is_an_error_at_its_line():
    _expect_error(_loopback(0, "", "again"), "again", "one branch of which pushed blk_x")


def _expect_error(operation, kind: str, *fragments: str) -> None:
    import inspect

    import pytest

    with pytest.raises(KernelError) as info:
        operation(tile_tensor((32, 64)), zeros((32, 32)))
    message = str(info.value)
    line = marked_line(_loopback, f"# error: {kind}")
    assert message.startswith(f"{inspect.getsourcefile(_loopback)}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, message


def test_wait_any_kernels_compile_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    a, b = tile_tensor((32, BLOCKS * 32)), tile_tensor((32, BLOCKS * 32))
    programs = [compiled(two_senders, a, b, zeros((32, 2 * BLOCKS * 32)), zeros((32, BLOCKS * 32))).program,
                compiled(select_twice, a, b, zeros((32, 2 * BLOCKS * 32))).program,
                compiled(_loopback(1, "ifs"), tile_tensor((32, 64)), zeros((32, 32))).program]
    jobs = []
    for n, program in enumerate(programs):
        kernel = next(k for k in program.kernels if k.name == "dm")
        source = emit_kernel(kernel.function)
        assert "while (true)" in source and "volatile tt_l1_ptr uint32_t*>(valid_sem" in source, source
        path = tmp_path / f"dm{n}.cpp"
        path.write_text(source)
        jobs.append((path, "reader", check_kernel.accessor_compile_args(program, kernel)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)


def _misuse(kind: str):
    @ttl.operation(grid=(2, 1))
    def misuse(a, out):
        pipe = ttl.Pipe(src=(1, 0), dst=(0, 0))
        net = ttl.PipeNet([pipe])
        send_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        land = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm():
            x, y = ttl.node(dims=2)
            if x == 0 and kind == "unwaited":
                blk = land.reserve()
                recv = ttl.copy(pipe, blk)
                chosen = ttl.wait_any((recv,), start=0).index()
                if chosen != 0:
                    blk.push()  # error: unwaited
                recv.wait()
            elif x == 0:
                with land.reserve() as blk:
                    recv = ttl.copy(pipe, blk)
                    if kind == "maybe":
                        if y == 0:
                            recv.wait()
                    if kind in ("maybe_selected", "maybe_not_selected"):
                        if y == (0 if kind == "maybe_selected" else 1):
                            ttl.wait_any((recv,), start=0)
                    if kind == "loop":
                        for _ in range(2):
                            ttl.wait_any((recv,), start=0)  # error: loop
                    if kind == "empty":
                        ttl.wait_any((), start=0)  # error: empty
                    elif kind == "twice":
                        ttl.wait_any((recv, recv), start=0)  # error: twice
                    recv.wait()
                    ttl.copy(blk, out[0, 0]).wait()
            else:
                with send_dfb.reserve() as blk:
                    ttl.copy(a[0, 0], blk).wait()
                    sent = ttl.copy(blk, pipe)
                    if kind == "send":
                        ttl.wait_any((sent,), start=0)  # error: send
                    sent.wait()

        del net

    return misuse


def _expect_misuse(kind: str, *fragments: str) -> None:
    import inspect

    import pytest

    with pytest.raises(KernelError) as info:
        _misuse(kind)(tile_tensor((32, 32)), zeros((32, 32)))
    message = str(info.value)
    line = marked_line(_misuse, f"# error: {kind}")
    assert message.startswith(f"{inspect.getsourcefile(_misuse)}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, message


def test_wait_any_with_no_request_is_an_error_at_its_line():
    _expect_misuse("empty", "the tuple of requests is empty")


def test_wait_any_on_a_send_handle_is_an_error_at_its_line():
    _expect_misuse("send", "request 0 is a pipe send handle", "not a pipe receive request")


def test_wait_any_with_one_request_twice_is_an_error_at_its_line():
    _expect_misuse("twice", "requests 0 and 1 are the same receive request")


@pytest.mark.parametrize("kind, seed, flag_set", [("maybe", 9, "received = 1;"), ("maybe_selected", 10, "received = "),
                                                   ("maybe_not_selected", 10, "received = ")])
def test_waiting_after_a_branch_that_may_have_completed_the_receive(kind, seed, flag_set, tmp_path, check_kernel):
    """``if y == 0: recv.wait()`` (``maybe``) or ``if y == ...: ttl.wait_any((recv,), ...)`` (the
    branch taken on the device, or not), then ``recv.wait()``: whether the receive completed is known
    at run time, so the second wait waits only when neither the first wait nor a selection took it
    (a flag the waits and selections set)."""
    from tilefold.codegen.cpp import emit_kernel

    a, out = tile_tensor((32, 32), seed=seed), zeros((32, 32))
    with recorded_programs() as programs:
        _misuse(kind)(a, out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), ttnn.to_numpy(a))
    program = programs[0]
    kernel = next(k for k in program.kernels if k.name == "dm")
    text = emit_kernel(kernel.function)
    assert "if (received == 0) {" in text and flag_set in text, text
    path = tmp_path / "dm.cpp"
    path.write_text(text)
    check_kernel.require_accepted(check_kernel.check_kernel(path, "reader",
                                                            check_kernel.accessor_compile_args(program, kernel)))


def test_using_a_block_a_selection_may_have_completed_without_wait_is_an_error_at_its_line():
    _expect_misuse("unwaited", "blk is pushed while ttl.copy", "call .wait() on it first")


def test_wait_any_in_a_loop_over_a_receive_posted_before_it_is_an_error_at_its_line():
    _expect_misuse("loop", "call ttl.wait_any in the loop iteration and branch that posted it")


def test_wait_any_outside_a_kernel_is_an_error_at_its_line():
    import inspect

    import pytest

    with pytest.raises(KernelError) as info:
        ttl.wait_any((), start=0)  # error: host
    line = marked_line(test_wait_any_outside_a_kernel_is_an_error_at_its_line, "# error: host")
    assert str(info.value).startswith(f"{inspect.getsourcefile(_misuse)}:{line}: "), str(info.value)
    assert "ttl.wait_any describes work on the device" in str(info.value)


def _push_on_one_path_in_a_loop():
    @ttl.operation(grid=(1, 1))
    def push_on_one_path(a, out):
        """A block reserved in a loop iteration and pushed by one branch of an if only."""
        tiles = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def reader():
            for t in range(2):
                blk = tiles.reserve()
                ttl.copy(a[0, t], blk).wait()
                if t == 0:  # error: loop push
                    blk.push()

        @ttl.datamovement()
        def writer():
            with tiles.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    return push_on_one_path


def test_a_push_on_one_path_of_a_loop_iteration_is_an_error_at_the_if():
    import inspect

    import pytest

    with pytest.raises(KernelError) as info:
        _push_on_one_path_in_a_loop()(tile_tensor((32, 64)), zeros((32, 32)))
    line = marked_line(_push_on_one_path_in_a_loop, "# error: loop push")
    message = str(info.value)
    assert message.startswith(f"{inspect.getsourcefile(_loopback)}:{line}: "), message
    assert "blk is pushed by one branch of this if only, inside a loop" in message, message


def _two_pipes_into_node_0(a, out):
    """In an operation's body: pipes from nodes 1 and 2 to node 0, the senders' buffer and node 0's
    two landing buffers."""
    return (ttl.Pipe(src=(1, 0), dst=(0, 0)), ttl.Pipe(src=(2, 0), dst=(0, 0)),
            ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2),
            ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2),
            ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2))


def _send_tiles(tensor, send_dfb, pipe):
    """A sender's loop (inlined into its kernel): each tile of ``tensor``'s first row through ``pipe``."""
    for i in range(BLOCKS):
        with send_dfb.reserve() as blk:
            ttl.copy(tensor[0, i], blk).wait()
        with send_dfb.wait() as blk:
            ttl.copy(blk, pipe).wait()


@ttl.operation(grid=(3, 1))
def wait_the_other(a, b, out):
    """Node 0 takes whichever receive completes first, waits the other one in the branch that did
    not select it, and copies both blocks out after the ``if``: each is complete on both paths."""
    pipe_a, pipe_b, send_dfb, land_a, land_b = _two_pipes_into_node_0(a, out)

    @ttl.datamovement()
    def dm():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(BLOCKS):
                with land_a.reserve() as blk_a, land_b.reserve() as blk_b:
                    recv_a, recv_b = ttl.copy(pipe_a, blk_a), ttl.copy(pipe_b, blk_b)
                    if ttl.wait_any((recv_a, recv_b), start=i).index() == 0:
                        recv_b.wait()
                    else:
                        recv_a.wait()
                    ttl.copy(blk_a, out[0, 2 * i]).wait()
                    ttl.copy(blk_b, out[0, 2 * i + 1]).wait()
                with land_a.wait(), land_b.wait():
                    pass
        elif x == 1:
            _send_tiles(a, send_dfb, pipe_a)
        else:
            _send_tiles(b, send_dfb, pipe_b)


def test_a_receive_selected_on_one_path_and_waited_on_the_other_is_complete_after_the_if():
    _run_interleaved(wait_the_other, seed=7)


@ttl.operation(grid=(3, 1))
def two_ifs_in_a_loop(a, b, out):
    """Each iteration node 0 takes whichever receive completes first and pushes both blocks in one of
    two ``if`` statements on the selection, ``sel == 0`` and ``sel == 1``: between them they cover
    every path, so the next iteration's blocks are where every path leaves them."""
    pipe_a, pipe_b, send_dfb, land_a, land_b = _two_pipes_into_node_0(a, out)

    @ttl.datamovement()
    def dm0():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(BLOCKS):
                blk_a, blk_b = land_a.reserve(), land_b.reserve()
                recv_a, recv_b = ttl.copy(pipe_a, blk_a), ttl.copy(pipe_b, blk_b)
                sel = ttl.wait_any((recv_a, recv_b), start=i).index()
                if sel == 0:
                    recv_b.wait()
                    blk_a.push()
                    blk_b.push()
                if sel == 1:
                    recv_a.wait()
                    blk_a.push()
                    blk_b.push()
        elif x == 1:
            _send_tiles(a, send_dfb, pipe_a)
        else:
            _send_tiles(b, send_dfb, pipe_b)

    @ttl.datamovement()
    def dm1():
        x, _ = ttl.node(dims=2)
        if x == 0:
            for i in range(BLOCKS):
                with land_a.wait() as blk_a, land_b.wait() as blk_b:
                    ttl.copy(blk_a, out[0, 2 * i]).wait()
                    ttl.copy(blk_b, out[0, 2 * i + 1]).wait()


def test_releases_in_two_ifs_covering_every_selection_inside_a_loop():
    _run_interleaved(two_ifs_in_a_loop, seed=9)
