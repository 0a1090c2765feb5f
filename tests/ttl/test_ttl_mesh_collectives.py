"""Multi-chip runs: ``ttnn.all_gather`` and ``ttnn.all_reduce`` (over all chips or along one axis
of the mesh) against numpy, and the one modeled time of a run over several chips."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import LayoutError
from tilefold.frontend.ttl import mesh as mesh_model
from tilefold.frontend.ttl import session
from ttl_helpers import copy_kernels, expect_error


@pytest.fixture
def t3k():
    ttnn.set_num_devices(8)
    try:
        yield ttnn.open_mesh_device(ttnn.MeshShape(2, 4))
    finally:
        ttnn.set_num_devices(None)


def _spread(values, mesh_device, dim):
    return ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, device=mesh_device,
                           mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=dim))


def _pieces(tensor):
    return [ttnn.to_numpy(p) for p in tensor.pieces]


def test_all_gather_gives_every_chip_the_whole_tensor(t3k):
    values = np.random.default_rng(0).standard_normal((8 * 32, 64)).astype(np.float32)
    t = _spread(values, t3k, 0)
    whole = ttnn.to_numpy(t, mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=0))
    gathered = ttnn.all_gather(t, dim=0)
    for piece in _pieces(gathered):
        np.testing.assert_array_equal(piece, whole)


def test_collectives_along_one_axis_of_the_mesh(t3k):
    values = np.random.default_rng(1).standard_normal((32, 8 * 32)).astype(np.float32)
    t = _spread(values, t3k, 1)
    pieces = _pieces(t)
    rows = ttnn.all_gather(t, dim=-1, cluster_axis=1)            # within each row of 4 chips
    for chip, piece in enumerate(_pieces(rows)):
        r = chip // 4
        np.testing.assert_array_equal(piece, np.concatenate(pieces[4 * r:4 * r + 4], axis=1))
    columns = ttnn.all_reduce(t, cluster_axis=0)                  # within each column of 2 chips
    for chip, piece in enumerate(_pieces(columns)):
        c = chip % 4
        expected = (pieces[c].astype(np.float32) + pieces[4 + c]).astype(ttnn.to_numpy(t.pieces[0]).dtype)
        np.testing.assert_allclose(piece, expected, rtol=0.01, atol=0.01)


@ttl.operation(grid=(1, 1))
def scale(x, y, factor: float):
    x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))
    rows = x.shape[0] // 32

    @ttl.compute()
    def compute():
        for _ in range(rows):
            with x_dfb.wait() as a, y_dfb.reserve() as b:
                b.store(a * factor)

    copy_kernels(x_dfb, y_dfb, x, y, rows)


def test_a_multi_chip_run_has_one_modeled_time(t3k, capsys):
    # chips get different amounts of work: chip i scales i + 1 tile rows
    values = [np.full(((i + 1) * 32, 32), i, dtype=np.float32) for i in range(8)]
    pieces = [ttnn.from_numpy(v, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in values]
    outs = [ttnn.zeros(v.shape, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT) for v in values]
    x, y = mesh_model.MeshTensor(pieces, t3k), mesh_model.MeshTensor(outs, t3k)
    with session.configured(report=True) as settings:
        scale(x, y, 2.0)
        step = settings.mesh_steps[-1]
        assert step.kind == "operation" and len(step.chip_seconds) == 8
        assert step.chip_seconds[7] > step.chip_seconds[0]              # more tiles, more time
        same = ttnn.from_numpy(np.ones((32, 8 * 32), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT,
                               device=t3k, mesh_mapper=ttnn.ShardTensorToMesh(t3k, dim=1))
        ttnn.all_gather(same, dim=1)
        total, ops, eth = mesh_model.modeled_time(settings.mesh_steps)
        assert ops == pytest.approx(max(step.chip_seconds))
        assert eth == pytest.approx(mesh_model.ring_seconds(7, 2048))
        assert total == pytest.approx(ops + eth)
    for i, out in enumerate(outs):
        np.testing.assert_array_equal(ttnn.to_numpy(out), 2.0 * values[i])
    printed = capsys.readouterr().out
    assert "on a 2x4 mesh" in printed and "the slowest chip, 7" in printed
    assert printed.count("estimated device time") == 1


def test_a_mesh_mapper_or_composer_dim_outside_the_tensor_is_an_error_at_the_line(t3k):
    values = np.zeros((8 * 32, 64), np.float32)

    def shard():
        mapper = ttnn.ShardTensorToMesh(t3k, dim=2)
        ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT, device=t3k, mesh_mapper=mapper)  # error

    expect_error(shard, shard, LayoutError,
                 "ttnn.ShardTensorToMesh: dim=2 is not a dimension of a 2-dimensional tensor (256, 64)")

    spread = _spread(values, t3k, -2)       # negative dims count from the end, as in numpy
    assert [tuple(p.shape) for p in spread.pieces] == [(32, 64)] * 8

    def concat():
        ttnn.to_numpy(spread, mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=-3))  # error

    expect_error(concat, concat, LayoutError,
                 "ttnn.ConcatMeshToTensor: dim=-3 is not a dimension")

    def not_a_mapper():
        ttnn.from_numpy(values, layout=ttnn.TILE_LAYOUT, device=t3k, mesh_mapper=0)  # error

    expect_error(not_a_mapper, not_a_mapper, LayoutError, "mesh_mapper=0: give ttnn.ShardTensorToMesh")


def test_a_plain_output_of_a_call_per_chip_is_an_error_before_anything_runs(t3k):
    """Called with mesh tensors, an operation runs on each chip of the mesh; a tensor that is not a
    mesh tensor is one buffer every chip reads, so writing it (every chip would, the last one
    winning) is an error at the call, and the tensor keeps what it held."""
    from tilefold.errors import KernelError

    x = _spread(np.ones((8 * 32, 32), np.float32), t3k, 0)
    y = ttnn.from_numpy(np.full((32, 32), 5.0, np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)

    def run():
        scale(x, y, 2.0)  # error

    expect_error(run, test_a_plain_output_of_a_call_per_chip_is_an_error_before_anything_runs, KernelError,
                 "writes tensor 'y', which is one device tensor that every chip would write", "give a mesh tensor")
    np.testing.assert_array_equal(ttnn.to_numpy(y), 5.0)


def test_a_slice_outside_a_chips_piece_says_it_is_a_piece(t3k):
    """An operation called with mesh tensors sees each chip's piece: a slice past the piece says so."""
    from tilefold.errors import KernelError

    x = _spread(np.ones((8 * 32, 32), np.float32), t3k, 0)
    y = _spread(np.zeros((8 * 64, 32), np.float32), t3k, 0)

    with pytest.raises(KernelError) as info:
        scale(y, x, 2.0)              # two tile rows read, one written into each chip's one-tile piece
    assert "y[...]:" in str(info.value)
    assert "outside the tensor (1 tiles; shape 1x1, one chip's piece of a mesh tensor over 8 chips)" in str(info.value)


