"""Every abstract's sentences and their analysed terms, made once at index build (``sentences/``).

A hit without a winning passage shows the abstract sentence sharing the most analysed query terms
(`openxiv.indexer.engine.evidence`). Deciding that per hit meant splitting the abstract into sentences
(`openxiv.corpus.text.split_sentences`) and running the index's analyzer over each one
(`openxiv.indexer.analyzer.analyze`): most of a page's evidence CPU, and all of it for abstracts no
earlier request had shown (BENCHMARKS.md, «Search service»). The build runs both once per paper
and writes, by paper row, the arrays `openxiv.indexer.tables.sentences` describes (the reader, its
file names and its rules version live there, so serving never imports the build), so a hit's
sentence overlaps are a few array reads. The sentences are the same strings `split_sentences` gives
and the terms the same sets `evidence.sentence_terms` gives (the build takes them from those
functions), so the chosen evidence is the same. An optional part: the format version is unchanged.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.building.terms import WordTerms
from openxiv.indexer.tables.rowtable import write_info
from openxiv.indexer.tables.sentences import (
    BOUNDS_FILE,
    INFO_FILE,
    SENT_PTR_FILE,
    TERM_PTR_FILE,
    TERMS_FILE,
    VOCAB_FILE,
    normalised,
    rules,
)

__all__ = ["write_sentences"]


class _Numbering(dict[str, int]):
    """Term -> id, a term first met getting the next id (``setdefault(term, len(vocab))``)."""

    def __missing__(self, term: str) -> int:
        self[term] = n = len(self)
        return n


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
        norm = normalised(abstract)
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
