"""The host tensor module (tilefold.ttnn): data types round like the device, layouts, devices."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttnn as ttnn
from tilefold.errors import LayoutError
from tilefold.layout.formats import DataFormat


def test_bfloat16_rounds_to_nearest_even():
    # 1 + 2**-8 lies halfway between two bfloat16 values: it rounds to the even one (1.0);
    # 1 + 3 * 2**-8 rounds up to 1 + 2**-6.
    t = ttnn.from_numpy(np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8], dtype=np.float32), dtype=ttnn.bfloat16)
    np.testing.assert_array_equal(ttnn.to_numpy(t), [1.0, 1 + 2 ** -6])


def test_bfloat16_values_given_as_bfloat16_are_kept_and_copied():
    # kept as they are (no float32 copy) until read; the tensor owns a copy, pages are the same
    # bytes the float32 path makes, and a NaN comes back canonical
    rng = np.random.default_rng(0)
    wide = rng.standard_normal((64, 96)).astype(np.float32)
    wide[3, 5] = np.nan
    narrow = wide.astype(ml_dtypes.bfloat16)
    t = ttnn.from_numpy(narrow, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    narrow[0, 0] = 7.0                                  # the caller's array changes afterwards
    reference = ttnn.from_numpy(wide, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    from tilefold.program import Buffer
    buffer = Buffer(name="t", shape=(64, 96), data_format=DataFormat.Float16_b, layout="TILE")
    np.testing.assert_array_equal(t.device_pages(buffer), reference.device_pages(buffer))
    got = ttnn.to_numpy(t)
    assert got.dtype == np.float32 and got[0, 0] == np.float32(wide[0, 0].astype(ml_dtypes.bfloat16))
    np.testing.assert_array_equal(got, ttnn.to_numpy(reference))
    assert np.isnan(got[3, 5]) and got.view(np.uint32)[3, 5] == 0x7FC00000


def test_bfloat8_b_shares_one_exponent_per_16_values():
    values = np.zeros((32, 32), dtype=np.float32)
    values[0, 0], values[0, 1] = 1.0, 0.01      # same face row: 0.01 loses its bits below 2**-6 of 1.0
    values[1, 0] = 0.01                         # another row keeps its own exponent
    t = ttnn.from_numpy(values, dtype=ttnn.bfloat8_b, layout=ttnn.TILE_LAYOUT)
    got = ttnn.to_numpy(t)
    assert got[0, 0] == 1.0
    assert got[0, 1] == pytest.approx(np.round(0.01 * 64) / 64)
    assert got[1, 0] == pytest.approx(0.01, rel=0.01)


def test_bfloat8_b_needs_tile_layout():
    with pytest.raises(LayoutError):
        ttnn.from_numpy(np.ones((32, 32), dtype=np.float32), dtype=ttnn.bfloat8_b, layout=ttnn.ROW_MAJOR_LAYOUT)


def test_default_data_types_of_numpy_arrays():
    assert ttnn.from_numpy(np.ones((2, 2), dtype=np.float32)).dtype is ttnn.float32
    assert ttnn.from_numpy(np.ones((2, 2), dtype=ml_dtypes.bfloat16)).dtype is ttnn.bfloat16
    assert ttnn.from_numpy(np.ones((2, 2), dtype=np.int32)).dtype is ttnn.int32


def test_tensor_properties():
    t = ttnn.zeros((40, 70), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=ttnn.L1_MEMORY_CONFIG)
    assert tuple(t.shape) == (40, 70) and tuple(t.padded_shape) == (64, 96)
    assert t.dtype.data_format is DataFormat.Float16_b and t.layout is ttnn.TILE_LAYOUT
    assert t.memory_config() is ttnn.L1_MEMORY_CONFIG


def test_host_operations_round_each_result():
    a = ttnn.from_numpy(np.full((2, 2), 1 + 2 ** -7, dtype=np.float32), dtype=ttnn.bfloat16)
    b = ttnn.from_numpy(np.full((2, 2), 1 + 2 ** -7, dtype=np.float32), dtype=ttnn.bfloat16)
    product = ttnn.to_numpy(ttnn.multiply(a, b))         # (1 + 2**-7)**2 = 1 + 2**-6 + 2**-14 -> 1 + 2**-6
    np.testing.assert_array_equal(product, np.full((2, 2), 1 + 2 ** -6, dtype=np.float32))
    # 2 + 2**-7 is halfway between the bfloat16 values 2 and 2 + 2**-6: it rounds to the even one
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.add(a, 1.0)), np.full((2, 2), 2.0))
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.relu(ttnn.subtract(a, 2.0))), np.zeros((2, 2)))
    np.testing.assert_allclose(ttnn.to_numpy(ttnn.matmul(a, b)), np.full((2, 2), 2 * (1 + 2 ** -7) ** 2), rtol=4e-3)


def test_devices_open_and_close():
    device = ttnn.open_device(device_id=0)
    grid = device.compute_with_storage_grid_size()
    assert (grid.x, grid.y) == (8, 8)
    ttnn.close_device(device)
    assert not device.is_open


def test_torch_round_trip_when_torch_is_installed():
    torch = pytest.importorskip("torch")
    x = torch.rand((32, 32), dtype=torch.bfloat16)
    t = ttnn.from_torch(x, layout=ttnn.TILE_LAYOUT)
    assert t.dtype is ttnn.bfloat16
    assert torch.equal(ttnn.to_torch(t), x)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32", "bfloat8_b", "int32"])
def test_a_bfloat16_torch_tensor_gives_what_its_float32_values_give(dtype):
    """from_torch takes a bfloat16 tensor's bits as they are; the device tensor is the one its
    float32 values make (NaNs made canonical, infinities and signed zeros kept; an integer tensor
    takes no NaN or infinity: one error at the line, from either path)."""
    torch = pytest.importorskip("torch")
    x = (torch.randn((64, 96)) * 100).to(torch.bfloat16)
    x[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, -float("inf")])
    x.view(torch.int16)[0, 4] = 0x7F81                   # a NaN with a payload
    dt = getattr(ttnn, dtype)
    if dtype == "int32":
        for convert in (lambda: ttnn.from_torch(x, dtype=dt), lambda: ttnn.from_numpy(x.float().numpy(), dtype=dt)):
            with pytest.raises(LayoutError, match=r"a int32 tensor holds whole numbers -2147483648..2147483647, and "
                                                  r"the values hold nan \(at \(0, 0\), and 3 more\)"):
                convert()
        x[0, :5] = 0.0
    got = ttnn.from_torch(x, dtype=dt, layout=ttnn.TILE_LAYOUT)
    want = ttnn.from_numpy(x.float().numpy(), dtype=dt, layout=ttnn.TILE_LAYOUT)
    np.testing.assert_array_equal(ttnn.to_numpy(got).view(np.uint8), ttnn.to_numpy(want).view(np.uint8))


def test_a_float64_torch_tensor_gives_int32_values_exactly():
    """Whole numbers beyond float32's 2**24 (up to int32's limits) in a float64 tensor reach an int32
    tensor unchanged, as torch's own cast gives them."""
    torch = pytest.importorskip("torch")
    x = torch.zeros((32, 32), dtype=torch.float64)
    x[0, :4] = torch.tensor([16777217.0, 2147483647.0, -2147483648.0, 123456789.0], dtype=torch.float64)
    got = ttnn.to_numpy(ttnn.from_torch(x, dtype=ttnn.int32, layout=ttnn.TILE_LAYOUT))
    np.testing.assert_array_equal(got, x.to(torch.int32).numpy())


