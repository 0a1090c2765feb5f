"""The host TT-NN operations of tilefold.ttnn (tilefold.ttnn_ops) against numpy: element-wise ops
and their aliases, reductions, sort / topk / gather indices, typecasts, shapes, and the data type
of every result (rounded as the device holds it)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttl as ttl
import tilefold.ttnn as ttnn
from tilefold.errors import LayoutError


def bf16(values) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even), as float32."""
    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def tensor(values, dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, **kwargs):
    return ttnn.from_numpy(np.asarray(values), dtype=dtype, layout=layout, **kwargs)


def held(t) -> np.ndarray:
    return ttnn.to_numpy(t)


RNG = np.random.default_rng(7)
A = RNG.uniform(-3, 3, (4, 40)).astype(np.float32)
B = RNG.uniform(0.5, 3, (4, 40)).astype(np.float32)


# --- names and aliases -------------------------------------------------------------------------


@pytest.mark.parametrize("alias, name", [("mul", "multiply"), ("sub", "subtract"), ("div", "divide"),
                                         ("clip", "clamp"), ("gte", "ge"), ("lte", "le"), ("power", "pow")])
def test_aliases_compute_what_their_names_compute(alias, name):
    a, b = tensor(A), tensor(B)
    if name == "clamp":
        np.testing.assert_array_equal(held(getattr(ttnn, alias)(a, min=-1, max=1)),
                                      held(getattr(ttnn, name)(a, min=-1, max=1)))
    else:
        np.testing.assert_array_equal(held(getattr(ttnn, alias)(a, b)), held(getattr(ttnn, name)(a, b)))


def test_a_name_tilefold_lacks_is_one_clear_error():
    with pytest.raises(Exception, match="ttnn.conv2d is not supported by tilefold yet"):
        ttnn.conv2d  # noqa: B018


# --- element-wise ---------------------------------------------------------------------------------


BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "rsub": lambda a, b: b - a,
    "squared_difference": lambda a, b: (a - b) ** 2, "remainder": np.remainder, "fmod": np.fmod,
}


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", [ttnn.bfloat16, ttnn.float32], ids=["bf16", "f32"])
def test_binary_ops_are_float32_arithmetic_rounded_to_the_data_type(name, dtype):
    a, b = tensor(A, dtype), tensor(B, dtype)
    out = getattr(ttnn, name)(a, b)
    expected = BINARY[name](held(a), held(b)).astype(np.float32)
    assert out.dtype is dtype and tuple(out.shape) == A.shape
    np.testing.assert_array_equal(held(out), bf16(expected) if dtype is ttnn.bfloat16 else expected)


def test_binary_ops_broadcast_take_scalars_and_an_output_dtype():
    a = tensor(A, ttnn.float32)
    row = tensor(B[:1], ttnn.float32)
    np.testing.assert_array_equal(held(ttnn.add(a, row)), A + B[:1])
    np.testing.assert_array_equal(held(ttnn.mul(a, 2.5)), A * np.float32(2.5))
    out = ttnn.sub(a, row, dtype=ttnn.bfloat16)
    assert out.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(held(out), bf16(A - B[:1]))
    np.testing.assert_array_equal(held(ttnn.pow(a, 2.0)), (A.astype(np.float64) ** 2).astype(np.float32))


