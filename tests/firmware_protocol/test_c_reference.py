"""The C reference of the bridge protocol against the shared vectors and the Python codec.

``firmware_protocol/c/hilrig_proto.h`` (header-only C99) is compiled with gcc together
with ``firmware_protocol/c/test_hilrig_proto.c`` into a temporary directory, once plain
and once with ``-fsanitize=address,undefined`` where the toolchain supports it, and:

- its self tests run (CRC, COBS, frame checks, receiver error handling, payloads);
- it checks the shared vectors ``firmware_protocol/vectors/{cobs,crc,frames}.txt`` byte
  for byte and decodes every frame, also from a stream with 0x00 runs and garbage fed in
  odd chunk sizes;
- its encoder is compared with the Python ``encode_frame`` on random frames (argv mode
  and batch mode), its receiver with the Python ``StreamDecoder`` on random streams;
- the header compiles warning-free under stricter flags, and as C++ (the firmware
  includes it from ``main.cpp``);
- the firmware's portable bridge logic (``firmware_protocol/firmware/src/bridge.h``)
  runs a simulated session on the host (``firmware/host_test/bridge_host_test.cpp``).

Missing gcc or missing vector files make these tests fail, not skip.
"""

from __future__ import annotations

import os
import random
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
C_DIR = ROOT / "firmware_protocol" / "c"
HEADER = C_DIR / "hilrig_proto.h"
TEST_SRC = C_DIR / "test_hilrig_proto.c"
VECTOR_DIR = ROOT / "firmware_protocol" / "vectors"
VECTOR_FILES = ("cobs.txt", "crc.txt", "frames.txt")
FIRMWARE_DIR = ROOT / "firmware_protocol" / "firmware"
BRIDGE_TEST_SRC = FIRMWARE_DIR / "host_test" / "bridge_host_test.cpp"

CFLAGS = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]
SANITIZE = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all",
            "-fno-omit-frame-pointer"]
STRICT = ["-Wconversion", "-Wsign-conversion", "-Wshadow", "-Wcast-align", "-Wcast-qual",
          "-Wstrict-prototypes", "-Wmissing-prototypes", "-Wundef", "-Wpointer-arith"]
RUN_TIMEOUT = 120


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is required for the C reference tests and was not found on PATH")
    return path


def _compile(cmd: list[str]) -> None:
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=RUN_TIMEOUT)
    if proc.returncode != 0:
        pytest.fail(f"compile failed: {' '.join(cmd)}\n{proc.stdout}\n{proc.stderr}")


def _run(args: list[str], *, input: str | None = None, env: dict | None = None,
         check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, input=input, capture_output=True, text=True,
                          timeout=RUN_TIMEOUT, env=env)
    if check and proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {proc.returncode}\n"
                    f"--- stdout\n{proc.stdout[-6000:]}\n--- stderr\n{proc.stderr[-6000:]}")
    return proc


def _require_vectors() -> Path:
    missing = [name for name in VECTOR_FILES if not (VECTOR_DIR / name).is_file()]
    if missing:
        pytest.fail(f"shared vector files missing in {VECTOR_DIR}: {', '.join(missing)}")
    return VECTOR_DIR


def _san_env() -> dict:
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return env


# --- builds ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def build_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("hilrig_c")


@pytest.fixture(scope="module")
def gcc() -> str:
    return _tool("gcc")


@pytest.fixture(scope="module")
def c_binary(gcc, build_dir) -> Path:
    out = build_dir / "test_hilrig_proto"
    _compile([gcc, *CFLAGS, "-O2", f"-I{C_DIR}", str(TEST_SRC), "-o", str(out)])
    return out


@pytest.fixture(scope="module")
def sanitizers(gcc, build_dir) -> bool:
    """Whether gcc can build and run an ASan + UBSan program here."""
    src = build_dir / "probe.c"
    src.write_text("#include <stdlib.h>\nint main(void){char *p = malloc(4); p[0] = 0;"
                   " free(p); return 0;}\n")
    exe = build_dir / "probe"
    proc = subprocess.run([gcc, *SANITIZE, str(src), "-o", str(exe)], capture_output=True,
                          timeout=RUN_TIMEOUT)
    if proc.returncode != 0:
        return False
    return subprocess.run([str(exe)], capture_output=True, timeout=RUN_TIMEOUT,
                          env=_san_env()).returncode == 0


