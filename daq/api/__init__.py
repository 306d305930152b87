"""The Python API for notebooks: read a capture, a CSV or arrays, identify it with any
method and rig kind, and read the archive's catalog as DataFrames.

    import hilrig
    result = hilrig.fit("capture.h5")              # the recommended estimator
    result                                         # one line; Jupyter shows a table
    result.to_dataframe()                          # estimates with 95 % intervals
    hilrig.catalog("~/hilrig-data").results()      # every result, one row each

Above storage and acquisition, beside the runtime; the CLI does the same work through
its own commands. docs/api.md is the guide, with a worked example.
"""

from ._catalog import CatalogFrames, catalog
from ._data import from_arrays, read
from ._fit import FitError, fit

__all__ = ["CatalogFrames", "FitError", "catalog", "fit", "from_arrays", "read"]
