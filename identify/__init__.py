"""Models, simulators, differentiators and identification of the tilted Furuta pendulum.

Usable offline on arrays: this package never imports daq or drivers.
"""

from ._model import (
    RIG_LAYOUT,
    acceleration,
    friction,
    friction_torque,
    inverse_dynamics,
    simulate,
    simulate_angles_rk4,
    simulate_rk4,
    total_energy,
)
from ._rig import PARAM_NAMES, TABLE_III_TRUTH, FrictionParams, RigParams

__all__ = [
    "PARAM_NAMES", "RIG_LAYOUT", "TABLE_III_TRUTH", "FrictionParams", "RigParams",
    "acceleration", "friction", "friction_torque", "inverse_dynamics", "simulate",
    "simulate_angles_rk4", "simulate_rk4", "total_energy",
]
