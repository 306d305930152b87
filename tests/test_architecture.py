"""The architecture, as rules a change cannot break without a failing test.

Data flows drivers -> daq -> identify; inside each package, subpackages are layers
(the import contracts in pyproject.toml, run here with import-linter); nobody imports
another package's underscore module; no module imports itself in a cycle; each package
uses only the third-party libraries of its layer; a `# type: ignore` says why.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.api import read_configuration

ROOT = Path(__file__).resolve().parents[1]
#: the repository's top-level folders, installed as hilrig.<folder>
PACKAGES = ("daq", "drivers", "identify", "firmware_protocol")
ALLOWED = {
    "firmware_protocol": {"numpy"},
    # report/ plots; results/_frames.py the notebook extra's DataFrames, imported on use
    # threadpoolctl: BLAS on one thread while an identification's kernels use the cores
    "identify": {"numpy", "scipy", "numba", "pydantic", "matplotlib", "pandas",
                 "threadpoolctl"},
    "drivers": {"numpy", "pydantic", "hilrig.firmware_protocol", "hilrig.identify", "serial",
                "serial_asyncio_fast"},
}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    # what runs: imports made only for the type checker are no cycle
    return grimp.build_graph("hilrig", exclude_type_checking_imports=True)


def test_every_import_contract_holds():
    # the console script: importlinter.cli has no __main__ guard, so `-m` would check nothing
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    kept = len(read_configuration()["contracts_options"])
    assert kept and f"Contracts: {kept} kept, 0 broken." in done.stdout, done.stdout[-2000:]


def _private_root(module: str) -> str | None:
    """The package that owns `module`'s first underscore part: hilrig.daq.storage for
    hilrig.daq.storage._atomic, None for a public module."""
    parts = module.split(".")
    for k, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:k])
    return None


def test_nobody_imports_another_packages_underscore_module(graph):
    wrong = []
    for importer in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(importer):
            owner = _private_root(imported)
            if owner is not None and importer != owner and not importer.startswith(owner + "."):
                wrong.append(f"{importer} -> {imported}")
    assert not wrong, "\n".join(wrong)


def test_no_module_imports_itself_through_a_cycle(graph):
    cycles = []
    for importer in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back is not None:
                cycles.append(" -> ".join((importer, *back)))
    assert not cycles, "\n".join(cycles)


def _root(module: str) -> str:
    """The distribution a module belongs to: numpy for numpy.linalg, hilrig.identify for
    hilrig.identify.model (hilrig's packages are told apart)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "hilrig" and len(parts) > 1 else parts[0]


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(_root(a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(_root(node.module))
    return roots


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_its_layer_allows(package):
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    for path in sorted((ROOT / package).rglob("*.py")):
        foreign = _imported_roots(path) - stdlib - ALLOWED[package] - {f"hilrig.{package}"}
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


_IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(.*)$")


def test_every_type_ignore_names_its_error_and_says_why():
    unexplained = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = _IGNORE.search(line)
                if m and (not m.group(1) or not m.group(2).strip().startswith("#")):
                    unexplained.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not unexplained, "\n".join(unexplained)


def test_the_command_line_loads_neither_test_tools_nor_plots():
    code = ("import sys, hilrig.daq.cli._parser, hilrig.daq.cli._live, hilrig.daq.cli._catalog; "
            "print(sorted(m for m in sys.modules if m.startswith(('hilrig.drivers.emulator', "
            "'matplotlib'))))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


ESTIMATOR_LAYERS = ("hilrig.identify.solvers", "hilrig.identify.model", "hilrig.identify.signal",
                    "hilrig.identify.results", "hilrig.identify.methods")


def test_no_estimator_reaches_the_seeds_published_truth(graph):
    # a method that could read TABLE_III_TRUTH could start at, or fall back to, the answer
    chains = [graph.find_shortest_chain(importer=m,
                                        imported="hilrig.identify.reference._table_iii")
              for layer in ESTIMATOR_LAYERS
              for m in sorted(graph.find_descendants(layer) | {layer})]
    assert not [c for c in chains if c], "\n".join(" -> ".join(c) for c in chains if c)
    sources = [p for layer in ESTIMATOR_LAYERS
               for p in (ROOT / layer.removeprefix("hilrig.").replace(".", "/")).rglob("*.py")]
    named = [str(p.relative_to(ROOT)) for p in sources if "TABLE_III_TRUTH" in _code_names(p)]
    assert not named, named


def _code_names(path: Path) -> set[str]:
    """Every name a module's code uses or imports (not its docstrings)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.alias):
            names.add(node.name)
    return names


_BARE = re.compile(r"^\s*(?:from|import)\s+(?:daq|drivers|identify|firmware_protocol)\b", re.M)


def test_code_imports_hilrig_by_its_installed_name():
    # installed, there is no top-level identify, daq or drivers (another distribution may
    # own that name): an import of one works from a checkout and fails for a user
    bare = [f"{p.relative_to(ROOT)}:{s.count(chr(10), 0, m.start()) + 1}"
            for folder in (*PACKAGES, "tests", "bench", "docs", "hilrig")
            for p in sorted((ROOT / folder).rglob("*.py"))
            for s in [p.read_text(encoding="utf-8")] for m in _BARE.finditer(s)]
    assert not bare, "\n".join(bare)
