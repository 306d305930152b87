"""The catalog: sessions, captures, results and errors in one SQLite file (WAL mode).

It answers `hilrig captures list`, `hilrig results list` and `hilrig session status`
without opening a capture file, and it is the durable progress of a session: every
step is committed (synchronous=FULL) before the next one starts, so a killed service
resumes from what the catalog says.

Results are only ever added (one row per identification, numbered by result_id): a
capture re-identified with the same method keeps both rows. A result may carry a
`result_key` (a job or delivery id); a second add with the same key returns the
first row instead of adding a duplicate, which is what makes a redelivered result
harmless.

The file lives at `<storage.directory>/catalog.sqlite`; several processes may open
it at once (the service writes, the CLI reads and asks a session to stop).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hilrig.identify import SOFTWARE_VERSION, IdentificationResult, SessionResult, utc_now

from ..config import first_error

__all__ = ["CATALOG_NAME", "Catalog", "CatalogError", "CaptureRow", "ErrorRow", "ResultRow",
           "SessionResultRow",
           "SessionRow"]

_M = TypeVar("_M", bound=BaseModel)

CATALOG_NAME = "catalog.sqlite"
SCHEMA_VERSION = 5  # 2: results.queued_utc; 3: sessions.retained_cleared_utc; 4: campaigns;
#                    5: session_results

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id       TEXT PRIMARY KEY,
    name             TEXT NOT NULL DEFAULT '',
    plan_json        TEXT NOT NULL,
    status           TEXT NOT NULL,          -- created, running, stopped, done, failed
    reason           TEXT,
    created_utc      TEXT NOT NULL,
    updated_utc      TEXT NOT NULL,
    software_version TEXT NOT NULL,
    pid              INTEGER,
    stop_requested   INTEGER NOT NULL DEFAULT 0,
    retained_cleared_utc TEXT                -- its retained MQTT topics deleted then
);
CREATE TABLE IF NOT EXISTS captures (
    capture_id       TEXT PRIMARY KEY,
    session_id       TEXT REFERENCES sessions(session_id),
    seq              INTEGER,
    pose_json        TEXT,
    status           TEXT NOT NULL,  -- recording, captured, done, failed, interrupted, timeout
    path             TEXT,
    samples          INTEGER,
    lost_samples     INTEGER,
    duration_s       REAL,
    end_reason       TEXT,
    summary_json     TEXT,
    error            TEXT,
    started_utc      TEXT NOT NULL,
    ended_utc        TEXT,
    software_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS captures_by_session ON captures(session_id, seq);
CREATE TABLE IF NOT EXISTS results (
    result_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    capture_id       TEXT NOT NULL REFERENCES captures(capture_id),
    method           TEXT NOT NULL,
    result_key       TEXT UNIQUE,
    created_utc      TEXT NOT NULL,
    fit_arm          REAL,
    fit_pendulum     REAL,
    compute_seconds  REAL,
    result_json      TEXT NOT NULL,
    path             TEXT,
    software_version TEXT NOT NULL,
    queued_utc       TEXT                    -- when it went into the outbox (to be published)
);
CREATE INDEX IF NOT EXISTS results_by_capture ON results(capture_id, method);
CREATE TABLE IF NOT EXISTS campaigns (
    campaign_id      TEXT PRIMARY KEY,
    selection_json   TEXT NOT NULL,          -- what it re-identifies: captures and methods
    created_utc      TEXT NOT NULL,
    updated_utc      TEXT NOT NULL,
    software_version TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS campaign_tasks (
    campaign_id      TEXT NOT NULL REFERENCES campaigns(campaign_id),
    capture_id       TEXT NOT NULL,
    method           TEXT NOT NULL,
    status           TEXT NOT NULL,          -- done, failed
    result_id        INTEGER REFERENCES results(result_id),
    reason           TEXT,                   -- why it failed
    provenance_json  TEXT,
    updated_utc      TEXT NOT NULL,
    PRIMARY KEY (campaign_id, capture_id, method)
);
CREATE TABLE IF NOT EXISTS session_results (
    session_result_id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id       TEXT NOT NULL REFERENCES sessions(session_id),
    capture_method   TEXT NOT NULL,          -- the method its captures were identified by
    verdict          TEXT NOT NULL,
    captures         INTEGER NOT NULL,       -- pooled (included)
    created_utc      TEXT NOT NULL,
    result_json      TEXT NOT NULL,          -- hilrig.session-result/1
    software_version TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS session_results_by_session ON session_results(session_id);
CREATE TABLE IF NOT EXISTS errors (
    error_id         INTEGER PRIMARY KEY AUTOINCREMENT,
    time_utc         TEXT NOT NULL,
    session_id       TEXT,
    capture_id       TEXT,
    message          TEXT NOT NULL
);
"""