def test_to_torch_without_torch_says_what_to_use():
    try:
        import torch  # noqa: F401
        pytest.skip("torch is installed")
    except ImportError:
        pass
    with pytest.raises(LayoutError) as info:
        ttnn.to_torch(ttnn.zeros((2, 2)))
    assert "to_numpy" in str(info.value)


def test_host_exp_of_bfloat16_is_correctly_rounded():
    # exp(6.84375) = 938.0000478...: just above the tie of 936 and 940, so bfloat16 940
    t = ttnn.from_numpy(np.array([6.84375, 0.5], dtype=np.float32), dtype=ttnn.bfloat16)
    got = ttnn.to_numpy(ttnn.exp(t))
    np.testing.assert_array_equal(got, [940.0, float(ml_dtypes.bfloat16(np.exp(0.5)))])


def test_repeat_squeeze_and_unsqueeze_follow_torch():
    c = ttnn.from_numpy(np.array([[2.5]], dtype=np.float32), layout=ttnn.TILE_LAYOUT)
    tiled = ttnn.repeat(c, (1, 1, 32, 32))
    assert tuple(tiled.shape) == (1, 1, 32, 32)
    squeezed = ttnn.squeeze(tiled)
    assert tuple(squeezed.shape) == (32, 32) and np.all(ttnn.to_numpy(squeezed) == 2.5)
    assert tuple(ttnn.squeeze(tiled, 0).shape) == (1, 32, 32)
    assert tuple(ttnn.squeeze(tiled, 2).shape) == (1, 1, 32, 32)
    assert tuple(ttnn.unsqueeze(squeezed, 0).shape) == (1, 32, 32)
    v = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.repeat(ttnn.from_numpy(v), (2, 1))), np.tile(v, (2, 1)))
    with pytest.raises(LayoutError, match="repeat dims"):
        ttnn.repeat(c, (2,))


