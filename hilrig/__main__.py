"""`python -m hilrig`: the same as the `hilrig` command."""

import sys

from hilrig.daq.cli import main

sys.exit(main())
