"""Helpers for simulator tests: one-core and multi-core programs from PyKernel kernels, and
the line numbers of statements in a test file (to check that errors name them)."""

from __future__ import annotations

import inspect

import numpy as np

from tilefold.arch.cores import CoreRange, CoreRangeSet
from tilefold.program import ComputeConfig, DataMovementConfig, Program


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
