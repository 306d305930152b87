"""Receiving side: split a byte stream into frames and messages (SPEC.md 1, 2, 4.3)."""

from __future__ import annotations

import zlib

import numpy as np

from ._cobs import MAX_ENCODED, cobs_decode_many
from ._frame import CRC_RESIDUE, HEADER, KNOWN_FLAGS, MAX_FRAME, Frame, MsgType
from ._messages import (
    Ack,
    BadPayloadError,
    Message,
    Samples,
    UnknownTypeError,
    decode_message,
)

__all__ = ["StreamDecoder"]

_COUNTERS = ("bytes_in", "frames_ok", "crc_errors", "cobs_errors", "oversize",
             "length_errors", "unknown_version", "unknown_type", "bad_payload",
             "lost_frames", "lost_samples")
_HALF = 1 << 31
_MASK = 0xFFFFFFFF
_PAIRS = np.dtype(("<i4", 2))  # np.frombuffer(payload, _PAIRS) has shape (n, 2), int32


class StreamDecoder:
    """Incremental receiver: ``feed`` bytes in any chunking, get ``(Frame, Message)``s.

    Never raises on any bytes and yields only frames whose CRC matched. Every dropped
    frame is counted in one attribute (also ``counters()``) and the receiver
    resynchronises at the next 0x00. Checks in order:

    - ``oversize``: more than 1030 bytes without a delimiter (SPEC 1; everything up to the
      next 0x00 is then discarded unseen), or a segment that unstuffs to > MAX_FRAME.
    - ``cobs_errors``: a segment between delimiters that is not valid COBS.
    - ``unknown_version``: byte 0 of the unstuffed frame is not 1. Nothing else is read,
      not even the CRC (SPEC 2), so noise and a damaged byte 0 also count here.
    - ``length_errors``: fewer than 20 bytes (also the COBS of an empty frame, ``01 00``),
      or length != 20 + payload_len (after the CRC).
    - ``crc_errors``; then ``unknown_type`` and ``bad_payload`` (SPEC 4).

    Sequence accounting (only frames taken as messages take part: a CRC-valid frame of
    an unknown type or with a bad payload is line garbage whose seq means nothing):

    - ``lost_frames``: sum of ``d - 1`` over seq steps ``d = seq - last_seq (mod 2**32)``
      with ``1 < d < 2**31``; a repeat or a step backwards counts nothing and re-bases.
      An INFO frame re-bases without counting (the device restarts its seq at INFO).
    - ``lost_samples``: over consecutive delivered SAMPLES messages, the sum of the forward
      gaps ``first_sample - (prev.first_sample + prev.n_samples) (mod 2**32)`` below
      2**31. An ACK of START sets the expected next sample to 0, so frames lost right
      after START count; an INFO forgets it. Samples lost after the last delivered
      SAMPLES frame (or before the first, without an ACK of START) cannot be seen.

    ``reset_sequence()`` forgets the last seq and the expected sample (new session);
    counters are never reset.
    """

    def __init__(self) -> None:
        self.bytes_in = 0
        self.frames_ok = 0
        self.crc_errors = 0
        self.cobs_errors = 0
        self.oversize = 0
        self.length_errors = 0
        self.unknown_version = 0
        self.unknown_type = 0
        self.bad_payload = 0
        self.lost_frames = 0
        self.lost_samples = 0
        self._buf = b""
        self._discarding = False
        self._last_seq: int | None = None
        self._next_sample: int | None = None

    def reset_sequence(self) -> None:
        """Forget the last seq and next sample index: the next frame starts afresh."""
        self._last_seq = None
        self._next_sample = None

    def counters(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in _COUNTERS}

    @property
    def buffered(self) -> int:
        """Bytes held waiting for a delimiter (never more than 1030)."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[tuple[Frame, Message]]:
        """Decode every frame that ``chunk`` completes, in order."""
        chunk = bytes(chunk)
        self.bytes_in += len(chunk)
        if self._discarding:
            i = chunk.find(b"\x00")
            if i < 0:
                return []
            self._discarding = False
            chunk = chunk[i + 1:]
        last = chunk.rfind(b"\x00")
        if last < 0:
            if len(self._buf) + len(chunk) > MAX_ENCODED:
                self._overflow()
            else:
                self._buf += chunk
            return []
        if last + 1 == len(chunk):
            data = self._buf + chunk if self._buf else chunk
            self._buf = b""
        else:
            data = self._buf + chunk[:last + 1]
            tail = chunk[last + 1:]
            if len(tail) > MAX_ENCODED:
                self._overflow()
            else:
                self._buf = tail
        raws, cobs_errors, oversize = cobs_decode_many(data)
        if cobs_errors or oversize:
            self.cobs_errors += cobs_errors
            self.oversize += oversize
        return self._frames(raws)

    def _overflow(self) -> None:
        self.oversize += 1
        self._buf = b""
        self._discarding = True

    def _frames(self, raws: list[bytes]) -> list[tuple[Frame, Message]]:
        out: list[tuple[Frame, Message]] = []
        append = out.append
        crc32 = zlib.crc32
        unpack_from = HEADER.unpack_from
        frombuffer = np.frombuffer
        new = object.__new__
        last_seq = self._last_seq
        next_sample = self._next_sample
        lost_frames = lost_samples = 0
        for raw in raws:
            n = len(raw)
            if n < 20 or n > MAX_FRAME or raw[0] != 1:
                if n > MAX_FRAME:
                    self.oversize += 1
                elif n and raw[0] != 1:
                    self.unknown_version += 1
                else:  # short, or COBS of an empty frame ("01 00")
                    self.length_errors += 1
                continue
            if crc32(raw) != CRC_RESIDUE:
                self.crc_errors += 1
                continue
            version, t, flags, seq, first, n_samples, plen = unpack_from(raw)
            if n != plen + 20:
                self.length_errors += 1
                continue
            payload = raw[16:-4]
            frame = new(Frame)  # the frozen dataclass, filled without its __init__
            frame.__dict__.update(version_major=version, msg_type=t, flags=flags, seq=seq,
                                  first_sample=first, n_samples=n_samples, payload=payload)
            if t == 0x82:  # SAMPLES: the hot path
                if plen != 8 * n_samples:
                    self.bad_payload += 1
                    continue
                msg: Message = new(Samples)
                msg.__dict__.update(first_sample=first, counts=frombuffer(payload, _PAIRS),
                                    flags=flags & KNOWN_FLAGS)
                if next_sample is not None:
                    gap = (first - next_sample) & _MASK
                    if gap < _HALF:
                        lost_samples += gap
                next_sample = (first + n_samples) & _MASK
            else:
                try:
                    msg = decode_message(frame)
                except UnknownTypeError:
                    self.unknown_type += 1
                    continue
                except BadPayloadError:
                    self.bad_payload += 1
                    continue
                if t == 0x84:
                    if isinstance(msg, Ack) and msg.acked_type == MsgType.START:
                        next_sample = 0
                elif t == 0x81:
                    next_sample = None
            # only a frame taken as a message counts in the sequence: one of an unknown
            # type or with a bad payload (line garbage that kept a valid CRC) may carry
            # any seq, and would count billions of frames as lost
            if last_seq is not None and t != 0x81:
                d = (seq - last_seq) & _MASK
                if 1 < d < _HALF:
                    lost_frames += d - 1
            last_seq = seq
            append((frame, msg))
        self._last_seq = last_seq
        self._next_sample = next_sample
        self.lost_frames += lost_frames
        self.lost_samples += lost_samples
        self.frames_ok += len(out)
        return out
