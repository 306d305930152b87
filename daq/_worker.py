"""Identification in a worker process, so a long fit never stalls acquisition.

The worker reads the capture file, exactly as offline `hilrig identify FILE` does.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from identify import identify


def identify_file(path: str, method: str) -> str:
    """Identify one capture file; returns the IdentificationResult as JSON."""
    from ._capture_file import read_capture
    from ._convert import measurement_from_capture

    capture = read_capture(path)
    return identify(measurement_from_capture(capture), method=method).to_json()


def warm_up() -> None:
    """Import what identification needs, so the first capture does not wait for it."""
    from . import _capture_file, _convert  # noqa: F401


def identification_pool() -> ProcessPoolExecutor:
    """One worker process (spawned: no inherited event loop or sockets), started at once."""
    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
    pool.submit(warm_up)  # the process starts and imports while the rig is still held
    return pool