def test_tensor_operators_are_the_ops():
    a, b = tensor(A, ttnn.float32), tensor(B, ttnn.float32)
    np.testing.assert_array_equal(held(a - b), A - B)
    np.testing.assert_array_equal(held(1.0 - a), 1 - A)
    np.testing.assert_array_equal(held(a / b), A / B)
    np.testing.assert_array_equal(held(2.0 / b), np.float32(2) / B)
    np.testing.assert_array_equal(held(a < b), (A < B).astype(np.float32))
    np.testing.assert_array_equal(held(a ** 2), (A.astype(np.float64) ** 2).astype(np.float32))
    np.testing.assert_array_equal(held(a[1:3, ::2]), A[1:3, ::2])
    np.testing.assert_array_equal(held(abs(a)), np.abs(A))
    np.testing.assert_array_equal(held(a // b), np.floor_divide(A, B))
    np.testing.assert_array_equal(held(3.0 // b), np.floor_divide(np.float32(3), B))
    np.testing.assert_array_equal(held(a % b), np.remainder(A, B))
    np.testing.assert_array_equal(held(3.0 % b), np.remainder(np.float32(3), B))
    np.testing.assert_allclose(held(2.0 ** b), np.float32(2) ** B, rtol=1e-6)


@pytest.mark.parametrize("name, fn", [("eq", np.equal), ("ne", np.not_equal), ("gt", np.greater),
                                      ("ge", np.greater_equal), ("lt", np.less), ("le", np.less_equal)])
def test_comparisons_are_ones_and_zeros_of_the_input_dtype(name, fn):
    values = np.round(A)
    a, b = tensor(values), tensor(np.round(B))
    out = getattr(ttnn, name)(a, b)
    assert out.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(held(out), fn(values, np.round(B)).astype(np.float32))
    np.testing.assert_array_equal(held(getattr(ttnn, name)(a, 0.0)), fn(values, 0).astype(np.float32))


def test_logical_ops_and_where():
    x, y = (A > 0).astype(np.float32), (B > 1.5).astype(np.float32)
    a, b = tensor(x), tensor(y)
    np.testing.assert_array_equal(held(ttnn.logical_and(a, b)), np.logical_and(x, y))
    np.testing.assert_array_equal(held(ttnn.logical_or(a, b)), np.logical_or(x, y))
    np.testing.assert_array_equal(held(ttnn.logical_xor(a, b)), np.logical_xor(x, y))
    np.testing.assert_array_equal(held(ttnn.logical_not(a)), np.logical_not(x))
    out = ttnn.where(a, tensor(A, ttnn.float32), tensor(B, ttnn.float32))
    assert out.dtype is ttnn.float32
    np.testing.assert_array_equal(held(out), np.where(x != 0, A, B))
    np.testing.assert_array_equal(held(ttnn.where(a, tensor(A, ttnn.float32), 0.0)), np.where(x != 0, A, 0))


UNARY = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
    "reciprocal": lambda x: 1 / x, "square": np.square, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh, "atan": np.arctan, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "sign": np.sign, "relu": lambda x: np.maximum(x, 0), "relu6": lambda x: np.clip(x, 0, 6),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)), "silu": lambda x: x / (1 + np.exp(-x)),
    "softsign": lambda x: x / (1 + np.abs(x)), "hardsigmoid": lambda x: np.clip(x / 6 + 0.5, 0, 1),
    "cbrt": np.cbrt, "frac": lambda x: x - np.trunc(x), "isfinite": np.isfinite,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_are_correctly_rounded_to_the_data_type(name):
    x = B if name in ("log", "log2", "log10", "sqrt", "rsqrt") else A
    a = tensor(x)
    out = getattr(ttnn, name)(a)
    with np.errstate(all="ignore"):
        expected = UNARY[name](held(a).astype(np.float64)).astype(np.float32)
    assert out.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(held(out), bf16(expected))


def test_unary_ops_with_parameters_use_tt_nn_keywords():
    a = tensor(A, ttnn.float32)
    np.testing.assert_array_equal(held(ttnn.leaky_relu(a, negative_slope=0.1)),
                                  np.where(A >= 0, A, A.astype(np.float64) * 0.1).astype(np.float32))
    np.testing.assert_array_equal(held(ttnn.clamp(a, min=-1.0, max=0.5)), np.clip(A, -1, 0.5))
    np.testing.assert_array_equal(held(ttnn.clamp(a, max=0.5)), np.minimum(A, 0.5))
    np.testing.assert_array_equal(held(ttnn.hardtanh(a, min_val=-2.0, max_val=2.0)), np.clip(A, -2, 2))
    np.testing.assert_allclose(held(ttnn.elu(a, alpha=0.5)), np.where(A > 0, A, 0.5 * np.expm1(A)), rtol=1e-6)
    np.testing.assert_array_equal(held(ttnn.round(a, decimals=1)), np.round(A.astype(np.float64), 1).astype(np.float32))
    np.testing.assert_allclose(held(ttnn.erf(a)), np.vectorize(__import__("math").erf)(A), atol=2e-7)


def test_integer_tensors_add_and_multiply_exactly():
    big = np.array([[2 ** 24 + 1, 7], [-3, 100000]], dtype=np.int32)
    a = tensor(big, ttnn.int32)
    out = ttnn.add(a, a)
    assert out.dtype is ttnn.int32
    np.testing.assert_array_equal(held(out), big.astype(np.int64) * 2)
    np.testing.assert_array_equal(held(ttnn.mul(a, 3)), big * 3)
    np.testing.assert_array_equal(held(ttnn.bitwise_and(a, 6)), big & 6)


def test_in_place_ops_write_into_their_first_tensor():
    a = tensor(A, ttnn.float32)
    assert ttnn.add_(a, 1.0) is a
    np.testing.assert_array_equal(held(a), A + np.float32(1))


# --- matrix products ----------------------------------------------------------------------------


def test_matmul_with_transposes_and_linear_with_bias():
    x = RNG.uniform(-1, 1, (32, 64)).astype(np.float32)
    w = RNG.uniform(-1, 1, (96, 64)).astype(np.float32)
    bias = RNG.uniform(-1, 1, (1, 96)).astype(np.float32)
    a, b, c = tensor(x, ttnn.float32), tensor(w, ttnn.float32), tensor(bias, ttnn.float32)
    np.testing.assert_allclose(held(ttnn.matmul(a, b, transpose_b=True)), x @ w.T, rtol=1e-5, atol=1e-5)
    out = ttnn.linear(a, b, bias=c, transpose_b=True, dtype=ttnn.bfloat16)
    assert out.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(held(out), bf16(x @ w.T + bias))


# --- reductions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name, fn", [("sum", np.sum), ("mean", np.mean), ("max", np.max), ("min", np.min),
                                      ("prod", np.prod)])
