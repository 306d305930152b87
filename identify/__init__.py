"""Models, simulators, differentiators and identification of the tilted Furuta pendulum.

Usable offline on arrays: this package never imports daq or drivers.
"""

from ._grey_box import identify_grey_box, simulate_capture
from ._methods import METHODS, identify
from ._progress import Progress
from ._time import utc_now
from ._version import SOFTWARE_VERSION
from .model import (
    COUNTS_PER_REV,
    PARAM_NAMES,
    QUANTUM,
    RIG_LAYOUT,
    TABLE_III_TRUTH,
    FrictionParams,
    RigParams,
    acceleration,
    encoder_quantum,
    friction,
    friction_torque,
    inverse_dynamics,
    simulate,
    simulate_rk4,
    total_energy,
)
from .results import (
    IdentificationResult,
    ParameterEstimate,
    fit_percent,
    format_fit,
    normalized_compute_time,
)
from .signal import (
    Measurement,
    Release,
    contiguous_segments,
    decimate_mean,
    find_release,
    free_decay_counts,
    holoborodko_first,
    holoborodko_first_coefficients,
    holoborodko_second,
    holoborodko_second_coefficients,
    savitzky_golay_first,
    savitzky_golay_second,
    simulated_measurement,
)

__all__ = [
    "SOFTWARE_VERSION", "Progress", "format_fit", "utc_now",
    "COUNTS_PER_REV", "QUANTUM", "encoder_quantum", "free_decay_counts", "simulated_measurement",
    "METHODS", "PARAM_NAMES", "RIG_LAYOUT", "TABLE_III_TRUTH", "FrictionParams",
    "IdentificationResult", "Measurement", "ParameterEstimate", "Release", "RigParams",
    "acceleration", "contiguous_segments", "decimate_mean", "find_release", "fit_percent",
    "friction", "friction_torque", "holoborodko_first", "holoborodko_first_coefficients",
    "holoborodko_second", "holoborodko_second_coefficients", "savitzky_golay_first",
    "savitzky_golay_second", "identify", "identify_grey_box",
    "inverse_dynamics", "normalized_compute_time", "simulate",
    "simulate_capture", "simulate_rk4", "total_energy",
]
