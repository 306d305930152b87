"""`hilrig dashboard`: serve the live page on its own, for a broker the rig service uses.

The page reads everything from the broker (docs/mqtt.md); this process only serves its
files and tells it where the broker's websockets listener is (config [dashboard]).
"""

from __future__ import annotations

import argparse
import asyncio

from ..config import Settings
from ..dashboard import page_config, serving
from ._usage import settings_of
from ._wiring import http_of, page_endpoint

__all__ = ["cmd_dashboard"]


def cmd_dashboard(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    address = http_of(argparse.Namespace(http=args.http or ""), settings)
    assert address is not None
    return asyncio.run(_serve(settings, address))


async def _serve(settings: Settings, address: str) -> int:
    async with serving(page_config(settings, settings.mqtt.url), address) as page:
        print(f"dashboard: {page.url} for rig {settings.mqtt.rig_id} (broker websockets "
              f"{page_endpoint(page)}); Ctrl-C stops", flush=True)
        await asyncio.Event().wait()
    return 0
