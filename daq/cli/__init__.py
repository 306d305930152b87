"""The `hilrig` command: offline work on capture files, live rigs, sessions, the catalog.

The only place that builds concrete sources (_wiring.py); `run` is the command's entry
point, `main` the same command for callers whose process goes on.
"""

from ._main import main, run

__all__ = ["main", "run"]
