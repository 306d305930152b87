"""Integral-based identification (seed 004): piecewise-constant damping and stiffness.

Public API (re-exported from the modules of this subpackage):

- integral_identify(t, theta, u=None, segments=1, model="second_order" | "delay",
  constant=False, b_known=None, offset=False, constrained=True, floor=1e-9,
  lipschitz=None, gap_factor=1.5) -> IntegralFit
  The modified integral reconstruction of seed 004: theta'' + c_i theta' + k_i theta =
  b u (eqs. 1-4, 9-23) or its third-order delay form (eqs. 24-43), with the constant
  (linear) variants of eqs. 64-70. One linear least-squares problem over all segments:
  C0 continuity at the joins (eq. 19/39) as equality constraints, c, k > 0 (18, 23),
  a > 0, b > 0 (38, 43a) and the Lipschitz bounds (43b-d) as inequality constraints,
  solved exactly by identify.solvers.lsei.
- simulate_piecewise(t, boundaries, c, k, x0, t0=None, equilibrium=None): the exact free
  response of the piecewise-constant second-order model, state carried across joins.
- identify_integral(m, progress=None, segments=8) -> IdentificationResult: the Furuta
  method "integral" (METHOD): equivalent damping and stiffness of each joint against
  amplitude, in diagnostics["joints"].
"""

from ._core import MODELS, IntegralFit, integral_identify
from ._furuta import METHOD, describing_function_split, identify_integral
from ._piecewise import simulate_piecewise

__all__ = [
    "METHOD", "MODELS", "IntegralFit", "describing_function_split", "identify_integral",
    "integral_identify", "simulate_piecewise",
]