@pytest.fixture(scope="module")
def c_binary_san(gcc, build_dir, sanitizers) -> Path:
    if not sanitizers:
        pytest.skip("gcc here cannot build/run -fsanitize=address,undefined programs")
    out = build_dir / "test_hilrig_proto_san"
    _compile([gcc, *CFLAGS, *SANITIZE, "-O1", "-g", f"-I{C_DIR}", str(TEST_SRC), "-o",
              str(out)])
    return out


# --- the header itself -----------------------------------------------------------------

def test_header_compiles_strict_c99(gcc, build_dir):
    src = build_dir / "strict.c"
    src.write_text('#include "hilrig_proto.h"\n#include "hilrig_proto.h"\n'
                   "int main(void) { return (int)(hilrig_crc32(0, 0, 0) != 0u); }\n")
    _compile([gcc, *CFLAGS, *STRICT, f"-I{C_DIR}", "-c", str(src), "-o",
              str(build_dir / "strict.o")])


def test_header_compiles_as_cxx(build_dir):
    gxx = _tool("g++")
    src = build_dir / "strict.cpp"
    src.write_text('#include "hilrig_proto.h"\n'
                   "int main() { hilrig_rx_t rx; hilrig_rx_init(&rx); return 0; }\n")
    _compile([gxx, "-std=gnu++17", "-Wall", "-Wextra", "-Werror", "-pedantic",
              "-Wconversion", "-Wshadow", f"-I{C_DIR}", "-c", str(src), "-o",
              str(build_dir / "strict_cxx.o")])


def test_header_is_freestanding():
    """No allocation, no stdio in the header (it runs on the Teensy)."""
    text = HEADER.read_text()
    code = "\n".join(line for line in text.splitlines()
                     if not line.lstrip().startswith(("*", "/*", "//")))
    for banned in ("malloc", "free(", "printf", "<stdio.h>", "<stdlib.h>", "<string.h>",
                   "memcpy", "#pragma pack"):
        assert banned not in code, banned
    includes = {line.split()[1] for line in text.splitlines() if line.startswith("#include")}
    assert includes == {"<stddef.h>", "<stdint.h>"}


# --- self tests and shared vectors -------------------------------------------------------

def test_selftest(c_binary):
    out = _run([str(c_binary), "selftest"]).stdout
    assert "0 failures" in out


def test_selftest_sanitized(c_binary_san):
    out = _run([str(c_binary_san), "selftest"], env=_san_env()).stdout
    assert "0 failures" in out


