"""Evidence: which text shows *why* a paper matched a query, decided with the index's own analyzer.

The text beside a hit is chosen here, in the indexer, because the indexer owns the tokenizer the
ranking used (`openxiv.indexer.analyzer.analyze`: bm25s' regex words, lower-case, English stop words,
the snapshot's PyStemmer language). In order:

1. **passage**: the passage that won a passage side of the ranking (``PaperHit.passage_id``): the
   best BM25 passage, the nearest passage vector, or, for a paper found by another side, its best
   passage by BM25 when that score is above 0 (a paper none of whose passages holds a query term
   gets no passage);
2. **abstract**: the abstract sentence sharing the most distinct analyzed query terms (earliest on
   ties; the first sentence when none shares a term);
3. **title**: when the paper has neither.

The service only fetches and formats the chosen text (sentence splitting and length are
presentation, `openxiv.service.text`; the sentence rules are `openxiv.corpus.text`).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from openxiv.indexer.analyzer import analyze
from openxiv.indexer.manifest import Manifest

__all__ = ["Choice", "best_sentence", "choose", "query_terms", "sentence_terms", "stemmer_of"]

DEFAULT_STEMMER = "english"


@dataclass(frozen=True)
class Choice:
    source: Literal["passage", "abstract", "title"]
    passage_id: int | None = None
    """The corpus passage (``source == "passage"``)."""
    sentence: int | None = None
    """Position of the chosen sentence in the abstract's sentences (``source == "abstract"``)."""


def stemmer_of(manifest: Manifest) -> str:
    """The stemmer language the snapshot's BM25 indexes were built with (its manifest says)."""
    tokenizer = manifest.bm25.tokenizer if manifest.bm25 is not None else {}
    return str(tokenizer.get("stemmer") or DEFAULT_STEMMER)


def query_terms(query: str, stemmer: str = DEFAULT_STEMMER) -> frozenset[str]:
    """The distinct analyzed terms of ``query``: computed once per request and passed to `choose`
    for every hit, instead of analyzing the query again beside each abstract."""
    return frozenset(analyze([query], stemmer)[0])


def best_sentence(
    query: str,
    sentences: Sequence[str],
    stemmer: str = DEFAULT_STEMMER,
    *,
    terms: AbstractSet[str] | None = None,
    overlap: Sequence[int] | None = None,
) -> int | None:
    """Position of the sentence sharing the most distinct analyzed query terms (earliest on ties).
    ``terms``: the query's `query_terms`, when the caller has them already; ``overlap``: how many
    of them each sentence holds, when the snapshot stored its analysed sentences
    (`openxiv.indexer.tables.sentences`)."""
    if not sentences:
        return None
    if terms is None:
        terms = query_terms(query, stemmer)
    if not terms:
        return 0
    if overlap is None:
        overlap = [len(terms & words) for words in sentence_terms(tuple(sentences), stemmer)]
    return max(range(len(sentences)), key=lambda i: (overlap[i], -i))


SENTENCE_CACHE = 4096
"""Abstracts whose analyzed sentences `sentence_terms` keeps (a few kilobytes each)."""


@lru_cache(maxsize=SENTENCE_CACHE)
def sentence_terms(sentences: tuple[str, ...], stemmer: str = DEFAULT_STEMMER) -> tuple[frozenset[str], ...]:
    """The distinct analyzed terms of each sentence, kept for the `SENTENCE_CACHE` abstracts used
    last: analysing an abstract's sentences was most of a hit's evidence time, and the same papers
    come back across an agent's queries (bounded, so memory does not grow with the corpus)."""
    return tuple(frozenset(words) for words in analyze(sentences, stemmer))


def choose(
    query: str,
    *,
    passage_id: int | None,
    abstract_sentences: Sequence[str],
    title: str | None,
    stemmer: str = DEFAULT_STEMMER,
    terms: AbstractSet[str] | None = None,
    overlap: Sequence[int] | None = None,
) -> Choice | None:
    """The evidence for one hit (see the module docstring); ``None`` when the paper has no text.
    ``terms``: the query's `query_terms`, computed once for a page of hits; ``overlap``: as for
    `best_sentence`."""
    if passage_id is not None:
        return Choice("passage", passage_id=passage_id)
    best = best_sentence(query, abstract_sentences, stemmer, terms=terms, overlap=overlap)
    if best is not None:
        return Choice("abstract", sentence=best)
    if title:
        return Choice("title")
    return None
