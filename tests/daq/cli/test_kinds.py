"""Each rig kind's part of the offline commands: found by the kind, loaded only when a
command needs that kind."""

from __future__ import annotations

import subprocess
import sys

from hilrig.daq.cli._kinds import rig_commands
from hilrig.daq.cli._rig_commands import RigCommands
from hilrig.identify.model import RIG_FAMILIES


def test_every_rig_family_has_its_part_of_the_commands():
    for family in sorted(set(RIG_FAMILIES.values())):
        assert isinstance(rig_commands(family), RigCommands), family


def test_furuta_commands_do_not_load_the_chain_kind(tmp_path):
    """`hilrig simulate`, then `hilrig identify`, of the default (Furuta) rig in a fresh
    process: the chain's commands and estimator are never imported (its parameter models
    are: the settings hold a [rig] kind of either family)."""
    capture = str(tmp_path / "c.h5")
    probe = ("import sys\nfrom hilrig.daq.cli import main\n"
             f"assert main(['simulate', '--out', {capture!r}, '--duration', '6']) == 0\n"
             f"assert main(['identify', {capture!r}, '--json']) == 0\n"
             "print(sorted(m for m in sys.modules if m.startswith(("
             "'hilrig.daq.cli.chain', 'hilrig.identify.methods.estimator.chain'))))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=300, check=True, cwd=tmp_path).stdout
    assert out.splitlines()[-1] == "[]", out
