"""The architecture's import rules: data flows drivers -> daq -> identify, never back."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = {
    "firmware_protocol": {"numpy"},
    "identify": {"numpy", "scipy", "numba", "pydantic", "matplotlib"},  # plots live here
    "drivers": {"numpy", "pydantic", "firmware_protocol", "identify", "serial",
                "serial_asyncio_fast"},
}
PROJECT = {"daq", "drivers", "identify", "firmware_protocol"}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_its_layer_allows(package):
    import sys
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in sorted((ROOT / package).rglob("*.py")):
        foreign = imported_roots(path) - stdlib - ALLOWED[package] - {package}
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_identify_never_reaches_daq_or_drivers():
    for path in (ROOT / "identify").rglob("*.py"):
        assert not imported_roots(path) & {"daq", "drivers"}, path
