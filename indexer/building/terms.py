"""The index's analyzer run over a whole corpus at build time: each distinct word analysed once.

`openxiv.indexer.analyzer.analyze` turns a text into the terms BM25 sees: its regex words,
lower-case, stop words removed, each stemmed by PyStemmer. Over a build it ran once per paper, per
passage and per abstract sentence, and filtering and stemming word by word in Python was the largest
cost of the ``bm25_*`` and ``sentences`` stages (BENCHMARKS.md, «Streaming build: stage speed»).
A word's term depends on the word alone (a stop word has none; the stem of a word is the same
wherever it stands), so a build asks it once per distinct word: `WordTerms` maps a lower-case word
to its term (``None``: a stop word), and a text's terms are its regex words mapped through that
table by C-level ``map`` and ``filter``, the same list ``analyze`` gives (tested equal on real
texts). `TermIds` numbers the terms on the way (a BM25 chunk's postings need ids, not strings).

Both tables are bounded: at `LIMIT` words a table is emptied and refilled as words come back (the
ids live in the caller's vocabulary, not in the table), so memory does not grow with a corpus's
long tail of numbers and misspellings.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from operator import is_not
from typing import cast

from openxiv.indexer.analyzer import STOPWORD_SET, TOKEN, stemmer_for

__all__ = ["LIMIT", "TermIds", "WordTerms"]

LIMIT = 1 << 19
"""Distinct words a table holds before it is emptied (its memory: docs/scale.md, «The streaming build»)."""

_kept: Callable[[object], bool] = partial(is_not, None)
"""Not ``None`` (a stop word's entry), as a C-level predicate for ``filter``."""


class WordTerms(dict[str, str | None]):
    """Lower-case word -> its term under ``stemmer`` (``None``: a stop word), filled as words come."""

    def __init__(self, stemmer: str, limit: int = LIMIT) -> None:
        super().__init__()
        self._stem = stemmer_for(stemmer).stemWord
        self.limit = limit

    def __missing__(self, word: str) -> str | None:
        if len(self) >= self.limit:
            self.clear()
        term = None if word in STOPWORD_SET else self._stem(word)
        self[word] = term
        return term

    def terms(self, text: str) -> list[str]:
        """``analyze([text], stemmer)[0]``: the terms of ``text`` in order, repeats kept."""
        return cast(list[str], list(filter(_kept, map(self.__getitem__, TOKEN.findall(text.lower())))))


class TermIds(dict[str, int | None]):
    """Lower-case word -> the id of its term in ``vocab`` (``None``: a stop word); a term first met
    gets the next id, ``len(vocab)``, as ``vocab.setdefault(term, len(vocab))`` gives it."""

    def __init__(self, words: WordTerms, vocab: dict[str, int], limit: int = LIMIT) -> None:
        super().__init__()
        self.words = words
        self.vocab = vocab
        self.limit = limit

    def __missing__(self, word: str) -> int | None:
        if len(self) >= self.limit:
            self.clear()
        term = self.words[word]
        tid = None if term is None else self.vocab.setdefault(term, len(self.vocab))
        self[word] = tid
        return tid

    def ids(self, text: str) -> list[int]:
        """The term ids of ``text``'s terms (`WordTerms.terms`), in order, repeats kept."""
        return cast(list[int], list(filter(_kept, map(self.__getitem__, TOKEN.findall(text.lower())))))
