"""Mistakes in the host code of a TT-Lang script (tensor creation and conversion, devices, memory
configs, the operation call's tensors): each is one error naming the user's line and what to
change, never an internal traceback; the valid spellings next to them run and match numpy."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import KernelError, LayoutError
from tilefold.frontend.ttl.mesh import set_num_devices


def _here() -> int:
    """The line after the caller's."""
    return inspect.currentframe().f_back.f_lineno + 1


def _at(info, line: int) -> None:
    assert info.value.location is not None and info.value.location.file == __file__ \
        and info.value.location.line == line, str(info.value)


@ttl.operation(grid=(1, 1))
def add_tiles(a, b, out):
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 1), block_count=2)
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with a_dfb.wait() as x, b_dfb.wait() as y, o_dfb.reserve() as o:
            o.store(x + y)

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()
        with b_dfb.reserve() as blk:
            ttl.copy(b[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def _values(seed=0, shape=(32, 32)):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("call", [ttnn.to_numpy, ttnn.to_layout, ttnn.to_memory_config,
                                  ttnn.to_device, ttnn.from_device, ttnn.deallocate, ttnn.zeros_like])
def test_a_host_function_given_a_numpy_array_for_a_ttnn_tensor(call):
    array = _values()
    extra = {ttnn.to_layout: (ttnn.TILE_LAYOUT,), ttnn.to_memory_config: (ttnn.L1_MEMORY_CONFIG,),
             ttnn.to_device: (None,)}.get(call, ())
    with pytest.raises(LayoutError, match=r"takes a ttnn tensor, not ndarray; it is a numpy array: convert it with "
                                          r"ttnn.from_numpy") as info:
        line = _here()
        call(array, *extra)
    _at(info, line)


def test_to_torch_of_a_torch_tensor_names_from_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(LayoutError, match=r"to_torch takes a ttnn tensor, not Tensor; it is a torch tensor: "
                                          r"convert it with ttnn.from_torch") as info:
        line = _here()
        ttnn.to_torch(torch.zeros(32, 32))
    _at(info, line)


@pytest.mark.parametrize("layout", [ttnn.bfloat16, 0, "tile"])
def test_a_layout_that_is_not_one(layout):
    with pytest.raises(LayoutError, match=r"is not a TT-NN layout; use ttnn.TILE_LAYOUT or ttnn.ROW_MAJOR_LAYOUT") \
            as info:
        line = _here()
        ttnn.from_numpy(_values(), layout=layout)
    _at(info, line)


@pytest.mark.parametrize("keyword, value, message", [
    ("memory_config", "dram", r"from_numpy\(memory_config='dram'\): give ttnn.DRAM_MEMORY_CONFIG"),
    ("device", 0, r"from_numpy\(device=0\): give the device ttnn.open_device returned"),
    ("tile", 16, r"tile=16: give a ttnn.Tile\(\(height, width\)\)"),
    ("memory_cofig", ttnn.L1_MEMORY_CONFIG, r"from_numpy\(\) got an unexpected keyword argument 'memory_cofig'"),
    ("mesh_mapper", 3, r"mesh_mapper=3: give ttnn.ShardTensorToMesh"),
])
def test_a_conversion_keyword_of_the_wrong_kind(keyword, value, message):
    with pytest.raises(LayoutError, match=message) as info:
        line = _here()
        ttnn.from_numpy(_values(), **{keyword: value})
    _at(info, line)


def test_from_numpy_of_values_a_tensor_cannot_hold():
    with pytest.raises(LayoutError, match=r"the values are <U1 \('U'\); a ttnn tensor holds numbers") as info:
        line = _here()
        ttnn.from_numpy(np.array(["a", "b"]))
    _at(info, line)
    tensor = ttnn.from_numpy(_values())
    with pytest.raises(LayoutError, match=r"from_numpy takes a numpy array; this is already a ttnn tensor") as info:
        line = _here()
        ttnn.from_numpy(tensor)
    _at(info, line)


@pytest.mark.parametrize("shape", [(-32, 32), "ab", (32.5, 32), None])
def test_a_creation_shape_that_is_not_sizes(shape):
    with pytest.raises(LayoutError, match=r"give a tuple of sizes \(ints >= 0\)") as info:
        line = _here()
        ttnn.zeros(shape)
    _at(info, line)


def test_full_of_something_not_a_number():
    with pytest.raises(LayoutError, match=r"ttnn.full\(fill_value='x'\): give a number") as info:
        line = _here()
        ttnn.full((32, 32), "x")
    _at(info, line)
    with pytest.raises(LayoutError, match=r"ttnn.full\(fill_value=-5\): a uint32 tensor holds 0..4294967295") as info:
        line = _here()
        ttnn.full((32, 32), -5, dtype=ttnn.uint32)
    _at(info, line)
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.full((32, 32), 7, dtype=ttnn.uint8)), np.full((32, 32), 7))