def test_shared_vectors(c_binary):
    vectors = _require_vectors()
    out = _run([str(c_binary), "vectors", str(vectors)]).stdout
    assert "0 failures" in out
    n_frames = sum(1 for line in (vectors / "frames.txt").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert f"frames {n_frames};" in out


def test_shared_vectors_sanitized(c_binary_san):
    vectors = _require_vectors()
    out = _run([str(c_binary_san), "vectors", str(vectors)], env=_san_env()).stdout
    assert "0 failures" in out


def test_vectors_fail_when_a_file_is_missing(c_binary, tmp_path):
    """The C runner reports missing vector files as failures, never as a pass."""
    proc = _run([str(c_binary), "vectors", str(tmp_path)], check=False)
    assert proc.returncode != 0
    assert "cannot open" in proc.stderr


def _frame_rows() -> list[list[str]]:
    rows = []
    for line in (_require_vectors() / "frames.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            rows.append(line.split("|"))
    return rows


def test_argv_encode_matches_frame_vectors(c_binary):
    for name, t, flags, seq, first, n, payload, wire in _frame_rows():
        out = _run([str(c_binary), "encode", t, flags, seq, first, n, payload or "-"]).stdout
        assert out.strip() == wire, name


# --- cross tests against the Python codec ----------------------------------------------

def _python_codec():
    try:
        from hilrig.firmware_protocol import StreamDecoder, encode_frame
    except ImportError as exc:  # the codec is required, not optional
        pytest.fail(f"the Python codec is not importable: {exc}")
    return encode_frame, StreamDecoder


def _random_payload(rng: random.Random) -> bytes:
    kind = rng.randrange(8)
    n = rng.choice([0, 1, 4, 12, 32, 80, 250, 253, 254, 255, 508, 1000, 1004,
                    rng.randrange(0, 1005)])
    if kind == 0:
        return bytes(n)                                   # all zeros
    if kind == 1:
        return bytes(rng.randrange(1, 256) for _ in range(n))  # no zeros: long COBS blocks
    if kind == 2:
        return b"\xff" * n
    if kind == 3:                                         # zeros every 254th byte
        return bytes(0 if i % 254 == 253 else 0x5A for i in range(n))
    return rng.randbytes(n)


def _random_fields(rng: random.Random) -> tuple[int, int, int, int, int, bytes]:
    payload = _random_payload(rng)
    t = rng.choice([0x01, 0x02, 0x03, 0x04, 0x05, 0x81, 0x82, 0x83, 0x84, 0x85,
                    rng.randrange(256)])
    flags = rng.choice([0, 1, 0x0F, 0xFFFF, rng.randrange(1 << 16)])
    seq = rng.choice([0, 1, 0xFFFFFFFF, rng.randrange(1 << 32)])
    first = rng.choice([0, 0xFFFFFFFF, rng.randrange(1 << 32)])
    n = len(payload) // 8 if t == 0x82 else rng.choice([0, rng.randrange(1 << 16)])
    return t, flags, seq, first, n, payload


def test_cross_encode_random_frames(c_binary):
    encode_frame, _ = _python_codec()
    rng = random.Random(20240601)
    frames = [_random_fields(rng) for _ in range(400)]
    lines = "".join(f"{t} {fl} {sq} {fs} {n} {p.hex() or '-'}\n"
                    for t, fl, sq, fs, n, p in frames)
    out = _run([str(c_binary), "encode-batch"], input=lines).stdout.split()
    assert len(out) == len(frames)
    for (t, fl, sq, fs, n, p), c_hex in zip(frames, out):
        py = encode_frame(t, sq, p, flags=fl, first_sample=fs, n_samples=n)
        assert c_hex == py.hex(), (t, fl, sq, fs, n, len(p))
    # argv mode, a few of them
    for t, fl, sq, fs, n, p in frames[:12]:
        c_hex = _run([str(c_binary), "encode", str(t), str(fl), str(sq), str(fs), str(n),
                      p.hex() or "-"]).stdout.strip()
        assert c_hex == encode_frame(t, sq, p, flags=fl, first_sample=fs, n_samples=n).hex()


def test_cross_encode_refuses_oversized_payload(c_binary):
    proc = _run([str(c_binary), "encode", "130", "0", "0", "0", "0", "00" * 1005], check=False)
    assert proc.returncode == 1 and proc.stdout.strip() == "error"


def test_cross_decode_python_wires(c_binary):
    encode_frame, _ = _python_codec()
    rng = random.Random(7)
    frames = []
    for _ in range(300):
        t, fl, sq, fs, n, p = _random_fields(rng)
        t = rng.choice([0x01, 0x05, 0x82, 0x84])  # types whose payload rules we can meet
        p = {0x01: b"", 0x05: rng.randbytes(4), 0x84: rng.randbytes(12)}.get(t, p[:1000])
        p = p[: len(p) - len(p) % 8] if t == 0x82 else p
        n = len(p) // 8 if t == 0x82 else n
        frames.append((t, fl, sq, fs, n, p))
    lines = "".join(encode_frame(t, sq, p, flags=fl, first_sample=fs, n_samples=n).hex() + "\n"
                    for t, fl, sq, fs, n, p in frames)
    out = _run([str(c_binary), "decode-batch"], input=lines).stdout.splitlines()
    assert len(out) == 2 * len(frames)
    for i, (t, fl, sq, fs, n, p) in enumerate(frames):
        assert out[2 * i] == f"frame {t} {fl} {sq} {fs} {n} {p.hex() or '-'}"
        assert out[2 * i + 1] == "stats 1 0 0 0 0 0 0 0"


def _cobs(data: bytes) -> bytes:
    from hilrig.firmware_protocol import cobs_encode
    return cobs_encode(data)


def _raw_frame(version: int, t: int, payload: bytes, plen: int | None = None) -> bytes:
    head = struct.pack("<BBHIIHH", version, t, 0, 3, 0, 0,
                       len(payload) if plen is None else plen) + payload
    return head + struct.pack("<I", zlib.crc32(head))


def _random_stream(rng: random.Random, encode_frame) -> bytes:
    """Frames, delimiter runs and every kind of damage the receivers must count."""
    out = bytearray()
    for _ in range(120):
        kind = rng.randrange(12)
        if kind == 0:
            out += b"\x00" * rng.randrange(1, 5)
        elif kind == 1:  # random non-zero junk, closed by a delimiter (never a lone 01)
            out += bytes(rng.randrange(1, 256) for _ in range(rng.randrange(2, 90))) + b"\x00"
        elif kind == 2:  # oversize: more than 1030 bytes without a delimiter
            out += bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1031, 1700)))
            out += b"\x00"
        elif kind == 3:  # a valid frame with one byte changed
            w = bytearray(encode_frame(0x82, rng.randrange(1 << 32), rng.randbytes(80),
                                       n_samples=10))
            i = rng.randrange(len(w) - 1)
            w[i] = rng.choice([b for b in range(1, 256) if b != w[i]])
            out += w
        elif kind == 4:  # unknown version with a good CRC
            out += _cobs(_raw_frame(rng.choice([0, 2, 255]), 0x84, rng.randbytes(12))) + b"\x00"
        elif kind == 5:  # payload_len disagrees with the length
            out += _cobs(_raw_frame(1, 0x84, rng.randbytes(12), plen=13)) + b"\x00"
        elif kind == 6:  # too short to be a frame, or empty (01 00)
            short = b"" if rng.random() < 0.3 else b"\x01" + rng.randbytes(rng.randrange(0, 19))
            out += _cobs(short) + b"\x00"
        elif kind == 7:  # unstuffs to more than MAX_FRAME (but <= 1030 stuffed bytes)
            out += _cobs(_raw_frame(1, 0x82, bytes(rng.randrange(1, 256) for _ in range(1005)),
                                    plen=1005)) + b"\x00"
        elif kind == 8:  # unknown type / bad payload, frame-valid
            if rng.random() < 0.5:
                out += encode_frame(rng.choice([0x00, 0x07, 0x42, 0x86, 0xFF]), 5, b"xy")
            else:
                out += encode_frame(0x05, 6, b"abc")
        else:  # good frames
            t = rng.choice([0x82, 0x83, 0x84, 0x05])
            p = {0x82: rng.randbytes(8 * 10), 0x83: rng.randbytes(32), 0x84: rng.randbytes(12),
                 0x05: rng.randbytes(4)}[t]
            out += encode_frame(t, rng.randrange(1 << 32), p, flags=rng.randrange(16),
                                first_sample=rng.randrange(1 << 32),
                                n_samples=10 if t == 0x82 else 0)
    return bytes(out)


