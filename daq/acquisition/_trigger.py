"""Free-decay capture trigger: wait for rest, arm, start on motion, end when still again.

A free-decay experiment holds the pendulum at a pose, lets go, and records until the
rig has come to rest. This module finds those three moments in the sample stream,
block by block, with numpy only (no per-sample Python loop):

    WAITING_REST --(both joints still 2 x still_window_s)--> ARMED
    ARMED --(a joint >= motion_threshold_counts from rest)--> RECORDING   (Triggered)
    RECORDING --(both still hold_s, or max_duration_s after the trigger)--> SETTLED
    SETTLED --arm()--> WAITING_REST

Definitions (W = still_window_s, in samples):

* A joint is *still* at sample t when max - min of its counts over [t-W+1, t] is
  <= still_band_counts (a full window of contiguous samples is required).
* The *rest band* of a joint is [min, max] of a still window that ended W samples
  before the sample being tested. The lag keeps the first counts of a release out of
  the band; following the band (rather than fixing it at arming) stops slow creep
  while armed from accumulating into a false trigger (the simulated rig's arm still
  creeps ~14 counts in the minute after a decay has settled).
* The trigger fires at the first sample where a joint is >= motion_threshold_counts
  from the middle of its rest band. The onset is the first sample after that band's
  window where either joint is outside its band (>= 1 count beyond it), found by
  looking back in a short history of our own (2 W samples before the block).
  A release starts at zero velocity, so the trigger lags the release (simulated rig:
  15 ms from (0, 120) deg, ~45 ms for a 10 deg arm-only release) while the onset
  lags only by the time to move one count (4.8 ms from (0, 120) deg, 6.4 ms from
  (0, 30), 13 ms for the 10 deg arm release).
* The capture starts at onset - pre_trigger_s and ends at Settled.end_index
  (exclusive), see Settled.

A gap of at most bridge_gap_s is bridged: the trigger (not the capture, which keeps
the gap) sees the last sample before it held through it. One lost 1 ms frame cannot
hide a swing, and without this a link that loses a few frames a second would never
hold still for hold_s. A longer gap breaks every window: stillness has to be
re-established from samples after the gap (so arming and settling are delayed by the
window), the onset look-back stops at the first sample after the gap, and the rest
band held while armed is kept, so a release during the gap triggers on the first
sample after it. max_duration_s is counted in sample indices, gaps included.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

import numpy as np

from hilrig.drivers import SampleBlock

from ..config import TriggerConfig

__all__ = ["Armed", "FreeDecayTrigger", "Settled", "TriggerEvent", "TriggerState", "Triggered"]


class TriggerState(enum.Enum):
    WAITING_REST = "waiting_rest"  # not armed until both joints are at rest
    ARMED = "armed"
    RECORDING = "recording"
    SETTLED = "settled"  # capture over; arm() for the next one


@dataclass(frozen=True, slots=True)
class Armed:
    """The rig is at rest and motion is watched from sample ``index`` on."""

    index: int
    rest: tuple[int, int]  # middle of each joint's rest band, counts


@dataclass(frozen=True, slots=True)
class Triggered:
    """Motion detected at ``trigger_index``; it began at ``onset_index``."""

    trigger_index: int
    onset_index: int
    capture_start: int  # onset_index - pre-trigger samples (may precede the ring: clamp)
    release_estimate: float | None = None  # fitted release moment, fractional sample index


@dataclass(frozen=True, slots=True)
class Settled:
    """The capture is over; it covers [Triggered.capture_start, end_index).

    reason "settled": end_index is one past the first sample at which both joints had
    been still for hold_s (counted after the trigger); the counts had then stayed
    within the still band for about hold_s + still_window_s.
    reason "max_duration": end_index = trigger_index + max_duration_s samples.
    reason "discontinuity" (the engine's): the stream broke for a time nobody knows (a
    board reset); end_index is one past the last sample before the break.
    """

    end_index: int
    reason: Literal["settled", "max_duration", "discontinuity"]


TriggerEvent = Armed | Triggered | Settled


class FreeDecayTrigger:
    """Detects free-decay captures in a stream of SampleBlocks (see module docstring).

    Feed every block, in order, to process(); it returns the events found in it.
    Starts in WAITING_REST and arms itself; after SETTLED call arm() for the next
    capture. Memory is bounded: a history of 2 W raw samples and W window results.
    """

    def __init__(self, cfg: TriggerConfig, rate_hz: float) -> None:
        if rate_hz <= 0:
            raise ValueError(f"rate_hz must be > 0, got {rate_hz}")
        if 2 * cfg.motion_threshold_counts <= cfg.still_band_counts:
            # the trigger level must lie outside any band that still counts as rest
            raise ValueError(f"motion_threshold_counts ({cfg.motion_threshold_counts}) must "
                             f"exceed half of still_band_counts ({cfg.still_band_counts})")
        # scipy.ndimage's running extremes, imported here rather than with the module: a
        # command that only reads captures (hilrig identify FILE) then does not pay for
        # it (0.14 s); a trigger is made before acquisition starts, never per block
        from scipy.ndimage import maximum_filter1d, minimum_filter1d
        self._running_max, self._running_min = maximum_filter1d, minimum_filter1d
        self.cfg = cfg
        self.rate_hz = float(rate_hz)
        self.window = max(1, round(cfg.still_window_s * rate_hz))  # W, samples
        self.hold = max(1, round(cfg.hold_s * rate_hz))
        self.max_len = max(1, round(cfg.max_duration_s * rate_hz))
        self.pre = round(cfg.pre_trigger_s * rate_hz)
        self.bridge = round(cfg.bridge_gap_s * rate_hz)
        self._look = 2 * self.window  # raw history kept before each block
        self._raw = np.zeros((self._look, 2), np.int32)
        # running min/max/still of the last W samples (the lagged rest band)
        self._lo = np.zeros((self.window, 2), np.int32)
        self._hi = np.zeros((self.window, 2), np.int32)
        self._st = np.zeros((self.window, 2), bool)
        self._valid = 0  # contiguous real samples in the raw history
        self._run = 0  # consecutive samples with both joints still, up to the last one
        self._next: int | None = None
        self._ref_lo = np.zeros(2, np.int64)
        self._ref_hi = np.zeros(2, np.int64)
        self._ref_end = np.zeros(2, np.int64)  # last index of each band's window
        self._trigger: int | None = None
        self._state = TriggerState.WAITING_REST
        self._near: tuple[np.ndarray, int] | None = None

    @property
    def state(self) -> TriggerState:
        """Where the capture cycle is (see TriggerState)."""
        return self._state

    @property
    def trigger_index(self) -> int | None:
        """Trigger index of the current (or last) capture."""
        return self._trigger

    def arm(self, near: tuple[int, int] | None = None, tolerance_counts: int = 0) -> None:
        """Prepare for the next capture: arms as soon as the rig is at rest.

        With `near`, it arms only at rest within `tolerance_counts` of those counts
        (both joints): the rig put at a release pose, not the rest it had before, so
        moving it there (an operator lifting the pendulum) is not taken for a release.
        """
        if self._state is TriggerState.RECORDING:
            raise RuntimeError("cannot arm while a capture is recording")
        self._state = TriggerState.WAITING_REST
        self._near = None if near is None else (np.asarray(near, np.int64), int(tolerance_counts))

    def disarm(self) -> None:
        """Watch for nothing until arm() (a session arms only when it asks for a release)."""
        if self._state is TriggerState.RECORDING:
            raise RuntimeError("cannot disarm while a capture is recording")
        self._state = TriggerState.SETTLED

    def cancel(self) -> None:
        """Give up the capture being recorded (no Settled comes); idle until arm()."""
        self._state = TriggerState.SETTLED

    def process(self, block: SampleBlock) -> list[TriggerEvent]:
        """Advance over one block; returns the events in it, in order."""
        n = len(block)
        if n == 0:
            return []
        f = int(block.first_index)
        if self._next is not None and (f != self._next or not block.continuous):
            if f < self._next:
                raise ValueError(f"block starts at sample {f} but {self._next} was expected: "
                                 f"sample indices must not go backwards")
            # a break of unknown length (a board reset) is never bridged, however short
            # its estimate
            if block.continuous and f - self._next <= self.bridge and self._valid:
                return self.process(self._held_through(f, block.host_time)) + self.process(block)
            self._valid, self._run = 0, 0  # a gap: no window may span it
            self._st[:] = False
        self._grow(n)
        raw = self._raw[:self._look + n]
        raw[self._look:] = block.counts
        run = self._still_windows(raw, n)
        events: list[TriggerEvent] = []
        t = 0
        while t < n:
            if self._state is TriggerState.WAITING_REST:
                t = self._wait_rest(f, t, n, run, events)
            elif self._state is TriggerState.ARMED:
                t = self._armed(block, raw, f, t, events)
            elif self._state is TriggerState.RECORDING:
                t = self._recording(f, t, n, run, events)
            else:  # SETTLED: idle until arm()
                break
            if t < 0:  # nothing more in this block
                break
        self._keep_history(raw, n, f, run)
        return events

    def _held_through(self, first: int, host_time: float) -> SampleBlock:
        """The last sample before a short gap, repeated up to `first` (bridge_gap_s)."""
        assert self._next is not None
        held = np.repeat(self._raw[self._look - 1:self._look], first - self._next, axis=0)
        return SampleBlock(self._next, held, host_time)

    def _still_windows(self, raw: np.ndarray, n: int) -> np.ndarray:
        """Window extremes and stillness of each new sample; the run of both-still samples.

        Returns run[k]: how many consecutive samples up to block position k had both
        joints still (counting on from the previous block).
        """
        W, L = self.window, self._look
        # running extremes over the trailing window of each block sample
        seg = raw[L - W + 1:]
        hi = self._running_max(seg, W, axis=0, origin=(W - 1) // 2)[W - 1:]
        lo = self._running_min(seg, W, axis=0, origin=(W - 1) // 2)[W - 1:]
        full = np.arange(n) >= W - 1 - self._valid
        still = (hi - lo <= self.cfg.still_band_counts) & full[:, None]
        # row r of _lo/_hi/_st is sample f - W + r: rows [0, W) are the previous block's
        self._lo[W:W + n], self._hi[W:W + n], self._st[W:W + n] = lo, hi, still
        both = still.all(axis=1)
        k = np.arange(n)
        last_not = np.maximum.accumulate(np.where(both, -1, k))
        run: np.ndarray = np.where(last_not >= 0, k - last_not, self._run + k + 1)
        return run

    def _wait_rest(self, f: int, t: int, n: int, run: np.ndarray,
                   events: list[TriggerEvent]) -> int:
        """Arm at the first sample at rest over two windows (near the pose, if asked);
        returns the position to continue at, or -1."""
        W = self.window
        # at rest over two windows: the lagged window at the arming sample is still
        ok = run[t:] > W
        if self._near is not None:
            mid = (self._lo[t:n].astype(np.int64) + self._hi[t:n]) // 2
            target, tol = self._near
            ok &= (np.abs(mid - target) <= tol).all(axis=1)
        hit = np.flatnonzero(ok)
        if hit.size == 0:
            return -1
        t += int(hit[0])
        self._ref_lo[:] = self._lo[t]
        self._ref_hi[:] = self._hi[t]
        self._ref_end[:] = f + t - W
        self._state = TriggerState.ARMED
        t += 1
        rest = (self._ref_lo + self._ref_hi) // 2
        events.append(Armed(f + t, (int(rest[0]), int(rest[1]))))
        return t

    def _recording(self, f: int, t: int, n: int, run: np.ndarray,
                   events: list[TriggerEvent]) -> int:
        """Settle once both joints were still hold_s (or at max_duration_s); returns the
        position to continue at, or -1."""
        assert self._trigger is not None
        limit = self._trigger + self.max_len - 1 - f  # block position of the last sample
        after = f + np.arange(t, n) - self._trigger
        hit = np.flatnonzero((run[t:] >= self.hold) & (after >= self.hold))
        if hit.size and t + hit[0] <= limit:
            t += int(hit[0]) + 1
            events.append(Settled(f + t, "settled"))
        elif limit < n:
            t = max(t, limit + 1)
            events.append(Settled(self._trigger + self.max_len, "max_duration"))
        else:
            return -1
        self._state = TriggerState.SETTLED
        return t

    def _keep_history(self, raw: np.ndarray, n: int, f: int, run: np.ndarray) -> None:
        """The newest samples and window results, as history for the next block (numpy
        copes with the overlap of these shifts)."""
        W, L = self.window, self._look
        raw[:L] = raw[n:]
        self._lo[:W] = self._lo[n:n + W]
        self._hi[:W] = self._hi[n:n + W]
        self._st[:W] = self._st[n:n + W]
        self._valid = min(self._valid + n, L)
        self._run = int(run[-1])
        self._next = f + n

    def _armed(self, block: SampleBlock, raw: np.ndarray, f: int, t: int,
               events: list[TriggerEvent]) -> int:
        """Look for motion from block position t; returns the position to continue at."""
        W, L, n = self.window, self._look, len(block)
        # rest band per sample: the newest still window ending >= W samples earlier
        st = self._st[t:n]
        k = np.arange(n - t)[:, None]
        src = np.maximum.accumulate(np.where(st, k, -1), axis=0)  # (m, 2) row or -1
        have = src >= 0
        rows = t + np.maximum(src, 0)
        cols = np.arange(2)
        lo = np.where(have, self._lo[rows, cols], self._ref_lo)
        hi = np.where(have, self._hi[rows, cols], self._ref_hi)
        end = np.where(have, f + rows - W, self._ref_end)
        x = block.counts[t:].astype(np.int64)
        moved = np.flatnonzero((np.abs(2 * x - lo - hi) >= 2 * self.cfg.motion_threshold_counts)
                               .any(axis=1))
        if moved.size == 0:
            self._ref_lo[:], self._ref_hi[:], self._ref_end[:] = lo[-1], hi[-1], end[-1]
            return n
        i = int(moved[0])
        trig = f + t + i
        # onset: first sample after each band's window that leaves the band (>= 1 count)
        oldest = f - self._valid  # the look-back stops at a gap or the history's start
        onset = trig
        fits: list[float] = []
        for j in range(2):
            s = max(int(end[i, j]) + 1, oldest)
            y = raw[s - (f - L):L + t + i + 1, j]
            out = np.flatnonzero((y < lo[i, j]) | (y > hi[i, j]))
            if out.size:
                onset = min(onset, s + int(out[0]))
                fit = fit_release(np.abs(y - (lo[i, j] + hi[i, j]) / 2),
                                  band=(hi[i, j] - lo[i, j]) / 2)
                if fit is not None:  # never before the band's window, never after the exit
                    fits.append(s + min(max(fit, 0.0), float(out[0])))
        self._trigger = trig
        self._state = TriggerState.RECORDING
        events.append(Triggered(trig, onset, onset - self.pre, min(fits) if fits else None))
        return t + i + 1

    def _grow(self, n: int) -> None:
        """Make room for a block of n samples after the histories (grows, never shrinks)."""
        L, W = self._look, self.window
        if self._raw.shape[0] < L + n:
            size = L + max(n, 2 * (self._raw.shape[0] - L))
            raw = np.zeros((size, 2), np.int32)
            raw[:L] = self._raw[:L]
            self._raw = raw
            for name in ("_lo", "_hi", "_st"):
                old = getattr(self, name)
                new = np.zeros((W + size - L, 2), old.dtype)
                new[:W] = old[:W]
                setattr(self, name, new)


_OFFSETS = np.linspace(-0.95, 0.95, 39)  # where the rest lies within its count, in counts


def fit_release(displacement: np.ndarray, band: float = 0.0) -> float | None:
    """When a release from rest began, from the counts it took to cross (sample units).

    Let go from rest, a joint moves as d(t) = alpha (t - t0)^2 for the first
    milliseconds (zero velocity, nearly constant acceleration). It crosses count
    level k at t_k = t0 + sqrt((k - delta) / alpha), delta being where the rest lay
    within its count. For each delta on a grid, t_k against sqrt(k - delta) is a
    straight line with intercept t0; the delta with the smallest residual wins.
    A level counts as crossed from the sample after which the displacement stays at
    or above it, and only levels beyond the rest band's half-width `band` are used,
    so jitter at rest does not pull the estimate early. Returns t0 relative to the
    first sample of `displacement`, or None with fewer than three levels crossed.
    Measured on the simulated rig, releases from (0, 5) to
    (20, 90) deg: within 0.2 ms of the true release, where the first sample off the
    rest band lags by 2-13 ms.
    """
    levels = np.arange(int(np.floor(band)) + 1, int(np.floor(displacement.max())) + 1,
                       dtype=np.float64)
    if levels.size < 3:
        return None
    n = displacement.size
    # index after the last sample below each level (reversed argmax finds the last one)
    below_last = n - np.argmax((displacement[::-1, None] < levels[None, :]), axis=0)
    times = np.where((displacement[:, None] < levels[None, :]).any(axis=0), below_last, 0
                     ).astype(np.float64)
    x = np.sqrt(np.maximum(levels[None, :] - _OFFSETS[:, None], 1e-9))  # (grid, levels)
    xm, tm = x.mean(axis=1, keepdims=True), times.mean()
    slope = ((x - xm) * (times - tm)).sum(axis=1) / ((x - xm) ** 2).sum(axis=1)
    t0 = tm - slope * xm[:, 0]
    resid = ((t0[:, None] + slope[:, None] * x - times) ** 2).sum(axis=1)
    resid[slope <= 0] = np.inf
    if not np.isfinite(resid).any():
        return None
    return float(t0[int(np.argmin(resid))])
