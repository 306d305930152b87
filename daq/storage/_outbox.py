"""The outbox: messages that must reach the broker, on disk until the broker acknowledged them.

Capture records, results and session progress are written here (SQLite, WAL,
synchronous=FULL) before anything is sent, and a row is deleted only after the broker
acknowledged its QoS 1 publish. A broker outage, a lost connection or a killed service
therefore loses nothing: the rows wait, in order, and go out on the next connection,
of this process or of the next one started on the same storage directory.

Every row has a `msg_id`, also inside its JSON payload: the same message sent twice
(a publish whose acknowledgement was lost) carries the same id, so a consumer can tell
a redelivery from a new message. Putting a msg_id that is already waiting does nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from hilrig.identify import utc_now

__all__ = ["OUTBOX_NAME", "Outbox", "OutboxRow"]

OUTBOX_NAME = "outbox.sqlite"


@dataclass(frozen=True)
class OutboxRow:
    seq: int
    msg_id: str
    topic: str
    payload: bytes
    retain: bool
    created_utc: str


class Outbox:
    """A durable FIFO of (topic, payload, retain) keyed by msg_id."""

    def __init__(self, directory: Path) -> None:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / OUTBOX_NAME
        self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None,
                                     check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
            "msg_id TEXT NOT NULL UNIQUE, topic TEXT NOT NULL, payload BLOB NOT NULL, "
            "retain INTEGER NOT NULL, created_utc TEXT NOT NULL)")

    def put(self, msg_id: str, topic: str, payload: bytes, *, retain: bool = False) -> None:
        self._conn.execute("INSERT OR IGNORE INTO outbox (msg_id, topic, payload, retain, "
                           "created_utc) VALUES (?, ?, ?, ?, ?)",
                           (msg_id, topic, payload, int(retain), utc_now()))

    def pending(self, limit: int = 100) -> list[OutboxRow]:
        rows = self._conn.execute("SELECT seq, msg_id, topic, payload, retain, created_utc "
                                  "FROM outbox ORDER BY seq LIMIT ?", (limit,))
        return [OutboxRow(r[0], r[1], r[2], bytes(r[3]), bool(r[4]), r[5]) for r in rows]

    def done(self, seq: int) -> None:
        self._conn.execute("DELETE FROM outbox WHERE seq = ?", (seq,))

    def __len__(self) -> int:
        return int(self._conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])

    def close(self) -> None:
        self._conn.close()
