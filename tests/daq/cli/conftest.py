"""What the cli tests share."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def long_capture(tmp_path_factory) -> Path:
    """110 s after a release: a fit of several seconds."""
    out = tmp_path_factory.mktemp("long") / "long.h5"
    subprocess.run([sys.executable, "-m", "hilrig", "simulate", "--out", str(out),
                    "--duration", "110", "--rate", "1000"], check=True, capture_output=True,
                   timeout=120)
    return out
