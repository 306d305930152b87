"""`hilrig reidentify` over a selection: a campaign (runtime.identification's Campaign) on
this machine's processes or a Dask cluster, with progress on the terminal and on MQTT
(``campaign/<id>``, retained), every result kept and published as a live one is.

Everything a campaign needs is checked before any work: the selection (a session that
exists, dates that parse, a rig kind that exists), the cluster's name, Dask being
installed for one. Ctrl-C keeps what finished and says how to resume: the same command.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hilrig.identify import IdentificationResult, utc_now

from ..config import RigKindConfig, Settings, first_error
from ..mqtt import Courier, parse_mqtt_url, probe_broker
from ..runtime.identification import (
    Campaign,
    CampaignProgress,
    ClusterError,
    DaskExecutor,
    IdentificationExecutor,
    LocalExecutor,
    Selection,
    parse_cluster,
    select_tasks,
)
from ..storage import Catalog, Outbox
from ._catalog import open_catalog
from ._progress import ProgressBar
from ._usage import UsageError

__all__ = ["run_campaign"]


def _instant(text: str | None, option: str) -> str | None:
    """An ISO 8601 date or time as the catalog writes times (UTC, milliseconds, Z)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{option} {text!r}: not an ISO 8601 date or time "
                         "(2026-11-27 or 2026-11-27T22:00:00Z)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _selection(args: argparse.Namespace) -> Selection:
    if not (args.capture_ids or args.session or args.all or args.since or args.until):
        raise UsageError("reidentify: name the captures: CAPTURE_ID..., --session S, --all, "
                         "or --since/--until")
    if args.kind is not None:
        try:
            RigKindConfig(kind=args.kind)
        except ValidationError as exc:
            raise UsageError(f"--kind {args.kind!r}: {first_error(exc, 'kind')}") from None
    return Selection(methods=list(dict.fromkeys(args.method)), session=args.session,
                     all=args.all, since=_instant(args.since, "--since"),
                     until=_instant(args.until, "--until"), kind=args.kind,
                     captures=list(args.capture_ids))


def _executor(args: argparse.Namespace, settings: Settings) -> IdentificationExecutor:
    if args.cluster is None:
        return LocalExecutor(workers=os.cpu_count() or 1, threads=1)
    try:
        return DaskExecutor(parse_cluster(args.cluster), settings.cluster)
    except ClusterError as exc:
        raise UsageError(str(exc)) from None


def run_campaign(args: argparse.Namespace, settings: Settings) -> int:
    selection = _selection(args)
    executor = _executor(args, settings)
    root = Path(settings.storage.directory)
    with open_catalog(settings) as cat:
        if selection.session is not None:
            cat.session(selection.session)  # CatalogError (one line) if there is none
        tasks, left_out = select_tasks(cat, root, selection)
        for line in left_out:
            print(f"left out: {line}", file=sys.stderr)
        if not tasks:
            print("reidentify: the selection holds no archived capture to identify")
            return 0
        campaign_id = selection.campaign_id(salt=utc_now() if args.force else "")
        where = args.cluster or f"this machine ({os.cpu_count() or 1} processes)"
        print(f"campaign {campaign_id}: {len(tasks)} task(s) "
              f"({', '.join(selection.methods)}) on {where}", flush=True)
        report = asyncio.run(_run(settings, cat, executor, campaign_id, selection, tasks,
                                  args.cluster))
    print(report.line())
    for failure in report.failures[:20]:
        print(f"  failed: {failure}")
    if len(report.failures) > 20:
        print(f"  ... and {len(report.failures) - 20} more (hilrig results list)")
    return 0


async def _run(settings: Settings, cat: Catalog, executor: IdentificationExecutor,
               campaign_id: str, selection: Selection, tasks: list[Any],
               cluster: str | None) -> CampaignProgress:
    root = Path(settings.storage.directory)
    cfg = settings.mqtt.model_copy(
        update={"client_id": f"hilrig-{settings.mqtt.rig_id}-campaign-{os.getpid()}"})
    online = await probe_broker(*parse_mqtt_url(cfg.url), cfg.connect_timeout_s)
    outbox = Outbox(root)
    bar = ProgressBar("campaign")
    try:
        courier = Courier(cfg, outbox, announce=False, drain_timeout_s=cfg.connect_timeout_s + 5)
        async with courier if online else contextlib.nullcontext(courier):
            extra = {"methods": selection.methods, "cluster": cluster or "local-processes"}

            def progress(p: CampaignProgress, state: str) -> None:
                bar(p.finished / max(1, p.total), p.line())
                courier.put_campaign(campaign_id, {**p.payload(state), **extra})

            def publish(capture_id: str, result: IdentificationResult,
                        queued: Callable[[], None]) -> None:
                courier.put_result(capture_id, result.method, result)
                queued()

            campaign = Campaign(cat, executor, say=lambda text: print(text, file=sys.stderr),
                                progress=progress, publish_result=publish)
            try:
                report = await campaign.run(campaign_id, selection, tasks)
            except ClusterError as exc:  # named well, but not there (no scheduler, no Dask)
                raise UsageError(str(exc)) from None
            except asyncio.CancelledError:
                print(f"\ncampaign {campaign_id}: stopped; what finished is kept, the same "
                      "command goes on from there", file=sys.stderr)
                raise
            finally:
                bar.close()
                await asyncio.to_thread(executor.shutdown)
        return report
    finally:
        outbox.close()
