"""TT-NN's KV-cache operations (tilefold.ttnn_cache_ops) against numpy: each writes into its cache
tensor, a paged cache through its page table, positions of -1 leave a user out, a bfloat8_b cache
is packed again, and a wrong shape or position is one error."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import tilefold.ttnn as ttnn
from tilefold.errors import LayoutError

RNG = np.random.default_rng(11)
USERS, HEADS, LENGTH, DIM = 4, 1, 64, 64


def bf16(values) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


def tiled(values, dtype=ttnn.bfloat16):
    return ttnn.from_numpy(np.asarray(values, np.float32), dtype=dtype, layout=ttnn.TILE_LAYOUT)


def ints(values):
    return ttnn.from_numpy(np.asarray(values, np.int32), dtype=ttnn.int32, layout=ttnn.ROW_MAJOR_LAYOUT)


def test_paged_update_cache_writes_each_users_token_at_its_position():
    cache = bf16(RNG.normal(size=(USERS, HEADS, LENGTH, DIM)))
    token = bf16(RNG.normal(size=(1, USERS, 32, DIM)))        # heads padded to 32, as TT-NN lays it out
    positions = [3, -1, 17, 63]
    c = tiled(cache)
    assert ttnn.experimental.paged_update_cache(c, tiled(token), update_idxs_tensor=ints(positions)) is c
    want = cache.copy()
    for user, p in enumerate(positions):
        if p >= 0:
            want[user, :, p, :] = token[0, user, :HEADS, :]
    np.testing.assert_array_equal(ttnn.to_numpy(c), want)
    shared = tiled(cache[:1])            # share_cache: every user writes the one cache
    ttnn.experimental.paged_update_cache(shared, tiled(token), update_idxs=[1, 2, 3, 4], share_cache=True)
    got = ttnn.to_numpy(shared)
    for user in range(USERS):
        np.testing.assert_array_equal(got[0, :, user + 1, :], token[0, user, :HEADS, :])


def test_paged_update_and_fill_go_through_the_page_table():
    blocks, rows = 8, 32
    cache = np.zeros((blocks, HEADS, rows, DIM), np.float32)
    table = np.array([[5, 2], [0, 7], [1, 3], [4, 6]], np.int32)
    token = bf16(RNG.normal(size=(1, USERS, 32, DIM)))
    c = tiled(cache)
    positions = [3, 40, 33, 0]
    ttnn.experimental.paged_update_cache(c, tiled(token), update_idxs=positions, page_table=ints(table))
    want = cache.copy()
    for user, p in enumerate(positions):
        want[table[user, p // rows], :, p % rows, :] = token[0, user, :HEADS, :]
    np.testing.assert_array_equal(ttnn.to_numpy(c), want)
    prefill = bf16(RNG.normal(size=(1, HEADS, 48, DIM)))
    ttnn.experimental.paged_fill_cache(c, tiled(prefill), ints(table), batch_idx=2)
    for t in range(48):
        want[table[2, t // rows], :, t % rows, :] = prefill[0, :, t, :]
    np.testing.assert_array_equal(ttnn.to_numpy(c), want)
    wrapped = tiled(cache)               # a window of 32 positions: the last 32 of 48 stay
    ttnn.experimental.paged_fill_cache(wrapped, tiled(prefill), ints(table), batch_idx=0, cache_position_modulo=32)
    window = ttnn.to_numpy(wrapped)
    for t in range(16, 48):
        np.testing.assert_array_equal(window[table[0, 0], :, t % 32, :], prefill[0, :, t, :])
    with pytest.raises(LayoutError, match="the page table names block 9 but the cache has blocks 0..7"):
        ttnn.experimental.paged_update_cache(c, tiled(token), update_idxs=[0, 0, 0, 0],
                                             page_table=ints(np.full((4, 2), 9)))


def test_update_cache_and_fill_cache():
    cache = np.zeros((USERS, HEADS, LENGTH, DIM), np.float32)
    c = tiled(cache)
    token = bf16(RNG.normal(size=(1, HEADS, 32, DIM)))       # (1, heads, batch padded to 32, dim)
    ttnn.update_cache(c, tiled(token), 5, batch_offset=2)
    want = cache.copy()
    want[:, :, 5, :] = token[0, :, 2:2 + USERS, :].transpose(1, 0, 2)
    prefill = bf16(RNG.normal(size=(1, HEADS, 40, DIM)))
    ttnn.fill_cache(c, tiled(prefill), 1)
    want[1, :, :40, :] = prefill[0]
    np.testing.assert_array_equal(ttnn.to_numpy(c), want)
    with pytest.raises(LayoutError, match=r"update_idx 64 lies outside 0..63"):
        ttnn.update_cache(c, tiled(token), 64)


def test_a_bfloat8_cache_is_packed_again_and_fused_updates_both_caches():
    cache = bf16(RNG.normal(size=(USERS, HEADS, LENGTH, DIM)))
    token = bf16(RNG.normal(size=(1, USERS, 32, DIM)) * 100)
    k, v = tiled(cache, ttnn.bfloat8_b), tiled(cache, ttnn.bfloat8_b)
    got_k, got_v = ttnn.experimental.paged_fused_update_cache(k, tiled(token), v, tiled(token), update_idxs=[0] * USERS)
    assert got_k is k and got_v is v
    want = cache.copy()
    want[:, :, 0, :] = token[0, :, :HEADS, :]
    expected = ttnn.to_numpy(tiled(want, ttnn.bfloat8_b))    # the updated tiles packed as bfloat8_b
    np.testing.assert_array_equal(ttnn.to_numpy(k), expected)
    np.testing.assert_array_equal(ttnn.to_numpy(v), expected)
    with pytest.raises(LayoutError, match="the input holds 4 users but 2 positions are given"):
        ttnn.experimental.paged_update_cache(k, tiled(token), update_idxs=[1, 2])