def test_full_into_a_given_tensor():
    """``optional_tensor=`` fills that tensor, in its data type, and returns it; another shape is
    one error at the call."""
    config = ttnn.create_sharded_memory_config((64, 64), ttnn.CoreGrid(x=2, y=2), ttnn.ShardStrategy.BLOCK)
    state = ttnn.zeros((64, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, memory_config=config)
    assert ttnn.full((64, 64), 1.5, optional_tensor=state) is state
    np.testing.assert_array_equal(ttnn.to_numpy(state), np.full((64, 64), 1.5))
    assert ttnn.ones((64, 64), optional_tensor=state) is state and ttnn.to_numpy(state)[5, 7] == 1.0
    assert state.memory_config() == config
    with pytest.raises(LayoutError, match=r"shape \(32, 32\) but the tensor is \(64, 64\)") as info:
        line = _here()
        ttnn.full((32, 32), 2.0, optional_tensor=state)
    _at(info, line)


def test_element_sizes_of_tensors():
    """``t.element_size`` as tt-lang-sim has it (a number) and ``t.element_size()`` as TT-NN does;
    ``t.size_in_bytes(n)`` counts block-float exponents."""
    def tensor(dtype):
        return ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT)

    assert tensor(ttnn.bfloat16).element_size == 2 and tensor(ttnn.float32).element_size() == 4
    assert tensor(ttnn.bfloat16).size_in_bytes(10) == 20
    assert tensor(ttnn.bfloat8_b).element_size == 1 and tensor(ttnn.bfloat8_b).size_in_bytes(32) == 34
    assert tensor(ttnn.bfloat4_b).size_in_bytes(32) == 18


def test_devices_opened_and_closed_wrongly():
    ttnn.set_num_devices(4)
    try:
        with pytest.raises(LayoutError, match=r"open_device\(device_id=4\): 4 n150 chips are simulated; give an "
                                              r"id in 0..3") as info:
            line = _here()
            ttnn.open_device(device_id=4)
    finally:
        ttnn.set_num_devices(None)
    _at(info, line)
    with pytest.raises(LayoutError, match=r"close_device takes the device ttnn.open_device returned, not Tensor") \
            as info:
        line = _here()
        ttnn.close_device(ttnn.zeros((32, 32)))
    _at(info, line)
    device = ttnn.open_device(device_id=0)
    ttnn.close_device(device)
    with pytest.raises(LayoutError, match=r"the device was closed \(ttnn.close_device\) before this use") as info:
        line = _here()
        ttnn.from_numpy(_values(), device=device)
    _at(info, line)


def test_a_mesh_mapper_of_a_single_device():
    device = ttnn.open_device(device_id=0)
    with pytest.raises(LayoutError, match=r"ttnn.ShardTensorToMesh takes the mesh device of ttnn.open_mesh_device, "
                                          r"not Device") as info:
        line = _here()
        ttnn.ShardTensorToMesh(device, dim=0)
    _at(info, line)


@pytest.mark.parametrize("arguments, message", [
    (((32, 32), ttnn.CoreGrid(y=1, x=1), "height"), r"strategy='height'\): give ttnn.ShardStrategy.HEIGHT"),
    (((32, 32), (1, 1), ttnn.ShardStrategy.HEIGHT), r"core_grid=\(1, 1\)\): give a ttnn.CoreGrid"),
    (((32,), ttnn.CoreGrid(y=1, x=1), ttnn.ShardStrategy.HEIGHT), r"shape=\(32,\)\): give the tensor's shape"),
])
def test_a_sharded_memory_config_of_wrong_arguments(arguments, message):
    with pytest.raises(LayoutError, match=message) as info:
        line = _here()
        ttnn.create_sharded_memory_config(*arguments)
    _at(info, line)


