"""Find in one paper: its units (full-text passages, or abstract sentences) ranked for a query, and
the query's words marked in a unit's text, with the index's own analyzer.

Scoring is BM25 (k1 1.2, b 0.75, the Lucene idf ``ln(1 + (N - df + .5) / (df + .5))``) over the
paper's own units: a word that occurs in every passage of this paper tells nothing about *where* in
it to look, however rare it is in the corpus, so the statistics are the paper's. Terms are the
snapshot's analyzer's (`openxiv.indexer.analyzer.analyze`: the same words, stop words and
stemmer the search ranked with), so "learning-rate schedule" finds "the learning rate is scheduled".
Order: score, then position in the paper (earliest first); units sharing no term are left out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from openxiv.indexer.analyzer import STOPWORD_SET, TOKEN, analyze, stemmer_for

__all__ = ["UnitScore", "mark", "rank_units"]

K1 = 1.2
B = 0.75
MARK = "**"
"""Markdown bold around each query word in a marked text."""


@dataclass(frozen=True)
class UnitScore:
    position: int
    """Index of the unit in the list given."""
    score: float
    terms: frozenset[str]
    """The query's analyzed terms the unit holds."""


def rank_units(query_terms: AbstractSet[str], units: Sequence[str], stemmer: str) -> list[UnitScore]:
    """The units holding at least one of ``query_terms`` (analyzed terms), best first."""
    if not query_terms or not units:
        return []
    docs = analyze(list(units), stemmer)
    n = len(docs)
    avgdl = max(sum(len(d) for d in docs) / n, 1.0)
    df = Counter(t for d in docs for t in set(d) if t in query_terms)
    idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
    out = []
    for i, doc in enumerate(docs):
        tf = Counter(t for t in doc if t in query_terms)
        if not tf:
            continue
        norm = K1 * (1 - B + B * len(doc) / avgdl)
        score = sum(idf[t] * f * (K1 + 1) / (f + norm) for t, f in tf.items())
        out.append(UnitScore(i, score, frozenset(tf)))
    out.sort(key=lambda u: (-u.score, u.position))
    return out


def mark(text: str, query_terms: AbstractSet[str], stemmer: str) -> tuple[str, list[str]]:
    """``text`` with every word whose analyzed term is a query term wrapped in `MARK`, and those
    words (lower-case, first occurrence order)."""
    stem = stemmer_for(stemmer).stemWord
    found: dict[str, None] = {}

    def one(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in STOPWORD_SET or stem(low) not in query_terms:
            return word
        found[low] = None
        return f"{MARK}{word}{MARK}"

    return TOKEN.sub(one, text), list(found)
