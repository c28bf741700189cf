"""Coverage bias of a ranking on short queries (issue 37), for ``bench_quality`` and ``bench_calibration``.

Some papers of the corpus have a full text (searched as passages), the rest a title + abstract. A
ranking is fair to that mixed coverage when having a full text gives no advantage by itself: for a
short keyword query, the share of papers with a full text in the first 10 hits should be about their
share among the papers that contain every query word (in any of their text: title, abstract or a
passage; words as the index analyses them). The measure is the ratio of the two shares' means over
the short queries (a query no paper fully matches is left out), 1 when fair, above 1 when full texts
are favoured.

The short queries are derived from the dev topic query sets, never from held-out ones: each dev
topic query is ``"<subject>: <heading>"``; its subject and the last ``—`` part of its heading are
short queries when they have 2 to 5 words, each on-topic for the papers listed under it (the union
over the subject's headings; labels are incomplete, so "on-topic first" is a lower bound). The
issue's own examples (`EXAMPLES`) are added; they have no labels.
"""

from __future__ import annotations

import json
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.engine.sparse import analyze

__all__ = ["EXAMPLES", "ShortQuery", "coverage_bias", "every_word_mask", "full_text_mask", "short_queries"]

TOPIC_FILES = ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl")
EXAMPLES = (
    "large language model agents",
    "reinforcement learning",
    "code generation",
    "object detection",
    "diffusion models",
)
"""The short queries issue 37 quotes (its first hits were off-topic papers that have a full text)."""
MIN_WORDS, MAX_WORDS = 2, 5


@dataclass(frozen=True)
class ShortQuery:
    query: str
    on_topic: frozenset[str]
    """Papers listed under it in the dev topic sets (empty for `EXAMPLES`)."""


def short_queries(gold: Path) -> list[ShortQuery]:
    """The short dev queries (module doc), in a fixed order: derived ones sorted, then `EXAMPLES`."""
    labels: dict[str, set[str]] = {}
    for name in TOPIC_FILES:
        for line in (gold / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            subject, _, heading = q["query"].partition(":")
            for part in (subject, heading.split("—")[-1]):
                part = part.strip()
                if MIN_WORDS <= len(re.findall(r"\w+", part)) <= MAX_WORDS:
                    labels.setdefault(part, set()).update(q["relevant"])
    out = [ShortQuery(q, frozenset(labels[q])) for q in sorted(labels)]
    return out + [ShortQuery(q, frozenset(labels.get(q, ()))) for q in EXAMPLES if q not in labels]


def full_text_mask(backend: Any) -> np.ndarray:
    """Papers (rows) with at least one passage."""
    n = backend.meta.n
    if backend.passages is None:
        return np.zeros(n, dtype=bool)
    ptr = np.asarray(backend.passages.ptr)
    return np.diff(ptr[: n + 1]) > 0


def _column_rows(index: Any, word: str) -> np.ndarray:
    t = index.vocab.get(word)
    if t is None:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(index.indices[index.indptr[t] : index.indptr[t + 1]], dtype=np.int64)


def every_word_mask(backend: Any, query: str) -> np.ndarray:
    """Papers whose title + abstract or passages hold every word of ``query`` (as the index analyses it)."""
    papers = backend.bm25_papers
    mask = np.ones(backend.meta.n, dtype=bool)
    for word in set(analyze([query], papers.stemmer_name)[0]):
        has = np.zeros(backend.meta.n, dtype=bool)
        has[_column_rows(papers, word)] = True
        if backend.passages is not None:
            has[backend.passages.paper_row[_column_rows(backend.passages.sparse, word)]] = True
        mask &= has
    return mask


def coverage_bias(
    backend: Any, queries: list[ShortQuery], mode: str | None = None, k: int = 10
) -> dict[str, Any]:
    """Per query and overall: the full-text share of the first ``k`` hits against the share among
    the papers holding every query word, and whether the first hit is on-topic (labelled queries)."""
    full = full_text_mask(backend)
    rows: list[dict[str, Any]] = []
    for sq in queries:
        every = every_word_mask(backend, sq.query)
        hits = backend.search(sq.query, top_k=k, mode=mode).hits
        top = [backend.meta.row_of(h.arxiv_id) for h in hits]
        rows.append(
            {
                "query": sq.query,
                "matching": int(every.sum()),
                "base": float(full[every].mean()) if every.any() else None,
                "top": float(np.mean([full[r] for r in top if r is not None])) if top else 0.0,
                "first_on_topic": (hits[0].arxiv_id in sq.on_topic) if hits and sq.on_topic else None,
                "first": hits[0].arxiv_id if hits else None,
            }
        )
    measured = [r for r in rows if r["base"] is not None]
    top = statistics.mean(r["top"] for r in measured)
    base = statistics.mean(r["base"] for r in measured)
    labelled = [r["first_on_topic"] for r in rows if r["first_on_topic"] is not None]
    return {
        "queries": len(measured),
        "top_share": top,
        "base_share": base,
        "ratio": top / base if base else float("inf"),
        "first_on_topic": statistics.mean(labelled) if labelled else None,
        "labelled": len(labelled),
        "rows": rows,
    }


def summary(bias: dict[str, Any]) -> str:
    """One sentence of `coverage_bias`'s overall numbers."""
    return (
        f"coverage bias {bias['ratio']:.2f} (full-text share of the first 10 hits {bias['top_share']:.3f} "
        f"against {bias['base_share']:.3f} among the papers holding every query word, mean over "
        f"{bias['queries']} short dev queries); first hit on-topic for {bias['first_on_topic']:.3f} of the "
        f"{bias['labelled']} labelled ones"
    )
