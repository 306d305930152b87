"""Frame layout (SPEC.md section 2), CRC-32, flags and message type numbers."""

from __future__ import annotations

import enum
import struct
import zlib
from dataclasses import dataclass

from ._cobs import MAX_ENCODED as _MAX_ENCODED
from ._cobs import cobs_encode

__all__ = [
    "VERSION_MAJOR", "VERSION_MINOR", "HEADER_SIZE", "TRAILER_SIZE", "MAX_FRAME",
    "MAX_PAYLOAD", "MAX_SAMPLES_PER_FRAME", "MAX_ENCODED", "LAYOUT", "LAYOUT_HASH",
    "MsgType", "Flags", "Frame", "FrameError", "CrcError", "LengthError",
    "UnknownVersionError", "crc32", "encode_frame", "parse_frame",
]

VERSION_MAJOR = 1
VERSION_MINOR = 1
HEADER_SIZE = 16
TRAILER_SIZE = 4
MAX_FRAME = 1024
MAX_PAYLOAD = MAX_FRAME - HEADER_SIZE - TRAILER_SIZE
MAX_SAMPLES_PER_FRAME = MAX_PAYLOAD // 8  # 125
#: Receive bound of SPEC 1: more than this many bytes without a delimiter is oversize.
MAX_ENCODED = _MAX_ENCODED  # 1030, SPEC 1
LAYOUT = "hilrig-bridge/1 hdr=u8,u8,u16,u32,u32,u16,u16 crc32 samples=i32le*2"

HEADER = struct.Struct("<BBHIIHH")
#: zlib.crc32(x + crc32(x) as u32 LE) for any x: checks a frame's CRC in one call.
CRC_RESIDUE = 0x2144DF1C
_CRC = struct.Struct("<I")


def crc32(data: bytes) -> int:
    """CRC-32 of SPEC 2 (zlib / IEEE 802.3); ``crc32(b"123456789") == 0xCBF43926``."""
    return zlib.crc32(data)


LAYOUT_HASH = crc32(LAYOUT.encode())


class MsgType(enum.IntEnum):
    HELLO = 0x01
    START = 0x02
    STOP = 0x03
    ZERO = 0x04
    PING = 0x05
    RELEASE = 0x06
    INFO = 0x81
    SAMPLES = 0x82
    STATUS = 0x83
    ACK = 0x84
    NAK = 0x85


class Flags(enum.IntFlag):
    DEVICE_OVERRUN = 1
    ILLEGAL_TRANSITION_0 = 2
    ILLEGAL_TRANSITION_1 = 4
    LATE_SAMPLE = 8


#: Flag bits defined by version 1.0; bits 4-15 are reserved and ignored by receivers.
KNOWN_FLAGS = 0x000F


class FrameError(ValueError):
    """An unstuffed frame that must be dropped (SPEC 2)."""


class CrcError(FrameError):
    """The CRC-32 does not match."""


class LengthError(FrameError):
    """The frame is shorter than 20 bytes, longer than MAX_FRAME, or not 20 + payload_len."""


class UnknownVersionError(FrameError):
    """version_major is not 1: the frame is not parsed any further."""


@dataclass(frozen=True)
class Frame:
    """One frame, header fields as sent (flags unmasked), payload without CRC."""

    version_major: int
    msg_type: int
    flags: int
    seq: int
    first_sample: int
    n_samples: int
    payload: bytes


def encode_frame(msg_type: int, seq: int, payload: bytes = b"", *, flags: int = 0,
                 first_sample: int = 0, n_samples: int = 0) -> bytes:
    """Wire bytes of one frame: ``COBS(header payload crc32) 00``.

    ``seq`` is taken modulo 2**32 (the counter wraps); every other field must fit its
    width (ValueError otherwise); a payload over MAX_PAYLOAD raises LengthError.
    """
    payload = bytes(payload)
    if len(payload) > MAX_PAYLOAD:
        raise LengthError(f"payload of {len(payload)} bytes > {MAX_PAYLOAD}")
    try:
        head = HEADER.pack(VERSION_MAJOR, msg_type, flags, seq & 0xFFFFFFFF, first_sample,
                            n_samples, len(payload))
    except struct.error as exc:
        raise ValueError(f"header field out of range: {exc}") from None
    body = head + payload
    return cobs_encode(body + _CRC.pack(zlib.crc32(body))) + b"\x00"


def parse_frame(unstuffed: bytes) -> Frame:
    """Check and split an unstuffed frame (COBS already removed).

    Checks, in this order (each raises the error named): more than MAX_FRAME bytes
    (LengthError); version_major, byte 0, not 1 (UnknownVersionError: nothing after
    byte 0 is read, not even the CRC); fewer than 20 bytes (LengthError); CRC-32 of all
    but the last four bytes against those four (CrcError); ``len != 20 + payload_len``
    (LengthError). Message types and payloads are checked by ``decode_message``.
    """
    unstuffed = bytes(unstuffed)
    n = len(unstuffed)
    if n > MAX_FRAME:
        raise LengthError(f"frame of {n} bytes > MAX_FRAME")
    if n == 0:
        raise LengthError("empty frame")
    if unstuffed[0] != VERSION_MAJOR:
        raise UnknownVersionError(f"version_major {unstuffed[0]}")
    if n < HEADER_SIZE + TRAILER_SIZE:
        raise LengthError(f"frame of {n} bytes < 20")
    if zlib.crc32(unstuffed) != CRC_RESIDUE:
        raise CrcError("CRC-32 mismatch")
    version, msg_type, flags, seq, first, n_samples, plen = HEADER.unpack_from(unstuffed)
    if n != HEADER_SIZE + TRAILER_SIZE + plen:
        raise LengthError(f"frame of {n} bytes, payload_len {plen}")
    return Frame(version, msg_type, flags, seq, first, n_samples, unstuffed[16:-4])
