"""``print(...)`` in TT-Lang kernels: TT-Metal's ``DPRINT`` — each core prints its own runtime
integers (f-strings included), values known at build time as Python prints them; the simulator
shows the final run's lines in simulated-time order, and the C++ passes check-kernel."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.codegen.cpp import emit_kernel
from ttl_helpers import compiled, copy_kernels

SCALE = 2.5


@ttl.operation(grid=(2, 1))
def scale_tiles(a, out):
    dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        n = ttl.node(dims=1)
        print("compute on node", n, f"scale={SCALE:.2f}")
        with dfb.wait() as x, o_dfb.reserve() as o:
            print("got", x)
            o.store(x * SCALE)

    @ttl.datamovement()
    def reader():
        x, _ = ttl.node(dims=2)
        for t in range(2):
            print(f"reader node={x} step={t * 2 + x} first={x < 1}", sep="")
        with dfb.reserve() as blk:
            ttl.copy(a[0, x], blk).wait()

    @ttl.datamovement()
    def writer():
        x, _ = ttl.node(dims=2)
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, x]).wait()


def _tensors():
    a = np.random.default_rng(1).random((32, 64), dtype=np.float32)
    return a, [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, np.zeros_like(a))]


def test_each_core_prints_its_own_values(capsys):
    a, tensors = _tensors()
    scale_tiles(*tensors)
    np.testing.assert_allclose(ttnn.to_numpy(tensors[1]), a * SCALE, rtol=1e-6)
    lines = capsys.readouterr().out.splitlines()
    assert "compute on node 0 scale=2.50" in lines and "compute on node 1 scale=2.50" in lines
    reader = [line for line in lines if line.startswith("reader")]
    assert sorted(reader) == ["reader node=0 step=0 first=1", "reader node=0 step=2 first=1",
                              "reader node=1 step=1 first=0", "reader node=1 step=3 first=0"]
    assert reader.index("reader node=0 step=0 first=1") < reader.index("reader node=0 step=2 first=1")
    assert lines.count("got <block x>") == 2


def test_tt_metal_dprint_cores_chooses_the_cores_that_print(capsys, monkeypatch):
    """As on the device, TT_METAL_DPRINT_CORES names the cores whose prints show (logical x,y)."""
    monkeypatch.setenv("TT_METAL_DPRINT_CORES", "1,0")
    _, tensors = _tensors()
    scale_tiles(*tensors)
    lines = capsys.readouterr().out.splitlines()
    assert "compute on node 1 scale=2.50" in lines and "compute on node 0 scale=2.50" not in lines
    assert sorted(line for line in lines if line.startswith("reader")) == [
        "reader node=1 step=1 first=0", "reader node=1 step=3 first=0"]


def test_tt_metal_dprint_cores_reads_tt_metals_forms():
    from tilefold.arch.cores import CoreCoord
    from tilefold.sim.debug_print_api import cores_to_print

    assert cores_to_print(None) is None and cores_to_print("all") is None and cores_to_print("worker") is None
    assert cores_to_print("1,0") == {CoreCoord(1, 0)}
    assert cores_to_print("(0,0),(2,1)") == {CoreCoord(0, 0), CoreCoord(2, 1)}
    assert cores_to_print("(0,0)-(1,1)") == {CoreCoord(x, y) for x in (0, 1) for y in (0, 1)}
    with pytest.warns(UserWarning, match="TT_METAL_DPRINT_CORES='core 3' is not a core list"):
        assert cores_to_print("core 3") is None


def test_printing_kernels_pass_check_kernel(tmp_path, check_kernel):
    _, tensors = _tensors()
    program = compiled(scale_tiles, *tensors).program
    checked = 0
    for kernel in program.kernels:
        text = emit_kernel(kernel.function)
        if "DPRINT" not in text:
            continue
        assert '#include "api/debug/dprint.h"' in text
        if kernel.name == "compute":
            assert "DPRINT_MATH(DPRINT <<" in text
        path = tmp_path / f"{kernel.name}.cpp"
        path.write_text(text)
        core = "compute" if kernel.name == "compute" else "brisc"
        check_kernel.require_accepted(check_kernel.check_kernel(
            path, core, check_kernel.accessor_compile_args(program, kernel)))
        checked += 1
    assert checked == 2


def test_a_format_spec_of_a_runtime_value_is_a_warning_at_the_line(capsys):
    """DPRINT prints a runtime integer plainly: ``{n:>5}`` is not what the device shows, so it says so
    at the print's line instead of dropping the spec silently."""
    import inspect

    import pytest

    @ttl.operation(grid=(1, 1))
    def op(a, out):
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with dfb.wait() as x, o_dfb.reserve() as o:
                o.store(x)

        @ttl.datamovement()
        def reader():
            print(f"node {ttl.node(dims=1):>5}")  # warning
            with dfb.reserve() as blk:
                ttl.copy(a[0, 0], blk).wait()

        @ttl.datamovement()
        def writer():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    _, tensors = _tensors()
    with pytest.warns(UserWarning, match=r"the format spec :>5 of a runtime value is not applied") as record:
        op(*tensors)
    lines, start = inspect.getsourcelines(test_a_format_spec_of_a_runtime_value_is_a_warning_at_the_line)
    line = start + next(i for i, text in enumerate(lines) if text.rstrip().endswith("# warning"))
    assert any(w.filename == __file__ and w.lineno == line for w in record)
    assert "node 0" in capsys.readouterr().out.splitlines()


