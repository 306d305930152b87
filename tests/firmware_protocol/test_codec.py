"""Frames, messages and the stream decoder's error handling (SPEC.md sections 1-4)."""

from __future__ import annotations

import dataclasses
import struct
import zlib

import numpy as np
import pytest

import hilrig.firmware_protocol as fp
from hilrig.firmware_protocol.vectors import make_vectors as ref

COUNTER_NAMES = ["bytes_in", "frames_ok", "crc_errors", "cobs_errors", "oversize",
                 "length_errors", "unknown_version", "unknown_type", "bad_payload",
                 "lost_frames", "lost_samples"]


def stuffed(unstuffed: bytes) -> bytes:
    return fp.cobs_encode(unstuffed) + b"\x00"


def raw_frame(msg_type=0x82, payload=b"", *, version=1, flags=0, seq=0, first=0, n=None,
              plen=None, crc_ok=True) -> bytes:
    """An unstuffed frame with any field (even wrong ones) and a valid or broken CRC."""
    n = len(payload) // 8 if n is None and msg_type == 0x82 else (n or 0)
    head = struct.pack("<BBHIIHH", version, msg_type, flags, seq, first, n,
                       len(payload) if plen is None else plen) + payload
    crc = zlib.crc32(head) ^ (0 if crc_ok else 1)
    return head + struct.pack("<I", crc)


def only_counter(dec: fp.StreamDecoder, name: str, value: int = 1) -> None:
    c = dec.counters()
    for k in ("frames_ok", "crc_errors", "cobs_errors", "oversize", "length_errors",
              "unknown_version", "unknown_type", "bad_payload"):
        assert c[k] == (value if k == name else 0), (k, c)


# --- constants and types ------------------------------------------------------------

def test_constants():
    assert (fp.VERSION_MAJOR, fp.VERSION_MINOR) == (1, 1)
    assert (fp.HEADER_SIZE, fp.MAX_FRAME, fp.MAX_SAMPLES_PER_FRAME) == (16, 1024, 125)
    assert fp.MAX_SAMPLES_PER_FRAME == (fp.MAX_FRAME - 20) // 8
    assert fp.MAX_ENCODED == 1030
    assert fp.LAYOUT_HASH == fp.crc32(fp.LAYOUT.encode())


def test_enums():
    assert {t.name: int(t) for t in fp.MsgType} == {
        "HELLO": 1, "START": 2, "STOP": 3, "ZERO": 4, "PING": 5, "RELEASE": 6, "INFO": 0x81,
        "SAMPLES": 0x82, "STATUS": 0x83, "ACK": 0x84, "NAK": 0x85}
    assert {f.name: int(f) for f in fp.Flags} == {
        "DEVICE_OVERRUN": 1, "ILLEGAL_TRANSITION_0": 2, "ILLEGAL_TRANSITION_1": 4,
        "LATE_SAMPLE": 8}


def test_errors_are_value_errors():
    for cls in (fp.CrcError, fp.LengthError, fp.UnknownVersionError, fp.UnknownTypeError,
                fp.BadPayloadError):
        assert issubclass(cls, fp.FrameError) and issubclass(cls, ValueError)
    assert issubclass(fp.CobsError, ValueError)


def test_frame_and_messages_are_frozen():
    frame = fp.Frame(1, 2, 0, 0, 0, 0, b"")
    with pytest.raises(dataclasses.FrozenInstanceError):
        frame.seq = 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        fp.Ping(1).token = 2
    s = fp.Samples(0, np.zeros((2, 2), np.int32))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.first_sample = 3


def test_decoded_frames_behave_like_constructed_ones():
    wire = fp.encode_message(fp.Samples(7, [[1, -2], [3, -4]], 8), 5)
    [(frame, msg)] = fp.StreamDecoder().feed(wire)
    assert frame == fp.Frame(1, 0x82, 8, 5, 7, 2, frame.payload)
    assert hash(frame) == hash(fp.Frame(1, 0x82, 8, 5, 7, 2, frame.payload))
    assert repr(frame).startswith("Frame(version_major=1, msg_type=130")
    assert dataclasses.asdict(frame)["seq"] == 5
    assert msg == fp.Samples(7, np.array([[1, -2], [3, -4]]), 8)
    assert msg.n_samples == 2 and msg.counts.dtype == np.int32
    assert not msg.counts.flags.writeable
    assert dataclasses.replace(msg, flags=0) == fp.Samples(7, [[1, -2], [3, -4]])


