"""The acquisition engine: source -> ring buffer -> trigger -> captures, with events out.

One engine owns one source's stream. A policy (a plain run, a session, the daemon)
drives it by iterating its events and calling its controls::

    async for event in engine.events():
        match event:
            case CaptureTaken(capture=capture): ...   # hand it to the consumers
            case BlockSeen(): ...                     # decide: release, time out, stop
        # engine.arm(...), engine.disarm(), engine.abort(); `break` ends acquisition

Nothing slow happens here: writing files, identifying and publishing are consumers
that take the events elsewhere, so they can neither block nor crash the stream. The
engine never decides when to capture next: after each capture the trigger is idle
until the policy arms it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hilrig.drivers import Conditions, SampleBlock, Source
from hilrig.identify import SOFTWARE_VERSION, RigParams, utc_now

from ..config import RigKindConfig, TriggerConfig
from ._capture import Capture, TriggerInfo, new_capture_id
from ._events import (
    BlockSeen,
    CaptureAborted,
    CaptureProgress,
    CaptureStarted,
    CaptureTaken,
    EngineEvent,
    LinkChanged,
    Telemetry,
    TriggerArmed,
)
from ._link import LinkWatch, error_counts, grown, summary_line
from ._rig_kinds import kind_of
from ._ring import RingBuffer
from ._telemetry import TelemetryDecimator
from ._trigger import Armed, FreeDecayTrigger, Settled, Triggered, TriggerState

__all__ = ["AcquisitionEngine"]


@dataclass
class _Recording:
    """The capture under way."""

    capture_id: str
    start: int
    trigger: Triggered
    started_utc: str
    link_errors: dict[str, int]
    progress_at: float
    aborted: bool = False
    conditions: dict[str, float] = field(default_factory=dict)


class AcquisitionEngine:
    """Runs one source's stream through a ring buffer and a free-decay trigger (see module).

    `rig` is recorded in every capture; `ring_s` seconds of samples are kept (a capture
    must fit); with `telemetry_hz` > 0 angles are decimated for dashboards; `armed`:
    whether the trigger watches for a release from the start.
    """

    def __init__(self, source: Source, *, rig: RigParams, trigger: TriggerConfig,
                 ring_s: float, telemetry_hz: float = 0.0, armed: bool = True,
                 progress_s: float = 1.0, kind: RigKindConfig | None = None) -> None:
        info = source.info
        self.source = source
        self.rig = rig
        self.kind = kind_of(kind).recorded
        self.rate = info.sample_rate_hz
        self.ring = RingBuffer.from_seconds(ring_s, self.rate)
        self.trigger = FreeDecayTrigger(trigger, self.rate)
        if not armed:
            self.trigger.disarm()
        self._telemetry = (TelemetryDecimator(self.rate, info.counts_per_rev, telemetry_hz)
                           if telemetry_hz > 0 else None)
        self._progress_s = progress_s
        self._recording: _Recording | None = None
        self._end = 0  # one past the newest sample seen
        self._segment = 0  # first sample after the last break of unknown length
        self._halted = False
        self._task: asyncio.Task[Any] | None = None
        self._awaiting_source = False

    # -- state and controls ----------------------------------------------------------------
    @property
    def recording(self) -> str | None:
        """The id of the capture being recorded, or None."""
        return None if self._recording is None else self._recording.capture_id

    @property
    def recording_since(self) -> int | None:
        """Sample index at which the capture being recorded triggered, or None."""
        return None if self._recording is None else self._recording.trigger.trigger_index

    @property
    def newest_index(self) -> int:
        """One past the newest sample seen."""
        return self._end

    @property
    def trigger_state(self) -> TriggerState:
        return self.trigger.state

    def health(self) -> dict[str, Any]:
        """The source's link health counters now."""
        return self.source.stats.health()

    def arm(self, near: tuple[int, int] | None = None, tolerance_counts: int = 0) -> None:
        """Watch for the next release once the rig rests (near those counts, if given)."""
        self.trigger.arm(near, tolerance_counts)

    def arm_at_pose(self, pose_deg: tuple[float, float], tolerance_deg: float) -> None:
        """Watch for a release once the rig rests within `tolerance_deg` of the pose."""
        cpr = self.source.info.counts_per_rev
        near = (round(pose_deg[0] / 360 * cpr[0]), round(pose_deg[1] / 360 * cpr[1]))
        self.trigger.arm(near=near, tolerance_counts=round(tolerance_deg / 360 * min(cpr)))

    def disarm(self) -> None:
        """Watch for nothing until armed again (not while recording)."""
        self.trigger.disarm()

    def abort(self) -> str | None:
        """Drop the capture under way at the next block (CaptureAborted); its id, or None."""
        if self._recording is None:
            return None
        self._recording.aborted = True
        return self._recording.capture_id

    def halt(self) -> None:
        """End `events()` now, even if the source yields nothing (a lost bridge)."""
        self._halted = True
        if self._awaiting_source and self._task is not None:
            self._task.cancel()

    def latest(self, n: int) -> np.ndarray:
        """Counts (m, 2) of the newest m <= n samples in the ring."""
        return self.ring.latest(n)[1]

    # -- the loop --------------------------------------------------------------------------
    async def events(self) -> AsyncGenerator[EngineEvent, None]:
        """Open the source and yield the events of every block until the policy stops."""
        self._halted = False
        self._task = asyncio.current_task()
        watch = LinkWatch(self.health())
        async with self.source:
            blocks = aiter(self.source.blocks())
            try:
                while (block := await self._next(blocks)) is not None:
                    for event in self._process(block, watch):
                        yield event
            finally:
                close = getattr(blocks, "aclose", None)
                if close is not None:
                    await close()

    async def _next(self, blocks: AsyncIterator[SampleBlock]) -> SampleBlock | None:
        if self._halted:
            return None
        self._awaiting_source = True
        try:
            return await anext(blocks)
        except StopAsyncIteration:
            return None
        except asyncio.CancelledError:
            task = asyncio.current_task()
            # halt() cancelled the wait; any other cancellation (the run stopped) goes on up
            if self._halted and task is not None and task.uncancel() == 0:
                return None
            raise
        finally:
            self._awaiting_source = False

    def _process(self, block: SampleBlock, watch: LinkWatch) -> list[EngineEvent]:
        """The events of one block, in order (see _events.py)."""
        events: list[EngineEvent] = []
        if not block.continuous and self._recording is not None:
            # what follows cannot be placed against what came before: the capture ends at
            # the break, with everything before it
            self.trigger.cancel()
            events.append(self._take(Settled(self._end, "discontinuity")))
        if not block.continuous:
            self._segment = block.first_index
        self.ring.write(block)
        self._end = block.end_index
        health = watch.poll(self.health, block.host_time)  # at most once a second
        if health is not None:
            events.append(LinkChanged(health, summary_line(health)))
        if self._telemetry is not None:
            events += [Telemetry(body) for body in self._telemetry.feed(block)]
        for ev in self.trigger.process(block):
            if isinstance(ev, Triggered):
                events.append(self._start(ev, block.host_time))
            elif isinstance(ev, Armed):
                events.append(TriggerArmed(ev.index))
            elif isinstance(ev, Settled) and self._recording is not None:
                events.append(self._take(ev))
        rec = self._recording
        if rec is not None and rec.aborted:
            events.append(self._drop(rec))
        elif rec is not None and block.host_time - rec.progress_at >= self._progress_s:
            rec.progress_at = block.host_time
            samples = block.end_index - rec.start
            events.append(CaptureProgress(rec.capture_id, samples, samples / self.rate))
        events.append(BlockSeen(block.end_index, block.host_time))
        return events

    def _start(self, ev: Triggered, host_time: float) -> CaptureStarted:
        # the pre-trigger never reaches back across a break of unknown length
        start = max(ev.capture_start, self.ring.oldest_index, self._segment)
        # the conditions (a lab's temperature) as the rig is let go, where the source reads any
        conditions = self.source.conditions() if isinstance(self.source, Conditions) else {}
        rec = self._recording = _Recording(new_capture_id(), start, ev, utc_now(),
                                           error_counts(self.health()), host_time,
                                           conditions=conditions)
        self.ring.retain_from(start)
        return CaptureStarted(rec.capture_id, ev, start, rec.started_utc)

    def _take(self, settled: Settled) -> CaptureTaken:
        rec, self._recording = self._recording, None
        assert rec is not None
        start = max(rec.start, self.ring.oldest_index)
        idx, counts = self.ring.window(start, settled.end_index)
        self.ring.release()
        trig = TriggerInfo(trigger_index=rec.trigger.trigger_index,
                           onset_index=rec.trigger.onset_index,
                           release_estimate=rec.trigger.release_estimate, start_index=start,
                           end_index=settled.end_index, end_reason=settled.reason,
                           started_utc=rec.started_utc)
        info = self.source.info  # re-read: a board reset changes the identity
        capture = Capture(capture_id=rec.capture_id, sample_index=idx.copy(),
                          counts=counts.copy(), sample_rate_hz=info.sample_rate_hz,
                          counts_per_rev=info.counts_per_rev, rig=self.rig, source=info,
                          trigger=trig, software_version=SOFTWARE_VERSION, kind=self.kind,
                          covariates=rec.conditions)
        return CaptureTaken(capture, grown(error_counts(self.health()), rec.link_errors))

    def _drop(self, rec: _Recording) -> CaptureAborted:
        self._recording = None
        self.ring.release()
        self.trigger.cancel()
        return CaptureAborted(rec.capture_id)
