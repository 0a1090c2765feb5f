"""Tensor-backed dataflow buffers (``ttl.make_tensor_backed_dfb``, ``dfb.publish()``): a buffer whose
storage is a sharded L1 tensor's shard on each node, computed on in place, against numpy on the
simulated device; the C++ passes check-kernel and check-host; misuse is one error at the user's line."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, KernelValueError
from ttl_helpers import compiled, expect_error

TILE = 32


def _sharded(shape, grid, strategy, seed=0, zero=False):
    config = ttnn.create_sharded_memory_config(shape, ttnn.CoreGrid(x=grid[0], y=grid[1]),
                                               getattr(ttnn.ShardStrategy, strategy.upper()))
    if zero:
        return ttnn.zeros(shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=config)
    values = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=config)


@ttl.operation(grid=(2, 2))
def scale_shards(x, y):
    """y = 2x + 1 on each node's 2x2-tile shard, one tile per block, with no copy in or out."""
    x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1), block_count=4)
    y_dfb = ttl.make_tensor_backed_dfb(y, shape=(1, 1), block_count=4)

    @ttl.compute()
    def compute():
        for _ in range(4):
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a * 2.0 + 1.0)

    @ttl.datamovement()
    def read():
        x_dfb.publish()

    @ttl.datamovement()
    def write():
        for _ in range(4):
            with y_dfb.wait():
                pass


@ttl.operation(grid=(2, 1))
def exp_in_place(x):
    """x = exp(x): input and output buffers are the same shard; the writer side waits for nothing."""
    src = ttl.make_tensor_backed_dfb(x, shape=(1, 2), block_count=2)
    dst = ttl.make_tensor_backed_dfb(x, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(2):
            a = src.wait()
            b = dst.reserve()
            b.store(ttl.math.exp(a))
            b.push()
            a.pop()

    @ttl.datamovement()
    def read():
        src.publish()


@ttl.operation(grid=(4, 1))
def row_sums_of_second_half(x, out):
    """The published tiles 2-3 of each node's 1x4-tile shard (byte_offset) summed per row into DRAM."""
    half = ttl.make_tensor_backed_dfb(x, shape=(1, 2), byte_offset=2 * 2048)
    sums = ttl.make_dataflow_buffer_like(out, shape=(1, 1))

    @ttl.compute()
    def compute():
        with half.wait() as a, sums.reserve() as s:
            s.store(ttl.math.reduce_sum(a, dims=[1]))

    @ttl.datamovement()
    def read():
        half.publish()

    @ttl.datamovement()
    def write():
        x_node, _ = ttl.node(dims=2)
        with sums.wait() as s:
            ttl.copy(s, out[x_node:x_node + 1, 0:1]).wait()


def test_a_compute_kernel_reads_and_writes_sharded_tensors_in_place():
    x = _sharded((4 * TILE, 4 * TILE), (2, 2), "block")
    y = _sharded((4 * TILE, 4 * TILE), (2, 2), "block", zero=True)
    before = ttnn.to_numpy(x).astype(np.float64)
    scale_shards(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), before * 2 + 1, rtol=0.01, atol=0.02)
    np.testing.assert_array_equal(ttnn.to_numpy(x), before)       # the input keeps its values


def test_input_and_output_buffers_over_one_tensor_update_it_in_place():
    x = _sharded((2 * TILE, 4 * TILE), (2, 1), "width", seed=1)
    before = ttnn.to_numpy(x).astype(np.float64)
    exp_in_place(x)
    np.testing.assert_allclose(ttnn.to_numpy(x), np.exp(before), rtol=0.02, atol=0.02)


