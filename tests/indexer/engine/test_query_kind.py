"""The query-kind rule (`openxiv.indexer.engine.query_kind`) on a small real BM25 snapshot with full texts."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.engine.query_kind import QueryKindConfig, QueryProfile, is_topic, topic_query

TOPIC = "large language model reasoning"
ON = {"kind_ratio": 1.3, "kind_coverage": 0.6, "kind_max_words": 12, "kind_dense": 0.0}
"""The rule without its dense signal: the small snapshot is BM25 only."""


def _profile(backend: Any, text: str) -> QueryProfile:
    """The engine's own profile of ``text`` (what ``scripts/bench_query_kind.py`` measures by)."""
    profiled: QueryProfile = backend.query_profile(text)
    return profiled


def _exact_query(sparse_index: Any) -> str:
    """A sentence-long piece of one full text's passage (an ``exact`` known item's form)."""
    backend = sparse_index.backend
    for row, arxiv_id in enumerate(backend.meta.arxiv_ids.tolist()):
        passages = sparse_index.store.passages(str(arxiv_id))
        if len(passages) >= 3 and backend.passages.has_passages(np.array([row]))[0]:
            return " ".join(passages[1].text.split()[:24])
    raise AssertionError("the small index has full texts")


def test_rule_is_on_by_default_and_off_at_ratio_zero() -> None:
    topic = QueryProfile(words=3, ratio=1.0, coverage=0.0, dense=0.7)
    assert topic_query(topic, QueryKindConfig.of(Settings()))
    assert not topic_query(topic, QueryKindConfig.of(Settings(kind_ratio=0.0)))


def test_unset_thresholds_are_the_encoders_own_and_a_setting_wins() -> None:
    """``kind_max_words`` / ``kind_dense`` belong to the encoder: unset, an encoder's description
    gives them (the shipped one's ``query_kind``), an encoder naming none gets those chosen for the
    released MiniLM, and a setting overrides either."""
    unset = Settings()
    assert unset.kind_max_words is None and unset.kind_dense is None
    assert QueryKindConfig.of(unset, None) == QueryKindConfig(2.0, 0.8, 12, 0.65)
    assert QueryKindConfig.of(unset, {"max_words": 16, "dense": 0.55}) == QueryKindConfig(2.0, 0.8, 16, 0.55)
    set_ = Settings(kind_max_words=9, kind_dense=0.7)
    assert QueryKindConfig.of(set_, {"max_words": 16, "dense": 0.55}) == QueryKindConfig(2.0, 0.8, 9, 0.7)
    # a 14-word topic-like profile at a 10th cosine of 0.6: a topic for the shipped encoder only
    profile_ = QueryProfile(words=14, ratio=1.0, coverage=0.0, dense=0.6)
    assert topic_query(profile_, QueryKindConfig.of(unset, {"max_words": 16, "dense": 0.55}))
    assert not topic_query(profile_, QueryKindConfig.of(unset, None))


def test_an_index_without_paper_vectors_calls_no_query_a_topic(sparse_index: Any) -> None:
    backend = sparse_index.backend
    paper_s = backend.bm25_papers.masked_scores(TOPIC, None)
    ph = backend.passages.search(TOPIC, 1000, None)
    config = QueryKindConfig.of(Settings())
    assert not is_topic(config, TOPIC, paper_s, ph, backend.passages, backend.passage_scale, None)
    plain = backend.tuned(kind_ratio=0.0)
    assert [h.arxiv_id for h in backend.search(TOPIC, top_k=20).hits] == [
        h.arxiv_id for h in plain.search(TOPIC, top_k=20).hits
    ]


def test_rule_needs_every_signal() -> None:
    cfg = QueryKindConfig(ratio=1.3, coverage=0.6, max_words=12, dense=0.65)
    assert topic_query(QueryProfile(4, 1.1, 0.2, 0.7), cfg)
    assert not topic_query(QueryProfile(4, 1.5, 0.2, 0.7), cfg)  # one score stands out: a lookup
    assert not topic_query(QueryProfile(4, 1.1, 0.8, 0.7), cfg)  # one passage holds its words
    assert not topic_query(QueryProfile(30, 1.1, 0.2, 0.7), cfg)  # a sentence
    assert not topic_query(QueryProfile(4, 1.1, 0.2, 0.5), cfg)  # no subject: nearest papers far


def test_a_known_item_sentence_is_no_topic(sparse_index: Any) -> None:
    backend = sparse_index.backend
    exact = _profile(backend, _exact_query(sparse_index))
    assert exact.coverage >= 0.6 or exact.ratio >= 1.3
    cfg = QueryKindConfig.of(Settings(**ON))
    assert not topic_query(exact, cfg)
    topic = _profile(backend, TOPIC)
    assert topic.words == 4 and topic.coverage < 1.0
    paper_s = backend.bm25_papers.masked_scores(TOPIC, None)
    ph = backend.passages.search(TOPIC, 1000, None)
    assert is_topic(cfg, TOPIC, paper_s, ph, backend.passages, backend.passage_scale) == topic_query(
        topic, cfg
    )


def test_a_topic_first_page_moves_and_a_known_item_keeps_its_own(sparse_index: Any) -> None:
    """With the rule on, a topic query's first 10 take feedback and the prior (as with no head
    kept); a known-item sentence ranks exactly as with the rule off."""
    base = sparse_index.backend
    off = base.tuned()
    on = base.tuned(**ON)
    unkept = base.tuned(prf_gate=0.0, prf_coverage=10.0, prior_head=0)
    if not topic_query(_profile(base, TOPIC), QueryKindConfig.of(on.settings)):
        pytest.skip("the topic probe is not a topic on this small snapshot")

    def ids(b: Any, q: str) -> list[str]:
        return [h.arxiv_id for h in b.search(q, top_k=20).hits]

    assert ids(on, TOPIC) == ids(unkept, TOPIC)
    exact = _exact_query(sparse_index)
    assert ids(on, exact) == ids(off, exact)
