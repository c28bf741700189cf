"""``openxiv eval ledger``: a run ledger beside a gold file, one row per (run, gold question).

A gold question is matched to the ledger's question tag by its item id (``qid``/``id``, else its
line number, as everywhere in the evaluator). Rows of a question a run never called are ``missing``
and score 0 on the recalls (they lower coverage); calls tagged with a question the gold does not
have, and untagged calls, are counted, not scored.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.ledger.records import LedgerRecord
from openxiv.corpus.ledger.store import LedgerReader
from openxiv.evaluator.grounding.inputs import Answer
from openxiv.evaluator.io import GoldItem, SubmissionItem
from openxiv.evaluator.ledger.trace import Trace, analyse, estimate_tokens
from openxiv.evaluator.report import Coverage, EvalReport
from openxiv.evaluator.stats import DEFAULT_RESAMPLES, aggregate_rows, breakdown

__all__ = ["METRICS", "LedgerCalls", "named_by_item", "named_in_reports", "score_ledger"]

METRICS = [
    "evidence_seen_recall",
    "evidence_returned_recall",
    "evidence_read_recall",
    "first_gold_call",
    "best_gold_rank",
    "calls",
    "failed_calls",
    "repeated_calls",
    "wasted_calls",
    "tokens_returned",
    "bytes_returned",
    "papers_returned",
    "papers_read",
    "named",
    "named_unseen_rate",
]
HEADLINE = [
    "evidence_seen_recall",
    "evidence_returned_recall",
    "evidence_read_recall",
    "calls",
    "tokens_returned",
    "repeated_calls",
    "wasted_calls",
    "named_unseen_rate",
]
RECALLS = ("evidence_seen_recall", "evidence_returned_recall", "evidence_read_recall")


@dataclass
class LedgerCalls:
    """A ledger's calls grouped by (run, question), read once, with token counts per body."""

    reader: LedgerReader
    groups: dict[tuple[str | None, str | None], list[LedgerRecord]]

    @classmethod
    def read(cls, reader: LedgerReader, runs: Sequence[str] | None = None) -> LedgerCalls:
        groups: dict[tuple[str | None, str | None], list[LedgerRecord]] = {}
        for rec in reader.records():
            if runs is None or rec.run in runs:
                groups.setdefault((rec.run, rec.question), []).append(rec)
        return cls(reader, groups)

    def runs(self) -> list[str]:
        return sorted({r for r, _ in self.groups if r is not None})

    def tokens_of(self) -> Any:
        cache: dict[str, int] = {}

        def tokens(rec: LedgerRecord) -> int:
            if rec.body_sha256 not in cache:
                try:
                    cache[rec.body_sha256] = estimate_tokens(self.reader.body(rec.body_sha256))
                except KeyError:  # a body pruned with its segment: counted as none
                    cache[rec.body_sha256] = 0
            return cache[rec.body_sha256]

        return tokens


def named_by_item(gold: Sequence[GoldItem], answers: Iterable[SubmissionItem]) -> dict[str, list[str]]:
    """The arXiv ids each gold question's answer names (every pass), matched by qid or question text."""
    by_question = {" ".join(g.question.split()): g.item_id for g in gold}
    ids = {g.item_id for g in gold}
    out: dict[str, list[str]] = {}
    for item in answers:
        key = item.qid if item.qid in ids else by_question.get(" ".join(str(item.question or "").split()))
        if key is None:
            continue
        named = out.setdefault(key, [])
        for ps in item.passes:
            for cand in ps.candidates:
                c = try_canonical_id(cand.arxiv_id) if cand.arxiv_id else None
                if c and c not in named:
                    named.append(c)
    return out


def named_in_reports(gold: Sequence[GoldItem], answers: Iterable[Answer]) -> dict[str, list[str]]:
    """The arXiv ids each gold question's report or agent search response cites (every citation and
    source), matched by its id or its question text."""
    by_question = {" ".join(g.question.split()): g.item_id for g in gold}
    ids = {g.item_id for g in gold}
    out: dict[str, list[str]] = {}
    for a in answers:
        key = a.item_id if a.item_id in ids else by_question.get(" ".join(a.label.split()))
        if key is None:
            continue
        named = out.setdefault(key, [])
        for claim in a.claims:
            for cid in [*claim.cited, *claim.meta.get("sources", [])]:
                if cid not in named:
                    named.append(cid)
    return out


