"""Fine rerank: the first stage's top ``depth`` papers reordered by a cross-encoder's scores.

DeepXiv's ``use_fine_rerank=true``. The first stage (the backend's ranking, tiled so a page is a
pure function of the query) gives its head; the reranker scores (query, paper text) for each paper of
that head and the head is re-sorted by those scores (ties keep the first stage's order). A page that
reaches below ``depth`` continues in the first stage's order, so pages still tile: the same query
asked page by page lists every paper once. The scores shown do not change place: the head's papers
take the first stage's scores of the places they move to (the cross-encoder's logit is kept in the
hit's ``signals["rerank"]``), so scores never increase down the list, across the head's end too.

When the reranker raises `RerankerUnavailable` the head keeps the first stage's order and the
outcome carries a warning; the stage's time is reported as ``rerank`` in ``timings_ms``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from openxiv.corpus.text import split_sentences, without_residue
from openxiv.indexer.backend import PaperHit
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable

__all__ = ["NOT_CONFIGURED", "Reranked", "mixed", "passage_window", "rerank_head"]

NOT_CONFIGURED = (
    "use_fine_rerank: ignored; no reranker is configured here (OPENXIV_RERANK=none), "
    "the first-stage ranking is the final order"
)


@dataclass
class Reranked:
    hits: list[PaperHit]
    """The head in its new order (the same papers as given)."""
    ms: float = 0.0
    warnings: list[str] = field(default_factory=list)


_TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{2,}")
WINDOW_WORDS = 30
"""A passage this short is read whole."""
SHOWN_WORDS = 120
"""Words of a passage given to the reranker from the chosen sentence on (its truncation cuts the rest)."""


def passage_window(query: str, text: str) -> str:
    """The part of a passage a cross-encoder of a few hundred tokens gets to read: from the sentence
    holding the most distinct query terms (the earliest wins a tie; the passage's start when none
    matches), TeX residue markers cleaned as they are served. A passage is longer than the pair's
    token budget and a known-item sentence may sit anywhere in it: read from the start, the reranker
    would not see what the first stage found."""
    clean = without_residue(text)
    if len(clean.split()) <= WINDOW_WORDS:
        return " ".join(clean.split())
    terms = {t.lower() for t in _TERM.findall(query)}
    sentences = split_sentences(clean)
    best, at = 0, 0
    for i, sentence in enumerate(sentences):
        n = len({t.lower() for t in _TERM.findall(sentence)} & terms)
        if n > best:
            best, at = n, i
    return " ".join(" ".join(sentences[at:]).split()[:SHOWN_WORDS])


def standardised(x: np.ndarray) -> np.ndarray:
    """``x`` minus its mean over its standard deviation (zeros when it is constant)."""
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def mixed(rerank: np.ndarray, first: np.ndarray, weight: float) -> np.ndarray:
    """The order key of the head: the reranker's score standardised over the head, plus ``weight``
    times the first stage's score standardised the same way (``weight`` 0: the reranker alone). A
    paper the first stage puts far above the rest (a title or a sentence found verbatim) keeps a lead
    a cross-encoder's doubt cannot take away at a large enough weight."""
    if weight <= 0:
        return rerank
    return standardised(rerank) + weight * standardised(first)


def rerank_head(
    query: str,
    head: Sequence[PaperHit],
    texts_of: Callable[[Sequence[PaperHit]], list[list[str]]],
    reranker: Reranker,
    weight: float = 0.0,
) -> Reranked:
    """``head`` (the first stage's first places, best first) sorted by ``reranker``'s scores mixed
    with the first stage's (`mixed`, ``weight``). A hit's reranker score is the best over its texts
    (``texts_of(head)[i]``: title + abstract, and for a full-text hit also title + evidence
    passage). Stable: equal keys keep the first stage's order."""
    t0 = time.perf_counter()
    hits = list(head)
    if len(hits) < 2:
        return Reranked(hits=hits, ms=round((time.perf_counter() - t0) * 1000, 3))
    texts = texts_of(hits)
    owner = np.array([i for i, ts in enumerate(texts) for _ in ts], dtype=np.int64)
    try:
        flat = np.asarray(reranker.score(query, [t for ts in texts for t in ts]), dtype=np.float64)
    except RerankerUnavailable as exc:
        note = f"use_fine_rerank: the reranker {reranker.name} is unavailable ({exc}); first-stage order kept"
        return Reranked(hits=hits, ms=round((time.perf_counter() - t0) * 1000, 3), warnings=[note])
    scores = np.full(len(hits), -1e30)
    np.maximum.at(scores, owner, flat)
    first = np.array([h.score for h in hits], dtype=np.float64)
    order = np.argsort(-mixed(scores, first, weight), kind="stable")
    moved = [
        replace(
            hits[int(j)],
            score=hits[place].score,
            signals={**hits[int(j)].signals, "rerank": float(scores[j])},
        )
        for place, j in enumerate(order)
    ]
    return Reranked(hits=moved, ms=round((time.perf_counter() - t0) * 1000, 3))
