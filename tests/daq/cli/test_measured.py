"""What a lab measured of its rig reaches identification: `--measured`, `--cad-uncertainty`
and the [rig] config's m2_l2 and uncertainties, on a capture from a rig off its nominal
values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hilrig.daq.cli import main
from hilrig.daq.storage import read_capture

from .test_cli import assert_one_line_error, run_main


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, float]:
    """A 6 s capture of a rig 4 % off its nominal values; the true m2 l2."""
    d = tmp_path_factory.mktemp("measured")
    path = d / "off.h5"
    assert run_main("simulate", "--out", path, "--duration", "6", "--rest", "0.3",
                    "--rig-error", "0.04", "--seed", "5")[0] == 0
    return path, _true_m2_l2(path)


def _true_m2_l2(path: Path) -> float:
    # the file records the nominal rig; the simulation's truth is recomputed from its seed
    from hilrig.identify.model import Realism, true_rig

    nominal = read_capture(path).rig
    true = true_rig(nominal, Realism(seed=5, rig_error=0.04), Realism(seed=5).rng())
    return true.m2 * true.l2


def _identify(*args: str | Path, config: Path | None = None) -> dict:
    before = ["--config", config] if config else []
    rc, out = run_main(*before, "identify", *args, "--method", "shooting", "--json")
    assert rc == 0
    return json.loads(out)


def test_a_weighed_static_moment_sets_the_scale_of_every_absolute_quantity(built):
    path, m2l2 = built
    told = _identify(path)
    weighed = _identify(path, "--measured", f"m2_l2={m2l2:.6g}+-0.3%")
    assert "nominal values" in told["rig"]["m2_l2"]["note"]
    assert "weighed" in weighed["rig"]["m2_l2"]["note"]
    lo, hi = weighed["rig"]["m2_l2"]["ci95"]
    assert lo <= m2l2 <= hi and hi / lo < 1.02
    lo0, hi0 = told["rig"]["m2_l2"]["ci95"]
    assert hi / lo < hi0 / lo0  # the weighing narrows what the nominal values gave
    for name in ("m2", "l2", "j2x"):
        assert weighed["rig"][name]["identifiable"] is False
        assert weighed["rig"][name]["value"] is None and "separate" in weighed["rig"][name]["note"]


def test_the_config_states_the_same_knowledge_as_the_option(built, tmp_path):
    path, m2l2 = built
    cfg = tmp_path / "hilrig.toml"
    cfg.write_text(f"[rig]\nm2_l2 = {m2l2:.6g}\n\n[rig.uncertainty]\nm2_l2 = 0.003\n")
    # an HDF5 capture keeps the rig it was recorded with; the config speaks for a CSV
    csv = tmp_path / "off.csv"
    assert main(["export", str(path), "--out", str(csv)]) == 0
    by_config = _identify(csv, config=cfg)
    by_option = _identify(csv, "--measured", f"m2_l2={m2l2:.6g}+-0.3%")
    assert by_config["rig"]["m2_l2"] == by_option["rig"]["m2_l2"]


@pytest.mark.parametrize("spec, fragment", [
    ("m2_l2=0.0079", "NAME=VALUE+-SD"),
    ("mass=0.1+-1%", "no such rig quantity"),
    ("l2=-0.06+-0.001", "positive"),
    ("l2=0.06+-abc", "not a number"),
    ("tilt_deg=12+-90", "tilt_deg"),
])
def test_a_bad_measured_value_is_one_line_naming_it(built, capfd, spec, fragment):
    path, _ = built
    capfd.readouterr()
    assert run_main("identify", path, "--measured", spec)[0] == 2
    assert_one_line_error(capfd, "--measured", fragment)


def test_a_bad_cad_uncertainty_is_one_line(built, capfd):
    path, _ = built
    capfd.readouterr()
    assert run_main("identify", path, "--cad-uncertainty", "0")[0] == 2
    assert_one_line_error(capfd, "--cad-uncertainty")
