"""TT-NN's KV-cache operations on the host: ``ttnn.update_cache`` / ``ttnn.fill_cache`` and
``ttnn.experimental.paged_update_cache`` / ``paged_fill_cache``.

Reads: the cache's and the input's host values (:class:`tilefold.ttnn_ops.Value`), the positions
(ints, lists or integer tensors) and a page table. Writes: the cache's new values; each operation
works in place, so :mod:`tilefold.ttnn` stores them into the cache tensor, rounded to its data type
(a bfloat8_b cache is packed again, as the device repacks the tiles it updates).

A cache is (users, heads, positions, head dim); a paged cache is (blocks, heads, block size, head
dim), a user's position ``p`` lying in block ``page_table[user, p // block_size]`` at row
``p % block_size``.
"""

from __future__ import annotations

import numpy as np

from tilefold.ttnn_ops import Value, fail, op


def _dims(shape) -> str:
    return "x".join(map(str, shape))


def _four_d(name: str, what: str, v) -> np.ndarray:
    if not isinstance(v, Value):
        raise fail(f"ttnn.{name}: the {what} must be a ttnn tensor, not {type(v).__name__}")
    if v.values.ndim != 4:
        raise fail(f"ttnn.{name}: the {what} must be 4-D, not {v.values.ndim}-D "
                   f"({_dims(v.values.shape)})")
    return v.values


def _index(name: str, what: str, value, bound: int) -> int:
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or not 0 <= value < bound:
        raise fail(f"ttnn.{name}: {what} {value!r} lies outside 0..{bound - 1}")
    return int(value)


def _positions(name: str, update_idxs, update_idxs_tensor, users: int) -> np.ndarray:
    """Each user's position; -1 (0xFFFFFFFF as uint32) leaves the user out."""
    if update_idxs_tensor is not None:
        if not isinstance(update_idxs_tensor, Value) or not update_idxs_tensor.is_int:
            raise fail(f"ttnn.{name}(update_idxs_tensor=...): give an int32 tensor of positions, one per user")
        positions = update_idxs_tensor.values.astype(np.int64).ravel()
    else:
        positions = np.asarray(list(update_idxs), dtype=np.int64)
    if len(positions) != users:
        raise fail(f"ttnn.{name}: the input holds {users} users but {len(positions)} positions are given "
                   "(update_idxs= or update_idxs_tensor=); give one per user")
    return np.where(positions >= 2 ** 31, -1, positions)


def _paged_rows(name: str, page_table, block_size: int, users: np.ndarray, positions: np.ndarray,
                blocks: int) -> tuple[np.ndarray, np.ndarray]:
    """The (block, row) of each (user, position) through ``page_table``."""
    if not isinstance(page_table, Value) or not page_table.is_int or page_table.values.ndim != 2:
        raise fail(f"ttnn.{name}(page_table=...): give an int32 tensor of (users, blocks per user)")
    table = page_table.values.astype(np.int64)
    if users.size and users.max() >= table.shape[0]:
        raise fail(f"ttnn.{name}: user {int(users.max())} has no row in the {table.shape[0]}-row page table")
    columns = positions // block_size
    if columns.size and columns.max() >= table.shape[1]:
        raise fail(f"ttnn.{name}: position {int(positions.max())} lies past the page table's "
                   f"{table.shape[1]} blocks of {block_size} rows")
    block = table[users, columns]
    if block.size and (block.min() < 0 or block.max() >= blocks):
        raise fail(f"ttnn.{name}: the page table names block {int(block.max() if block.max() >= blocks else block.min())}"
                   f" but the cache has blocks 0..{blocks - 1}")
    return block, positions % block_size


