"""The `hilrig` command: offline work on capture files, live rigs, sessions, the catalog.

The only place that builds concrete sources (_wiring.py); `main` is the entry point.
"""

from ._main import main

__all__ = ["main"]
