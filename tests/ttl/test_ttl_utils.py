"""``ttl.utils``, the helpers TT-Lang ships beside the language: result checks (PCC, closeness,
ULPs) and work splits (even splits over nodes, per-node matmul blocks), importable as
``ttl.utils`` in a script run by ``tilefold sim`` and as ``tilefold.ttl.utils``."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

from tilefold.cli.ttl_scripts import run_script
from tilefold.ttl.utils import (assert_allclose, assert_pcc, assert_with_ulp, get_large_matmul_params,
                                get_number_of_nodes_from_ranges, split_work_to_nodes)


def test_split_work_walks_the_last_coordinate_fastest():
    # 10 units on an 8 x 4 grid: nodes (0, 0..3), (1, 0..3), (2, 0..1)
    assert split_work_to_nodes((8, 4), 10) == (10, [((0, 0), (1, 3)), ((2, 0), (2, 1))], [], 1, 0)
    assert split_work_to_nodes((8, 4), 10, row_wise=False) == (10, [((0, 0), (7, 0)), ((0, 1), (1, 1))], [], 1, 0)
    assert split_work_to_nodes((3,), 5) == (3, [((0,), (1,))], [((2,), (2,))], 2, 1)


@pytest.mark.parametrize("units", [1, 7, 64, 100, 1000])
def test_split_work_gives_every_unit_once(units):
    used, group1, group2, per1, per2 = split_work_to_nodes((8, 8), units)
    n1, n2 = get_number_of_nodes_from_ranges(group1), get_number_of_nodes_from_ranges(group2)
    assert n1 + n2 == used and n1 * per1 + n2 * per2 == units
    assert not group2 or per1 == per2 + 1


def test_matmul_blocks_fit_the_grid_and_the_buffer_budget():
    assert get_large_matmul_params(32, 32, 8, 8, 2) == (32, 4, 4, 2)
    for mt, nt, ny, nx, k in itertools.product([1, 3, 12, 13, 32, 96], [2, 5, 16, 48], [4, 8], [4, 8, 13], [1, 2, 8]):
        h, w, sh, sw = get_large_matmul_params(mt, nt, ny, nx, k)
        if h == 0:
            continue
        assert mt % h == 0 and nt % w == 0 and mt // h <= ny and nt // w <= nx
        assert 2 * k * h + 2 * k * w + h * w <= 400
        assert h % sh == 0 and w % sw == 0 and sh * sw <= 8


def test_a_prime_factor_larger_than_the_grid_stays_in_every_block():
    h, w, _, _ = get_large_matmul_params(13 * 4, 16, 8, 8, 2)
    assert h % 13 == 0


def test_ulp_distance_is_measured_in_the_results_type():
    expected = np.linspace(1, 2, 64, dtype=np.float32).astype(ml_dtypes.bfloat16)
    actual = expected.copy()
    actual[5] = np.nextafter(np.nextafter(actual[5], np.array(9, actual.dtype)), np.array(9, actual.dtype))
    assert assert_with_ulp(expected, expected) == (True, "Max ULP Delta: 0.0")
    assert assert_with_ulp(expected, actual, 2) == (True, "Max ULP Delta: 2.0")
    with pytest.raises(AssertionError, match="Max ULP Delta: 2.0"):
        assert_with_ulp(expected, actual, 1)
    nan = actual.astype(np.float32)
    nan[0] = np.nan
    with pytest.raises(AssertionError, match="non-finite"):
        assert_with_ulp(expected.astype(np.float32), nan)


def test_pcc_and_closeness():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 32)).astype(np.float32)
    assert_pcc(a, a + 1e-4 * rng.standard_normal(a.shape))
    with pytest.raises(AssertionError, match="Expected pcc"):
        assert_pcc(a, rng.standard_normal(a.shape))
    assert_allclose(a * (1 + 1e-6), a, rtol=1e-5)
    b = a.copy()
    b[3, 4] += 1.0
    with pytest.raises(AssertionError, match=r"1 / 1024 elements differ; worst absolute at \(3, 4\)"):
        assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def test_a_script_imports_ttl_utils(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(
        "import numpy as np\n"
        "import ttl\n"
        "import ttnn\n"
        "from ttl.utils.correctness import assert_with_ulp\n"
        "from ttl.utils import split_work_to_nodes\n"
        "\n"
        "@ttl.operation(grid=(1, 2))\n"
        "def double(x, y):\n"
        "    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)\n"
        "    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)\n"
        "\n"
        "    @ttl.compute()\n"
        "    def compute():\n"
        "        with x_dfb.wait() as a, y_dfb.reserve() as b:\n"
        "            b.store(a + a)\n"
        "\n"
        "    @ttl.datamovement()\n"
        "    def read():\n"
        "        with x_dfb.reserve() as blk:\n"
        "            ttl.copy(x[0, ttl.node(dims=1)], blk).wait()\n"
        "\n"
        "    @ttl.datamovement()\n"
        "    def write():\n"
        "        with y_dfb.wait() as blk:\n"
        "            ttl.copy(blk, y[0, ttl.node(dims=1)]).wait()\n"
        "\n"
        "v = np.random.default_rng(1).standard_normal((32, 64)).astype(np.float32)\n"
        "x = ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)\n"
        "y = ttnn.zeros((32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)\n"
        "double(x, y)\n"
        "print(split_work_to_nodes((1, 2), 2)[0], assert_with_ulp(ttnn.to_numpy(x) * 2, ttnn.to_numpy(y), 0)[1])\n")
    assert run_script(script) == 0
    assert "2 Max ULP Delta: 0.0" in capsys.readouterr().out