# --- frames ---------------------------------------------------------------------------

def test_encode_frame_layout():
    wire = fp.encode_frame(fp.MsgType.PING, 0x01020304, b"\xaa\xbb\xcc\xdd", flags=0x0102,
                           first_sample=0x05060708, n_samples=0x090A)
    raw = fp.cobs_decode(wire[:-1])
    assert raw[:16] == bytes.fromhex("01 05 0201 04030201 08070605 0a09 0400")
    assert raw[16:20] == b"\xaa\xbb\xcc\xdd"
    assert struct.unpack("<I", raw[20:])[0] == zlib.crc32(raw[:20])
    assert raw == ref.ref_frame(5, 0x0102, 0x01020304, 0x05060708, 0x090A, b"\xaa\xbb\xcc\xdd")


def test_encode_frame_wraps_seq_and_checks_fields():
    assert fp.encode_frame(1, 2**32 + 5) == fp.encode_frame(1, 5)
    with pytest.raises(ValueError):
        fp.encode_frame(1, 0, flags=0x10000)
    with pytest.raises(ValueError):
        fp.encode_frame(0x100, 0)
    with pytest.raises(fp.LengthError):
        fp.encode_frame(1, 0, bytes(1005))
    assert len(fp.cobs_decode(fp.encode_frame(1, 0, bytes(1004))[:-1])) == fp.MAX_FRAME


def test_parse_frame_errors():
    good = raw_frame(0x05, b"1234")
    assert fp.parse_frame(good).payload == b"1234"
    with pytest.raises(fp.CrcError):
        fp.parse_frame(raw_frame(0x05, b"1234", crc_ok=False))
    with pytest.raises(fp.LengthError):
        fp.parse_frame(good[:19])
    with pytest.raises(fp.LengthError):
        fp.parse_frame(raw_frame(0x05, b"1234", plen=3))
    with pytest.raises(fp.LengthError):
        fp.parse_frame(b"")
    with pytest.raises(fp.LengthError):
        fp.parse_frame(raw_frame(0x82, bytes(1008)))  # 1028 bytes > MAX_FRAME


def test_unknown_version_is_never_parsed():
    v2 = raw_frame(0x82, bytes(80), version=2)  # a valid CRC, a plausible v1 header
    with pytest.raises(fp.UnknownVersionError):
        fp.parse_frame(v2)
    # not even its length or CRC are looked at
    with pytest.raises(fp.UnknownVersionError):
        fp.parse_frame(b"\x02")
    with pytest.raises(fp.UnknownVersionError):
        fp.parse_frame(b"\x00" + v2[1:])
    dec = fp.StreamDecoder()
    assert dec.feed(stuffed(v2) + stuffed(b"\x02\xff") + stuffed(bytes(30))) == []
    only_counter(dec, "unknown_version", 3)
    assert dec.lost_frames == 0


# --- messages -------------------------------------------------------------------------