def _cache_view(name: str, cache: np.ndarray, heads: int, block_size: int, head_dim: int) -> np.ndarray:
    """The cache as (blocks, heads, block size, head dim): TT-NN lets a caller read one buffer with
    another (block size, head dim) of equal size per block."""
    per_block = cache[0].size if len(cache) else 0
    if heads * block_size * head_dim != per_block:
        raise fail(f"ttnn.{name}: {heads} heads x {block_size} rows x {head_dim} values do not make the cache's "
                   f"{_dims(cache.shape[1:])} values per block; block_size= and num_kv_heads= must "
                   "keep its size")
    return cache.reshape(len(cache), heads, block_size, head_dim)


@op(inplace=("update_cache", "update_cache_for_token_"))
def update_cache(cache: Value, input: Value, update_idx, batch_offset: int = 0, **_) -> Value:  # noqa: A002
    """``ttnn.update_cache(cache, input, update_idx, batch_offset=0)``: the token ``input``
    (1, heads, batch, head dim; batch padded to 32) written at position ``update_idx`` of every user
    ``b`` of ``cache``, from the input's row ``batch_offset + b``."""
    name = "update_cache"
    c, x = _four_d(name, "cache", cache), _four_d(name, "input", input)
    users, heads, length, head_dim = c.shape
    if x.shape[1] != heads or x.shape[3] != head_dim:
        raise fail(f"ttnn.{name}: the input is {_dims(x.shape)} but the cache holds {heads} heads of "
                   f"{head_dim} values; give (1, {heads}, batch, {head_dim})")
    position = _index(name, "update_idx", update_idx, length)
    if not 0 <= batch_offset or batch_offset + users > x.shape[2]:
        raise fail(f"ttnn.{name}: the cache's {users} users from input row {batch_offset} need {batch_offset + users} "
                   f"rows but the input has {x.shape[2]}")
    out = c.copy()
    out[:, :, position, :] = x[0, :, batch_offset:batch_offset + users, :].transpose(1, 0, 2)
    return Value(out, cache.dtype)


@op(inplace=("fill_cache", "fill_cache_for_user_"))
def fill_cache(cache: Value, input: Value, batch_idx, **_) -> Value:  # noqa: A002
    """``ttnn.fill_cache(cache, input, batch_idx)``: user ``batch_idx``'s first positions set to
    ``input`` (1, heads, sequence, head dim)."""
    name = "fill_cache"
    c, x = _four_d(name, "cache", cache), _four_d(name, "input", input)
    user = _index(name, "batch_idx", batch_idx, c.shape[0])
    if x.shape[0] != 1 or x.shape[1] != c.shape[1] or x.shape[3] != c.shape[3] or x.shape[2] > c.shape[2]:
        raise fail(f"ttnn.{name}: the input is {_dims(x.shape)}; give (1, {c.shape[1]}, at most "
                   f"{c.shape[2]}, {c.shape[3]}) for the cache {_dims(c.shape)}")
    out = c.copy()
    out[user, :, :x.shape[2], :] = x[0]
    return Value(out, cache.dtype)


