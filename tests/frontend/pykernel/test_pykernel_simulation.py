"""The PyKernel examples run on the simulated device and agree with numpy."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pykernel_helpers import load_example
from tilefold.sim import Device

BF16 = ml_dtypes.bfloat16


@pytest.mark.parametrize("shape, dtype, num_cores", [
    ((64, 128), "bfloat16", 1),        # one core, two blocks
    ((256, 96), "bfloat16", 3),        # 8 blocks on 3 cores: 3 + 3 + a cliff core with 2
    ((128, 64), "float32", 8),         # more cores offered than blocks: 4 cores, one block each
])
def test_tilize_example_tilizes(shape, dtype, num_cores):
    tilize = load_example("tilize")
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(np.float32)
    if dtype == "bfloat16":
        x = x.astype(BF16).astype(np.float32)      # exactly representable, so tilize must move bits unchanged
    program = tilize.tilize_program(shape, dtype, num_cores)
    result = Device().run(program, {"src": x})
    # the output buffer holds 32x32 tiles (16x16 faces); reading it back untilizes: it must equal the input
    assert np.array_equal(result.outputs["dst"], x)
    nblocks = shape[0] // 32
    per_core = -(-nblocks // num_cores)
    expected_kernels = 3 + (nblocks % per_core > 0)
    assert len(program.kernels) == expected_kernels
    # every stick is read once and every tile written once
    element = 2 if dtype == "bfloat16" else 4
    assert result.perf.counters.dram_read_bytes == x.size * element
    assert result.perf.counters.dram_write_bytes == x.size * element


def test_exp_example_matches_numpy():
    exp_tiles = load_example("exp_tiles")
    x = np.random.default_rng(2).uniform(-4, 4, (64, 256)).astype(np.float32)
    result = Device().run(exp_tiles.exp_program(x.shape, "bfloat16", num_cores=4), {"src": x})
    expected = np.exp(x.astype(BF16).astype(np.float32)).astype(BF16).astype(np.float32)
    np.testing.assert_allclose(result.outputs["dst"], expected, rtol=2**-8, atol=0)


@pytest.mark.parametrize("num_cores, pages", [(5, "pages 30-31"), (3, "pages 30-31"), (6, "pages 30-31")])
def test_output_pages_no_kernel_writes_are_an_error(num_cores, pages):
    """A work split that leaves tiles to no core (32 tiles over 5 cores is 6 each) would hand the host
    whatever DRAM held: the run stops, naming the pages and the line that made the buffer."""
    import inspect

    from tilefold.errors import UnwrittenOutputError

    exp_tiles = load_example("exp_tiles")
    x = np.random.default_rng(2).uniform(-4, 4, (128, 256)).astype(np.float32)
    with pytest.raises(UnwrittenOutputError) as err:
        Device().run(exp_tiles.exp_program(x.shape, "bfloat16", num_cores=num_cores), {"src": x})
    lines, start = inspect.getsourcelines(exp_tiles.exp_program)
    line = start + next(i for i, text in enumerate(lines) if 'add_buffer("dst"' in text)
    assert str(err.value).startswith(f"{inspect.getsourcefile(exp_tiles.exp_program)}:{line}: ")
    assert f"output buffer 'dst': {pages} of its 32 pages were never written" in str(err.value)
