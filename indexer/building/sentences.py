"""Every abstract's sentences and their analysed terms, made once at index build (``sentences/``).

A hit without a winning passage shows the abstract sentence sharing the most analysed query terms
(`openxiv.indexer.engine.evidence`). Deciding that per hit meant splitting the abstract into sentences
(`openxiv.corpus.text.split_sentences`) and running the index's analyzer over each one
(`openxiv.indexer.engine.sparse.analyze`): most of a page's evidence CPU, and all of it for abstracts no
earlier request had shown (BENCHMARKS.md, «Search service»). The build runs both once per paper
and writes, by paper row:

    sentences/sentences.json  {"rules": SENTENCE_RULES, "stemmer": ..., "papers": n, "sentences": s}
    sentences/sent_ptr.npy    int64, n + 1: row r's sentences are s in [sent_ptr[r], sent_ptr[r+1])
    sentences/bounds.npy      int32, (s, 2): sentence s is norm[start:end] of its paper's abstract
                              with white space normalised as `split_sentences` does
    sentences/term_ptr.npy    int64, s + 1: sentence s's distinct terms are terms[term_ptr[s]:...]
    sentences/terms.npy       int32 ids into vocab.json
    sentences/vocab.json      the analysed terms, by id

so a hit's sentence overlaps are a few array reads. The sentences are the same strings
`split_sentences` gives and the terms the same sets `evidence.sentence_terms` gives (the build takes
them from those functions), so the chosen evidence is the same. ``rules`` is a digest of their
source: a table made under other rules, or for another stemmer, is not used (and a snapshot built
before it existed computes per hit, as before). An optional part: the format version is unchanged.
"""

from __future__ import annotations

import inspect
import json
from array import array
from collections.abc import Callable, Iterable
from collections.abc import Set as AbstractSet
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.building.rowtable import RowTable, digest, mmap_array, read_info, write_info
from openxiv.indexer.building.terms import WordTerms

__all__ = ["INFO_FILE", "SENT_PTR_FILE", "SentenceTable", "rules", "write_sentences"]

INFO_FILE = "sentences.json"
SENT_PTR_FILE = "sent_ptr.npy"
BOUNDS_FILE = "bounds.npy"
TERM_PTR_FILE = "term_ptr.npy"
TERMS_FILE = "terms.npy"
VOCAB_FILE = "vocab.json"


@cache
def rules() -> str:
    """The version of the sentence and analyzer rules in this code: a digest of the sentence rules'
    source (`openxiv.corpus.text`), the analyzer's (`openxiv.indexer.engine.sparse.analyze`, its token
    pattern and stop words) and `openxiv.indexer.engine.evidence.sentence_terms`. Any edit there leaves
    earlier tables unused (never wrong) until the next build."""
    from openxiv.corpus import text
    from openxiv.indexer.engine import evidence, sparse

    source = "\n".join(
        [
            inspect.getsource(text),
            inspect.getsource(sparse.analyze),
            sparse._TOKEN.pattern,
            " ".join(sorted(sparse._STOPWORD_SET)),
            inspect.getsource(evidence.sentence_terms),
        ]
    )
    return digest(source)


class _Numbering(dict[str, int]):
    """Term -> id, a term first met getting the next id (``setdefault(term, len(vocab))``)."""

    def __missing__(self, term: str) -> int:
        self[term] = n = len(self)
        return n


def _normalised(abstract: str | None) -> str:
    """The text `openxiv.corpus.text.split_sentences` cuts its sentences from: its white space runs
    (``\\s+``, which is `str.isspace`) as one space, stripped. Written as split and join, a third of
    the regex's CPU; the build finds every sentence in it, so a difference could not pass unseen."""
    return " ".join((abstract or "").split())