def _row(run: str, g: GoldItem, trace: Trace, called: bool) -> dict[str, Any]:
    m = trace.metrics()
    if not called:
        m.update({k: 0.0 for k in RECALLS if m[k] is not None})
    matched, missed = [], []
    for p in trace.gold.values():
        if p.first_call is None and p.first_read_call is None:
            missed.append(p.arxiv_id)
            continue
        where = [f"returned first at call {p.first_call} rank {p.first_rank}, best rank {p.best_rank}, "
                 f"{p.times_returned}× returned"] if p.first_call is not None else ["never in a result list"]  # fmt: skip
        where.append(f"read at call {p.first_read_call}" if p.first_read_call is not None else "never read")
        matched.append(f"{p.arxiv_id}: " + "; ".join(where))
    flags = []
    if not called:
        flags.append("no call tagged with this question in this run: recalls 0")
    if m["failed_calls"]:
        flags.append(f"{m['failed_calls']} calls failed (status ≥ 400)")
    details = {
        "matched": matched,
        "missed": missed,
        "extra": [f"{i}: named in the answer, never returned or read" for i in trace.named_unseen()],
        "flags": flags,
    }
    return {
        "item_id": f"{run}/{g.item_id}",
        "label": g.question,
        "run": run,
        "question": g.item_id,
        "status": "scored" if called else "missing",
        **m,
        "details": {k: v for k, v in details.items() if v},
    }


def score_ledger(
    calls: LedgerCalls,
    gold: Sequence[GoldItem],
    named: dict[str, list[str]] | None = None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
) -> tuple[EvalReport, list[Trace]]:
    """One row per (run, gold question), the traces behind them, and the report."""
    tokens = calls.tokens_of()
    rows, traces = [], []
    runs = calls.runs()
    gold_ids = {g.item_id for g in gold}
    for run in runs:
        for g in gold:
            records = calls.groups.get((run, g.item_id), [])
            trace = analyse(records, g.ids, tokens, (named or {}).get(g.item_id, ()))
            trace.run, trace.question = run, g.item_id
            rows.append(_row(run, g, trace, bool(records)))
            traces.append(trace)
    unknown = sorted(
        f"{r}/{q}" for r, q in calls.groups if r is not None and q is not None and q not in gold_ids
    )
    untagged = sum(len(v) for (r, q), v in calls.groups.items() if r is None or q is None)
    scored = [r for r in rows if r["status"] == "scored"]
    report = EvalReport(
        name="ledger: " + ", ".join(runs[:4]) + (" …" if len(runs) > 4 else ""),
        benchmark="ledger",
        metrics=METRICS,
        per_item=rows,
        aggregates=aggregate_rows(rows, METRICS, seed=seed, n_boot=n_boot),
        breakdowns={"run": breakdown(rows, HEADLINE, "run", seed, n_boot)} if len(runs) > 1 else {},
        conventions={
            "question": "a gold item matches the ledger's question tag by its id (qid/id, else its line number)",
            "seen": "returned in any call's result list, or read (head, section, full text, find, "
            "references/cited-by of the paper); recalls over the gold papers; a question never "
            "called scores 0",
            "first_gold_call": "1-based position of the first call returning a gold paper, in the "
            "question's own calls",
            "repeated": "same request (method, route, query string, body) as an earlier call of the question",
            "wasted": "a 2xx call that returned and read no paper the question had not been shown already "
            "(repeats included)",
            "tokens": "words × 1.3 of each response body as sent (openxiv's estimate)",
            "named_unseen_rate": "papers the answer names that no call of the question returned or read / "
            "papers named",
            "aggregation": f"mean over (run, question) rows; percentile bootstrap 95% CI, B={n_boot}, seed={seed}",
        },
        counts={
            "runs": len(runs),
            "gold_questions": len(gold),
            "rows": len(rows),
            "rows_with_calls": len(scored),
            "calls_scored": sum(r["calls"] for r in rows),
            "calls_untagged": untagged,
            "calls_unknown_question": sum(
                len(calls.groups[k]) for k in calls.groups if k[0] and k[1] and k[1] not in gold_ids
            ),
            "ledger_errors": len(calls.reader.errors),
        },
        coverage=Coverage(answered=len(scored), total=len(rows)),
        headline=HEADLINE,
        extra={"unknown_questions": unknown[:200], "ledger_errors": calls.reader.errors[:50]},
    )
    return report, traces