def test_a_core_grid_of_no_cores():
    with pytest.raises(LayoutError, match=r"ttnn.CoreGrid\(y=0, x=1\): give positive numbers") as info:
        line = _here()
        ttnn.CoreGrid(y=0, x=1)
    _at(info, line)


def test_a_tensor_that_does_not_fit_its_sharded_config_is_an_error_where_it_is_made():
    device = ttnn.open_device(device_id=0)
    config = ttnn.create_sharded_memory_config((33, 32), ttnn.CoreGrid(y=1, x=1), ttnn.ShardStrategy.WIDTH)
    with pytest.raises(LayoutError, match=r"a 32x32 tensor does not fit its sharded memory config: "
                                          r"memory_config.shard_spec.shape 33x32 is not a multiple") as info:
        line = _here()
        ttnn.from_numpy(_values(), dtype=ttnn.bfloat16, device=device, memory_config=config)
    _at(info, line)
    wide = ttnn.create_sharded_memory_config((288, 288), ttnn.CoreGrid(y=9, x=9), ttnn.ShardStrategy.BLOCK)
    with pytest.raises(LayoutError, match=r"a 288x288 tensor does not fit .*outside the 8x8 grid") as info:
        line = _here()
        ttnn.from_numpy(_values(shape=(288, 288)), dtype=ttnn.bfloat16, device=device, memory_config=wide)
    _at(info, line)
    tensor = ttnn.from_numpy(_values(shape=(64, 64)), dtype=ttnn.bfloat16, device=device)
    narrow = ttnn.create_sharded_memory_config((32, 32), ttnn.CoreGrid(y=1, x=1), ttnn.ShardStrategy.HEIGHT)
    with pytest.raises(LayoutError, match=r"ttnn.to_memory_config: a 64x64 tensor does not fit") as info:
        line = _here()
        ttnn.to_memory_config(tensor, narrow)
    _at(info, line)


def test_an_operation_on_a_closed_device():
    device = ttnn.open_device(device_id=0)
    a, b = (ttnn.from_numpy(_values(s), dtype=ttnn.bfloat16, device=device) for s in (1, 2))
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, device=device)
    ttnn.close_device(device)
    with pytest.raises(KernelError, match=r"add_tiles\(\): argument 'a' is on a device that was closed") as info:
        line = _here()
        add_tiles(a, b, out)
    _at(info, line)


def test_an_operation_on_tensors_of_two_devices():
    set_num_devices(2)
    try:
        first, second = ttnn.open_device(device_id=0), ttnn.open_device(device_id=1)
        a = ttnn.from_numpy(_values(1), dtype=ttnn.bfloat16, device=first)
        b = ttnn.from_numpy(_values(2), dtype=ttnn.bfloat16, device=second)
        out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, device=first)
        with pytest.raises(KernelError, match=r"the tensors are on different devices \('a' on device 0, 'b' on "
                                              r"device 1, 'out' on device 0\)") as info:
            line = _here()
            add_tiles(a, b, out)
        _at(info, line)
    finally:
        set_num_devices(None)


def test_the_valid_spellings_next_to_the_mistakes_run():
    """ttnn.Layout.TILE, tile=ttnn.Tile((32, 32)), a block-sharded input and a host tensor mixed with
    device tensors: the operation's sum matches numpy."""
    device = ttnn.open_device(device_id=0)
    x, y = _values(1, (64, 64)), _values(2)
    sharded = ttnn.create_sharded_memory_config((64, 64), ttnn.CoreGrid(y=2, x=2), ttnn.ShardStrategy.BLOCK)
    a = ttnn.from_numpy(x, dtype=ttnn.bfloat16, layout=ttnn.Layout.TILE, device=device, memory_config=sharded,
                        tile=ttnn.Tile((32, 32)))
    b = ttnn.from_numpy(y, dtype=ttnn.bfloat16)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16, device=device)
    add_tiles(a, b, out)
    ttnn.close_device(device)
    expected = ttnn.to_numpy(ttnn.add(ttnn.from_numpy(x[:32, :32], dtype=ttnn.bfloat16), b))
    np.testing.assert_array_equal(ttnn.to_numpy(out), expected)


