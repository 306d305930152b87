"""A firmware emulator: the device side of the bridge protocol (firmware_protocol/SPEC.md) on a pty.

`FirmwareEmulator` opens a pseudo-terminal (``os.openpty``; the device side, the slave,
in raw mode) and behaves like the bridge on a USB CDC port: silent until HELLO, INFO
with a random boot_id, ACK/NAK for START, STOP, ZERO and PING, then SAMPLES frames of
10 samples at 10 kHz and a STATUS about once a second, with samples from a
`RigFeed` (a `SimulatedRig` that is released from its pose after a hold time and
re-held once it has settled). A host opens `port` (the pty's slave, or the symlink
`link` pointing at it, as a udev stable name does) with pyserial.

Threading: the emulator runs in its **own thread** (`start()` / `stop()`, or ``with`` /
``async with``), never in the host's event loop, so the device keeps its sample clock
whatever the host does, as a real board would. `serve_forever()` runs the same loop in
the calling thread (the CLI). Each pass of the loop reads host commands, makes every
frame that has come due since the last pass (paced: sample k is taken at k / rate after
START) and writes them with one ``os.write``: about one write per millisecond.

The device has a bounded transmit buffer (`tx_buffer` bytes, beside the kernel's pty
buffer) and a sample FIFO (`fifo_s`): frames wait in the FIFO while the transmit buffer
is full (a host that does not read), and when the FIFO overflows the oldest frames are
dropped whole and counted as a real device would (STATUS frames_dropped /
samples_dropped, DEVICE_OVERRUN on the next SAMPLES frame sent). The stream leaves
room in the buffer for four replies (SPEC 6), so a command is answered however backed
up the stream is.
Unpaced (`paced=False`) there is no sample clock: frames are made whenever the buffer
has room, as fast as the host reads, and nothing is dropped for lack of room.

Fault knobs (times in seconds of wall clock since the device's **first START**):

* ``corrupt`` / ``drop``: probability per SAMPLES or STATUS frame of flipping one random
  bit / deleting one random byte of its wire bytes (delimiter included: a lost
  delimiter merges the frame with the next, which is then spoiled too). Replies
  (INFO, ACK, NAK) are sent clean so that the handshake stays deterministic.
* ``stall=(T, S)``: nothing is sent from T for S seconds; samples go on being taken and
  their frames are dropped by the device (counted, DEVICE_OVERRUN afterwards).
* ``reset_at=T``: the board resets: new boot_id, streaming stops, send seq and the
  counters restart, and it is silent until the next HELLO; the next START restarts
  the sample index at 0.
* ``vanish=(T, S)``: the pty is closed at T (the port disappears, the symlink is
  removed) and a new pty appears S seconds later (the symlink points at it again).
  The board stays powered: same boot_id, the stream goes on, frames meanwhile are
  dropped by the device. The port closes once the host has read what the kernel held
  (up to 1 s): what is lost with it is the board's unsent buffer, known exactly; where
  the host is not reading, the frames the kernel may still hold are `record.unsure`.
* ``latch=True``: the board has a release output (protocol 1.1): the rig stays held at
  its pose until the host sends RELEASE, which lets it go at the next sample made and
  is answered with that sample's device index (`record.releases`).
* ``version=2``: every frame goes out with version_major 2 and INFO says proto 2.0.
* ``garbage=(T, S)``: from T for S seconds the link carries random bytes (uniform
  noise, runs without a delimiter, broken and foreign frames) at about the link's rate
  instead of frames; ``(0, inf)`` floods for ever.

Every frame that does not reach the host intact is listed in `record.spoiled` with its
session, type, first_sample, n_samples and the reason ("corrupt", "drop", "merged",
"stall", "vanished", "garbage", "tx_full"), so a test can check the host's loss
accounting exactly. `record.sessions` lists each START with the feed (physical)
index of its sample 0.
"""

from __future__ import annotations

import fcntl
import logging
import os
import select
import struct
import termios
import threading
import time
import tty
from collections import deque
from pathlib import Path
from typing import Any, Self

import numpy as np

from hilrig.firmware_protocol import (
    CAP_RELEASE_OUTPUT,
    HEADER_SIZE,
    MAX_SAMPLES_PER_FRAME,
    NAK_NO_RELEASE_OUTPUT,
    TRAILER_SIZE,
    VERSION_MINOR,
    Ack,
    Flags,
    Frame,
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
    cobs_decode,
    cobs_encode,
    crc32,
    encode_message,
)

