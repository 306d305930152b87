"""Line garbage the emulated board sends instead of frames (the ``garbage`` fault)."""

from __future__ import annotations

import numpy as np

from hilrig.firmware_protocol import MsgType, cobs_decode, cobs_encode, encode_frame

__all__ = ["garbage"]


def garbage(rng: np.random.Generator) -> bytes:
    """One piece of line garbage: noise, an overlong run, or a frame that must be rejected."""
    kind = int(rng.integers(0, 6))
    if kind == 0:  # uniform noise (zeros included)
        return rng.integers(0, 256, int(rng.integers(1, 400)), dtype=np.uint8).tobytes()
    if kind == 1:  # more than MAX_FRAME + 6 bytes without a delimiter: oversize
        return rng.integers(1, 256, int(rng.integers(1031, 1600)), dtype=np.uint8).tobytes()
    seq = int(rng.integers(0, 2**32))
    if kind == 2:  # a SAMPLES frame whose CRC is wrong
        body = bytearray(encode_frame(MsgType.SAMPLES, seq, bytes(80), first_sample=seq,
                                      n_samples=10)[:-1])
        body = bytearray(cobs_decode(bytes(body)))
        body[-1] ^= 0x5A
        return cobs_encode(bytes(body)) + b"\x00"
    if kind == 3:  # a well-formed frame of an unknown type
        return encode_frame(0x7E, seq, rng.integers(0, 256, 12, dtype=np.uint8).tobytes())
    if kind == 4:  # SAMPLES with a payload that does not fit n_samples
        return encode_frame(MsgType.SAMPLES, seq, bytes(77), first_sample=seq, n_samples=10)
    # the first part of a valid SAMPLES frame, cut off, then a delimiter
    whole = encode_frame(MsgType.SAMPLES, seq, bytes(80), first_sample=seq, n_samples=10)
    return whole[:int(rng.integers(1, len(whole) - 1))] + b"\x00"