X = object()       # stands for the test's tensor in the arguments below


@pytest.mark.parametrize("name, arguments, keywords, message", [
    ("add", (X,), {}, r"ttnn.add\(\): missing a required argument: 'b'"),
    ("permute", (X,), {}, r"ttnn.permute\(\): missing a required argument: 'dims'"),
    ("add", (None, X), {}, r"ttnn.add: operand None is not a tensor or a number"),
    ("where", (X, X, None), {}, r"ttnn.where: operand None is not a tensor or a number"),
    ("add", (X, X), {"memory_config": "l1"}, r"ttnn.add\(memory_config='l1'\): give ttnn.DRAM_MEMORY_CONFIG"),
    ("reshape", (np.zeros((32, 32)), (1024,)), {}, r"ttnn.reshape takes a ttnn tensor, not ndarray; it is a numpy array"),
    ("add", (X, X), {"input_tensor_a_activations": ["relu"]},
     r"ttnn.add: input_tensor_a_activations= is not supported by tilefold yet"),
])
def test_a_host_op_called_with_wrong_arguments(name, arguments, keywords, message):
    x = ttnn.from_numpy(_values(), dtype=ttnn.bfloat16)
    arguments = [x if a is X else a for a in arguments]
    with pytest.raises(LayoutError, match=message) as info:
        line = _here()
        getattr(ttnn, name)(*arguments, **keywords)
    _at(info, line)


def test_an_operation_called_with_a_number_for_a_tensor_names_the_argument():
    a = ttnn.from_numpy(_values(1), dtype=ttnn.bfloat16)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16)
    with pytest.raises(KernelError, match=r"make_dataflow_buffer_like: the first argument must be a tensor .*not "
                                          r"float; the operation was called with 1.0 for 'b': pass a ttnn tensor") \
            as info:
        add_tiles(a, 1.0, out)
    source, first = inspect.getsourcelines(add_tiles.function)
    line = first + next(i for i, text in enumerate(source) if "b_dfb = " in text)
    _at(info, line)


@pytest.mark.parametrize("name, arguments, keywords, message", [
    ("arange", ("a",), {}, r"ttnn.arange\(0, 'a', 1\): give numbers"),
    ("arange", (0, 10, 0), {}, r"a step that is not 0"),
    ("rand", ((32, 32),), {"seed": "a"}, r"ttnn.rand\(seed='a'\): give a non-negative int"),
    ("CoreRange", (0, 1), {}, r"ttnn.CoreRange start 0: give a ttnn.CoreCoord\(x, y\) or an \(x, y\) pair"),
    ("CoreRange", ((2, 2), (1, 1)), {}, r"the end core is before the start"),
    ("CoreRangeSet", ([5],), {}, r"ttnn.CoreRangeSet: 5 is not a ttnn.CoreRange"),
])
def test_host_helpers_given_wrong_arguments(name, arguments, keywords, message):
    with pytest.raises(LayoutError, match=message) as info:
        line = _here()
        getattr(ttnn, name)(*arguments, **keywords)
    _at(info, line)


def test_mesh_mappers_of_wrong_dims_and_to_layout_over_a_mesh():
    set_num_devices(2)
    try:
        mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
        with pytest.raises(LayoutError, match=r"ttnn.ShardTensor2dMesh\(dims=\(0,\)\): give two dims") as info:
            line = _here()
            ttnn.ShardTensor2dMesh(mesh_device, dims=(0,))
        _at(info, line)
        x = _values(3, (32, 64))
        spread = ttnn.from_numpy(x, dtype=ttnn.float32, device=mesh_device,
                                 mesh_mapper=ttnn.ShardTensorToMesh(mesh_device, dim=1))
        rows = ttnn.to_layout(spread, ttnn.ROW_MAJOR_LAYOUT)
        assert all(piece.layout is ttnn.ROW_MAJOR_LAYOUT for piece in rows.pieces)
        np.testing.assert_array_equal(ttnn.to_numpy(rows, mesh_composer=ttnn.ConcatMeshToTensor(mesh_device, dim=1)), x)
    finally:
        set_num_devices(None)


