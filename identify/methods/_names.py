"""The methods' names, for a command line to offer without loading the methods."""

from __future__ import annotations

__all__ = ["DEFAULT_METHOD", "ESTIMATOR", "METHOD_NAMES"]

#: every name the registry (identify.methods.METHODS) holds; it checks that it holds these
METHOD_NAMES = ("grey-box", "integral", "output-error", "regression", "shooting", "simplex",
                "uas")
#: the recommended estimator's name, whatever the rig kind
ESTIMATOR = "shooting"
#: the method a command runs unless told otherwise
DEFAULT_METHOD = ESTIMATOR
