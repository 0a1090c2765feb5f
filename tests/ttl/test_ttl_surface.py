"""TT-Lang programs as people write them: block reuse inside one compute kernel, the full
``ttl.math`` surface, plain Python arguments, each run on the simulated device against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from ttl_helpers import recorded_programs, tile_tensor, zeros


def test_unary_op_on_a_block_the_same_compute_kernel_stored_earlier():
    @ttl.operation(grid=(1, 1))
    def op(x, out):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        t_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xv, t_dfb.reserve() as t:
                t.store(xv)
            with t_dfb.wait() as tv, o_dfb.reserve() as o:
                o.store(ttl.math.exp(tv))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as b:
                ttl.copy(x[0, 0], b).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as b:
                ttl.copy(b, out[0, 0]).wait()

    x = tile_tensor((32, 32), seed=11)
    y = zeros((32, 32))
    op(x, y)
    np.testing.assert_allclose(ttnn.to_numpy(y), np.exp(ttnn.to_numpy(x).astype(np.float64)), rtol=0.02, atol=0.02)


def run_block_function(expression, x):
    """``y = expression(x_blk)`` over one block of x's tiles; returns y as float32."""
    rows, cols = x.shape[0] // 32, x.shape[1] // 32

    @ttl.operation(grid=(1, 1))
    def op(x, y):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(rows, cols))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(rows, cols))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x_blk, y_dfb.reserve() as y_blk:
                y_blk.store(expression(x_blk))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as blk:
                ttl.copy(x[0:rows, 0:cols], blk).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as blk:
                ttl.copy(blk, y[0:rows, 0:cols]).wait()

    y = zeros(tuple(x.shape))
    op(x, y)
    return ttnn.to_numpy(y).astype(np.float64)


def _softplus(v, beta, threshold):
    return np.where(beta * v > threshold, v, np.log1p(np.exp(beta * v)) / beta)


SELU_SCALE, SELU_ALPHA = 1.0507009873554805, 1.6732632423543772
# (call, reference on float64 inputs, input range)
MATH_FUNCTIONS = {
    "asin": (lambda b: ttl.math.asin(b), np.arcsin, (-0.8, 0.8)),
    "acos": (lambda b: ttl.math.acos(b), np.arccos, (-0.8, 0.8)),
    "atan": (lambda b: ttl.math.atan(b), np.arctan, (-4, 4)),
    "sinh": (lambda b: ttl.math.sinh(b), np.sinh, (-3, 3)),
    "cosh": (lambda b: ttl.math.cosh(b), np.cosh, (-3, 3)),
    "asinh": (lambda b: ttl.math.asinh(b), np.arcsinh, (-4, 4)),
    "acosh": (lambda b: ttl.math.acosh(b), np.arccosh, (1, 5)),
    "atanh": (lambda b: ttl.math.atanh(b), np.arctanh, (-0.9, 0.9)),
    "tan": (lambda b: ttl.math.tan(b), np.tan, (-1.2, 1.2)),
    "elu": (lambda b: ttl.math.elu(b, 0.5), lambda v: np.where(v > 0, v, 0.5 * np.expm1(v)), (-4, 4)),
    "celu": (lambda b: ttl.math.celu(b, 2.0, 0.5), lambda v: np.maximum(v, 0) + np.minimum(0, 2 * np.expm1(v / 2)),
             (-4, 4)),
    "selu": (lambda b: ttl.math.selu(b), lambda v: SELU_SCALE * np.where(v > 0, v, SELU_ALPHA * np.expm1(v)), (-4, 4)),
    "leaky_relu": (lambda b: ttl.math.leaky_relu(b, 0.1), lambda v: np.where(v < 0, 0.1 * v, v), (-4, 4)),
    "prelu": (lambda b: ttl.math.prelu(b, alpha=0.3), lambda v: np.where(v < 0, 0.3 * v, v), (-4, 4)),
    "softplus": (lambda b: ttl.math.softplus(b, 2.0, 0.5, 4.0), lambda v: _softplus(v, 2.0, 4.0), (-4, 4)),
    "softsign": (lambda b: ttl.math.softsign(b), lambda v: v / (1 + np.abs(v)), (-4, 4)),
    "hardsigmoid": (lambda b: ttl.math.hardsigmoid(b), lambda v: np.clip(v / 6 + 0.5, 0, 1), (-5, 5)),
    "expm1": (lambda b: ttl.math.expm1(b), np.expm1, (-2, 2)),
    "logp1": (lambda b: ttl.math.logp1(b), np.log1p, (-0.5, 4)),
    "round": (lambda b: ttl.math.round(b), np.round, (-6, 6)),
    "round_decimals": (lambda b: ttl.math.round(b, decimals=1), lambda v: np.round(v, 1), (-6, 6)),
    "trunc": (lambda b: ttl.math.trunc(b), np.trunc, (-6, 6)),
    "frac": (lambda b: ttl.math.frac(b), lambda v: v - np.trunc(v), (-6, 6)),
    "signbit": (lambda b: ttl.math.signbit(b), lambda v: np.signbit(v).astype(np.float64), (-2, 2)),
    "threshold": (lambda b: ttl.math.threshold(b, 0.5, -3.0), lambda v: np.where(v > 0.5, -3.0, v), (-2, 2)),
}


