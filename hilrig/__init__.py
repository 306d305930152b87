"""hilrig: data acquisition and friction identification for laboratory pendulum rigs.

Everything hilrig installs lives under this one name, so it coexists with any other
distribution (pre-commit's dependency is a package named `identify`):

    hilrig.identify           models, simulators, signal processing, the estimator and the
                              seed methods; usable offline on a file or arrays
    hilrig.drivers            sources behind small protocols: serial bridge, simulated device
    hilrig.daq                acquisition, storage, MQTT, runtime, dashboard, the `hilrig` CLI
    hilrig.firmware_protocol  the wire format between the bridge and the host

In the repository each is a top-level folder; hilrig/ holds links to them.
"""

from typing import TYPE_CHECKING

from hilrig.identify import lazy_exports

if TYPE_CHECKING:
    from hilrig.daq.api import CatalogFrames, FitError, catalog, fit, from_arrays, read

# the notebook API (docs/api.md), loaded on first use: `import hilrig` stays instant
__getattr__, __dir__ = lazy_exports(__name__, {
    ".daq.api": ("CatalogFrames", "FitError", "catalog", "fit", "from_arrays", "read"),
})

__all__ = ["CatalogFrames", "FitError", "catalog", "fit", "from_arrays", "read"]