def test_published_blocks_from_a_byte_offset_feed_a_compute_kernel():
    x = _sharded((4 * TILE, 4 * TILE), (4, 1), "height", seed=2)
    out = ttnn.zeros((4 * TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    values = ttnn.to_numpy(x).astype(np.float64)
    row_sums_of_second_half(x, out)
    expected = values[:, 2 * TILE:].sum(axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(out)[:, 0], expected, rtol=0.03, atol=0.3)


def test_the_circular_buffers_are_at_the_tensors_address():
    x = _sharded((4 * TILE, 4 * TILE), (4, 1), "height")
    out = ttnn.zeros((4 * TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    program = compiled(row_sums_of_second_half, x, out).program
    half = next(cb for cb in program.circular_buffers if cb.name == "half")
    assert (half.backing_buffer, half.backing_offset, half.num_pages) == ("x", 4096, 2)
    assert program.buffer("x").role == "inout"
    from tilefold.arch import get_arch
    from tilefold.sim.allocator import allocate

    alloc = allocate(program, get_arch(None))
    placed = next(p for p in alloc.circular_buffers if p.index == half.index)
    assert placed.address == alloc.buffers["x"].address + 4096


def test_the_kernels_and_host_program_compile_against_the_real_headers(tmp_path, check_kernel):
    import tilefold.run.ttl as runner
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import emit_kernel
    from tilefold.frontend.ttl import session

    programs = []
    original = runner.run_operation

    def recording(operation, capture, compiled, *rest):
        programs.append((capture.name, compiled.program))
        return original(operation, capture, compiled, *rest)

    runner.run_operation = recording
    try:
        with session.configured(project_dir=tmp_path / "projects"):
            row_sums_of_second_half(_sharded((4 * TILE, 4 * TILE), (4, 1), "height"),
                                    ttnn.zeros((4 * TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))
            scale_shards(_sharded((4 * TILE, 4 * TILE), (2, 2), "block"),
                         _sharded((4 * TILE, 4 * TILE), (2, 2), "block", zero=True))
    finally:
        runner.run_operation = original
    jobs = []
    for name, program in programs:
        for k in program.kernels:
            path = tmp_path / f"{name}_{k.name}.cpp"
            path.write_text(emit_kernel(k.function))
            role = "compute" if k.is_compute else ("reader" if k.processor == "RISCV_0" else "writer")
            jobs.append((path, role, check_kernel.accessor_compile_args(program, k)))
    mains = sorted((tmp_path / "projects").glob("*/main.cpp"))
    texts = {path.parent.name: path.read_text() for path in mains}
    assert any(".address_offset = 4096" in t and "get_reference_buffer()" in t for t in texts.values()), texts.keys()
    assert any("set_globally_allocated_address" in t for t in texts.values())
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)
    require_hosts_accepted(check_hosts(mains))


def test_a_dram_tensor_is_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1))  # error

            @ttl.compute()
            def compute():
                with x_dfb.wait():
                    pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()

        op(ttnn.zeros((TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT))

    expect_error(test, test, KernelError, "x is in DRAM", "sharded L1 tensor")


def test_blocks_that_do_not_fit_the_shard_are_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(2, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 2), block_count=2)  # error

            @ttl.compute()
            def compute():
                for _ in range(2):
                    with x_dfb.wait():
                        pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()

        op(_sharded((2 * TILE, 2 * TILE), (2, 1), "height"))

    expect_error(test, test, KernelError, "4 tiles", "do not fit the 2 tiles of x's shard")


def test_a_node_without_a_shard_has_no_such_buffer():
    """The buffer lives on the nodes holding a shard (TT-Lang's tree reduction writes its result
    through a buffer over a tensor sharded on the root only); a node without one that uses it stops
    the run at that line."""
    from tilefold.errors import CircularBufferError

    def test():
        @ttl.operation(grid=(2, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1))

            @ttl.compute()
            def compute():
                with x_dfb.wait():  # error
                    pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()

        op(_sharded((TILE, TILE), (1, 1), "height"))

    expect_error(test, test, CircularBufferError, "is not configured on core (1,0)")


def test_publishing_twice_is_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1))

            @ttl.compute()
            def compute():
                with x_dfb.wait():
                    pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()
                x_dfb.publish()  # error

        op(_sharded((TILE, TILE), (1, 1), "height"))

    expect_error(test, test, KernelError, "x_dfb.publish() a second time")


def test_publishing_a_buffer_with_storage_of_its_own_is_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))

            @ttl.compute()
            def compute():
                with x_dfb.wait():
                    pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()  # error

        op(_sharded((TILE, TILE), (1, 1), "height"))

    expect_error(test, test, KernelError, "needs a tensor-backed buffer")


