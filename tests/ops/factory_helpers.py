"""Helpers of the program-factory tests: build an op as the command line does, run a program on
the simulated device and read an output buffer at its padded shape (so padding is checked too)."""

from __future__ import annotations

import argparse

import numpy as np

from tilefold.ops import get_factory
from tilefold.sim import Device


def build(op: str, *argv: str, arch=None):
    """The OpInstance of ``tilefold run OP ARGV...``."""
    factory = get_factory(op)
    parser = argparse.ArgumentParser()
    factory.add_arguments(parser)
    args = parser.parse_args(list(argv))
    args.arch = arch
    return factory.build(args)


def run(program, inputs, *, padded: dict | None = None):
    """Run ``program``; ``padded`` maps output buffers to the shape to read them at (the same
    pages viewed at TT-NN's padded shape, so padding values are returned too)."""
    for name, shape in (padded or {}).items():
        program.buffer(name).shape = tuple(shape)
    return Device(program.arch).run(program, inputs)


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)


def random_values(shape, dtype, seed=0) -> np.ndarray:
    """Normal values, exactly representable in ``dtype``."""
    import ml_dtypes

    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if dtype == "bfloat16":
        x = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    return x
