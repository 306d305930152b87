"""Generate the shared test-vector files of the bridge protocol (SPEC.md).

    python -m hilrig.firmware_protocol.vectors.make_vectors           # (re)write the files
    python -m hilrig.firmware_protocol.vectors.make_vectors --check   # exit 1 if they differ

Deliberately independent of the codec in ``firmware_protocol``: a textbook per-byte
COBS encoder, a bitwise CRC-32 and ``struct`` build every vector, so the codec's tests
check it against a second implementation rather than against itself. The COBS rows of
``shared/reference/test-vectors.md`` are written here literally and the reference
encoder must reproduce them before anything is written.

Files (one vector per line, ``|``-separated, hex lowercase without spaces, integers
decimal, lines starting with ``#`` are comments):

- ``cobs.txt``: ``unencoded_hex|wire_hex`` (wire includes the trailing 00), and
  ``reject|hex`` for inputs (without delimiter) a decoder must reject.
- ``frames.txt``: ``name|msg_type|flags|seq|first_sample|n_samples|payload_hex|wire_hex``;
  wire is ``COBS(frame) 00``, payload_len is the payload's length.
- ``crc.txt``: ``ascii|crc32_hex`` (8 hex digits).
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

DIR = Path(__file__).resolve().parent

LAYOUT = "hilrig-bridge/1 hdr=u8,u8,u16,u32,u32,u16,u16 crc32 samples=i32le*2"

HELLO, START, STOP, ZERO, PING, RELEASE = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
INFO, SAMPLES, STATUS, ACK, NAK = 0x81, 0x82, 0x83, 0x84, 0x85
DEVICE_OVERRUN, ILLEGAL_TRANSITION_0, ILLEGAL_TRANSITION_1, LATE_SAMPLE = 1, 2, 4, 8


# --- independent reference implementations ------------------------------------------

def ref_crc32(data: bytes) -> int:
    """Bitwise CRC-32 (reflected 0xEDB88320, init and final xor 0xFFFFFFFF)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0xEDB88320 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def ref_cobs_encode(data: bytes) -> bytes:
    """Canonical COBS, one byte at a time (no delimiter)."""
    out = bytearray()
    block = bytearray()
    after_full_block = False
    for byte in data:
        after_full_block = False
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(0xFF)
                out += block
                block.clear()
                after_full_block = True
    if not after_full_block:  # canonical: no extra 01 after a final full block
        out.append(len(block) + 1)
        out += block
    return bytes(out)


def ref_cobs_decode(data: bytes) -> bytes:
    """Textbook COBS decoding, one byte at a time (no delimiter); ValueError if invalid."""
    if not data:
        raise ValueError("empty")
    out = bytearray()
    i = 0
    while i < len(data):
        code = data[i]
        if code == 0:
            raise ValueError("zero byte")
        i += 1
        for _ in range(code - 1):
            if i >= len(data) or data[i] == 0:
                raise ValueError("code past the end or zero byte")
            out.append(data[i])
            i += 1
        if code != 0xFF and i < len(data):
            out.append(0)
    return bytes(out)


def ref_frame(msg_type: int, flags: int, seq: int, first_sample: int, n_samples: int,
              payload: bytes, version: int = 1) -> bytes:
    """The unstuffed frame of SPEC section 2."""
    head = struct.pack("<BBHIIHH", version, msg_type, flags, seq, first_sample,
                       n_samples, len(payload)) + payload
    return head + struct.pack("<I", ref_crc32(head))


# --- COBS ------------------------------------------------------------------------------

def _h(s: str) -> bytes:
    return bytes.fromhex(s)


def cobs_rows() -> list[tuple[bytes, bytes]]:
    """shared/reference/test-vectors.md, literally (wire includes the trailing 00)."""
    r1_254 = bytes(range(1, 255))
    return [
        (_h("00"), _h("010100")),
        (_h("0000"), _h("01010100")),
        (_h("001100"), _h("0102110100")),
        (_h("11220033"), _h("031122023300")),
        (_h("11223344"), _h("051122334400")),
        (_h("11000000"), _h("021101010100")),
        (r1_254, b"\xff" + r1_254 + b"\x00"),
        (bytes(range(0, 255)), b"\x01\xff" + r1_254 + b"\x00"),
        (bytes(range(1, 256)), b"\xff" + r1_254 + b"\x02\xff\x00"),
        (bytes(range(2, 256)) + b"\x00", b"\xff" + bytes(range(2, 256)) + b"\x01\x01\x00"),
        (bytes(range(3, 256)) + b"\x00\x01", b"\xfe" + bytes(range(3, 256)) + b"\x02\x01\x00"),
        (b"", _h("0100")),
    ]


