"""`python -m hilrig`: the same as the `hilrig` command."""

import sys

from hilrig.daq.cli import run

sys.exit(run())