def test_an_unaligned_byte_offset_is_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1), byte_offset=100)  # error

            @ttl.compute()
            def compute():
                with x_dfb.wait():
                    pass

            @ttl.datamovement()
            def read():
                x_dfb.publish()

        op(_sharded((TILE, TILE), (1, 1), "height"))

    expect_error(test, test, KernelValueError, "byte_offset must be a non-negative multiple of the buffer's 2048-byte page")


def test_calls_with_another_byte_offset_build_another_program():
    x = _sharded((TILE, 2 * TILE), (1, 1), "height", seed=3)
    values = ttnn.to_numpy(x).astype(np.float64)
    for offset, cols in ((0, slice(0, TILE)), (2048, slice(TILE, 2 * TILE)), (0, slice(0, TILE))):
        out = ttnn.zeros((TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        first_tile_sum(x, out, offset)
        np.testing.assert_allclose(ttnn.to_numpy(out)[:, 0], values[:, cols].sum(axis=1), rtol=0.03, atol=0.3)


@ttl.operation(grid=(1, 1))
def first_tile_sum(x, out, offset):
    part = ttl.make_tensor_backed_dfb(x, shape=(1, 1), byte_offset=offset)
    sums = ttl.make_dataflow_buffer_like(out, shape=(1, 1))

    @ttl.compute()
    def compute():
        with part.wait() as a, sums.reserve() as s:
            s.store(ttl.math.reduce_sum(a, dims=[1]))

    @ttl.datamovement()
    def read():
        part.publish()

    @ttl.datamovement()
    def write():
        with sums.wait() as s:
            ttl.copy(s, out[0:1, 0:1]).wait()


def test_publishing_in_a_loop_is_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1))

            @ttl.compute()
            def compute():
                for _ in range(2):
                    with x_dfb.wait():
                        pass

            @ttl.datamovement()
            def read():
                for _ in range(2):
                    x_dfb.publish()  # error

        op(_sharded((TILE, TILE), (1, 1), "height"))

    expect_error(test, test, KernelError, "x_dfb.publish() in a loop")


def test_partly_overlapping_ranges_of_one_tensor_are_refused_at_the_users_line():
    def test():
        @ttl.operation(grid=(1, 1))
        def op(x):
            a = ttl.make_tensor_backed_dfb(x, shape=(1, 2))
            b = ttl.make_tensor_backed_dfb(x, shape=(1, 2), byte_offset=2048)  # error

            @ttl.compute()
            def compute():
                with a.wait() as blk, b.reserve() as out:
                    out.store(blk)

            @ttl.datamovement()
            def read():
                a.publish()

        op(_sharded((TILE, 4 * TILE), (1, 1), "height"))

    expect_error(test, test, KernelError, "b (bytes 2048-6144 of x's shard) partly overlaps a (bytes 0-4096)")


WIDTH = 7 * TILE * TILE      # 224 tiles of 1x32: their bytes are 7 tiles of 32x32


@ttl.operation(grid=(1, 1))
def sum_of_squares(x, out):
    """A tensor of 1x32 tiles computed on as 32x32 tiles: the buffer's tiles are the shard's bytes,
    32 of the tensor's pages each (TT-Lang's tensor-backed sum-of-squares test)."""
    x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 7), tile=(TILE, TILE))
    out_dfb = ttl.make_tensor_backed_dfb(out, shape=(1, 1), tile=(TILE, TILE))

    @ttl.compute()
    def compute():
        with x_dfb.wait() as a, out_dfb.reserve() as s:
            s.store(ttl.math.reduce_sum(a * a, dims=[0, 1]))

    @ttl.datamovement()
    def read():
        x_dfb.publish()

    @ttl.datamovement()
    def write():
        with out_dfb.wait():
            pass


def _one_core_shard(shape):
    core = ttnn.CoreRangeSet({ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(0, 0))})
    return ttnn.MemoryConfig(ttnn.TensorMemoryLayout.HEIGHT_SHARDED, ttnn.BufferType.L1,
                             ttnn.ShardSpec(core, shape, ttnn.ShardOrientation.ROW_MAJOR))