MESSAGES = [
    fp.Hello(), fp.Start(10_000), fp.Stop(), fp.Zero(), fp.Ping(0xFFFFFFFF),
    fp.Info(1, 0, 10_000, (40_000, 40_000), fp.LAYOUT_HASH, 2**64 - 1, 125, "fw é 1.0"),
    fp.Samples(123, np.array([[1, -1], [-2**31, 2**31 - 1]], np.int32), 0xF),
    fp.Samples(0, np.zeros((0, 2), np.int32)),
    fp.Samples(2**32 - 1, np.arange(250).reshape(125, 2)),
    fp.Status(2**64 - 1, 1, 2, 3, 4, 5, 6, 7),
    fp.Ack(9, fp.MsgType.START, 0), fp.Nak(9, 0x42, 1, 77),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_message_round_trip(msg):
    wire = fp.encode_message(msg, 41, flags=0)
    frame = fp.parse_frame(fp.cobs_decode(wire[:-1]))
    assert frame.seq == 41 and frame.version_major == 1
    assert fp.MsgType(frame.msg_type).name == type(msg).__name__.upper()
    assert fp.decode_message(frame) == msg
    [(f2, m2)] = fp.StreamDecoder().feed(wire)
    assert f2 == frame and m2 == msg


def test_message_frame_fields():
    status = fp.Status(1, 2, 3, 4, 5, 6, 7, 999)
    f = fp.parse_frame(fp.cobs_decode(fp.encode_message(status, 3)[:-1]))
    assert f.first_sample == 999 and f.n_samples == 0 and len(f.payload) == 32
    f = fp.parse_frame(fp.cobs_decode(fp.encode_message(fp.Samples(5, [[1, 2]] * 3, 1), 3,
                                                        flags=8)[:-1]))
    assert (f.first_sample, f.n_samples, f.flags) == (5, 3, 9)
    f = fp.parse_frame(fp.cobs_decode(fp.encode_message(fp.Ping(7), 3, flags=2)[:-1]))
    assert (f.first_sample, f.n_samples, f.flags) == (0, 0, 2)


def test_samples_encoding_is_little_endian_int32_pairs():
    counts = np.array([[1, -1], [70000, -70000]], np.int64)
    frame = fp.parse_frame(fp.cobs_decode(fp.encode_message(fp.Samples(0, counts), 0)[:-1]))
    assert frame.payload == struct.pack("<4i", 1, -1, 70000, -70000)
    assert fp.decode_message(frame).counts.tolist() == counts.tolist()


def test_samples_reserved_flag_bits_are_ignored():
    wire = stuffed(raw_frame(0x82, bytes(16), flags=0xFFF5))
    [(frame, msg)] = fp.StreamDecoder().feed(wire)
    assert frame.flags == 0xFFF5 and msg.flags == 0x5


def test_message_encoding_errors():
    with pytest.raises(ValueError):
        fp.Samples(0, np.zeros((3, 3)))
    with pytest.raises(ValueError):
        fp.Samples(0, [[2**31, 0]])
    with pytest.raises(ValueError):
        fp.Samples(0, [[0.5, 0]])
    with pytest.raises(ValueError):
        fp.encode_message(fp.Samples(0, np.zeros((126, 2), np.int32)), 0)
    with pytest.raises(ValueError):
        fp.encode_message(fp.Info(1, 0, 1, (1, 1), 0, 0, 1, "x" * 65), 0)
    with pytest.raises(ValueError):
        fp.encode_message(fp.Ping(-1), 0)
    with pytest.raises(TypeError):
        fp.encode_message("HELLO", 0)


def test_default_info():
    info = fp.default_info("fw", boot_id=5)
    assert (info.proto_major, info.proto_minor, info.layout_hash) == (1, 1, fp.LAYOUT_HASH)
    assert info.max_samples_per_frame == 125 and info.counts_per_rev == (40_000, 40_000)
    assert info.capabilities == 0  # no release output unless a board says so


def test_info_reserved_fields_are_ignored():
    payload = bytearray(ref.info_payload("id", minor=1))
    payload[30:44] = b"\xee" * 14
    [(_, msg)] = fp.StreamDecoder().feed(stuffed(raw_frame(0x81, bytes(payload))))
    assert msg == fp.default_info("id", boot_id=0x0123456789ABCDEF)


def test_info_capabilities_of_a_1_0_board_are_none_and_a_1_1_latch_is_seen():
    # offset 2 was reserved (sent as 0) in 1.0: an old board advertises nothing
    [(_, old)] = fp.StreamDecoder().feed(stuffed(raw_frame(0x81, ref.info_payload("id"))))
    assert (old.proto_minor, old.capabilities) == (0, 0)
    payload = ref.info_payload("id", minor=1, caps=fp.CAP_RELEASE_OUTPUT)
    [(_, new)] = fp.StreamDecoder().feed(stuffed(raw_frame(0x81, payload)))
    assert new.capabilities & fp.CAP_RELEASE_OUTPUT


def test_release_round_trips_and_its_reply_carries_the_sample_index():
    wire = fp.encode_message(fp.Release(50), 5)
    [(frame, msg)] = fp.StreamDecoder().feed(wire)
    assert msg == fp.Release(50) and frame.msg_type == fp.MsgType.RELEASE
    [(_, ack)] = fp.StreamDecoder().feed(fp.encode_message(fp.Ack(5, 6, 123_456), 0))
    assert ack == fp.Ack(5, fp.MsgType.RELEASE, 123_456)


@pytest.mark.parametrize("msg_type,payload,n", [
    (0x01, b"\x00", 0), (0x03, b"x", 0), (0x04, b"xy", 0),
    (0x02, b"123", 0), (0x02, b"12345", 0), (0x05, b"", 0), (0x06, b"12", 0),
    (0x81, bytes(43), 0), (0x81, ref.info_payload("y" * 65), 0),
    (0x82, bytes(80), 9), (0x82, bytes(79), 10), (0x82, bytes(8), 0),
    (0x83, bytes(31), 0), (0x83, bytes(33), 0),
    (0x84, bytes(11), 0), (0x85, bytes(13), 0),
])
def test_bad_payload_is_dropped_and_counted(msg_type, payload, n):
    frame = fp.parse_frame(raw_frame(msg_type, payload, n=n))
    with pytest.raises(fp.BadPayloadError):
        fp.decode_message(frame)
    dec = fp.StreamDecoder()
    assert dec.feed(stuffed(raw_frame(msg_type, payload, n=n))) == []
    only_counter(dec, "bad_payload")


@pytest.mark.parametrize("msg_type", [0x00, 0x07, 0x80, 0x86, 0xFF])
def test_unknown_type_is_dropped_and_counted(msg_type):
    with pytest.raises(fp.UnknownTypeError):
        fp.decode_message(fp.parse_frame(raw_frame(msg_type, b"")))
    dec = fp.StreamDecoder()
    assert dec.feed(stuffed(raw_frame(msg_type, b"", seq=0))
                    + fp.encode_message(fp.Ping(1), 1)) != []
    c = dec.counters()
    assert c["unknown_type"] == 1 and c["frames_ok"] == 1 and c["lost_frames"] == 0


# --- the stream decoder's counters -----------------------------------------------------

def test_counters_dict():
    dec = fp.StreamDecoder()
    assert list(dec.counters()) == COUNTER_NAMES
    assert all(v == 0 and type(v) is int for v in dec.counters().values())
    dec.feed(b"\x05\x00")
    assert all(getattr(dec, k) == v for k, v in dec.counters().items())
    assert dec.bytes_in == 2


@pytest.mark.parametrize("chunk", [1, 7, 4096])
def test_each_error_kind_is_counted_once(chunk):
    good = fp.encode_message(fp.Ping(1), 0)
    bad = {
        "crc_errors": stuffed(raw_frame(0x05, b"1234", crc_ok=False)),
        "cobs_errors": b"\x05\x11\x22\x00",
        "oversize": b"\x01" * 1031 + b"\x00",
        "length_errors": stuffed(raw_frame(0x05, b"1234", plen=5)),
        "unknown_version": stuffed(raw_frame(0x05, b"1234", version=0)),
        "unknown_type": stuffed(raw_frame(0x70, b"")),
        "bad_payload": stuffed(raw_frame(0x05, b"123")),
    }
    for name, junk in bad.items():
        dec = fp.StreamDecoder()
        wire = good + junk + b"\x00\x00" + good
        got = []
        for i in range(0, len(wire), chunk):
            got += dec.feed(wire[i:i + chunk])
        assert [m for _, m in got] == [fp.Ping(1)] * 2, name
        c = dec.counters()
        assert c[name] == 1 and c["frames_ok"] == 2, (name, c)
        assert sum(c[k] for k in ("crc_errors", "cobs_errors", "oversize", "length_errors",
                                  "unknown_version", "unknown_type", "bad_payload")) == 1


def test_short_frame_is_a_length_error():
    dec = fp.StreamDecoder()
    dec.feed(stuffed(b"\x01\x82" + bytes(10)))
    only_counter(dec, "length_errors")
    dec.feed(b"\x01\x00" * 3)  # COBS of an empty frame: not a delimiter run
    only_counter(dec, "length_errors", 4)


def test_oversize_rule_and_bounded_buffer():
    good = fp.encode_message(fp.Ping(1), 0)
    for size in (1, 100, 1030, 5000):
        dec = fp.StreamDecoder()
        got = []
        junk = b"\x7f" * 3000
        for i in range(0, len(junk), size):
            got += dec.feed(junk[i:i + size])
            assert dec.buffered <= fp.MAX_ENCODED
        assert dec.oversize == 1 and dec.buffered == 0
        got += dec.feed(b"\x7f" * 10 + b"\x00" + good)  # the rest up to 00 is dropped unseen
        assert [m for _, m in got] == [fp.Ping(1)]
        assert dec.oversize == 1 and dec.cobs_errors == 0 and dec.frames_ok == 1
    # exactly 1030 bytes are held; one more is oversize
    dec = fp.StreamDecoder()
    dec.feed(b"\x01" * 1030)
    assert dec.buffered == 1030 and dec.oversize == 0
    dec.feed(b"\x01")
    assert dec.buffered == 0 and dec.oversize == 1


def test_largest_frame_fits_the_buffer():
    counts = np.full((125, 2), 0x01010101, np.int32)  # no zero byte: COBS codes 0xFF
    wire = fp.encode_message(fp.Samples(0, counts), 0x01010101, flags=0x0101)
    assert len(wire) <= fp.MAX_ENCODED + 1
    dec = fp.StreamDecoder()
    got = []
    for i in range(len(wire)):
        got += dec.feed(wire[i:i + 1])
    assert len(got) == 1 and np.array_equal(got[0][1].counts, counts)
    assert dec.oversize == 0


def test_decoded_size_over_max_frame_is_oversize():
    dec = fp.StreamDecoder()
    dec.feed(fp.cobs_encode(b"\x01" + bytes(1024)) + b"\x00")  # 1025 bytes unstuffed
    only_counter(dec, "oversize")


def test_zero_runs_and_garbage_between_frames():
    msgs = [fp.Ping(k) for k in range(6)]
    frames = [fp.encode_message(m, k) for k, m in enumerate(msgs)]
    wire = (b"\x00" * 5 + frames[0] + b"\x00" * 100 + frames[1] + b"garbage\x00"
            + frames[2] + b"\x00\xff\xfe\x00\x00" + frames[3] + frames[4] + b"\x00" * 3
            + b"\x01\x02" + frames[5])
    for size in (1, 2, 5, 64, len(wire)):
        dec = fp.StreamDecoder()
        got = []
        for i in range(0, len(wire), size):
            got += dec.feed(wire[i:i + size])
        assert [m for _, m in got] == msgs[:5], size  # "01 02" merged with frames[5]
        # "garbage" and "ff fe" are not COBS; "01 02" + frames[5] unstuffs to 00 ...
        assert dec.cobs_errors == 2 and dec.unknown_version == 1 and dec.lost_frames == 0
        assert dec.crc_errors == dec.length_errors == dec.oversize == 0


def test_resynchronises_after_a_broken_frame():
    a, b, c = (fp.encode_message(fp.Ping(k), k) for k in range(3))
    broken = b[:10] + bytes([b[10] ^ 0x40]) + b[11:]
    dec = fp.StreamDecoder()
    got = dec.feed(a + broken + c)
    assert [m.token for _, m in got] == [0, 2]
    assert dec.lost_frames == 1


def test_lost_frames_and_wrap():
    dec = fp.StreamDecoder()
    seqs = [2**32 - 2, 2**32 - 1, 0, 3, 3, 1, 10]
    dec.feed(b"".join(fp.encode_message(fp.Ping(0), s) for s in seqs))
    # -2 -> -1 -> 0 (wraps), 0 -> 3 (2 lost), repeat, backwards, 1 -> 10 (8 lost)
    assert dec.lost_frames == 2 + 8 and dec.frames_ok == len(seqs)
    dec.reset_sequence()
    dec.feed(fp.encode_message(fp.Ping(0), 100))
    assert dec.lost_frames == 10


def test_info_restarts_the_sequence():
    dec = fp.StreamDecoder()
    dec.feed(fp.encode_message(fp.Ping(0), 500))
    dec.feed(fp.encode_message(fp.default_info("x"), 0) + fp.encode_message(fp.Ack(0, 2), 1))
    assert dec.lost_frames == 0
    dec.feed(fp.encode_message(fp.Ack(0, 2), 3))
    assert dec.lost_frames == 1


def samples(first, n, seq):
    return fp.encode_message(fp.Samples(first, np.zeros((n, 2), np.int32)), seq)


def test_lost_samples():
    dec = fp.StreamDecoder()
    dec.feed(samples(100, 10, 0) + samples(110, 10, 1) + samples(130, 10, 3)
             + samples(145, 5, 4))
    assert dec.lost_samples == 10 + 5 and dec.lost_frames == 1
    dec.feed(samples(0, 10, 5))  # backwards (a new stream without ACK): re-based, not counted
    dec.feed(samples(10, 10, 6))
    assert dec.lost_samples == 15
    dec.reset_sequence()
    dec.feed(samples(1000, 10, 99))
    assert dec.lost_samples == 15 and dec.lost_frames == 1


def test_lost_samples_wrap_around_u32():
    dec = fp.StreamDecoder()
    dec.feed(samples(2**32 - 10, 10, 0) + samples(0, 10, 1) + samples(20, 10, 2))
    assert dec.lost_samples == 10


def test_ack_of_start_expects_sample_zero():
    dec = fp.StreamDecoder()
    dec.feed(fp.encode_message(fp.Ack(1, fp.MsgType.START), 0) + samples(20, 10, 3))
    assert dec.lost_samples == 20 and dec.lost_frames == 2
    dec2 = fp.StreamDecoder()
    dec2.feed(fp.encode_message(fp.Ack(1, fp.MsgType.PING, 7), 0) + samples(20, 10, 1))
    assert dec2.lost_samples == 0


def test_info_forgets_the_expected_sample():
    dec = fp.StreamDecoder()
    dec.feed(samples(0, 10, 1) + fp.encode_message(fp.default_info(), 0) + samples(500, 10, 1))
    assert dec.lost_samples == 0 and dec.lost_frames == 0


def test_feed_accepts_bytes_like_and_empty():
    wire = fp.encode_message(fp.Ping(3), 0)
    dec = fp.StreamDecoder()
    assert dec.feed(b"") == []
    assert dec.feed(bytearray(wire[:5])) == []
    assert [m for _, m in dec.feed(memoryview(wire)[5:])] == [fp.Ping(3)]


@pytest.mark.fault(injected="serial: line garbage that keeps a valid CRC (an unknown type, "
                            "a SAMPLES frame with a bad payload) with a foreign seq",
                   expected="counted as unknown_type / bad_payload; no frame counted lost")
def test_garbage_with_a_valid_crc_and_a_foreign_seq_loses_no_frames():
    stream = b"".join(fp.encode_message(fp.Ping(k), k) for k in range(5))
    # seqs a little ahead (a forward jump) of the real sender's
    stream += stuffed(raw_frame(0x7E, b"\x01\x02", seq=1_000_000))  # an unknown type
    stream += stuffed(raw_frame(0x82, bytes(77), seq=2_000_000, n=10))  # payload misfit
    stream += b"".join(fp.encode_message(fp.Ping(k), k) for k in range(5, 10))
    dec = fp.StreamDecoder()
    got = dec.feed(stream)
    assert [m.token for _, m in got] == list(range(10))
    assert dec.unknown_type == 1 and dec.bad_payload == 1
    assert dec.lost_frames == 0  # 1,999,995 when foreign seqs took part
