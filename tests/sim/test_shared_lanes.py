"""Lanes (cores) whose CB pages hold the same bytes share one unpacked operand matrix, and shared
operands are multiplied as one product over all pairs: the per-lane results must be exactly the
per-lane products, whichever lanes share, and bytes that differ anywhere must never be shared."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tilefold.pykernel import *  # noqa: F403
from tilefold.sim.matmul_blocks import LaneProducts, distinct_lanes

from simhelpers import A, B, OUT


def test_grid_rows_share_and_every_lane_maps_to_its_own_bytes():
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 256, (4, 8, 2048), dtype=np.uint8)
    raw = rows[np.repeat(np.arange(4), 4)]              # 16 lanes, 4 per distinct content
    first, lanes = distinct_lanes(raw)
    assert len(first) == 4
    assert all(np.array_equal(raw[lane], raw[first[lanes[lane]]]) for lane in range(16))


def test_a_single_differing_byte_outside_the_sample_is_not_shared():
    raw = np.zeros((8, 4, 2048), np.uint8)
    raw[5, 3, 2047 - 9] = 1                             # one byte of one lane, between sampled words
    first, lanes = distinct_lanes(raw)
    assert len(first) == 2
    assert lanes[5] != lanes[0] and all(lanes[i] == lanes[0] for i in range(8) if i != 5)


def test_mostly_distinct_lanes_are_not_grouped():
    raw = np.random.default_rng(1).integers(0, 256, (8, 2, 2048), dtype=np.uint8)
    raw[1] = raw[0]
    assert distinct_lanes(raw) is None
    assert distinct_lanes(raw[:2]) is None              # too few lanes to be worth it


def _ints(rng, shape):
    return rng.integers(-8, 8, shape).astype(np.float32)   # exact in float32 whatever the order


@pytest.mark.parametrize("share", ["both", "both_short_k", "both_column_major", "lhs", "rhs", "none", "sparse"])
def test_lane_products_are_the_per_lane_products(share):
    rng = np.random.default_rng(2)
    lanes = 12
    lhs = _ints(rng, (3 if share in ("both", "lhs") else lanes, 64, 96))
    rhs = _ints(rng, (4 if share in ("both", "rhs") else lanes, 96, 32))
    ga = np.arange(lanes) // 4 if share in ("both", "lhs") else None     # rows of a 3×4 grid
    gb = np.arange(lanes) % 4 if share in ("both", "rhs") else None      # columns
    if share == "both_short_k":                         # each lane's product computed in place
        lhs, rhs = _ints(rng, (3, 64, 32)), _ints(rng, (4, 32, 64))
        ga, gb = np.arange(lanes) // 4, np.arange(lanes) % 4
    if share == "both_column_major":                    # lanes walk the grid down its columns
        lhs, rhs = _ints(rng, (3, 64, 96)), _ints(rng, (4, 96, 32))
        ga, gb = np.arange(lanes) % 3, np.arange(lanes) // 3
    if share == "sparse":                               # 12 lanes using few of 144 pairs
        lhs, rhs = _ints(rng, (12, 64, 96)), _ints(rng, (12, 96, 32))
        ga, gb = np.arange(lanes), (np.arange(lanes) * 5) % 12
    products = LaneProducts(lhs, ga, rhs, gb)
    # lanes that are the operand pairs in row-major order get (lhs, rhs, rows, cols) views
    assert products.in_grid == (share == "both")

    def per_lane(block):
        return block.reshape(lanes, *block.shape[-2:])

    out = per_lane(products.block())
    np.testing.assert_array_equal(per_lane(products.block(slice(32, 64), slice(0, 32))), out[:, 32:64, :32])
    for lane in range(lanes):
        a = lhs[lane if ga is None else ga[lane]]
        b = rhs[lane if gb is None else gb[lane]]
        np.testing.assert_array_equal(out[lane], a @ b)


# -- content records: lanes known to hold the same bytes without comparing them ---------------------


def _memory():
    from tilefold.sim.memory import ByteMemory

    return ByteMemory(8, 4096, base=0x1000)


def test_a_content_record_answers_for_its_rows_within_its_range():
    mem = _memory()
    mem.note_same_content(0x1400, 0x1800, np.arange(8), np.array([0, 0, 1, 1, 2, 2, 3, 3]))
    assert mem.same_content(np.array([2, 3, 7]), 0x1400, 0x1800).tolist() == [1, 1, 3]
    assert mem.same_content(np.arange(8), 0x1500, 0x1600).tolist() == [0, 0, 1, 1, 2, 2, 3, 3]
    assert mem.same_content(np.arange(8), 0x1300, 0x1600) is None          # beyond the record
    mem.release()


def test_rows_outside_a_record_are_not_answered():
    mem = _memory()
    mem.note_same_content(0x1400, 0x1800, np.array([4, 5, 6, 7]), np.array([0, 0, 0, 0]))
    assert mem.same_content(np.array([3, 4]), 0x1400, 0x1800) is None
    mem.release()


@pytest.mark.parametrize("write", ["one_row", "per_lane_addresses", "view", "u32", "add_u32"])
def test_any_write_overlapping_a_record_deletes_it(write):
    mem = _memory()
    mem.note_same_content(0x1400, 0x1800, np.arange(8), np.zeros(8, np.int64))
    if write == "one_row":                               # one byte of one row at the range's end
        mem.write(np.array([6]), 0x17ff, np.ones((1, 1), np.uint8))
    elif write == "per_lane_addresses":
        mem.write(np.array([0, 1]), np.array([0x1000, 0x1500]), np.ones((2, 16), np.uint8))
    elif write == "view":
        mem.view(slice(0, 8), 0x13f0, 32)
    elif write == "u32":
        mem.write_u32(np.array([3]), 0x1600, 7)
    else:
        mem.add_u32(np.array([3]), 0x1600, 7)
    assert mem.same_content(np.arange(8), 0x1400, 0x1800) is None
    mem.release()


def test_writes_next_to_a_record_keep_it():
    mem = _memory()
    mem.note_same_content(0x1400, 0x1800, np.arange(8), np.zeros(8, np.int64))
    mem.write(np.arange(8), 0x1800, np.ones((8, 64), np.uint8))
    mem.write(np.arange(8), 0x13c0, np.ones((8, 64), np.uint8))
    assert mem.same_content(np.arange(8), 0x1400, 0x1800) is not None
    mem.release()


# -- shared writes: a few byte strings for many rows, copied in only when something needs the rows


def _shared(mem, lo=0x1400, n=0x400, rows=np.arange(8), content=np.array([0, 0, 1, 1, 0, 1, 1, 0]), seed=3):
    sources = np.random.default_rng(seed).integers(0, 256, (int(content.max()) + 1, n), dtype=np.uint8)
    mem.write_shared(lo, rows, content, sources)
    return sources[content]                               # what each row must now hold


def test_a_shared_write_hands_its_strings_to_content_aware_readers():
    mem = _memory()
    expected = _shared(mem)
    sources, content = mem.shared_bytes(np.array([7, 2, 3]), 0x1500, 0x1600)
    assert content.tolist() == [0, 1, 1]
    np.testing.assert_array_equal(sources[content], expected[[7, 2, 3], 0x100:0x200])
    assert mem.same_content(np.arange(8), 0x1400, 0x1800).tolist() == [0, 0, 1, 1, 0, 1, 1, 0]
    assert mem.shared_bytes(np.arange(8), 0x1300, 0x1500) is None        # beyond its range
    mem.release()


def test_reading_a_shared_write_copies_it_in_and_keeps_its_record():
    mem = _memory()
    expected = _shared(mem)
    np.testing.assert_array_equal(mem.read(slice(0, 8), 0x1400, 0x400), expected)
    assert mem.shared_bytes(np.arange(8), 0x1400, 0x1800) is None         # the rows hold the bytes now
    assert mem.same_content(np.arange(8), 0x1400, 0x1800).tolist() == [0, 0, 1, 1, 0, 1, 1, 0]
    mem.release()


@pytest.mark.parametrize("write", ["one_row", "view", "u32", "add_u32", "overlapping_shared"])
def test_a_partial_write_over_a_shared_write_keeps_the_rest_of_its_bytes(write):
    mem = _memory()
    expected = _shared(mem)
    if write == "one_row":
        mem.write(np.array([6]), 0x17ff, np.full((1, 1), 7, np.uint8))
        expected[6, -1] = 7
    elif write == "view":
        mem.view(slice(0, 8), 0x13f0, 32)[:, 16:] = 9
        expected[:, :16] = 9
    elif write == "u32":
        mem.write_u32(np.array([3]), 0x1600, 7)
        expected[3, 0x200:0x204] = [7, 0, 0, 0]
    elif write == "add_u32":
        before = int(expected[3, 0x200:0x204].view(np.uint32)[0])
        mem.add_u32(np.array([3]), 0x1600, 7)
        expected[3, 0x200:0x204] = np.array([(before + 7) % (1 << 32)], np.uint32).view(np.uint8)
    else:                                                  # a second shared write over half of it
        later = _shared(mem, lo=0x1600, n=0x400, seed=4)
        expected[:, 0x200:] = later[:, :0x200]
    assert mem.same_content(np.arange(8), 0x1400, 0x1800) is None
    np.testing.assert_array_equal(mem.read(slice(0, 8), 0x1400, 0x400), expected)
    mem.release()


def test_a_shared_write_over_another_replaces_it():
    mem = _memory()
    _shared(mem, seed=3)
    expected = _shared(mem, content=np.array([1, 0, 1, 0, 1, 0, 1, 0]), seed=5)
    np.testing.assert_array_equal(mem.read(slice(0, 8), 0x1400, 0x400), expected)
    mem.release()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["write", "shared", "read", "view", "add_u32"]),
                          st.integers(0, 15), st.integers(1, 8), st.integers(0, 2 ** 16)), min_size=1, max_size=12))
def test_any_sequence_of_accesses_reads_what_was_written(ops):
    # a ByteMemory with shared writes against a plain array: every read agrees
    from tilefold.sim.memory import ByteMemory

    mem, plain = ByteMemory(6, 1024, base=0x100), np.zeros((6, 1024), np.uint8)
    for kind, at, length, seed in ops:
        rng = np.random.default_rng(seed)
        lo, n = at * 64, min(length * 64, 1024 - at * 64)
        rows = np.sort(rng.choice(6, int(rng.integers(1, 7)), replace=False))
        if kind == "write":
            data = rng.integers(0, 256, (len(rows), n), dtype=np.uint8)
            mem.write(rows, 0x100 + lo, data)
            plain[rows, lo:lo + n] = data
        elif kind == "shared":
            content = rng.integers(0, 2, len(rows))
            sources = rng.integers(0, 256, (2, n), dtype=np.uint8)
            mem.write_shared(0x100 + lo, rows, content, sources)
            plain[rows, lo:lo + n] = sources[content]
        elif kind == "read":
            held = mem.shared_bytes(rows, 0x100 + lo, 0x100 + lo + n)
            if held is not None:
                np.testing.assert_array_equal(held[0][held[1]], plain[rows, lo:lo + n])
            np.testing.assert_array_equal(mem.read(rows, 0x100 + lo, n), plain[rows, lo:lo + n])
        elif kind == "view":
            mem.view(slice(0, 6), 0x100 + lo, n)[:, ::7] += 1
            plain[:, lo:lo + n][:, ::7] += 1
        else:
            mem.add_u32(rows, 0x100 + lo, 5)
            plain[rows, lo:lo + 4] = (plain[rows, lo:lo + 4].copy().view(np.uint32) + 5).view(np.uint8)
    np.testing.assert_array_equal(mem.read(slice(0, 6), 0x100, 1024), plain)
    mem.release()


@pytest.mark.parametrize("write", ["write", "per_lane", "view", "add_u32", "shared_read"])
def test_a_reused_memory_starts_zeroed_wherever_the_last_run_wrote(write):
    from tilefold.sim.memory import ByteMemory

    first = ByteMemory(8, 4096, base=0x1000)
    if write == "write":
        first.write(np.array([2]), 0x1100, np.full((1, 64), 9, np.uint8))
    elif write == "per_lane":
        first.write(np.array([0, 7]), np.array([0x1010, 0x1ff0]), np.full((2, 16), 9, np.uint8))
    elif write == "view":
        first.view(slice(0, 8), 0x1800, 256)[...] = 9
    elif write == "add_u32":
        first.add_u32(np.array([5]), 0x1ffc, 9)
    else:                                               # a shared write copied in by a read
        _shared(first, lo=0x1400, n=0x400)
        first.read(slice(0, 8), 0x1400, 4)
    assert first.read(slice(0, 8), 0x1000, 4096).any()
    kept = first.data
    first.release()
    second = ByteMemory(8, 4096, base=0x1000)           # the same shape: the same array, cleared
    assert second.data is kept
    assert not second.read(slice(0, 8), 0x1000, 4096).any()
    second.release()


def test_lanes_of_content_matches_distinct_lanes_numbering():
    from tilefold.sim.matmul_blocks import lanes_of_content

    content = np.array([5, 5, 2, 2, 5, 9, 9, 2])
    raw = np.stack([np.full((2, 64), c, np.uint8) for c in content])
    assert [a.tolist() for a in lanes_of_content(content)] == [a.tolist() for a in distinct_lanes(raw)]
    assert lanes_of_content(np.arange(8) % 6) is None                      # most lanes differ


@reader_kernel
def read_shared_block_then_patch():
    """Every core reads tiles 0..3 of ``a`` (one batch of page reads), then tile ``patch`` over
    its first page (tile 0 again, except on the core told otherwise), then tiles of ``b``."""
    a_addr = get_arg_val(0)
    b_addr = get_arg_val(1)
    patch = get_arg_val(2)
    sa = TensorAccessor(TensorAccessorArgs(0), a_addr, get_tile_size(A))
    sb = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(0)), b_addr, get_tile_size(B))
    size = get_tile_size(A)
    cb_reserve_back(A, 4)
    base = get_write_ptr(A)
    for i in range(4):
        noc_async_read_page(i, sa, base + i * size)
    noc_async_read_barrier()
    noc_async_read_page(patch, sa, base)
    noc_async_read_barrier()
    cb_push_back(A, 4)
    cb_reserve_back(B, 4)
    for i in range(4):
        noc_async_read_page(i, sb, get_write_ptr(B) + i * get_tile_size(B))
    noc_async_read_barrier()
    cb_push_back(B, 4)


@compute_kernel
def two_by_two_product():
    mm_block_init(A, B, OUT, 0, 2, 2, 2)
    cb_wait_front(A, 4)
    cb_wait_front(B, 4)
    cb_reserve_back(OUT, 4)
    tile_regs_acquire()
    for k in range(2):
        matmul_block(A, B, k, k * 2, 0, 0, 2, 2, 2)
    tile_regs_commit()
    tile_regs_wait()
    pack_tile_block(0, OUT, 4)
    tile_regs_release()
    cb_push_back(OUT, 4)
    cb_pop_front(A, 4)
    cb_pop_front(B, 4)


@writer_kernel
def write_core_tiles():
    dst = get_arg_val(0)
    first = get_arg_val(1)
    s = TensorAccessor(TensorAccessorArgs(after=TensorAccessorArgs(after=TensorAccessorArgs(0))), dst,
                       get_tile_size(OUT))
    cb_wait_front(OUT, 4)
    for i in range(4):
        noc_async_write_page(first + i, s, get_read_ptr(OUT) + i * get_tile_size(OUT))
    noc_async_write_barrier()
    cb_pop_front(OUT, 4)


def test_a_page_written_after_a_shared_batch_is_not_shared():
    # eight cores batch-read the same four tiles of A (the L1 memory records them as identical),
    # then core 5 reads another tile over its first page: its product must use that tile
    from simhelpers import A as _A, grid, random_tiles, tile_program  # noqa: F401
    from tilefold.sim import Device

    cores = 8
    prog, bufs = tile_program(
        read_shared_block_then_patch, two_by_two_product, write_core_tiles, cores=grid(cores),
        cbs=((A, 4), (B, 4), (OUT, 4)),
        buffers=(("a", (32, 160), "input"), ("b", (32, 128), "input"), ("dst", (32, 32 * 4 * cores), "output")),
        reader_args=lambda b, i, c: [b["a"].address, b["b"].address, 4 if i == 5 else 0],
        writer_args=lambda b, i, c: [b["dst"].address, 4 * i])
    a, b = random_tiles((32, 160), seed=7), random_tiles((32, 128), seed=8)
    out = Device().run(prog, {"a": a, "b": b}).outputs["dst"]
    tile = [a[:, 32 * t:32 * (t + 1)] for t in range(5)]
    b_matrix = np.block([[b[:, 0:32], b[:, 32:64]], [b[:, 64:96], b[:, 96:128]]])
    for core in range(cores):
        first = tile[4] if core == 5 else tile[0]
        expect = np.block([[first, tile[1]], [tile[2], tile[3]]]) @ b_matrix
        got = out[:, 128 * core:128 * (core + 1)].reshape(32, 4, 32)
        got = np.block([[got[:, 0], got[:, 1]], [got[:, 2], got[:, 3]]])
        np.testing.assert_allclose(got, expect, rtol=1e-2, atol=1e-1, err_msg=f"core {core}")
