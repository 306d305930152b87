"""The methods' names, for a command line to offer without loading the methods."""

from __future__ import annotations

__all__ = ["DEFAULT_METHOD", "ESTIMATOR", "GREY_BOX", "INTEGRAL", "METHOD_NAMES",
           "OUTPUT_ERROR", "REGRESSION", "SIMPLEX", "UAS"]

#: the seed reproductions (each method's module reports results under its name)
GREY_BOX, OUTPUT_ERROR, SIMPLEX = "grey-box", "output-error", "simplex"
REGRESSION, UAS, INTEGRAL = "regression", "uas", "integral"  # seeds 002, 000, 004
#: the recommended estimator's name, whatever the rig kind
ESTIMATOR = "shooting"
#: every name the registry (identify.methods.METHODS) holds; it checks that it holds these
METHOD_NAMES = tuple(sorted((GREY_BOX, INTEGRAL, OUTPUT_ERROR, REGRESSION, ESTIMATOR,
                             SIMPLEX, UAS)))
#: the method a command runs unless told otherwise
DEFAULT_METHOD = ESTIMATOR
