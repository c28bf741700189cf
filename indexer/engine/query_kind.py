"""Query kind: a known-item lookup or a topic, decided from the query and its score profile.

The first ``head`` places of the fused ranking are kept above pseudo-relevance feedback and the
category prior (`openxiv.indexer.engine.prf.keep_head`) so that a known item found on the first page
keeps its place. That protection costs topic queries their first page, and dropping it for every
query costs the known items most of theirs (docs/indexing.md, «Query kind»). This module says which
queries are topics, so only those give up the protection.

A known-item query is a sentence of a paper (many words) or a bag of its rare words: its best BM25
score stands out from the 10th (``ratio``), or the best paper's best passage holds most of its words
(``coverage``, `openxiv.indexer.engine.prf.passage_coverage`), and above all its words make no
coherent subject, so even its 10th nearest paper vector is far (``dense``). A topic query is a
few words naming a field: flat BM25 scores, no passage holds them, and many papers sit close to it
in the vector space. A query is a *topic* when every signal says so. The thresholds were
chosen by 2-fold cross-validation over the dev query sets (docs/indexing.md «Query kind»); the
words and dense ones belong to the encoder, so an encoder's description may carry its own
(``query_kind`` in ``encoder.json``, copied into each snapshot) and a setting left unset takes them.
``ratio`` 0 turns the rule off: every query keeps its first page (the behaviour before issue 26); an
index without paper vectors never calls a query a topic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.engine.first_pass import first_scores
from openxiv.indexer.engine.paper_pass import PaperPass
from openxiv.indexer.engine.prf import passage_coverage
from openxiv.indexer.engine.topk import top_k_rows

__all__ = [
    "ENCODER_FALLBACK",
    "QueryKindConfig",
    "QueryProfile",
    "is_topic",
    "profile",
    "query_profile",
    "topic_query",
]

ENCODER_FALLBACK: dict[str, float] = {"max_words": 12, "dense": 0.65}
"""The encoder-bound thresholds of an encoder whose description names none: those chosen for the
released MiniLM, the default encoder when the rule was made (docs/indexing.md «Query kind»)."""


@dataclass(frozen=True)
class QueryKindConfig:
    """The rule's thresholds; their defaults are the settings' (``kind_*``, `QueryKindConfig.of`)."""

    ratio: float
    """A topic's best BM25 score is below ``ratio`` times its 10th (0: the rule is off)."""
    coverage: float
    """... and its best paper's best passage holds less than this share of its words."""
    max_words: int
    """... and it has at most this many words."""
    dense: float
    """... and its 10th best paper vector has at least this cosine (0: not asked)."""

    @classmethod
    def of(cls, settings: Settings, encoder_own: Mapping[str, Any] | None = None) -> QueryKindConfig:
        """The settings' thresholds; ``kind_max_words`` / ``kind_dense`` left unset take the
        encoder's own (``encoder_own``: its description's ``query_kind``), else `ENCODER_FALLBACK`."""
        own = {**ENCODER_FALLBACK, **(encoder_own or {})}
        words = settings.kind_max_words if settings.kind_max_words is not None else int(own["max_words"])
        dense = settings.kind_dense if settings.kind_dense is not None else float(own["dense"])
        return cls(settings.kind_ratio, settings.kind_coverage, words, dense)

    @property
    def enabled(self) -> bool:
        return self.ratio > 0.0


@dataclass(frozen=True)
class QueryProfile:
    words: int
    ratio: float
    """Best BM25 score over the 10th (papers and scaled passages; inf when fewer than 10 match)."""
    coverage: float
    dense: float = 0.0
    """Cosine of the 10th best paper vector among the dense side's candidates (0 with fewer)."""


def profile(
    query: str,
    first: np.ndarray | None,
    passages: Any = None,
    passage_scores: np.ndarray | None = None,
    dense_scores: np.ndarray | None = None,
    first10: tuple[np.ndarray, np.ndarray] | None = None,
) -> QueryProfile:
    """The profile of ``query`` whose first-pass BM25 scores over all papers are ``first`` (the max
    of paper text and scaled passage scores), or whose best 10 of them (rows, scores) are
    ``first10`` (`openxiv.indexer.engine.first_pass.first_top`); ``passages`` (`PassageIndex`) and
    their scores give the coverage, 0 without them."""
    if first10 is None:
        assert first is not None
        first10 = top_k_rows(first, 10)
    rows, top = first10
    if top.size == 10 and float(top[-1]) > 0.0:
        ratio = float(top[0]) / float(top[-1])
    else:
        ratio = float("inf") if top.size and float(top[0]) > 0.0 else 0.0
    coverage = 0.0
    if passages is not None and passage_scores is not None and rows.size:
        coverage = passage_coverage(passages, int(rows[0]), passage_scores, query)
    dense = float(dense_scores[9]) if dense_scores is not None and dense_scores.size >= 10 else 0.0
    return QueryProfile(len(query.split()), ratio, coverage, dense)


def topic_query(p: QueryProfile, config: QueryKindConfig) -> bool:
    """Whether a query of profile ``p`` is a topic (its first page may move); never when off."""
    return (
        config.enabled
        and p.words <= config.max_words
        and p.ratio < config.ratio
        and p.coverage < config.coverage
        and p.dense >= config.dense
    )


def query_profile(
    query: str,
    paper_s: np.ndarray | PaperPass,
    ph: Any = None,
    passages: Any = None,
    passage_scale: float = 1.0,
    dense_scores: np.ndarray | None = None,
    first10: tuple[np.ndarray, np.ndarray] | None = None,
) -> QueryProfile:
    """The profile of ``query`` from the engine's sides: BM25 paper scores ``paper_s``, passage hits
    ``ph`` of ``passages`` scaled by ``passage_scale`` as in fusion, the dense paper side's scores
    best first; the first pass's best 10 when the caller has them."""
    first = None if first10 is not None else first_scores(paper_s, ph, passage_scale)
    scores = None if ph is None else ph.passage_scores
    held = passages if ph is not None else None
    return profile(query, first, held, scores, dense_scores, first10)


def is_topic(
    config: QueryKindConfig,
    query: str,
    paper_s: np.ndarray | PaperPass | None,
    ph: Any = None,
    passages: Any = None,
    passage_scale: float = 1.0,
    dense_scores: np.ndarray | None = None,
    first10: tuple[np.ndarray, np.ndarray] | None = None,
) -> bool:
    """The engine's hook: whether ``query`` (its sides as for `query_profile`) is a topic whose first
    page may move."""
    if not config.enabled or paper_s is None:
        return False
    return topic_query(
        query_profile(query, paper_s, ph, passages, passage_scale, dense_scores, first10), config
    )
