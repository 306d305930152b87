"""Several captures of one rig put together: the session's friction and rig with honest
intervals, and whether the friction drifted (a trend in time, or captures that stand
out), from the captures' own results.

Above the methods (it identifies captures with the recommended estimator when given
measurements), below the reports.
"""

from ._identify import identify_pooled
from ._meta import Departure, Line, Mean, departures, line, mean
from ._pool import LEVEL, MIN_TESTED, pool_results

__all__ = ["LEVEL", "MIN_TESTED", "Departure", "Line", "Mean", "departures",
           "identify_pooled", "line", "mean", "pool_results"]