def test_host_gelu_is_the_erf_form_and_the_tanh_form_on_request():
    import math

    x = np.linspace(-6, 6, 1024, dtype=np.float32).reshape(32, 32)
    t = ttnn.from_numpy(x, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64).ravel()])
    np.testing.assert_allclose(ttnn.to_numpy(ttnn.gelu(t)).ravel(), exact, rtol=2e-6, atol=2e-7)
    approx = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x.astype(np.float64) ** 3)))
    fast = ttnn.to_numpy(ttnn.gelu(t, fast_and_approximate_mode=True))
    np.testing.assert_allclose(fast, approx, rtol=2e-6, atol=2e-7)
    assert np.abs(fast - ttnn.to_numpy(ttnn.gelu(t))).max() > 1e-4     # the two forms differ


def test_host_upsample_repeats_rows_and_columns():
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    t = ttnn.from_numpy(x, dtype=ttnn.float32)
    out = ttnn.to_numpy(ttnn.upsample(t, (2, 3)))
    np.testing.assert_array_equal(out, x.repeat(2, axis=1).repeat(3, axis=2))
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.upsample(t, 2)), x.repeat(2, axis=1).repeat(2, axis=2))


def test_host_split_work_to_cores_as_tt_metal_splits():
    n, all_cores, group_1, group_2, per_1, per_2 = ttnn.split_work_to_cores(ttnn.CoreCoord(4, 2), 11, row_wise=True)
    assert (n, per_1, per_2) == (8, 2, 1)
    assert all_cores.num_cores() == 8
    assert group_1.num_cores() == 3 and group_2.num_cores() == 5       # 11 = 3 * 2 + 5 * 1
    first = group_1.ranges()[0]
    assert (first.start.x, first.start.y, first.end.x, first.end.y) == (0, 0, 2, 0)
    n, _, group_1, group_2, per_1, per_2 = ttnn.split_work_to_cores(ttnn.CoreCoord(4, 2), 3)
    assert (n, per_1, per_2, group_1.num_cores(), group_2.num_cores()) == (3, 1, 0, 3, 0)


def test_host_split_work_over_a_set_of_disjoint_ranges_takes_them_one_after_another():
    ranges = ttnn.CoreRangeSet([ttnn.CoreRange(ttnn.CoreCoord(0, 0), ttnn.CoreCoord(1, 1)),
                                ttnn.CoreRange(ttnn.CoreCoord(3, 3), ttnn.CoreCoord(3, 4))])
    n, all_cores, group_1, group_2, per_1, per_2 = ttnn.split_work_to_cores(ranges, 20)
    assert (n, group_1.num_cores(), group_2.num_cores(), per_1, per_2) == (6, 2, 4, 4, 3)    # 20 = 2*4 + 4*3
    first = [(r.start.x, r.start.y, r.end.x, r.end.y) for r in group_1.ranges()]
    assert first == [(0, 0, 0, 1)]                      # column-major: the first range's first column
    n, all_cores, group_1, group_2, per_1, per_2 = ttnn.split_work_to_cores(ranges, 5, row_wise=True)
    assert (n, per_1, per_2, group_2.num_cores()) == (5, 1, 0, 0)
    assert {(r.start.x, r.start.y, r.end.x, r.end.y) for r in all_cores.ranges()} == {(0, 0, 1, 1), (3, 3, 3, 3)}


def test_max_worker_l1_unreserved_size_is_the_l1_above_the_firmware_of_the_sessions_device():
    from tilefold.arch import get_arch
    from tilefold.frontend.ttl.session import configured

    for arch in ("wormhole_b0", "blackhole"):
        with configured(arch=arch):
            a = get_arch(arch)
            size = ttnn.get_max_worker_l1_unreserved_size()
            assert size == ttnn.device.get_max_worker_l1_unreserved_size() == a.l1_size - 31 * 1024
            # the default split: the kernel-config ring (69 KiB) and the allocator's L1 share it
            assert size == a.l1_free + 69 * 1024


