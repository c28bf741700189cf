"""Pseudo-relevance feedback (`openxiv.indexer.prf`) on a small real BM25 snapshot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openxiv.corpus.config import ConfigError, Settings
from openxiv.indexer.prf import DocTerms, FeedbackConfig, confident, expand, feedback_list, rescore


@pytest.fixture(scope="module")
def papers(sparse_index: Any) -> Any:
    return sparse_index.backend.bm25_papers


@pytest.fixture(scope="module")
def doc_terms(papers: Any) -> DocTerms:
    return DocTerms(papers)


def test_doc_terms_is_the_bm25_matrix_by_rows(papers: Any, doc_terms: DocTerms) -> None:
    """Every (paper, term, weight) of the row view is an entry of the BM25 column matrix, and back."""
    by_column = {
        (int(d), t, float(w))
        for t in range(papers.indptr.size - 1)
        for d, w in zip(
            papers.indices[papers.indptr[t] : papers.indptr[t + 1]],
            papers.data[papers.indptr[t] : papers.indptr[t + 1]],
            strict=True,
        )
    }
    by_row = {
        (d, int(t), float(w))
        for d in range(papers.n_docs)
        for t, w in zip(
            doc_terms.terms[doc_terms.ptr[d] : doc_terms.ptr[d + 1]],
            doc_terms.weights[doc_terms.ptr[d] : doc_terms.ptr[d + 1]],
            strict=True,
        )
    }
    assert len(by_row) == papers.data.size > 1000
    assert by_row == by_column


def test_expansion_comes_from_the_feedback_papers(papers: Any, doc_terms: DocTerms) -> None:
    scores = papers.scores(papers.query_tokens("image segmentation"))
    config = FeedbackConfig(docs=5, terms=15)
    terms, weights = expand(doc_terms, scores, config)
    assert terms.size == 15 and weights.sum() == pytest.approx(1.0)
    assert (np.diff(weights) <= 0).all()  # best first
    top = np.argsort(-scores, kind="stable")[:5]
    words_of_top = {int(t) for d in top for t in doc_terms.terms[doc_terms.ptr[d] : doc_terms.ptr[d + 1]]}
    assert set(terms.tolist()) <= words_of_top
    # a query word is among the most characteristic words of its best papers
    assert set(papers.query_tokens("image segmentation").tolist()) & set(terms.tolist())


def test_feedback_reorders_but_never_adds_matches(papers: Any, doc_terms: DocTerms) -> None:
    scores = papers.scores(papers.query_tokens("robot manipulation policies"))
    fb = rescore(doc_terms, scores, FeedbackConfig(docs=10, terms=30))
    assert ((fb > 0) == (scores > 0)).all()
    assert np.argsort(-fb, kind="stable")[:20].tolist() != np.argsort(-scores, kind="stable")[:20].tolist()
    none = papers.scores(papers.query_tokens("zzzzqx"))
    assert rescore(doc_terms, none, FeedbackConfig(docs=10)).sum() == 0


def test_confident_first_pass_gets_no_feedback(papers: Any, doc_terms: DocTerms, sparse_index: Any) -> None:
    """A paper's own title singles it out (best score far above the 10th): no feedback list; a topic
    query's flat scores get one."""
    title = sparse_index.store.get_paper(str(papers_ids(sparse_index)[7])).title
    exact = papers.scores(papers.query_tokens(title))
    topic = papers.scores(papers.query_tokens("large language model reasoning"))
    config = FeedbackConfig(docs=10, terms=20, gate=1.5)
    assert confident(exact, 1.5) and not confident(topic, 1.5)
    assert feedback_list(doc_terms, exact, exact, config, 50) is None
    rows, _ = feedback_list(doc_terms, topic, topic, config, 50)  # type: ignore[misc]
    assert rows.size == 50
    assert not confident(exact, 1.0)  # gate <= 1: always feedback


def papers_ids(sparse_index: Any) -> np.ndarray:
    return sparse_index.backend.meta.arxiv_ids


def test_backend_with_feedback_keeps_counts_titles_and_order(sparse_index: Any) -> None:
    """Feedback on: the same papers match (total_count), a paper's own title still finds it first,
    and a topic query's list changes."""
    plain = sparse_index.backend
    fed = plain.tuned(prf_docs=10, prf_terms=20, prf_weight=1.0, prf_gate=0.0)
    query = "large language model reasoning"
    a = plain.search(query, top_k=30, mode="weighted")
    b = fed.search(query, top_k=30, mode="weighted")
    assert a.total_count == b.total_count > 30
    assert [h.arxiv_id for h in a.hits] != [h.arxiv_id for h in b.hits]
    assert [h.arxiv_id for h in fed.search(query, top_k=30, mode="weighted").hits] == [
        h.arxiv_id for h in b.hits
    ]
    assert any(h.signals.get("bm25_feedback_rank") for h in b.hits)
    # one family alone is a diagnostic: feedback does not change it
    assert [h.arxiv_id for h in fed.search(query, top_k=30, mode="bm25").hits] == [
        h.arxiv_id for h in plain.search(query, top_k=30, mode="bm25").hits
    ]
    store = sparse_index.store
    for arxiv_id in [str(x) for x in plain.meta.arxiv_ids[:40:4]]:
        title = store.get_paper(arxiv_id).title
        assert fed.search(title, top_k=1).hits[0].arxiv_id == arxiv_id, title


def test_feedback_is_on_by_default_and_reported(sparse_index: Any) -> None:
    backend = sparse_index.backend.tuned()  # built-in defaults (the fixture's Settings set no prf_*)
    assert backend.feedback.enabled and backend.feedback == FeedbackConfig.of(Settings())
    assert backend.info()["ranking"]["feedback"] == {"docs": 10, "terms": 20, "weight": 0.3, "gate": 1.4}
    assert not backend.tuned(prf_docs=0).feedback.enabled


def test_feedback_settings_are_checked() -> None:
    with pytest.raises((ConfigError, ValueError)):
        Settings(prf_docs=-1)
    with pytest.raises((ConfigError, ValueError)):
        Settings(prf_weight=-0.5)
