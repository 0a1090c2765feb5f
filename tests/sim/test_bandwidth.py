"""The DRAM bandwidth pool: bytes fill time buckets up to the rate, in device time, not call order."""

import pytest
from hypothesis import given, settings, strategies as st

from tilefold.sim.bandwidth import BandwidthPool


def test_alone_a_transfer_runs_at_the_full_rate():
    pool = BandwidthPool(bytes_per_cycle=8.0, bucket_cycles=64)
    assert pool.transfer(128.0, 8 * 100) == pytest.approx(228.0)


def test_transfers_at_the_same_time_share_the_bandwidth():
    pool = BandwidthPool(bytes_per_cycle=8.0, bucket_cycles=64)
    first = pool.transfer(0.0, 8 * 640)
    second = pool.transfer(0.0, 8 * 640)
    assert first == pytest.approx(640.0)
    assert second == pytest.approx(1280.0)


def test_a_transfer_earlier_in_device_time_finds_the_early_buckets_free():
    pool = BandwidthPool(bytes_per_cycle=8.0, bucket_cycles=64)
    pool.transfer(640.0, 8 * 640)                  # simulated first, later on the device
    assert pool.transfer(0.0, 8 * 320) == pytest.approx(320.0)


def test_full_buckets_in_the_middle_are_skipped():
    pool = BandwidthPool(bytes_per_cycle=8.0, bucket_cycles=64)
    pool.transfer(128.0, 8 * 128)                  # fills buckets 2 and 3
    # 4 buckets' worth from cycle 0: buckets 0, 1, then 4, 5 (2 and 3 are full)
    assert pool.transfer(0.0, 8 * 256) == pytest.approx(384.0)
    assert pool.transfer(0.0, 8 * 64) == pytest.approx(448.0)


def test_a_transfer_starting_mid_bucket_uses_only_the_rest_of_it():
    pool = BandwidthPool(bytes_per_cycle=8.0, bucket_cycles=64)     # 512 bytes per bucket
    pool.transfer(0.0, 128)
    # from cycle 48 only 16 cycles (128 bytes) of bucket 0 are left: 384 bytes go to bucket 1
    assert pool.transfer(48.0, 512) == pytest.approx(112.0)
    # so bucket 1 has 128 bytes of room, and 384 bytes go to bucket 2
    assert pool.transfer(64.0, 512) == pytest.approx(176.0)


def test_the_buckets_grow_for_late_transfers():
    pool = BandwidthPool(bytes_per_cycle=1.0, bucket_cycles=4)
    assert pool.transfer(10_000.0, 40) == pytest.approx(10_040.0)
    # 12000 cycles' worth from 0 passes the 40 full cycles at 10000
    assert pool.transfer(0.0, 12_000) == pytest.approx(12_040.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4000), st.integers(1, 5000)), min_size=1, max_size=40))
def test_no_bucket_holds_more_than_its_capacity_and_every_byte_is_placed(transfers):
    pool = BandwidthPool(bytes_per_cycle=4.0, bucket_cycles=16)
    for start, nbytes in transfers:
        done = pool.transfer(float(start), nbytes)
        assert done >= start + nbytes / pool.rate - 1e-6      # never faster than the full rate
    assert max(pool.used) <= pool.capacity * (1 + 1e-9)
    assert sum(pool.used) == pytest.approx(sum(n for _, n in transfers))