@pytest.mark.parametrize("dim, keepdim", [(-1, False), (0, True), ((0, 1), False)])
def test_reductions_over_dims(name, fn, dim, keepdim):
    x = A[:, :8]
    out = getattr(ttnn, name)(tensor(x, ttnn.float32), dim=dim, keepdim=keepdim)
    expected = np.atleast_1d(fn(x, axis=dim, keepdims=keepdim))
    assert out.dtype is ttnn.float32 and tuple(out.shape) == expected.shape
    np.testing.assert_allclose(held(out), expected, rtol=1e-6)


def test_argmax_gives_uint32_indices():
    out = ttnn.argmax(tensor(A, ttnn.float32), dim=-1)
    assert out.dtype is ttnn.uint32
    np.testing.assert_array_equal(held(out), np.argmax(A, axis=-1))
    flat = ttnn.argmax(tensor(A, ttnn.float32))
    np.testing.assert_array_equal(held(flat), [np.argmax(A)])
    np.testing.assert_array_equal(held(ttnn.argmax(tensor(A, ttnn.float32), dim=0, keepdim=True)),
                                  np.argmax(A, axis=0, keepdims=True))


def test_cumsum_along_a_dim():
    np.testing.assert_allclose(held(ttnn.cumsum(tensor(A, ttnn.float32), dim=1)), np.cumsum(A, axis=1), rtol=1e-5)


# --- sorting and indexing -------------------------------------------------------------------------


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dim", [-1, 0])
def test_sort_returns_values_and_uint16_indices_keeping_ties_in_order(descending, dim):
    x = np.round(A * 2) / 2                      # many ties
    values, indices = ttnn.sort(tensor(x), dim=dim, descending=descending)
    key = -x if descending else x
    order = np.argsort(key, axis=dim, kind="stable")
    assert values.dtype is ttnn.bfloat16 and indices.dtype is ttnn.uint16
    np.testing.assert_array_equal(held(indices), order)
    np.testing.assert_array_equal(held(values), np.take_along_axis(bf16(x), order, axis=dim))


def test_sort_of_more_than_32768_values_gives_uint32_indices():
    x = RNG.permutation(40000).astype(np.float32).reshape(1, -1)
    values, indices = ttnn.sort(tensor(x, ttnn.float32))
    assert indices.dtype is ttnn.uint32
    np.testing.assert_array_equal(held(indices), np.argsort(x, axis=-1))
    np.testing.assert_array_equal(held(values), np.sort(x, axis=-1))


def test_topk_largest_and_smallest():
    x = tensor(A, ttnn.float32)
    values, indices = ttnn.topk(x, 5)
    order = np.argsort(-A, axis=-1, kind="stable")[:, :5]
    assert indices.dtype is ttnn.uint16
    np.testing.assert_array_equal(held(indices), order)
    np.testing.assert_array_equal(held(values), np.take_along_axis(A, order, -1))
    _, low = ttnn.topk(x, 3, largest=False)
    np.testing.assert_array_equal(held(low), np.argsort(A, axis=-1, kind="stable")[:, :3])


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("index_dtype", [ttnn.uint32, ttnn.uint16])
def test_gather_follows_torch_gather(dim, index_dtype):
    x = RNG.uniform(-5, 5, (64, 64)).astype(np.float32)
    idx = RNG.integers(0, 64, (64, 32) if dim == 1 else (32, 64))
    out = ttnn.gather(tensor(x, ttnn.float32), dim=dim, index=tensor(idx, index_dtype))
    assert out.dtype is ttnn.float32 and tuple(out.shape) == idx.shape
    window = x[:idx.shape[0]] if dim == 1 else x[:, :idx.shape[1]]    # torch.gather: index may be smaller
    np.testing.assert_array_equal(held(out), np.take_along_axis(window, idx, dim))


def test_sort_then_gather_reorders_another_tensor():
    keys = RNG.integers(0, 10, (32, 128)).astype(np.float32)
    payload = RNG.uniform(-1, 1, (32, 128)).astype(np.float32)
    _, perm = ttnn.sort(tensor(keys), dim=0)
    moved = ttnn.gather(tensor(payload, ttnn.float32), dim=0, index=perm)
    np.testing.assert_array_equal(held(moved), np.take_along_axis(payload, np.argsort(keys, 0, kind="stable"), 0))


