"""Reference values published by the seeds: truths that simulators and scorers use.

Above identify.model only. The estimators' layers (solvers, model, signal, results,
methods) never import it; report, seeds, the package root, drivers' simulators and
daq's configuration may.
"""

from ._table_iii import TABLE_III_TRUTH

__all__ = ["TABLE_III_TRUTH"]