COBS_REJECT = [
    # from test-vectors.md
    "00",
    "05313233",      # code runs past the end
    "0531320034",    # a zero inside the encoded data
    # more of the same kinds
    "02",            # code wants one byte, none follows
    "011105",        # second code runs past the end
    "ff" + bytes(range(1, 254)).hex(),  # 0xff block one byte short
    "0300",
]


def cobs_text() -> str:
    lines = ["# COBS vectors: unencoded_hex|wire_hex (wire includes the trailing 00).",
             "# Rows 1-11 and the empty payload of shared/reference/test-vectors.md; the wire",
             "# form is the canonical one an encoder must produce. Decoders also accept the",
             "# non-canonical form of row 7 (extra 01 after a final run of 254 non-zero bytes).",
             "# reject|hex: inputs (without delimiter) a decoder must reject."]
    for raw, wire in cobs_rows():
        got = ref_cobs_encode(raw) + b"\x00"
        assert got == wire, (raw.hex(), got.hex(), wire.hex())
        assert ref_cobs_decode(wire[:-1]) == raw
        lines.append(f"{raw.hex()}|{wire.hex()}")
    for h in COBS_REJECT:
        try:
            ref_cobs_decode(bytes.fromhex(h))
        except ValueError:
            lines.append(f"reject|{h}")
        else:
            raise AssertionError(f"reference decoder accepts {h}")
    return "\n".join(lines) + "\n"


# --- frames ----------------------------------------------------------------------------

def info_payload(fw_id: str, rate: int = 10_000, cpr: tuple[int, int] = (40_000, 40_000),
                 boot_id: int = 0x0123456789ABCDEF, max_spf: int = 125, minor: int = 0,
                 caps: int = 0) -> bytes:
    return struct.pack("<BBHIIIIQHHIII", 1, minor, caps, rate, cpr[0], cpr[1],
                       ref_crc32(LAYOUT.encode()), boot_id, max_spf, 0, 0, 0, 0) + fw_id.encode()


def samples_payload(pairs: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack("<ii", a, p) for a, p in pairs)


def frame_cases() -> list[tuple[str, int, int, int, int, int, bytes]]:
    """(name, msg_type, flags, seq, first_sample, n_samples, payload)."""
    ten = [(0, 0), (1, -1), (-2, 2), (1000, -1000), (-40_000, 39_999),
           (2_147_483_647, -2_147_483_648), (-1, -1), (123_456, -654_321),
           (0x00FF00FF, -0x00FF00FF), (7, -7)]
    many = [(i * 37 - 2000, -i * 101 + 17) for i in range(125)]
    # Every payload byte non-zero: runs longer than 254 bytes, so COBS code 0xFF.
    nonzero = [(0x01020304 + i, -0x01010102 - i) for i in range(125)]
    # A final run of exactly 254 non-zero bytes (last 250 payload bytes + CRC) preceded
    # by a zero: the canonical encoding ends in a 0xFF block with no extra 01.
    tail254 = [(0x11223344 + i, -0x01010102 - i) for i in range(40)]
    # byte 5 of sample 40 - 32 (its pendulum count's second byte) is the zero
    tail254[40 - 32] = (tail254[40 - 32][0], struct.unpack("<i", b"\xfe\x00\xfe\xfe")[0])
    status = struct.pack("<QIIIIII", 123_456_789_012, 600_000, 3, 30, 2, 1, 0)
    fw = "hilrig-bridge 1.0.0 (vectors)"
    cases = [
        ("hello", HELLO, 0, 0, 0, 0, b""),
        ("start_10khz", START, 0, 1, 0, 0, struct.pack("<I", 10_000)),
        ("stop", STOP, 0, 2, 0, 0, b""),
        ("zero", ZERO, 0, 3, 0, 0, b""),
        ("ping", PING, 0, 4, 0, 0, struct.pack("<I", 0xDEADBEEF)),
        ("release_50ms", RELEASE, 0, 5, 0, 0, struct.pack("<I", 50)),
        ("info", INFO, 0, 0, 0, 0, info_payload(fw)),
        ("info_empty_id", INFO, 0, 0, 0, 0, info_payload("", rate=1000, cpr=(4096, 2048),
                                                         boot_id=0xFFFFFFFFFFFFFFFF, max_spf=10)),
        ("info_max_id", INFO, 0, 0, 0, 0, info_payload("x" * 64, boot_id=1)),
        ("info_1_1_release", INFO, 0, 0, 0, 0, info_payload("hilrig-bridge 1.1.0 latch",
                                                            minor=1, caps=1)),
        ("samples_10", SAMPLES, 0, 1, 0, 10, samples_payload(ten)),
        ("samples_10_flags", SAMPLES, DEVICE_OVERRUN | ILLEGAL_TRANSITION_0
         | ILLEGAL_TRANSITION_1 | LATE_SAMPLE, 0xFFFFFFFF, 0xFFFFFFF6, 10, samples_payload(ten)),
        ("samples_10_overrun", SAMPLES, DEVICE_OVERRUN, 7, 70, 10, samples_payload(ten[::-1])),
        ("samples_1", SAMPLES, LATE_SAMPLE, 0x80000000, 0x12345678, 1, samples_payload([(-5, 5)])),
        ("samples_125", SAMPLES, 0, 100, 1000, 125, samples_payload(many)),
        ("samples_125_cobs_ff", SAMPLES, ILLEGAL_TRANSITION_1, 0x01020304, 0x05060708, 125,
         samples_payload(nonzero)),
        ("samples_40_cobs_tail254", SAMPLES, 0, None, 400, 40, samples_payload(tail254)),
        ("status", STATUS, 0, 600, 600_000, 0, status),
        ("status_flags", STATUS, ILLEGAL_TRANSITION_0 | LATE_SAMPLE, 0xFFFFFFFE, 0xFFFFFFFF, 0,
         struct.pack("<QIIIIII", 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF, 0, 0, 0xFFFFFFFF, 5, 6)),
        ("ack_start", ACK, 0, 1, 0, 0, struct.pack("<IB3xI", 1, START, 0)),
        ("ack_ping", ACK, 0, 2, 0, 0, struct.pack("<IB3xI", 4, PING, 0xDEADBEEF)),
        ("ack_release", ACK, 0, 5, 0, 0, struct.pack("<IB3xI", 5, RELEASE, 123_456)),
        ("nak_no_release_output", NAK, 0, 6, 0, 0, struct.pack("<IBB2xI", 5, RELEASE, 5, 0)),
        ("nak_rate", NAK, 0, 3, 0, 0, struct.pack("<IBB2xI", 5, START, 4, 123_456)),
        ("nak_unknown_type", NAK, 0, 0xFFFFFFFF, 0, 0,
         struct.pack("<IBB2xI", 0xFFFFFFFF, 0x7F, 1, 0)),
    ]
    out = []
    for name, t, flags, seq, fs, n, payload in cases:
        if seq is None:  # pick the first seq whose CRC has no zero byte
            seq = next(s for s in range(1, 1000)
                       if 0 not in ref_frame(t, flags, s, fs, n, payload)[-4:])
            frame = ref_frame(t, flags, seq, fs, n, payload)
            assert 0 not in frame[-254:] and frame[-255] == 0, name
        out.append((name, t, flags, seq, fs, n, payload))
    return out