def test_gather_index_errors_name_the_users_line():
    x = tensor(A, ttnn.float32)
    with pytest.raises(LayoutError, match=r"test_ttl_host_ops.py:\d+: ttnn.gather: index must be a uint32 or uint16 tensor"):
        ttnn.gather(x, dim=1, index=tensor(np.zeros((4, 4))))
    with pytest.raises(LayoutError, match=r"index values 0..40 outside 0..39"):
        ttnn.gather(x, dim=1, index=tensor(np.array([[0, 40]] * 4), ttnn.uint32))


# --- typecast -----------------------------------------------------------------------------------


def test_typecast_to_32_bit_integers_truncates_as_the_sfpu_does():
    """Toward zero; int32 overflow, infinities and NaN are INT_MIN; uint32 clamps at 0 and 2³² − 1."""
    x = np.array([[0.4, 0.5, 1.5, 2.5, -3.0, 7.6, -2.7, 3e9, np.inf, np.nan, -np.inf, 5e9]], dtype=np.float32)
    u = ttnn.typecast(tensor(x, ttnn.float32), ttnn.uint32)
    assert u.dtype is ttnn.uint32 and held(u).dtype == np.uint32
    np.testing.assert_array_equal(held(u), [[0, 0, 1, 2, 0, 7, 0, 3000000000, 2 ** 32 - 1, 2 ** 32 - 1, 0,
                                             2 ** 32 - 1]])
    i = ttnn.typecast(tensor(x, ttnn.float32), dtype=ttnn.int32)
    np.testing.assert_array_equal(held(i), [[0, 0, 1, 2, -3, 7, -2] + [-2 ** 31] * 5])
    back = ttnn.typecast(u, ttnn.bfloat16)
    assert back.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(held(back)[0, :7], [0, 0, 1, 2, 0, 7, 0])
    np.testing.assert_array_equal(held(ttnn.typecast(tensor(A, ttnn.float32), ttnn.bfloat16)), bf16(A))


# --- shapes and creation --------------------------------------------------------------------------


def test_shape_ops_follow_numpy():
    x = RNG.uniform(-1, 1, (2, 3, 32)).astype(np.float32)
    t = tensor(x, ttnn.float32)
    np.testing.assert_array_equal(held(ttnn.permute(t, (2, 0, 1))), np.transpose(x, (2, 0, 1)))
    np.testing.assert_array_equal(held(ttnn.concat([t, t], dim=1)), np.concatenate([x, x], axis=1))
    np.testing.assert_array_equal(held(ttnn.slice(t, [0, 1, 0], [2, 3, 32], [1, 1, 2])), x[:, 1:3, ::2])
    np.testing.assert_array_equal(held(ttnn.transpose(t, 0, 2)), np.swapaxes(x, 0, 2))
    np.testing.assert_array_equal(held(ttnn.reshape(t, (6, 32))), x.reshape(6, 32))
    np.testing.assert_array_equal(held(ttnn.pad(t, [(0, 1), (0, 0)], value=2.0)),
                                  np.pad(x, [(0, 0), (0, 1), (0, 0)], constant_values=2))
    parts = ttnn.split(t, 2, dim=1)
    assert [tuple(p.shape) for p in parts] == [(2, 2, 32), (2, 1, 32)]
    np.testing.assert_array_equal(held(ttnn.expand(tensor(x[:1], ttnn.float32), (4, -1, -1))),
                                  np.broadcast_to(x[:1], (4, 3, 32)))


def test_creation_like_and_arange():
    t = tensor(A, ttnn.bfloat16, memory_config=ttnn.L1_MEMORY_CONFIG)
    full = ttnn.full_like(t, 0.1)
    assert full.dtype is ttnn.bfloat16 and full.memory_config() is ttnn.L1_MEMORY_CONFIG
    np.testing.assert_array_equal(held(full), bf16(np.full(A.shape, 0.1)))
    np.testing.assert_array_equal(held(ttnn.ones_like(t, dtype=ttnn.float32)), np.ones(A.shape))
    np.testing.assert_array_equal(held(ttnn.arange(5)), np.arange(5))
    r = ttnn.arange(2, 20, 3, dtype=ttnn.int32)
    assert r.dtype is ttnn.int32
    np.testing.assert_array_equal(held(r), np.arange(2, 20, 3))


def test_results_stay_on_the_device_and_memory_config_of_their_first_tensor():
    device = ttnn.open_device(0)
    a = tensor(A, device=device, memory_config=ttnn.L1_MEMORY_CONFIG)
    for out in (ttnn.mul(a, 2.0), ttnn.sort(a)[1], ttnn.typecast(a, ttnn.uint32), ttnn.sum(a, dim=0)):
        assert out.device() is device and out.memory_config() is ttnn.L1_MEMORY_CONFIG
        assert out.layout is ttnn.TILE_LAYOUT
    assert ttnn.exp(a, memory_config=ttnn.DRAM_MEMORY_CONFIG).memory_config() is ttnn.DRAM_MEMORY_CONFIG
    ttnn.close_device(device)