@pytest.mark.parametrize("name", MATH_FUNCTIONS)
def test_math_function_against_numpy(name):
    call, reference, (lo, hi) = MATH_FUNCTIONS[name]
    values = np.random.default_rng(len(name)).uniform(lo, hi, (32, 64)).astype(np.float32)
    x = ttnn.from_numpy(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    v = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(run_block_function(call, x), reference(v), rtol=0.02, atol=0.02)


def test_math_functions_compile_against_the_real_compute_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    def chain(b):
        for name, (call, _, _) in MATH_FUNCTIONS.items():
            b = call(b)
        return b

    with recorded_programs() as programs:
        run_block_function(chain, tile_tensor((32, 32), seed=3, scale=0.1))
    compute = next(k for k in programs[0].kernels if k.is_compute)
    path = tmp_path / "compute.cpp"
    text = emit_kernel(compute.function)
    path.write_text(text)
    for call in ("asin_tile(", "softplus_tile(", "round_tile(", "log1p_tile(", "celu_tile(", "where_tile"):
        assert call in text
    check_kernel.require_accepted(check_kernel.check_kernel(path, "compute"))


# --- plain Python arguments, slice() objects, loop-carried values, staging buffers ----------------


@ttl.operation(grid=(1, 1))
def scaled_row_groups(a, out, g: int, scale, offsets=(1.0, 2.0)):
    groups = a.shape[0] // 32 // g
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(g, 1), block_count=2)
    o_dfb = ttl.make_dataflow_buffer_like(out, shape=(g, 1), block_count=2)

    @ttl.compute()
    def compute():
        for _ in range(groups):
            with a_dfb.wait() as x, o_dfb.reserve() as o:
                o.store(x * scale + offsets[1])

    @ttl.datamovement()
    def read():
        for i in range(groups):
            rows = slice(i * g, (i + 1) * g)
            with a_dfb.reserve() as blk:
                ttl.copy(a[rows, 0:1], blk).wait()

    @ttl.datamovement()
    def write():
        for i in range(groups):
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[slice(i * g, i * g + g), 0]).wait()


def test_plain_python_arguments_are_compile_time_constants_and_slice_objects_index_tensors():
    x = tile_tensor((128, 32), seed=21)
    v = ttnn.to_numpy(x)
    for g, scale in ((2, 3.0), (4, 0.5), (2, 3.0)):
        y = zeros((128, 32))
        scaled_row_groups(x, y, g, scale)
        np.testing.assert_allclose(ttnn.to_numpy(y), v * scale + 2.0, rtol=0.01, atol=0.02)
    assert len(scaled_row_groups._cache) == 2


def test_an_operation_argument_that_is_neither_a_tensor_nor_a_constant_is_named():
    from ttl_helpers import expect_error

    def run():
        scaled_row_groups(tile_tensor((64, 32)), zeros((64, 32)), object(), 1.0)  # error

    expect_error(run, test_an_operation_argument_that_is_neither_a_tensor_nor_a_constant_is_named,
                 Exception, "argument 'g' is object", "compile-time constants")