def test_a_host_function_missing_its_argument():
    x = ttnn.from_numpy(_values(), dtype=ttnn.bfloat16)
    with pytest.raises(LayoutError, match=r"ttnn.to_memory_config\(\): missing a required argument: 'memory_config'") \
            as info:
        line = _here()
        ttnn.to_memory_config(x)
    _at(info, line)
    with pytest.raises(LayoutError, match=r"ttnn.exp\(\) needs a ttnn tensor") as info:
        line = _here()
        ttnn.exp()
    _at(info, line)


def test_an_operation_given_an_array_or_a_closed_mesh():
    a = ttnn.from_numpy(_values(1), dtype=ttnn.bfloat16)
    out = ttnn.zeros((32, 32), dtype=ttnn.bfloat16)
    with pytest.raises(KernelError, match=r"add_tiles\(\): argument 'b' is ndarray; a numpy array: convert it with "
                                          r"ttnn.from_numpy") as info:
        line = _here()
        add_tiles(a, _values(2), out)
    _at(info, line)
    set_num_devices(2)
    try:
        mesh_device = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
        x, y = (ttnn.from_numpy(_values(s), dtype=ttnn.bfloat16, device=mesh_device) for s in (1, 2))
        spread_out = ttnn.from_numpy(np.zeros((32, 32), np.float32), dtype=ttnn.bfloat16, device=mesh_device)
        add_tiles(x, y, spread_out)
        composer = ttnn.ConcatMeshToTensor(mesh_device, dim=0)
        expected = ttnn.to_numpy(ttnn.add(ttnn.from_numpy(_values(1), dtype=ttnn.bfloat16),
                                          ttnn.from_numpy(_values(2), dtype=ttnn.bfloat16)))
        np.testing.assert_array_equal(ttnn.to_numpy(spread_out, mesh_composer=composer), np.concatenate([expected] * 2))
        ttnn.close_device(mesh_device)
        with pytest.raises(KernelError, match=r"the tensors' mesh device was closed") as info:
            line = _here()
            add_tiles(x, y, spread_out)
        _at(info, line)
    finally:
        set_num_devices(None)


def test_a_tensor_method_tilefold_lacks():
    from tilefold.frontend.ttl.math_api import UnsupportedName

    x = ttnn.from_numpy(_values(), dtype=ttnn.bfloat16)
    with pytest.raises(UnsupportedName, match=r"ttnn.Tensor.permute is not supported by tilefold yet; use "
                                              r"ttnn.permute\(tensor, ...\)") as info:
        line = _here()
        x.permute((1, 0))
    _at(info, line)
    assert not hasattr(x, "pieces") and ttnn.permute(x, (1, 0)).shape == tuple(reversed(x.shape))


def test_tensor_methods_that_are_ttnn_functions_and_shapes_equal_to_lists():
    """``t.reshape``, ``t.to(layout)``, ``t.cpu()``, ``t.is_sharded()``, ``t.ndim``, ``t.volume()``;
    ``t.shape == [..]``; ``split`` / ``chunk`` give lists; ``device.arch()``; ``config.is_sharded()``."""
    x = ttnn.from_numpy(np.arange(4 * 32 * 64, dtype=np.float32).reshape(4, 32, 64), dtype=ttnn.float32,
                        layout=ttnn.TILE_LAYOUT)
    assert x.shape == [4, 32, 64] and x.shape != [4, 32, 63] and x.ndim == 3 and x.volume() == 4 * 32 * 64
    assert x.reshape(128, 64).shape == (128, 64) and x.reshape((2, 2, 32, 64)).shape.to_rank(4) == [2, 2, 32, 64]
    assert x.to(ttnn.ROW_MAJOR_LAYOUT).layout is ttnn.ROW_MAJOR_LAYOUT and not x.is_sharded()
    np.testing.assert_array_equal(ttnn.to_numpy(x.cpu()), ttnn.to_numpy(x))
    pieces = ttnn.chunk(x, 2, 0)
    assert isinstance(ttnn.split(x, 1, 0), list) and [p.shape for p in pieces] == [(2, 32, 64), (2, 32, 64)]
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.argmin(x, dim=-1)), np.zeros((4, 32)))
    device = ttnn.open_device(device_id=0)
    try:
        assert device.arch() is device.arch and x.memory_config().is_sharded() is False
    finally:
        ttnn.close_device(device)