@op(inplace=("experimental.paged_update_cache",))
def paged_update_cache(cache_tensor: Value, input_tensor: Value, *, update_idxs=(), update_idxs_tensor=None,
                       share_cache=None, page_table=None, batch_offset: int = 0, mesh_coords=None, block_size=None,
                       num_kv_heads=None, cache_position_modulo=None, **_) -> Value:
    """``ttnn.experimental.paged_update_cache(cache, input, update_idxs=[...] or
    update_idxs_tensor=t, page_table=None)``: each user ``u`` of ``input`` (1, users, heads padded to
    32, head dim) writes its token at its position of ``cache`` — user ``batch_offset + u`` of a
    plain cache (user 0 with ``share_cache``), or the block and row ``page_table`` gives."""
    name = "experimental.paged_update_cache"
    if mesh_coords is not None:
        raise fail(f"ttnn.{name}(mesh_coords=...) is not supported by tilefold yet; update every chip's cache")
    c, x = _four_d(name, "cache", cache_tensor), _four_d(name, "input", input_tensor)
    heads = int(num_kv_heads) if num_kv_heads is not None else c.shape[1]
    head_dim = x.shape[3]
    rows = int(block_size) if block_size is not None else c.shape[2]
    view = _cache_view(name, c.copy(), heads, rows, head_dim)
    if x.shape[0] != 1 or x.shape[2] < heads:
        raise fail(f"ttnn.{name}: the input is {_dims(x.shape)}; give (1, users, {heads} heads or "
                   f"more, {head_dim})")
    positions = _positions(name, update_idxs, update_idxs_tensor, x.shape[1])
    users = np.flatnonzero(positions >= 0)
    positions = positions[users]
    if page_table is not None:
        if cache_position_modulo is not None:
            positions = positions % int(cache_position_modulo)
        block, row = _paged_rows(name, page_table, rows, users, positions, len(view))
    else:
        if cache_position_modulo is not None:
            raise fail(f"ttnn.{name}(cache_position_modulo=...) applies to a paged cache; give page_table= too")
        block = np.zeros_like(users) if share_cache else users + int(batch_offset)
        if block.size and block.max() >= len(view):
            raise fail(f"ttnn.{name}: user {int(block.max())} has no place in a cache of {len(view)} users")
        if positions.size and positions.max() >= rows:
            raise fail(f"ttnn.{name}: position {int(positions.max())} lies past the cache's {rows} positions")
        row = positions
    view[block, :, row, :] = x[0, users, :heads, :]
    return Value(view.reshape(c.shape), cache_tensor.dtype)


@op(inplace=("experimental.paged_fill_cache",))
def paged_fill_cache(cache_tensor: Value, input_tensor: Value, page_table: Value, *, batch_idx_tensor=None,
                     batch_idx: int = 0, mesh_coords=None, block_size=None, cache_position_modulo=None,
                     **_) -> Value:
    """``ttnn.experimental.paged_fill_cache(cache, input, page_table, batch_idx=0 or
    batch_idx_tensor=t)``: each row ``r`` of ``input`` (rows, heads, sequence, head dim) fills the
    first positions of its user (``batch_idx``, or ``batch_idx_tensor[r]``) through the page table;
    with ``cache_position_modulo`` the positions wrap and the last ones stay."""
    name = "experimental.paged_fill_cache"
    if mesh_coords is not None:
        raise fail(f"ttnn.{name}(mesh_coords=...) is not supported by tilefold yet; fill every chip's cache")
    c, x = _four_d(name, "cache", cache_tensor), _four_d(name, "input", input_tensor)
    rows = int(block_size) if block_size is not None else c.shape[2]
    view = _cache_view(name, c.copy(), x.shape[1], rows, x.shape[3])
    if batch_idx_tensor is not None:
        if not isinstance(batch_idx_tensor, Value) or not batch_idx_tensor.is_int:
            raise fail(f"ttnn.{name}(batch_idx_tensor=...): give an int32 tensor of users, one per input row")
        owners = batch_idx_tensor.values.astype(np.int64).ravel()
        if len(owners) != x.shape[0]:
            raise fail(f"ttnn.{name}: the input has {x.shape[0]} rows but batch_idx_tensor names {len(owners)} users")
    else:
        if x.shape[0] != 1:
            raise fail(f"ttnn.{name}: an input of {x.shape[0]} rows needs batch_idx_tensor= (one user per row)")
        owners = np.array([batch_idx], dtype=np.int64)
    sequence = np.arange(x.shape[2])
    if cache_position_modulo is not None:
        sequence = sequence[max(0, x.shape[2] - int(cache_position_modulo)):]    # the last ones survive
    positions = sequence % int(cache_position_modulo) if cache_position_modulo is not None else sequence
    for r, owner in enumerate(owners):
        block, row = _paged_rows(name, page_table, rows, np.full_like(positions, owner), positions, len(view))
        view[block, :, row, :] = x[r][:, sequence, :].transpose(1, 0, 2)
    return Value(view.reshape(c.shape), cache_tensor.dtype)
