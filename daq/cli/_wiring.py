"""The one place that builds concrete sources and wires a live rig to its broker.

`hilrig run`, `hilrig serve` and `hilrig session start|resume` all start the same way:
the source (the simulated rig, or the bridge on a serial port, opened and handshaken
first), a broker (the configured one, or the embedded fallback), the durable outbox in
the storage directory, the command router and the courier that owns the connection.
"""

from __future__ import annotations

import argparse
import logging
import math
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from hilrig.drivers import Source
from hilrig.identify.model import compile_in_background

from ..acquisition import ChainKind, kind_of
from ..config import Settings
from ..dashboard import DashboardServer, page_config, page_gate, parse_http_address, serving
from ..mqtt import CommandRouter, Courier, resolve_broker
from ..storage import Outbox
from ._usage import UsageError

__all__ = ["Wired", "bridge_source", "http_of", "sim_source", "wired"]


def sim_source(settings: Settings, *, paced: bool, pose_deg: tuple[float, float] | None = None,
               auto_release: bool = True) -> Source:
    """The simulated rig of the settings ([sim], and the [rig] kind it is), held at
    `pose_deg` (default: sim.pose_deg).

    With `auto_release` it lets go after sim.hold_s by itself (a plain run); without, it
    waits to be released (a session's releaser, or a command).
    """
    family = kind_of(settings.rig_kind).family
    return _SIM_SOURCES[family](settings, paced,
                                pose_deg if pose_deg is not None else settings.sim.pose_deg,
                                auto_release)


def _furuta_sim(settings: Settings, paced: bool, pose_deg: tuple[float, float],
                auto_release: bool) -> Source:
    from hilrig.drivers.sim import SimulatedRig

    sim = settings.sim
    return SimulatedRig(rig=settings.rig, friction=sim.friction, pose_deg=pose_deg,
                        rate_hz=settings.sample_rate_hz, counts_per_rev=settings.counts_per_rev,
                        block_size=sim.block_size, paced=paced, hold_s=sim.hold_s,
                        auto_release=auto_release, realism=sim.realism)


def _chain_sim(settings: Settings, paced: bool, pose_deg: tuple[float, float],
               auto_release: bool) -> Source:
    """The chain rig [rig] kind names, on the same two channels."""
    from hilrig.drivers.sim import ChainMount, SimulatedChainRig

    from .chain import default_chain_params

    sim, config = settings.sim, settings.rig_kind
    rig = ChainKind(config).rig
    mount = ChainMount(rig, default_chain_params(rig.links), channel=config.channel,
                       relative=config.joint_angles == "relative",
                       zero_rad=math.pi if config.zero == "hanging" else 0.0)
    return SimulatedChainRig(
        mount, pose_deg, rate_hz=settings.sample_rate_hz, counts_per_rev=settings.counts_per_rev,
        block_size=sim.block_size, paced=paced, hold_s=sim.hold_s, auto_release=auto_release,
        realism=sim.realism)


#: the simulated source of each of the estimator's rig kinds
_SIM_SOURCES: dict[str, Callable[[Settings, bool, tuple[float, float], bool], Source]] = {
    "furuta": _furuta_sim, "chain": _chain_sim}


def bridge_source(settings: Settings, port: str) -> Source:
    """The serial bridge on `port` at the configured rate (a whole number of Hz)."""
    from hilrig.drivers.serial import SerialBridge

    rate = settings.sample_rate_hz
    if rate != int(rate):
        raise UsageError(f"--port: sample_rate_hz must be a whole number of Hz for the "
                         f"bridge, got {rate}")
    return SerialBridge(port, rate_hz=int(rate))


@dataclass(frozen=True)
class Wired:
    """An open source with its broker connection."""

    source: Source
    url: str
    courier: Courier
    router: CommandRouter


def http_of(args: argparse.Namespace, settings: Settings) -> str | None:
    """The --http address (bare --http: the configured dashboard.http), checked; or None."""
    http = getattr(args, "http", None)
    if http is None:
        return None
    address = settings.dashboard.http if http == "" else http
    try:
        parse_http_address(address)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return address


@asynccontextmanager
async def wired(settings: Settings, source: Source, say: Callable[[str], None], *,
                banner: str = "hilrig:", http: str | None = None) -> AsyncIterator[Wired]:
    """Open the source, find a broker, and connect the courier (commands on cmd/#);
    with `http` ('HOST:PORT'), serve the dashboard's page there too.

    The bridge is opened (port, handshake) before anything else, so a wrong port or
    protocol is one error line before any broker is started. Leaving closes all of it:
    the courier delivers what it can within its drain time, the outbox keeps the rest.
    """
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(source)
        # the first capture after an install finds the estimator compiled
        compile_in_background(kind_of(settings.rig_kind).family)
        url = await stack.enter_async_context(
            resolve_broker(settings.mqtt, websockets=http is not None,
                           page_role=settings.dashboard.embedded_role))
        rig_id = settings.mqtt.rig_id
        router = CommandRouter(rig_id)
        say(f"{banner} rig {rig_id}, source {source.info.identity}, broker {url}, "
            f"topics {router.topics.all}")
        if http is not None:
            page = await stack.enter_async_context(
                serving(page_config(settings, url), http, gate=page_gate(url)))
            say(f"dashboard: {page.url} (broker websockets {page_endpoint(page)})")
        outbox = Outbox(Path(settings.storage.directory))
        stack.callback(outbox.close)
        verbose = logging.getLogger().isEnabledFor(logging.DEBUG)  # hilrig --verbose

        def delivered(topic: str) -> None:
            # a result's delivery is news; a capture's documents (one a second while it
            # records), statuses and events are the terminal's noise unless asked for
            if verbose or ("/result/" in topic and not topic.endswith("/latest")):
                say(f"published {topic}")

        courier = await stack.enter_async_context(
            Courier(settings.mqtt, outbox, url=url, source=source.info, commands=router,
                    on_delivered=delivered))
        yield Wired(source, url, courier, router)


def page_endpoint(page: DashboardServer) -> str:
    """The broker's websockets endpoint as the page is told it (host: the page's own)."""
    b = page.config.broker
    return f"{b.scheme}://{b.host or '<page host>'}:{b.port}{b.path}"
