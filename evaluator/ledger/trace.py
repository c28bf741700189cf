"""One question's calls in a run, read from the ledger: what the agent was shown and read, when.

`analyse` walks the calls of one (run, question) in ledger order and measures:

- **evidence seen**: each gold paper ever *returned* (in any call's result list) and ever *read*
  (a head, section, full text, find, references/cited-by of that paper); recall = gold papers seen /
  gold papers;
- **first appearance**: per gold paper, the first call (1-based, in the question's own order) that
  returned it and its rank there, and its best rank over all calls;
- **cost**: calls, failed calls (status ≥ 400), response bytes and tokens returned (openxiv's
  estimate, words × 1.3 of each body as sent, as the service's ``token_count``);
- **waste**: *repeated* calls (the same request as an earlier call of the question: same
  ``request_key``) and *wasted* calls (answered 2xx but returned and read no paper the question had
  not already been shown or read; a repeat is wasted too);
- **named but never seen**: for an answer that names papers, those the question's calls never
  returned or read (hallucinated, or known from memory).

Every call's counts go into the timeline the HTML export shows (`Step`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.ledger.records import LedgerRecord

__all__ = ["PaperSeen", "Step", "Trace", "analyse", "estimate_tokens"]


def estimate_tokens(body: bytes) -> int:
    """Tokens of a response body as the agent gets it: words × 1.3, rounded (openxiv's estimate)."""
    return round(len(body.decode("utf-8", errors="replace").split()) * 1.3)


@dataclass
class Step:
    """One call of the question, with what it added."""

    n: int
    record: LedgerRecord
    tokens: int
    new_returned: list[str]
    new_read: list[str]
    gold_returned: list[tuple[str, int]]
    """Gold papers this call returned, with their rank."""
    gold_read: list[str]
    repeated: bool
    wasted: bool


@dataclass
class PaperSeen:
    """A gold paper's history in the question's calls."""

    arxiv_id: str
    first_call: int | None = None
    first_rank: int | None = None
    best_rank: int | None = None
    times_returned: int = 0
    first_read_call: int | None = None


@dataclass
class Trace:
    run: str | None
    question: str | None
    steps: list[Step] = field(default_factory=list)
    gold: dict[str, PaperSeen] = field(default_factory=dict)
    returned: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    named: list[str] = field(default_factory=list)

    @property
    def seen(self) -> set[str]:
        return self.returned | self.read

    def named_unseen(self) -> list[str]:
        return [i for i in self.named if i not in self.seen]

    def metrics(self) -> dict[str, Any]:
        """The per-question numbers of the report (``None`` where undefined: no gold, no answer)."""
        n_gold = len(self.gold)
        seen = [p for p in self.gold.values() if p.first_call is not None or p.first_read_call is not None]
        returned = [p for p in self.gold.values() if p.first_call is not None]
        read = [p for p in self.gold.values() if p.first_read_call is not None]
        firsts = [p.first_call for p in returned if p.first_call is not None]
        ok = [s for s in self.steps if s.record.status < 400]
        return {
            "evidence_seen_recall": len(seen) / n_gold if n_gold else None,
            "evidence_returned_recall": len(returned) / n_gold if n_gold else None,
            "evidence_read_recall": len(read) / n_gold if n_gold else None,
            "first_gold_call": min(firsts) if firsts else None,
            "best_gold_rank": min((p.best_rank for p in returned if p.best_rank is not None), default=None),
            "calls": len(self.steps),
            "failed_calls": len(self.steps) - len(ok),
            "repeated_calls": sum(s.repeated for s in self.steps),
            "wasted_calls": sum(s.wasted for s in self.steps),
            "tokens_returned": sum(s.tokens for s in self.steps),
            "bytes_returned": sum(s.record.body_bytes for s in self.steps),
            "papers_returned": len(self.returned),
            "papers_read": len(self.read),
            "named": len(self.named) if self.named else None,
            "named_unseen_rate": len(self.named_unseen()) / len(self.named) if self.named else None,
        }


def _canonical(ids: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i in ids:
        c = try_canonical_id(i)
        if c and c not in out:
            out.append(c)
    return out


def analyse(
    records: Sequence[LedgerRecord],
    gold: Sequence[str],
    tokens_of: Callable[[LedgerRecord], int],
    named: Sequence[str] = (),
) -> Trace:
    """The trace of one question's calls (``records`` in ledger order), against its gold papers and
    the papers its answer names (ids in any spelling)."""
    first = records[0] if records else None
    trace = Trace(first.run if first else None, first.question if first else None)
    trace.gold = {g: PaperSeen(g) for g in _canonical(gold)}
    trace.named = _canonical(named)
    keys: set[str] = set()
    for n, rec in enumerate(records, 1):
        repeated = rec.request_key in keys
        keys.add(rec.request_key)
        ranks: dict[str, int] = {}
        for r in rec.returned:
            c = try_canonical_id(r.id) or r.id
            ranks[c] = min(r.rank, ranks.get(c, r.rank))
        reads = list(dict.fromkeys(try_canonical_id(r.id) or r.id for r in rec.read))
        new_returned = [i for i in ranks if i not in trace.returned and i not in trace.read]
        new_read = [i for i in reads if i not in trace.read]
        trace.returned.update(ranks)
        trace.read.update(reads)
        gold_returned = []
        for gid, p in trace.gold.items():
            if gid in ranks:
                rank = ranks[gid]
                gold_returned.append((gid, rank))
                p.times_returned += 1
                if p.first_call is None:
                    p.first_call, p.first_rank = n, rank
                p.best_rank = rank if p.best_rank is None else min(p.best_rank, rank)
            if gid in reads and p.first_read_call is None:
                p.first_read_call = n
        wasted = rec.status < 400 and (repeated or not (new_returned or new_read))
        step = Step(n, rec, tokens_of(rec), new_returned, new_read, gold_returned,
                    [g for g in reads if g in trace.gold], repeated, wasted)  # fmt: skip
        trace.steps.append(step)
    return trace
