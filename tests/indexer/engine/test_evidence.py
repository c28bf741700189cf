"""Evidence is chosen in the indexer with the index's own analyzer (real BM25 snapshot of shared data)."""

from __future__ import annotations

from typing import Any

import numpy as np

from openxiv.corpus.text import split_sentences
from openxiv.indexer import layout
from openxiv.indexer.analyzer import analyze
from openxiv.indexer.engine import evidence
from openxiv.indexer.manifest import Manifest
from openxiv.service.hydration import sentence_with_context

TEXT = (
    "Deep networks are hard to train and this sentence is long enough to stand on its own in a tldr. "
    "Batch normalization reduces internal covariate shift in deep networks considerably. "
    "Unrelated closing sentence about nothing in particular that is also rather long to read."
)


def test_best_sentence_prefers_query_terms_then_earliest() -> None:
    """Moved from tests/service/test_text.py (best_sentences), now against the indexer's choice."""
    sentences = split_sentences(TEXT)
    assert sentence_with_context(sentences, evidence.best_sentence("internal covariate shift", sentences))
    assert evidence.best_sentence("internal covariate shift", sentences) == 1
    assert evidence.best_sentence("zzz unknown", sentences) == 0
    assert evidence.best_sentence("the of and", sentences) == 0  # only stop words: the first sentence
    assert evidence.best_sentence("anything", []) is None


def test_best_sentence_matches_words_as_bm25_does() -> None:
    """Inflected query words match by their stems, as in the ranking (the service's old word matcher,
    ``[a-z0-9]+`` without stemming, found nothing here and showed the first sentence)."""
    sentences = split_sentences(TEXT)
    assert evidence.best_sentence("shifting covariates", sentences) == 1
    assert set(analyze(["shifting covariates"], "english")[0]) <= set(analyze([sentences[1]], "english")[0])


def test_analyzed_sentences_are_kept_per_abstract_and_per_stemmer() -> None:
    """The cache of analyzed sentences gives what analyzing them again gives, keyed by the stemmer
    too (a snapshot built with another language must not get English stems)."""
    sentences = tuple(split_sentences(TEXT))
    evidence.sentence_terms.cache_clear()
    cold = evidence.sentence_terms(sentences, "english")
    assert cold == tuple(frozenset(w) for w in analyze(sentences, "english"))
    assert evidence.sentence_terms(sentences, "english") is cold  # kept, not analyzed again
    assert evidence.sentence_terms.cache_info().hits == 1
    assert evidence.sentence_terms(sentences, "german") == tuple(
        frozenset(w) for w in analyze(sentences, "german")
    )
    assert evidence.best_sentence("internal covariate shift", list(sentences)) == 1  # warm: the same answer


def test_choose_order_passage_then_abstract_then_title() -> None:
    sentences = split_sentences(TEXT)
    assert evidence.choose("q", passage_id=7, abstract_sentences=sentences, title="T") == evidence.Choice(
        "passage", passage_id=7
    )
    assert evidence.choose("covariate", passage_id=None, abstract_sentences=sentences, title="T") == (
        evidence.Choice("abstract", sentence=1)
    )
    assert evidence.choose("q", passage_id=None, abstract_sentences=[], title="T") == evidence.Choice("title")
    assert evidence.choose("q", passage_id=None, abstract_sentences=[], title=None) is None


def test_stemmer_comes_from_the_manifest(sparse_index: Any) -> None:
    assert evidence.stemmer_of(sparse_index.manifest) == "english"
    assert evidence.stemmer_of(Manifest(format_version=layout.FORMAT_VERSION)) == evidence.DEFAULT_STEMMER


def test_no_passage_is_evidence_when_none_holds_a_query_term(sparse_index: Any) -> None:
    """`best_passage` used to return a paper's first passage when nothing matched: a passage shown
    as evidence by position only."""
    passages = sparse_index.backend.passages
    row = int(np.flatnonzero(passages.has_passages(np.arange(passages.n_papers)))[0])
    nothing = np.zeros(passages.n_passages, dtype=np.float32)
    assert passages.best_passage(row, nothing) is None
    some = nothing.copy()
    hi = int(passages.ptr[row + 1])
    some[hi - 1] = 1.5
    assert passages.best_passage(row, some) == int(passages.passage_ids[hi - 1])


def test_every_passage_evidence_holds_a_query_term(sparse_index: Any) -> None:
    """Through the backend: a hit's passage shares an analyzed term with the query, whatever side found it."""
    store, backend = sparse_index.store, sparse_index.backend
    for query in ("attention mechanism for translation", "galaxy rotation curves", "graph neural networks"):
        for mode in ("bm25_papers", None):
            hits = backend.search(query, top_k=50, mode=mode).hits
            pids = [h.passage_id for h in hits if h.passage_id is not None]
            terms = set(analyze([query], "english")[0])
            for pid, p in store.get_passages(pids).items():
                assert terms & set(analyze([p.text], "english")[0]), (query, mode, pid)


def test_analyze_is_the_build_tokenizer(sparse_index: Any) -> None:
    """`analyze` (written out for speed) gives exactly the terms `bm25s.tokenize` gives at build time."""
    import bm25s
    import Stemmer

    from openxiv.indexer.analyzer import STOPWORDS

    texts = [f"{d.title}. {d.abstract}" for d in list(sparse_index.store.iter_papers())[::3]]
    texts += ["", "the of and", "Über naïve 3D x y2 e.g. C++ state-of-the-art", "ΛCDM H₀ tension"]
    built = bm25s.tokenize(
        texts, stopwords=STOPWORDS, stemmer=Stemmer.Stemmer("english"), return_ids=False, show_progress=False
    )
    assert analyze(texts, "english") == [list(words) for words in built]
    assert sparse_index.backend.bm25_papers.query_tokens("the of and").size == 0
