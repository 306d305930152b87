"""`hilrig dashboard`: serve the live page on its own, for a broker the rig service uses.

The page reads everything from the broker (docs/mqtt.md); this process only serves its
files and tells it where the broker's websockets listener is (config [dashboard]).
"""

from __future__ import annotations

import argparse
import asyncio
import os

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
        why = await _unreachable(page.config.broker.host or address.rsplit(":", 1)[0],
                                 page.config.broker.port)
        if why:
            print(f"dashboard: warning: nothing answers at {page_endpoint(page)} ({why}): the "
                  "page shows no rig until a broker's websockets listener is there (mosquitto: "
                  "`listener 9001` with `protocol websockets`, docs/mqtt.md; or [dashboard] "
                  "ws_url); it keeps trying", flush=True)
        await asyncio.Event().wait()
    return 0


async def _unreachable(host: str, port: int, timeout_s: float = 2.0) -> str | None:
    """Why a TCP connection to the broker's websockets listener fails, or None if one is
    made: the page would say only that it has no broker."""
    try:
        async with asyncio.timeout(timeout_s):
            _, writer = await asyncio.open_connection(host, port)
    except TimeoutError:
        return f"no answer in {timeout_s:g} s"
    except OSError as exc:  # asyncio's says "Connect call failed (host, port)"
        return os.strerror(exc.errno) if exc.errno else str(exc)
    writer.close()
    await writer.wait_closed()
    return None
