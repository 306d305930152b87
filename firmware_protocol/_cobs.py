"""Consistent Overhead Byte Stuffing (Cheshire & Baker 1999), canonical form.

``cobs_encode`` and ``cobs_decode`` work without the 0x00 delimiter, on slices between
zero bytes (encode) or code bytes (decode) rather than byte by byte. The receiver uses
``cobs_decode_many``, which decodes all the frames of a received chunk at once with
numpy and falls back to ``cobs_decode`` per frame.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CobsError", "cobs_encode", "cobs_decode", "cobs_decode_many", "MAX_ENCODED"]

#: SPEC 1: a receiver holding more than this many bytes without a delimiter discards them.
MAX_ENCODED = 1030


class CobsError(ValueError):
    """The input is not a valid COBS encoding (a zero byte, or a code past the end)."""


def cobs_encode(data: bytes) -> bytes:
    """Canonical COBS of ``data`` without the trailing delimiter.

    A final run of exactly 254 non-zero bytes is not followed by an extra ``01``.
    """
    out = bytearray()
    pieces = bytes(data).split(b"\x00")
    last = len(pieces) - 1
    for i, piece in enumerate(pieces):
        n = len(piece)
        start = 0
        while n - start >= 254:
            out.append(0xFF)
            out += piece[start:start + 254]
            start += 254
        if start and start == n and i == last:
            break  # canonical: the final full block needs no empty block after it
        out.append(n - start + 1)
        out += piece[start:]
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Decode COBS ``data`` (no delimiter). Accepts the non-canonical extra ``01``.

    Raises CobsError for an empty input, a zero byte, or a code running past the end.
    One Python step per code byte (one per zero byte of the decoded data).
    """
    data = bytes(data)
    n = len(data)
    if n == 0:
        raise CobsError("empty COBS input")
    if b"\x00" in data:
        raise CobsError("zero byte inside a COBS frame")
    parts: list[bytes] = []
    append = parts.append
    pos = 0
    while pos < n:
        end = pos + data[pos]
        append(data[pos + 1:end])
        pos = end
    if pos != n:
        raise CobsError(f"the last COBS code runs {pos - n} bytes past the end")
    if n < 255 or 254 not in map(len, parts):
        return b"\x00".join(parts)
    # A 0xFF block (254 data bytes; no other block has 254) is not followed by a zero.
    out = bytearray()
    last = len(parts) - 1
    for i, part in enumerate(parts):
        out += part
        if i != last and len(part) != 254:
            out.append(0)
    return bytes(out)


def cobs_decode_many(data: bytes, min_segments: int = 2,
                     min_bytes: int = 512) -> tuple[list[bytes], int, int]:
    """Decode every segment of ``data``, which must end with the delimiter 0x00.

    Returns ``(frames, cobs_errors, oversize)``: the decoded non-empty segments in order,
    and how many segments were not valid COBS or longer than MAX_ENCODED bytes (those are
    left out). Empty segments (delimiter runs) are skipped.

    From ``min_bytes`` bytes in ``min_segments`` segments on (below that the fixed cost
    of a dozen numpy calls does not pay), the code chains of all segments are followed
    in lock step with numpy (one vector step per code position of the longest chain)
    and the code bytes zeroed in one go; smaller inputs, a broken chain, a 0xFF block or
    an over-long segment take the per-segment path (``cobs_decode``). Both paths give
    the same result.
    """
    if len(data) >= min_bytes:
        fast = _decode_many_numpy(data, min_segments)
        if fast is not None:
            return fast, 0, 0
    frames: list[bytes] = []
    errors = oversize = 0
    for seg in data[:-1].split(b"\x00"):
        if not seg:
            continue
        if len(seg) > MAX_ENCODED:
            oversize += 1
            continue
        try:
            frames.append(cobs_decode(seg))
        except CobsError:
            errors += 1
    return frames, errors, oversize


_ARANGE = np.arange(0, dtype=np.intp)  # intp: fancy indexing with int32 is 5x slower


def _decode_many_numpy(data: bytes, min_segments: int) -> list[bytes] | None:
    """Fast path of cobs_decode_many; None when it cannot vouch for the result."""
    global _ARANGE
    b = np.frombuffer(data, np.uint8)
    n = b.shape[0]
    ends = (b == 0).nonzero()[0]
    if ends.shape[0] < min_segments:
        return None
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    longest = (ends - starts).max()
    if longest > MAX_ENCODED:
        return None
    if _ARANGE.shape[0] < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.shape[0]), dtype=np.intp)
    # nxt[i]: where the code at i points; a delimiter points at itself. A code that runs
    # past the end of data lands in a zero pad that leads to n, a fixed point that is no
    # segment's delimiter, so its chain fails the check below.
    nxt = np.empty(n + 256, np.intp)
    np.add(_ARANGE[:n], b, out=nxt[:n])
    nxt[n:] = n
    bx = np.zeros(n + 256, np.uint8)
    bx[:n] = b
    p = starts
    chain = [p]
    append = chain.append
    done = bytes(ends.shape[0])
    while True:  # every chain stops on a delimiter (a fixed point) within 1030 steps
        p = nxt[p]
        append(p)
        p = nxt[p]
        append(p)
        if bx[p].tobytes() == done:
            break
    if p.tobytes() != ends.tobytes():  # a chain jumped over its delimiter: not COBS
        return None
    codes = np.concatenate(chain)
    if longest >= 255 and b"\xff" in b[codes].tobytes():
        return None  # a 0xFF block is not followed by a zero: the per-segment path
    out = b.copy()
    out[codes] = 0
    raw = out.tobytes()
    return [raw[s + 1:e] for s, e in zip(starts.tolist(), ends.tolist()) if s != e]
