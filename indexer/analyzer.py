"""The index's analyzer, public: the words, stop words and stems BM25 sees, for every side that needs them.

The sparse indexes (`openxiv.indexer.engine.sparse`) build and query with it, the evidence and
highlighting of a hit (`openxiv.indexer.engine.evidence`, `openxiv.indexer.engine.within`, the web
page's marks) pick the query's terms with it, and the build asks it once per distinct word
(`openxiv.indexer.building.terms`). One definition, so a query term and an indexed term are the same
string wherever they are made.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import Stemmer
from bm25s.tokenization import _infer_stopwords

__all__ = ["STOPWORDS", "STOPWORD_SET", "TOKEN", "analyze", "stemmer_for"]

STOPWORDS = "en"
_local = threading.local()


def stemmer_for(language: str) -> Stemmer.Stemmer:
    """One PyStemmer object per thread and language (PyStemmer objects are not thread-safe)."""
    cache = getattr(_local, "stemmers", None)
    if cache is None:
        cache = _local.stemmers = {}
    if language not in cache:
        cache[language] = Stemmer.Stemmer(language)
    return cache[language]


TOKEN = re.compile(r"(?u)\b\w\w+\b")
"""bm25s' default ``token_pattern`` (words of two or more word characters)."""
STOPWORD_SET = frozenset(_infer_stopwords(STOPWORDS))
"""bm25s' English stop words (`STOPWORDS`), lower-case."""


def analyze(texts: Sequence[str], stemmer: str) -> list[list[str]]:
    """The index's analyzer: each text as the terms BM25 sees, exactly as ``bm25s.tokenize`` makes
    them at build time (its regex words, lower-case, `STOPWORDS` removed, then stemmed in
    ``stemmer``'s language; tested equal on real texts). Queries and evidence both use it; written
    out because ``bm25s.tokenize``'s per-call set-up is too slow to run per search hit
    (docs/indexing.md, «Evidence»)."""
    stem = stemmer_for(stemmer).stemWords
    return [stem([w for w in TOKEN.findall(text.lower()) if w not in STOPWORD_SET]) for text in texts]