def test_cross_stream_counters_match_python(c_binary):
    """C receiver and Python StreamDecoder agree on frames and on every error counter."""
    encode_frame, StreamDecoder = _python_codec()
    rng = random.Random(99)
    streams = [_random_stream(rng, encode_frame) for _ in range(6)]
    out = _run([str(c_binary), "decode-batch"],
               input="".join(s.hex() + "\n" for s in streams)).stdout.splitlines()
    blocks, current = [], []
    for line in out:
        if line.startswith("stats "):
            blocks.append((current, [int(x) for x in line.split()[1:]]))
            current = []
        else:
            current.append(line)
    assert len(blocks) == len(streams)
    seen = [0] * 7
    for stream, (c_frames, c_stats) in zip(streams, blocks):
        dec = StreamDecoder()
        py_frames = []
        pos = 0
        while pos < len(stream):  # odd chunk sizes on the Python side
            step = rng.choice([1, 3, 7, 64, 509, 1031, 4096])
            for frame, _msg in dec.feed(stream[pos:pos + step]):
                py_frames.append(f"frame {frame.msg_type} {frame.flags} {frame.seq} "
                                 f"{frame.first_sample} {frame.n_samples} "
                                 f"{frame.payload.hex() or '-'}")
            pos += step
        assert c_frames == py_frames
        frames, crc, cobs, oversize, length, version, unknown_type, bad_payload = c_stats
        c = dec.counters()
        assert (frames - unknown_type - bad_payload, crc, cobs, oversize, length, version,
                unknown_type, bad_payload) == (
            c["frames_ok"], c["crc_errors"], c["cobs_errors"], c["oversize"],
            c["length_errors"], c["unknown_version"], c["unknown_type"], c["bad_payload"])
        seen = [a + b for a, b in zip(seen, c_stats[1:])]
    # The streams exercised every error path at least once, so the agreement means something.
    assert all(seen), seen


