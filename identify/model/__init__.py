"""The rigs' models: the tilted Furuta pendulum (its parameters, compiled equations,
simulators and encoders), the rig kinds (_kinds) and the planar chain of the other kinds
(chain).

The bottom of identify above the solvers: it imports no other identify subpackage.
"""

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._base import (
        BASE_NAMES,
        NORMALISED,
        RIG_QUANTITIES,
        base_parameters,
        equivalent_rigs,
        normalised,
        rig_quantities,
    )
    from ._encoder import (
        COUNTS_PER_REV,
        QUANTUM,
        encoder_quantum,
        quantisation_rms,
        to_counts,
    )
    from ._equations import (
        N_COEFF,
        RIG_LAYOUT,
        acceleration,
        acceleration_of,
        bias_gravity,
        coefficients,
        extra_torque,
        friction,
        friction_rate,
        friction_torque,
        inverse_dynamics,
        mass_matrix,
        total_energy,
    )
    from ._kernels import (
        KERNELS,
        compile_in_background,
        ensure_compiled,
    )
    from ._kinds import RIG_FAMILIES, RIG_KINDS, parse_rig_kind, rig_family
    from ._params import (
        FRICTION_TERMS,
        G_ACCEL,
        JOINT_NAMES,
        PARAM_NAMES,
        FrictionParams,
        RigParams,
        joint_of,
        joint_params,
        param_index,
        param_indices,
        param_name,
        term_of,
    )
    from ._realism import (
        DRIFT_LIMIT,
        RIG_ERROR_FIELDS,
        Realism,
        Tremor,
        drifted_chain_friction,
        drifted_friction,
        encoder_counts,
        hand_tremor,
        lost_frames,
        true_rig,
    )
    from ._segments import (
        simulate_jobs,
    )
    from ._sensitivity import (
        acceleration_derivatives,
        coefficient_jacobian,
        simulate_jobs_sensitivity,
        simulate_sensitivity,
    )
    from ._simulate import (
        simulate,
        simulate_batch,
        simulate_from,
        simulate_rk4,
        simulate_scheduled,
    )
    from ._threads import blas_on_one_thread
    from .chain import (
        CHAIN_FRICTION_TERMS,
        ChainParams,
        ChainRig,
        FrictionModel,
        chain_acceleration,
        chain_energy,
        chain_regressor,
        chain_run,
        chain_segments,
        chain_sensitivity,
        friction_entry,
        inertial_names,
        inertial_normaliser,
        joint_friction,
        link_pairs,
        unpack_inertial,
    )

_EXPORTS = {
    "._base": (
        "BASE_NAMES", "NORMALISED", "RIG_QUANTITIES", "base_parameters", "equivalent_rigs",
        "normalised", "rig_quantities",
    ),
    "._kinds": (
        "RIG_FAMILIES", "RIG_KINDS", "parse_rig_kind", "rig_family",
    ),
    ".chain": (
        "CHAIN_FRICTION_TERMS", "ChainParams", "ChainRig", "FrictionModel", "chain_acceleration",
        "chain_energy", "chain_regressor", "chain_run", "chain_segments", "chain_sensitivity",
        "friction_entry", "inertial_names", "inertial_normaliser", "joint_friction",
        "link_pairs", "unpack_inertial",
    ),
    "._encoder": (
        "COUNTS_PER_REV", "QUANTUM", "encoder_quantum", "quantisation_rms", "to_counts",
    ),
    "._equations": (
        "N_COEFF", "RIG_LAYOUT", "acceleration", "acceleration_of", "bias_gravity",
        "coefficients", "extra_torque", "friction", "friction_rate", "friction_torque",
        "inverse_dynamics", "mass_matrix", "total_energy",
    ),
    "._params": (
        "FRICTION_TERMS", "G_ACCEL", "JOINT_NAMES", "PARAM_NAMES", "FrictionParams",
        "RigParams", "joint_of", "joint_params", "param_index", "param_indices", "param_name",
        "term_of",
    ),
    "._realism": (
        "DRIFT_LIMIT", "RIG_ERROR_FIELDS", "Realism", "Tremor", "drifted_chain_friction",
        "drifted_friction",
        "encoder_counts", "hand_tremor", "lost_frames", "true_rig",
    ),
    "._kernels": (
        "KERNELS", "compile_in_background", "ensure_compiled",
    ),
    "._segments": (
        "simulate_jobs",
    ),
    "._threads": (
        "blas_on_one_thread",
    ),
    "._sensitivity": (
        "acceleration_derivatives", "coefficient_jacobian", "simulate_jobs_sensitivity",
        "simulate_sensitivity",
    ),
    "._simulate": (
        "simulate", "simulate_batch", "simulate_from", "simulate_rk4", "simulate_scheduled",
    ),
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "RIG_FAMILIES", "RIG_KINDS", "ChainParams", "ChainRig", "FrictionModel", "parse_rig_kind",
    "rig_family",
    "CHAIN_FRICTION_TERMS", "chain_acceleration", "chain_energy", "chain_regressor",
    "chain_run", "chain_segments", "chain_sensitivity", "friction_entry", "inertial_names",
    "inertial_normaliser", "joint_friction", "link_pairs",
    "unpack_inertial",
    "BASE_NAMES", "NORMALISED", "RIG_QUANTITIES", "base_parameters", "equivalent_rigs",
    "normalised", "rig_quantities",
    "KERNELS", "compile_in_background", "ensure_compiled",
    "blas_on_one_thread", "simulate_jobs", "acceleration_derivatives", "coefficient_jacobian",
    "simulate_jobs_sensitivity", "simulate_sensitivity", "N_COEFF", "acceleration_of",
    "coefficients",
    "COUNTS_PER_REV", "DRIFT_LIMIT", "FRICTION_TERMS", "G_ACCEL", "JOINT_NAMES", "PARAM_NAMES",
    "QUANTUM", "RIG_ERROR_FIELDS", "RIG_LAYOUT", "FrictionParams", "Realism", "RigParams",
    "Tremor", "acceleration", "bias_gravity", "drifted_chain_friction", "drifted_friction",
    "encoder_counts",
    "encoder_quantum", "extra_torque",
    "friction", "friction_rate", "friction_torque", "hand_tremor", "inverse_dynamics",
    "joint_of", "joint_params",
    "lost_frames", "mass_matrix", "param_index", "param_indices", "param_name",
    "quantisation_rms", "simulate",
    "simulate_batch", "simulate_from", "simulate_rk4", "simulate_scheduled", "term_of",
    "to_counts", "total_energy", "true_rig",
]
