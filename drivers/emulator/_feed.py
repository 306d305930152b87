"""The physical rig behind the firmware emulator: a SimulatedRig an operator keeps releasing.

`RigFeed` turns a `SimulatedRig` (unpaced) into an endless, deterministic stream of
encoder counts: the rig is held at a pose, released after `hold_s`, and once both
joints have stayed within `still_band` counts for `rehold_still_s` it is put back at
the pose (and released again after `hold_s`), as the service does with the simulated
source. The counts depend only on the settings and the sample index, never on how the
consumer splits its reads (samples are made in fixed chunks of CHUNK), so a test can
rebuild exactly what the emulator sent.
"""

from __future__ import annotations

import math

import numpy as np

from hilrig.identify.model import FrictionParams, RigParams
from hilrig.identify.reference import TABLE_III_TRUTH

from ..sim import SimulatedRig

__all__ = ["RigFeed"]


class RigFeed:
    """Counts (n, 2) int32 of the simulated rig, sample after sample, re-held after each decay."""

    CHUNK = 100  # samples made at once; the re-hold decision is taken per chunk

    def __init__(self, *, rig: RigParams | None = None,
                 friction: FrictionParams = TABLE_III_TRUTH,
                 pose_deg: tuple[float, float] = (0.0, 120.0), rate_hz: float = 10_000.0,
                 counts_per_rev: int = 40_000, hold_s: float = 1.0,
                 rehold_still_s: float | None = 2.0, still_band: int = 2,
                 latch: bool = False) -> None:
        if rehold_still_s is not None and not (math.isfinite(rehold_still_s)
                                               and rehold_still_s > 0):
            raise ValueError(f"rehold_still_s must be > 0 or None, got {rehold_still_s}")
        self.pose_deg = (float(pose_deg[0]), float(pose_deg[1]))
        self.hold_s = float(hold_s)
        self.latch = latch  # held until release() (a latch), instead of after hold_s
        self.rate_hz = float(rate_hz)
        self.still_band = int(still_band)
        self._rehold = (None if rehold_still_s is None
                        else max(1, round(rehold_still_s * self.rate_hz)))
        self.rig = SimulatedRig(rig=rig, friction=friction, pose_deg=self.pose_deg,
                                rate_hz=rate_hz, counts_per_rev=counts_per_rev, paced=False,
                                hold_s=self.hold_s, auto_release=not latch)
        self.releases: list[int] = []  # sample index of every release
        self.reholds: list[int] = []  # sample index of every re-hold
        self._buf = np.zeros((0, 2), np.int32)
        self._off = 0
        self._pos = 0  # index of the next sample read() returns
        self._made = 0  # samples made so far (>= _pos)
        self._track: tuple[np.ndarray, np.ndarray, int] | None = None  # lo, hi, still since

    @property
    def position(self) -> int:
        """Index of the next sample read() returns."""
        return self._pos

    def _chunk(self) -> np.ndarray:
        rig = self.rig
        was_held = rig.held
        counts = rig.read(self.CHUNK).counts
        first = self._made
        self._made += self.CHUNK
        if was_held and not rig.held and rig.release_index is not None:
            self.releases.append(rig.release_index)
        if self._rehold is None or rig.held:
            self._track = None
            return counts
        lo, hi = counts.min(axis=0), counts.max(axis=0)
        if self._track is not None:
            tlo, thi, since = self._track
            lo2, hi2 = np.minimum(tlo, lo), np.maximum(thi, hi)
            if int((hi2 - lo2).max()) <= self.still_band:
                lo, hi = lo2, hi2
            else:
                since = first
        else:
            since = first
        if int((hi - lo).max()) > self.still_band:  # moving within this chunk
            self._track = None
            return counts
        self._track = (lo, hi, since)
        if self._made - since >= self._rehold:
            rig.hold(self.pose_deg, release_in_s=None if self.latch else self.hold_s)
            self.reholds.append(self._made)
            self._track = None
        return counts

    def release(self) -> int:
        """Open the latch: the rig is let go at the first sample not made yet; its index."""
        self.rig.let_go()
        return self._made

    def read(self, n: int) -> np.ndarray:
        """The next n samples, (n, 2) int32 (a fresh array)."""
        avail = self._buf.shape[0] - self._off
        if avail < n:
            need = -(-(n - avail) // self.CHUNK)
            parts = [self._buf[self._off:]] + [self._chunk() for _ in range(need)]
            self._buf = np.concatenate(parts)
            self._off = 0
        out = self._buf[self._off:self._off + n].copy()
        self._off += n
        self._pos += n
        return out

    def skip(self, n: int) -> None:
        """Let n samples pass unread (the rig moves on while nobody samples it)."""
        while n > 0:
            k = min(n, 100_000)
            self.read(k)
            n -= k
