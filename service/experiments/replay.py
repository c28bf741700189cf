"""``--replay LEDGER``: answer every recorded call with its recorded status, body (byte for byte) and
the headers a client acts on (``Retry-After``, ...; none for a ledger recorded before they were kept),
whatever index is loaded; a call the ledger does not hold is a 409 naming it.

A call is matched on its run and question tags and its `request_key` (method, route, query string,
body). A call recorded several times is answered with its recordings in order, then the last again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from openxiv.corpus.ledger.store import LedgerReader

__all__ = ["Recorded", "Replayer"]

Key = tuple[str | None, str | None, str]


@dataclass(frozen=True)
class Recorded:
    status: int
    content_type: str
    body: bytes
    fault: str | None
    headers: dict[str, str] = field(default_factory=dict)


class Replayer:
    """The ledger at ``path``, indexed for replay (bodies read once, at start-up)."""

    def __init__(self, path: Path):
        reader = LedgerReader(path)
        self.path = path
        self._answers: dict[Key, list[Recorded]] = {}
        bodies: dict[str, bytes] = {}
        for rec in reader.records():
            if rec.replayed:
                continue
            if rec.body_sha256 not in bodies:
                bodies[rec.body_sha256] = reader.body(rec.body_sha256)
            answer = Recorded(rec.status, rec.content_type, bodies[rec.body_sha256], rec.fault, rec.headers)
            self._answers.setdefault((rec.run, rec.question, rec.request_key), []).append(answer)
        self.errors = list(reader.errors)
        self._served: dict[Key, int] = {}
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        return sum(len(v) for v in self._answers.values())

    def answer(self, run: str | None, question: str | None, key: str) -> Recorded | None:
        """The next recorded answer to this call, or ``None`` when the ledger never saw it."""
        answers = self._answers.get((run, question, key))
        if not answers:
            return None
        with self._lock:
            n = self._served.get((run, question, key), 0)
            self._served[(run, question, key)] = n + 1
        return answers[min(n, len(answers) - 1)]

    def describe(self) -> dict[str, object]:
        return {"active": True, "ledger": self.path.name, "calls": self.calls}
