"""The firmware emulator as a device: what it does when its host reads too slowly.

A host that reads slower than the device sends (a loaded laptop, a slow hub) fills
the device's transmit buffer; the samples that do not fit wait in its FIFO, and only
when the FIFO overflows are the oldest lost, counted as an overrun the host hears of.
A sample frame the device chose to send never overfills its own transmit buffer, and
the stream never takes the room a command's answer needs.
"""

from __future__ import annotations

import os
import time
import tty

import pytest

from hilrig.drivers.emulator import EmulatorConfig, FirmwareEmulator
from hilrig.firmware_protocol import Hello, MsgType, Ping, Start, encode_message


def _read_slowly(port: str, seconds: float, bytes_per_s: int, ping_every_s: float = 0.0
                 ) -> int:
    """Open the port as a raw host, start a stream, read at most bytes_per_s (and send a
    PING every ping_every_s, if given); bytes read."""
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd)
        os.write(fd, encode_message(Hello(), 0) + encode_message(Start(10_000), 1))
        got, t0, seq = 0, time.monotonic(), 2
        while (t := time.monotonic() - t0) < seconds:
            if got < t * bytes_per_s:
                got += len(os.read(fd, min(4096, int(t * bytes_per_s) - got + 1)))
            if ping_every_s and t > (seq - 1) * ping_every_s:
                os.write(fd, encode_message(Ping(seq), seq))
                seq += 1
            time.sleep(0.005)
        return got
    finally:
        os.close(fd)


@pytest.mark.parametrize("samples_per_frame", [10, 125])
@pytest.mark.timeout(60)
def test_a_host_reading_too_slowly_loses_samples_only_to_fifo_overruns(samples_per_frame):
    cfg = EmulatorConfig(seed=21, samples_per_frame=samples_per_frame)
    with FirmwareEmulator(cfg) as emu:
        got = _read_slowly(emu.port, 3.5, 40_000)  # the stream needs 82-102 kB/s
        spoiled = list(emu.record.spoiled)  # not what closing the port loses afterwards
    assert emu.error is None
    assert got > 100_000
    samples = [d for d in spoiled if d.msg_type == MsgType.SAMPLES]
    assert samples, "a host at half the link rate must make the device drop samples"
    assert {d.reason for d in samples} == {"overrun"}, {d.reason for d in samples}


@pytest.mark.parametrize("paced", [True, False])
@pytest.mark.timeout(60)
def test_every_command_is_answered_while_the_stream_fills_the_transmit_buffer(paced):
    # unpaced, the device sends as fast as the host reads: its buffer is always full
    cfg = EmulatorConfig(seed=22, paced=paced)
    with FirmwareEmulator(cfg) as emu:
        _read_slowly(emu.port, 3.0, 40_000, ping_every_s=0.05)
        spoiled = list(emu.record.spoiled)
    assert emu.error is None
    replies = [d for d in spoiled if d.msg_type in (MsgType.ACK, MsgType.NAK)]
    assert replies == []
