"""Numerical solvers, independent of the rig: pure numerics on arrays and callables.

The bottom layer of identify: it imports nothing from the other identify subpackages.
"""

from ._arrow import Arrow
from ._block_jacobian import BlockJacobian
from ._least_squares import (
    POOR_FACTOR,
    LinearFit,
    group_variances,
    group_weighted_least_squares,
    hac_covariance,
    integrated_autocorrelation,
    linear_least_squares,
)
from ._levenberg import REMAINING_CHI2, LMResult, levenberg_marquardt
from ._lsei import LseiSolution, lsei
from ._mittag_leffler import (
    ML3_T_MAX,
    ML3_T_MIN,
    mittag_leffler_3,
    ml3_scalar,
    nussbaum_gain,
    nussbaum_scalar,
)
from ._modified_simplex import initial_points, modified_simplex

__all__ = [
    "ML3_T_MAX", "ML3_T_MIN", "POOR_FACTOR", "REMAINING_CHI2", "Arrow", "BlockJacobian", "LMResult",
    "LinearFit",
    "LseiSolution",
    "group_variances", "group_weighted_least_squares", "hac_covariance", "initial_points",
    "integrated_autocorrelation", "levenberg_marquardt", "linear_least_squares", "lsei",
    "mittag_leffler_3", "ml3_scalar", "modified_simplex", "nussbaum_gain", "nussbaum_scalar",
]
