"""JSON Schemas of every MQTT payload, generated from the pydantic models in _payloads.py.

    python -m hilrig.daq.mqtt.schemas            # (re)write deploy/schemas/*.schema.json
    python -m hilrig.daq.mqtt.schemas --check    # exit 1 if the checked-in files are not current

A dashboard builder validates what it receives against these files; the tests check
that the files match the models and that a session's messages validate against them.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import BaseModel

from ._jobs import JobPayload, WorkerPayload
from ._payloads import PAYLOADS

__all__ = ["SCHEMA_DIR", "generate", "schema_file"]

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "deploy" / "schemas"


def schema_file(schema: str) -> str:
    """'hilrig.status/1' -> 'hilrig.status.v1.schema.json'."""
    name, version = schema.split("/")
    return f"{name}.v{version}.schema.json"


def generate() -> dict[str, str]:
    """File name -> JSON text of every payload schema."""
    out = {}
    models: dict[str, type[BaseModel]] = {**PAYLOADS, "hilrig.job/1": JobPayload,
                                          "hilrig.worker/1": WorkerPayload}
    for schema, model in models.items():
        doc = model.model_json_schema(by_alias=True, mode="serialization")
        doc = {"$schema": "https://json-schema.org/draft/2020-12/schema",
               "$id": f"https://hilrig.invalid/schemas/{schema_file(schema)}", **doc}
        out[schema_file(schema)] = json.dumps(doc, indent=2, sort_keys=True) + "\n"
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    ap.add_argument("--dir", type=Path, default=SCHEMA_DIR)
    args = ap.parse_args(argv)
    files = generate()
    if args.check:
        stale = [n for n, text in files.items()
                 if not (args.dir / n).exists() or (args.dir / n).read_text() != text]
        for name in stale:
            print(f"{args.dir / name}: not current (run python -m hilrig.daq.mqtt.schemas)",
                  file=sys.stderr)
        return 1 if stale else 0
    args.dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.dir / name).write_text(text)
        print(f"wrote {args.dir / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
