"""The abstracts' sentences and their analysed terms stored in a snapshot (``sentences/``), as serving
reads them (`SentenceTable`).

The build (`openxiv.indexer.building.sentences`) splits every abstract into sentences
(`openxiv.corpus.text.split_sentences`) and analyses each one, and writes, by paper row:

    sentences/sentences.json  {"rules": rules(), "stemmer": ..., "papers": n, "sentences": s}
    sentences/sent_ptr.npy    int64, n + 1: row r's sentences are s in [sent_ptr[r], sent_ptr[r+1])
    sentences/bounds.npy      int32, (s, 2): sentence s is norm[start:end] of its paper's abstract
                              with white space normalised as `split_sentences` does (`normalised`)
    sentences/term_ptr.npy    int64, s + 1: sentence s's distinct terms are terms[term_ptr[s]:...]
    sentences/terms.npy       int32 ids into vocab.json
    sentences/vocab.json      the analysed terms, by id

so a hit's sentence overlaps are a few array reads. ``rules`` is a digest of the rules' source: a
table made under other rules, or for another stemmer, is not used (and a snapshot built before it
existed computes per hit, as before).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from functools import cache
from pathlib import Path

import numpy as np

from openxiv.indexer.tables.rowtable import RowTable, digest, mmap_array, read_info

__all__ = [
    "BOUNDS_FILE",
    "INFO_FILE",
    "SENT_PTR_FILE",
    "TERMS_FILE",
    "TERM_PTR_FILE",
    "VOCAB_FILE",
    "SentenceTable",
    "normalised",
    "rules",
]

INFO_FILE = "sentences.json"
SENT_PTR_FILE = "sent_ptr.npy"
BOUNDS_FILE = "bounds.npy"
TERM_PTR_FILE = "term_ptr.npy"
TERMS_FILE = "terms.npy"
VOCAB_FILE = "vocab.json"


@cache
def rules() -> str:
    """The version of the sentence and analyzer rules in this code: a digest of the sentence rules'
    source (`openxiv.corpus.text`), the analyzer's (`openxiv.indexer.analyzer.analyze`, its token
    pattern and stop words) and `openxiv.indexer.engine.evidence.sentence_terms`. Any edit there leaves
    earlier tables unused (never wrong) until the next build."""
    from openxiv.corpus import text
    from openxiv.indexer import analyzer
    from openxiv.indexer.engine import evidence

    source = "\n".join(
        [
            inspect.getsource(text),
            inspect.getsource(analyzer.analyze),
            analyzer.TOKEN.pattern,
            " ".join(sorted(analyzer.STOPWORD_SET)),
            inspect.getsource(evidence.sentence_terms),
        ]
    )
    return digest(source)


def normalised(abstract: str | None) -> str:
    """The text `openxiv.corpus.text.split_sentences` cuts its sentences from: its white space runs
    (``\\s+``, which is `str.isspace`) as one space, stripped. Written as split and join, a third of
    the regex's CPU; the build finds every sentence in it, so a difference could not pass unseen."""
    return " ".join((abstract or "").split())


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
        norm = normalised(abstract)
        sentences = [norm[a:b] for a, b in self.bounds[lo:hi].tolist()]
        ptr = self.term_ptr[lo : hi + 1] - self.term_ptr[lo]
        held = np.cumsum(wanted[self.terms[self.term_ptr[lo] : self.term_ptr[hi]]])
        counts = np.concatenate(([0], held))  # counts[k]: wanted terms among the first k
        return sentences, (counts[ptr[1:]] - counts[ptr[:-1]]).tolist()
