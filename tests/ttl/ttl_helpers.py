"""Helpers of the TT-Lang tests: examples, running the pipeline, FileCheck, expected error lines."""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from filecheck.matcher import Matcher
from filecheck.options import Options

from tilefold.arch import get_arch
from tilefold.errors import TilefoldError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ttl"


def load_example(name: str):
    """Import ``examples/ttl/<name>.py`` (once per process)."""
    module_name = f"tilefold_example_ttl_{name}"
    if module_name not in sys.modules:
        spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def filecheck(text: str, checks: str) -> None:
    """Match ``text`` against FileCheck ``checks`` (CHECK, CHECK-NEXT, CHECK-SAME, CHECK-NOT ...)."""
    with tempfile.TemporaryDirectory() as tmp:
        check_file, input_file = Path(tmp, "checks"), Path(tmp, "input")
        check_file.write_text(checks)
        input_file.write_text(text)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            matcher = Matcher.from_opts(Options(match_filename=str(check_file), input_file=str(input_file)))
            code = matcher.run()
    if code != 0:
        pytest.fail(f"FileCheck failed:\n{stderr.getvalue()}\n--- input ---\n{text}")


def marked_line(function, marker: str = "# error") -> int:
    """The line of ``function``'s source (a test function) that ends with ``marker``."""
    lines, start = inspect.getsourcelines(function)
    hits = [start + i for i, line in enumerate(lines) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"expected one line marked {marker!r} in {function.__name__}, found {len(hits)}"
    return hits[0]


def expect_error(run, test, error=TilefoldError, *fragments: str):
    """``run()`` raises one ``error`` whose message starts with this file's line marked ``# error`` in
    ``test`` and contains every fragment."""
    with pytest.raises(error) as info:
        run()
    message = str(info.value)
    line = marked_line(test)
    assert message.startswith(f"{inspect.getsourcefile(test)}:{line}: "), message
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    return info.value


@contextlib.contextmanager
def recorded_programs():
    """Inside the block, every TT-Lang operation call also appends its compiled Program to the list
    it yields (the call runs as usual)."""
    import tilefold.run.ttl as runner

    programs = []
    original = runner.run_operation

    def recording(operation, capture, compiled, *rest):
        programs.append(compiled.program)
        return original(operation, capture, compiled, *rest)

    runner.run_operation = recording
    try:
        yield programs
    finally:
        runner.run_operation = original


def compiled(operation, *tensors):
    """The CompiledOperation (lowered module, Program, IR after each pass) of one call."""
    from tilefold.run.ttl import compile_built

    return compile_built(operation.build(tensors, {}), get_arch(None), keep_dumps=True)


def tile_tensor(shape, seed=0, dtype="bfloat16", scale=1.0):
    import tilefold.ttnn as ttnn

    values = (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)
    return ttnn.from_numpy(values, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)


def zeros(shape, dtype="bfloat16"):
    import tilefold.ttnn as ttnn

    return ttnn.zeros(shape, dtype=getattr(ttnn, dtype), layout=ttnn.TILE_LAYOUT)


def mesh_tensors(mesh, *values, dim=0, l1=False):
    """float32 mesh tensors of ``values``, each sharded over the mesh's devices along ``dim`` (in L1
    with ``l1``)."""
    import tilefold.ttnn as ttnn

    out = [ttnn.from_numpy(v, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=mesh,
                           mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=dim)) for v in values]
    return [ttnn.to_memory_config(t, ttnn.L1_MEMORY_CONFIG) for t in out] if l1 else out


def read_mesh(tensor, mesh, dim=0):
    """A mesh tensor's pieces joined along ``dim``, as numpy."""
    import tilefold.ttnn as ttnn

    return ttnn.to_numpy(tensor, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=dim))


def copy_kernels(x_dfb, y_dfb, x, y, rows=1):
    """A reader and a writer moving ``rows`` single-tile blocks between tensors and two buffers."""
    import tilefold.ttl as ttl

    @ttl.datamovement()
    def read():
        for r in range(rows):
            with x_dfb.reserve() as blk:
                ttl.copy(x[r, 0], blk).wait()

    @ttl.datamovement()
    def write():
        for r in range(rows):
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[r, 0]).wait()


def node_column_kernels(x_dfb, y_dfb, x, y):
    """A reader and a writer moving tile (0, n) of the tensors through two buffers on node n of a
    one-dimensional grid."""
    import tilefold.ttl as ttl

    @ttl.datamovement()
    def read():
        n = ttl.node(dims=1)
        with x_dfb.reserve() as blk:
            ttl.copy(x[0, n], blk).wait()

    @ttl.datamovement()
    def write():
        n = ttl.node(dims=1)
        with y_dfb.wait() as blk:
            ttl.copy(blk, y[0, n]).wait()


def _first_tile_copy():
    import tilefold.ttl as ttl

    @ttl.operation(grid=(1, 1))
    def copy_first_tile(inp, out):
        """Tile (0, 0) of ``inp`` into tile (0, 0) of ``out``, through one buffer (no compute)."""
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as block:
                ttl.copy(inp[0, 0], block).wait()

        @ttl.datamovement()
        def write():
            with dfb.wait() as block:
                ttl.copy(block, out[0, 0]).wait()

    return copy_first_tile


copy_first_tile = _first_tile_copy()
