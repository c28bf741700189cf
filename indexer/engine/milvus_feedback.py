"""The embedded ranking's word-reading stages on Milvus: pseudo-relevance feedback, the query-kind
rule and the per-query passage calibration, with Milvus doing the retrieval.

Each stage is the embedded one's function, fed with what Milvus can give:

- **Feedback** (`openxiv.indexer.engine.prf`): the feedback papers are the BM25 paper side's first
  ``prf_docs``, as there; their analysed texts are read back by primary key and weighed by BM25 with
  the snapshot's statistics (`openxiv.indexer.engine.milvus_terms`), and
  `openxiv.indexer.engine.doc_terms.relevance_model` picks the expansion terms and their weights. The
  expanded query is then a second BM25 search on Milvus: Milvus weighs a query term by its count in
  the query text, so each term is repeated in proportion to its weight (`FEEDBACK_PRECISION` times for
  the heaviest; the ranking is the weighted one's up to that rounding, and min-max, z-score and RRF
  ignore the common factor). Only papers whose title + abstract hold an original query term keep a
  feedback score, as on the embedded backend (`PaperMatches`).
- **Query kind** (`openxiv.indexer.engine.query_kind`): the profile is `query_kind.profile` of the
  BM25 family's first ten (papers and calibrated passages max-merged, as `first_pass` makes them) and
  the dense side's tenth cosine; the passage coverage (`passage_coverage`'s share) is read from the
  best paper's winning passage, fetched by primary key; `query_kind.topic_query` decides.
- **Calibration** (`openxiv.indexer.engine.passage_calibration`): `PassageCalibration.factor` over
  the two collections' statistics (``quantile`` needs every paper's score, so it falls back to
  ``idf`` here).

A snapshot without statistics (built before them) ranks without the three, with the fixed passage
factor, as before.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from openxiv.indexer.engine.doc_terms import relevance_model
from openxiv.indexer.engine.milvus_depth import MilvusSide, side
from openxiv.indexer.engine.milvus_fusion import kept_hits, term_rows
from openxiv.indexer.engine.milvus_terms import TermStats
from openxiv.indexer.engine.prf import FeedbackConfig
from openxiv.indexer.engine.query_kind import QueryKindConfig, profile, topic_query

__all__ = [
    "FEEDBACK_PRECISION",
    "PaperMatches",
    "coverage",
    "expanded_query",
    "feedback_side",
    "is_topic",
]

FEEDBACK_PRECISION = 100
"""Repeats of the heaviest expansion term in the feedback query text (a lighter term: in proportion,
at least once)."""


class PaperMatches:
    """Which papers' title + abstract hold one of the query's ``terms``: those the BM25 paper side
    returned (``known``; every one when the side is ``complete``), the others checked once per query
    by reading their analysed text back (`openxiv.indexer.engine.milvus_fusion.term_rows`)."""

    def __init__(
        self, client: Any, collection: str, terms: str, known: Iterable[int], complete: bool
    ) -> None:
        self.client, self.collection, self.terms, self.complete = client, collection, terms, complete
        self.known = set(known)
        self.checked: dict[int, bool] = {}

    def holding(self, rows: list[int]) -> set[int]:
        if not self.complete:
            ask = [r for r in dict.fromkeys(rows) if r not in self.known and r not in self.checked]
            if ask:
                found = term_rows(self.client, self.collection, ask, self.terms, set())
                self.checked.update((r, r in found) for r in ask)
        return {r for r in rows if r in self.known or self.checked.get(r, False)}


def expanded_query(
    client: Any,
    collection: str,
    stats: TermStats,
    papers: MilvusSide,
    config: FeedbackConfig,
    k1: float,
    b: float,
) -> str:
    """The feedback query as Milvus query text ('' when there is none): the relevance model of the
    BM25 paper side's first ``config.docs`` papers, terms repeated by weight (module doc)."""
    rows, top = papers.rows[: config.docs], papers.scores[: config.docs].astype(np.float64)
    if not rows.size or float(top.sum()) <= 0:
        return ""
    got = client.query(
        collection, filter=f"row in {rows.tolist()}", output_fields=["row", "text"], limit=rows.size
    )
    texts = {int(g["row"]): str(g["text"]) for g in got}
    ptr, ids, weights = [0], [], []
    for row in rows.tolist():
        words = texts.get(row, "").split()
        counts = Counter(w for w in words if w in stats.vocab)
        tid = np.asarray(sorted(stats.vocab[w] for w in counts), dtype=np.int64)
        tf = np.asarray([counts[stats.terms[t]] for t in tid.tolist()], dtype=np.int64)
        ids.append(tid)
        weights.append(stats.bm25_weights(tid, tf, len(words), k1, b))
        ptr.append(ptr[-1] + tid.size)
    terms, w = relevance_model(
        np.asarray(ptr, dtype=np.int64),
        np.concatenate(ids),
        np.concatenate(weights),
        np.arange(rows.size),
        top / top.sum(),
        config.terms,
    )
    if not terms.size:
        return ""
    reps = np.maximum(1, np.rint(w / w.max() * FEEDBACK_PRECISION)).astype(int)
    return " ".join(
        " ".join([stats.terms[t]] * n) for t, n in zip(terms.tolist(), reps.tolist(), strict=True)
    )


def feedback_side(
    search: Callable[..., list[Any]], text: str, depth: int, expr: str | None, matches: PaperMatches
) -> MilvusSide:
    """The expanded query's ``depth`` best papers among those matching the original query
    (``search``: the backend's ``_search``): a ``row in [...]`` filter when every match is known,
    else the others taken out here (`openxiv.indexer.engine.milvus_fusion.kept_hits`)."""
    if not text:
        return side([], False)
    if matches.complete:  # the listed papers passed the filters already: no filter scan again
        expr = f"row in {sorted(matches.known)}"

    def run(limit: int) -> list[tuple[int, float]]:
        hits = search("papers", text, "sparse", limit, expr)
        return [(int(h["id"] if "id" in h else h["row"]), abs(float(h["distance"]))) for h in hits]

    return kept_hits(run, matches.holding, depth)


def coverage(client: Any, collection: str, pid: int | None, terms: str, passages: TermStats) -> float:
    """Share of the query's distinct terms held by the passage collection that passage ``pid`` (the
    best paper's winning passage) holds: `openxiv.indexer.engine.prf.passage_coverage`'s measure,
    read from Milvus; 0 without such a passage."""
    words = {w for w in terms.split() if w in passages.vocab}
    if pid is None or not words:
        return 0.0
    got = client.query(collection, filter=f"pid in [{int(pid)}]", output_fields=["text"], limit=1)
    held = set(str(got[0]["text"]).split()) if got else set()
    return len(words & held) / len(words)


def is_topic(
    config: QueryKindConfig,
    query: str,
    first10: tuple[np.ndarray, np.ndarray],
    covered: float,
    dense_scores: np.ndarray | None,
) -> bool:
    """`openxiv.indexer.engine.query_kind.topic_query` on the profile Milvus' sides give."""
    if not config.enabled:
        return False
    found = profile(query, None, None, None, dense_scores, first10)
    return topic_query(dataclasses.replace(found, coverage=covered), config)
