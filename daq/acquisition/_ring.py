"""A preallocated ring of encoder samples, addressed by the device's sample index.

The acquisition loop writes every SampleBlock here; the capture recorder later reads
the window [capture_start, end) out of it. Two things matter more than speed:

* nothing is allocated per block (the loop runs at 100 blocks/s for days), so the
  ring copies each block into fixed arrays by slice assignment;
* lost samples stay visible. Slots are filled in arrival order and each slot keeps
  its own sample index (int64), so a window that spans a gap returns the samples on
  both sides with the jump visible in its index array; nothing is interpolated or
  closed up.

Overruns are counted against one retention mark: a consumer calls
``retain_from(i)`` to say it still needs every sample from index ``i`` on (the
recorder retains from its capture start, and may advance the mark as it drains),
and ``release()`` when done. A retained sample overwritten by a newer one adds one
to ``overruns``. Single-threaded use (one asyncio loop) is assumed; there is no
locking.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np

from hilrig.drivers import SampleBlock

__all__ = ["RingBuffer"]


class RingBuffer:
    """Fixed-capacity ring of int32 samples (``channels`` per sample) with their indices.

    ``capacity`` is in samples (received samples, not index span: a gap costs no
    slots). Samples are kept in arrival order; block indices must never go backwards.
    """

    #: At most this many gaps are listed by ``gaps`` (``lost_samples`` counts them all).
    MAX_GAPS = 1024

    def __init__(self, capacity: int, channels: int = 2) -> None:
        if capacity < 1 or channels < 1:
            raise ValueError(f"RingBuffer needs capacity >= 1 and channels >= 1, "
                             f"got capacity={capacity}, channels={channels}")
        self.capacity = int(capacity)
        self.channels = int(channels)
        self._counts = np.zeros((self.capacity, self.channels), dtype=np.int32)
        self._index = np.zeros(self.capacity, dtype=np.int64)
        # 0, 1, 2, ... added to a block's first index to fill the index slots in place
        # (np.arange per block would allocate); grown to the largest block seen
        self._ramp = np.arange(0, dtype=np.int64)
        self._head = 0  # slot of the next write
        self._size = 0  # slots holding samples
        self._next = 0  # sample index one past the newest sample
        self._started = False
        self._lost = 0
        self._overruns = 0
        self._retain: int | None = None
        self._gaps: deque[tuple[int, int]] = deque(maxlen=self.MAX_GAPS)

    @classmethod
    def from_seconds(cls, seconds: float, rate_hz: float, channels: int = 2) -> RingBuffer:
        """A ring holding ``seconds`` of samples at ``rate_hz`` (default use: 120 s at 10 kHz)."""
        if seconds <= 0 or rate_hz <= 0:
            raise ValueError(f"seconds and rate_hz must be > 0, got {seconds}, {rate_hz}")
        return cls(math.ceil(seconds * rate_hz), channels)

    # -- state -------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._size

    @property
    def oldest_index(self) -> int:
        """Sample index of the oldest sample held (== next_index when empty)."""
        if self._size == 0:
            return self._next
        return int(self._index[(self._head - self._size) % self.capacity])

    @property
    def next_index(self) -> int:
        """One past the newest sample's index (the first_index the next block should have)."""
        return self._next

    @property
    def lost_samples(self) -> int:
        """Samples missing between consecutive blocks since the ring was created."""
        return self._lost

    @property
    def overruns(self) -> int:
        """Samples lost to the consumer: retained samples overwritten by newer ones, plus
        the leading samples of any block longer than the whole ring (never stored)."""
        return self._overruns

    @property
    def retained_from(self) -> int | None:
        """The retention mark set by retain_from(), or None."""
        return self._retain

    @property
    def gaps(self) -> list[tuple[int, int]]:
        """(first_missing_index, count) of each gap that still has stored samples on both
        sides, oldest first (at most MAX_GAPS of them)."""
        oldest = self.oldest_index
        return [g for g in self._gaps if g[0] > oldest]

    # -- consumers -----------------------------------------------------------------------

    def retain_from(self, index: int) -> None:
        """Declare that samples with index >= ``index`` are still needed.

        Overwriting any of them from now on counts as an overrun. Calling it again moves
        the mark (e.g. forward as the recorder drains the ring).
        """
        self._retain = int(index)

    def release(self) -> None:
        """Drop the retention mark: overwriting old samples is no longer an overrun."""
        self._retain = None

    # -- writing -------------------------------------------------------------------------

    def write(self, block: SampleBlock) -> None:
        """Append a block, overwriting the oldest samples; no allocation per call.

        Raises ValueError if the block starts before next_index (indices went back).
        A block starting past next_index records a gap.
        """
        counts = block.counts
        n = counts.shape[0]
        if n == 0:
            return
        if counts.shape[1] != self.channels:
            raise ValueError(f"block has {counts.shape[1]} channels, ring has {self.channels}")
        first = int(block.first_index)
        if self._started:
            if first < self._next:
                raise ValueError(f"block starts at sample {first} but the ring ends at "
                                 f"{self._next}: sample indices must not go backwards")
            if first > self._next:
                self._lost += first - self._next
                self._gaps.append((self._next, first - self._next))
        self._started = True
        cap = self.capacity
        if n > cap:
            # only the newest `cap` samples can be kept; the rest never reach a consumer
            drop = n - cap
            self._overruns += drop
            counts = counts[drop:]
            first += drop
            n = cap
        evict = self._size + n - cap
        if evict > 0:
            if self._retain is not None:
                # evicted samples are the oldest `evict`; those at or past the mark count
                self._overruns += evict - min(evict, self._logical_search(self._retain))
            self._size -= evict
        if self._ramp.shape[0] < n:
            self._ramp = np.arange(min(cap, max(n, 2 * self._ramp.shape[0])), dtype=np.int64)
        # copy in, in at most two slices (end of the arrays, then the start)
        a = self._head
        k = min(n, cap - a)
        self._counts[a:a + k] = counts[:k]
        np.add(self._ramp[:k], first, out=self._index[a:a + k])
        if k < n:
            self._counts[:n - k] = counts[k:]
            np.add(self._ramp[k:n], first, out=self._index[:n - k])
        self._head = (a + n) % cap
        self._size += n
        self._next = first + n
        # forget gaps whose earlier side has been overwritten (rare, bounded work)
        if self._gaps:
            oldest = self.oldest_index
            while self._gaps and self._gaps[0][0] <= oldest:
                self._gaps.popleft()

    # -- reading -------------------------------------------------------------------------

    def window(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """(sample_index int64 (n,), counts int32 (n, channels)) for indices in [start, stop).

        Samples lost in a gap are simply absent (sample_index jumps). The arrays are
        read-only views into the ring when the range does not wrap, a copy when it
        does: views are overwritten as the ring advances, so copy what you keep.
        Raises ValueError unless oldest_index <= start <= stop <= next_index.
        """
        start, stop = int(start), int(stop)
        oldest = self.oldest_index
        if not (oldest <= start <= stop <= self._next):
            raise ValueError(f"window [{start}, {stop}) is not in the ring: it holds "
                             f"[{oldest}, {self._next})")
        return self._logical(self._logical_search(start), self._logical_search(stop))

    def latest(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """The newest ``n`` stored samples (fewer if the ring holds fewer), as window()."""
        if n < 0:
            raise ValueError(f"latest(n) needs n >= 0, got {n}")
        return self._logical(self._size - min(n, self._size), self._size)

    # -- internals -----------------------------------------------------------------------

    def _segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The stored index slots in logical (oldest first) order, as two views."""
        o = (self._head - self._size) % self.capacity
        if o + self._size <= self.capacity:
            return self._index[o:o + self._size], self._index[:0]
        return self._index[o:], self._index[:self._head]

    def _logical_search(self, value: int) -> int:
        """Logical position (0 = oldest) of the first stored sample with index >= value."""
        s1, s2 = self._segments()
        pos = int(np.searchsorted(s1, value))
        if pos == s1.shape[0] and s2.shape[0]:
            pos += int(np.searchsorted(s2, value))
        return pos

    def _logical(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Samples at logical positions [lo, hi): views if contiguous, else a copy."""
        cap = self.capacity
        p = (self._head - self._size + lo) % cap
        m = hi - lo
        if p + m <= cap:
            idx, cnt = self._index[p:p + m], self._counts[p:p + m]
            idx.flags.writeable = False  # the views are the ring's own memory
            cnt.flags.writeable = False
            return idx, cnt
        k = cap - p
        return (np.concatenate((self._index[p:], self._index[:m - k])),
                np.concatenate((self._counts[p:], self._counts[:m - k])))
