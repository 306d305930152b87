"""The methods' names, for a command line to offer without loading the methods."""

from __future__ import annotations

__all__ = ["DEFAULT_METHOD", "METHOD_NAMES"]

#: every name the registry (identify.methods.METHODS) holds; it checks that it holds these
METHOD_NAMES = ("grey-box", "integral", "output-error", "regression", "shooting", "simplex",
                "uas")
#: the recommended estimator
DEFAULT_METHOD = "shooting"
