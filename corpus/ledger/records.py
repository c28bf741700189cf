"""One ledger record: a call an agent made to openxiv, as the server saw and answered it.

A record is written by the service (`openxiv.service.experiments`) and read by the evaluator
(``openxiv eval`` over a ledger, ``openxiv runs``); both import this module, so it lives in the
corpus part, below both. The store is `openxiv.corpus.ledger.store`; the schema is documented in
docs/ledger.md, «One record».
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "LEDGER_VERSION",
    "TAG_PATTERN",
    "LedgerRecord",
    "Read",
    "Returned",
    "check_tag",
]

LEDGER_VERSION = 1
"""Bumped when a field changes meaning; a reader refuses a ledger of a later version."""

TAG_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~:@+=-]{0,127}$")
"""A run or question tag: 1-128 characters, letters, digits and ``. _ ~ : @ + = -``, not starting
with punctuation (so it rides in a URL path segment without escaping, and in a file name)."""


def check_tag(value: str, what: str) -> str:
    """``value`` when it is a valid tag, else `ValueError` naming ``what`` (``run`` / ``question``)."""
    if not TAG_PATTERN.match(value):
        raise ValueError(
            f"{what} tag {value[:60]!r}: expected 1-128 characters of letters, digits and . _ ~ : @ + = - "
            "(not starting with punctuation)"
        )
    return value


@dataclass(frozen=True)
class Returned:
    """A paper a call returned: its bare arXiv id and 1-based rank in the list the client got
    (``offset`` included, so page 2 of 10 starts at rank 11). ``query`` is the 0-based query of a
    batch the hit came from, when the response says so (``None`` otherwise)."""

    id: str
    rank: int
    query: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "rank": self.rank}
        if self.query is not None:
            out["query"] = self.query
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Returned:
        return cls(id=str(value["id"]), rank=int(value["rank"]), query=value.get("query"))


@dataclass(frozen=True)
class Read:
    """A paper the call read, not searched for: ``what`` is ``head``, ``brief``, ``section``, ``raw``,
    ``preview``, ``json``, ``paper``, ``find``, ``references`` or ``cited_by``; ``section`` the section
    asked for (``section`` reads), ``query`` the text searched for inside the paper (``find``)."""

    id: str
    what: str
    section: str | None = None
    query: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "what": self.what}
        if self.section is not None:
            out["section"] = self.section
        if self.query is not None:
            out["query"] = self.query
        return out

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Read:
        return cls(
            id=str(value["id"]),
            what=str(value["what"]),
            section=value.get("section"),
            query=value.get("query"),
        )


@dataclass(frozen=True)
class LedgerRecord:
    """One call. Times are UTC; ``latency_ms`` is from the request's first byte to its answer.

    ``route`` is the path without the tag prefix (``/search``, ``/arxiv/``, ``/v1/papers/2301.00001``,
    ``/mcp``); ``kind`` names the operation in one word (``search``, ``head``, ``section``, ``find``,
    ``similar``, ``references``, ``cited_by``, ``agent_search``, ``retrieve``, ``paper``, ``index``,
    or ``mcp:<tool>``), ``other`` when it is none of them. ``params`` are the request's parameters:
    the query string's (a name given twice holds a list) merged with a JSON object body's.
    ``request_key`` identifies the request for replay (method, route, query string, body);
    ``body_sha256`` names the response body in the ledger's body table (`LedgerReader.body`).
    ``cutoff`` is the date ceiling applied (``--cutoffs``), ``leaks`` how many papers after it would
    have been returned without it and ``leaked`` their ids; ``fault`` the injected fault
    (``--faults``), e.g. ``429``, ``503``, ``latency:250``, ``timeout``, ``quota:minute``.
    ``replayed`` is true when ``--replay`` answered the call from a ledger; ``headers`` the response
    headers a client acts on (``Retry-After``, ...), which replay sends again.
    """

    time: str
    run: str | None
    question: str | None
    front: str
    method: str
    route: str
    kind: str
    params: dict[str, Any]
    status: int
    latency_ms: float
    snapshot: str | None
    request_key: str
    body_sha256: str
    body_bytes: int
    content_type: str
    returned: tuple[Returned, ...] = ()
    read: tuple[Read, ...] = ()
    cutoff: str | None = None
    leaks: int = 0
    leaked: tuple[str, ...] = ()
    fault: str | None = None
    replayed: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    """The response headers a client acts on (``retry-after``, ...), names in lower case: what
    ``--replay`` sends again besides the status, content type and body (absent in older ledgers)."""
    seq: int | None = field(default=None, compare=False)
    """Position in the ledger (segment-local row id, set by the reader; ``None`` when writing)."""
    segment: str | None = field(default=None, compare=False)
    """The segment file the record was read from (set by the reader)."""

    def to_json(self) -> dict[str, Any]:
        """The record as one JSON object (what ``openxiv runs --export`` writes, one per line)."""
        return {
            "time": self.time,
            "run": self.run,
            "question": self.question,
            "front": self.front,
            "method": self.method,
            "route": self.route,
            "kind": self.kind,
            "params": self.params,
            "status": self.status,
            "latency_ms": self.latency_ms,
            "snapshot": self.snapshot,
            "request_key": self.request_key,
            "body_sha256": self.body_sha256,
            "body_bytes": self.body_bytes,
            "content_type": self.content_type,
            "returned": [r.to_json() for r in self.returned],
            "read": [r.to_json() for r in self.read],
            "cutoff": self.cutoff,
            "leaks": self.leaks,
            "leaked": list(self.leaked),
            "fault": self.fault,
            "replayed": self.replayed,
            "headers": self.headers,
            "seq": self.seq,
            "segment": self.segment,
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> LedgerRecord:
        return cls(
            time=str(value["time"]),
            run=value.get("run"),
            question=value.get("question"),
            front=str(value.get("front", "http")),
            method=str(value["method"]),
            route=str(value["route"]),
            kind=str(value["kind"]),
            params=dict(value.get("params") or {}),
            status=int(value["status"]),
            latency_ms=float(value["latency_ms"]),
            snapshot=value.get("snapshot"),
            request_key=str(value["request_key"]),
            body_sha256=str(value["body_sha256"]),
            body_bytes=int(value["body_bytes"]),
            content_type=str(value.get("content_type", "")),
            returned=tuple(Returned.from_json(r) for r in value.get("returned") or ()),
            read=tuple(Read.from_json(r) for r in value.get("read") or ()),
            cutoff=value.get("cutoff"),
            leaks=int(value.get("leaks") or 0),
            leaked=tuple(value.get("leaked") or ()),
            fault=value.get("fault"),
            replayed=bool(value.get("replayed", False)),
            headers={str(k): str(v) for k, v in (value.get("headers") or {}).items()},
            seq=value.get("seq"),
            segment=value.get("segment"),
        )
