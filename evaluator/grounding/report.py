"""The grounding check's report: one row per answer, the evidence of every claim, and its HTML block.

Per answer: ``faithfulness`` = faithful quotes / checked quotes (verdicts in `CHECKED`: the quote
was credited to a paper of the corpus), ``faithfulness_fuzzy`` the same with fuzzy matches of at
least ``accept`` counted faithful, ``citations_in_corpus`` = cited papers held / cited papers,
``expected_agreement`` = verdicts equal to a planted set's ``expected`` / claims with one. Overall:
the mean over answers (bootstrap CI) and, in ``counts``, the pooled rate Σ faithful / Σ checked.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from importlib import resources
from typing import Any

from openxiv.evaluator.grounding.check import CHECKED, Checked
from openxiv.evaluator.grounding.inputs import Answer
from openxiv.evaluator.report import Coverage, EvalReport
from openxiv.evaluator.stats import DEFAULT_RESAMPLES, aggregate_rows

__all__ = ["METRICS", "claim_record", "evidence_css", "evidence_html", "grounding_report"]

METRICS = [
    "faithfulness",
    "faithfulness_fuzzy",
    "citations_in_corpus",
    "expected_agreement",
    "quotes",
    "citations",
]
CONTEXT = 160
VERDICT_CLASS = {
    "exact": "matched",
    "normalised": "matched",
    "fuzzy": "extra",
    "misattributed": "missed",
    "not_found": "missed",
    "not_in_corpus": "flag",
    "uncited": "flag",
    "cited": "",
}


def _rate(num: int, den: int) -> float | None:
    return num / den if den else None


def claim_record(c: Checked, accept: float | None) -> dict[str, Any]:
    """One claim's verdict and evidence, as the JSON report has it."""
    m = c.match
    rec: dict[str, Any] = {
        "verdict": c.verdict,
        "quoted": c.claim.quoted,
        "text": c.claim.text,
        "cited": c.claim.cited,
        "origin": c.claim.origin,
        "faithful": c.faithful(accept) if c.verdict in CHECKED else None,
        "paper": c.paper,
        "similarity": None if m is None else round(m.similarity, 4),
    }
    if m is not None and m.field is not None:
        rec.update(
            level=m.level, section=m.field, section_idx=m.section_idx, start=m.start, end=m.end, span=m.span
        )
    if c.not_in_corpus:
        rec["not_in_corpus"] = list(c.not_in_corpus)
    if c.abstract_only:
        rec["abstract_only"] = True
    if c.claim.section_hint:
        rec["section_claimed"] = c.claim.section_hint
    if c.claim.expected is not None:
        rec["expected"] = c.claim.expected
    return rec


