"""Which rig the bridge's channels are on: `[rig] kind` in the config, recorded with each
capture, and turned into the link angles identification takes."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from hilrig.daq.acquisition import ChainKind, FurutaKind, kind_of, to_record
from hilrig.daq.config import ConfigError, RigKindConfig, load_settings
from hilrig.daq.runtime import identify_capture
from hilrig.daq.storage import read_capture, write_capture_h5

from ..storage.test_capture_file import make_capture


def test_the_rig_table_takes_the_kind_beside_the_furuta_values(tmp_path):
    cfg = tmp_path / "hilrig.toml"
    cfg.write_text('[rig]\nkind = "nlink:2"\njoint_angles = "absolute"\ntilt_deg = 12.0\n')
    s = load_settings(cfg)
    assert s.rig_kind.kind == "nlink:2" and s.rig_kind.joint_angles == "absolute"
    assert s.rig.tilt_deg == 12.0
    cfg.write_text('[rig]\nkind = "nlink:3"\n')
    with pytest.raises(ConfigError, match=r"rig\.kind: rig kind nlink:3 needs 3 encoders"):
        load_settings(cfg)


def test_channels_become_absolute_link_angles_from_upright():
    cap = make_capture(n=200, gap=None)
    a = cap.angles_rad
    single = replace(cap, kind=RigKindConfig(kind="single", channel=0))
    rec, rig = to_record(single)
    assert rig.kind == "single" and rec.angles.shape == (a.shape[0], 1)
    assert rec.angles[:, 0] == pytest.approx(a[:, 0] + math.pi)
    double = replace(cap, kind=RigKindConfig(kind="nlink:2", zero="upright"))
    rec, _ = to_record(double)
    assert rec.angles[:, 1] == pytest.approx(a[:, 0] + a[:, 1])  # joint 2 reads relative
    with pytest.raises(ValueError, match="Furuta"):
        to_record(cap)


def test_the_kind_travels_with_the_capture_file(tmp_path):
    cap = replace(make_capture(n=500, gap=None), kind=RigKindConfig(kind="single",
                                                                   plane_tilt_deg=20.0))
    back = read_capture(write_capture_h5(tmp_path / "c.h5", cap))
    assert back.kind == cap.kind
    plain = read_capture(write_capture_h5(tmp_path / "f.h5", make_capture(n=500, gap=None)))
    assert plain.kind is None  # the Furuta rig, as every file before the kind existed


def test_a_chain_rig_takes_only_the_methods_that_apply():
    cap = replace(make_capture(n=500, gap=None), kind=RigKindConfig(kind="single"))
    with pytest.raises(ValueError, match="grey-box is for the Furuta rig"):
        identify_capture(cap, "grey-box")
    assert kind_of(cap.kind).methods == ("shooting",)
    assert np.isfinite(cap.angles_rad).all()


def test_each_kind_table_names_its_rig_kind_and_what_identifies_it():
    assert kind_of(None) == FurutaKind() and kind_of(RigKindConfig()) == FurutaKind()
    assert "grey-box" in FurutaKind().methods and FurutaKind().recorded is None
    for name in ("single", "nlink:1", "nlink:2"):
        config = RigKindConfig(kind=name, plane_tilt_deg=5.0, friction="coulomb-viscous")
        kind = kind_of(config)
        assert kind == ChainKind(config) and kind.name == name and kind.recorded == config
        assert kind.rig.kind == name and kind.rig.tilt_deg == 5.0
        assert kind.rig.friction == "coulomb-viscous"
