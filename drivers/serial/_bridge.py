"""The serial bridge: the real rig's `Source`, over the bridge protocol (firmware_protocol/SPEC.md).

`SerialBridge` opens the port with pyserial through pyserial-asyncio-fast (the port is
read by the event loop's selector, never by a blocking call), checks the device's
INFO, starts the stream and turns SAMPLES frames into `SampleBlock`s.

Indices. The device numbers samples with a u32 `first_sample` that starts at 0 at each
START and wraps after 2**32 samples (5 days at 10 kHz). The host numbers them with an
int64 that never goes back: within a stream the host index advances by the device
index's forward difference taken mod 2**32 (so a wrap is invisible and a jump of d is a
gap of d); a jump backwards (d >= 2**31) is a restarted stream. Lost samples are never
closed up: a later block starts past the previous one's end, the gap is added to
`stats.lost_samples` and listed in `stats.gaps`.

Faults. A vanished port (read error, EOF) or a stalled stream (no valid frame for
`timeout_s`, with nothing left unread: a silence with bytes waiting is this host reading
late, counted in `stats.late_reads`, and they are read first) is logged once (WARNING,
logger "hilrig.serial", port and reason), the port is closed and reopened with
exponential backoff (`backoff` = first and longest delay), and the stream resumes after
a new handshake:

* same boot_id and the device still streaming (START answered NAK 3, "not now"): the
  stream is resumed as it is, so the gap is exact (device index difference);
* a new boot_id (the board reset) or a stream that had to be restarted: device indices
  start again at 0. The host cannot know how many samples the board would have taken
  meanwhile, so the host index jumps by an **estimate**: the host-measured outage
  between the old stream's end and the new stream's sample 0, times the rate. Each is
  timed from the frames that arrived soonest after they were made: a frame ending at
  sample k arrives at (time of sample k) + latency, and a host that reads late (busy,
  descheduled) only adds to the latency, so the minimum of arrival - k / rate over the
  old stream's last 256 frames, and over the START ACK and the new stream's first
  frames in the same read, carry the least latency. That latency is the same on both
  sides and cancels; the error is its jitter, a few ms, even on a host that stalls for
  tens of ms just as the ACK arrives. Such gaps are marked `exact=False` with kind
  "reset" / "restart".

A device of another protocol major version or layout (INFO, or frames whose version
byte is not 1) is refused with one clear line (`ProtocolMismatchError`, a
ConnectionError) naming the port and both versions; it is never retried.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, deque
from collections.abc import AsyncIterator
from typing import Any, Self

import numpy as np
import serial
import serial_asyncio_fast

from hilrig.firmware_protocol import (
    CAP_RELEASE_OUTPUT,
    LAYOUT_HASH,
    NAK_NO_RELEASE_OUTPUT,
    VERSION_MAJOR,
    VERSION_MINOR,
    Ack,
    Hello,
    Info,
    Message,
    MsgType,
    Nak,
    Ping,
    Release,
    Samples,
    Start,
    Status,
    Stop,
    StreamDecoder,
    Zero,
    encode_message,
)

from .._protocols import SampleBlock, SourceInfo
from ._link import Link, Port
from ._stats import DECODER_ERRORS, Gap, ProtocolMismatchError, SerialBridgeError, SerialStats
from ._versions import dominant_foreign_version, failure_reason, foreign_versions

__all__ = ["SerialBridge"]

log = logging.getLogger("hilrig.serial")

_MASK = 0xFFFFFFFF
_HALF = 1 << 31
NAK_NOT_NOW, NAK_RATE = 3, 4


class SerialBridge:
    """Source of encoder samples from the bridge firmware on a serial port (see module doc).

    `port` is a device path (a udev stable name or symlink is resolved at every open).
    `rate_hz` is requested with START. `timeout_s`: no valid frame for that long while
    streaming is a stall. `handshake_timeout_s`: wait for INFO / ACK (HELLO is tried 3
    times). Blocks hold up to `block_samples` consecutive samples with the same flags,
    and are never held back longer than `block_latency_s`. While streaming, the port is
    read at most every `read_interval_s` (the frames wait in the OS buffer meanwhile):
    one wakeup per few frames instead of one per frame (0: read whenever data arrives).
    Nested `async with` share one connection. Entering fails at once (SerialBridgeError)
    if the port cannot be opened or does not answer; `reconnect` applies once streaming
    has begun.
    """

    def __init__(self, port: str, *, baudrate: int = 2_000_000, rate_hz: int = 10_000,
                 reconnect: bool = True, backoff: tuple[float, float] = (0.5, 8.0),
                 timeout_s: float = 1.0, handshake_timeout_s: float = 1.0,
                 block_samples: int = 100, block_latency_s: float = 0.01,
                 read_interval_s: float = 0.005, max_queue_blocks: int = 4096) -> None:
        rate = int(rate_hz)
        if rate != rate_hz or not 0 < rate < 2**32:
            raise ValueError(f"rate_hz must be a positive integer (u32), got {rate_hz}")
        if not (0 < backoff[0] <= backoff[1]) or timeout_s <= 0 or handshake_timeout_s <= 0:
            raise ValueError("backoff needs 0 < first <= longest; timeouts must be > 0")
        if block_samples < 1 or block_latency_s <= 0:
            raise ValueError("block_samples >= 1 and block_latency_s > 0 are required")
        self.port = str(port)
        self.baudrate = int(baudrate)
        self.rate_hz = rate
        self.reconnect = reconnect
        self.backoff = (float(backoff[0]), float(backoff[1]))
        self.timeout_s = float(timeout_s)
        self.handshake_timeout_s = float(handshake_timeout_s)
        self.block_samples = int(block_samples)
        self.block_latency_s = float(block_latency_s)
        self.read_interval_s = max(0.0, float(read_interval_s))
        self.max_queue_blocks = int(max_queue_blocks)
        self.stats = SerialStats()
        self.boot_id: int | None = None
        self.device_info: Info | None = None
        self.info = SourceInfo(kind="serial", identity=f"serial:{self.port}:boot=unknown",
                               sample_rate_hz=float(rate), counts_per_rev=(40_000, 40_000),
                               protocol_version=f"{VERSION_MAJOR}.{VERSION_MINOR}")
        self._entered = 0
        self._closing = False
        # the connection
        self._gen = 0
        self._transport: asyncio.Transport | None = None
        self._link: Link | None = None
        self._decoder: StreamDecoder | None = None
        self._errors_closed: Counter[str] = Counter()  # decoder counters of closed links
        self._frames_closed = 0
        self._bytes_closed = 0
        self._tx_seq = 0
        self._streaming = False  # SAMPLES are mapped to host indices (else ignored)
        self._lost_reason: str | None = None
        self._event = asyncio.Event()
        self._info_fut: asyncio.Future[Info] | None = None
        self._replies: dict[int, asyncio.Future[Ack | Nak]] = {}
        self._handshake_raw = bytearray()  # bytes seen during the handshake (version byte)
        self._last_rx = 0.0
        self._late_rx = -1.0  # _last_rx when a silence was last found to be a late read
        # index mapping
        self._host_next = 0  # host index of the next sample
        self._dev_next: int | None = None  # expected next device index (u32); None: anchor
        self._anchor_kind = "restart"
        self._t_start = 0.0  # when the START of the current stream was sent
        self._start_plan: tuple[int, bool, str] | None = None  # seq, resume?, gap kind
        # arrival - host index / rate of the current stream's recent frames: the smallest
        # is the host clock at the stream's host index 0, plus the least latency
        self._offsets: deque[float] = deque(maxlen=256)
        self._old_end: float | None = None  # when the previous stream's next sample was due
        self._t_ack = 0.0  # arrival of the current stream's START ACK
        # blocks being assembled / ready
        self._parts: list[np.ndarray] = []
        self._part_n = 0
        self._part_first = 0
        self._part_flags = 0
        self._part_t0 = 0.0
        self._part_continuous = True
        self._discontinuous = False  # the next block follows a break of unknown length
        self._ready: deque[SampleBlock] = deque()

    # -- Source ------------------------------------------------------------------------------
    async def __aenter__(self) -> Self:
        if self._entered:
            self._entered += 1
            return self
        self._closing = False
        self._event = asyncio.Event()
        try:
            await self._connect()
        except SerialBridgeError:
            await self._drop_link()
            raise
        except (OSError, serial.SerialException, TimeoutError) as exc:
            await self._drop_link()
            raise SerialBridgeError(f"serial {self.port}: {failure_reason(exc)}") from None
        self._entered = 1
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._entered > 1:
            self._entered -= 1
            return
        self._entered = 0
        self._closing = True
        self._event.set()
        if self._transport is not None and not self._transport.is_closing():
            try:
                await self._request(Stop(), 0.5)
            except (SerialBridgeError, TimeoutError):
                pass  # the board goes on streaming into a closed port; the next HELLO copes
        await self._drop_link()

    async def blocks(self) -> AsyncIterator[SampleBlock]:
        while True:
            while self._ready:
                yield self._ready.popleft()
            if self._closing:
                return
            if self._part_n and (self._lost_reason is not None
                                 or time.monotonic() - self._last_rx >= self.timeout_s):
                self._flush_block()  # hand out what arrived before the fault first
                continue
            if self._lost_reason is not None:
                reason, self._lost_reason = self._lost_reason, None
                await self._recover(reason)
                continue
            now = time.monotonic()
            silent = now - self._last_rx
            if silent >= self.timeout_s and self._last_rx != self._late_rx \
                    and self._bytes_waiting():
                # bytes wait unread: this host was late (busy, descheduled), not the link;
                # a reconnection now would lose what the board sends meanwhile. Read what
                # waits first; a silence that outlasts it (line garbage) is a stall.
                self._late_rx = self._last_rx
                self.stats.late_reads += 1
                if self._transport is not None:
                    self._transport.resume_reading()
                await asyncio.sleep(max(self.read_interval_s, 0.002))
                continue
            if silent >= self.timeout_s:
                self.stats.errors["stalls"] = self.stats.errors.get("stalls", 0) + 1
                await self._recover(f"no frame for {silent:.1f} s (stalled)")
                continue
            self._event.clear()
            wait = min(self.block_latency_s, self.timeout_s - silent)
            try:
                async with asyncio.timeout(wait):
                    await self._event.wait()
            except TimeoutError:
                pass
            if self._part_n and time.monotonic() - self._part_t0 >= self.block_latency_s:
                self._flush_block()

    def _bytes_waiting(self) -> int:
        """Bytes the OS holds for this connection, not yet read."""
        port = self._transport.get_extra_info("serial") if self._transport is not None \
            else None
        try:
            return int(port.in_waiting) if port is not None else 0
        except (OSError, serial.SerialException):
            return 0

    # -- commands ----------------------------------------------------------------------------
    async def ping(self, token: int = 0x1234_5678) -> float:
        """Round trip of a PING, seconds."""
        t0 = time.monotonic()
        reply = await self._request(Ping(token & _MASK), self.handshake_timeout_s)
        if not isinstance(reply, Ack) or reply.value != token & _MASK:
            raise SerialBridgeError(f"serial {self.port}: PING answered {reply}")
        return time.monotonic() - t0

    async def zero(self) -> int:
        """Both counters become 0 at the next sample; returns that sample's device index."""
        reply = await self._request(Zero(), self.handshake_timeout_s)
        if not isinstance(reply, Ack):
            raise SerialBridgeError(f"serial {self.port}: ZERO refused ({reply})")
        return reply.value

    @property
    def can_release(self) -> bool:
        """The board drives a release latch (INFO capabilities, protocol 1.1)."""
        info = self.device_info
        return info is not None and bool(info.capabilities & CAP_RELEASE_OUTPUT)

    async def release(self, pulse_ms: int = 0) -> int | None:
        """Open the release latch; returns the host index of the first sample taken open.

        None if the stream is being re-anchored at that moment (the release happened;
        only its index is unknown). A board without a latch refuses (SerialBridgeError).
        """
        reply = await self._request(Release(int(pulse_ms) & _MASK), self.handshake_timeout_s)
        if isinstance(reply, Nak):
            why = ("the board has no release output" if reply.reason == NAK_NO_RELEASE_OUTPUT
                   else "not streaming" if reply.reason == 3
                   else "this firmware has no RELEASE (protocol 1.0)" if reply.reason == 1
                   else f"NAK reason {reply.reason}")
            raise SerialBridgeError(f"serial {self.port}: RELEASE refused: {why}")
        if self._dev_next is None:
            return None
        # device indices run forward mod 2**32 from the next one expected
        d = (reply.value - self._dev_next) & _MASK
        if d >= 2**31:
            d -= 2**32
        return self._host_next + d

    @property
    def connected(self) -> bool:
        return self._transport is not None and self._streaming

    # -- connection ------------------------------------------------------------------------
    async def _open(self) -> None:
        loop = asyncio.get_running_loop()
        self._gen += 1
        gen = self._gen
        link = Link(gen, self._on_data, self._on_lost, self.read_interval_s)
        # before a first stream, what the board sent before we listened is dropped on
        # opening; when reconnecting, what waits in the port is the rest of our stream
        # (samples sent intact while we were away): it is kept and placed
        keep = self._dev_next is not None
        device = await loop.run_in_executor(
            None, lambda: Port(self.port, baudrate=self.baudrate, keep_input=keep))
        transport, _ = await serial_asyncio_fast.connection_for_serial(
            loop, lambda: link, device)
        if gen != self._gen:  # closed meanwhile
            transport.abort()
            raise SerialBridgeError(f"serial {self.port}: closed while opening")
        if hasattr(transport, "_max_read_size"):
            transport._max_read_size = 65_536  # one read per wakeup, not per KiB
        self._transport, self._link = transport, link
        self._decoder = StreamDecoder()
        self._tx_seq = 0
        self._streaming = False
        self._lost_reason = None
        self._last_rx = time.monotonic()

    async def _drop_link(self) -> None:
        """Close the current connection (if any) and fold its counters into the stats."""
        transport, link, dec = self._transport, self._link, self._decoder
        self._transport = self._link = None
        self._streaming = False
        self._gen += 1
        if dec is not None:
            self._replace_decoder()
            self._decoder = None
            self._sync_errors()
        self._fail_waiters(SerialBridgeError(f"serial {self.port}: connection closed"))
        if transport is not None:
            if not transport.is_closing():  # (a lost port is closing already)
                transport.abort()
            if link is not None:
                try:
                    async with asyncio.timeout(2.0):
                        await link.closed
                except TimeoutError:
                    log.debug("serial %s: close did not complete", self.port)

    def _fail_waiters(self, exc: Exception) -> None:
        futs: list[asyncio.Future[Any]] = list(self._replies.values())
        if self._info_fut is not None:
            futs.append(self._info_fut)
        self._replies.clear()
        self._info_fut = None
        for f in futs:
            if not f.done():
                f.set_exception(exc)
                f.exception()  # retrieved: no "never retrieved" warning

    def _send(self, msg: Message) -> int:
        if self._transport is None or self._transport.is_closing():
            raise SerialBridgeError(f"serial {self.port}: not connected")
        seq = self._tx_seq
        self._tx_seq = (self._tx_seq + 1) & _MASK
        self._transport.write(encode_message(msg, seq))
        return seq

    async def _request(self, msg: Message, timeout: float) -> Ack | Nak:
        fut: asyncio.Future[Ack | Nak] = asyncio.get_running_loop().create_future()
        seq = self._send(msg)
        self._replies[seq] = fut
        try:
            async with asyncio.timeout(timeout):
                return await fut
        finally:
            self._replies.pop(seq, None)

    async def _hello(self) -> Info:
        """HELLO -> INFO, up to 3 times; a foreign protocol version raises at once."""
        for _attempt in range(3):
            self._info_fut = asyncio.get_running_loop().create_future()
            self._handshake_raw.clear()
            self._send(Hello())
            try:
                async with asyncio.timeout(self.handshake_timeout_s):
                    return await self._info_fut
            except TimeoutError:
                continue
            finally:
                self._info_fut = None
        v = dominant_foreign_version(bytes(self._handshake_raw))
        if v is not None:
            raise ProtocolMismatchError(
                f"serial {self.port}: the device speaks protocol version {v}.x (no INFO this "
                f"host can read), this host speaks {VERSION_MAJOR}.{VERSION_MINOR}")
        raise SerialBridgeError(f"serial {self.port}: no INFO in answer to HELLO "
                                f"({3 * self.handshake_timeout_s:g} s)")

    def _check_info(self, info: Info) -> None:
        if info.proto_major != VERSION_MAJOR or info.layout_hash != LAYOUT_HASH:
            what = (f"protocol version {info.proto_major}.{info.proto_minor}"
                    if info.proto_major != VERSION_MAJOR
                    else f"layout hash {info.layout_hash:08x} (protocol "
                         f"{info.proto_major}.{info.proto_minor})")
            mine = (f"{VERSION_MAJOR}.{VERSION_MINOR}" if info.proto_major != VERSION_MAJOR
                    else f"{LAYOUT_HASH:08x}")
            raise ProtocolMismatchError(
                f"serial {self.port}: the device ({info.firmware_id or 'unknown firmware'}) "
                f"speaks {what}, this host speaks {mine}")

    async def _connect(self) -> None:
        """Open, HELLO/INFO, START (or resume the running stream); raises on failure."""
        await self._drop_link()
        await self._open()
        try:
            info = await self._hello()
        except ProtocolMismatchError:
            raise
        except SerialBridgeError:
            self.stats.errors["handshake_failures"] = \
                self.stats.errors.get("handshake_failures", 0) + 1
            raise
        self._check_info(info)
        same_boot = self.boot_id is not None and info.boot_id == self.boot_id
        had_stream = self._dev_next is not None
        if self.boot_id is not None and not same_boot:
            self.stats.resets += 1
            log.warning("serial %s: the board reset (boot %016x -> %016x)", self.port,
                        self.boot_id, info.boot_id)
        self._adopt_info(info)
        resumable = same_boot and had_stream and info.sample_rate_hz == self.rate_hz
        reply = await self._start(resume=resumable, kind="restart" if same_boot else "reset")
        if isinstance(reply, Nak) and reply.reason == NAK_NOT_NOW and not resumable:
            await self._request(Stop(), self.handshake_timeout_s)  # someone else's stream
            reply = await self._start(resume=False, kind="restart" if same_boot else "reset")
        if isinstance(reply, Nak) and not self._streaming:
            why = {NAK_RATE: f"unsupported rate {self.rate_hz} Hz (device: {reply.value})",
                   NAK_NOT_NOW: "not now"}.get(reply.reason, f"reason {reply.reason}")
            raise SerialBridgeError(f"serial {self.port}: START refused: {why}")
        self._last_rx = time.monotonic()

    async def _start(self, *, resume: bool, kind: str) -> Ack | Nak:
        """Send START; its reply is acted on in _on_data, before any frame after it."""
        self._start_plan = (self._tx_seq, resume, kind)
        self._t_start = time.monotonic()
        try:
            return await self._request(Start(self.rate_hz), self.handshake_timeout_s)
        finally:
            self._start_plan = None

    def _start_reply(self, msg: Ack | Nak, now: float) -> None:
        assert self._start_plan is not None
        _seq, resume, kind = self._start_plan
        self._start_plan = None
        if isinstance(msg, Ack):  # a new stream: device indices start again at 0
            if self._offsets:
                self._flush_block()  # the old stream's samples, up to here
                self._discontinuous = True  # how long the break was, nobody knows
                # outage estimate (SPEC 5.5): from here to the new stream's sample 0
                self._old_end = min(self._offsets) + self._host_next / self.rate_hz
                self._anchor_kind = kind
            else:
                self._old_end = None
            self._offsets.clear()
            self._t_ack = now
            self._dev_next = None
            self._streaming = True
        elif msg.reason == NAK_NOT_NOW and resume:
            self._streaming = True  # our stream is still running: resume it, gap exact

    def _adopt_info(self, info: Info) -> None:
        self.device_info = info
        self.boot_id = info.boot_id
        self.info = SourceInfo(
            kind="serial", identity=f"serial:{self.port}:boot={info.boot_id:016x}",
            sample_rate_hz=float(self.rate_hz),
            counts_per_rev=(int(info.counts_per_rev[0]), int(info.counts_per_rev[1])),
            firmware=info.firmware_id or None,
            protocol_version=f"{info.proto_major}.{info.proto_minor}",
            boot_id=f"{info.boot_id:016x}")

    async def _recover(self, reason: str) -> None:
        """Log once, close, and reconnect with exponential backoff until streaming again."""
        self._flush_block()
        if not self.reconnect:
            await self._drop_link()
            raise SerialBridgeError(f"serial {self.port}: {reason}")
        log.warning("serial %s: %s; reconnecting", self.port, reason)
        self.stats.reconnects += 1
        t0 = time.monotonic()
        delay = self.backoff[0]
        attempt = 0
        while not self._closing:
            attempt += 1
            try:
                await self._connect()
            except ProtocolMismatchError:
                await self._drop_link()
                raise
            except (SerialBridgeError, OSError, serial.SerialException, TimeoutError) as exc:
                log.debug("serial %s: reconnect attempt %d failed: %s", self.port, attempt,
                          failure_reason(exc))
                await self._drop_link()
                await asyncio.sleep(delay)
                delay = min(2 * delay, self.backoff[1])
                continue
            log.info("serial %s: streaming again after %.1f s (%d attempt%s, boot %016x)",
                     self.port, time.monotonic() - t0, attempt, "" if attempt == 1 else "s",
                     self.boot_id or 0)
            return

    # -- receiving -----------------------------------------------------------------------------
    def _on_lost(self, gen: int, exc: Exception | None) -> None:
        if gen != self._gen or self._closing:
            return
        self.stats.errors["link_lost"] = self.stats.errors.get("link_lost", 0) + 1
        self._lost_reason = f"port lost ({failure_reason(exc) if exc else 'closed'})"
        self._fail_waiters(SerialBridgeError(f"serial {self.port}: {self._lost_reason}"))
        self._event.set()

    def _on_data(self, gen: int, data: bytes) -> bool:
        """The bytes of connection `gen`, decoded; whether that connection is streaming."""
        dec = self._decoder
        if gen != self._gen or dec is None:
            return False
        handshake = not self._streaming
        if handshake and len(self._handshake_raw) < 16_384:
            self._handshake_raw += data
        before = dec.unknown_version
        now = time.monotonic()
        try:
            decoded = dec.feed(data)
        except Exception:  # noqa: BLE001 - a decoder bug must not kill the stream
            log.exception("serial %s: decoder failed on %d bytes; they are dropped",
                          self.port, len(data))
            self.stats.errors["decoder_failures"] = \
                self.stats.errors.get("decoder_failures", 0) + 1
            self._replace_decoder()
            return False
        for i, (_frame, msg) in enumerate(decoded):
            self._last_rx = now
            if isinstance(msg, Samples):
                # during a reconnection's handshake frames still come from the stream we
                # were reading: placed by its mapping (exact), not thrown away
                if self._dev_next is None and self._streaming:
                    self._dev_next = self._anchor(msg.first_sample, now, decoded[i:])
                if self._streaming or self._dev_next is not None:
                    self._on_samples(msg, now)
            elif isinstance(msg, Status):
                self.stats.device = msg
            elif isinstance(msg, Ack | Nak):
                plan = self._start_plan
                if plan is not None and msg.acked_seq == plan[0] \
                        and msg.acked_type == MsgType.START:
                    self._start_reply(msg, now)
                fut = self._replies.pop(msg.acked_seq, None)
                if fut is not None and not fut.done():
                    fut.set_result(msg)
                if isinstance(msg, Nak):
                    self.stats.errors["naks"] = self.stats.errors.get("naks", 0) + 1
            elif isinstance(msg, Info):
                if self._info_fut is not None and not self._info_fut.done():
                    self._info_fut.set_result(msg)
        if handshake and dec.unknown_version > before and self._info_fut is not None:
            # frames of another major version with a valid CRC: a device of that version
            sure = foreign_versions(bytes(self._handshake_raw), crc_ok=True)
            if sure and not self._info_fut.done():
                ver = sure.most_common(1)[0][0]
                self._info_fut.set_exception(ProtocolMismatchError(
                    f"serial {self.port}: the device speaks protocol version {ver}.x, this "
                    f"host speaks {VERSION_MAJOR}.{VERSION_MINOR}"))
        if self._streaming and self._part_n and now - self._part_t0 >= self.block_latency_s:
            self._flush_block()
        return self._streaming and gen == self._gen

    def _on_samples(self, msg: Samples, now: float) -> None:
        first, counts = msg.first_sample, msg.counts
        n = counts.shape[0]
        if n == 0:
            return
        stats = self.stats
        assert self._dev_next is not None  # anchored by _on_data
        d = (first - self._dev_next) & _MASK
        if d >= _HALF:  # the device index went back: its stream was restarted
            stats.errors["index_restarts"] = stats.errors.get("index_restarts", 0) + 1
            self._flush_block()
            self._dev_next = first
            self._discontinuous = True  # when, relative to what came before, is unknown
            d = 0
        if d:
            self._flush_block()
            self._gap(self._host_next, d, "lost", True)
            self._host_next += d
        flags = msg.flags
        stats.flags_seen |= flags
        if self._part_n and (flags != self._part_flags
                             or self._part_n + n > self.block_samples):
            self._flush_block()
        if not self._part_n:
            self._part_first = self._host_next
            self._part_flags = flags
            self._part_t0 = now
            self._part_continuous = not self._discontinuous
            self._discontinuous = False
        self._parts.append(counts)
        self._part_n += n
        self._host_next += n
        self._dev_next = (first + n) & _MASK
        self._offsets.append(now - self._host_next / self.rate_hz)
        if self._part_n >= self.block_samples:
            self._flush_block()

    def _anchor(self, first: int, now: float, read: list[tuple[Any, Message]]) -> int:
        """Map a new stream's first frame: device index `first`, sample 0 after START.

        `read`: the frames of this read from that one on. Returns the device index
        expected next (`first`, or 0 for a stream whose first frames were lost).
        """
        # frames lost at the start of the stream are a gap, if `first` is plausible for
        # the time since START; a device whose index does not start at 0 is taken as is
        plausible = (now - self._t_start + 0.05) * self.rate_hz
        base = first if first > plausible else 0
        if first > plausible:
            log.debug("serial %s: stream starts at device index %d", self.port, first)
        if self._old_end is not None:
            # sample 0 was taken when the ACK left; the frames read with this one say
            # when, with less of the host's delay where they arrived sooner
            t0 = self._t_ack
            for _frame, msg in read:
                if isinstance(msg, Samples):
                    end = (msg.first_sample + msg.counts.shape[0] - base) & _MASK
                    t0 = min(t0, now - end / self.rate_hz)
            gap = max(0, round((t0 - self._old_end) * self.rate_hz))
            if gap:
                self._gap(self._host_next, gap, self._anchor_kind, False)
                self._host_next += gap
            self._old_end = None
        return base

    def _gap(self, first: int, count: int, kind: str, exact: bool) -> None:
        s = self.stats
        s.lost_samples += count
        if not exact:
            s.estimated_lost += count
        s.gap_count += 1
        s.gaps.append(Gap(first, count, kind, exact))

    def _flush_block(self) -> None:
        n = self._part_n
        if not n:
            return
        parts = self._parts
        counts = np.concatenate(parts) if len(parts) > 1 else parts[0].copy()
        block = SampleBlock(self._part_first, counts, time.monotonic(), self._part_flags,
                            self._part_continuous)
        self._parts = []
        self._part_n = 0
        ready = self._ready
        if len(ready) >= self.max_queue_blocks:  # nobody consumes: drop the oldest, visibly
            old = ready.popleft()
            self.stats.errors["host_overruns"] = self.stats.errors.get("host_overruns", 0) + 1
            self._gap(old.first_index, len(old), "host_overrun", True)
        ready.append(block)
        self.stats.blocks += 1
        self.stats.samples += n
        self._sync_errors()
        self._event.set()

    def _replace_decoder(self) -> None:
        dec = self._decoder
        if dec is not None:
            c = dec.counters()
            for k in DECODER_ERRORS:
                self._errors_closed[k] += c[k]
            self._bytes_closed += c["bytes_in"]
            self._frames_closed += c["frames_ok"]
        self._decoder = StreamDecoder()

    def _sync_errors(self) -> None:
        dec = self._decoder
        errors = self.stats.errors
        c = dec.counters() if dec is not None else {}
        for k in DECODER_ERRORS:
            errors[k] = self._errors_closed[k] + c.get(k, 0)
        self.stats.frames = self._frames_closed + (dec.frames_ok if dec is not None else 0)
        self.stats.bytes_in = self._bytes_closed + (dec.bytes_in if dec is not None else 0)