@ttl.operation(grid=(1, 1))
def doubled(a, out):
    dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

    @ttl.compute()
    def compute():
        with dfb.wait() as x, o_dfb.reserve() as o:
            print("compute x", x)
            o.store(x + x)
            print(dfb)

    @ttl.datamovement()
    def reader():
        with dfb.reserve() as blk:
            ttl.copy(a[0, 0:2], blk).wait()
            print("reader blk", blk)

    @ttl.datamovement()
    def writer():
        with o_dfb.wait() as blk:
            print("writer blk", blk)
            ttl.copy(blk, out[0, 0:2]).wait()


def _rows_printed(lines: list[str], after: str) -> np.ndarray:
    """The (tiles, 32, 32) values printed after the line ``after``, as TT-Metal's ``print_full_tile``
    prints each tile: ``======``, ``R : ...`` lines, ``++++++``."""
    start = lines.index(after) + 1
    printed = lines[start:start + 2 * 34]
    tiles = [printed[34 * t:34 * t + 34] for t in range(2)]
    assert all(tile[0] == "======" and tile[-1] == "++++++" for tile in tiles), printed
    assert [line.split(" : ")[0] for tile in tiles for line in tile[1:-1]] == [str(r) for _ in range(2)
                                                                             for r in range(32)]
    rows = [line.split(" : ", 1)[1].split() for tile in tiles for line in tile[1:-1]]
    return np.array(rows, dtype=np.float32).reshape(2, 32, 32)


def test_blocks_print_their_tiles_and_buffers_their_state(capsys):
    rng = np.random.default_rng(3)
    a = (rng.integers(-40, 40, (32, 64)) / 4).astype(np.float32)        # exact in six digits
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, np.zeros_like(a))]
    doubled(*tensors)
    lines = capsys.readouterr().out.splitlines()
    tiles = np.stack([a[:, :32], a[:, 32:]])
    np.testing.assert_array_equal(_rows_printed(lines, "reader blk <block blk>"), tiles)
    np.testing.assert_array_equal(_rows_printed(lines, "compute x <block x>"), tiles)
    np.testing.assert_array_equal(_rows_printed(lines, "writer blk <block blk>"), 2 * tiles)
    state = [line for line in lines if line.startswith("cb_id ")]
    # two float32 tiles a block, two blocks: 16 KiB in 16-byte units; the block waited for is read
    assert len(state) == 1 and "size: 1024," in state[0] and "page_size: 256," in state[0] \
        and "num_pages: 4," in state[0] and "wr_tile_ptr: " in state[0]


