"""`hilrig session identify [SESSION]`: a session's captures put together, its friction's
drift tested; `results list --pooled` lists the answers kept."""

from __future__ import annotations

import argparse

from ..storage import session_answer
from ._catalog import open_catalog, session_row
from ._usage import settings_of

__all__ = ["cmd_session_identify"]


def cmd_session_identify(args: argparse.Namespace) -> int:
    with open_catalog(settings_of(args)) as cat:
        row = session_row(cat, args.session)
        # a session without results is a CatalogError: one line, exit 2, as every command
        answer = session_answer(cat, row.session_id, args.method, keep=not args.dry_run,
                                covariate=args.covariate)
    print(answer.to_json(indent=2) if args.json else str(answer))
    return 0
