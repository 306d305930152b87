"""RingBuffer: the specification, as tests."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hilrig.daq.acquisition import RingBuffer
from hilrig.drivers import SampleBlock


def counts_for(first: int, n: int) -> np.ndarray:
    """Deterministic counts that encode their own sample index (easy to check)."""
    i = np.arange(first, first + n, dtype=np.int64)
    return np.stack([i % 100_003, -(i % 7919)], axis=1).astype(np.int32)


def block(first: int, n: int) -> SampleBlock:
    return SampleBlock(first_index=first, counts=counts_for(first, n), host_time=0.0)


def expect(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    idx = np.arange(start, stop, dtype=np.int64)
    return idx, counts_for(start, stop - start)


# -- construction ------------------------------------------------------------------------

def test_from_seconds_default_use_is_120_s_at_10_khz():
    ring = RingBuffer.from_seconds(120.0, 10_000.0)
    assert ring.capacity == 1_200_000 and ring.channels == 2
    assert len(ring) == 0 and ring.oldest_index == ring.next_index == 0


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError):
        RingBuffer(0)
    with pytest.raises(ValueError):
        RingBuffer.from_seconds(0, 10_000)


# -- writing and reading back ------------------------------------------------------------

def test_window_before_wrap_is_a_read_only_view():
    ring = RingBuffer(1000)
    for k in range(5):
        ring.write(block(k * 100, 100))
    idx, cnt = ring.window(120, 380)
    np.testing.assert_array_equal(idx, np.arange(120, 380))
    np.testing.assert_array_equal(cnt, counts_for(120, 260))
    assert idx.dtype == np.int64 and cnt.dtype == np.int32 and cnt.shape == (260, 2)
    assert np.shares_memory(cnt, ring._counts) and np.shares_memory(idx, ring._index)
    assert not cnt.flags.writeable and not idx.flags.writeable
    assert ring._counts.flags.writeable  # the ring itself stays writable


def test_wraparound_returns_the_right_data_as_a_copy():
    ring = RingBuffer(1000)
    for k in range(13):  # 1300 samples into 1000 slots: wrapped
        ring.write(block(k * 100, 100))
    assert (ring.oldest_index, ring.next_index, len(ring)) == (300, 1300, 1000)
    idx, cnt = ring.window(900, 1100)  # slots 900..999 then 0..99
    np.testing.assert_array_equal(idx, np.arange(900, 1100))
    np.testing.assert_array_equal(cnt, counts_for(900, 200))
    assert not np.shares_memory(cnt, ring._counts)
    # a range inside one side of the wrap point is still a view
    idx, cnt = ring.window(1000, 1300)
    np.testing.assert_array_equal(cnt, counts_for(1000, 300))
    assert np.shares_memory(cnt, ring._counts)


def test_block_straddling_the_end_of_the_arrays():
    ring = RingBuffer(250)
    for k in range(4):
        ring.write(block(k * 100, 100))  # third block wraps inside itself
    np.testing.assert_array_equal(ring.window(150, 400)[1], counts_for(150, 250))


def test_latest():
    ring = RingBuffer(500)
    ring.write(block(0, 300))
    idx, cnt = ring.latest(50)
    np.testing.assert_array_equal(idx, np.arange(250, 300))
    assert ring.latest(10_000)[0].shape == (300,)  # no more than is held
    assert ring.latest(0)[0].shape == (0,)


def test_block_larger_than_the_ring_keeps_its_newest_samples_and_counts_the_rest():
    ring = RingBuffer(100)
    ring.write(block(0, 250))
    assert (ring.oldest_index, ring.next_index, ring.overruns) == (150, 250, 150)
    np.testing.assert_array_equal(ring.window(150, 250)[1], counts_for(150, 100))


def test_empty_window_and_empty_block():
    ring = RingBuffer(10)
    ring.write(block(0, 0))
    assert ring.window(0, 0)[1].shape == (0, 2)
    ring.write(block(5, 5))  # the first block fixes the origin: no gap before it
    assert ring.lost_samples == 0 and ring.oldest_index == 5


# -- no allocation per block -------------------------------------------------------------

def test_writes_allocate_nothing():
    ring = RingBuffer(12_345)
    blocks = [block(k * 100, 100) for k in range(200)]  # made up front, reused
    arrays = (ring._counts, ring._index)
    tracemalloc.start()
    try:
        ring.write(blocks[0])
        tracemalloc.reset_peak()
        before, _ = tracemalloc.get_traced_memory()
        for k in range(1, 10_001):
            b = blocks[k % 200]
            # same arrays, advancing indices: SampleBlock itself is tiny
            ring.write(SampleBlock(k * 100, b.counts, 0.0))
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ring.next_index == 10_001 * 100
    assert after - before < 4096  # no growth over 10,000 writes
    assert peak - before < 4096  # and no block-sized temporaries (800 bytes each)
    assert (ring._counts, ring._index) == arrays  # the same preallocated arrays


# -- gaps --------------------------------------------------------------------------------

def test_gap_is_recorded_and_visible_in_windows():
    ring = RingBuffer(1000)
    ring.write(block(0, 100))
    ring.write(block(130, 100))  # 100..129 lost
    assert ring.lost_samples == 30
    assert ring.gaps == [(100, 30)]
    idx, cnt = ring.window(90, 140)
    # the missing samples are absent, not invented: 10 before the gap, 10 after
    np.testing.assert_array_equal(idx, np.r_[90:100, 130:140])
    np.testing.assert_array_equal(cnt, np.r_[counts_for(90, 10), counts_for(130, 10)])
    assert np.diff(idx).max() == 31
    # a window that lies entirely inside the gap is empty, not an error
    assert ring.window(105, 125)[0].shape == (0,)


def test_gap_leaves_the_list_when_its_earlier_side_is_overwritten():
    ring = RingBuffer(200)
    ring.write(block(0, 100))
    ring.write(block(150, 100))
    assert ring.gaps == [(100, 50)] and len(ring) == 200
    ring.write(block(250, 100))  # samples 0..99 overwritten
    assert ring.gaps == [] and ring.lost_samples == 50  # the total is kept


def test_gap_list_is_bounded():
    ring = RingBuffer(100_000)
    for k in range(RingBuffer.MAX_GAPS + 10):
        ring.write(block(k * 10, 5))
    assert len(ring.gaps) == RingBuffer.MAX_GAPS
    assert ring.lost_samples == 5 * (RingBuffer.MAX_GAPS + 9)


# -- overruns ----------------------------------------------------------------------------

def test_overwriting_unretained_samples_is_not_an_overrun():
    ring = RingBuffer(100)
    for k in range(10):
        ring.write(block(k * 50, 50))
    assert ring.overruns == 0


def test_overrun_counted_when_a_retained_region_is_overwritten():
    ring = RingBuffer(100)
    ring.write(block(0, 100))
    ring.retain_from(40)  # e.g. the recorder's capture start
    ring.write(block(100, 30))  # overwrites 0..29: not retained
    assert ring.overruns == 0
    ring.write(block(130, 30))  # overwrites 30..59: 40..59 were retained
    assert ring.overruns == 20
    ring.retain_from(80)  # the consumer drained up to 80
    ring.write(block(160, 30))  # overwrites 60..89: 80..89 retained
    assert ring.overruns == 30
    ring.release()
    ring.write(block(190, 100))
    assert ring.overruns == 30 and ring.retained_from is None


def test_overrun_counts_retained_samples_across_the_wrap_point():
    ring = RingBuffer(100)
    ring.write(block(0, 70))
    ring.write(block(70, 70))  # wraps: oldest is 40 in slot 40
    ring.retain_from(0)
    ring.write(block(140, 80))  # overwrites 40..119, across the end of the arrays
    assert ring.overruns == 80


# -- errors ------------------------------------------------------------------------------

def test_window_outside_the_ring_is_a_clear_one_line_error():
    ring = RingBuffer(100)
    for k in range(3):
        ring.write(block(k * 100, 100))
    with pytest.raises(ValueError, match=r"window \[50, 250\) is not in the ring: "
                                         r"it holds \[200, 300\)") as exc:
        ring.window(50, 250)  # no longer in the ring
    assert "\n" not in str(exc.value)
    with pytest.raises(ValueError, match=r"\[250, 301\).*\[200, 300\)"):
        ring.window(250, 301)  # not yet written
    with pytest.raises(ValueError, match="not in the ring"):
        ring.window(280, 260)  # reversed


def test_indices_going_backwards_are_rejected_without_changing_the_ring():
    ring = RingBuffer(100)
    ring.write(block(0, 50))
    with pytest.raises(ValueError, match="must not go backwards"):
        ring.write(block(40, 20))
    assert ring.next_index == 50 and len(ring) == 50


# -- property: any sequence of blocks and gaps behaves like the obvious model ------------

@st.composite
def streams(draw):
    capacity = draw(st.integers(1, 64))
    steps = draw(st.lists(st.tuples(st.integers(0, 90), st.integers(0, 12)),
                          min_size=1, max_size=25))  # (block size, gap before it)
    retain = draw(st.none() | st.integers(0, 400))
    queries = draw(st.lists(st.tuples(st.integers(0, 500), st.integers(0, 80)), max_size=8))
    return capacity, steps, retain, queries


@settings(max_examples=3 * settings.default.max_examples, deadline=None)
@given(streams())
def test_windows_match_a_naive_model(stream):
    capacity, steps, retain, queries = stream
    ring = RingBuffer(capacity)
    if retain is not None:
        ring.retain_from(retain)
    kept: list[int] = []  # the model: indices of the samples still held, oldest first
    nxt, lost, overruns, started = 0, 0, 0, False
    for size, gap in steps:
        first = nxt + gap if started else gap
        ring.write(block(first, size))
        if size == 0:
            continue
        if started:
            lost += first - nxt
        started = True
        new = list(range(first, first + size))
        overruns += max(0, len(new) - capacity)  # never stored
        new = new[-capacity:]
        evicted = (kept + new)[:-capacity]
        if retain is not None:
            overruns += sum(1 for i in evicted if i >= retain)
        kept = (kept + new)[-capacity:]
        nxt = first + size
    assert ring.next_index == nxt and ring.lost_samples == lost
    assert ring.overruns == overruns and len(ring) == len(kept)
    oldest = kept[0] if kept else nxt
    assert ring.oldest_index == oldest
    for start, length in queries + [(oldest, nxt - oldest)]:
        stop = start + length
        if oldest <= start <= stop <= nxt:
            idx, cnt = ring.window(start, stop)
            want = np.array([i for i in kept if start <= i < stop], dtype=np.int64)
            np.testing.assert_array_equal(idx, want)
            np.testing.assert_array_equal(cnt, counts_for(0, nxt)[want] if want.size
                                          else np.empty((0, 2), np.int32))
        else:
            with pytest.raises(ValueError, match="not in the ring"):
                ring.window(start, stop)
    idx, _ = ring.latest(capacity // 2 + 1)
    np.testing.assert_array_equal(idx, kept[len(kept) - min(len(kept), capacity // 2 + 1):])