@ttl.operation(grid=(1, 1))
def copy_tile(a, out):
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def read():
        with o_dfb.reserve() as blk:
            ttl.copy(a[0, 0], blk).wait()

    @ttl.datamovement()
    def write():
        with o_dfb.wait() as blk:
            ttl.copy(blk, out[0, 0]).wait()


def test_a_number_passed_for_a_tensor_a_kernel_indexes_names_the_argument():
    with pytest.raises(KernelError, match=r"float 2.5 cannot be indexed in a kernel; .*the operation was called with "
                                          r"2.5 for 'a': pass a ttnn tensor there") as info:
        copy_tile(2.5, ttnn.zeros((32, 32)))
    source, first = inspect.getsourcelines(copy_tile.function)
    _at(info, first + next(i for i, text in enumerate(source) if "ttl.copy(a[0, 0]" in text))
    x = _values(4)
    out = ttnn.zeros((32, 32))
    copy_tile(ttnn.from_numpy(x), out)
    np.testing.assert_array_equal(ttnn.to_numpy(out), x)


def test_to_memory_config_and_to_layout_convert_to_the_dtype_given():
    """dtype= of ttnn.to_memory_config / ttnn.to_layout rounds the values (it was ignored)."""
    x = ttnn.from_numpy(np.full((32, 32), 1.001, np.float32), dtype=ttnn.float32)
    moved = ttnn.to_memory_config(x, ttnn.L1_MEMORY_CONFIG, dtype=ttnn.bfloat16)
    rows = ttnn.to_layout(x, ttnn.ROW_MAJOR_LAYOUT, dtype=ttnn.bfloat16)
    assert moved.dtype is ttnn.bfloat16 and rows.dtype is ttnn.bfloat16 and rows.layout is ttnn.ROW_MAJOR_LAYOUT
    np.testing.assert_array_equal(ttnn.to_numpy(moved), np.ones((32, 32), np.float32))
    np.testing.assert_array_equal(ttnn.to_numpy(rows), np.ones((32, 32), np.float32))


def test_a_host_op_writes_its_output_tensor():
    """output_tensor= of a host op receives the result in its own data type (it was left unwritten)."""
    x = ttnn.from_numpy(_values(5), dtype=ttnn.bfloat16)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32)
    assert ttnn.exp(x, output_tensor=out) is out
    np.testing.assert_allclose(ttnn.to_numpy(out), np.exp(ttnn.to_numpy(x)), rtol=1e-6)
    total = ttnn.zeros((32, 32), dtype=ttnn.bfloat16)
    ttnn.add(x, x, output_tensor=total)
    np.testing.assert_array_equal(ttnn.to_numpy(total), ttnn.to_numpy(x + x))
    with pytest.raises(LayoutError, match=r"ttnn.exp\(output_tensor=...\): the result is 32x32 but output_tensor is "
                                          r"32x64") as info:
        line = _here()
        ttnn.exp(x, output_tensor=ttnn.zeros((32, 64)))
    _at(info, line)


def test_matmul_and_linear_write_their_optional_output_tensor():
    """TT-NN's matmul and linear name their output ``optional_output_tensor=`` (it was dropped)."""
    a, b = ttnn.from_numpy(_values(7), dtype=ttnn.bfloat16), ttnn.from_numpy(_values(8), dtype=ttnn.bfloat16)
    out = ttnn.zeros((32, 32), dtype=ttnn.float32)
    assert ttnn.matmul(a, b, optional_output_tensor=out) is out
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(a) @ ttnn.to_numpy(b), rtol=1e-5, atol=1e-5)
    ttnn.linear(a, b, bias=a, optional_output_tensor=out)
    np.testing.assert_allclose(ttnn.to_numpy(out), ttnn.to_numpy(a) @ ttnn.to_numpy(b) + ttnn.to_numpy(a),
                               rtol=1e-5, atol=1e-5)


