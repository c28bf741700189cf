"""The category prior (`openxiv.indexer.engine.prior`) on a small real BM25 snapshot."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.engine.prior import PaperCategories, PriorConfig, category_prior

TOPIC = "large language model reasoning"


@pytest.fixture(scope="module")
def categories(sparse_index: Any) -> PaperCategories:
    return PaperCategories(sparse_index.backend.meta)


def test_per_paper_view_inverts_the_category_postings(sparse_index: Any, categories: PaperCategories) -> None:
    meta = sparse_index.backend.meta
    want: list[set[int]] = [set() for _ in range(meta.n)]
    for c in range(len(meta.categories)):
        for row in meta.cat_rows[meta.cat_ptr[c] : meta.cat_ptr[c + 1]].tolist():
            want[row].add(c)
    assert [set(categories.of(r).tolist()) for r in range(meta.n)] == want
    assert sum(map(len, want)) > meta.n // 2  # the small corpus has categories to read


def test_shares_weight_the_predicting_papers_by_rank(categories: PaperCategories) -> None:
    rows = np.array([r for r in range(len(categories.ptr) - 1) if categories.of(r).size][:3])
    shares = categories.shares(rows)
    norm = 1 + 1 / 2 + 1 / 3
    for c in np.flatnonzero(shares):
        held = [i for i, r in enumerate(rows.tolist()) if c in categories.of(r)]
        assert shares[c] == pytest.approx(sum(1 / (i + 1) for i in held) / norm)
    # a paper's prior is the summed share of its categories, at most 1; none without categories
    prior = categories.prior(rows, shares)
    assert prior.tolist() == pytest.approx([min(1.0, shares[categories.of(r)].sum()) for r in rows.tolist()])
    bare = [r for r in range(len(categories.ptr) - 1) if not categories.of(r).size]
    if bare:
        assert categories.prior(np.array(bare[:1]), shares).tolist() == [0.0]


def test_prior_reorders_below_the_head_only(sparse_index: Any, categories: PaperCategories) -> None:
    backend = sparse_index.backend.tuned(prior_docs=0, prf_docs=0)
    plain = backend.search(TOPIC, top_k=100, mode="weighted")
    meta = backend.meta
    rows = np.array([meta.row_of(h.arxiv_id) for h in plain.hits], dtype=np.int64)
    scores = np.array([h.score for h in plain.hits])
    config = PriorConfig(docs=50, weight=2.0, head=10)
    got_rows, got_scores = category_prior(categories, rows, scores, config)
    assert got_rows[:10].tolist() == rows[:10].tolist()
    assert sorted(got_rows.tolist()) == sorted(rows.tolist())
    assert got_rows.tolist() != rows.tolist()
    assert (np.diff(got_scores) <= 0).all()
    # below the head, a paper moves up only when its category is predicted more strongly
    shares = categories.shares(rows[:50])
    prior = dict(zip(rows.tolist(), categories.prior(rows, shares).tolist(), strict=True))
    before = {r: i for i, r in enumerate(rows.tolist())}
    tail = got_rows[10:].tolist()
    for a, b in itertools.pairwise(tail):
        if before[a] > before[b]:  # a overtook b
            assert prior[a] > prior[b]
    # off, or a list no longer than the head: nothing moves
    off = category_prior(categories, rows, scores, PriorConfig(docs=0))
    assert off[0].tolist() == rows.tolist()
    assert category_prior(categories, rows[:10], scores[:10], config)[0].tolist() == rows[:10].tolist()


def _ids(result: Any) -> list[str]:
    return [h.arxiv_id for h in result.hits]


def test_backend_prior_keeps_matches_head_and_order(sparse_index: Any) -> None:
    """On by default: the same papers match (total_count) and come back when paged to the end, the
    first 10 places are those without the prior, a title still finds its paper first, the order
    is the same on every run, and one family alone (a diagnostic mode) is left as it is."""
    on = sparse_index.backend.tuned()
    off = on.tuned(prior_docs=0)
    a = off.search(TOPIC, top_k=500, mode="weighted")
    b = on.search(TOPIC, top_k=500, mode="weighted")
    assert a.total_count == b.total_count == len(b.hits) > 30
    assert set(_ids(a)) == set(_ids(b)) and _ids(b)[:10] == _ids(a)[:10] and _ids(b) != _ids(a)
    assert all(x.score >= y.score for x, y in itertools.pairwise(b.hits))
    again = on.search(TOPIC, top_k=500, mode="weighted")
    assert [(h.arxiv_id, h.score) for h in again.hits] == [(h.arxiv_id, h.score) for h in b.hits]
    assert _ids(on.search(TOPIC, top_k=20, offset=40, mode="weighted")) == _ids(b)[40:60]
    assert _ids(on.search(TOPIC, top_k=100, mode="bm25")) == _ids(off.search(TOPIC, top_k=100, mode="bm25"))
    titles = {str(x): sparse_index.store.get_paper(str(x)).title for x in on.meta.arxiv_ids[:40:4]}
    assert {t: _ids(on.search(t, top_k=1)) for t in titles.values()} == {t: [i] for i, t in titles.items()}


def test_prior_is_reported_and_its_settings_checked(sparse_index: Any) -> None:
    backend = sparse_index.backend.tuned()
    assert backend.info()["ranking"]["prior"] == {
        "docs": Settings().prior_docs,
        "weight": Settings().prior_weight,
        "head": Settings().prior_head,
    }
    assert PriorConfig.of(Settings()).enabled
    assert not PriorConfig.of(Settings(prior_weight=0)).enabled
    with pytest.raises((ConfigError, ValueError)):
        Settings(prior_docs=-1)
    with pytest.raises((ConfigError, ValueError)):
        Settings(prior_weight=-1.0)