def _tiny_tile_input(width=WIDTH):
    values = np.random.default_rng(4).standard_normal((1, width)).astype(np.float32)
    return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, TILE)),
                           memory_config=_one_core_shard((1, width)))


def test_a_shard_of_small_tiles_is_computed_on_as_32x32_tiles():
    x = _tiny_tile_input()
    out = ttnn.zeros((TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=_one_core_shard((TILE, TILE)))
    sum_of_squares(x, out)
    want = np.square(x.host_values.astype(np.float64)).sum()
    np.testing.assert_allclose(out.host_values[0, 0], want, rtol=2e-2)
    main = compiled(sum_of_squares, x, out).program
    assert [cb.page_size for cb in main.circular_buffers][:2] == [2048, 2048]


def test_small_tiles_that_make_no_whole_buffer_tile_are_refused_at_the_users_line():
    @ttl.operation(grid=(1, 1))
    def one_tile(x):
        x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, 1), tile=(TILE, TILE), byte_offset=64)  # error

        @ttl.compute()
        def compute():
            with x_dfb.wait() as a:
                pass

        @ttl.datamovement()
        def read():
            x_dfb.publish()

    expect_error(lambda: one_tile(_tiny_tile_input()), test_small_tiles_that_make_no_whole_buffer_tile_are_refused_at_the_users_line,
                 KernelError, "byte_offset")


ROWS = 14        # 14 tiles of 1x32: one 32x32 tile's first 896 bytes


@ttl.operation(grid=(1, 1))
def double_compact_rows(x, out):
    """Buffers of the tensors' own 1x32 tiles (tile=None), their bytes moved into and out of a 32x32
    tile the compute kernel doubles (TT-Lang's compact tree reduction moves its rows this way)."""
    x_dfb = ttl.make_tensor_backed_dfb(x, shape=(1, ROWS))
    out_dfb = ttl.make_tensor_backed_dfb(out, shape=(1, ROWS))
    staged = ttl.make_dfb(ttnn.bfloat16, shape=(1, 1), block_count=1)
    doubled = ttl.make_dfb(ttnn.bfloat16, shape=(1, 1), block_count=1)
    size = ROWS * TILE * 2

    @ttl.datamovement()
    def read():
        x_dfb.publish()
        with x_dfb.wait() as rows, staged.reserve() as blk:
            ttl.copy(rows, blk, byte_count=size).wait()

    @ttl.compute()
    def compute():
        with staged.wait() as a, doubled.reserve() as b:
            b.store(a * 2.0)

    @ttl.datamovement()
    def write():
        with doubled.wait() as blk, out_dfb.reserve() as rows:
            ttl.copy(blk, rows, byte_count=size).wait()


