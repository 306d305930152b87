"""`hilrig reidentify CAPTURE_ID --method M`: a cataloged capture identified again here,
kept in the catalog and published through the outbox (loaded only for this command: it
needs the identification methods and an MQTT connection). Several captures, several
methods, a selection or a cluster make a campaign (_campaign.py)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import Callable
from pathlib import Path

from hilrig.identify import IdentificationResult

from ..config import Settings
from ..mqtt import Courier, Topics, parse_mqtt_url, probe_broker
from ..runtime import (
    ArchiveError,
    CatalogArchive,
    Reidentified,
    Reidentifier,
    identify_capture,
    result_line,
)
from ..storage import Catalog, Outbox, read_capture
from ._catalog import open_catalog
from ._progress import ProgressBar
from ._usage import UsageError, settings_of

__all__ = ["cmd_reidentify"]


def cmd_reidentify(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    one = (len(args.capture_ids) == 1 and len(args.method) == 1 and not (
        args.session or args.all or args.since or args.until or args.kind or args.cluster
        or args.force))
    if not one:
        from ._campaign import run_campaign

        return run_campaign(args, settings)
    with open_catalog(settings) as cat:
        done, published = asyncio.run(_reidentify(settings, cat, args.capture_ids[0],
                                                  args.method[0]))
    result = done.result
    print(f"{result_line(result)}; result {done.kept['result_id']} -> {done.kept['path']}")
    topic = Topics(settings.mqtt.rig_id).result(done.capture_id, result.method)
    print(f"published {topic}" if published else
          "not published yet: no MQTT broker took it; it waits in the outbox for the next "
          "service to start (the catalog has it)")
    return 0


async def _reidentify(settings: Settings, cat: Catalog, capture_id: str, method: str
                      ) -> tuple[Reidentified, bool]:
    """Identified here (with a progress bar), kept in the catalog, published via the outbox."""
    root = Path(settings.storage.directory)
    # a connection of its own beside a running service: its own client id, no status
    cfg = settings.mqtt.model_copy(
        update={"client_id": f"hilrig-{settings.mqtt.rig_id}-reidentify-{os.getpid()}"})
    online = await probe_broker(*parse_mqtt_url(cfg.url), cfg.connect_timeout_s)
    outbox = Outbox(root)
    try:
        courier = Courier(cfg, outbox, announce=False, drain_timeout_s=cfg.connect_timeout_s + 5)
        async with courier if online else contextlib.nullcontext(courier):
            def publish(capture_id: str, result: IdentificationResult,
                        queued: Callable[[], None] | None) -> None:
                courier.put_result(capture_id, result.method, result)  # into the outbox
                if queued is not None:
                    queued()

            reidentifier = Reidentifier(CatalogArchive(cat, root), _identify_here,
                                        publish=publish)
            try:
                done = await reidentifier.run(capture_id, method)
            except ArchiveError as exc:
                raise UsageError(str(exc)) from None
        return done, online and courier.pending == 0
    finally:
        outbox.close()


async def _identify_here(capture_id: str, path: Path, method: str) -> IdentificationResult:
    """In a thread of this process, so the courier's connection stays served meanwhile."""
    bar = ProgressBar(f"identify {method}")
    try:
        return await asyncio.to_thread(
            lambda: identify_capture(read_capture(path), method, progress=bar))
    finally:
        bar.close()