def test_target_compile_cortex_m7(build_dir):
    """Header and bridge logic compile warning-free for the Teensy 4.x CPU (optional tool)."""
    gcc_arm = shutil.which("arm-none-eabi-gcc")
    gxx_arm = shutil.which("arm-none-eabi-g++")
    if not gcc_arm or not gxx_arm:
        pytest.skip("arm-none-eabi-gcc not installed (Debian: gcc-arm-none-eabi)")
    cpu = ["-mcpu=cortex-m7", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv5-d16", "-ffreestanding",
           "-O2"]
    src = build_dir / "target.c"
    src.write_text('#include "hilrig_proto.h"\n'
                   "unsigned long f(const unsigned char *p, unsigned n);\n"
                   "unsigned long f(const unsigned char *p, unsigned n) {\n"
                   "    hilrig_rx_t rx; hilrig_frame_t fr; size_t used;\n"
                   "    hilrig_rx_init(&rx);\n"
                   "    return (unsigned long)hilrig_rx_feed(&rx, p, n, &used, &fr);\n}\n")
    _compile([gcc_arm, *cpu, *CFLAGS, *STRICT, f"-I{C_DIR}", "-c", str(src), "-o",
              str(build_dir / "target.o")])
    src = build_dir / "target_bridge.cpp"
    src.write_text(
        '#include "bridge.h"\n'
        "struct P : hilrig::Port {\n"
        "    size_t availableForWrite() override { return 0; }\n"
        "    size_t write(const uint8_t *, size_t n) override { return n; }\n"
        "    uint64_t micros64() override { return 0; }\n"
        "    bool startSampling(uint32_t) override { return true; }\n"
        "    void stopSampling() override {}\n};\n"
        "static P port;\nstatic hilrig::SampleEntry ring[8192];\n"
        "hilrig::Bridge *make(const hilrig::BridgeConfig &c);\n"
        "hilrig::Bridge *make(const hilrig::BridgeConfig &c) {\n"
        "    static hilrig::Bridge b(port, c, ring, 8192);\n"
        "    b.onSampleIsr(1, 2, 3, false, true);\n    b.poll();\n    return &b;\n}\n")
    _compile([gxx_arm, *cpu, "-std=gnu++17", "-fno-exceptions", "-fno-rtti", "-Wall",
              "-Wextra", "-Werror", "-pedantic", f"-I{C_DIR}", f"-I{FIRMWARE_DIR / 'src'}", "-c",
              str(src), "-o", str(build_dir / "target_bridge.o")])


# --- the firmware's portable logic on the host ----------------------------------------------

def test_firmware_bridge_host_session(build_dir):
    """bridge.h (the firmware's protocol/session logic) against a simulated Teensy."""
    gxx = _tool("g++")
    if not BRIDGE_TEST_SRC.is_file():
        pytest.fail(f"missing {BRIDGE_TEST_SRC}")
    exe = build_dir / "bridge_host_test"
    flags = ["-std=gnu++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O1", "-g"]
    probe = subprocess.run([gxx, *SANITIZE, "-x", "c++", "-", "-o", str(build_dir / "p2")],
                           input=b"int main(){return 0;}", capture_output=True)
    if probe.returncode == 0:
        flags += SANITIZE
    _compile([gxx, *flags, f"-I{C_DIR}", f"-I{FIRMWARE_DIR / 'src'}", str(BRIDGE_TEST_SRC),
              "-o", str(exe)])
    out = _run([str(exe)], env=_san_env()).stdout
    assert "0 failures" in out
