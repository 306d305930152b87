"""Several captures of one rig put together: the session's friction and rig with honest
intervals, and whether the friction drifted (a trend in time, or captures that stand
out), from the captures' own results.

Above the methods (identify_pooled identifies measurements with the recommended estimator
first), below the reports. Exports load on use: pooling results needs neither the methods
nor numba.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._identify import identify_pooled
    from ._meta import Departure, Line, Mean, departures, line, mean, relative_line
    from ._pool import ESTIMATED_WIDENING, LEVEL, MIN_CHANGE, MIN_TESTED, pool_results

_EXPORTS = {
    "._identify": ("identify_pooled",),
    "._meta": ("Departure", "Line", "Mean", "departures", "line", "mean",
               "relative_line"),
    "._pool": ("ESTIMATED_WIDENING", "LEVEL", "MIN_CHANGE", "MIN_TESTED", "pool_results"),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = ["ESTIMATED_WIDENING", "LEVEL", "MIN_CHANGE", "MIN_TESTED", "Departure", "Line",
           "Mean", "departures", "identify_pooled", "line", "mean", "pool_results",
           "relative_line"]
