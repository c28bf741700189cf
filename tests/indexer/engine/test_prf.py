"""Pseudo-relevance feedback (`openxiv.indexer.engine.prf`) on a small real BM25 snapshot."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.engine.doc_terms import DocTerms
from openxiv.indexer.engine.prf import (
    FeedbackConfig,
    confident,
    expand,
    feedback_list,
    keep_head,
    passage_coverage,
    rescore,
)


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


def test_feedback_scores_are_the_expanded_sums_over_the_matched_papers_to_the_bit(
    papers: Any, doc_terms: DocTerms
) -> None:
    """Each matched paper's feedback score is its expanded query's terms added in their order in
    float32, bit for bit; a paper the (filtered) first pass does not match scores exactly 0."""
    config = FeedbackConfig(docs=10, terms=30)
    keep = np.random.default_rng(5).random(papers.n_docs) < 0.3  # a filter keeping about a third
    for query in ("robot manipulation policies", "galaxy cluster mass", "the of and learning"):
        for scores in (papers.scores(papers.query_tokens(query)), papers.masked_scores(query, keep)):
            terms, weights = expand(doc_terms, scores, config)
            want = np.zeros(papers.n_docs, dtype=np.float32)
            for t, w in zip(terms.tolist(), weights.astype(np.float32), strict=True):
                lo, hi = papers.indptr[t], papers.indptr[t + 1]
                want[papers.indices[lo:hi]] += w * papers.data[lo:hi]
            want[scores <= 0] = 0.0
            got = rescore(doc_terms, scores, config)
            assert got.tobytes() == want.tobytes()
            assert np.count_nonzero(got) == np.count_nonzero(scores)


def test_confident_first_pass_is_told_by_the_score_ratio(papers: Any, sparse_index: Any) -> None:
    """A paper's own title singles it out (best score far above the 10th); a topic query's scores are flat."""
    title = sparse_index.store.get_paper(str(papers_ids(sparse_index)[7])).title
    exact = papers.scores(papers.query_tokens(title))
    topic = papers.scores(papers.query_tokens("large language model reasoning"))
    assert confident(exact, 1.5) and not confident(topic, 1.5)
    assert confident(topic, 1.0)  # ratio <= 1: every query keeps its head
    assert not confident(exact, 0.0)  # 0: the test is off
    rows, _ = feedback_list(DocTerms(papers), topic, FeedbackConfig(docs=10, terms=20), 50)
    assert rows.size == 50


def _full_text_paper(sparse_index: Any) -> tuple[int, list[Any]]:
    backend = sparse_index.backend
    for row, arxiv_id in enumerate(backend.meta.arxiv_ids.tolist()):
        passages = sparse_index.store.passages(str(arxiv_id))
        if len(passages) >= 3 and backend.passages.has_passages(np.array([row]))[0]:
            return row, passages
    raise AssertionError("the small index has full texts")


def test_passage_coverage_is_the_share_of_query_words_in_the_best_passage(sparse_index: Any) -> None:
    """Checked against the passage's own words: a bag of one passage's words is covered whole, the
    same bag with words that passage lacks is covered in proportion."""
    backend = sparse_index.backend
    passages = backend.passages
    row, texts = _full_text_paper(sparse_index)
    sparse = passages.sparse
    for view in texts[:3]:
        own = np.unique(sparse.query_tokens(view.text))
        vocab = {v: k for k, v in sparse.vocab.items()}
        bag = " ".join(vocab[int(t)] for t in own[:: max(1, own.size // 8)][:8])
        hits = passages.search(bag, 10)
        assert passage_coverage(passages, row, hits.passage_scores, bag) == 1.0, bag
        foreign = [w for w in ("telescope", "galaxy", "spectroscopy", "redshift") if w in sparse.vocab]
        foreign = [w for w in foreign if sparse.vocab[w] not in set(own.tolist())][:2]
        mixed = bag + " " + " ".join(foreign)
        hits = passages.search(mixed, 10)
        best = int(passages.ptr[row]) + int(
            np.argmax(hits.passage_scores[passages.ptr[row] : passages.ptr[row + 1]])
        )
        tokens = np.unique(sparse.query_tokens(mixed))
        held = {
            int(t)
            for t in tokens
            if best in set(sparse.indices[sparse.indptr[t] : sparse.indptr[t + 1]].tolist())
        }
        want = len(held) / tokens.size
        assert passage_coverage(passages, row, hits.passage_scores, mixed) == pytest.approx(want)
    assert passage_coverage(passages, row, passages.search("zzzzqx", 5).passage_scores, "zzzzqx") == 0.0
    no_text = next(r for r in range(backend.meta.n) if not passages.has_passages(np.array([r]))[0])
    assert (
        passage_coverage(passages, no_text, np.zeros(passages.n_passages, np.float32), texts[0].text) == 0.0
    )


def test_keep_head_puts_the_plain_head_on_the_fed_tail() -> None:
    plain = (np.array([5, 4, 3, 2, 1]), np.array([0.9, 0.8, 0.7, 0.6, 0.5]))
    fed = (np.array([1, 2, 5, 6, 3, 4]), np.array([1.0, 0.95, 0.9, 0.5, 0.4, 0.3]))
    rows, scores = keep_head(plain, fed, 2)
    assert rows.tolist() == [5, 4, 1, 2, 6, 3]
    assert (np.diff(scores) <= 0).all()
    assert scores[2:].tolist() == pytest.approx([1.0, 0.95, 0.5, 0.4])
    # the kept rows stay strictly above the tail and keep their order by score: lifting both to
    # the tail's best score made a tie that the arxiv_id tie-break then contradicted (test_snapshot)
    assert scores[0] > scores[1] > scores[2]
    assert keep_head(plain, fed, 0)[0].tolist() == fed[0].tolist()


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
    assert backend.info()["ranking"]["feedback"] == {
        "docs": 10,
        "terms": 20,
        "weight": 0.3,
        "gate": 1.0,
        "coverage": 0.6,
        "head": 10,
    }
    assert not backend.tuned(prf_docs=0).feedback.enabled


def test_a_known_item_query_keeps_its_head_and_gets_feedback_below(sparse_index: Any) -> None:
    """A bag of one passage's words (the keyword known items of issue 14) is confident by coverage
    even with the score-ratio test off: its first places are those of the ranking without feedback,
    and feedback still reorders the places below (before, a confident query got no feedback at all
    and an unconfident one could lose its known item to the feedback list)."""
    plain = sparse_index.backend.tuned(prf_docs=0)
    fed = sparse_index.backend.tuned(prf_docs=10, prf_terms=20, prf_weight=1.0, prf_gate=0.0, prf_head=5)
    sparse = plain.passages.sparse
    vocab = {v: k for k, v in sparse.vocab.items()}
    _, texts = _full_text_paper(sparse_index)
    own = np.unique(sparse.query_tokens(texts[1].text))
    by_df = own[np.argsort(-np.diff(sparse.indptr)[own], kind="stable")]
    bag = " ".join(vocab[int(t)] for t in [*by_df[:4], *by_df[-4:]])  # shared words and its own rare ones
    a = plain.search(bag, top_k=40, mode="weighted")
    b = fed.search(bag, top_k=40, mode="weighted")
    assert a.total_count == b.total_count > 10
    assert [h.arxiv_id for h in b.hits[:5]] == [h.arxiv_id for h in a.hits[:5]]
    assert [h.arxiv_id for h in b.hits[5:]] != [h.arxiv_id for h in a.hits[5:]]
    assert all(x.score >= y.score for x, y in zip(b.hits, b.hits[1:], strict=False))
    assert any(h.signals.get("bm25_feedback_rank") for h in b.hits[5:])
    # the same query with the coverage test off too is not confident: feedback may reorder the head
    loose = fed.tuned(prf_coverage=2.0)
    assert [h.arxiv_id for h in loose.search(bag, top_k=40, mode="weighted").hits] != [
        h.arxiv_id for h in b.hits
    ]


def test_feedback_settings_are_checked() -> None:
    with pytest.raises((ConfigError, ValueError)):
        Settings(prf_docs=-1)
    with pytest.raises((ConfigError, ValueError)):
        Settings(prf_weight=-0.5)


def test_bench_quality_feedback_cost_runs_on_a_real_snapshot(sparse_index: Any) -> None:
    """`scripts/bench_quality.py --feedback-cost` times `feedback_list` as the backend calls it: it
    called it with the pre-refactor signature (one argument too many) and raised TypeError."""
    from pathlib import Path

    from small_index import load_script

    module = load_script("bench_quality")
    root = Path(sparse_index.path).parents[1]
    line = module.feedback_cost(root, Settings(data_dir=root.parent, embed="none"))
    assert line.startswith("Feedback cost: transpose") and "per topic query p50" in line


def test_the_feedback_term_copy_is_made_when_the_index_opens(sparse_index: Any) -> None:
    """At millions of papers the per-paper copy of the BM25 matrix takes seconds (23 s at 2.7M): made on
    the first request, it spent the first requests' time budget and they failed with 503 (issue 24,
    docs/scale.md «Measured at 2.7M papers»). It is made when the index opens, and only when feedback
    is on."""
    from openxiv.indexer.snapshot import open_index

    root = sparse_index.backend.path
    with open_index(root, Settings(data_dir=root.parent)) as ix:
        assert "bm25_papers" in ix.backend._doc_terms
    with open_index(root, Settings(data_dir=root.parent, prf_docs=0)) as ix:
        assert not ix.backend._doc_terms