def _stage_8x8_tiles():
    import tilefold.ttl as ttl

    @ttl.operation(grid=(1, 1))
    def stage(x, out):
        buf = ttl.make_dataflow_buffer_like(x, shape=(8, 8), block_count=2)  # error

        @ttl.datamovement()
        def mover():
            with buf.reserve() as blk:
                ttl.copy(x[0:8, 0:8], blk).wait()
                ttl.copy(blk, out[0:8, 0:8]).wait()

    return stage


def test_open_device_with_worker_l1_size_gives_operations_that_much_l1_until_it_is_closed():
    from tilefold.arch import get_arch
    from tilefold.errors import L1OverflowError
    from tilefold.frontend.ttl.session import configured, settings
    from ttl_helpers import expect_error, tile_tensor, zeros

    x = tile_tensor((256, 256), seed=3)
    with configured():
        max_l1 = ttnn.device.get_max_worker_l1_unreserved_size()
        device = ttnn.open_device(device_id=0, worker_l1_size=max_l1 - 96 * 1024)   # a bigger ring, still room
        y = zeros((256, 256))
        _stage_8x8_tiles()(x, y)
        ttnn.close_device(device)
        assert get_arch(settings().arch).l1_free == get_arch(None).l1_free

        device = ttnn.open_device(device_id=0, worker_l1_size=128 * 1024)
        assert get_arch(settings().arch).l1_free == 128 * 1024
        assert ttnn.get_max_worker_l1_unreserved_size() == max_l1       # the whole stays the same

        def run():      # two blocks of 64 bfloat16 tiles: 256 KiB of buffers
            _stage_8x8_tiles()(x, zeros((256, 256)))

        expect_error(run, _stage_8x8_tiles, L1OverflowError, "has 131072 B free")
        ttnn.close_device(device)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


def test_a_worker_l1_size_larger_than_the_l1_names_the_users_line():
    from ttl_helpers import expect_error

    def run():
        ttnn.open_device(device_id=0, worker_l1_size=2 * 1024 * 1024)  # error

    expect_error(run, test_a_worker_l1_size_larger_than_the_l1_names_the_users_line, LayoutError,
                 "worker_l1_size=2097152", "ttnn.get_max_worker_l1_unreserved_size()")


def test_close_device_takes_a_mesh_device():
    """TT-Lang's multi-device tutorials close their mesh with ttnn.close_device."""
    ttnn.set_num_devices(2)
    try:
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
        ttnn.close_device(mesh)
        assert not mesh.is_open
    finally:
        ttnn.set_num_devices(None)


def test_a_tensor_made_from_values_alone_is_a_row_major_host_tensor_of_their_type():
    t = ttnn.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.dtype == ttnn.float32 and t.layout == ttnn.ROW_MAJOR_LAYOUT and tuple(t.shape) == (2, 3)
    np.testing.assert_array_equal(ttnn.to_numpy(t), np.arange(6, dtype=np.float32).reshape(2, 3))
    torch = pytest.importorskip("torch")
    b = ttnn.Tensor(torch.ones((1, 1, 32, 32), dtype=torch.bfloat16))
    assert b.dtype == ttnn.bfloat16 and b.layout == ttnn.ROW_MAJOR_LAYOUT and tuple(b.shape) == (1, 1, 32, 32)


def test_the_arch_name_is_the_simulated_chips():
    from tilefold.frontend.ttl import session

    assert ttnn.get_arch_name() == "wormhole_b0"
    with session.configured(arch="blackhole"):
        assert ttnn.get_arch_name() == "blackhole"


def test_the_device_profiler_reports_each_programs_modeled_device_time():
    from tilefold.frontend.ttl import session
    from ttl_helpers import copy_first_tile, tile_tensor, zeros

    with session.configured():
        copy_first_tile(tile_tensor((32, 32)), zeros((32, 32)))
        ttnn.ReadDeviceProfiler(None)                   # the programs so far
        copy_first_tile(tile_tensor((32, 32)), zeros((32, 32)))
        copy_first_tile(tile_tensor((32, 32)), zeros((32, 32)))
        ttnn.ReadDeviceProfiler(None)
        runs = session.settings().runs
        latest = ttnn.get_latest_programs_perf_data()
    assert list(latest) == [0]
    programs = latest[0]
    assert [p.program_execution_uid.runtime_id for p in programs] == [2, 3]
    for program, (_, result) in zip(programs, runs[1:]):
        kernel = program.program_analyses_results["DEVICE KERNEL DURATION [ns]"]
        assert kernel.duration == round(result.perf.seconds * 1e9) > 0
        assert program.core_count == 1
    first, second = (p.program_analyses_results["DEVICE FW DURATION [ns]"] for p in programs)
    assert second.start_timestamp == first.end_timestamp        # one after the other on the modeled timeline
