"""Measured free decays as arrays: the Measurement, differentiators, decimation, the release.

Above identify.model (which it uses for the release's dynamics and for simulated
captures), below the results and the methods.
"""

from ._conventions import (
    ANGLE_UNITS,
    HANGING_READS,
    ConventionProblem,
    angle_convention_problem,
    chain_angles,
    furuta_angles,
)
from ._decimate import Decimated, decimate, decimate_mean, point_values
from ._differentiate import (
    contiguous_segments,
    first_derivative_kernel,
    holoborodko_first,
    holoborodko_first_coefficients,
    holoborodko_second,
    holoborodko_second_coefficients,
    savitzky_golay_first,
    savitzky_golay_second,
    second_derivative_kernel,
)
from ._grid_cubic import cubic_at
from ._measurement import Measurement, Record
from ._monte_carlo import (
    CONDITIONS,
    NOISY_CONDITIONS,
    random_chain_friction,
    random_chain_release,
    random_realistic_capture,
)
from ._motion_start import (
    LEAVES_FOR_S,
    LET_GO_S,
    STILL_COUNTS,
    motion_start,
    require_motion,
    still_joints,
)
from ._release_detection import UNKNOWN_RESOLUTION_RAD, Release, find_release
from ._savgol import savgol_coefficients, savgol_filter
from ._session import (
    SimulatedChainSession,
    SimulatedSession,
    simulated_chain_session,
    simulated_session,
)
from ._synthetic import (
    SyntheticCapture,
    chain_record,
    free_decay_counts,
    realistic_capture,
    simulated_measurement,
)

__all__ = [
    "ANGLE_UNITS", "HANGING_READS", "ConventionProblem", "angle_convention_problem",
    "chain_angles", "furuta_angles",
    "LEAVES_FOR_S", "LET_GO_S", "STILL_COUNTS", "UNKNOWN_RESOLUTION_RAD", "chain_record",
    "motion_start", "require_motion", "still_joints",
    "Decimated", "Measurement", "Record", "Release",
    "SimulatedChainSession", "SimulatedSession", "SyntheticCapture",
    "contiguous_segments", "cubic_at",
    "decimate", "decimate_mean", "find_release", "first_derivative_kernel", "free_decay_counts",
    "holoborodko_first", "holoborodko_first_coefficients", "holoborodko_second",
    "holoborodko_second_coefficients", "point_values", "savgol_coefficients", "savgol_filter",
    "savitzky_golay_first",
    "savitzky_golay_second",
    "CONDITIONS", "NOISY_CONDITIONS", "random_chain_friction", "random_chain_release",
    "random_realistic_capture", "realistic_capture",
    "second_derivative_kernel",
    "simulated_chain_session", "simulated_measurement", "simulated_session",
]