def test_an_unknown_keyword_of_a_host_op_is_a_warning_at_the_line():
    """A keyword tilefold's host op does not take (a misspelling) is not silently dropped."""
    x = ttnn.from_numpy(_values(9), dtype=ttnn.bfloat16)
    with pytest.warns(UserWarning, match=r"ttnn.add\(memroy_config=\): tilefold does not know this keyword") as info:
        line = _here()
        ttnn.add(x, x, memroy_config=ttnn.L1_MEMORY_CONFIG)
    assert info[0].filename == __file__ and info[0].lineno == line


def test_a_tensor_keeps_its_tile_through_to_layout_and_gets_32x32_tiles_from_to_memory_config():
    """As in TT-NN: ``to_memory_config`` allocates its output with the default 32x32 tile."""
    x = _values(6, (32, 64))
    small = ttnn.from_numpy(x, dtype=ttnn.float32, tile=ttnn.Tile((16, 32)))
    moved = ttnn.to_memory_config(small, ttnn.L1_MEMORY_CONFIG)
    tiled = ttnn.to_layout(small, ttnn.TILE_LAYOUT)
    assert moved.tile.tile_shape == (32, 32) and tiled.tile.tile_shape == (16, 32)
    np.testing.assert_array_equal(ttnn.to_numpy(moved), x)
    np.testing.assert_array_equal(ttnn.to_numpy(tiled), x)


@pytest.mark.parametrize("values, dtype, message", [
    (-np.ones((32, 32), np.float32), "uint32", r"uint32 tensor holds whole numbers 0..4294967295, and the values "
                                               r"hold -1.0 \(at \(0, 0\), and 1023 more\)"),
    (np.full((32, 32), 70000.0, np.float32), "uint16", r"uint16 tensor holds whole numbers 0..65535"),
    (np.array([[1.0, np.nan]], np.float32), "int32", r"the values hold nan \(at \(0, 1\)\)"),
    (np.array([[1, 2**40]], np.int64), "int32", r"the values hold 1099511627776 \(at \(0, 1\)\)"),
])
def test_values_an_integer_tensor_cannot_hold_are_not_wrapped_around(values, dtype, message):
    """-1 into uint32 is no 4294967295 and 70000 into uint16 no 4464, as ttnn.full refuses them too."""
    with pytest.raises(LayoutError, match=r"from_numpy: a .*" + message) as info:
        line = _here()
        ttnn.from_numpy(values, dtype=getattr(ttnn, dtype))
    _at(info, line)
    assert "clip or round the values first, or give a float dtype" in str(info.value)
    inside = np.clip(np.nan_to_num(values), 0, 65535).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.from_numpy(inside, dtype=getattr(ttnn, dtype))), inside)


def test_from_torch_of_values_an_integer_tensor_cannot_hold():
    torch = pytest.importorskip("torch")
    with pytest.raises(LayoutError, match=r"from_torch: a uint16 tensor holds whole numbers 0..65535, and the values "
                                          r"hold -3.0") as info:
        line = _here()
        ttnn.from_torch(torch.full((32, 32), -3.0), dtype=ttnn.uint16)
    _at(info, line)


def test_a_shape_no_device_memory_holds():
    """A typo of a shape (a 2^20 x 2^20 tensor) is an error at the line, not numpy's MemoryError."""
    with pytest.raises(LayoutError, match=r"shape \(1048576, 1048576\): 1,099,511,627,776 elements are more than the "
                                          r"\d+ GiB of DRAM of \w+ hold in any data type") as info:
        line = _here()
        ttnn.ones((2**20, 2**20))
    _at(info, line)


def test_a_host_op_given_a_numpy_array_operand_says_to_convert_it_in_one_line():
    tensor = ttnn.from_numpy(_values())
    with pytest.raises(LayoutError, match=r"ttnn.add: an operand is ndarray, not a tensor or a number; it is a numpy "
                                          r"array: convert it with ttnn.from_numpy\(...\) first") as info:
        line = _here()
        ttnn.add(tensor, np.ones((32, 32)))
    _at(info, line)
    assert "\n" not in str(info.value)


