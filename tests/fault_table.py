"""The fault-injection suite as a table, from the tests' fault markers: what each case
injects and what must happen. docs/faults.md holds it between two marker comments;
`python tests/fault_table.py --write` puts it there anew, and a test keeps it current.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
START, END = "<!-- fault-suite:start -->", "<!-- fault-suite:end -->"


def fault_cases() -> list[tuple[str, str, str]]:
    """(injected, expected, test) of every fault-marked test, in file order."""
    cases = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) \
                        and d.func.attr == "fault":
                    kw = {k.arg: ast.literal_eval(k.value) for k in d.keywords}
                    where = f"{path.relative_to(ROOT / 'tests').as_posix()}::{node.name}"
                    cases.append((kw["injected"], kw["expected"], where))
    return cases


def table() -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    rows = ["| fault injected | what must happen | test (under `tests/`) |", "|---|---|---|"]
    rows += [f"| {cell(i)} | {cell(e)} | `{t}` |" for i, e, t in fault_cases()]
    return "\n".join(rows)


#: the page that holds the table
PAGE = ROOT / "docs" / "faults.md"


def page_with_table(page: str) -> str:
    head, _, rest = page.partition(START)
    _, _, tail = rest.partition(END)
    return f"{head}{START}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        PAGE.write_text(page_with_table(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(table())
