"""A fit that fails inside numpy or scipy, on input that passed every check, is one line
naming the capture and what to try, exit status 1; numpy's warnings on the way go with it.
identify's own ValueError (the capture lacks something) stays bad input, exit 2."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hilrig.daq.cli.chain import _commands as chain_commands
from hilrig.daq.cli.furuta import _commands as furuta_commands

from .test_cli import assert_one_line_error, run_main

SWING = Path(__file__).parents[2] / "data" / "multiarm" / "single_pendulum_1khz.csv"


@pytest.fixture(scope="module")
def capture(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("guard") / "c.h5"
    assert run_main("simulate", "--out", path, "--duration", "0.5", "--rest", "0.05")[0] == 0
    return path


def _singular(*args: Any, **kwargs: Any) -> Any:
    warnings.warn("overflow encountered in square", RuntimeWarning, stacklevel=1)
    # as lstsq raises it (given NaN, LAPACK itself would print to stdout besides)
    raise np.linalg.LinAlgError("SVD did not converge in Linear Least Squares")


def _overflow(*args: Any, **kwargs: Any) -> Any:
    with np.errstate(over="raise"):
        return np.float64(1e308) * 10


def _numpy_value_error(*args: Any, **kwargs: Any) -> Any:
    return np.reshape(np.arange(3), (2, 2))


def _own_value_error(*args: Any, **kwargs: Any) -> Any:
    raise ValueError("the capture holds no free swing")


NUMERICAL = {"LinAlgError": _singular, "FloatingPointError": _overflow,
             "ValueError in numpy": _numpy_value_error}


@pytest.mark.fault(injected="a fit that fails numerically: LinAlgError, FloatingPointError, a "
                            "numpy ValueError inside identify, identify_chain, compare",
                   expected="one line naming the capture and what to try, exit 1, no warning")
@pytest.mark.parametrize("fails", list(NUMERICAL))
def test_a_furuta_fit_failing_numerically_is_one_line_and_exit_1(capture, capfd, monkeypatch,
                                                                   recwarn, fails):
    monkeypatch.setattr(furuta_commands, "identify", NUMERICAL[fails])
    capfd.readouterr()
    rc, _ = run_main("identify", capture, "--method", "regression")
    assert rc == 1
    assert_one_line_error(capfd, "c.h5: the fit failed numerically (",
                          "check the rig values it starts from", "or try another --method")
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("fails", list(NUMERICAL))
@pytest.mark.parametrize("where", ["identify_chain", "validate_chain"])
def test_a_chain_fit_failing_numerically_is_one_line_and_exit_1(capfd, monkeypatch, fails,
                                                                  where):
    monkeypatch.setattr(chain_commands, where, NUMERICAL[fails])
    args = ["--validate", "50:55"] + (["--params-only", "--params", '{"nu1": 1, "kappa1": 0.15}']
                                      if where == "validate_chain" else [])
    rc, _ = run_main("identify", SWING, "--rig", "single", *args)
    assert rc == 1
    assert_one_line_error(capfd, "single_pendulum_1khz.csv: the fit failed numerically",
                          "--friction-law")


def test_compare_failing_numerically_is_one_line_and_exit_1(capture, capfd, monkeypatch):
    from hilrig.identify import report

    monkeypatch.setattr(report, "compare_methods", _overflow)
    capfd.readouterr()
    assert run_main("compare", capture)[0] == 1
    assert_one_line_error(capfd, "c.h5: the fit failed numerically (overflow")


def test_identifys_own_refusal_stays_bad_input(capture, capfd, monkeypatch):
    monkeypatch.setattr(furuta_commands, "identify", _own_value_error)
    capfd.readouterr()
    assert run_main("identify", capture)[0] == 2
    assert_one_line_error(capfd, "c.h5: the capture holds no free swing")


def test_the_warnings_of_a_fit_that_succeeds_are_still_shown(capture, monkeypatch):
    real: Callable[..., Any] = furuta_commands.identify

    def warns(*args: Any, **kwargs: Any) -> Any:
        warnings.warn("a warning worth reading", RuntimeWarning, stacklevel=1)
        return real(*args, **kwargs)

    monkeypatch.setattr(furuta_commands, "identify", warns)
    with pytest.warns(RuntimeWarning, match="a warning worth reading"):
        assert run_main("identify", capture, "--method", "regression")[0] == 0


@pytest.mark.fault(injected="bad input: a capture CSV in which nothing moves (all zeros)",
                   expected="one line saying so, exit 2 (was a LinAlgError traceback)")
def test_a_capture_in_which_nothing_moves_is_refused_before_the_fit(tmp_path, capfd):
    rows = [f"{k / 1000!r},0,0" for k in range(3000)]
    (tmp_path / "still.csv").write_text("\n".join(["t,theta0,theta1", *rows]) + "\n")
    assert run_main("identify", tmp_path / "still.csv")[0] == 2
    assert_one_line_error(capfd, "still.csv: neither joint moves")
