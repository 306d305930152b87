"""Files hostile to `hilrig`, as a user would hand them over: a 2 GB CSV, a line of
100 MB, /dev/zero or a FIFO as an @file or a config, angles of 1e308.

Each runs the real command in a subprocess held to 1.5 GB of address space and 30 s: it
must answer one line, exit 2, and never come near either bound.
"""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from .test_cli import _env, _hilrig

GiB = 1 << 30
MEMORY = 3 * GiB // 2
TIMEOUT_S = 30
DATA = Path(__file__).parents[2] / "data" / "multiarm"


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def hilrig_bounded(*args: str | Path, cwd: Path) -> tuple[int, str]:
    """(exit status, the stderr's one line) of hilrig within MEMORY and TIMEOUT_S."""
    proc = subprocess.run([*_hilrig(), *map(str, args)], cwd=cwd, env=_env(), timeout=TIMEOUT_S,
                          capture_output=True, text=True, preexec_fn=_bounded)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr[-3000:]  # no traceback, no numpy warning
    assert lines[0].startswith("hilrig: error:")
    return proc.returncode, lines[0]


def _sparse(path: Path, head: bytes, size: int) -> Path:
    """`head`, then NUL bytes up to `size`: a file of any size at no cost."""
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)
    return path


@pytest.mark.fault(injected="bad input: a 2 GB CSV to `identify` (furuta, single, nlink:2), "
                            "a 1.9 GB one with a valid header, one line of 100 MB",
                   expected="one line, exit 2, refused by size or at the line, within 1.5 GB")
@pytest.mark.parametrize("head, size, rig, fragment", [
    (b"", 2 * GiB, "nlink:2", "file is 2147483648 bytes, more than the limit"),
    (b"", 2 * GiB, "furuta", "file is 2147483648 bytes, more than the limit"),
    (b"t,theta1,theta2\n", 1_900_000_000, "nlink:2", "raise trigger.max_duration_s"),
    (b"t,theta1\n", 1_900_000_000, "single", "file is 1900000000 bytes"),
    (b"t,theta1,theta2\n", 100_000_000, "nlink:2", "line 2: longer than 4096 bytes"),
    (b"t,theta0,theta1\n0,0,0\n", 100_000_000, "furuta", "line 3: longer than 4096 bytes"),
], ids=["2GB nlink", "2GB furuta", "1.9GB header nlink", "1.9GB header single",
        "100MB line nlink", "100MB line furuta"])
def test_a_huge_csv_is_refused_in_one_line_before_it_is_read(tmp_path, head, size, rig,
                                                             fragment):
    path = _sparse(tmp_path / "big.csv", head, size)
    rc, line = hilrig_bounded("identify", path.name, "--rig", rig, cwd=tmp_path)
    assert rc == 2
    assert "big.csv" in line and fragment in line


@pytest.mark.fault(injected="bad input: /dev/zero, a FIFO, a 50 MB file as `--params @FILE`, "
                            "`--friction @FILE` and `--config FILE`",
                   expected="one line naming the option and the file, exit 2, no hang")
@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "50MB"])
@pytest.mark.parametrize("option", ["--params", "--friction", "--config"])
def test_an_option_file_is_a_small_regular_file(tmp_path, target, option):
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    elif target == "50MB":
        _sparse(tmp_path / "50MB", b'{"m": [0.1], ', 50_000_000)
    args = {
        "--params": ["identify", DATA / "single_pendulum_1khz.csv", "--rig", "single",
                     "--validate", "36:40", "--params-only", "--params", f"@{target}"],
        "--friction": ["simulate", "--out", "x.h5", "--duration", "0.1", "--friction",
                       f"@{target}"],
        "--config": ["--config", target, "simulate", "--out", "x.h5", "--duration", "0.1"],
    }[option]
    rc, line = hilrig_bounded(*args, cwd=tmp_path)
    assert rc == 2
    assert target in line
    assert ("not a regular file" in line) if target != "50MB" else ("more than 1048576 bytes"
                                                                     in line)
    assert option in line or option == "--config"
    assert not (tmp_path / "x.h5").exists()


@pytest.mark.fault(injected="bad input: angles of 1e308 in a capture CSV (furuta, single)",
                   expected="one line in the project's words naming the line, no numpy "
                            "warning, exit 2")
@pytest.mark.parametrize("header, row, rig", [
    ("t,theta0,theta1", "{t},1e308,0.2", "furuta"),
    ("t,theta1", "{t},1e308", "single"),
    ("# unit=deg\nt,theta1", "{t},-1e308", "single"),
])
def test_angles_of_1e308_are_one_line_in_the_projects_words(tmp_path, header, row, rig):
    rows = [row.format(t=k / 1000) if k == 5 else f"{k / 1000},0.1" + (",0.2" if rig ==
                                                                        "furuta" else "")
            for k in range(3000)]
    (tmp_path / "huge.csv").write_text("\n".join([header, *rows]) + "\n")
    rc, line = hilrig_bounded("identify", "huge.csv", "--rig", rig, cwd=tmp_path)
    assert rc == 2
    assert "huge.csv: line" in line and "e+308" in line and "is no joint angle" in line