def test_a_block_expression_that_outlives_its_waited_block_and_then_accumulates():
    @ttl.operation(grid=(1, 1))
    def running_sum(x, out, n):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        o_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

        @ttl.compute()
        def compute():
            with x_dfb.wait() as x0:
                acc = x0 * 2.0
            for _ in range(n - 1):
                with x_dfb.wait() as xv:
                    acc = acc + xv
            with o_dfb.reserve() as o:
                o.store(acc)

        @ttl.datamovement()
        def read():
            for i in range(n):
                with x_dfb.reserve() as blk:
                    ttl.copy(x[i, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with o_dfb.wait() as blk:
                ttl.copy(blk, out[0, 0]).wait()

    x = tile_tensor((128, 32), seed=22)
    y = zeros((32, 32))
    running_sum(x, y, 4)
    tiles = ttnn.to_numpy(x).reshape(4, 32, 32).astype(np.float64)
    np.testing.assert_allclose(ttnn.to_numpy(y), tiles[0] * 2 + tiles[1:].sum(0), rtol=0.02, atol=0.05)


def staging_copy(rows):
    @ttl.operation(grid=(1, 1))
    def stage(x, out):
        buf = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            for i in range(rows):
                with buf.reserve() as blk:  # error
                    ttl.copy(x[i, 0], blk).wait()
                    ttl.copy(blk, out[i, 0]).wait()

    return stage


def test_a_buffer_used_only_inside_one_data_movement_kernel():
    x = tile_tensor((64, 32), seed=23)
    y = zeros((64, 32))
    staging_copy(2)(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


def test_a_staging_buffer_reserved_more_often_than_its_block_count_is_an_error():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error

    def run():
        staging_copy(3)(tile_tensor((96, 32)), zeros((96, 32)))

    expect_error(run, staging_copy, KernelError, "nothing waits on it", "block_count=2")


def staging_copy_on_node_0(rows):
    @ttl.operation(grid=(2, 1))
    def stage(x, out):
        buf = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def mover():
            node_x, _ = ttl.node(dims=2)
            if node_x == 0:
                for i in range(rows):
                    with buf.reserve() as blk:  # error
                        ttl.copy(x[i, 0], blk).wait()
                        ttl.copy(blk, out[i, 0]).wait()

    return stage


def test_a_staging_buffer_on_some_nodes_runs_when_its_blocks_fit_and_stops_where_the_device_would_wait():
    """Under a condition on the node the count is not known before the run: blocks that fit the
    buffer on any node reuse its space; more stop the run at the reserve that would wait forever."""
    from tilefold.errors import DeadlockError
    from ttl_helpers import marked_line

    x = tile_tensor((96, 32), seed=24)
    y = zeros((96, 32))
    staging_copy_on_node_0(2)(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y)[:64], ttnn.to_numpy(x)[:64])
    with pytest.raises(DeadlockError) as info:
        staging_copy_on_node_0(3)(x, zeros((96, 32)))
    assert f"test_ttl_surface.py:{marked_line(staging_copy_on_node_0)}" in str(info.value)
    assert "cb_reserve_back" in str(info.value) and "waiting for 1 page to be freed" in str(info.value)


@ttl.operation(grid=(4, 1))
def staging_once_per_node(x, out):
    """Each node stages its own tile (a reserve under ``node_x == i`` in a loop): once per node, though
    the loop has four reserves — they fit the buffer, and the pages they leave are no news."""
    buf = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)

    @ttl.datamovement()
    def mover():
        node_x, _ = ttl.node(dims=2)
        for i in range(4):
            if node_x == i:
                with buf.reserve() as blk:
                    ttl.copy(x[i, 0], blk).wait()
                    ttl.copy(blk, out[i, 0]).wait()


def test_a_staging_buffer_reserved_under_exclusive_conditions_runs_without_warnings():
    import warnings

    x = tile_tensor((128, 32), seed=25)
    y = zeros((128, 32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        staging_once_per_node(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x))


# --- names, errors, host ttnn -----------------------------------------------------------------------


def test_a_name_tilefold_lacks_is_one_line_at_the_users_line():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error

    def run():
        ttl.make_tensor_accessor  # error

    error = expect_error(run, test_a_name_tilefold_lacks_is_one_line_at_the_users_line, KernelError,
                         "ttl.make_tensor_accessor is not supported by tilefold yet")
    assert "namespace" not in str(error)
    assert not hasattr(ttl, "no_such_name") and not hasattr(ttnn, "no_such_name")


def test_a_missing_name_inside_a_kernel_names_the_kernel_line():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error

    def run():
        run_block_function(lambda b: ttl.math.erf(b), tile_tensor((32, 32)))  # error

    expect_error(run, test_a_missing_name_inside_a_kernel_names_the_kernel_line, KernelError,
                 "ttl.math.erf is not supported by tilefold yet")


def test_mask_and_mask_posinf():
    @ttl.operation(grid=(1, 1))
    def masked(x, m, y, z):
        x_dfb = ttl.make_dataflow_buffer_like(x, shape=(1, 1))
        m_dfb = ttl.make_dataflow_buffer_like(m, shape=(1, 1))
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 1))
        z_dfb = ttl.make_dataflow_buffer_like(z, shape=(1, 1))

        @ttl.compute()
        def compute():
            with x_dfb.wait() as xb, m_dfb.wait() as mb, y_dfb.reserve() as yb:
                yb.store(ttl.block.mask(xb, mb))
                with z_dfb.reserve() as zb:
                    zb.store(ttl.block.mask_posinf(xb, mb))

        @ttl.datamovement()
        def read():
            with x_dfb.reserve() as a, m_dfb.reserve() as b:
                ttl.copy(x[0, 0], a).wait()
                ttl.copy(m[0, 0], b).wait()

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as a:
                ttl.copy(a, y[0, 0]).wait()
            with z_dfb.wait() as b:
                ttl.copy(b, z[0, 0]).wait()

    x = tile_tensor((32, 32), seed=31)
    bits = (np.random.default_rng(32).random((32, 32)) < 0.3).astype(np.float32)
    m = ttnn.from_numpy(bits, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    y, z = zeros((32, 32)), zeros((32, 32))
    masked(x, m, y, z)
    v = ttnn.to_numpy(x)
    np.testing.assert_array_equal(ttnn.to_numpy(y), np.where(bits == 1, 0.0, v))
    np.testing.assert_array_equal(ttnn.to_numpy(z), np.where(bits == 1, np.inf, v))


def test_type_names_program_and_the_pre_1_0_spellings():
    assert ttl.TILE_LAYOUT is ttnn.TILE_LAYOUT and ttl.kernel is ttl.operation and ttl.core is ttl.node
    assert ttl.SrcPipeIdentity[ttl.NodeRange] is not None and ttl.NodeCoord is not None

    @ttl.kernel(grid=(1, 1))
    def old_style(x, y):
        x_cb = ttl.make_circular_buffer_like(x, shape=(1, 1), buffer_factor=2)
        y_cb = ttl.make_circular_buffer_like(y, shape=(1, 1), buffer_factor=2)

        @ttl.compute()
        def compute_func():
            x_blk = x_cb.wait()
            y_blk = y_cb.reserve()
            y_blk.store(x_blk + x_blk)
            y_cb.push()
            x_cb.pop()

        @ttl.datamovement()
        def dm0():
            blk = x_cb.reserve()
            ttl.copy(x[0, 0], blk).wait()
            x_cb.push()

        @ttl.datamovement()
        def dm1():
            core = ttl.core(dims=1)
            blk = y_cb.wait()
            ttl.copy(blk, y[core, 0]).wait()
            y_cb.pop()

        return ttl.Program(compute_func, dm0, dm1)(x, y)

    x = tile_tensor((32, 32), seed=33)
    y = zeros((32, 32))
    old_style(x, y)
    np.testing.assert_array_equal(ttnn.to_numpy(y), ttnn.to_numpy(x) * 2)


def test_host_ttnn_ops_memory_configs_and_tile_default():
    a = ttnn.rand((64, 64), dtype=ttnn.bfloat16, seed=1)
    assert a.layout is ttnn.TILE_LAYOUT
    v = ttnn.to_numpy(a)
    np.testing.assert_array_equal(ttnn.to_numpy(ttnn.abs(-a)), np.abs(v))
    np.testing.assert_array_equal(ttnn.to_numpy(a + a), v + v)
    np.testing.assert_allclose(ttnn.to_numpy(ttnn.exp(a)), np.exp(v), rtol=0.01)
    config = ttnn.create_sharded_memory_config(shape=(64, 64), core_grid=ttnn.CoreGrid(y=1, x=2),
                                               strategy=ttnn.ShardStrategy.HEIGHT)
    assert config.shard_spec.shape == (32, 64) and config.buffer_type is ttnn.BufferType.L1
    sharded = ttnn.to_memory_config(a, config)
    assert ttnn.is_sharded(sharded) and not ttnn.is_sharded(a)
    np.testing.assert_array_equal(ttnn.to_numpy(sharded), v)


def test_import_of_several_modules_on_one_line_is_a_tt_lang_script(tmp_path):
    from tilefold.cli.targets import script_front_end

    script = tmp_path / "s.py"
    script.write_text("import numpy, ttnn, ttl\n")
    assert script_front_end(str(script)).__name__ == "tilefold.cli.ttl_scripts"
    for line in ("import tilefold.ttnn as ttnn\n", "from tilefold import ttnn\n"):   # its operations imported
        script.write_text(line)
        assert script_front_end(str(script)).__name__ == "tilefold.cli.ttl_scripts"


def test_a_mesh_larger_than_the_simulated_chips_names_the_users_line():
    from tilefold.errors import LayoutError
    from ttl_helpers import expect_error

    def run():
        ttnn.open_mesh_device(ttnn.MeshShape(2, 4))  # error

    ttnn.set_num_devices(4)
    try:
        expect_error(run, test_a_mesh_larger_than_the_simulated_chips_names_the_users_line, LayoutError,
                     "needs 8 chips but 4 are simulated", "set_num_devices(8)")
    finally:
        ttnn.set_num_devices(None)


def test_a_mesh_tensor_is_read_through_a_composer():
    ttnn.set_num_devices(2)
    try:
        mesh = ttnn.open_mesh_device(ttnn.MeshShape(1, 2))
        values = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
        t = ttnn.from_numpy(values, dtype=ttnn.float32, device=mesh, mesh_mapper=ttnn.ShardTensorToMesh(mesh, dim=0))
        assert t.shape == (32, 32)
        np.testing.assert_array_equal(ttnn.to_numpy(t, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=0)), values)
        total = ttnn.all_reduce(t)
        np.testing.assert_array_equal(ttnn.to_numpy(total, mesh_composer=ttnn.ConcatMeshToTensor(mesh, dim=1)),
                                      np.tile(values[:32] + values[32:], (1, 2)))
    finally:
        ttnn.set_num_devices(None)


