"""BM25 built from chunks of texts: the same matrix as `SparseIndex.build`, without holding the texts.

`SparseIndex.build` tokenizes every text at once (bm25s' token-id lists: a Python list per text)
and builds the matrix in one pass: memory grows with the corpus's texts and their token lists. The
streaming build (`StreamingBM25`) instead analyses one chunk of texts at a time with the index's own
analyzer (`openxiv.indexer.analyzer.analyze`, tested equal to ``bm25s.tokenize``; asked once per
distinct word, `openxiv.indexer.building.terms`), numbers the terms as they appear, and writes the chunk's (term, row, tf) postings to a spill file; the texts and
token lists are dropped at once. `StreamingBM25.finish` then knows every term's document frequency
and every row's length, numbers the terms in sorted order (as `_number_terms_in_order` does for the
in-memory build) and scatters each chunk's postings into the final CSC arrays, computing each weight
with the same floating-point operations, in the same order, as `VectorisedBM25`. So the saved files
are the same bytes as the in-memory build's (tested), and the build holds at once:

- the final matrix (4 B of weight + 4 B of row per (term, row) posting): what the index is;
- the vocabulary (a dict of the distinct terms), their document frequencies, one length per row;
- one chunk of texts and its postings.

Spill files live in a directory the caller gives (inside the temporary snapshot) and are removed by
`finish`.
"""

from __future__ import annotations

import shutil
from array import array
from collections.abc import Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from openxiv.indexer.building.terms import TermIds, WordTerms
from openxiv.indexer.engine.sparse import SparseIndex, VectorisedBM25, empty_model

__all__ = ["StreamingBM25"]


class StreamingBM25:
    """Add texts chunk by chunk (`add`), then `finish` into a `SparseIndex` equal to `SparseIndex.build`."""

    def __init__(
        self, spill_dir: Path, *, k1: float = 1.2, b: float = 0.75, stemmer: str = "english"
    ) -> None:
        self.k1, self.b, self.stemmer = k1, b, stemmer
        self.spill_dir = spill_dir
        spill_dir.mkdir(parents=True, exist_ok=True)
        self.vocab: dict[str, int] = {}
        """Term -> id in order of first appearance (renumbered in sorted order by `finish`)."""
        self.term_ids = TermIds(WordTerms(stemmer), self.vocab)
        """Each word's term id, the analyzer asked once per distinct word (`openxiv.indexer.building.terms`)."""
        self.df = np.zeros(0, dtype=np.int64)
        self.lengths = array("q")
        """Tokens per row (stop words removed, repeats kept): bm25s' document length."""
        self.chunks: list[tuple[Path, int, int]] = []
        """Spill file, first row and number of rows of each chunk."""

    @property
    def n_docs(self) -> int:
        return len(self.lengths)

    def add(self, texts: Sequence[str]) -> None:
        """Analyse ``texts`` (the next rows, in order) and spill their postings."""
        if not texts:
            return
        start, n = self.n_docs, len(texts)
        ids = list(map(self.term_ids.ids, texts))
        counts = np.fromiter(map(len, ids), dtype=np.int64, count=n)
        flat = np.fromiter(chain.from_iterable(ids), dtype=np.int64, count=int(counts.sum()))
        del ids
        vocab = self.vocab
        self.lengths.extend(counts.tolist())
        local = np.repeat(np.arange(n, dtype=np.int64), counts)
        keys, tf = np.unique(flat * n + local, return_counts=True)
        tok = keys // n
        if self.df.size < len(vocab):
            self.df = np.concatenate([self.df, np.zeros(len(vocab) - self.df.size, np.int64)])
        self.df += np.bincount(tok, minlength=self.df.size)
        path = self.spill_dir / f"chunk{len(self.chunks):06d}.npy"
        np.save(path, np.stack([tok, keys % n, tf]).astype(np.int32))
        self.chunks.append((path, start, n))

    def finish(self) -> SparseIndex:
        """The index of every text added (the spill files are removed)."""
        model = VectorisedBM25(k1=self.k1, b=self.b, backend="numpy")
        n_docs = self.n_docs
        if n_docs == 0:
            empty_model(model)
            shutil.rmtree(self.spill_dir, ignore_errors=True)
            return SparseIndex(model, self.stemmer)
        words = sorted(self.vocab)
        n_vocab = len(words)
        old = np.fromiter((self.vocab[w] for w in words), dtype=np.int64, count=n_vocab)
        new_of_old = np.empty(n_vocab, dtype=np.int64)
        new_of_old[old] = np.arange(n_vocab)
        df = self.df[old]
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        # the weights exactly as VectorisedBM25.build_index_from_ids computes them (same dtypes, same order)
        idf = np.zeros(n_vocab, dtype=model.dtype)
        seen = df > 0
        idf[seen] = np.log(1 + (n_docs - df[seen] + 0.5) / (df[seen] + 0.5))
        lengths = np.frombuffer(self.lengths, dtype=np.int64)
        avg = lengths.mean()
        nnz = int(indptr[-1])
        data = np.empty(nnz, dtype=model.dtype)
        indices = np.empty(nnz, dtype=model.int_dtype)
        cursor = indptr[:-1].copy()
        for path, start, n in self.chunks:
            tok_old, local, tf = np.load(path).astype(np.int64)
            tok = new_of_old[tok_old]
            order = np.argsort(tok * n + local, kind="stable")
            tok, row, tf = tok[order], local[order] + start, tf[order]
            first = np.searchsorted(tok, tok, side="left")
            pos = cursor[tok] + (np.arange(tok.size) - first)
            cursor += np.bincount(tok, minlength=n_vocab)
            tf32 = tf.astype(model.dtype)
            tfc = tf32 / (self.k1 * ((1 - self.b) + self.b * lengths[row] / avg) + tf32)
            data[pos] = (idf[tok] * tfc).astype(model.dtype)
            indices[pos] = row
            path.unlink()
        shutil.rmtree(self.spill_dir, ignore_errors=True)
        model.nonoccurrence_array = None
        model.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n_docs}
        # bm25s adds its empty token after the matrix's columns (`bm25s.BM25.index`)
        model.vocab_dict = {w: i for i, w in enumerate(words)} | (
            {"": n_vocab} if "" not in self.vocab else {}
        )
        model.unique_token_ids_set = set(model.vocab_dict.values())
        return SparseIndex(model, self.stemmer)