class CatalogError(RuntimeError):
    """A catalog that cannot be opened or does not hold what was asked; one line."""


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclass(frozen=True)
class SessionRow:
    session_id: str
    name: str
    plan_json: str
    status: str
    reason: str | None
    created_utc: str
    updated_utc: str
    software_version: str
    pid: int | None
    stop_requested: bool
    retained_cleared_utc: str | None = None


@dataclass(frozen=True)
class CaptureRow:
    capture_id: str
    session_id: str | None
    seq: int | None
    pose: list[float] | None
    status: str
    path: str | None
    samples: int | None
    lost_samples: int | None
    duration_s: float | None
    end_reason: str | None
    summary: dict[str, Any] | None
    error: str | None
    started_utc: str
    ended_utc: str | None
    software_version: str


def _stored(model: type[_M], text: str, what: str, where: str) -> _M:
    """A model kept as JSON in the catalog; CatalogError (one line) if it no longer reads."""
    try:
        return model.model_validate_json(text)
    except ValidationError as exc:
        raise CatalogError(f"{where} is unreadable: {first_error(exc, what)}") from None


@dataclass(frozen=True)
class ResultRow:
    result_id: int
    capture_id: str
    method: str
    result_key: str | None
    created_utc: str
    fit_arm: float | None
    fit_pendulum: float | None
    compute_seconds: float | None
    result_json: str
    path: str | None
    software_version: str
    queued_utc: str | None = None  # None: not yet handed to the outbox

    def result(self) -> IdentificationResult:
        """The result as stored; CatalogError (one line) if it no longer reads as one (an
        earlier version stored NaN and infinite numbers, which JSON keeps as null)."""
        return _stored(IdentificationResult, self.result_json, "result",
                       f"result {self.result_id} (capture {self.capture_id}, {self.method})")


@dataclass(frozen=True)
class SessionResultRow:
    session_result_id: int
    session_id: str
    capture_method: str
    verdict: str
    captures: int
    created_utc: str
    result_json: str
    software_version: str

    def result(self) -> SessionResult:
        """The pooled result as stored; CatalogError (one line) if it no longer reads."""
        return _stored(SessionResult, self.result_json, "session result",
                       f"session result {self.session_result_id} (session {self.session_id})")


@dataclass(frozen=True)
class ErrorRow:
    error_id: int
    time_utc: str
    session_id: str | None
    capture_id: str | None
    message: str


_CAPTURE_COLUMNS = ("capture_id", "session_id", "seq", "pose_json", "status", "path", "samples",
                    "lost_samples", "duration_s", "end_reason", "summary_json", "error",
                    "started_utc", "ended_utc", "software_version")
_UPDATABLE = {"status", "path", "samples", "lost_samples", "duration_s", "end_reason",
              "summary", "error", "ended_utc"}


def _capture_row(r: sqlite3.Row) -> CaptureRow:
    return CaptureRow(capture_id=r["capture_id"], session_id=r["session_id"], seq=r["seq"],
                      pose=_loads(r["pose_json"]), status=r["status"], path=r["path"],
                      samples=r["samples"], lost_samples=r["lost_samples"],
                      duration_s=r["duration_s"], end_reason=r["end_reason"],
                      summary=_loads(r["summary_json"]), error=r["error"],
                      started_utc=r["started_utc"], ended_utc=r["ended_utc"],
                      software_version=r["software_version"])