# --- ttl.unsafe element access ------------------------------------------------------------------------


def element_scan(dtype):
    @ttl.operation(grid=(1, 1))
    def element_scan(inp, out):
        inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 2), block_count=2)
        out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 2), block_count=2)

        @ttl.compute()
        def compute():
            pass

        @ttl.datamovement()
        def dm_read():
            with inp_dfb.reserve() as blk:
                ttl.copy(inp[0, 0:2], blk).wait()

        @ttl.datamovement()
        def dm_write():
            with inp_dfb.wait() as rblk:
                first = ttl.unsafe.element_read(rblk, 0, 0)
                with out_dfb.reserve() as wblk:
                    for r in range(32):
                        for c in range(64):
                            ttl.unsafe.element_write(wblk, r, c, 0)
                    for c in range(64):
                        val = ttl.unsafe.element_read(rblk, 17, c)
                        ttl.unsafe.element_write(wblk, 20, 63 - c, val)
                        if val == first:
                            ttl.unsafe.element_write(wblk, 0, c, c * 32 + 1)
                    ttl.copy(wblk, out[0, 0:2]).wait()

    return element_scan


@pytest.mark.parametrize("dtype,bits", [("float32", np.int32), ("bfloat16", np.int16)])
def test_unsafe_element_read_and_write_in_a_data_movement_kernel(dtype, bits):
    v = np.random.default_rng(41).standard_normal((32, 64)).astype(np.float32)
    v[17, 40] = v[0, 0]
    x = ttnn.from_numpy(v, dtype=getattr(ttnn, dtype))
    y = ttnn.zeros((32, 64), dtype=getattr(ttnn, dtype))
    element_scan(dtype)(x, y)
    got, held = ttnn.to_numpy(y), ttnn.to_numpy(x)
    np.testing.assert_array_equal(got[20], held[17][::-1])
    raw = got[0].astype(np.float32 if dtype == "float32" else np.float32)
    if dtype == "float32":
        assert raw.view(np.int32)[40] == 40 * 32 + 1
    else:
        import ml_dtypes
        assert got[0].astype(ml_dtypes.bfloat16).view(np.int16)[40] == 40 * 32 + 1
    assert not got[1].any()


