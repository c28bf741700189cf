"""The category prior (`openxiv.indexer.engine.prior`) on a small real BM25 snapshot."""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from small_index import make_db

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


def _new_style_plain_texts(shared: Any, tmp: Path, n: int) -> Path:
    """The first ``n`` plain-text full texts with a new-style arXiv id (no archive in the id, so no
    category at all), as one JSONL file: the lines are picked without parsing the texts."""
    out = tmp / "plaintext-new-style.jsonl"
    with gzip.open(shared.plaintext, "rt", encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            if re.search(r'"(?:arxiv_)?id":\s*"\d{4}\.\d{4,5}', line):
                dst.write(line)
                n -= 1
                if n == 0:
                    break
    return out


def test_a_paper_without_categories_gets_the_candidates_mean(shared: Any, tmp_path: Path) -> None:
    """Issue 37: most full texts read from plain text carry no category (a new-style id names no
    archive). ``zero`` gave them prior 0, which put every categorised candidate above them whatever
    its field; ``mean`` gives them the categorised candidates' mean prior instead."""
    from openxiv.corpus.readers import read_path
    from openxiv.indexer.building.corpusrows import meta_rows
    from openxiv.indexer.engine.meta import PaperMeta

    items = itertools.chain(
        itertools.islice(read_path(shared.listing("cs")), 40),
        read_path(_new_style_plain_texts(shared, tmp_path, 3)),
    )
    db = make_db(tmp_path / "corpus.sqlite", items)
    meta = PaperMeta.from_docs(meta_rows(db, 100))
    categories = PaperCategories(meta)
    bare = [r for r in range(meta.n) if not categories.of(r).size]
    known = [r for r in range(meta.n) if categories.of(r).size]
    assert len(bare) == 3 and len(known) == 40
    rows = np.array(known[:10] + bare + known[10:])
    shares = categories.shares(rows[:10])
    zero = categories.prior(rows, shares)
    mean = categories.prior(rows, shares, "mean")
    is_bare = np.isin(rows, bare)
    assert zero[is_bare].tolist() == [0.0] * 3 and zero[~is_bare].max() > 0
    assert mean[~is_bare].tolist() == zero[~is_bare].tolist()
    assert mean[is_bare].tolist() == pytest.approx([zero[~is_bare].mean()] * 3)
    # a list of uncategorised papers only has no mean to take: they keep 0
    assert categories.prior(np.array(bare), shares, "mean").tolist() == [0.0] * 3


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
        "uncategorised": Settings().prior_uncategorised,
    }
    assert PriorConfig.of(Settings()).enabled
    assert not PriorConfig.of(Settings(prior_weight=0)).enabled
    with pytest.raises((ConfigError, ValueError)):
        Settings(prior_docs=-1)
    with pytest.raises((ConfigError, ValueError)):
        Settings(prior_weight=-1.0)
