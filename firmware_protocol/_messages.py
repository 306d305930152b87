"""Message payloads (SPEC.md section 4): one frozen dataclass per message type."""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ._frame import (
    KNOWN_FLAGS,
    LAYOUT_HASH,
    MAX_SAMPLES_PER_FRAME,
    VERSION_MAJOR,
    VERSION_MINOR,
    Frame,
    FrameError,
    MsgType,
    encode_frame,
)

__all__ = [
    "Hello", "Start", "Stop", "Zero", "Ping", "Release", "Info", "Samples", "Status", "Ack",
    "Nak", "Message", "UnknownTypeError", "BadPayloadError", "decode_message", "encode_message",
    "MAX_FIRMWARE_ID", "CAP_RELEASE_OUTPUT", "NAK_NO_RELEASE_OUTPUT",
]

#: INFO capabilities bit 0 (protocol 1.1): the board drives a release latch (RELEASE).
CAP_RELEASE_OUTPUT = 0x0001
#: NAK reason (protocol 1.1): RELEASE on a board without a release output.
NAK_NO_RELEASE_OUTPUT = 5

MAX_FIRMWARE_ID = 64
_U32 = struct.Struct("<I")
_INFO = struct.Struct("<BBHIIIIQHHIII")      # 44 bytes, then the firmware id
_STATUS = struct.Struct("<QIIIIII")          # 32 bytes
_ACK = struct.Struct("<IB3xI")               # 12 bytes
_NAK = struct.Struct("<IBB2xI")              # 12 bytes
_SAMPLE_DTYPE = np.dtype("<i4")


class UnknownTypeError(FrameError):
    """msg_type is not one of SPEC 4's."""


class BadPayloadError(FrameError):
    """The payload (or n_samples) does not fit the message type."""


@dataclass(frozen=True)
class Hello:
    """Host -> device: answer with INFO and restart the send seq at 0."""


@dataclass(frozen=True)
class Start:
    sample_rate_hz: int


@dataclass(frozen=True)
class Stop:
    pass


@dataclass(frozen=True)
class Zero:
    """Both counters become 0 at the next sample."""


@dataclass(frozen=True)
class Ping:
    token: int


@dataclass(frozen=True)
class Release:
    """Host -> device (1.1): drive the release output for pulse_ms (0: the board's default).

    ACK value: the index of the first sample taken with the output driven.
    """

    pulse_ms: int = 0


@dataclass(frozen=True)
class Info:
    proto_major: int
    proto_minor: int
    sample_rate_hz: int
    counts_per_rev: tuple[int, int]
    layout_hash: int
    boot_id: int
    max_samples_per_frame: int
    firmware_id: str
    capabilities: int = 0  # 1.1: CAP_RELEASE_OUTPUT; a 1.0 board sends 0 (reserved)


@dataclass(frozen=True, eq=False)
class Samples:
    """``counts``: (n, 2) int32 absolute counts (arm, pendulum), read-only when decoded.

    ``flags`` holds the frame's defined flag bits (reserved bits are dropped).
    """

    first_sample: int
    counts: np.ndarray
    flags: int = 0

    def __post_init__(self) -> None:
        counts = self.counts
        if not isinstance(counts, np.ndarray) or counts.dtype != _SAMPLE_DTYPE:
            counts = np.asarray(counts)
            if counts.size and counts.dtype.kind not in "iu":
                raise ValueError(f"counts must be integers, not {counts.dtype}")
            if counts.size and (counts.min() < -2**31 or counts.max() >= 2**31):
                raise ValueError("counts must fit int32")
            counts = counts.astype(_SAMPLE_DTYPE)
            if counts.size == 0:
                counts = counts.reshape(0, 2)
            object.__setattr__(self, "counts", counts)
        if counts.ndim != 2 or counts.shape[1] != 2:
            raise ValueError(f"counts must have shape (n, 2), not {counts.shape}")

    @property
    def n_samples(self) -> int:
        return self.counts.shape[0]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Samples):
            return NotImplemented
        return (self.first_sample == other.first_sample and self.flags == other.flags
                and np.array_equal(self.counts, other.counts))

    __hash__ = None  # type: ignore[assignment]  # equal by array contents: unhashable

    def __repr__(self) -> str:
        return (f"Samples(first_sample={self.first_sample}, n={self.counts.shape[0]}, "
                f"flags={self.flags:#x})")


