"""Wire format between the microcontroller bridge and the host (COBS frames, CRC-32).

Depends on numpy only. The normative description is SPEC.md beside this file; the
shared test vectors are in ``vectors/``
(``python -m hilrig.firmware_protocol.vectors.make_vectors``).

- ``cobs_encode`` / ``cobs_decode``: canonical COBS without the delimiter.
- ``encode_frame`` / ``parse_frame``: wire bytes of one frame / checks of an unstuffed one.
- ``encode_message`` / ``decode_message``: the message dataclasses of SPEC 4.
- ``StreamDecoder``: bytes in any chunking -> ``(Frame, Message)`` pairs, with counters.
"""

from ._cobs import CobsError, cobs_decode, cobs_encode
from ._frame import (
    HEADER_SIZE,
    LAYOUT,
    LAYOUT_HASH,
    MAX_ENCODED,
    MAX_FRAME,
    MAX_PAYLOAD,
    MAX_SAMPLES_PER_FRAME,
    TRAILER_SIZE,
    VERSION_MAJOR,
    VERSION_MINOR,
    CrcError,
    Flags,
    Frame,
    FrameError,
    LengthError,
    MsgType,
    UnknownVersionError,
    crc32,
    encode_frame,
    parse_frame,
)
from ._messages import (
    CAP_RELEASE_OUTPUT,
    MAX_FIRMWARE_ID,
    NAK_NO_RELEASE_OUTPUT,
    Ack,
    BadPayloadError,
    Hello,
    Info,
    Message,
    Nak,
    Ping,
    Release,
    Samples,
    Start,
    Status,
    Stop,
    UnknownTypeError,
    Zero,
    decode_message,
    default_info,
    encode_message,
)
from ._stream import StreamDecoder

__all__ = [
    "CobsError", "cobs_decode", "cobs_encode",
    "HEADER_SIZE", "TRAILER_SIZE", "MAX_FRAME", "MAX_PAYLOAD", "MAX_ENCODED",
    "MAX_SAMPLES_PER_FRAME", "VERSION_MAJOR", "VERSION_MINOR", "LAYOUT", "LAYOUT_HASH",
    "MsgType", "Flags", "Frame", "FrameError", "CrcError", "LengthError",
    "UnknownVersionError", "UnknownTypeError", "BadPayloadError", "crc32",
    "encode_frame", "parse_frame",
    "Hello", "Start", "Stop", "Zero", "Ping", "Release", "Info", "Samples", "Status", "Ack",
    "Nak", "Message", "MAX_FIRMWARE_ID", "CAP_RELEASE_OUTPUT", "NAK_NO_RELEASE_OUTPUT",
    "decode_message", "encode_message", "default_info",
    "StreamDecoder",
]