def test_buffers_of_the_tensors_own_small_tiles_move_their_bytes_through_a_full_tile():
    values = np.random.default_rng(6).standard_normal((ROWS, TILE)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, tile=ttnn.Tile((1, TILE)),
                        memory_config=_one_core_shard((ROWS, TILE)))
    out = ttnn.from_numpy(np.zeros((ROWS, TILE), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                          tile=ttnn.Tile((1, TILE)), memory_config=_one_core_shard((ROWS, TILE)))
    double_compact_rows(x, out)
    np.testing.assert_array_equal(out.host_values, x.host_values * 2)
    program = compiled(double_compact_rows, x, out).program
    assert [cb.page_size for cb in program.circular_buffers][:2] == [64, 64]


@ttl.operation(grid=(2, 1))
def gather_to_root(x, out):
    """Node 1 sends its tile to node 0, which writes it through a buffer over ``out``, a tensor
    sharded on node 0 only (node 1 never uses that buffer)."""
    net = ttl.PipeNet([ttl.Pipe(src=(1, 0), dst=(0, 0))])
    out_dfb = ttl.make_tensor_backed_dfb(out, shape=(1, 1))
    stage = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def move():
        node, _ = ttl.node(dims=2)
        if node == 1:
            with stage.reserve() as blk:
                ttl.copy(x[0:1, 1:2], blk).wait()
                net.if_src(lambda pipe: ttl.copy(blk, pipe).wait())
        else:
            with out_dfb.reserve() as blk:
                net.if_dst(lambda pipe: ttl.copy(pipe, blk).wait())


def test_a_buffer_over_a_tensor_sharded_on_some_nodes_lives_there():
    values = np.random.default_rng(7).standard_normal((TILE, 2 * TILE)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.zeros((TILE, TILE), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                     memory_config=_one_core_shard((TILE, TILE)))
    gather_to_root(x, out)
    np.testing.assert_array_equal(out.host_values, x.host_values[:, TILE:])


def increment_by(amount):
    @ttl.operation(grid=(2, 2))
    def increment(state):
        """The state tensor's shard on each node, plus ``amount``, stored back into its waited block."""
        state_dfb = ttl.make_tensor_backed_dfb(state, shape=(1, 1), block_count=1)

        @ttl.compute()
        def update():
            with state_dfb.wait() as s:
                s.store(s + ttl.block.fill(amount, shape=s.shape, dtype=s.dtype))

        @ttl.datamovement()
        def publish():
            state_dfb.publish()

    return increment


def test_a_store_into_a_waited_block_of_a_one_block_tensor_backed_buffer_writes_the_tensor(tmp_path, check_kernel):
    """TT-Lang's persistent state: the waited block is the shard, so the store changes the tensor
    (it goes through a hidden twin buffer over the same bytes); the C++ passes the real headers."""
    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import HostData, write_project

    state = _sharded((2 * TILE, 2 * TILE), (2, 2), "block", seed=3)
    start = ttnn.to_numpy(state)
    add_one, add_two = increment_by(1.0), increment_by(2.0)
    for _ in range(2):
        add_one(state)
        add_two(state)
    expected = start
    for amount in (1.0, 2.0, 1.0, 2.0):
        expected = (expected + np.float32(amount)).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(state), expected)

    built = compiled(add_one, state)
    program = built.program
    assert any("stores into its shard" in cb.name for cb in program.circular_buffers)
    for result in check_kernel.check_kernels(check_kernel.compiled_kernel_jobs(built, tmp_path)):
        check_kernel.require_accepted(result)
    write_project(program, tmp_path / "project", HostData(inputs={"state": bytes(program.buffer("state").size)}))
    require_hosts_accepted(check_hosts([tmp_path / "project" / "main.cpp"]))


@ttl.operation(grid=(2, 1))
def square_plus_one_by_blocks(state):
    """Each node's 1x4-tile shard in four one-tile blocks: each block waited, replaced by x * x + 1
    and popped, so the tensor holds the squares."""
    state_dfb = ttl.make_tensor_backed_dfb(state, shape=(1, 1), block_count=4)

    @ttl.compute()
    def update():
        for _ in range(4):
            with state_dfb.wait() as s:
                s.store(s * s + 1.0)

    @ttl.datamovement()
    def publish():
        state_dfb.publish()


@ttl.operation(grid=(2, 1))
def halve_after_the_first_block(state):
    """The first block popped as it is, the next three halved: the stores follow the read pointer
    past a block nothing was stored into."""
    state_dfb = ttl.make_tensor_backed_dfb(state, shape=(1, 1), block_count=4)

    @ttl.compute()
    def update():
        with state_dfb.wait():
            pass
        for _ in range(3):
            with state_dfb.wait() as s:
                s.store(s * 0.5)

    @ttl.datamovement()
    def publish():
        state_dfb.publish()


@ttl.operation(grid=(2, 1))
def pairs_held_together(state):
    """Two one-tile blocks held at once, twice over each node's 1x4-tile shard: the younger one
    (a block after the read pointer) stored into first, then the older one; the younger popped
    first, so the older one's pop frees both."""
    state_dfb = ttl.make_tensor_backed_dfb(state, shape=(1, 1), block_count=4)

    @ttl.compute()
    def update():
        for _ in range(2):
            older = state_dfb.wait()
            younger = state_dfb.wait()
            younger.store(younger + 10.0)
            older.store(older - 10.0)
            younger.pop()
            older.pop()

    @ttl.datamovement()
    def publish():
        state_dfb.publish()


def _bf16(values):
    return np.asarray(values, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def test_a_store_into_each_waited_block_of_a_tensor_backed_buffer_writes_its_own_slot(tmp_path, check_kernel):
    """A buffer of four blocks over each node's shard: every store lands in the block the wait
    returned (the twin buffer's write pointer follows the read pointer), run twice on one tensor."""
    state = _sharded((TILE, 8 * TILE), (2, 1), "width", seed=4)
    start = ttnn.to_numpy(state).astype(np.float32)
    square_plus_one_by_blocks(state)
    once = _bf16(_bf16(start * start) + 1)
    np.testing.assert_allclose(ttnn.to_numpy(state), once, rtol=1e-2, atol=1e-2)
    square_plus_one_by_blocks(state)
    np.testing.assert_allclose(ttnn.to_numpy(state), _bf16(_bf16(once * once) + 1), rtol=2e-2, atol=2e-2)

    from checkhost import check_hosts, require_hosts_accepted
    from tilefold.codegen.cpp import HostData, write_project

    built = compiled(square_plus_one_by_blocks, state)
    program = built.program
    twin = next(cb for cb in program.circular_buffers if "stores into its shard" in cb.name)
    assert (twin.backing_buffer, twin.num_pages) == ("state", 4)
    for result in check_kernel.check_kernels(check_kernel.compiled_kernel_jobs(built, tmp_path)):
        check_kernel.require_accepted(result)
    write_project(program, tmp_path / "project", HostData(inputs={"state": bytes(program.buffer("state").size)}))
    require_hosts_accepted(check_hosts([tmp_path / "project" / "main.cpp"]))


def test_stores_follow_the_read_pointer_past_blocks_nothing_was_stored_into(tmp_path, check_kernel):
    state = _sharded((TILE, 8 * TILE), (2, 1), "width", seed=5)
    start = ttnn.to_numpy(state).astype(np.float32)
    halve_after_the_first_block(state)
    expected = start.copy()
    for node in range(2):
        columns = slice(node * 4 * TILE + TILE, (node + 1) * 4 * TILE)     # the node's tiles 1-3
        expected[:, columns] = start[:, columns] * 0.5
    np.testing.assert_array_equal(ttnn.to_numpy(state), expected)
    for result in check_kernel.check_kernels(check_kernel.compiled_kernel_jobs(
            compiled(halve_after_the_first_block, state), tmp_path)):
        check_kernel.require_accepted(result)


def test_a_store_into_a_younger_held_block_writes_that_block(tmp_path, check_kernel):
    state = _sharded((TILE, 8 * TILE), (2, 1), "width", seed=6)
    start = ttnn.to_numpy(state).astype(np.float32)
    pairs_held_together(state)
    tiles = start.reshape(TILE, 8, TILE)
    expected = np.where((np.arange(8) % 2 == 0)[None, :, None], _bf16(tiles - 10), _bf16(tiles + 10))
    np.testing.assert_allclose(ttnn.to_numpy(state), expected.reshape(TILE, 8 * TILE), rtol=1e-2, atol=0.1)
    for result in check_kernel.check_kernels(check_kernel.compiled_kernel_jobs(
            compiled(pairs_held_together, state), tmp_path)):
        check_kernel.require_accepted(result)


def test_a_store_into_a_buffer_whose_blocks_a_cpp_function_may_move_is_refused():
    @ttl.operation(grid=(2, 1))
    def increment(state):
        state_dfb = ttl.make_tensor_backed_dfb(state, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with state_dfb.wait() as s:
                s.store(s + 1.0)  # error
            ttl.call_extern_func("/dev/null/not_a_header.hpp", "ext::advance", func_args=[state_dfb])

        @ttl.datamovement()
        def read():
            state_dfb.publish()

    state = _sharded((32, 128), (2, 1), "width")
    expect_error(lambda: increment(state),
                 test_a_store_into_a_buffer_whose_blocks_a_cpp_function_may_move_is_refused,
                 KernelError, "state_dfb", "C++ function calls move its blocks", "block_count=1")
