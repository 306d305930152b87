"""The friction the seed simulated its rig with (seed 000, Table III, column "Truth").

A truth for simulators and for scoring results, never a guess for an estimator: no
module of identify.solvers, model, signal, results or methods imports this package
(an import-linter contract and tests/identify/test_reference.py check it), so a
method can only reach these values by being handed them.
"""

from __future__ import annotations

from ..model import FrictionParams

#: The seed's simulated truth (Table III): the default friction of the simulated rig.
TABLE_III_TRUTH = FrictionParams(
    mu_d0=5e-4, mu_s0=6e-4, mu_v0=2.5e-4, omega_t0=5e-3, Fn_t0=1e-2,
    mu_d1=6e-4, mu_s1=7e-4, mu_v1=2.5e-4, omega_t1=5e-3, Fn_t1=1e-2,
)
