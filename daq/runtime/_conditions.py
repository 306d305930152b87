"""What may suspend a session now: a full disk, a lost bridge, a corrupting link, a stuck encoder.

Read about twice a second by the session's watchdog and handed to the SuspenderWatch
(_suspenders.py), which turns them into suspensions, lifts and stops.
"""

from __future__ import annotations

import shutil
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from hilrig.drivers import LinkHealth, Source

from ..acquisition import AcquisitionEngine
from ._plan import SessionPlan

__all__ = ["SessionConditions"]

_BAD_FRAMES = ("crc_errors", "cobs_errors", "length_errors")


class SessionConditions:
    """The conditions of the moment (kind -> reason, or None when clear)."""

    def __init__(self, engine: AcquisitionEngine, source: Source, plan: SessionPlan,
                 folder: Path, still_band_counts: int,
                 joints: Sequence[tuple[int, str]],
                 held: Callable[[], str | None] = lambda: None) -> None:
        """`joints`: the channels that carry a joint and its name (the rig kind's)."""
        self.engine = engine
        self.joints = tuple(joints)
        self.held = held  # why captures taken wait to be kept (a full disk), or None
        self.source = source
        self.plan = plan
        self.folder = folder
        self.still_band_counts = still_band_counts
        self._bad_frames: deque[tuple[float, int]] = deque()
        self._stuck: str | None = None

    def now(self) -> dict[str, str | None]:
        return {"disk": self.disk(), "bridge": self.bridge(), "link": self.link(),
                "encoder": self.encoder()}

    def disk(self) -> str | None:
        """Captures taken that wait for room to be kept (the disk filled), or less free
        space in the archive than the plan's min_free_mb."""
        held = self.held()
        if held is not None:
            return f"disk: {held}"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # a full disk cannot hold a new folder either
            return f"disk: cannot make {self.folder}: {exc.strerror or exc}"
        free_mb = shutil.disk_usage(self.folder).free / 1e6
        if free_mb >= self.plan.min_free_mb:
            return None
        return (f"disk: less than {self.plan.min_free_mb:g} MB free in {self.folder} "
                f"(min_free_mb)")

    def bridge(self) -> str | None:
        """A source over a link that is lost and being reconnected."""
        if isinstance(self.source, LinkHealth) and not self.source.connected:
            return f"bridge: {self.source.info.identity} lost; reconnecting"
        return None

    def link(self) -> str | None:
        """Corrupted frames (CRC, COBS, length) faster than the plan allows, over <= 10 s."""
        errors = self.engine.health().get("errors", {})
        bad = sum(int(errors.get(k, 0)) for k in _BAD_FRAMES)
        now = time.monotonic()
        self._bad_frames.append((now, bad))
        while len(self._bad_frames) > 2 and now - self._bad_frames[0][0] > 10.0:
            self._bad_frames.popleft()
        t0, b0 = self._bad_frames[0]
        rate = (bad - b0) / (now - t0) if now - t0 >= 1.0 else 0.0
        if rate > self.plan.max_link_errors_per_s:
            return (f"link: more than {self.plan.max_link_errors_per_s:g} corrupted frames "
                    "per second")
        return None

    def encoder(self) -> str | None:
        """A joint without a count for 2 s while another swings; sticky until all move.

        Only 2 s of free motion are judged, all after the trigger: the rig put to its pose
        by hand moves one joint alone, and a joint coupled to the other takes some
        milliseconds after the release to move one count. A rig of one joint (a single
        pendulum) has none to compare: its stuck encoder is a capture that times out.
        """
        if len(self.joints) < 2:
            return None
        n = int(2.0 * self.source.info.sample_rate_hz)
        counts = self.engine.latest(n)
        if counts.shape[0] < n // 2:
            return self._stuck
        span = counts.max(axis=0).astype("int64") - counts.min(axis=0)
        spans = {name: int(span[channel]) for channel, name in self.joints}
        since = self.engine.recording_since
        if self._stuck is not None:
            if all(s > self.still_band_counts for s in spans.values()):
                self._stuck = None  # all move again
        elif since is not None and counts.shape[0] == n \
                and self.engine.newest_index - n >= since:
            moved = max(spans.values())
            for name, s in spans.items():
                if s == 0 and moved > 400:
                    self._stuck = (f"encoder: {name} did not count for 2 s while another "
                                   f"joint moved {moved} counts")
                    break
        return self._stuck