def write_sentences(directory: Path, abstracts: Iterable[str | None], stemmer: str) -> dict[str, Any]:
    """Write the table of the papers' ``abstracts`` (in row order) into ``directory``; its
    ``sentences.json`` content. A sentence's terms are `openxiv.indexer.engine.evidence.sentence_terms`'s
    set, the analyzer asked once per distinct word (`openxiv.indexer.building.terms.WordTerms`)."""
    from openxiv.corpus.text import split_sentences

    words_of = WordTerms(stemmer).terms
    vocab = _Numbering()
    number = vocab.__getitem__
    sent_ptr, bounds, term_ptr, terms = array("q", [0]), array("i"), array("q", [0]), array("i")
    for abstract in abstracts:
        norm = _normalised(abstract)
        at = 0
        for piece in split_sentences(abstract or ""):
            start = norm.index(piece, at)  # the pieces are cut from ``norm``, in order
            at = start + len(piece)
            bounds.extend((start, at))
            # ids in the order of the sorted terms, not of the set (its order follows the hash seed)
            terms.extend(sorted(map(number, sorted(set(words_of(piece))))))
            term_ptr.append(len(terms))
        sent_ptr.append(len(bounds) // 2)
    directory.mkdir(parents=True, exist_ok=True)
    np.save(directory / SENT_PTR_FILE, np.frombuffer(sent_ptr, dtype=np.int64))
    np.save(directory / BOUNDS_FILE, np.frombuffer(bounds, dtype=np.int32).reshape(-1, 2))
    np.save(directory / TERM_PTR_FILE, np.frombuffer(term_ptr, dtype=np.int64))
    np.save(directory / TERMS_FILE, np.frombuffer(terms, dtype=np.int32))
    (directory / VOCAB_FILE).write_text(json.dumps(list(vocab), ensure_ascii=False), encoding="utf-8")
    info = {"rules": rules(), "stemmer": stemmer, "papers": len(sent_ptr) - 1, "sentences": len(bounds) // 2}
    return write_info(directory / INFO_FILE, info)


class SentenceTable(RowTable):
    """The stored sentences of one snapshot's abstracts, by paper row (`load` says whether usable)."""

    def __init__(self, directory: Path, row_of: Callable[[str], int | None]) -> None:
        super().__init__(row_of)
        self.sent_ptr = mmap_array(directory / SENT_PTR_FILE)
        self.bounds = mmap_array(directory / BOUNDS_FILE)
        self.term_ptr = mmap_array(directory / TERM_PTR_FILE)
        self.terms = mmap_array(directory / TERMS_FILE)
        words = json.loads((directory / VOCAB_FILE).read_text(encoding="utf-8"))
        self.vocab: dict[str, int] = {w: i for i, w in enumerate(words)}

    @classmethod
    def load(
        cls, directory: Path, n_papers: int, row_of: Callable[[str], int | None], stemmer: str
    ) -> SentenceTable | None:
        """The table in ``directory``, or ``None`` when there is none, it was made under other rules
        or for another stemmer, or it does not hold ``n_papers`` papers (evidence is then computed
        per hit)."""
        if (
            read_info(directory / INFO_FILE, {"rules": rules(), "stemmer": stemmer, "papers": n_papers})
            is None
        ):
            return None
        try:
            table = cls(directory, row_of)
        except (OSError, ValueError):
            return None
        if table.sent_ptr.shape != (n_papers + 1,):
            return None
        if table.bounds.shape != (int(table.sent_ptr[-1]), 2) or table.term_ptr.shape != (
            len(table.bounds) + 1,
        ):
            return None
        return table

    def wanted(self, terms: AbstractSet[str]) -> np.ndarray:
        """``terms`` (a query's analysed terms) as a mask over the table's vocabulary (terms no
        abstract holds are left out: no sentence has them); made once per page of hits."""
        mask = np.zeros(len(self.vocab), dtype=bool)
        mask[[self.vocab[t] for t in terms if t in self.vocab]] = True
        return mask

    def overlaps(
        self, arxiv_id: str, abstract: str | None, wanted: np.ndarray
    ) -> tuple[list[str], list[int]] | None:
        """The abstract's sentences (the strings `split_sentences` gives) and, for each, how many of
        the ``wanted`` terms (`wanted`) it holds; ``None`` when the paper is not in the table."""
        row = self.row_of(arxiv_id)
        if row is None:
            return None
        lo, hi = int(self.sent_ptr[row]), int(self.sent_ptr[row + 1])
        if lo == hi:
            return [], []
        norm = _normalised(abstract)
        sentences = [norm[a:b] for a, b in self.bounds[lo:hi].tolist()]
        ptr = self.term_ptr[lo : hi + 1] - self.term_ptr[lo]
        held = np.cumsum(wanted[self.terms[self.term_ptr[lo] : self.term_ptr[hi]]])
        counts = np.concatenate(([0], held))  # counts[k]: wanted terms among the first k
        return sentences, (counts[ptr[1:]] - counts[ptr[:-1]]).tolist()
