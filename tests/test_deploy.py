"""What deploy/ ships, checked as far as this machine can: the config validates and
documents every key, the unit, udev rule and container definition say what a lab needs."""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from pydantic import BaseModel

from hilrig.daq.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def _keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    out = []
    for name, field in model.model_fields.items():
        sub = field.annotation
        if isinstance(sub, type) and issubclass(sub, BaseModel) and name not in ("rig", "friction"):
            out += _keys(sub, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out


def test_the_example_config_validates_and_documents_every_key():
    path = DEPLOY / "hilrig.example.toml"
    settings = load_settings(path)
    assert settings == load_settings(None)  # the values shown are the defaults
    text = path.read_text()
    tomllib.loads(text)
    missing = [k for k in _keys(Settings)
               if not re.search(rf"^#?\s*{re.escape(k.split('.')[-1])}\s*=", text, re.M)
               and f"[{k}]" not in text]  # rig and sim.friction are tables of their own
    assert missing == []


def _unit() -> dict[str, dict[str, list[str]]]:
    """Section -> key -> every value (systemd keys such as Environment repeat)."""
    unit: dict[str, dict[str, list[str]]] = {}
    section = ""
    for line in (DEPLOY / "hilrig.service").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            unit[section] = {}
        else:
            key, _, value = line.partition("=")
            unit[section].setdefault(key, []).append(value)
    return unit


def test_the_unit_runs_the_daemon_as_its_user_restarts_it_and_writes_only_the_archive():
    unit = _unit()
    service = {k: v[-1] for k, v in unit["Service"].items()}
    argv = shlex.split(service["ExecStart"])
    assert argv[0].endswith("/bin/hilrig") and "serve" in argv
    assert argv[argv.index("--config") + 1] == "/etc/hilrig/hilrig.toml"
    assert argv[argv.index("--port") + 1] == "/dev/hilrig-bridge"
    assert service["User"] == "hilrig" and service["Group"] == "dialout"
    assert service["Restart"] == "on-failure"
    assert "HILRIG_STORAGE__DIRECTORY=/var/lib/hilrig" in unit["Service"]["Environment"]
    assert service["ReadWritePaths"] == "/var/lib/hilrig"
    assert service["ProtectSystem"] == "strict"
    assert unit["Install"]["WantedBy"] == ["multi-user.target"]
    assert "dev-hilrig\\x2dbridge.device" in unit["Unit"]["BindsTo"]
    # room for its bounded connections beside captures, catalog and identification
    assert int(service["LimitNOFILE"]) >= 4096


def test_the_udev_rule_names_the_bridge_the_unit_waits_for():
    rule = (DEPLOY / "99-hilrig-bridge.rules").read_text()
    line = next(r for r in rule.splitlines() if r and not r.startswith("#"))
    assert 'ATTRS{idVendor}=="16c0"' in line and 'ATTRS{idProduct}=="0483"' in line
    assert 'SYMLINK+="hilrig-bridge"' in line and 'TAG+="systemd"' in line


def test_the_container_installs_every_package_and_runs_hilrig():
    text = (DEPLOY / "Containerfile").read_text()
    pyproject = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())
    assert pyproject["tool"]["setuptools"]["packages"]["find"]["include"] == ["hilrig*"]
    # hilrig/ holds links: the folders they point to must be in the image as well
    folders = ["hilrig", *(p.name for p in (DEPLOY.parent / "hilrig").iterdir() if p.is_symlink())]
    assert len(folders) == 5
    for folder in folders:
        assert f"COPY {folder} ./{folder}" in text
    assert re.search(r'^ENTRYPOINT \["hilrig"\]', text, re.M)
    assert re.search(r"^USER hilrig", text, re.M)


def test_the_readme_stands_alone():
    # a reader of the repository alone can follow every link and reference in the README
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "../" not in readme and "closing note" not in readme
    root = Path(__file__).resolve().parents[1]
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if "://" not in target:
            assert (root / target).exists(), target


def test_the_readme_command_summary_names_every_option_of_every_command():
    from hilrig.daq.cli._parser import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme[readme.index("## Commands"):]
    block = block[:block.index("```", block.index("```") + 3)]
    commands = next(a for a in build_parser()._actions if a.__class__.__name__ ==
                    "_SubParsersAction")
    missing = []
    for name, parser in commands.choices.items():
        nested = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
        for sub, p in (nested[0].choices.items() if nested else [("", parser)]):
            missing += [f"{name} {sub} {o}".replace("  ", " ") for a in p._actions
                        for o in a.option_strings
                        if o.startswith("--") and o != "--help" and o not in block]
    assert not missing, missing


def test_the_fault_table_lists_every_fault_case_as_the_tests_mark_it():
    import importlib.util

    spec = importlib.util.spec_from_file_location("fault_table",
                                                  ROOT / "tests" / "fault_table.py")
    assert spec is not None and spec.loader is not None
    fault_table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fault_table)
    page = fault_table.PAGE.read_text(encoding="utf-8")
    assert len(fault_table.fault_cases()) >= 70
    assert fault_table.page_with_table(page) == page, \
        "docs/faults.md's fault table is stale: python tests/fault_table.py --write"
    # the README's section on faults leads there
    assert "(docs/faults.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