def _short(text: str, n: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _detail(c: Checked) -> str:
    where = ""
    if c.match is not None and c.match.field is not None:
        where = f" arXiv:{c.paper} «{c.match.field}» [{c.match.start}:{c.match.end}]"
        if c.match.level == "fuzzy":
            where += f" similarity {c.match.similarity:.3f}"
    cited = ", ".join(c.claim.cited) or "nothing"
    return f"{c.verdict}: “{_short(c.claim.text)}” credited to {cited}{where}"


def _row(answer: Answer, checked: list[Checked], accept: float | None) -> dict[str, Any]:
    quotes = [c for c in checked if c.verdict in CHECKED]
    faithful = sum(c.faithful(None) for c in quotes)
    lenient = sum(c.faithful(accept) for c in quotes)
    cited = list(dict.fromkeys(i for c in checked for i in c.claim.cited))
    missing = {i for c in checked for i in c.not_in_corpus} | {
        i for c in checked if c.verdict == "not_in_corpus" for i in c.claim.cited
    }
    planted = [c for c in checked if c.claim.expected is not None]
    details: dict[str, list[str]] = {"matched": [], "missed": [], "extra": [], "flags": []}
    for c in checked:
        key = {"matched": "matched", "missed": "missed", "extra": "extra", "flag": "flags"}.get(
            VERDICT_CLASS[c.verdict]
        )
        if key is not None:
            details[key].append(_detail(c))
    return {
        "item_id": answer.item_id,
        "label": answer.label or f"{answer.kind} {answer.item_id}",
        "kind": answer.kind,
        "faithfulness": _rate(faithful, len(quotes)),
        "faithfulness_fuzzy": _rate(lenient, len(quotes)),
        "citations_in_corpus": _rate(len([i for i in cited if i not in missing]), len(cited)),
        "expected_agreement": _rate(sum(c.verdict == c.claim.expected for c in planted), len(planted)),
        "quotes": len([c for c in checked if c.claim.quoted]),
        "citations": len(cited),
        "verdicts": dict(Counter(c.verdict for c in checked)),
        "claims": [claim_record(c, accept) for c in checked],
        "details": {k: v for k, v in details.items() if v},
    }


def grounding_report(
    answers: list[tuple[Answer, list[Checked]]],
    inputs: dict[str, str],
    fuzzy_min: float,
    accept: float | None,
    seed: int = 0,
    n_boot: int = DEFAULT_RESAMPLES,
) -> EvalReport:
    rows = [_row(a, checked, accept) for a, checked in answers]
    every = [c for _, checked in answers for c in checked]
    quotes = [c for c in every if c.verdict in CHECKED]
    verdicts = Counter(c.verdict for c in every)
    planted = [c for c in every if c.claim.expected is not None]
    counts: dict[str, Any] = {
        "answers": len(rows),
        "claims": len(every),
        "quotes_checked": len(quotes),
        "overall_faithfulness": _rate(sum(c.faithful(None) for c in quotes), len(quotes)),
        "overall_faithfulness_fuzzy": _rate(sum(c.faithful(accept) for c in quotes), len(quotes)),
        **{f"verdict_{v}": verdicts.get(v, 0) for v in VERDICT_CLASS},
    }
    if planted:
        counts["planted_claims"] = len(planted)
        counts["planted_agreeing"] = sum(c.verdict == c.claim.expected for c in planted)
    return EvalReport(
        name="grounding: " + ", ".join(inputs.get("submission", "").split(",")[:3]),
        benchmark="grounding",
        metrics=METRICS,
        per_item=rows,
        aggregates=aggregate_rows(rows, METRICS, seed=seed, n_boot=n_boot),
        conventions={
            "levels": "exact substring of one stored field (title, abstract, a section); else the same words "
            "after folding case, accents and non-alphanumerics; else fuzzy: trigram-voted windows, "
            "the closest word span by rapidfuzz ratio (1 - Indel distance / total length) on the folded words",
            "fuzzy_min": f"{fuzzy_min} (a best window below it is not_found)",
            "accept": "fuzzy not counted faithful"
            if accept is None
            else f"{accept} (faithfulness_fuzzy only)",
            "faithfulness": "exact + normalised quotes / quotes credited to a corpus paper "
            "(not_in_corpus and uncited quotes are counted, not rated)",
            "misattributed": "not in the cited paper, found in another paper the same answer cites",
            "aggregation": f"mean over answers with quotes; percentile bootstrap 95% CI, B={n_boot}, seed={seed}",
        },
        inputs=inputs,
        counts=counts,
        coverage=Coverage(answered=sum(1 for r in rows if r["claims"]), total=len(rows)),
        headline=METRICS[:4],
    )


def _context(c: Checked, texts: Any) -> str:
    """The found span with some of its field around it, the span marked."""
    m = c.match
    if m is None or m.field is None or m.start is None or m.end is None or c.paper is None:
        return '<span class="note">–</span>'
    text = texts(c.paper, m.field)
    if text is None:
        return f"<mark>{escape(m.span)}</mark>"
    before = text[max(0, m.start - CONTEXT) : m.start]
    after = text[m.end : m.end + CONTEXT]
    where = f"arXiv:{c.paper} · {m.field} · chars {m.start}–{m.end}"
    if m.level == "fuzzy" or c.verdict == "cited":
        where += f" · similarity {m.similarity:.3f}"
    return (
        f'<div class="note">{escape(where)}</div>…{escape(before)}<mark>{escape(text[m.start : m.end])}</mark>'
        f"{escape(after)}…"
    )


def evidence_html(answers: list[tuple[Answer, list[Checked]]], texts: Any, limit: int = 2000) -> str:
    """A section listing every claim: verdict, the quote and where the paper has it (in context).

    ``texts(arxiv_id, field_name)`` returns the field's stored text (for the context around a span)."""
    blocks, shown = [], 0
    for answer, checked in answers:
        rows = []
        for c in checked:
            if shown >= limit:
                break
            shown += 1
            cls = VERDICT_CLASS[c.verdict]
            expected = (
                "" if c.claim.expected is None else f"<br><small>expected {escape(c.claim.expected)}</small>"
            )
            rows.append(
                f'<tr><td class="{cls}">{escape(c.verdict)}{expected}</td>'
                f"<td>{'“' + escape(c.claim.text) + '”' if c.claim.quoted else escape(c.claim.text)}</td>"
                f"<td>{escape(', '.join(c.claim.cited) or '–')}</td><td>{_context(c, texts)}</td></tr>"
            )
        if rows:
            head = (
                "<tr><th>verdict</th><th>claim</th><th>credited to</th><th>where the paper has it</th></tr>"
            )
            title = escape(
                f"{answer.item_id}: {_short(answer.label, 120)}" if answer.label else answer.item_id
            )
            blocks.append(
                f"<details><summary>{title} ({len(checked)} claims)</summary>"
                f'<table class="evidence"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table></details>'
            )
    note = (
        f'<p class="note">First {limit} claims shown; every claim is in the JSON report.</p>'
        if shown >= limit
        else ""
    )
    return f"<style>{evidence_css()}</style><section><h2>Evidence</h2>{''.join(blocks)}{note}</section>\n"


def evidence_css() -> str:
    """The styles of the evidence and timeline tables (verdict colours, the marked span), added to a
    page beside the report's own stylesheet, which stays as it was for every other report."""
    return (
        resources.files("openxiv.evaluator").joinpath("templates", "evidence.css").read_text(encoding="utf-8")
    )
