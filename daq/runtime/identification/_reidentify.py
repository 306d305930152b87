"""Re-identification: an archived capture identified again, the result kept and published.

One service for every way a lab asks for it: the `identify` command to a running
plain run, session or idle daemon, and `hilrig reidentify` on the command line. Only
archived captures can be named (by id, never by path), and only what lies inside the
archive is read. A result is added, never replacing an earlier one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hilrig.identify import IdentificationResult, result_problems

from ...mqtt import CommandRefused, IdentifyRequest
from ...storage import Catalog, CatalogError, store_result
from ._result_line import result_line

__all__ = ["ArchiveError", "CaptureArchive", "CatalogArchive", "DirectoryArchive",
           "Reidentified", "Reidentifier"]

#: identify(capture_id, path, method), e.g. functools.partial(identified, executor)
Identify = Callable[[str, Path, str], Awaitable[IdentificationResult]]
#: publish(capture_id, result, queued): `queued()`, if given, once it is in the outbox
Publish = Callable[[str, IdentificationResult, Callable[[], None] | None], None]


class ArchiveError(LookupError):
    """A capture that cannot be re-identified: one line naming it and why."""


class CaptureArchive(Protocol):
    """Where archived captures are found, and how a new result of one is kept."""

    def locate(self, capture_id: str) -> Path:
        """The capture's file; ArchiveError if there is none (or it lies outside)."""
        ...

    def keep(self, capture_id: str, path: Path, result: IdentificationResult) -> dict[str, Any]:
        """Keep the result; the ids it was kept under (e.g. result_id)."""
        ...

    def queued(self, kept: dict[str, Any]) -> Callable[[], None] | None:
        """What to note once the kept result is in the outbox, if anything."""
        ...


def _inside(root: Path, path: Path) -> bool:
    return root.resolve() in path.resolve().parents


@dataclass
class CatalogArchive:
    """A session archive: the catalog knows each capture's file and keeps every result."""

    catalog: Catalog
    root: Path

    def locate(self, capture_id: str) -> Path:
        try:
            row = self.catalog.capture(capture_id)
        except CatalogError:
            raise ArchiveError(f"no capture {capture_id!r} in the catalog") from None
        path = Path(row.path or "")
        if row.status not in ("captured", "done", "failed") or not row.path \
                or not path.is_file():
            raise ArchiveError(f"capture {capture_id} has no archived file "
                               f"(status {row.status})")
        if not _inside(self.root, path):
            raise ArchiveError(f"capture {capture_id} lies outside the archive {self.root}")
        return path

    def keep(self, capture_id: str, path: Path, result: IdentificationResult) -> dict[str, Any]:
        row = store_result(self.catalog, capture_id, path, result)
        return {"result_id": row.result_id, "path": row.path}

    def queued(self, kept: dict[str, Any]) -> Callable[[], None] | None:
        return lambda: self.catalog.mark_result_queued(kept["result_id"])


@dataclass
class DirectoryArchive:
    """A plain run's archive: `<root>/<capture_id>.h5`, no catalog, results not kept."""

    root: Path

    def locate(self, capture_id: str) -> Path:
        path = Path(self.root) / f"{capture_id}.h5"
        if not path.is_file():
            raise ArchiveError(f"no capture {capture_id!r} in {self.root}")
        if not _inside(self.root, path):
            raise ArchiveError(f"capture {capture_id!r} lies outside the archive {self.root}")
        return path

    def keep(self, capture_id: str, path: Path, result: IdentificationResult) -> dict[str, Any]:
        return {}

    def queued(self, kept: dict[str, Any]) -> Callable[[], None] | None:
        return None


@dataclass
class Reidentified:
    capture_id: str
    result: IdentificationResult
    kept: dict[str, Any] = field(default_factory=dict)


class Reidentifier:
    """Locate, identify (`identify(capture_id, path, method)`), keep, then
    `publish(capture_id, result)`."""

    def __init__(self, archive: CaptureArchive, identify: Identify,
                 publish: Publish | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.archive = archive
        self.identify = identify
        self.publish = publish
        self.say = say

    async def run(self, capture_id: str, method: str) -> Reidentified:
        """Raises ArchiveError for a capture it cannot read; identification errors as they are."""
        path = self.archive.locate(capture_id)
        result = await self.identify(capture_id, path, method)
        problems = result_problems(result)
        if problems:  # stored, it could not be read back; published, it would mislead
            raise ArchiveError(f"capture {capture_id}: {method} gave a result unfit to keep: "
                               f"{'; '.join(problems)}")
        kept = self.archive.keep(capture_id, path, result)
        if self.say is not None:
            self.say(result_line(result))
        if self.publish is not None:
            self.publish(capture_id, result, self.archive.queued(kept))
        return Reidentified(capture_id, result, kept)

    async def command(self, request: IdentifyRequest) -> dict[str, Any]:
        """The `identify` command's handler: the reply's result, or a one-line refusal."""
        try:
            done = await self.run(request.capture_id, request.method)
        except ArchiveError as exc:
            raise CommandRefused(f"identify: {exc}") from None
        result = done.result
        return {"capture_id": done.capture_id, "method": result.method,
                "fit_percent": result.fit_percent, "compute_seconds": result.compute_seconds,
                **{k: v for k, v in done.kept.items() if k == "result_id"}}