def test_from_torch_of_a_tensor_without_values_on_the_cpu():
    torch = pytest.importorskip("torch")
    with pytest.raises(LayoutError, match=r"from_torch: a tensor on torch's meta device has a shape but no values") \
            as info:
        line = _here()
        ttnn.from_torch(torch.ones((32, 32), device="meta"))
    _at(info, line)
    with pytest.raises(LayoutError, match=r"from_torch: a torch.sparse_coo torch tensor; convert it with "
                                          r"\.to_dense\(\) first") as info:
        line = _here()
        ttnn.from_torch(torch.eye(32).to_sparse())
    _at(info, line)


def test_reading_pages_of_a_ttnn_empty_tensor_no_operation_wrote_is_a_warning_at_the_read():
    """ttnn.empty leaves a device tensor's contents undefined: an operation that writes only some of
    its pages leaves the rest as DRAM held them (zeros here), which the read that sees them names."""
    import warnings

    import numpy as np

    from ttl_helpers import copy_first_tile as first_tile_only

    a = ttnn.from_numpy(np.ones((32, 64), np.float32), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    out = ttnn.empty((32, 64), dtype=ttnn.bfloat16)
    first_tile_only(a, out)
    with pytest.warns(UserWarning, match=r"1 of the 2 device pages of this tensor were written by no operation "
                                         r"since ttnn.empty made it \(pages 1\)") as caught:
        ttnn.to_numpy(out)
    assert caught[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ttnn.to_numpy(out)                      # once
        written = ttnn.zeros((32, 64), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
        first_tile_only(a, written)
        ttnn.to_numpy(written)                  # ttnn.zeros: defined everywhere
        whole = ttnn.empty((32, 32), dtype=ttnn.bfloat16)
        first_tile_only(a, whole)
        ttnn.to_numpy(whole)                    # every page written


def test_older_and_newer_ttnn_spellings():
    """``pad(t, output_padded_shape, input_tensor_start, value)``, ``rand(low=, high=)``,
    ``UnaryWithParam(UnaryOpType.X)`` as an activation, ``DispatchCoreConfig`` accepted."""
    x = ttnn.from_numpy(np.ones((2, 3), np.float32), layout=ttnn.ROW_MAJOR_LAYOUT)
    padded = ttnn.to_numpy(ttnn.pad(x, (4, 5), (1, 1), 7.0))
    expected = np.full((4, 5), 7.0, np.float32)
    expected[1:3, 1:4] = 1.0
    np.testing.assert_array_equal(padded, expected)
    r = ttnn.to_numpy(ttnn.rand((64, 64), low=-2.0, high=3.0, seed=1))
    assert r.min() >= -2.0 and r.max() < 3.0 and r.min() < -1.5 and r.max() > 2.5
    a = ttnn.from_numpy(np.random.default_rng(2).random((32, 64), dtype=np.float32) - 0.5, layout=ttnn.TILE_LAYOUT)
    b = ttnn.from_numpy(np.random.default_rng(3).random((64, 32), dtype=np.float32), layout=ttnn.TILE_LAYOUT)
    relu = ttnn.to_numpy(ttnn.linear(a, b, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU)))
    np.testing.assert_array_equal(relu, np.maximum(ttnn.to_numpy(ttnn.linear(a, b)), 0))
    ttnn.DispatchCoreConfig(ttnn.DataType.BFLOAT16)
    plain = ttnn.to_numpy(ttnn.linear(a, b))
    leaky = ttnn.linear(a, b, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.LEAKY_RELU, 0.25))
    np.testing.assert_allclose(ttnn.to_numpy(leaky), np.where(plain >= 0, plain, 0.25 * plain), rtol=1e-6)
    capped = ttnn.matmul(a, b, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.RELU_MAX, 0.5))
    np.testing.assert_array_equal(ttnn.to_numpy(capped), np.clip(plain, 0, 0.5))
    with pytest.raises(LayoutError, match="takes other parameters"):
        ttnn.linear(a, b, activation=ttnn.UnaryWithParam(ttnn.UnaryOpType.EXP, 2.0))
