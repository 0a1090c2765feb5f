"""The autotuner ranks configurations by modeled time, records rejections with their reason,
caches results by the lowered program, and gives the same table on every engine."""

import json

import numpy as np
import pytest

from tests.autotune.conftest import CONFIGS, add_reference
import tilefold
import tilefold.language as T
from tilefold.autotuner import tuner as tuner_module


def _rows(result):
    return [(r.index, r.status, r.stage, r.seconds, r.l1_bytes, r.check) for r in result.rows]


def test_ranking_is_deterministic_and_ordered(tuner_factory, tmp_path):
    first = tuner_factory().run(engine="serial", cache=False)
    second = tuner_factory().run(engine="serial", cache=False)
    assert _rows(first) == _rows(second)
    times = [r.seconds for r in first.rows if r.ok]
    assert times == sorted(times) and len(times) == len(CONFIGS)
    assert all(r.check == "pass" for r in first.rows)
    assert first.best.config == first.config
    assert first.latency == pytest.approx(first.best.seconds * 1e3)
    # The best kernel is returned and runs.
    a = np.ones((64, 64), np.float32)
    np.testing.assert_allclose(np.asarray(first.kernel(a, a), np.float32), 2 * a)


def test_rejected_configurations_carry_their_reason(tuner_factory):
    configs = CONFIGS[:1] + [
        {"block_M": 2048, "block_N": 2048},          # does not fit in L1
        {"block_M": 32, "block_N": 32, "op": "sub"},  # wrong numbers
        {"block_M": 32, "block_N": 32, "colour": 1},  # the factory does not take it
    ]
    result = tuner_factory(configs).run(engine="serial", cache=False)
    by_index = {r.index: r for r in result.rows}
    assert by_index[0].ok
    assert (by_index[1].stage, by_index[1].status) == ("L1", "rejected")
    assert "L1" in by_index[1].reason and "smaller blocks" in by_index[1].reason
    assert by_index[2].stage == "check" and by_index[2].check == "fail"
    assert "differ from the reference" in by_index[2].reason
    assert by_index[3].stage == "build" and "colour" in by_index[3].reason
    assert [r.index for r in result.rows] == [0, 1, 2, 3]    # passed first, then rejected in order
    table = result.table()
    assert "rejected (L1)" in table and "rejected (check)" in table and "rejected (build)" in table


def test_a_configuration_past_its_timeout_is_a_hang(tuner_factory):
    result = tuner_factory(CONFIGS[:2]).run(engine="serial", cache=False, timeout=1e-4)
    assert all(r.stage == "hang" and "wall-clock" in r.reason for r in result.rows)
    assert result.best is None


def test_a_cached_rerun_simulates_nothing(tuner_factory, tmp_path):
    first = tuner_factory().run(engine="serial", cache_dir=tmp_path)
    assert first.simulated == len(CONFIGS)
    again = tuner_factory().run(engine="serial", cache_dir=tmp_path)
    assert again.simulated == 0
    assert all(r.cached for r in again.rows)
    assert _rows(again) == _rows(first)
    # A different reference is a different check: nothing is reused.
    changed = tuner_factory(ref=lambda a, b: add_reference(a, b) + 1).run(engine="serial", cache_dir=tmp_path)
    assert changed.simulated == len(CONFIGS) and changed.best is None


def test_the_process_pool_gives_the_serial_table(tuner_factory):
    serial = tuner_factory().run(engine="serial", cache=False)
    pooled = tuner_factory().run(engine="process", workers=2, cache=False)
    assert _rows(pooled) == _rows(serial)
    assert pooled.engine == "process"


def test_the_ray_engine_gives_the_serial_table(tuner_factory):
    ray = pytest.importorskip("ray", reason="Ray is an optional extra (pip install 'tilefold[ray]')")
    from tilefold.errors import TilefoldError

    serial = tuner_factory().run(engine="serial", cache=False)
    try:
        tuned = tuner_factory().run(engine="ray", cache=False)
    except TilefoldError as err:
        if "cannot reach the Ray cluster" in str(err):
            pytest.skip(f"a local Ray instance did not start on this machine: {err}")
        raise
    finally:
        ray.shutdown()
    assert _rows(tuned) == _rows(serial)


def test_the_decorator_tunes_once_per_call_and_writes_a_trace(tmp_path):
    import tilefold
    from tests.autotune.conftest import make_eltwise

    trace = tmp_path / "best.json"
    tuned = tilefold.autotune(configs=CONFIGS[:2], ref_prog=add_reference, rtol=2e-2, atol=2e-2, engine="serial",
                              cache=False, trace=trace)(tilefold.jit(make_eltwise, out_idx=[-1]))
    kernel = tuned(64, 64)
    assert kernel.config in CONFIGS[:2] and kernel.latency > 0
    assert tuned(64, 64) is kernel and len(tuned.results) == 1
    events = json.loads(trace.read_text())
    assert events["traceEvents"] if isinstance(events, dict) else events


def test_configs_as_a_dict_of_lists_and_a_function():
    from tilefold.autotuner.configs import expand

    assert expand({"a": [1, 2], "b": [3]}, (), {}) == [{"a": 1, "b": 3}, {"a": 2, "b": 3}]
    assert expand(lambda M, N: [{"m": M, "n": N}], (4, 5, 6), {}) == [{"m": 4, "n": 5}]
    from tilefold.errors import KernelError

    with pytest.raises(KernelError, match="configuration 0"):
        expand([3], (), {})
    with pytest.raises(KernelError, match="no configurations"):
        expand([], (), {})


def test_results_are_remembered_for_the_command(tuner_factory):
    before = len(tuner_module.RESULTS)
    tuner_factory(CONFIGS[:1]).run(engine="serial", cache=False)
    assert len(tuner_module.RESULTS) == before + 1


@tilefold.autotune(configs=[{"block": 32}, {"block": 64}], engine="serial", cache=False)
@tilefold.jit
def eager_scale(X, block, factor=2.0):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), T.float32)
    Y = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(M, block)) as bx:
        x = T.alloc_fragment((block, N), T.float32)
        T.copy(X[bx * block, 0], x)
        for i, j in T.Parallel(block, N):
            x[i, j] = x[i, j] * factor
        T.copy(x, Y[bx * block, 0])
    return Y


def test_an_eager_kernel_called_with_its_arrays_is_tuned_and_runs():
    x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    np.testing.assert_array_equal(eager_scale(x), 2 * x)
    assert len(eager_scale.last_result.rows) == 2 and all(r.ok for r in eager_scale.last_result.rows)


def test_a_call_that_sets_every_tuned_parameter_is_not_tuned():
    x = np.ones((64, 64), np.float32)
    before = len(eager_scale.results)
    np.testing.assert_array_equal(eager_scale(x, block=64, factor=3.0), 3 * x)
    assert len(eager_scale.results) == before
