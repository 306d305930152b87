"""A result as one terminal line."""

from __future__ import annotations

from hilrig.identify import IdentificationResult, format_fit

__all__ = ["result_line"]


def result_line(result: IdentificationResult) -> str:
    """One terminal line: the fit and the key parameters (Coulomb, viscous...)."""
    p = result.parameters

    def show(name: str) -> str:
        value = p[name].value
        return f"{name}=n/i" if value is None else f"{name}={value:.4g}"

    return (f"result {result.capture_id} {result.method}: fit {format_fit(result.fit_percent)}, "
            + ", ".join(show(n) for n in result.key_parameters())
            + f" ({result.compute_seconds:.2f} s)")
