"""The shared vector files against the Python codec (SPEC.md, shared/reference/test-vectors.md)."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

import hilrig.firmware_protocol as fp
from hilrig.firmware_protocol.vectors import (
    DIR,
    cobs_rejects,
    cobs_vectors,
    crc_vectors,
    frame_vectors,
    make_vectors,
)

COBS = cobs_vectors()
FRAMES = frame_vectors()
R1_254 = bytes(range(1, 255))


def test_checked_in_files_are_what_the_generator_writes():
    for name, text in make_vectors.generate().items():
        assert (DIR / name).read_text(encoding="utf-8") == text, f"regenerate {name}"


def test_the_generator_check_mode_agrees():
    assert make_vectors.main(["--check"]) == 0


def test_cobs_table_is_the_published_one():
    # Rows 1-6 written out again from shared/reference/test-vectors.md, not generated.
    table = {"00": "010100", "0000": "01010100", "001100": "0102110100",
             "11220033": "031122023300", "11223344": "051122334400",
             "11000000": "021101010100", "": "0100"}
    got = {raw.hex(): wire.hex() for raw, wire in COBS}
    for raw, wire in table.items():
        assert got[raw] == wire
    assert len(COBS) == 12
    assert got[R1_254.hex()] == "ff" + R1_254.hex() + "00"  # row 7, canonical
    assert [bytes.fromhex(h) for h in ("00", "05313233", "0531320034")] == cobs_rejects()[:3]


@pytest.mark.parametrize("raw,wire", COBS, ids=[f"row{i + 1}" for i in range(len(COBS))])
def test_cobs_both_ways(raw, wire):
    assert wire.endswith(b"\x00") and b"\x00" not in wire[:-1]
    assert fp.cobs_encode(raw) + b"\x00" == wire
    assert fp.cobs_decode(wire[:-1]) == raw
    assert make_vectors.ref_cobs_encode(raw) + b"\x00" == wire


def test_cobs_decoders_accept_the_non_canonical_extra_01():
    assert fp.cobs_decode(b"\xff" + R1_254 + b"\x01") == R1_254
    assert fp.cobs_decode(b"\xff" + R1_254) == R1_254
    # ... also inside a stream decoder batch
    frames, errors, oversize = fp._cobs.cobs_decode_many(
        (b"\xff" + R1_254 + b"\x01\x00") * 5, min_segments=1, min_bytes=0)
    assert frames == [R1_254] * 5 and errors == oversize == 0


@pytest.mark.parametrize("bad", cobs_rejects(), ids=lambda b: b.hex()[:16])
def test_cobs_rejects(bad):
    with pytest.raises(fp.CobsError):
        fp.cobs_decode(bad)
    assert issubclass(fp.CobsError, ValueError)
    if b"\x00" not in bad:
        for min_segments in (1, 10**9):  # batch fast path and per-segment path
            assert fp._cobs.cobs_decode_many((bad + b"\x00") * 300, min_segments=min_segments,
                                             min_bytes=0) == ([], 300, 0)


def test_cobs_decode_rejects_empty_input():
    with pytest.raises(fp.CobsError):
        fp.cobs_decode(b"")


@pytest.mark.parametrize("text,crc", crc_vectors(), ids=lambda v: str(v)[:12])
def test_crc_check_values(text, crc):
    assert fp.crc32(text.encode("ascii")) == crc
    assert make_vectors.ref_crc32(text.encode("ascii")) == crc


def test_crc_check_value_of_spec():
    assert fp.crc32(b"123456789") == 0xCBF43926
    assert dict(crc_vectors())["123456789"] == 0xCBF43926


def test_layout_hash_is_the_crc_of_layout():
    assert fp.LAYOUT == "hilrig-bridge/1 hdr=u8,u8,u16,u32,u32,u16,u16 crc32 samples=i32le*2"
    assert fp.LAYOUT_HASH == zlib.crc32(fp.LAYOUT.encode()) == dict(crc_vectors())[fp.LAYOUT]


def test_frame_vectors_cover_the_spec():
    types = {v.msg_type for v in FRAMES}
    assert types == {int(t) for t in fp.MsgType}
    assert any(v.seq == 0xFFFFFFFF for v in FRAMES)
    assert any(v.flags == 0xF for v in FRAMES)
    samples = [v for v in FRAMES if v.msg_type == fp.MsgType.SAMPLES]
    assert {10, 125} <= {v.n_samples for v in samples}
    ten = np.frombuffer(next(v for v in samples if v.n_samples == 10).payload, "<i4")
    assert (ten < 0).any() and ten.min() == -2**31 and ten.max() == 2**31 - 1
    # COBS code 0xFF, and a frame whose last 254 bytes are one run (canonical: no extra 01)
    codes = []
    for v in FRAMES:
        body, pos, chain = v.wire[:-1], 0, []
        while pos < len(body):
            chain.append(body[pos])
            pos += body[pos]
        codes.append(chain)
    assert sum(c.count(0xFF) for c in codes) >= 3
    assert any(c[-1] == 0xFF for c in codes)


@pytest.mark.parametrize("v", FRAMES, ids=[v.name for v in FRAMES])
def test_frame_vector_both_ways(v):
    assert fp.encode_frame(v.msg_type, v.seq, v.payload, flags=v.flags,
                           first_sample=v.first_sample, n_samples=v.n_samples) == v.wire
    unstuffed = fp.cobs_decode(v.wire[:-1])
    assert len(unstuffed) == fp.HEADER_SIZE + len(v.payload) + 4
    assert struct.unpack_from("<H", unstuffed, 14)[0] == len(v.payload)
    frame = fp.parse_frame(unstuffed)
    assert frame == fp.Frame(1, v.msg_type, v.flags, v.seq, v.first_sample, v.n_samples,
                             v.payload)
    msg = fp.decode_message(frame)
    assert fp.encode_message(msg, v.seq, v.flags) == v.wire
    dec = fp.StreamDecoder()
    [(f2, m2)] = dec.feed(v.wire)
    assert f2 == frame and m2 == msg


def test_frame_vector_messages():
    got = {v.name: fp.decode_message(fp.parse_frame(fp.cobs_decode(v.wire[:-1]))) for v in FRAMES}
    assert got["hello"] == fp.Hello() and got["stop"] == fp.Stop() and got["zero"] == fp.Zero()
    assert got["start_10khz"] == fp.Start(10_000)
    assert got["ping"] == fp.Ping(0xDEADBEEF)
    assert got["info"] == fp.Info(1, 0, 10_000, (40_000, 40_000), fp.LAYOUT_HASH,
                                  0x0123456789ABCDEF, 125, "hilrig-bridge 1.0.0 (vectors)")
    assert got["info_empty_id"].firmware_id == "" and got["info_max_id"].firmware_id == "x" * 64
    assert got["status"] == fp.Status(123_456_789_012, 600_000, 3, 30, 2, 1, 0, 600_000)
    assert got["ack_start"] == fp.Ack(1, fp.MsgType.START, 0)
    assert got["ack_ping"] == fp.Ack(4, fp.MsgType.PING, 0xDEADBEEF)
    assert got["nak_rate"] == fp.Nak(5, fp.MsgType.START, 4, 123_456)
    s10 = got["samples_10"]
    assert s10.first_sample == 0 and s10.flags == 0 and s10.counts.shape == (10, 2)
    assert s10.counts.dtype == np.int32
    assert s10.counts[5].tolist() == [2**31 - 1, -2**31]
    assert s10.counts[1].tolist() == [1, -1]
    assert got["samples_10_flags"].flags == (fp.Flags.DEVICE_OVERRUN | fp.Flags.LATE_SAMPLE
                                             | fp.Flags.ILLEGAL_TRANSITION_0
                                             | fp.Flags.ILLEGAL_TRANSITION_1)
    assert got["samples_125"].counts.shape == (125, 2)


def test_all_vectors_in_one_stream_any_chunking():
    wire = b"".join(v.wire for v in FRAMES)
    for size in (1, 3, 100, 4096, len(wire)):
        dec = fp.StreamDecoder()
        got = []
        for i in range(0, len(wire), size):
            got += dec.feed(wire[i:i + size])
        assert [f.seq for f, _ in got] == [v.seq for v in FRAMES]
        c = dec.counters()
        assert c["frames_ok"] == len(FRAMES) and c["bytes_in"] == len(wire)
        assert all(c[k] == 0 for k in ("crc_errors", "cobs_errors", "oversize", "length_errors",
                                       "unknown_version", "unknown_type", "bad_payload"))