def test_a_number_written_as_raw_bits_into_a_float_block_is_warned():
    """``ttl.unsafe.element_write`` writes an element's raw bits, as ``element_read`` reads them: a
    literal 7 in a bfloat16 block is the bits 0x0007, not 7.0 — said at the line, with the call that
    writes a number."""
    @ttl.operation(grid=(1, 1))
    def poke(inp, out):
        dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=1)

        @ttl.datamovement()
        def read():
            with dfb.reserve() as blk:
                ttl.copy(inp[0, 0], blk).wait()

        @ttl.datamovement()
        def write():
            with dfb.wait() as blk:
                ttl.unsafe.element_write(blk, 0, 0, 7)
                ttl.copy(blk, out[0, 0]).wait()

    x = ttnn.from_numpy(np.ones((32, 32), np.float32), dtype=ttnn.bfloat16)
    y = ttnn.zeros((32, 32), dtype=ttnn.bfloat16)
    with pytest.warns(UserWarning, match=r"raw bits: 7 is not the number 7 in a bfloat16 block; write a number "
                                         r"with ttl.raw_element_write\(blk, row, col, 7.0\)") as caught:
        poke(x, y)
    assert caught[0].filename == __file__
    import ml_dtypes
    assert ttnn.to_numpy(y).astype(ml_dtypes.bfloat16).view(np.int16)[0, 0] == 7


