"""Live telemetry: angles and velocities decimated to at most 100 Hz, in small blocks.

Dashboards plot the rig as it swings; they need neither 10 kHz nor the encoder counts.
Every `step` = rate / hz samples one sample is kept (plain decimation: the encoder
angles are quantised, not noisy, and a dashboard does not analyse them), velocities
are the backward difference of the kept angles, and every `per_block` kept samples
make one payload (10 Hz of messages at 100 Hz). Gaps restart the difference.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from hilrig.drivers import SampleBlock

__all__ = ["TelemetryDecimator"]


class TelemetryDecimator:
    """Feed every SampleBlock; returns the telemetry payload bodies that are complete."""

    def __init__(self, rate_hz: float, counts_per_rev: tuple[int, int], hz: float = 100.0,
                 block_s: float = 0.1) -> None:
        self.step = max(1, int(round(rate_hz / hz)))
        self.out_hz = rate_hz / self.step
        self.per_block = max(1, int(round(block_s * self.out_hz)))
        self.deg = np.array([360.0 / counts_per_rev[0], 360.0 / counts_per_rev[1]])
        self._rate = float(rate_hz)
        self._wall = time.time() - time.monotonic()  # host monotonic -> Unix time
        self._next: int | None = None  # device index of the next sample to keep
        self._prev: tuple[int, np.ndarray] | None = None  # last kept (index, degrees)
        self._rows: list[tuple[int, float, np.ndarray, np.ndarray]] = []

    def feed(self, block: SampleBlock) -> list[dict[str, Any]]:
        first, n = block.first_index, len(block)
        if self._next is None or self._next < first:  # start, or a gap
            self._next = -(-first // self.step) * self.step
            self._prev = None
        offsets = np.arange(self._next - first, n, self.step)
        if offsets.size == 0:
            return []
        self._next = first + int(offsets[-1]) + self.step
        angles = block.counts[offsets] * self.deg
        for off, a in zip(offsets.tolist(), angles):
            index = first + off
            if self._prev is not None and index - self._prev[0] == self.step:
                w = (a - self._prev[1]) * self.out_hz
            else:
                w = np.array([math.nan, math.nan])
            self._prev = (index, a)
            t = self._wall + block.host_time - (n - 1 - off) / self._rate
            self._rows.append((index, t, a, w))
        ready = []
        while len(self._rows) >= self.per_block:
            rows, self._rows = self._rows[:self.per_block], self._rows[self.per_block:]
            ready.append(self._body(rows))
        return ready

    def _body(self, rows: list[tuple[int, float, np.ndarray, np.ndarray]]) -> dict[str, Any]:
        a = np.array([r[2] for r in rows])
        w = np.array([r[3] for r in rows])
        # JSON has no NaN: an unknown velocity (after a gap) repeats the next known one
        w = np.where(np.isnan(w), np.nan_to_num(w[~np.isnan(w).any(axis=1)][:1], nan=0.0)
                     if (~np.isnan(w).any(axis=1)).any() else 0.0, w)
        return {"rate_hz": self.out_hz, "index0": rows[0][0],
                "t": [round(r[1], 4) for r in rows],
                "theta0_deg": np.round(a[:, 0], 4).tolist(),
                "theta1_deg": np.round(a[:, 1], 4).tolist(),
                "omega0_dps": np.round(w[:, 0], 3).tolist(),
                "omega1_dps": np.round(w[:, 1], 3).tolist()}
