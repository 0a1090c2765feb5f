"""``@tilefold.autotune`` on a TT-Lang operation itself: the configurations are its keyword
constants, the call's tensors are the inputs, and the best configuration runs on them."""

import numpy as np

import tilefold
import tilefold.ttl as ttl
import tilefold.ttnn as ttnn

CONFIGS = [{"rows": r, "block_count": c} for r in (1, 2, 4) for c in (2, 3)] + [{"rows": 3, "block_count": 2}]


def scale_reference(a, out):
    return a.astype(np.float32) * 2.0 + 1.0


@tilefold.autotune(configs=CONFIGS, ref_prog=scale_reference, rtol=1e-2, atol=2e-2)
@ttl.operation(grid=(1, 1))
def scale_rows(a, out, rows=1, block_count=2):
    if a.shape[0] // 32 % rows:
        raise ValueError(f"{rows} tile rows do not divide the tensor")
    groups = a.shape[0] // 32 // rows
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(rows, 1), block_count=block_count)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(rows, 1), block_count=block_count)

    @ttl.compute()
    def compute():
        for _ in range(groups):
            with a_dfb.wait() as x, o_dfb.reserve() as o:
                o.store(x * 2.0 + 1.0)

    @ttl.datamovement()
    def read():
        for i in range(groups):
            with a_dfb.reserve() as blk:
                ttl.copy(a[i * rows:(i + 1) * rows, 0:1], blk).wait()

    @ttl.datamovement()
    def write():
        for i in range(groups):
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[i * rows:(i + 1) * rows, 0:1]).wait()


def test_an_operation_is_tuned_over_its_keyword_constants_and_runs_the_best(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEFOLD_CACHE_DIR", str(tmp_path))
    x = np.random.default_rng(4).standard_normal((128, 32)).astype(np.float32)
    a = ttnn.from_numpy(x, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.from_numpy(np.zeros((128, 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    scale_rows(a, out)
    result = scale_rows.last_result
    by_config = {tuple(sorted(r.config.items())): r for r in result.rows}
    assert len(by_config) == len(CONFIGS)
    rejected = by_config[(("block_count", 2), ("rows", 3))]
    assert rejected.status == "rejected" and "do not divide" in rejected.reason
    passed = [r for r in result.rows if r.ok]
    assert len(passed) == len(CONFIGS) - 1 and all(r.check == "pass" for r in passed)
    assert result.config == passed[0].config
    # Bigger blocks cost fewer per-block overheads in the model.
    assert by_config[(("block_count", 2), ("rows", 4))].seconds < by_config[(("block_count", 2), ("rows", 1))].seconds
    # The call ran the best configuration on the caller's tensors.
    np.testing.assert_allclose(ttnn.to_numpy(out), scale_reference(ttnn.to_numpy(a), None), rtol=1e-2, atol=2e-2)