def test_a_deallocated_tensor_is_an_error_when_used():
    a = tensor(A)
    ttnn.deallocate(a)
    assert not a.is_allocated()
    with pytest.raises(LayoutError, match="deallocated"):
        ttnn.to_numpy(a)


# --- around an operation on the simulated device ------------------------------------------------


@ttl.operation(grid=(1, 1))
def add_two(a, b, y):
    """y = a + b over one block of a (32, 64) tensor."""
    a_dfb = ttl.make_dataflow_buffer_like(a, shape=(1, 2))
    b_dfb = ttl.make_dataflow_buffer_like(b, shape=(1, 2))
    y_dfb = ttl.make_dataflow_buffer_like(y, shape=(1, 2))

    @ttl.datamovement()
    def read():
        with a_dfb.reserve() as a_blk, b_dfb.reserve() as b_blk:
            ttl.copy(a[0:1, 0:2], a_blk).wait()
            ttl.copy(b[0:1, 0:2], b_blk).wait()

    @ttl.compute()
    def compute():
        with a_dfb.wait() as a_blk, b_dfb.wait() as b_blk, y_dfb.reserve() as y_blk:
            y_blk.store(a_blk + b_blk)

    @ttl.datamovement()
    def write():
        with y_dfb.wait() as y_blk:
            ttl.copy(y_blk, y[0:1, 0:2]).wait()


def test_host_sort_and_gather_feed_an_operation_and_read_its_output():
    keys = RNG.integers(0, 16, (32, 64)).astype(np.float32)
    x = RNG.uniform(-2, 2, (32, 64)).astype(np.float32)
    _, perm = ttnn.sort(tensor(keys), dim=0)
    moved = ttnn.gather(tensor(x), dim=0, index=perm)             # bfloat16, like x's tensor
    y = ttnn.zeros((32, 64), dtype=ttnn.bfloat16)
    add_two(moved, tensor(x), y)                                  # on the simulated device
    expected = bf16(np.take_along_axis(bf16(x), np.argsort(keys, 0, kind="stable"), 0) + bf16(x))
    np.testing.assert_array_equal(held(y), expected)
    # host ops read what the device wrote
    top, where_ = ttnn.max(y, dim=0), ttnn.argmax(y, dim=0)
    np.testing.assert_array_equal(held(top), expected.max(axis=0))
    np.testing.assert_array_equal(held(where_), expected.argmax(axis=0))


def test_scaled_dot_product_attention_on_the_host_matches_numpy():
    """``ttnn.transformer.scaled_dot_product_attention``: causal by default, grouped key heads."""
    rng = np.random.default_rng(11)
    q, k, v = (rng.standard_normal(shape).astype(np.float32) for shape in ((1, 4, 64, 32), (1, 2, 64, 32),
                                                                             (1, 2, 64, 32)))
    tq, tk, tv = (ttnn.from_numpy(a, dtype=ttnn.float32) for a in (q, k, v))
    for causal in (True, False):
        out = ttnn.to_numpy(ttnn.transformer.scaled_dot_product_attention(tq, tk, tv, is_causal=causal))
        kk, vv = np.repeat(k, 2, axis=1).astype(np.float64), np.repeat(v, 2, axis=1).astype(np.float64)
        scores = q @ np.swapaxes(kk, -1, -2) / np.sqrt(32)
        if causal:
            scores = np.where(np.tril(np.ones((64, 64), bool)), scores, -np.inf)
        weights = np.exp(scores - scores.max(-1, keepdims=True))
        np.testing.assert_allclose(out, weights / weights.sum(-1, keepdims=True) @ vv, rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="ttnn.transformer.flash_mla is not supported by tilefold yet"):
        ttnn.transformer.flash_mla(tq)


def test_device_only_flags_are_accepted_and_a_wrong_keyword_is_one_clear_error():
    """``fast_and_approximate_mode`` only chooses the device's approximation: the host computes exactly.
    A keyword the op does not take is an error at the user's line, not a traceback."""
    x = ttnn.from_numpy(np.linspace(-2, 2, 1024, dtype=np.float32).reshape(32, 32), dtype=ttnn.float32)
    np.testing.assert_allclose(ttnn.to_numpy(ttnn.exp(x, fast_and_approximate_mode=True)),
                               np.exp(ttnn.to_numpy(x)), rtol=1e-6)
    with pytest.raises(LayoutError, match=r"ttnn.exp: .*unexpected keyword argument 'bogus'") as raised:
        ttnn.exp(x, bogus=1)
    assert f"{__file__}:" in str(raised.value)


