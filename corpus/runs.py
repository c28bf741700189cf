"""Ingest runs: each `Store.ingest` call is one row of ``ingest_runs`` that says how it ended.

A run is written ``running`` (with its pid and host) before the first record is read, and ends
``finished``, ``interrupted`` (Ctrl-C, or SIGTERM while `terminate_as_interrupt` is in force) or
``failed`` (any other error), with ``finished_at`` and what was committed. A process killed with -9
cannot write anything: its row stays ``running`` without ``finished_at``, and `effective_status`
reports it ``interrupted`` once its process is gone.
"""

from __future__ import annotations

import os
import signal
import socket
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from types import FrameType
from typing import Any, cast

from sqlalchemy import Connection, Table, insert, inspect, select, update

from openxiv.corpus.records import ReadError
from openxiv.corpus.schema import IngestError, IngestRun

__all__ = [
    "RUN_STATUSES",
    "IngestSummary",
    "Interrupted",
    "effective_status",
    "end_run",
    "run_errors",
    "run_status_counts",
    "start_run",
    "terminate_as_interrupt",
]

RUNS = cast(Table, IngestRun.__table__)
ERRORS = cast(Table, IngestError.__table__)
RUN_STATUSES = ("running", "finished", "interrupted", "failed")


@dataclass
class IngestSummary:
    """What one `Store.ingest` call did. ``read`` counts records, ``skipped`` the `ReadError` items."""

    read: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    errors: list[ReadError] = field(default_factory=list)
    """The first skipped inputs (`openxiv.corpus.ingest.ERROR_SAMPLE` at most); all ``skipped`` of
    them are in ``ingest_errors`` (`run_errors`)."""
    run_id: int | None = None
    seconds: float = 0.0
    status: str = "running"
    """How the run ended: ``finished``, ``interrupted`` or ``failed`` (see `openxiv.corpus.runs`)."""

    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("read", "added", "updated", "unchanged", "skipped")}

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "status": self.status,
            "read": self.read,
            "added": self.added,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
        }


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread by a termination signal, so the run can be marked and closed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises `Interrupted` (as Ctrl-C raises KeyboardInterrupt) instead of
    ending the process on the spot; the previous handler comes back afterwards."""

    def handler(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def start_run(conn: Connection, started: datetime) -> int:
    values = {"started_at": started, "status": "running", "pid": os.getpid(), "host": socket.gethostname()}
    return int(conn.execute(insert(RUNS).values(**values)).lastrowid)


def end_run(conn: Connection, run_id: int, status: str, counts: dict[str, int]) -> None:
    conn.execute(
        update(RUNS).where(RUNS.c.id == run_id).values(status=status, finished_at=datetime.now(), **counts)
    )


def run_errors(conn: Connection, run_id: int) -> Iterator[ReadError]:
    """Every input run ``run_id`` skipped, in the order met, streamed from ``ingest_errors``."""
    q = select(ERRORS.c.source, ERRORS.c.location, ERRORS.c.reason).where(ERRORS.c.run_id == run_id)
    for row in conn.execution_options(yield_per=5000).execute(q.order_by(ERRORS.c.id)):
        yield ReadError(*row)


def _alive(pid: int | None, host: str | None) -> bool:
    """Whether the process that wrote a ``running`` row may still be running it."""
    if pid is None or host is None:
        return False
    if host != socket.gethostname():
        return True  # cannot tell from here: trust the row
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def effective_status(status: str | None, finished_at: object, pid: int | None, host: str | None) -> str:
    """A run's status, with a ``running`` run whose process is gone reported ``interrupted``
    (``status`` is ``None`` on an old database: then ``finished_at`` decides)."""
    status = status or ("finished" if finished_at else "interrupted")
    if status == "running" and not _alive(pid, host):
        return "interrupted"
    return status


def run_status_counts(conn: Connection) -> dict[str, int]:
    """Runs per effective status (every status in `RUN_STATUSES`, zeros included).

    Works on databases written before runs had a status (read-only stores are not migrated).
    """
    have = {c["name"] for c in inspect(conn).get_columns(RUNS.name)}
    names = ("status", "finished_at", "pid", "host")
    counts: Counter[str] = Counter(dict.fromkeys(RUN_STATUSES, 0))
    for row in conn.execute(select(*(RUNS.c[n] for n in names if n in have))).mappings():
        counts[effective_status(*(row.get(n) for n in names))] += 1
    return dict(counts)
