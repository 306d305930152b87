"""Installed, hilrig is one name in site-packages and lives beside any other distribution.

pre-commit depends on a distribution whose package is named `identify`; before hilrig's
packages lived under `hilrig`, installing both put two packages in site-packages/identify
and whichever came second broke the other.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy: setuptools builds in the source tree, and a build/ left there
    # from an older layout would end up in the wheel
    src = out / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis",
        "tests", "bench", "docs"))
    # offline: the build backend is the test environment's own setuptools
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "--wheel-dir", str(out), str(src)],
                   check=True, capture_output=True, timeout=300,
                   env=dict(os.environ, PIP_NO_INDEX="1"))
    (built,) = out.glob("hilrig-*.whl")
    return built


def test_the_wheel_installs_one_top_level_name_with_everything_under_it(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"hilrig"}, sorted(tops)
    for part in ("identify", "daq", "drivers", "firmware_protocol"):
        assert f"hilrig/{part}/__init__.py" in names, part
    assert "hilrig/daq/dashboard/static/index.html" in names  # the page ships with it
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "hilrig = hilrig.daq.cli:run" in zipfile.ZipFile(wheel).read(entry).decode()


def test_one_venv_holds_pre_commit_and_hilrig_and_both_work(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path"
                           "('purelib'))"], check=True, capture_output=True, text=True
                          ).stdout.strip()
    # the test environment's libraries (numpy, ..., and pre-commit with its `identify`)
    # seen from the new venv, after its own site-packages; its .pth files are not run,
    # so the checkout's editable hilrig is not there
    Path(site, "test-env.pth").write_text(sysconfig.get_path("purelib") + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                    "--quiet", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    assert sorted(p.name for p in Path(site).iterdir()
                  if p.name in ("identify", "daq", "drivers", "firmware_protocol", "hilrig")
                  ) == ["hilrig"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    probe = ("import identify.identify, hilrig.identify, hilrig.daq.cli\n"
             "print(sorted(identify.identify.tags_from_filename('rig.py')))\n"
             "print(hilrig.identify.RigParams().g)\n"
             "print(hilrig.identify.__file__.startswith({site!r}))")
    done = subprocess.run([str(python), "-c", probe.format(site=site)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    tags, g, installed = done.stdout.split("\n")[:3]
    assert "python" in tags and float(g) > 9 and installed == "True"
    pre_commit = subprocess.run([str(python), "-m", "pre_commit", "--version"], cwd=tmp_path,
                                env=env, capture_output=True, text=True, timeout=120)
    assert pre_commit.returncode == 0 and "pre-commit" in pre_commit.stdout, pre_commit.stderr
    hilrig = subprocess.run([str(venv / "bin" / "hilrig"), "--help"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert hilrig.returncode == 0 and "identify" in hilrig.stdout, hilrig.stderr[-2000:]
