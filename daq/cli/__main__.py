"""`python -m hilrig.daq.cli` (or `python -m hilrig`): the same as the `hilrig` command."""

import sys

from ._main import run

sys.exit(run())