def test_tile_prints_pass_check_kernel(tmp_path, check_kernel):
    a = np.zeros((32, 64), np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, a)]
    program = compiled(doubled, *tensors).program
    jobs = []
    for kernel in program.kernels:
        text = emit_kernel(kernel.function)
        assert "TileSlice(" in text
        if kernel.name == "compute":
            assert "#if defined(UCK_CHLKC_UNPACK)" in text and "get_local_cb_interface(" in text
        role = "compute" if kernel.name == "compute" else "reader"
        for name, prefix in (("off", ""), ("on", "#define DEBUG_PRINT_ENABLED\n")):   # prints compiled out and in
            path = tmp_path / f"{kernel.name}_{name}.cpp"
            path.write_text(prefix + text)
            jobs.append((path, role, check_kernel.accessor_compile_args(program, kernel)))
    for result in check_kernel.check_kernels(jobs):
        check_kernel.require_accepted(result)


@ttl.operation(grid=(1, 1))
def dst_dump(a, out):
    dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with dfb.wait() as x, o_dfb.reserve() as o:
            result = ttl.math.exp(x)
            print(_dump_dst_registers=True, label="after exp")  # warned
            o.store(result)

    copy_kernels(dfb, o_dfb, a, out)


def test_a_dst_dump_prints_its_label_as_tt_lang_does_with_a_warning_that_no_slot_is_live(capsys, tmp_path, check_kernel):
    a = np.zeros((32, 32), np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a, a)]
    with pytest.warns(UserWarning, match=r"_dump_dst_registers=True\) prints its label only") as caught:
        dst_dump(*tensors)
    assert caught[0].filename == __file__
    assert "=== after exp ===" in capsys.readouterr().out.splitlines()
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[1]), np.ones((32, 32), np.float32))    # exp(0)
    with pytest.warns(UserWarning, match="prints its label only"):
        program = compiled(dst_dump, *tensors).program
    kernel = next(k for k in program.kernels if k.name == "compute")
    path = tmp_path / "compute.cpp"
    path.write_text("#define DEBUG_PRINT_ENABLED\n" + emit_kernel(kernel.function))
    for result in check_kernel.check_kernels([(path, "compute", check_kernel.accessor_compile_args(program, kernel))]):
        check_kernel.require_accepted(result)


def test_the_newer_dst_dump_spelling_prints_its_label_too(capsys):
    """TT-Lang's current ``print(dst=True, label=...)``, as ``_dump_dst_registers=True``."""
    @ttl.operation(grid=(1, 1))
    def dumped(a, out):
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with dfb.wait() as x, o_dfb.reserve() as o:
                result = ttl.math.exp(x)
                print(dst=True, label="after exp", thread="math")  # warned
                o.store(result)

        copy_kernels(dfb, o_dfb, a, out)

    a = np.zeros((32, 32), np.float32)
    tensors = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in (a, a)]
    with pytest.warns(UserWarning, match=r"print\(dst=True\) prints its label only"):
        dumped(*tensors)
    assert "=== after exp ===" in capsys.readouterr().out.splitlines()
    np.testing.assert_array_equal(ttnn.to_numpy(tensors[1]), np.ones((32, 32), np.float32))


def test_num_pages_prints_the_first_tiles_of_a_block(capsys):
    @ttl.operation(grid=(1, 1))
    def first_page(a, out):
        dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2), block_count=2)

        @ttl.datamovement()
        def reader():
            with dfb.reserve() as blk:
                ttl.copy(a[0, 0:2], blk).wait()

        @ttl.datamovement()
        def writer():
            with dfb.wait() as blk:
                print("page", blk, num_pages=1)
                ttl.copy(blk, out[0, 0:2]).wait()

    rng = np.random.default_rng(4)
    a = (rng.integers(-40, 40, (32, 64)) / 4).astype(np.float32)
    first_page(*(ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT) for v in (a, np.zeros_like(a))))
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("page <block blk>") + 1
    assert lines[start] == "======" and lines[start + 33] == "++++++"
    assert lines[start + 34:start + 35] != ["======"]              # one tile only
    rows = [line.split(" : ", 1)[1].split() for line in lines[start + 1:start + 33]]
    np.testing.assert_array_equal(np.array(rows, dtype=np.float32), a[:, :32])