def test_a_host_op_given_shapes_it_cannot_combine_is_one_error_at_the_users_line():
    a = tensor(np.ones((32, 64), np.float32), ttnn.float32)
    b = tensor(np.ones((32, 48), np.float32), ttnn.float32)
    for call, wanted in ((lambda: ttnn.add(a, b), r"ttnn.add: operands could not be broadcast"),
                         (lambda: ttnn.reshape(a, (7, 5)), r"ttnn.reshape: cannot reshape")):
        with pytest.raises(LayoutError, match=wanted) as raised:
            call()
        assert f"{__file__}:" in str(raised.value)


def test_softmax_rms_norm_and_layer_norm():
    """Normalisations over the last dim as TT-NN names them, against float64 numpy; a weight of
    the wrong width is one error at the user's line."""
    x = RNG.standard_normal((2, 32, 64)).astype(np.float32)
    w = RNG.standard_normal((1, 64)).astype(np.float32)
    b = RNG.standard_normal((1, 64)).astype(np.float32)
    r = RNG.standard_normal((2, 32, 64)).astype(np.float32)
    tx, tw, tb, tr = (tensor(v, ttnn.float32) for v in (x, w, b, r))
    d = x.astype(np.float64)
    e = np.exp(d - d.max(1, keepdims=True))
    np.testing.assert_allclose(held(ttnn.softmax(tx, dim=1)), e / e.sum(1, keepdims=True), rtol=1e-6, atol=1e-7)
    s = d + r
    np.testing.assert_allclose(held(ttnn.rms_norm(tx, epsilon=1e-6, weight=tw, residual_input_tensor=tr)),
                               s / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-6) * w, rtol=1e-5, atol=1e-6)
    c = d - d.mean(-1, keepdims=True)
    np.testing.assert_allclose(held(ttnn.layer_norm(tx, epsilon=1e-5, weight=tw, bias=tb)),
                               c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b, rtol=1e-5, atol=1e-6)
    padded = np.zeros((32, 64), np.float32)
    padded[0] = w[0]                                  # a weight padded to one tile row, as TT-NN takes it
    np.testing.assert_allclose(held(ttnn.rms_norm(tx, epsilon=1e-6, weight=tensor(padded, ttnn.float32))),
                               d / np.sqrt((d * d).mean(-1, keepdims=True) + 1e-6) * w, rtol=1e-5, atol=1e-6)
    assert held(ttnn.rms_norm(tensor(x))).dtype == np.float32          # bfloat16 in, bfloat16 values out
    with pytest.raises(LayoutError, match="weight has 32 values; the last dim has 64") as raised:
        ttnn.rms_norm(tx, weight=tensor(w[:, :32], ttnn.float32))
    assert f"{__file__}:" in str(raised.value)
    assert ttnn.CloseDevice is ttnn.close_device and ttnn.CreateDevice is ttnn.open_device


def test_repeat_interleave():
    x = RNG.standard_normal((32, 64)).astype(np.float32)
    got = held(ttnn.repeat_interleave(tensor(x, ttnn.float32), 2, dim=0))
    np.testing.assert_array_equal(got, np.repeat(x, 2, axis=0))
    with pytest.raises(LayoutError, match=r"repeats=0\): give a positive int count"):
        ttnn.repeat_interleave(tensor(x, ttnn.float32), 0, dim=1)


def test_as_tensor_converts_its_preprocessed_input_like_from_numpy(tmp_path):
    """``ttnn.as_tensor`` (TT-NN's caching conversion): the tensor ``preprocess`` makes, converted as
    ``from_numpy`` / ``from_torch`` convert it; no cache file is read or written."""
    values = np.arange(32 * 64, dtype=np.float32).reshape(32, 64) / 7
    cache = tmp_path / "weights.bin"
    t = ttnn.as_tensor(values, ttnn.bfloat16, layout=ttnn.TILE_LAYOUT, cache_file_name=str(cache),
                       preprocess=lambda v: v * 2, memory_config=ttnn.DRAM_MEMORY_CONFIG)
    want = (values * 2).astype(ml_dtypes.bfloat16).astype(np.float32)
    np.testing.assert_array_equal(ttnn.to_numpy(t), want)
    assert t.dtype is ttnn.bfloat16 and t.layout is ttnn.TILE_LAYOUT and not cache.exists()