@dataclass(frozen=True)
class Status:
    device_us: int
    samples_taken: int
    frames_dropped: int
    samples_dropped: int
    overruns: int
    illegal_0: int
    illegal_1: int
    next_sample: int


@dataclass(frozen=True)
class Ack:
    acked_seq: int
    acked_type: int
    value: int = 0


@dataclass(frozen=True)
class Nak:
    acked_seq: int
    acked_type: int
    reason: int
    value: int = 0


Message = Hello | Start | Stop | Zero | Ping | Release | Info | Samples | Status | Ack | Nak

_EMPTY: dict[MsgType, Message] = {MsgType.HELLO: Hello(), MsgType.STOP: Stop(),
                                  MsgType.ZERO: Zero()}
_KNOWN = frozenset(int(t) for t in MsgType)


def _bad(frame: Frame, what: str) -> BadPayloadError:
    return BadPayloadError(f"{MsgType(frame.msg_type).name}: {what} "
                           f"(payload {len(frame.payload)} bytes, n_samples {frame.n_samples})")


def decode_message(frame: Frame) -> Message:
    """The message a checked frame carries.

    Raises UnknownTypeError for a type outside SPEC 4 and BadPayloadError when the
    payload length (or n_samples) does not fit the type. Reserved fields are ignored.
    """
    t = frame.msg_type
    payload = frame.payload
    if t == 0x82:  # SAMPLES, the hot path
        n = frame.n_samples
        if len(payload) != 8 * n:
            raise _bad(frame, "payload is not 8 * n_samples bytes")
        counts = np.frombuffer(payload, _SAMPLE_DTYPE).reshape(n, 2)
        return Samples(frame.first_sample, counts, frame.flags & KNOWN_FLAGS)
    if t not in _KNOWN:
        raise UnknownTypeError(f"unknown msg_type {t:#04x}")
    n = len(payload)
    if t == 0x81:
        if n < _INFO.size or n > _INFO.size + MAX_FIRMWARE_ID:
            raise _bad(frame, f"INFO payload must be 44..{44 + MAX_FIRMWARE_ID} bytes")
        (pmaj, pmin, caps, rate, cpr0, cpr1, lhash, boot, maxspf,
         _r1, _dev_us, _r2, _r3) = _INFO.unpack_from(payload)
        fw_id = payload[_INFO.size:].decode("utf-8", errors="replace")
        return Info(pmaj, pmin, rate, (cpr0, cpr1), lhash, boot, maxspf, fw_id, caps)
    if t == 0x83:
        if n != _STATUS.size:
            raise _bad(frame, "STATUS payload must be 32 bytes")
        us, taken, frames_dropped, samples_dropped, overruns, ill0, ill1 = _STATUS.unpack(payload)
        return Status(us, taken, frames_dropped, samples_dropped, overruns, ill0, ill1,
                      frame.first_sample)
    if t in (0x84, 0x85):
        if n != _ACK.size:
            raise _bad(frame, "ACK/NAK payload must be 12 bytes")
        if t == 0x84:
            return Ack(*_ACK.unpack(payload))
        return Nak(*_NAK.unpack(payload))
    if t in (0x02, 0x05, 0x06):
        if n != 4:
            raise _bad(frame, "payload must be 4 bytes")
        value = _U32.unpack(payload)[0]
        return Start(value) if t == 0x02 else Ping(value) if t == 0x05 else Release(value)
    if n != 0:  # HELLO, STOP, ZERO
        raise _bad(frame, "payload must be empty")
    return _EMPTY[MsgType(t)]


