"""Helpers for simulator tests: one-core and multi-core programs from PyKernel kernels, and
the line numbers of statements in a test file (to check that errors name them)."""

from __future__ import annotations

import inspect
from pathlib import Path

import ml_dtypes
import numpy as np

from tilefold.arch.cores import CoreRange, CoreRangeSet
from tilefold.program import ComputeConfig, DataMovementConfig, Program
from tilefold.pykernel import *  # noqa: F403
from tilefold.sim import Device


def line_of(fn, text: str, nth: int = 0) -> int:
    """Line number (in its file) of the ``nth`` line of ``fn``'s source containing ``text``."""
    target = getattr(fn, "python_function", fn)
    lines, start = inspect.getsourcelines(target)
    hits = [start + i for i, line in enumerate(lines) if text in line]
    assert hits, f"{text!r} not in {target.__name__}"
    return hits[nth]


def where(fn, text: str, nth: int = 0) -> str:
    """``"file:line"`` of a statement of a kernel, as errors print it."""
    target = getattr(fn, "python_function", fn)
    return f"{inspect.getsourcefile(target)}:{line_of(fn, text, nth)}"


def grid(gx: int, gy: int = 1) -> CoreRangeSet:
    return CoreRangeSet([CoreRange((0, 0), (gx - 1, gy - 1))])


def tile_program(reader=None, compute=None, writer=None, *, cores=None, cbs=((0, 2), (16, 2)),
                 buffers=(("src", (32, 32), "input"), ("dst", (32, 32), "output")), dtype="bfloat16",
                 reader_args=None, compute_args=None, writer_args=None, reader_ct=None, writer_ct=None,
                 compute_ct=(), compute_config=None, semaphores=0):
    """A program of up to three kernels over tile buffers; ``*_args`` are callables
    (program, core index, core) -> runtime args."""
    cores = cores or grid(1)
    prog = Program("test")
    bufs = {name: prog.add_buffer(name, shape, dtype, role=role) for name, shape, role in buffers}
    for index, pages in cbs:
        tile_bytes = bufs[next(iter(bufs))].page_size
        prog.create_circular_buffer(cores, index, tile_bytes, pages, dtype)
    for _ in range(semaphores):
        prog.create_semaphore(cores, 0)
    kernels = []
    spec = ((reader, DataMovementConfig("RISCV_0"), reader_ct, reader_args),
            (compute, compute_config or ComputeConfig(), list(compute_ct), compute_args),
            (writer, DataMovementConfig("RISCV_1"), writer_ct, writer_args))
    for kernel, config, ct, args in spec:
        if kernel is None:
            continue
        if ct is None:
            ct = [b.accessor_args for b in bufs.values()]
        k = prog.create_kernel(kernel, cores, config, ct)
        for i, core in enumerate(cores.cores()):
            prog.set_runtime_args(k, core, args(bufs, i, core) if args else [])
        kernels.append(k)
    return prog, bufs


def random_tiles(shape, seed=0) -> np.ndarray:
    import ml_dtypes

    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


# -- a reader of two tile buffers and a writer of one, around any compute kernel ------------------------

A, B, OUT = 0, 1, 16


@reader_kernel
def read_two():
    a = get_arg_val(0)
    b = get_arg_val(1)
    na = get_arg_val(2)
    nb = get_arg_val(3)
    sa = TensorAccessor(TensorAccessorArgs(0), a, get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), b, get_tile_size(B))
    cb_reserve_back(A, na)
    for i in range(na):
        noc_async_read_page(i, sa, get_write_ptr(A) + i * get_tile_size(A))
    cb_reserve_back(B, nb)
    for i in range(nb):
        noc_async_read_page(i, sb, get_write_ptr(B) + i * get_tile_size(B))
    noc_async_read_barrier()
    cb_push_back(A, na)
    cb_push_back(B, nb)


# one tile of A and of B at a time through two-page CBs, in the order a tile-by-tile matmul takes
# them: for each output tile (m, n), the K tiles A[m, k] and B[k, n]
@reader_kernel
def stream_tiles():
    a = get_arg_val(0)
    b = get_arg_val(1)
    mt = get_arg_val(2)
    kt = get_arg_val(3)
    nt = get_arg_val(4)
    sa = TensorAccessor(TensorAccessorArgs(0), a, get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), b, get_tile_size(B))
    for m in range(mt):
        for n in range(nt):
            for k in range(kt):
                cb_reserve_back(A, 1)
                noc_async_read_page(m * kt + k, sa, get_write_ptr(A))
                cb_reserve_back(B, 1)
                noc_async_read_page(k * nt + n, sb, get_write_ptr(B))
                noc_async_read_barrier()
                cb_push_back(A, 1)
                cb_push_back(B, 1)


@writer_kernel
def write_out():
    dst = get_arg_val(0)
    n = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(4), dst, get_tile_size(OUT))
    cb_wait_front(OUT, n)
    for i in range(n):
        noc_async_write_page(i, s, get_read_ptr(OUT) + i * get_tile_size(OUT))
    noc_async_write_barrier()
    cb_pop_front(OUT, n)


def run_two_input(compute, a, b, out_shape, *, dtype="bfloat16", out_dtype=None, config=None, compute_args=()):
    """Run ``compute`` between a reader of buffers ``a``, ``b`` (CBs 0, 1) and a writer of ``out`` (CB 16)."""
    prog = Program("two_inputs")
    ba = prog.add_buffer("a", a.shape, dtype)
    bb = prog.add_buffer("b", b.shape, dtype)
    bo = prog.add_buffer("out", out_shape, out_dtype or dtype, role="output")
    cores = grid(1)
    prog.create_circular_buffer(cores, A, ba.page_size, ba.num_pages, dtype)
    prog.create_circular_buffer(cores, B, bb.page_size, bb.num_pages, dtype)
    prog.create_circular_buffer(cores, OUT, bo.page_size, bo.num_pages, out_dtype or dtype)
    r = prog.create_kernel(read_two, cores, DataMovementConfig("RISCV_0"),
                           [ba.accessor_args, bb.accessor_args, bo.accessor_args])
    c = prog.create_kernel(compute, cores, config or ComputeConfig())
    w = prog.create_kernel(write_out, cores, DataMovementConfig("RISCV_1"),
                           [ba.accessor_args, bb.accessor_args, bo.accessor_args])
    prog.set_runtime_args(r, (0, 0), [ba.address, bb.address, ba.num_pages, bb.num_pages])
    prog.set_runtime_args(c, (0, 0), list(compute_args))
    prog.set_runtime_args(w, (0, 0), [bo.address, bo.num_pages])
    return Device().run(prog, {"a": a, "b": b})


EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_scripts() -> list[Path]:
    """Every example kernel script (TT-Lang, TileLang, PyKernel). The autotuning examples sweep
    dozens of configurations of kernels other examples run; their small-shape runs are in
    tests/autotune."""
    return sorted(p for p in EXAMPLES.glob("*/*.py")
                  if p.parent.name in ("ttl", "tilelang", "pykernel") and not p.stem.startswith("autotune"))


def bf16(x):
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def step_model(a, b, fp32: bool):
    """Matmul as the device steps through K: each K tile's products summed exactly and rounded to
    float32, added to DST (rounded to bfloat16 unless ``fp32``), packed as bfloat16."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k in range(0, a.shape[1], 32):
        acc = acc + (a[:, k:k + 32].astype(np.float64) @ b[k:k + 32]).astype(np.float32)
        acc = acc if fp32 else bf16(acc)
    return bf16(acc)