class Catalog:
    """One connection to the catalog file; create it with `Catalog.open(directory)`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn
        self._batched = False

    @classmethod
    def open(cls, directory: Path, *, create: bool = True) -> Catalog:
        """The catalog in `directory` (created with the directory when `create`)."""
        directory = Path(directory)
        path = directory / CATALOG_NAME
        if not create and not path.exists():
            raise CatalogError(f"{path}: no catalog here (no session has run with "
                               f"storage.directory = {directory})")
        try:
            if create:
                directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30.0, isolation_level=None,
                                   check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # a committed step survives power loss
            conn.execute("PRAGMA foreign_keys=ON")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise CatalogError(f"{path}: catalog schema {version} is newer than this "
                                   f"software reads ({SCHEMA_VERSION}); upgrade hilrig")
            if version < SCHEMA_VERSION:  # every statement is idempotent (IF NOT EXISTS)
                conn.executescript(_SCHEMA)
                if version == 1:  # results of schema 1 were published as they were added
                    conn.execute("ALTER TABLE results ADD COLUMN queued_utc TEXT")
                    conn.execute("UPDATE results SET queued_utc = created_utc")
                if 1 <= version <= 2:
                    conn.execute("ALTER TABLE sessions ADD COLUMN retained_cleared_utc TEXT")
                conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.DatabaseError as exc:
            raise CatalogError(f"{path}: cannot open the catalog: {exc}") from None
        except OSError as exc:
            raise CatalogError(f"{path}: cannot open the catalog: {exc.strerror or exc}") from None
        return cls(path, conn)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _one(self, sql: str, *args: Any) -> sqlite3.Row | None:
        return self._conn.execute(sql, args).fetchone()

    def _write(self, sql: str, *args: Any) -> sqlite3.Cursor:
        if self._batched:
            return self._conn.execute(sql, args)
        with _transaction(self._conn):
            return self._conn.execute(sql, args)

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Every write inside is one transaction: kept together, or (on an error or a
        crash) not at all. A campaign keeps its results in batches this way: one commit,
        one fsync, for many results."""
        if self._batched:
            yield
            return
        with _transaction(self._conn):
            self._batched = True
            try:
                yield
            finally:
                self._batched = False

    # -- campaigns --------------------------------------------------------------------------
    def add_campaign(self, campaign_id: str, selection_json: str) -> None:
        """A campaign, once: the same id again is the same campaign (resumed)."""
        now = utc_now()
        self._write("INSERT OR IGNORE INTO campaigns (campaign_id, selection_json, created_utc,"
                    " updated_utc, software_version) VALUES (?, ?, ?, ?, ?)",
                    campaign_id, selection_json, now, now, SOFTWARE_VERSION)

    def campaign_tasks(self, campaign_id: str) -> dict[tuple[str, str], str]:
        """(capture_id, method) -> status of every task the campaign has finished."""
        return {(r[0], r[1]): r[2] for r in self._conn.execute(
            "SELECT capture_id, method, status FROM campaign_tasks WHERE campaign_id = ?",
            (campaign_id,))}

    def finish_campaign_task(self, campaign_id: str, capture_id: str, method: str, *,
                             result_id: int | None, reason: str | None,
                             provenance_json: str | None) -> None:
        """A task done (its result's id) or failed (its reason); a second finish of the
        same task changes nothing."""
        now = utc_now()
        self._write("INSERT OR IGNORE INTO campaign_tasks (campaign_id, capture_id, method, "
                    "status, result_id, reason, provenance_json, updated_utc) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", campaign_id, capture_id, method,
                    "done" if result_id is not None else "failed", result_id, reason,
                    provenance_json, now)
        self._write("UPDATE campaigns SET updated_utc = ? WHERE campaign_id = ?", now,
                    campaign_id)

    # -- sessions ---------------------------------------------------------------------------
    def add_session(self, session_id: str, plan_json: str, name: str = "") -> SessionRow:
        now = utc_now()
        self._write("INSERT INTO sessions (session_id, name, plan_json, status, created_utc, "
                    "updated_utc, software_version) VALUES (?, ?, ?, 'created', ?, ?, ?)",
                    session_id, name, plan_json, now, now, SOFTWARE_VERSION)
        return self.session(session_id)

    def session(self, session_id: str) -> SessionRow:
        row = self._one("SELECT * FROM sessions WHERE session_id = ?", session_id)
        if row is None:
            raise CatalogError(f"{self.path}: no session {session_id!r}")
        return SessionRow(**{k: row[k] for k in row.keys()} | {
            "stop_requested": bool(row["stop_requested"])})

    def sessions(self) -> list[SessionRow]:
        ids = [r[0] for r in self._conn.execute(
            "SELECT session_id FROM sessions ORDER BY created_utc, session_id")]
        return [self.session(i) for i in ids]

    def mark_retained_cleared(self, session_id: str) -> None:
        """The session's retained MQTT topics were deleted from the broker."""
        self._write("UPDATE sessions SET retained_cleared_utc = ? WHERE session_id = ?",
                    utc_now(), session_id)

    def result_keys(self, session_id: str) -> list[tuple[str, str]]:
        """(capture_id, method) of every result of a session, without reading the results."""
        return [(r[0], r[1]) for r in self._conn.execute(
            "SELECT DISTINCT r.capture_id, r.method FROM results r JOIN captures c "
            "USING (capture_id) WHERE c.session_id = ?", (session_id,))]

    def latest_session(self) -> SessionRow:
        row = self._one("SELECT session_id FROM sessions ORDER BY created_utc DESC, "
                        "session_id DESC LIMIT 1")
        if row is None:
            raise CatalogError(f"{self.path}: no session yet")
        return self.session(row[0])

    def set_session_status(self, session_id: str, status: str, *, reason: str | None = None,
                           pid: int | None = None) -> None:
        self._write("UPDATE sessions SET status = ?, reason = ?, pid = ?, updated_utc = ?, "
                    "stop_requested = CASE WHEN ? = 'running' THEN 0 ELSE stop_requested END "
                    "WHERE session_id = ?", status, reason, pid, utc_now(), status, session_id)

    def request_stop(self, session_id: str) -> None:
        self._write("UPDATE sessions SET stop_requested = 1, updated_utc = ? "
                    "WHERE session_id = ?", utc_now(), session_id)

    def stop_requested(self, session_id: str) -> bool:
        row = self._one("SELECT stop_requested FROM sessions WHERE session_id = ?", session_id)
        return bool(row and row[0])

    # -- captures ---------------------------------------------------------------------------
    def add_capture(self, capture_id: str, *, status: str, session_id: str | None = None,
                    seq: int | None = None, pose: list[float] | None = None,
                    path: str | None = None, software_version: str = SOFTWARE_VERSION,
                    started_utc: str | None = None) -> None:
        """A new capture; started_utc: when it started (default now; an import keeps the
        time it was recorded)."""
        self._write("INSERT INTO captures (capture_id, session_id, seq, pose_json, status, path, "
                    "started_utc, software_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    capture_id, session_id, seq, None if pose is None else json.dumps(pose),
                    status, path, started_utc or utc_now(), software_version)

    def update_capture(self, capture_id: str, **fields: Any) -> None:
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise ValueError(f"update_capture: unknown field(s) {sorted(unknown)}")
        if "summary" in fields:
            fields["summary_json"] = json.dumps(fields.pop("summary"))
        sets = ", ".join(f"{k} = ?" for k in fields)
        cur = self._write(f"UPDATE captures SET {sets} WHERE capture_id = ?",
                          *fields.values(), capture_id)
        if cur.rowcount != 1:
            raise CatalogError(f"{self.path}: no capture {capture_id!r}")

    def capture(self, capture_id: str) -> CaptureRow:
        row = self._one("SELECT * FROM captures WHERE capture_id = ?", capture_id)
        if row is None:
            raise CatalogError(f"{self.path}: no capture {capture_id!r}")
        return _capture_row(row)

    def captures(self, session_id: str | None = None, *, status: str | None = None
                 ) -> list[CaptureRow]:
        sql, args = "SELECT * FROM captures WHERE 1", list[Any]()
        if session_id is not None:
            sql, args = sql + " AND session_id = ?", [*args, session_id]
        if status is not None:
            sql, args = sql + " AND status = ?", [*args, status]
        rows = self._conn.execute(sql + " ORDER BY started_utc, capture_id", args)
        return [_capture_row(r) for r in rows]

    def done_seqs(self, session_id: str) -> list[int]:
        return [r[0] for r in self._conn.execute(
            "SELECT seq FROM captures WHERE session_id = ? AND status = 'done' ORDER BY seq",
            (session_id,))]

    # -- results ----------------------------------------------------------------------------
    def add_result(self, result: IdentificationResult, *, capture_id: str,
                   result_key: str | None = None) -> ResultRow:
        """Add one result (never replaces one); a known result_key returns its row instead."""
        if result_key is not None:
            row = self._one("SELECT result_id FROM results WHERE result_key = ?", result_key)
            if row is not None:
                return self.result(row[0])
        first, second = result.joint_fits()  # arm, pendulum; or a chain rig's theta1, theta2
        cur = self._write(
            "INSERT INTO results (capture_id, method, result_key, created_utc, fit_arm, "
            "fit_pendulum, compute_seconds, result_json, software_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            capture_id, result.method, result_key, result.created_utc, first,
            second, result.compute_seconds, result.to_json(),
            result.software_version)
        return self.result(int(cur.lastrowid or 0))

    def set_result_path(self, result_id: int, path: str) -> None:
        self._write("UPDATE results SET path = ? WHERE result_id = ?", path, result_id)

    def result(self, result_id: int) -> ResultRow:
        row = self._one("SELECT * FROM results WHERE result_id = ?", result_id)
        if row is None:
            raise CatalogError(f"{self.path}: no result {result_id}")
        return ResultRow(**{k: row[k] for k in row.keys()})

    def mark_result_queued(self, result_id: int) -> None:
        """The result is in the outbox: it will reach the broker whatever happens next."""
        self._write("UPDATE results SET queued_utc = ? WHERE result_id = ? AND queued_utc IS "
                    "NULL", utc_now(), result_id)

    def results(self, *, capture_id: str | None = None, session_id: str | None = None,
                method: str | None = None, unqueued: bool = False,
                after_id: int = 0) -> list[ResultRow]:
        """Results in the order they were added; `unqueued`: only those never handed to the
        outbox (a service killed between keeping a result and publishing it); `after_id`:
        only those added after that result."""
        sql = "SELECT r.* FROM results r JOIN captures c USING (capture_id) WHERE 1"
        if unqueued:
            sql += " AND r.queued_utc IS NULL"
        args: list[Any] = []
        if after_id:
            sql += " AND r.result_id > ?"
            args.append(after_id)
        for column, value in (("r.capture_id", capture_id), ("c.session_id", session_id),
                              ("r.method", method)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        rows = self._conn.execute(sql + " ORDER BY r.result_id", args)
        return [ResultRow(**{k: r[k] for k in r.keys()}) for r in rows]

    def compute_times(self, session_id: str | None = None) -> list[tuple[str, str, float]]:
        """(capture id, method, compute seconds) of every result that has one, oldest first:
        what a campaign orders its tasks by, without reading the results themselves."""
        sql = ("SELECT r.capture_id, r.method, r.compute_seconds FROM results r "
               "JOIN captures c USING (capture_id) WHERE r.compute_seconds IS NOT NULL")
        args: list[Any] = []
        if session_id is not None:
            sql += " AND c.session_id = ?"
            args.append(session_id)
        return [(r[0], r[1], float(r[2]))
                for r in self._conn.execute(sql + " ORDER BY r.result_id", args)]

    # -- session results (several captures pooled) -------------------------------------------
    def add_session_result(self, result: SessionResult) -> SessionResultRow:
        """Keep a session's pooled result (a new row each time: a later one supersedes)."""
        if result.session_id is None:
            raise CatalogError("a session result needs its session_id")
        self.session(result.session_id)  # one line if the session is unknown
        cur = self._write(
            "INSERT INTO session_results (session_id, capture_method, verdict, captures, "
            "created_utc, result_json, software_version) VALUES (?, ?, ?, ?, ?, ?, ?)",
            result.session_id, result.capture_method, result.verdict,
            sum(c.included for c in result.captures), result.created_utc, result.to_json(),
            result.software_version)
        row = self._one("SELECT * FROM session_results WHERE session_result_id = ?",
                        int(cur.lastrowid or 0))
        assert row is not None
        return SessionResultRow(**{k: row[k] for k in row.keys()})

    def session_results(self, session_id: str | None = None) -> list[SessionResultRow]:
        """Pooled results in the order they were kept (of one session, or every one)."""
        sql = "SELECT * FROM session_results"
        args: tuple[Any, ...] = ()
        if session_id is not None:
            sql += " WHERE session_id = ?"
            args = (session_id,)
        rows = self._conn.execute(sql + " ORDER BY session_result_id", args)
        return [SessionResultRow(**{k: r[k] for k in r.keys()}) for r in rows]

    # -- errors -----------------------------------------------------------------------------
    def add_error(self, message: str, *, session_id: str | None = None,
                  capture_id: str | None = None) -> None:
        self._write("INSERT INTO errors (time_utc, session_id, capture_id, message) "
                    "VALUES (?, ?, ?, ?)", utc_now(), session_id, capture_id, message)

    def errors(self, *, session_id: str | None = None, capture_id: str | None = None
               ) -> list[ErrorRow]:
        sql, args = "SELECT * FROM errors WHERE 1", []
        for column, value in (("session_id", session_id), ("capture_id", capture_id)):
            if value is not None:
                sql += f" AND {column} = ?"
                args.append(value)
        rows = self._conn.execute(sql + " ORDER BY error_id", args)
        return [ErrorRow(**{k: r[k] for k in r.keys()}) for r in rows]

    def integrity_ok(self) -> bool:
        row = self._one("PRAGMA integrity_check")
        return row is not None and row[0] == "ok"


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    # autocommit connection (isolation_level=None): explicit BEGIN IMMEDIATE takes the
    # write lock up front, so two writers wait (timeout) instead of failing mid-way
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