def test_a_mesh_opened_without_a_shape_takes_every_chip_and_one_chip_reads_without_composer():
    ttnn.set_num_devices(4)
    try:
        assert tuple(ttnn.open_mesh_device().shape) == (1, 4)
        single = ttnn.open_mesh_device(ttnn.MeshShape(1, 1))
    finally:
        ttnn.set_num_devices(None)
    values = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    t = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=single,
                        mesh_mapper=ttnn.ReplicateTensorToMesh(single))
    np.testing.assert_array_equal(ttnn.to_numpy(t), values)


def test_a_host_op_writes_each_chips_piece_of_a_mesh_output_tensor(t3k):
    """``ttnn.add(a, b, output_tensor=out)`` on mesh tensors: each chip's sum goes into its piece of
    ``out``, which the call returns."""
    rng = np.random.default_rng(5)
    a_values, b_values = (rng.standard_normal((8 * 32, 32)).astype(np.float32) for _ in range(2))
    a, b, out = _spread(a_values, t3k, 0), _spread(b_values, t3k, 0), _spread(np.zeros_like(a_values), t3k, 0)
    assert ttnn.add(a, b, output_tensor=out) is out
    got = ttnn.to_numpy(out, mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=0))
    want = ttnn.to_numpy(ttnn.add(a, b), mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=0))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, a_values + b_values, rtol=2e-2, atol=2e-2)


def test_a_host_op_of_several_results_gives_a_mesh_tensor_of_each(t3k):
    """``ttnn.topk`` on a mesh tensor: (values, indices), each a mesh tensor of the chips' results."""
    values = np.random.default_rng(6).standard_normal((8 * 32, 64)).astype(np.float32)
    top, index = ttnn.topk(_spread(values, t3k, 0), 4, dim=-1)
    assert isinstance(top, ttnn.MeshTensor) and isinstance(index, ttnn.MeshTensor)
    joined = ttnn.to_numpy(index, mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=0)).astype(np.int64)
    rounded = ttnn.to_numpy(_spread(values, t3k, 0), mesh_composer=ttnn.ConcatMeshToTensor(t3k, dim=0))
    np.testing.assert_array_equal(joined, np.argsort(-rounded, axis=-1, kind="stable")[:, :4])


def test_2d_mesh_mappers_take_tt_nns_order_of_arguments(t3k):
    """``ShardTensor2dMesh(mesh, mesh_shape, dims)`` / ``ConcatMesh2dToTensor(mesh, mesh_shape, dims)``
    positionally, as TT-NN declares them; a shape other than the mesh's is one error."""
    values = np.random.default_rng(7).standard_normal((2 * 32, 4 * 32)).astype(np.float32)
    t = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT, device=t3k,
                        mesh_mapper=ttnn.ShardTensor2dMesh(t3k, (2, 4), (0, 1)))
    assert tuple(t.pieces[5].shape) == (32, 32)
    np.testing.assert_array_equal(ttnn.to_numpy(t, mesh_composer=ttnn.ConcatMesh2dToTensor(t3k, (2, 4), (0, 1))),
                                  values)
    with pytest.raises(LayoutError, match=r"mesh_shape=\(4, 2\)\): the mesh is \(2, 4\)"):
        ttnn.ConcatMesh2dToTensor(t3k, (4, 2), (0, 1))
