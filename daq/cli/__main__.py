"""`python -m daq.cli`: the same as the `hilrig` command."""

import sys

from ._main import main

sys.exit(main())
