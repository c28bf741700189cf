"""The coverage-bias measure of bench_quality / bench_calibration (issue 37, scripts/harness/coverage.py),
on the real test index: "papers that contain every query word" is exactly the papers whose stored text
(title, abstract, full-text sections) holds each word, recomputed here from the corpus through the
store's public reads; and the bias of a ranking is its first page's full-text share over that base."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest
from live_index import BuiltIndex

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from harness.coverage import (  # noqa: E402
    MIN_MATCHING,
    ShortQuery,
    coverage_bias,
    full_text_mask,
    index_match,
    query_words,
    text_match,
)

from openxiv.indexer.snapshot import open_index  # noqa: E402

QUERIES = (
    "diffusion models",
    "object detection",
    "large language model agents",
    "RL agents",
    "magnetic fields",
)


def test_query_words_drop_a_plural_s_and_keep_short_words() -> None:
    assert query_words("Large Language Model Agents") == ["large", "language", "model", "agent"]
    assert query_words("RL in Multi-Agent Systems") == ["rl", "in", "multi", "agent", "system"]
    assert query_words("Gas clouds") == ["gas", "cloud"]  # "gas" is too short to lose its "s"


@pytest.fixture(scope="module")
def opened(test_index: BuiltIndex):  # type: ignore[no-untyped-def]
    o = open_index(test_index.root, test_index.settings)
    yield o
    o.close()


def _holds(text: str, word: str) -> bool:
    return (word in text) if len(word) > 3 else re.search(rf"\b{re.escape(word)}\b", text) is not None


def test_every_word_is_the_papers_stored_text(opened) -> None:  # type: ignore[no-untyped-def]
    match = text_match(opened, QUERIES)
    store, meta = opened.store, opened.backend.meta
    texts: dict[int, str] = {}
    for paper in store.iter_papers():
        row = meta.row_of(paper.arxiv_id)
        body = " ".join(s.text or "" for s in store.sections(paper.arxiv_id))
        texts[row] = f"{paper.title or ''}\n{paper.abstract or ''}\n{body}".lower()
    full = full_text_mask(opened.backend)
    for q in QUERIES:
        want = np.array([all(_holds(texts.get(r, ""), w) for w in query_words(q)) for r in range(meta.n)])
        got = match.mask(q)
        assert np.array_equal(got, want), q
    # the queries reach both kinds of paper: the measure has something to compare
    every = match.mask("magnetic fields") | match.mask("diffusion models")
    assert full[every].any() and (~full[every]).any()


def test_the_opening_is_the_abstract_or_the_first_passage(opened) -> None:  # type: ignore[no-untyped-def]
    """The opening reading: the title + abstract, or for a paper without abstract the title + its
    first passage; a subset of the issue's reading, and for a full text a strict one."""
    match = text_match(opened, QUERIES)
    store, meta = opened.store, opened.backend.meta
    openings: dict[int, str] = {}
    first: dict[str, str] = {}
    for p in store.iter_passages():
        first.setdefault(p.arxiv_id, p.text)
    for paper in store.iter_papers():
        lead = paper.abstract or first.get(paper.arxiv_id, "")
        openings[meta.row_of(paper.arxiv_id)] = f"{paper.title or ''}\n{lead}".lower()
    full = full_text_mask(opened.backend)
    narrower = 0
    for q in QUERIES:
        want = np.array([all(_holds(openings.get(r, ""), w) for w in query_words(q)) for r in range(meta.n)])
        got = match.mask(q, opening=True)
        assert np.array_equal(got, want), q
        assert not (got & ~match.mask(q)).any()
        narrower += int((match.mask(q) & ~got & full).sum())
    assert narrower > 0  # full texts that hold the words only past their opening


def test_short_words_match_whole_words_only(opened) -> None:  # type: ignore[no-untyped-def]
    match = text_match(opened, ["RL agents", "world agents"])
    # every text holding "world" holds the letters "rl"; "RL" as a word is much rarer
    assert match.mask("RL agents").sum() < match.mask("world agents").sum()


def test_bias_is_the_first_pages_full_text_share_over_the_base(opened) -> None:  # type: ignore[no-untyped-def]
    backend = opened.backend
    queries = [ShortQuery(q, frozenset()) for q in ("magnetic fields", "diffusion models")]
    match = text_match(opened, [q.query for q in queries])
    full = match.full
    measured = [q for q in queries if match.mask(q.query).sum() >= MIN_MATCHING]
    assert measured, "no test query has enough matching papers"
    # a ranking of full texts alone (passages) fills its first page with full texts: share 1
    only_full = coverage_bias(backend, measured, match, mode="bm25_passages")
    assert only_full["top_share"] == 1.0
    base = np.mean([full[match.mask(q.query)].mean() for q in measured])
    assert only_full["base_share"] == pytest.approx(base)
    assert only_full["ratio"] == pytest.approx(1.0 / base)
    # and a ranking of paper texts: its first page's share is what its hits say
    papers = coverage_bias(backend, measured, match, mode="bm25_papers")
    for row, q in zip(papers["rows"], measured, strict=True):
        hits = backend.search(q.query, top_k=10, mode="bm25_papers").hits
        assert row["top"] == pytest.approx(np.mean([full[backend.meta.row_of(h.arxiv_id)] for h in hits]))
        # the index's looser match counts at least the papers whose title + abstract hold the words
        assert row["index_base"] is None or 0.0 <= row["index_base"] <= 1.0
    assert index_match(backend, "magnetic fields").sum() > 0
