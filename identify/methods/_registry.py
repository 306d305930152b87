"""Identification methods by name, as `hilrig identify --method NAME` selects them.

The seed reproductions are imported on their first call, so a command that runs the
estimator does not load the six other methods (about 0.05 s of its start).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol

from .._progress import Progress
from ..model import JOINT_NAMES, blas_on_one_thread
from ..results import IdentificationResult
from ..signal import Measurement, require_motion
from . import _names as names
from ._names import DEFAULT_METHOD
from .estimator import identify_multiple_shooting


class Method(Protocol):
    def __call__(self, m: Measurement, progress: Progress | None = None
                 ) -> IdentificationResult: ...


def _on_first_call(target: str) -> Method:
    """The method `.module:function` of this package, imported when it is first called."""
    module, name = target.split(":")

    def method(m: Measurement, progress: Progress | None = None) -> IdentificationResult:
        run: Method = getattr(importlib.import_module(module, __package__), name)
        return run(m, progress=progress)

    method.__qualname__ = method.__name__ = name
    return method


#: the seed reproductions by name, each where it lives ("module:function" here)
SEED_METHODS = {
    # friction alone, the rig held at the values it is told
    names.GREY_BOX: "._grey_box:identify_grey_box",
    names.OUTPUT_ERROR: "._output_error:identify_output_error",
    names.REGRESSION: "._regression:identify_regression",  # seed 002
    names.UAS: "._uas:identify_uas",  # seed 000
    names.INTEGRAL: ".integral:identify_integral",  # seed 004
    # seed 003's optimiser on the output-error problem
    names.SIMPLEX: "._simplex:identify_simplex",
}
if TYPE_CHECKING:  # the strings above hide the functions from the type checker
    from ._grey_box import identify_grey_box
    from ._output_error import identify_output_error
    from ._regression import identify_regression
    from ._simplex import identify_simplex
    from ._uas import identify_uas
    from .integral import identify_integral

    _SEEDS: tuple[Method, ...] = (identify_grey_box, identify_output_error,
                                  identify_regression, identify_uas, identify_integral,
                                  identify_simplex)

METHODS: dict[str, Method] = {
    **{name: _on_first_call(target) for name, target in SEED_METHODS.items()},
    # the recommended estimator: friction and rig jointly by multiple shooting, the
    # release as it happens, the extra terms the data ask for
    names.ESTIMATOR: identify_multiple_shooting,
}
if tuple(sorted(METHODS)) != names.METHOD_NAMES or DEFAULT_METHOD != names.ESTIMATOR:
    raise ImportError("hilrig.identify.methods._names no longer lists the registry's methods")


@blas_on_one_thread
def identify(m: Measurement, method: str = DEFAULT_METHOD,
             progress: Progress | None = None) -> IdentificationResult:
    """Run the named method on a measurement (a ValueError, before any work, where a joint
    never moved: identify.signal.require_motion)."""
    try:
        fn = METHODS[method]
    except KeyError:
        raise ValueError(f"unknown identification method {method!r}; "
                         f"choose from {', '.join(sorted(METHODS))}") from None
    require_motion(m, JOINT_NAMES)
    return fn(m, progress=progress)
