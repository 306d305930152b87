"""hilrig compare: every method on one capture, the seed's Table V, and its figures."""

import pytest

from hilrig.daq.cli import main
from hilrig.identify import METHODS


@pytest.fixture(scope="module")
def short_capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("cmp") / "short.h5"
    assert main(["simulate", "--out", str(path), "--duration", "8"]) == 0
    return path


@pytest.mark.timeout(300)
def test_compare_prints_table_v_for_every_method_and_writes_figures(short_capture, tmp_path,
                                                                    capsys):
    capsys.readouterr()
    assert main(["compare", str(short_capture), "--plot", str(tmp_path / "fig")]) == 0
    out = capsys.readouterr().out
    table = out.split("\n\n")[0].splitlines()
    assert table[0].split()[:2] == ["method", "compute"]
    for name in METHODS:
        assert any(line.startswith(name + " ") for line in table), name
    assert any(line.startswith("UAS (seed)") for line in table)
    for name in ("fig4_uas_error_gain", "fig5_uas_parameters", "fig6_responses", "fig7_spectra",
                 "fig8_residuals", "fig9_summary_shooting"):
        png = tmp_path / "fig" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_compare_rejects_an_unknown_method(short_capture, capsys):
    assert main(["compare", str(short_capture), "--methods", "grey-box,nope"]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