def frames_text() -> str:
    lines = ["# Frames: name|msg_type|flags|seq|first_sample|n_samples|payload_hex|wire_hex",
             "# Integers decimal; wire = COBS(unstuffed frame) 00, canonical COBS; "
             "version_major 1;",
             "# payload_len = len(payload). See SPEC.md sections 2 and 4."]
    for name, t, flags, seq, fs, n, payload in frame_cases():
        wire = ref_cobs_encode(ref_frame(t, flags, seq, fs, n, payload)) + b"\x00"
        assert len(payload) + 20 <= 1024
        assert ref_cobs_decode(wire[:-1]) == ref_frame(t, flags, seq, fs, n, payload)
        lines.append(f"{name}|{t}|{flags}|{seq}|{fs}|{n}|{payload.hex()}|{wire.hex()}")
    return "\n".join(lines) + "\n"


# --- CRC -------------------------------------------------------------------------------

CRC_STRINGS = ["123456789", "", "a", "abc", "The quick brown fox jumps over the lazy dog",
               LAYOUT]


def crc_text() -> str:
    assert ref_crc32(b"123456789") == 0xCBF43926
    lines = ["# CRC-32 (zlib / IEEE 802.3): ascii|crc32_hex. The last line is LAYOUT (SPEC 4.1),",
             "# its CRC is LAYOUT_HASH."]
    lines += [f"{s}|{ref_crc32(s.encode()):08x}" for s in CRC_STRINGS]
    return "\n".join(lines) + "\n"


def generate() -> dict[str, str]:
    """File name -> exact file contents."""
    return {"cobs.txt": cobs_text(), "frames.txt": frames_text(), "crc.txt": crc_text()}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    files = generate()
    if "--check" in argv:
        stale = [n for n, text in files.items()
                 if not (DIR / n).exists() or (DIR / n).read_text(encoding="utf-8") != text]
        for n in stale:
            print(f"{DIR / n} differs from the generator", file=sys.stderr)
        return 1 if stale else 0
    for n, text in files.items():
        (DIR / n).write_text(text, encoding="utf-8", newline="\n")
        print(f"wrote {DIR / n} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