def encode_message(msg: Message, seq: int, flags: int = 0) -> bytes:
    """Wire bytes (``COBS(frame) 00``) of ``msg`` sent with sequence number ``seq``.

    The frame's flags are ``flags | msg.flags`` for Samples and ``flags`` otherwise.
    STATUS carries next_sample in first_sample; SAMPLES carries first_sample and
    n_samples; every other type sends them as 0.
    """
    try:
        if isinstance(msg, Samples):
            n = msg.counts.shape[0]
            if n > MAX_SAMPLES_PER_FRAME:
                raise ValueError(f"{n} samples > MAX_SAMPLES_PER_FRAME")
            return encode_frame(MsgType.SAMPLES, seq, msg.counts.astype(_SAMPLE_DTYPE).tobytes(),
                                flags=flags | msg.flags, first_sample=msg.first_sample,
                                n_samples=n)
        if isinstance(msg, Status):
            payload = _STATUS.pack(msg.device_us, msg.samples_taken, msg.frames_dropped,
                                   msg.samples_dropped, msg.overruns, msg.illegal_0,
                                   msg.illegal_1)
            return encode_frame(MsgType.STATUS, seq, payload, flags=flags,
                                first_sample=msg.next_sample)
        if isinstance(msg, Info):
            fw_id = msg.firmware_id.encode("utf-8")
            if len(fw_id) > MAX_FIRMWARE_ID:
                raise ValueError(f"firmware_id of {len(fw_id)} bytes > {MAX_FIRMWARE_ID}")
            payload = _INFO.pack(msg.proto_major, msg.proto_minor, msg.capabilities,
                                 msg.sample_rate_hz,
                                 msg.counts_per_rev[0], msg.counts_per_rev[1], msg.layout_hash,
                                 msg.boot_id, msg.max_samples_per_frame, 0, 0, 0, 0) + fw_id
            return encode_frame(MsgType.INFO, seq, payload, flags=flags)
        if isinstance(msg, Ack):
            return encode_frame(MsgType.ACK, seq, _ACK.pack(msg.acked_seq, msg.acked_type,
                                                            msg.value), flags=flags)
        if isinstance(msg, Nak):
            return encode_frame(MsgType.NAK, seq, _NAK.pack(msg.acked_seq, msg.acked_type,
                                                            msg.reason, msg.value), flags=flags)
        if isinstance(msg, Start):
            return encode_frame(MsgType.START, seq, _U32.pack(msg.sample_rate_hz), flags=flags)
        if isinstance(msg, Ping):
            return encode_frame(MsgType.PING, seq, _U32.pack(msg.token), flags=flags)
        if isinstance(msg, Release):
            return encode_frame(MsgType.RELEASE, seq, _U32.pack(msg.pulse_ms), flags=flags)
    except struct.error as exc:
        raise ValueError(f"{type(msg).__name__}: field out of range: {exc}") from None
    for t, empty in _EMPTY.items():
        if type(msg) is type(empty):
            return encode_frame(t, seq, b"", flags=flags)
    raise TypeError(f"not a protocol message: {msg!r}")


def default_info(firmware_id: str = "", *, sample_rate_hz: int = 10_000,
                 counts_per_rev: tuple[int, int] = (40_000, 40_000), boot_id: int = 0,
                 max_samples_per_frame: int = MAX_SAMPLES_PER_FRAME, capabilities: int = 0
                 ) -> Info:
    """An INFO of this protocol version (proto 1.1, this LAYOUT_HASH)."""
    return Info(VERSION_MAJOR, VERSION_MINOR, sample_rate_hz, counts_per_rev, LAYOUT_HASH,
                boot_id, max_samples_per_frame, firmware_id, capabilities)