from ._config import EmulatorConfig, EmulatorRecord, SentFrame, Session, Spoiled
from ._faults import garbage as _garbage
from ._feed import RigFeed

__all__ = ["FirmwareEmulator"]

log = logging.getLogger("hilrig.emulator")

NAK_UNKNOWN_TYPE, NAK_BAD_PAYLOAD, NAK_NOT_NOW, NAK_RATE = 1, 2, 3, 4
_LINK_BYTES_PER_S = 102_000  # SPEC 6: 10 kHz, 10 samples per frame
_STATUS_PAYLOAD = 32  # SPEC 4.2
_ACK_PAYLOAD = 12  # SPEC 4
# the most a pty holds beyond what FIONREAD counts (its flip buffer behind a full line
# discipline: 18 kB measured on Linux 6.18; its limit is 64 KiB)
_KERNEL_HIDDEN = 65_536


def _wire_bytes(payload: int) -> int:
    """The most bytes a frame with this payload takes on the wire (COBS and delimiter)."""
    n = HEADER_SIZE + payload + TRAILER_SIZE
    return n + n // 254 + 2


class FirmwareEmulator:
    """The bridge firmware on a pseudo-terminal, in its own thread (see module docstring)."""

    def __init__(self, config: EmulatorConfig | None = None, **knobs: Any) -> None:
        if config is None:
            config = EmulatorConfig(**knobs)
        elif knobs:
            raise TypeError("pass either a config or keyword knobs, not both")
        self.config = cfg = config
        self.record = EmulatorRecord()
        self._rng = np.random.default_rng(cfg.seed)
        self._feed = RigFeed(rig=cfg.rig, friction=cfg.friction, pose_deg=cfg.pose_deg,
                             rate_hz=cfg.rate_hz, counts_per_rev=cfg.counts_per_rev,
                             hold_s=cfg.hold_s, rehold_still_s=cfg.rehold_still_s,
                             latch=cfg.latch)
        self._master: int | None = None
        self._slave: int | None = None
        self.pty_path: str | None = None
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._out = bytearray()
        # where each SAMPLES frame handed over lies in the byte stream, so what a reset or
        # a vanished port loses is recorded: (end offset, frame)
        self._appended = 0  # bytes put in _out, ever
        self._written = 0  # bytes written to the pty, ever
        self._in_flight: deque[tuple[int, SentFrame]] = deque()
        self._decoder = StreamDecoder()
        self._t_boot = time.monotonic()
        self._new_boot()
        self._t_first: float | None = None  # first START: the fault clock's zero
        self._vanished_until: float | None = None
        self._reset_done = False
        self._vanish_done = False
        self._merge_next = False
        self._cut = False
        self._overrun_pending = False
        self._t_flood: float | None = None
        self._fifo_frames = max(1, int(cfg.fifo_s * cfg.rate_hz) // cfg.samples_per_frame)
        # room is counted in whole frames, keeping a STATUS's worth for the one a pass may
        # add, so a frame the device decides to send always fits its transmit buffer;
        # and the stream leaves four replies' room (SPEC 6), as the firmware does
        self._frame_bytes = _wire_bytes(8 * cfg.samples_per_frame)
        self._status_bytes = _wire_bytes(_STATUS_PAYLOAD)
        self._reply_reserve = 4 * _wire_bytes(_ACK_PAYLOAD)
        self.error: BaseException | None = None

    # -- public --------------------------------------------------------------------------
    @property
    def port(self) -> str:
        """What a host opens: the link if one is configured, else the pty's slave path."""
        if self.config.link:
            return self.config.link
        if self.pty_path is None:
            raise RuntimeError("the emulator has not been started")
        return self.pty_path

    @property
    def boot_id(self) -> int:
        return self._boot_id

    def start(self) -> Self:
        """Open the pty and run the device in a daemon thread."""
        if self._thread is not None:
            raise RuntimeError("already started")
        _warm_up()
        self._open_pty()
        self._thread = threading.Thread(target=self._run_guarded, name="firmware-emulator",
                                        daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Open the pty (unless open) and run the device in this thread until stop()."""
        _warm_up()
        if self._master is None and self._vanished_until is None:
            self._open_pty()
        self._run_guarded()

    def stop(self) -> None:
        """Stop the device loop (from any thread or a signal handler) and close the pty."""
        self._stop.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5.0)
            self._thread = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the device thread to end (stop() or an error); True if it has."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return self.start()

    async def __aexit__(self, *exc: object) -> None:
        import asyncio
        await asyncio.to_thread(self.stop)

    # -- the pty -------------------------------------------------------------------------
    def _open_pty(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # the device side: no echo, no line editing, 8-bit clean
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        self._cut = False
        self.pty_path = os.ttyname(slave)
        self.record.ports.append(self.pty_path)
        link = self.config.link
        if link:
            Path(link).parent.mkdir(parents=True, exist_ok=True)
            tmp = f"{link}.{os.getpid()}.tmp"
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            os.symlink(self.pty_path, tmp)
            os.replace(tmp, link)  # atomic, like udev renaming its link
        self._decoder = StreamDecoder()
        self._event(f"pty {self.pty_path}" + (f" (link {link})" if link else ""))

    def _unread(self) -> int:
        """Bytes the kernel holds on the host's side of the pty, not yet read."""
        if self._slave is None:
            return 0
        try:
            return struct.unpack("i", fcntl.ioctl(self._slave, termios.FIONREAD,
                                                  b"\0\0\0\0"))[0]
        except OSError:
            return 0

    def _await_drained(self, quiet_s: float = 0.05, limit_s: float = 1.0) -> bool:
        """Stop writing and wait (at most `limit_s`) until the host has read the kernel's
        buffer and it has stayed empty for `quiet_s`; whether it did.

        What a vanished port loses is then what the board had not written (its transmit
        buffer, recorded exactly), not bytes the kernel held: the count of those is a
        race with the host's reads (the GIL is let go in the ioctl), and the pty's flip
        buffer, which FIONREAD does not count, holds tens of kB behind a full line
        discipline. A test instrument must know what it lost.
        """
        t_end = time.monotonic() + limit_s
        quiet_since: float | None = None
        while (now := time.monotonic()) < t_end:
            if self._unread():
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= quiet_s:
                return True
            time.sleep(0.002)
        return False

    def _close_pty(self, drained: bool = True) -> None:
        unread = self._unread()  # bytes the host had not read: gone with the port
        if not drained:  # the host was not reading: the kernel may hold more than FIONREAD
            known = self._written - unread
            self.record.unsure += [(f.session, f.first_sample) for end, f in self._in_flight
                                   if known - _KERNEL_HIDDEN < end <= known]
        self._lose_from(self._written - unread, "vanished")
        if self.config.link:
            try:
                if os.path.islink(self.config.link) and \
                        os.readlink(self.config.link) == self.pty_path:
                    os.unlink(self.config.link)
            except OSError:
                pass
        for fd in (self._master, self._slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._master = self._slave = None
        self._out.clear()  # what was not yet written is gone with the port

    # -- device state --------------------------------------------------------------------
    def _new_boot(self) -> None:
        self._boot_id = int(self._rng.integers(1, 2**63, dtype=np.int64)) \
            | (int(self._rng.integers(0, 2, dtype=np.int64)) << 63)
        self.record.boot_ids.append(self._boot_id)
        self._t_boot = time.monotonic()
        self._hello = False
        self._seq = 0
        self._streaming = False
        self._session = -1
        self._taken = 0  # samples taken since START
        self._frames_dropped = 0
        self._samples_dropped = 0
        self._next_status = 0
        self._zero = np.zeros(2, np.int32)
        self._zero_pending = False
        self._t_start = 0.0

    def _event(self, text: str) -> None:
        self.record.events.append((time.monotonic(), text))
        log.info("emulator: %s", text)

    def _fault_clock(self, now: float) -> float | None:
        return None if self._t_first is None else now - self._t_first

    @staticmethod
    def _in(window: tuple[float, float] | None, t: float | None) -> bool:
        return window is not None and t is not None and window[0] <= t < window[0] + window[1]

    # -- the loop --------------------------------------------------------------------------
    def _run_guarded(self) -> None:
        try:
            self._run()
        except BaseException as exc:  # noqa: BLE001 - a test reads .error
            self.error = exc
            log.exception("firmware emulator failed")
        finally:
            self._close_pty()
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._wake_r = self._wake_w = -1

    def _run(self) -> None:
        cfg = self.config
        spf = cfg.samples_per_frame
        rate = float(cfg.rate_hz)
        while not self._stop.is_set():
            now = time.monotonic()
            self._faults(now)
            if self._master is not None:
                self._read_commands()
            if self._streaming:
                free = (cfg.tx_buffer - len(self._out) - self._status_bytes
                        - self._reply_reserve)
                room = max(0, free // self._frame_bytes)
                if cfg.paced:
                    due = int((now - self._t_start) * rate) // spf - self._taken // spf
                    # the FIFO holds what the transmit buffer has no room for: a pass of
                    # this loop that comes late (its thread paused) with room to send is
                    # the emulator's delay, not a host that stopped reading
                    blocked = self._blocked(now) is not None
                    sendable = 0 if blocked else room
                    if due - sendable > self._fifo_frames:  # the FIFO overflowed: oldest lost
                        lost = due - sendable - self._fifo_frames
                        self._produce(lost, now, overrun=True)
                        due -= lost
                    if not blocked:
                        due = min(due, room)  # the rest waits in the FIFO
                else:
                    due = min(100, room)
                if due > 0:
                    self._produce(due, now)
            if self._in(cfg.garbage, self._fault_clock(now)):
                self._flood(now)
            self._flush()
            # how long to wait
            timeout = 0.05
            if self._streaming:
                if cfg.paced:
                    next_due = self._t_start + (self._taken + spf) / rate
                    timeout = min(timeout, max(0.0, next_due - time.monotonic()))
                elif len(self._out) < cfg.tx_buffer // 2:
                    timeout = 0.0
            if self._vanished_until is not None:
                timeout = min(timeout, max(0.0, self._vanished_until - time.monotonic()))
            rlist = [self._wake_r]
            wlist = []
            if self._master is not None:
                rlist.append(self._master)
                if self._out:
                    wlist.append(self._master)
            if timeout > 0 or not wlist:
                select.select(rlist, wlist, [], timeout)
            if self._stop.is_set():
                break
            try:
                os.read(self._wake_r, 64)
            except BlockingIOError:
                pass

    def _faults(self, now: float) -> None:
        cfg = self.config
        t = self._fault_clock(now)
        if t is None:
            return
        if cfg.reset_at is not None and not self._reset_done and t >= cfg.reset_at:
            self._reset_done = True
            was = self._boot_id
            self._lose_from(self._written, "reset")
            self._out.clear()  # the board's RAM is gone
            self._new_boot()
            self._merge_next = self._cut  # a frame cut short swallows the next one sent
            self._overrun_pending = False
            self._event(f"reset: boot {was:016x} -> {self._boot_id:016x}")
        if cfg.vanish is not None and not self._vanish_done and t >= cfg.vanish[0]:
            self._vanish_done = True
            self._event(f"vanish: {self.pty_path} closed for {cfg.vanish[1]:g} s")
            self._close_pty(drained=self._await_drained())
            self._vanished_until = now + cfg.vanish[1]
        if self._vanished_until is not None and now >= self._vanished_until:
            self._vanished_until = None
            self._merge_next = False
            self._open_pty()

    def _read_commands(self) -> None:
        assert self._master is not None
        while True:
            try:
                data = os.read(self._master, 4096)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # no host has the slave open (we hold it: should not happen)
                return
            if not data:
                return
            for frame, msg in self._decoder.feed(data):
                self._command(frame, msg)

    def _command(self, frame: Frame, msg: Message) -> None:
        cfg = self.config
        seq = frame.seq
        mtype = frame.msg_type
        self.record.commands.append(type(msg).__name__)
        if isinstance(msg, Hello):
            self._hello = True
            self._seq = 0
            info = Info(cfg.version, VERSION_MINOR, cfg.rate_hz,
                        (cfg.counts_per_rev, cfg.counts_per_rev), cfg.layout_hash,
                        self._boot_id, MAX_SAMPLES_PER_FRAME, cfg.firmware_id,
                        CAP_RELEASE_OUTPUT if cfg.latch else 0)
            self._reply(info)
            return
        if not self._hello:
            return  # SPEC 5.1: nothing is sent until HELLO
        if isinstance(msg, Start):
            if self._streaming:
                self._reply(Nak(seq, mtype, NAK_NOT_NOW, self._taken))
            elif msg.sample_rate_hz != cfg.rate_hz:
                self._reply(Nak(seq, mtype, NAK_RATE, cfg.rate_hz))
            else:
                self._reply(Ack(seq, mtype, cfg.rate_hz))
                self._start(time.monotonic())
        elif isinstance(msg, Stop):
            self._streaming = False
            self._reply(Ack(seq, mtype, self._taken))
        elif isinstance(msg, Zero):
            self._zero_pending = True
            self._reply(Ack(seq, mtype, (cfg.start_index + self._taken) & 0xFFFFFFFF))
        elif isinstance(msg, Ping):
            self._reply(Ack(seq, mtype, msg.token))
        elif isinstance(msg, Release):
            if not cfg.latch:
                self._reply(Nak(seq, mtype, NAK_NO_RELEASE_OUTPUT, 0))
            elif not self._streaming:
                self._reply(Nak(seq, mtype, NAK_NOT_NOW, 0))
            else:
                at = self._feed.release()  # feed index of the first sample let go
                session = self.record.sessions[self._session]
                index = (session.start_index + at - session.feed_index) & 0xFFFFFFFF
                self.record.releases.append(index)
                self._event(f"RELEASE: latch opened at device sample {index}")
                self._reply(Ack(seq, mtype, index))
        else:  # a device-to-host type sent by the host
            self._reply(Nak(seq, mtype, NAK_UNKNOWN_TYPE, 0))

    def _start(self, now: float) -> None:
        cfg = self.config
        if self._t_first is None:
            self._t_first = now
        if cfg.paced:  # the rig moved on while nobody sampled it
            target = int(round((now - self._t_first) * cfg.rate_hz))
            if target > self._feed.position:
                self._feed.skip(target - self._feed.position)
        self._streaming = True
        self._t_start = now
        self._taken = 0
        self._next_status = 0
        self._frames_dropped = self._samples_dropped = 0
        self.record.sessions.append(Session(self._boot_id, self._feed.position,
                                            cfg.start_index, now))
        self._session = len(self.record.sessions) - 1
        self._event(f"START: session {self._session}, feed index {self._feed.position}")

    # -- frames ------------------------------------------------------------------------------
    def _wire(self, msg: Message, flags: int = 0) -> bytes:
        seq = self._seq
        self._seq = (self._seq + 1) & 0xFFFFFFFF
        wire = encode_message(msg, seq, flags)
        if self.config.version != 1:  # a device of another major version
            body = bytearray(cobs_decode(wire[:-1]))
            body[0] = self.config.version
            body[-4:] = crc32(bytes(body[:-4])).to_bytes(4, "little")
            wire = cobs_encode(bytes(body)) + b"\x00"
        return wire

    def _reply(self, msg: Message) -> None:
        wire = self._wire(msg)
        self._emit(wire, int(_TYPE_OF[type(msg)]), 0, 0, spoilable=False)

    def _blocked(self, now: float) -> str | None:
        """Why nothing can be sent now, or None."""
        if self._master is None:
            return "vanished"
        t = self._fault_clock(now)
        if self._in(self.config.stall, t):
            return "stall"
        if self._in(self.config.garbage, t):
            return "garbage"
        return None

    def _emit(self, wire: bytes, mtype: int, first: int, n: int, *, spoilable: bool,
              counts: np.ndarray | None = None) -> None:
        blocked = self._blocked(time.monotonic())
        reserve = self._reply_reserve if mtype in (MsgType.SAMPLES, MsgType.STATUS) else 0
        if blocked is None and len(self._out) + len(wire) + reserve > self.config.tx_buffer:
            blocked = "tx_full"
        if blocked is not None:
            self.record.spoiled.append(Spoiled(self._session, mtype, first, n, blocked))
            if blocked != "garbage":  # the device could not send it: it knows
                self._frames_dropped += 1
                self._samples_dropped += n
                self._overrun_pending = True
            return
        reason = "merged" if self._merge_next else None
        self._merge_next = False
        if spoilable and (self.config.corrupt or self.config.drop):
            rng = self._rng
            last = len(wire) - 1
            if self.config.corrupt and rng.random() < self.config.corrupt:
                buf = bytearray(wire)
                pos = int(rng.integers(0, len(buf)))
                buf[pos] ^= 1 << int(rng.integers(0, 8))
                wire = bytes(buf)
                reason = reason or "corrupt"
                self._merge_next |= pos == last
            if self.config.drop and rng.random() < self.config.drop:
                pos = int(rng.integers(0, len(wire)))
                wire = wire[:pos] + wire[pos + 1:]
                reason = reason or "drop"
                self._merge_next |= pos == last or wire[-1:] != b"\x00"
        if reason is not None:
            self.record.spoiled.append(Spoiled(self._session, mtype, first, n, reason))
        self._out += wire
        self._appended += len(wire)
        if mtype == MsgType.SAMPLES and counts is not None:
            frame = SentFrame(self._session, first, counts)
            if self.config.record_sent:
                self.record.sent.append(frame)
            self._in_flight.append((self._appended, frame))
        self.record.frames_sent += 1
        if mtype == MsgType.SAMPLES:
            self.record.samples_sent += n

    def _produce(self, frames: int, now: float, overrun: bool = False) -> None:
        """Take frames * samples_per_frame samples and send them (overrun: drop them)."""
        cfg = self.config
        spf = cfg.samples_per_frame
        counts = self._feed.read(frames * spf)
        if self._zero_pending:
            self._zero = counts[0].copy()
            self._zero_pending = False
        if self._zero.any():
            counts -= self._zero
        for k in range(frames):
            first = (cfg.start_index + self._taken) & 0xFFFFFFFF
            flags = 0
            if self._overrun_pending and not overrun and self._blocked(now) is None:
                flags = int(Flags.DEVICE_OVERRUN)
                self._overrun_pending = False
            if overrun:
                self._seq = (self._seq + 1) & 0xFFFFFFFF
                self.record.spoiled.append(Spoiled(self._session, int(MsgType.SAMPLES), first,
                                                   spf, "overrun"))
                self._frames_dropped += 1
                self._samples_dropped += spf
                self._overrun_pending = True
            else:
                frame_counts = counts[k * spf:(k + 1) * spf]
                wire = self._wire(Samples(first, frame_counts, flags))
                self._emit(wire, int(MsgType.SAMPLES), first, spf, spoilable=True,
                           counts=frame_counts.copy())
            self._taken += spf
            if self._taken >= self._next_status:
                self._status(now)

    def _status(self, now: float) -> None:
        cfg = self.config
        self._next_status = self._taken + max(1, int(round(cfg.status_period_s * cfg.rate_hz)))
        nxt = (cfg.start_index + self._taken) & 0xFFFFFFFF
        st = Status(int((now - self._t_boot) * 1e6), self._taken & 0xFFFFFFFF,
                    self._frames_dropped & 0xFFFFFFFF, self._samples_dropped & 0xFFFFFFFF,
                    0, 0, 0, nxt)
        self._emit(self._wire(st), int(MsgType.STATUS), nxt, 0, spoilable=True)

    def _flood(self, now: float) -> None:
        """Random bytes at about the link rate (the frames meanwhile are spoiled)."""
        last = self._t_flood
        self._t_flood = now
        if last is None or now - last > 0.1:
            last = now - 0.001
        budget = int((now - last) * _LINK_BYTES_PER_S)
        room = self.config.tx_buffer - len(self._out)
        budget = min(budget, room)
        chunks = []
        while budget > 0:
            chunk = _garbage(self._rng)
            chunks.append(chunk)
            budget -= len(chunk)
        if chunks:
            junk = b"".join(chunks)
            self._out += junk
            self._appended += len(junk)
            self._merge_next = junk[-1:] != b"\x00"

    def _flush(self) -> None:
        if self._master is None or not self._out:
            return
        try:
            n = os.write(self._master, self._out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            log.debug("emulator write failed: %s", exc)
            return
        if n:
            self._cut = self._out[n - 1] != 0  # the pty holds a frame's head, no delimiter
        del self._out[:n]
        self._written += n
        # a frame written 1 MiB ago has long been read or spoiled: no need to track it
        while self._in_flight and self._in_flight[0][0] < self._written - (1 << 20):
            self._in_flight.popleft()

    def _lose_from(self, offset: int, reason: str) -> None:
        """Frames not wholly before byte `offset` of the stream never reach the host."""
        while self._in_flight and self._in_flight[-1][0] > offset:
            _, frame = self._in_flight.pop()
            self.record.spoiled.append(Spoiled(frame.session, int(MsgType.SAMPLES),
                                               frame.first_sample, len(frame.counts), reason))
        self._in_flight.clear()
        # bytes written after this point belong to a new stream position
        self._appended = self._written = offset if offset >= 0 else 0


_TYPE_OF = {Info: MsgType.INFO, Ack: MsgType.ACK, Nak: MsgType.NAK}


def _warm_up() -> None:
    """Load the simulator's compiled code before the sample clock runs (it takes a while)."""
    from ..sim import SimulatedRig
    SimulatedRig(paced=False, hold_s=0.0).read(2)