def test_embedding_picks_rows_of_the_weight_by_index():
    """``ttnn.embedding(index, weight, layout=)``: weight rows by a uint32 index tensor, in the
    weight's data type and the layout asked for; an index outside the table is one error."""
    table = np.arange(10 * 64, dtype=np.float32).reshape(10, 64) / 3
    weight = ttnn.from_numpy(table, dtype=ttnn.bfloat16, layout=ttnn.ROW_MAJOR_LAYOUT)
    index = ttnn.from_numpy(np.array([[3, 0, 9]], np.uint32), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
    out = ttnn.embedding(index, weight, layout=ttnn.TILE_LAYOUT)
    assert tuple(out.shape) == (1, 3, 64) and out.layout is ttnn.TILE_LAYOUT and out.dtype is ttnn.bfloat16
    np.testing.assert_array_equal(ttnn.to_numpy(out)[0], ttnn.to_numpy(weight)[[3, 0, 9]])
    bad = ttnn.from_numpy(np.array([[10]], np.uint32), dtype=ttnn.uint32, layout=ttnn.ROW_MAJOR_LAYOUT)
    with pytest.raises(LayoutError, match="indices 10..10 outside the 10 rows"):
        ttnn.embedding(bad, weight)


def test_copy_writes_the_first_tensor_into_the_second_in_its_data_type():
    values = np.linspace(-3, 3, 32 * 32, dtype=np.float32).reshape(32, 32)
    a = ttnn.from_numpy(values, dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT)
    b = ttnn.from_numpy(np.zeros_like(values), dtype=ttnn.bfloat16, layout=ttnn.TILE_LAYOUT)
    assert ttnn.copy(a, b) is b
    np.testing.assert_array_equal(ttnn.to_numpy(b), values.astype(ml_dtypes.bfloat16).astype(np.float32))
    with pytest.raises(LayoutError, match=r"ttnn.copy\(output_tensor=...\): the result is 32x32 but output_tensor is 32x64"):
        ttnn.copy(a, ttnn.from_numpy(np.zeros((32, 64), np.float32), dtype=ttnn.float32, layout=ttnn.TILE_LAYOUT))


def _squared(fidelity):
    @ttl.operation(grid=(1, 1), math_fidelity=fidelity)
    def squared(x, y):
        a = ttl.make_dataflow_buffer_like(x, shape=(1, 1), block_count=2)
        b = ttl.make_dataflow_buffer_like(y, shape=(1, 1), block_count=2)

        @ttl.datamovement()
        def read():
            with a.reserve() as blk:
                ttl.copy(x[0, 0], blk).wait()

        @ttl.compute()
        def compute():
            with a.wait() as i, b.reserve() as o:
                o.store(i @ i)

        @ttl.datamovement()
        def write():
            with b.wait() as blk:
                ttl.copy(blk, y[0, 0]).wait()

    return squared


def test_ttnn_compute_kernel_configs_and_math_fidelity_values():
    """``ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, ...)`` as a host op's
    ``compute_kernel_config=`` (the host computes exactly), ``init_device_compute_kernel_config``,
    and a ``ttnn.MathFidelity`` value as ``@ttl.operation(math_fidelity=...)``."""
    from ttl_helpers import compiled

    ones = tensor(np.ones((32, 32)))
    config = ttnn.WormholeComputeKernelConfig(math_fidelity=ttnn.MathFidelity.HiFi4, fp32_dest_acc_en=True)
    np.testing.assert_array_equal(held(ttnn.matmul(ones, ones, compute_kernel_config=config)), 32.0)
    device_config = ttnn.init_device_compute_kernel_config(None, math_fidelity=ttnn.MathFidelity.HiFi2)
    assert device_config.math_fidelity is ttnn.MathFidelity.HiFi2 and device_config.math_approx_mode
    program = compiled(_squared(ttnn.MathFidelity.HiFi2), ones, tensor(np.zeros((32, 32)))).program
    assert next(k for k in program.kernels if k.is_compute).config.math_fidelity == "HiFi2"


def test_integer_arithmetic_wraps_around_as_the_device_computes_it():
    """int32 / uint32 add, multiply, subtract and shifts wrap to the format's width (two's
    complement), as the device's integer SFPU ops do; they do not saturate."""
    m = tensor(np.array([[2147483647, 65536]], np.int32), dtype=ttnn.int32)
    assert held(ttnn.add(m, 1)).tolist() == [[-2147483648, 65537]]
    assert held(ttnn.multiply(m, 65536)).tolist() == [[-65536, 0]]
    assert held(ttnn.bitwise_left_shift(m, 2)).tolist() == [[-4, 262144]]
    u, v = (tensor(np.array([[x]], np.uint32), dtype=ttnn.uint32) for x in (3, 5))
    assert held(ttnn.subtract(u, v)).tolist() == [[4294967294]]


def test_integer_division_is_float_unless_rounded_and_a_zero_divisor_warns_nothing():
    """Two int32 tensors divide to float32 (the device's div_int32); round_mode "trunc" / "floor"
    keep int32 quotients, as torch.div's."""
    import warnings

    a = tensor(np.array([[7, -7, 5, 9, 3]], np.int32), dtype=ttnn.int32)
    b = tensor(np.array([[2, 2, 2, 2, 2]], np.int32), dtype=ttnn.int32)
    q = ttnn.divide(a, b)
    assert q.dtype == ttnn.float32 and held(q).tolist() == [[3.5, -3.5, 2.5, 4.5, 1.5]]
    assert held(ttnn.divide(a, b, round_mode="trunc")).tolist() == [[3, -3, 2, 4, 1]]
    assert held(ttnn.divide(a, b, round_mode="floor")).tolist() == [[3, -4, 2, 4, 1]]
    zero = tensor(np.zeros((1, 5), np.int32), dtype=ttnn.int32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert held(ttnn.remainder(a, zero)).tolist() == [[0] * 5]


def test_erf_of_small_arguments_keeps_its_digits():
    import math

    x = np.array([[1e-30, 1e-8, 1e-4, 0.3, -0.45, 2.0]], np.float32)
    got = held(ttnn.erf(tensor(x, dtype=ttnn.float32)))
    want = np.array([[math.erf(float(v)) for v in x[0]]])
    np.testing.assert_allclose(got, want, rtol=2e-7, atol=0)


def test_tensor_operators_compare_values_and_combine_bits_as_tt_nn_binds_them():
    a = tensor(np.array([[6, 3, -1]], np.int32), dtype=ttnn.int32)
    b = tensor(np.array([[6, 1, 2]], np.int32), dtype=ttnn.int32)
    assert held(a == b).tolist() == [[1, 0, 0]] and held(a != b).tolist() == [[0, 1, 1]]
    assert held(a & b).tolist() == [[6, 1, 2]] and held(a | b).tolist() == [[6, 3, -1]]
    assert held(~a).tolist() == [[-7, -4, 0]] and held(a << 1).tolist() == [[12, 6, -2]]
    assert {a: "a"}[a] == "a"            # still hashable, by identity


@pytest.mark.parametrize("call, message", [
    (lambda t: ttnn.exp(t, where=False), "ttnn.exp: got an unexpected keyword argument 'where'"),
    (lambda t: ttnn.split(t, 0, dim=1), r"ttnn.split\(split_size=0\): give a positive piece size"),
    (lambda t: ttnn.split(t, [3, 3], dim=1), "must be non-negative and add up to 8"),
    (lambda t: ttnn.chunk(t, 0, dim=1), r"ttnn.chunk\(chunks=0\): give a positive number of pieces"),
    (lambda t: ttnn.squeeze(t, 5), r"ttnn.squeeze\(dim=5\): a 2-D tensor has dims -2..1"),
    (lambda t: t[5], r"tensor\[5\] of a tensor of shape \[1, 8\]: index 5 is out of bounds"),
    (lambda t: ttnn.add_(t, tensor(np.ones((3, 8), np.float32))), "an in-place op keeps its tensor's shape"),
])
def test_a_wrong_argument_of_a_host_op_is_one_error_at_the_line(call, message):
    t = tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8))
    with pytest.raises(LayoutError, match=message) as err:
        call(t)
    assert err.value.location.file == __file__


