"""A simulated rig that behaves like the serial bridge: held at a pose, released, sampled.

The model of identify (RK4 at the sample rate, model.md equations) is integrated
block by block; angles are quantised to integer encoder counts as the real
quadrature counters do. Paced, blocks arrive in real time; unpaced, as fast as the
consumer takes them (tests, benchmarks).

With `realism` (identify.model.Realism) it behaves as a real rig does: it is built once
with its errors about the nominal rig (and drag, a cable), a trembling hand holds it and
lets go with a push, its encoders are noisy and jitter, and frames are lost; every
release draws anew, so no two captures of a session are the same.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator
from typing import Self

import numpy as np

from hilrig.identify.model import (
    FrictionParams,
    Realism,
    RigParams,
    Tremor,
    drifted_friction,
    encoder_counts,
    encoder_quantum,
    lost_frames,
    simulate_rk4,
    true_rig,
)
from hilrig.identify.reference import TABLE_III_TRUTH

from .._protocols import SampleBlock, SourceInfo, SourceStats

__all__ = ["SimulatedRig"]


class SimulatedRig:
    """Async sample source for the simulated tilted Furuta pendulum.

    The rig starts held at `pose_deg` (arm, pendulum, degrees from the hanging
    equilibrium) and, with `auto_release`, is let go after `hold_s` seconds of samples.
    `hold()` puts it back at a pose (as an operator would) and schedules the next
    release; `release()` lets go at the next sample; `release_index` is the true sample
    index of the last release. It is `Releasable`, `Holdable` and `Pacing`.
    """

    def __init__(
        self,
        rig: RigParams | None = None,
        friction: FrictionParams = TABLE_III_TRUTH,
        pose_deg: tuple[float, float] = (0.0, 120.0),
        *,
        rate_hz: float = 10_000.0,
        counts_per_rev: int = 40_000,
        block_size: int = 100,
        paced: bool = True,
        hold_s: float = 1.0,
        auto_release: bool = True,
        realism: Realism | None = None,
        session_hours: float = 0.0,
    ) -> None:
        if block_size < 1 or not (math.isfinite(rate_hz) and rate_hz > 0) or counts_per_rev < 4:
            raise ValueError("block_size >= 1, finite rate_hz > 0 and counts_per_rev >= 4 "
                             "are required")
        self.realism = realism or Realism()
        if not (math.isfinite(session_hours) and session_hours >= 0):
            raise ValueError(f"session_hours must be finite and >= 0, got {session_hours}")
        self._hours0 = float(session_hours)  # where the device's clock starts in a session
        self._rng = self.realism.rng()
        self.nominal = rig or RigParams()
        # the rig as built: drawn once, as a real one is built once
        self.rig = true_rig(self.nominal, self.realism, self._rng)
        self.friction = friction
        self.rate_hz = float(rate_hz)
        self.counts_per_rev = int(counts_per_rev)
        self.block_size = int(block_size)
        self._paced = paced
        self._clock: tuple[float, int] | None = None  # (time, index) pacing counts from
        self.stats = SourceStats()
        self.info = SourceInfo(
            kind="simulated",
            identity=f"sim:tilt={self.nominal.tilt_deg:g}deg",
            sample_rate_hz=self.rate_hz,
            counts_per_rev=(self.counts_per_rev, self.counts_per_rev),
        )
        self._rig_arr = self.rig.as_array()
        self._fr_arr = friction.as_array()
        self._state = np.zeros(4)
        self._pose = np.zeros(2)
        self._tremor = Tremor(0.0, self._rng)
        self._held_from = 0  # sample index where the hand took hold
        self._held = True
        self._release_at: int | None = None
        self.release_index: int | None = None
        self._index = 0
        self._closed = False
        self._quantum = encoder_quantum(self.counts_per_rev)
        self._drift()  # a drift of a term this rig has not: refused now, not at a release
        self.hold(pose_deg, release_in_s=hold_s if auto_release else None)

    def hold(self, pose_deg: tuple[float, float], release_in_s: float | None = None) -> None:
        """Hold the rig still at a pose; release it after `release_in_s` seconds if given."""
        if release_in_s is not None and not math.isfinite(release_in_s):
            raise ValueError(f"release_in_s must be finite, got {release_in_s}")
        self._state = np.array([math.radians(pose_deg[0]), math.radians(pose_deg[1]), 0.0, 0.0])
        self._pose = self._state[:2].copy()
        self._tremor = Tremor(self.realism.hand_tremor_rad, self._rng)
        self._held_from = self._index
        self._held = True
        self._release_at = (None if release_in_s is None
                            else self._index + max(0, int(round(release_in_s * self.rate_hz))))

    @property
    def can_release(self) -> bool:
        return True

    async def release(self, pulse_ms: int = 0) -> int | None:
        """Let go at the next sample (no latch pulse to time); returns that sample's index."""
        return self.let_go()

    def let_go(self) -> int:
        """`release()` for a caller that reads samples synchronously (`read`)."""
        self._release_at = self._index
        return self._index

    @property
    def held(self) -> bool:
        return self._held

    @property
    def paced(self) -> bool:
        """Real time (True) or as fast as the consumer reads (False); may change any time."""
        return self._paced

    @paced.setter
    def paced(self, value: bool) -> None:
        self._paced = bool(value)
        self._clock = None  # pacing counts anew from the next block

    async def __aenter__(self) -> Self:
        self._closed = False
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closed = True

    def _advance(self, n: int) -> np.ndarray:
        """Channel angles (n, 2) of the next n samples, integrating the model when free."""
        out = np.empty((n, self._pose.size))
        k = 0
        while k < n:
            if self._held:
                until = n if self._release_at is None else min(n, self._release_at - self._index)
                if until <= k:  # release due now: the hand lets go, trembling, pushing
                    t_go = (self._index - self._held_from) / self.rate_hz
                    dims = self._pose.size
                    self._state[:dims] = self._pose + self._tremor.angles(np.array([t_go]))[0]
                    self._state[dims:] = self._tremor.velocity(t_go) + self._push()
                    self._drift()
                    self._held = False
                    self.release_index = self._index
                    self._release_at = None
                    continue
                held = (self._index - self._held_from + np.arange(until - k)) / self.rate_hz
                out[k:until] = self._pose + self._tremor.angles(held)
                self._index += until - k
                k = until
            else:
                m = n - k
                # RK4 never coarser than 0.1 ms, whatever the rate recorded: a 1 kHz
                # capture is the same motion sampled less often
                sub = max(1, math.ceil(10_000.0 / self.rate_hz - 1e-9))
                out[k:n] = self._free(m, sub)
                self._index += m
                k = n
        return self._channels(out)

    @property
    def session_hours(self) -> float:
        """The session's time on the device's own clock, in hours (session_hours at its
        start): the time friction drifts by."""
        return self._hours0 + self._index / self.rate_hz / 3600.0

    def conditions(self) -> dict[str, float]:
        """The lab's temperature now, where the realism sets one (Realism.conditions): the
        covariate a capture of this rig records."""
        return self.realism.conditions(self.session_hours)

    # -- what a rig of another kind changes (drivers.sim.SimulatedChainRig) ---------------
    def _drift(self) -> None:
        """At a release, the friction the session's time has drifted it to (a swing of a
        minute drifts by a thousandth of an hour's rate: one value per swing)."""
        self._fr_arr = drifted_friction(self.friction, self.realism,
                                        self.session_hours).as_array()

    def _push(self) -> np.ndarray:
        """The velocity the hand gives each joint as it lets go."""
        return np.asarray(self.realism.push_rad_s)

    def _free(self, m: int, sub: int) -> np.ndarray:
        """Joint angles of the next m samples of free motion; the state moves on by m."""
        # row 0 of the simulation is the current state, i.e. this sample
        states, _ = simulate_rk4(self._rig_arr, self._fr_arr, self._state,
                                 1.0 / (self.rate_hz * sub), m + 1, sub)
        self._state[:] = states[m]
        return states[:m, :2]

    def _channels(self, joints: np.ndarray) -> np.ndarray:
        """What the two encoders read of the joint angles (the Furuta rig: the joints)."""
        return joints

    def read(self, n: int) -> SampleBlock:
        """Produce the next n samples synchronously (the unpaced core of blocks()); the
        link's lost frames are not applied (read_link applies them)."""
        first = self._index
        angles = self._advance(n)
        counts = encoder_counts(angles, self._quantum, self.realism, self._rng).astype(np.int32)
        self.stats.blocks += 1
        self.stats.samples += n
        return SampleBlock(first_index=first, counts=counts, host_time=time.monotonic())

    def read_link(self, n: int) -> list[SampleBlock]:
        """The next n samples as the link delivers them (read, less the lost frames)."""
        return self._link(self.read(n))

    async def blocks(self) -> AsyncIterator[SampleBlock]:
        self._clock = None
        while not self._closed:
            if self._clock is None:
                self._clock = (time.monotonic(), self._index)
            t0, i0 = self._clock
            block = self.read(self.block_size)
            if self._paced:
                due = t0 + (block.end_index - i0) / self.rate_hz
                delay = due - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)  # let consumers run between blocks
            for part in self._link(block):
                yield part

    def _link(self, block: SampleBlock) -> list[SampleBlock]:
        """The block as a lossy link delivers it: runs of the frames that arrived."""
        keep = lost_frames(len(block), self.realism, self._rng, block.first_index)
        if keep.all():
            return [block]
        self.stats.lost_samples += int((~keep).sum())
        edges = np.flatnonzero(np.diff(np.concatenate([[0], keep.astype(np.int8), [0]])))
        return [SampleBlock(block.first_index + a, block.counts[a:b], block.host_time,
                            block.flags) for a, b in zip(edges[::2], edges[1::2])]