@ttl.operation(grid=(1, 1))
def _last_of_row(inp, out):
    """TT-Lang's earlier top-level spellings ``ttl.element_read`` / ``ttl.element_write``."""
    inp_dfb = ttl.make_dataflow_buffer_like(inp, shape=(1, 1), block_count=2)
    out_dfb = ttl.make_dataflow_buffer_like(out, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        pass

    @ttl.datamovement()
    def dm_read():
        with inp_dfb.reserve() as blk:
            ttl.copy(inp[0, 0], blk).wait()

    @ttl.datamovement()
    def dm_write():
        with inp_dfb.wait() as rblk, out_dfb.reserve() as wblk:
            best = ttl.element_read(rblk, 0, 0)
            for c in range(16):
                best = ttl.element_read(rblk, 0, c)
            for r in range(32):
                for c in range(32):
                    ttl.element_write(wblk, r, c, 0)
            ttl.element_write(wblk, 0, 0, best)
            ttl.copy(wblk, out[0, 0]).wait()


def test_element_read_and_write_under_their_top_level_names():
    v = np.random.default_rng(43).standard_normal((32, 32)).astype(np.float32)
    x, y = ttnn.from_numpy(v, dtype=ttnn.float32), ttnn.zeros((32, 32), dtype=ttnn.float32)
    _last_of_row(x, y)
    expected = np.zeros((32, 32), np.float32)
    expected[0, 0] = v[0, 15]
    np.testing.assert_array_equal(ttnn.to_numpy(y), expected)


def test_unsafe_element_access_compiles_against_the_real_dataflow_headers(tmp_path, check_kernel):
    from tilefold.codegen.cpp import emit_kernel

    with recorded_programs() as programs:
        element_scan("float32")(ttnn.zeros((32, 64), dtype=ttnn.float32), ttnn.zeros((32, 64), dtype=ttnn.float32))
    program = programs[0]
    kernel = next(k for k in program.kernels if k.name == "dm_write")
    path = tmp_path / "dm_write.cpp"
    path.write_text(emit_kernel(kernel.function))
    assert "get_read_ptr" in path.read_text() and "get_write_ptr" in path.read_text()
    check_kernel.require_accepted(check_kernel.check_kernel(path, "writer", check_kernel.accessor_compile_args(
        program, kernel)))


def test_a_broadcast_without_a_shape_takes_its_partners_or_its_stores():
    """ttl.math.broadcast(c, dims=[1]) in a * b + broadcast(c) takes the shape of a * b; stored
    directly, the shape of the block it is stored into."""
    import numpy as np

    @ttl.operation(grid=(1, 1))
    def bias(a, c, y, z):
        a_dfb = ttl.make_dataflow_buffer_like(a, shape=(2, 2), block_count=2)
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(2, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 2), block_count=2)
        z_dfb = ttl.make_dataflow_buffer_like(z, shape=(2, 2), block_count=2)

        @ttl.datamovement()
        def read():
            with a_dfb.reserve() as ab, c_dfb.reserve() as cb:
                ttl.copy(a[0:2, 0:2], ab).wait()
                ttl.copy(c[0:2, 0:1], cb).wait()

        @ttl.compute()
        def compute():
            with a_dfb.wait() as ab, c_dfb.wait() as cb, y_dfb.reserve() as yb, z_dfb.reserve() as zb:
                yb.store(ab * ab + ttl.math.broadcast(cb, dims=[1]))
                zb.store(ttl.math.broadcast(cb, dims=[1]))

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb, z_dfb.wait() as zb:
                ttl.copy(yb, y[0:2, 0:2]).wait()
                ttl.copy(zb, z[0:2, 0:2]).wait()

    rng = np.random.default_rng(3)
    av = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
    cv = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
    y, z = (ttnn.zeros((64, 64), layout=ttnn.TILE_LAYOUT) for _ in range(2))
    bias(ttnn.from_numpy(av, layout=ttnn.TILE_LAYOUT), ttnn.from_numpy(cv, layout=ttnn.TILE_LAYOUT), y, z)
    column = np.repeat(cv[:, :1], 64, axis=1)
    np.testing.assert_allclose(ttnn.to_numpy(y), av * av + column, rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(ttnn.to_numpy(z), column, rtol=1e-2, atol=1e-2)


def test_a_broadcast_without_any_shape_to_take_names_the_users_line():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error

    @ttl.operation(grid=(1, 1))
    def op(c, y):
        c_dfb = ttl.make_dataflow_buffer_like(c, shape=(2, 1), block_count=2)
        y_dfb = ttl.make_dataflow_buffer_like(y, shape=(2, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with c_dfb.reserve() as cb:
                ttl.copy(c[0:2, 0:1], cb).wait()

        @ttl.compute()
        def compute():
            with c_dfb.wait() as cb, y_dfb.reserve() as yb:
                yb.store(ttl.math.exp(ttl.math.broadcast(cb, dims=[1])))  # error

        @ttl.datamovement()
        def write():
            with y_dfb.wait() as yb:
                ttl.copy(yb, y[0:2, 0:1]).wait()

    expect_error(lambda: op(ttnn.zeros((64, 32), layout=ttnn.TILE_LAYOUT), ttnn.zeros((64, 32), layout=ttnn.TILE_LAYOUT)),
                 test_a_broadcast_without_any_shape_to_take_names_the_users_line, KernelError, "needs the result shape")


def test_the_element_wise_functions_and_transpose_under_ttls_own_names():
    # ttl.add / sub / mul / max / exp / neg / transpose are the ttl.math and ttl.block functions
    x = tile_tensor((64, 64), seed=29)
    got = run_block_function(
        lambda b: ttl.add(ttl.mul(ttl.exp(ttl.sub(b, 0.25)), 2.0), ttl.transpose(ttl.max(b, ttl.neg(b)))), x)
    v = ttnn.to_numpy(x).astype(np.float64)
    np.testing.assert_allclose(got, 2 * np.exp(v - 0.25) + np.abs(v).T, rtol=0.03, atol=0.03)
    assert ttl.transpose is not ttl.block.transpose and repr(ttl.sub) == "<ttl.sub>"


def test_a_top_level_function_called_on_the_host_names_itself():
    from tilefold.errors import KernelError
    from ttl_helpers import expect_error

    def run():
        ttl.exp(1.0)  # error

    expect_error(run, test_a_top_level_function_called_on_the_host_names_itself, KernelError,
                 "ttl.exp computes on blocks on the device")


def test_ttl_has_a_version():
    import tilefold

    assert ttl.__version__ == tilefold.__version__ and ttl.__version__[0].isdigit()


def test_a_staging_buffer_reserved_more_often_than_its_block_count_builds_with_a_warning_when_nothing_runs(
        monkeypatch):
    """TT-Lang's compiler builds such kernel skeletons; a build that runs nothing warns at the line."""
    import pytest

    monkeypatch.setenv("TTLANG_COMPILE_ONLY", "1")
    with pytest.warns(UserWarning, match="nothing waits on it.*runs nothing, so it goes on"):
        staging_copy(3)(tile_tensor((96, 32)), zeros((96, 32)))