def test_dtype_of_a_unary_op_is_its_result_s():
    t = tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(1, 8))
    for op in (ttnn.exp, ttnn.relu, ttnn.sqrt):
        assert op(ttnn.abs(t), dtype=ttnn.float32).dtype == ttnn.float32


def test_gated_units_triangles_outer_and_prelu_against_numpy():
    x = RNG.standard_normal((1, 4, 8, 16)).astype(np.float32)
    t = tensor(x, dtype=ttnn.float32)
    a, g = np.split(x.astype(np.float64), 2, axis=-1)
    sigmoid = 1 / (1 + np.exp(-g))
    for name, gated in (("glu", a * sigmoid), ("reglu", a * np.maximum(g, 0)), ("swiglu", a * g * sigmoid)):
        np.testing.assert_allclose(held(getattr(ttnn, name)(t)), gated, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(held(ttnn.tril(t, diagonal=1)), np.tril(x, 1))
    np.testing.assert_array_equal(held(ttnn.triu(t)), np.triu(x))
    slopes = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    np.testing.assert_allclose(held(ttnn.prelu(t, tensor(slopes, dtype=ttnn.float32))),
                               np.where(x >= 0, x, x * slopes[None, :, None, None]), rtol=1e-7)
    column = tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 4, 1), dtype=ttnn.float32)
    row = tensor(np.arange(3, dtype=np.float32).reshape(1, 1, 1, 3), dtype=ttnn.float32)
    assert held(ttnn.outer(column, row)).tolist() == [[np.outer(np.arange(4), np.arange(3)).tolist()]]
    assert held(ttnn.fill(t, 2.5)).tolist() == np.full(x.shape, 2.5).tolist()
    with ttnn.manage_device(device_id=0) as device:
        assert ttnn.from_numpy(x, dtype=ttnn.float32, device=device).device() is device
