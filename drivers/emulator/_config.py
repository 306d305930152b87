"""What the emulated board does (its configuration and fault knobs) and what it records."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hilrig.firmware_protocol import LAYOUT_HASH, MAX_SAMPLES_PER_FRAME, MsgType
from hilrig.identify.model import FrictionParams, RigParams
from hilrig.identify.reference import TABLE_III_TRUTH

__all__ = ["EmulatorConfig", "EmulatorRecord", "SentFrame", "Session", "Spoiled", "parse_window"]


@dataclass
class EmulatorConfig:
    """Everything the emulated board does; the defaults are a healthy bridge at 10 kHz."""

    rate_hz: int = 10_000
    samples_per_frame: int = 10
    counts_per_rev: int = 40_000
    pose_deg: tuple[float, float] = (0.0, 120.0)
    hold_s: float = 1.0  # held at the pose this long before each release
    rehold_still_s: float | None = 2.0  # re-held after still this long; None: released once
    rig: RigParams | None = None
    friction: FrictionParams = TABLE_III_TRUTH
    paced: bool = True
    status_period_s: float = 1.0
    firmware_id: str = "hilrig-emulator/1.0"
    link: str | None = None  # symlink kept pointing at the current pty
    tx_buffer: int = 16_384  # device transmit buffer, bytes
    fifo_s: float = 0.25  # samples waiting for room in the transmit buffer (paced), seconds
    seed: int | None = None  # random faults and boot ids; None: fresh entropy
    start_index: int = 0  # first_sample of sample 0 after START (SPEC: 0; tests: near 2**32)
    # faults
    corrupt: float = 0.0
    drop: float = 0.0
    stall: tuple[float, float] | None = None
    reset_at: float | None = None
    vanish: tuple[float, float] | None = None
    garbage: tuple[float, float] | None = None
    latch: bool = False  # a release output (protocol 1.1): held until RELEASE
    # keep every SAMPLES frame handed over in record.sent (about 150 B a frame: 0.5 GB an
    # hour at 10 kHz, so only when asked, for tests and --dump)
    record_sent: bool = False
    version: int = 1
    layout_hash: int = LAYOUT_HASH

    def __post_init__(self) -> None:
        if not 1 <= self.samples_per_frame <= MAX_SAMPLES_PER_FRAME:
            raise ValueError(f"samples_per_frame must be 1..{MAX_SAMPLES_PER_FRAME}")
        if not 0 < self.rate_hz < 2**32:
            raise ValueError(f"rate_hz must be a positive u32, got {self.rate_hz}")
        for name in ("corrupt", "drop"):
            p = getattr(self, name)
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name} must be a probability in [0, 1], got {p}")
        for name in ("stall", "vanish", "garbage"):
            w = getattr(self, name)
            if w is not None and not (w[0] >= 0 and w[1] > 0):
                raise ValueError(f"{name} needs T >= 0 and S > 0, got {w}")
        if not 1 <= self.version <= 255:
            raise ValueError(f"version must be 1..255, got {self.version}")


@dataclass(frozen=True, slots=True)
class Spoiled:
    """A frame the host cannot have received intact."""

    session: int  # index into record.sessions (-1: before any START)
    msg_type: int
    first_sample: int  # SAMPLES: device index of its first sample (u32)
    n_samples: int
    reason: str


@dataclass(frozen=True, slots=True)
class Session:
    """One START: device sample 0 (first_sample start_index) is feed sample `feed_index`."""

    boot_id: int
    feed_index: int
    start_index: int
    time: float  # time.monotonic() of the START


@dataclass(frozen=True, slots=True)
class SentFrame:
    """A SAMPLES frame handed to the link: device indices first_sample.. and their counts."""

    session: int
    first_sample: int
    counts: np.ndarray  # int32 (n, 2)


@dataclass
class EmulatorRecord:
    """What the emulator did, for tests (appended by the emulator thread; read when idle)."""

    boot_ids: list[int] = field(default_factory=list)
    sessions: list[Session] = field(default_factory=list)
    spoiled: list[Spoiled] = field(default_factory=list)
    ports: list[str] = field(default_factory=list)  # every pty opened
    frames_sent: int = 0
    samples_sent: int = 0  # samples in SAMPLES frames written (intact or spoiled)
    commands: list[str] = field(default_factory=list)  # host messages, by name
    releases: list[int] = field(default_factory=list)  # device index of every latch release
    events: list[tuple[float, str]] = field(default_factory=list)
    sent: list[SentFrame] = field(default_factory=list)  # every SAMPLES frame handed over
    # (session, first_sample) of SAMPLES frames in the kernel's buffers when a port vanished
    # before the host had read them: the pty holds up to tens of kB that FIONREAD does not
    # count, so whether each reached the host is unknown (neither intact nor spoiled)
    unsure: list[tuple[int, int]] = field(default_factory=list)

    def intact(self, session: int) -> dict[int, np.ndarray]:
        """Device index -> counts of every sample of `session` that reached the host's
        side of the link intact (sent, and not spoiled on the way or lost with the port)."""
        spoiled = {s.first_sample for s in self.spoiled
                   if s.session == session and s.msg_type == MsgType.SAMPLES}
        spoiled |= self._unsure(session)
        return self._samples(session, lambda first: first not in spoiled)

    def maybe(self, session: int) -> dict[int, np.ndarray]:
        """Device index -> counts of the samples of `session` in `unsure` frames."""
        unsure = self._unsure(session)
        return self._samples(session, lambda first: first in unsure)

    def _unsure(self, session: int) -> set[int]:
        return {first for sess, first in self.unsure if sess == session}

    def _samples(self, session: int, keep: Callable[[int], bool]) -> dict[int, np.ndarray]:
        out: dict[int, np.ndarray] = {}
        for frame in self.sent:
            if frame.session == session and keep(frame.first_sample):
                for k, row in enumerate(frame.counts):
                    out[(frame.first_sample + k) & 0xFFFFFFFF] = row
        return out

    def save(self, path: str) -> None:
        """Write what the emulator did to an .npz file (see load): its sessions, the frames
        it spoiled or lost and why, and, with record_sent, every SAMPLES frame it sent."""
        sizes = [len(f.counts) for f in self.sent]
        np.savez_compressed(
            path,
            boot_ids=np.array(self.boot_ids, np.uint64),
            sessions=np.array([(s.boot_id, s.feed_index, s.start_index, s.time)
                               for s in self.sessions], np.float64).reshape(-1, 4),
            session_boot_ids=np.array([s.boot_id for s in self.sessions], np.uint64),
            spoiled=np.array([(s.session, s.msg_type, s.first_sample, s.n_samples)
                              for s in self.spoiled], np.int64).reshape(-1, 4),
            spoiled_reason=np.array([s.reason for s in self.spoiled], dtype=np.str_),
            sent_frames=np.array([(f.session, f.first_sample, n)
                                  for f, n in zip(self.sent, sizes)], np.int64).reshape(-1, 3),
            sent_counts=(np.concatenate([f.counts for f in self.sent]) if self.sent
                         else np.zeros((0, 2), np.int32)),
            unsure=np.array(self.unsure, np.int64).reshape(-1, 2),
            frames_sent=np.int64(self.frames_sent), samples_sent=np.int64(self.samples_sent),
            events=np.array([f"{t:.6f} {what}" for t, what in self.events], dtype=np.str_))

    @classmethod
    def load(cls, path: str) -> EmulatorRecord:
        """A record written by save (its commands, ports and releases are not kept)."""
        with np.load(path) as d:
            rec = cls(boot_ids=[int(b) for b in d["boot_ids"]],
                      frames_sent=int(d["frames_sent"]), samples_sent=int(d["samples_sent"]))
            rec.sessions = [Session(int(b), int(row[1]), int(row[2]), float(row[3]))
                            for b, row in zip(d["session_boot_ids"], d["sessions"])]
            rec.spoiled = [Spoiled(int(a), int(b), int(c), int(n), str(r))
                           for (a, b, c, n), r in zip(d["spoiled"], d["spoiled_reason"])]
            counts, at = d["sent_counts"], 0
            for session, first, n in d["sent_frames"]:
                rec.sent.append(SentFrame(int(session), int(first), counts[at:at + n]))
                at += int(n)
            rec.events = [(float(e.split(" ", 1)[0]), e.split(" ", 1)[1]) for e in d["events"]]
            if "unsure" in d:  # (a dump of an earlier emulator has none)
                rec.unsure = [(int(a), int(b)) for a, b in d["unsure"]]
        return rec

    def lost_samples(self, session: int = 0) -> list[tuple[int, int]]:
        """(first_sample, n) of every SAMPLES frame of `session` that did not arrive intact."""
        seen: dict[int, int] = {}
        for s in self.spoiled:
            if s.session == session and s.msg_type == MsgType.SAMPLES:
                seen[s.first_sample] = s.n_samples
        return sorted(seen.items())


def parse_window(text: str, what: str) -> tuple[float, float]:
    """'T:S' -> (T, S) seconds; S may be 'inf'."""
    try:
        t, s = text.split(":")
        window = (float(t), float(s))
    except ValueError:
        raise ValueError(f"{what}: expected T:S (seconds), got {text!r}") from None
    if not (math.isfinite(window[0]) and window[0] >= 0 and window[1] > 0):
        raise ValueError(f"{what}: need T >= 0 and S > 0, got {text!r}")
    return window
