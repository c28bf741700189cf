"""BM25 (bm25s) over paper texts and over full-text passages, with filters applied before the cut.

`SparseIndex` is one bm25s matrix (documents × vocabulary, precomputed BM25 weights, CSC) plus a
query tokenizer that is exactly the one used at build time (bm25s' regex words, lowercase, English
stopwords, PyStemmer stems). A query's scores over all rows are one sparse column sum, done by a
small numba kernel over the matrix arrays (memory-mapped after `load`); a filter is a boolean mask
over rows applied to that score vector *before* the top-k is selected, so a filtered query still
fills its k. Ties are broken by row number, and rows are stored in arxiv_id order, so equal scores
come out by ascending arxiv_id.

`PassageIndex` is a `SparseIndex` whose rows are passages, each owned by a paper row. Its search
collapses passages to papers (a paper's score is its best passage's score) and returns, per paper,
the passage that won: that passage is the evidence shown to the agent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import bm25s
import numba
import numpy as np

from openxiv.indexer.analyzer import STOPWORDS, analyze, stemmer_for
from openxiv.indexer.engine.maxscore import term_maxima
from openxiv.indexer.engine.topk import top_k_rows

__all__ = ["TERM_MAX", "PassageHits", "PassageIndex", "SparseIndex", "VectorisedBM25"]

TERM_MAX = "term_max.npy"
"""Each term's largest BM25 weight (float32 by term id), the bound exact top-k pruning takes
(`openxiv.indexer.engine.maxscore`); written by the build, absent from snapshots built before it."""


@numba.njit(nogil=True)
def _accumulate(data, indptr, indices, token_ids, out):  # pragma: no cover - compiled
    for t in token_ids:
        for j in range(indptr[t], indptr[t + 1]):
            out[indices[j]] += data[j]


class VectorisedBM25(bm25s.BM25):
    """bm25s' BM25 with its index build done by whole-array numpy operations.

    bm25s builds the matrix with two Python passes over the documents (~5k docs/s here); this
    override computes the same Lucene/Robertson weights (``idf = ln(1 + (N - df + .5)/(df + .5))``,
    ``tfc = tf / (tf + k1 (1 - b + b·|d|/avgdl))``) with ``np.unique`` over (token, doc) keys. The
    result is the same CSC matrix (tested against bm25s' own build); other methods use bm25s' code.
    """

    def build_index_from_ids(
        self,
        unique_token_ids: list[int],
        corpus_token_ids: list[list[int]],
        show_progress: bool = True,
        leave_progress: bool = False,
    ) -> dict[str, object]:
        if self.method not in ("lucene", "robertson") or self.idf_method not in ("lucene", "robertson"):
            return super().build_index_from_ids(
                unique_token_ids, corpus_token_ids, show_progress, leave_progress
            )
        self.nonoccurrence_array = None
        n_docs, n_vocab = len(corpus_token_ids), len(unique_token_ids)
        lengths = np.fromiter((len(d) for d in corpus_token_ids), dtype=np.int64, count=n_docs)
        flat = np.fromiter((t for d in corpus_token_ids for t in d), dtype=np.int64, count=int(lengths.sum()))
        docs = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        keys, tf = np.unique(flat * n_docs + docs, return_counts=True)  # sorted by (token, doc)
        del flat, docs
        tok, row = keys // n_docs, keys % n_docs
        df = np.bincount(tok, minlength=n_vocab)
        idf = np.zeros(n_vocab, dtype=self.dtype)
        seen = df > 0
        idf[seen] = np.log(1 + (n_docs - df[seen] + 0.5) / (df[seen] + 0.5))
        avg = lengths.mean()
        tf32 = tf.astype(self.dtype)
        tfc = tf32 / (self.k1 * ((1 - self.b) + self.b * lengths[row] / avg) + tf32)
        indptr = np.zeros(n_vocab + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return {
            "data": (idf[tok] * tfc).astype(self.dtype),
            "indices": row.astype(self.int_dtype),
            "indptr": indptr,
            "num_docs": n_docs,
        }


def empty_model(model: bm25s.BM25) -> bm25s.BM25:
    """``model`` as the index of no documents (bm25s cannot index an empty corpus)."""
    model.scores = {
        "data": np.zeros(0, np.float32),
        "indices": np.zeros(0, np.int32),
        "indptr": np.zeros(1, np.int32),
        "num_docs": 0,
    }
    model.vocab_dict = {}
    return model


def _number_terms_in_order(model: bm25s.BM25) -> None:
    """Renumber ``model``'s terms in sorted order, moving the matrix's columns with them.

    bm25s numbers the vocabulary in the order of a Python set, which follows the process's string
    hash seed: two builds of one corpus gave different term ids, so ties between terms (feedback's
    expansion terms) broke differently and a rebuilt snapshot could answer with scores a few
    thousandths apart. Sorted ids make the build the same bytes in every process. A term bm25s
    numbers past the matrix's columns (its empty token ``""``) keeps its place after them.
    """
    indptr = np.asarray(model.scores["indptr"])
    n_cols = indptr.size - 1
    vocab = model.vocab_dict
    words = sorted(w for w, i in vocab.items() if i < n_cols)
    extra = sorted((i, w) for w, i in vocab.items() if i >= n_cols)
    old = np.fromiter((vocab[w] for w in words), dtype=np.int64, count=len(words))
    counts = np.diff(indptr)[old]
    new_ptr = np.zeros(n_cols + 1, dtype=indptr.dtype)
    np.cumsum(counts, out=new_ptr[1:])
    take = np.repeat(indptr[old] - new_ptr[:-1], counts) + np.arange(int(new_ptr[-1]))
    model.scores = {
        **model.scores,
        "data": np.asarray(model.scores["data"])[take],
        "indices": np.asarray(model.scores["indices"])[take],
        "indptr": new_ptr,
    }
    model.vocab_dict = {w: i for i, w in enumerate(words)} | {w: i for i, w in extra}
    model.unique_token_ids_set = set(model.vocab_dict.values())


class SparseIndex:
    """A bm25s index over ``n_docs`` texts (row i = text i)."""

    def __init__(self, model: bm25s.BM25, stemmer: str) -> None:
        self.model = model
        self.stemmer_name = stemmer
        self.data = np.asarray(model.scores["data"])
        self.indices = np.asarray(model.scores["indices"])
        self.indptr = np.asarray(model.scores["indptr"])
        self.n_docs = int(model.scores["num_docs"])
        self.vocab: dict[str, int] = model.vocab_dict
        self.term_max: np.ndarray | None = None
        """Each term's largest weight (`TERM_MAX`); ``None`` (a snapshot built before it): every
        query scores every posting, until `ensure_term_max` computes it."""

    def ensure_term_max(self) -> np.ndarray:
        """`term_max`, computed from the matrix when the snapshot has none (one pass over its weights)."""
        if self.term_max is None:
            self.term_max = term_maxima(self.data, self.indptr)
        return self.term_max

    # --- building ------------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        stemmer: str = "english",
        progress: bool = False,
    ) -> SparseIndex:
        tokens = bm25s.tokenize(
            list(texts), stopwords=STOPWORDS, stemmer=stemmer_for(stemmer), show_progress=progress
        )
        model = VectorisedBM25(k1=k1, b=b, backend="numpy")
        if len(texts) == 0:
            empty_model(model)
        else:
            model.index(tokens, show_progress=progress)
            _number_terms_in_order(model)
        index = cls(model, stemmer)
        index.ensure_term_max()
        return index

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.model.save(str(directory), show_progress=False)
        np.save(directory / TERM_MAX, self.ensure_term_max())
        (directory / "tokenizer.json").write_text(
            json.dumps({"stemmer": self.stemmer_name, "stopwords": STOPWORDS}), encoding="utf-8"
        )

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> SparseIndex:
        tok = json.loads((directory / "tokenizer.json").read_text(encoding="utf-8"))
        model = bm25s.BM25.load(str(directory), mmap=mmap, show_progress=False, backend="numpy")
        index = cls(model, tok["stemmer"])
        if (directory / TERM_MAX).is_file():
            index.term_max = np.load(directory / TERM_MAX, mmap_mode="r" if mmap else None)
        return index

    @property
    def params(self) -> dict[str, object]:
        return {
            "k1": self.model.k1,
            "b": self.model.b,
            "method": self.model.method,
            "stemmer": self.stemmer_name,
            "stopwords": STOPWORDS,
            "vocab": len(self.vocab),
            "docs": self.n_docs,
        }

    # --- querying ------------------------------------------------------------------------------
    def query_tokens(self, query: str) -> np.ndarray:
        """Vocabulary ids of the query's tokens (unknown words dropped; repeats kept, as bm25s does)."""
        words = analyze([query], self.stemmer_name)[0]
        ids = [self.vocab[w] for w in words if w in self.vocab]
        return np.asarray(ids, dtype=np.int64)

    def scores(self, token_ids: np.ndarray) -> np.ndarray:
        """BM25 score of every row for the query (float32, length ``n_docs``)."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        if token_ids.size and self.n_docs:
            _accumulate(self.data, self.indptr, self.indices, token_ids, out)
        return out

    def masked_scores(self, query: str, allowed: np.ndarray | None = None) -> np.ndarray:
        """Every row's score for ``query``, 0 outside ``allowed``: rows > 0 are the filtered matches."""
        s = self.scores(self.query_tokens(query))
        if allowed is not None:
            np.multiply(s, allowed, out=s)  # 0 outside; a pass, not a gather of the masked rows
        return s

    def search(self, query: str, k: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top ``k`` rows (and scores) among ``allowed`` rows (boolean mask), best first."""
        return top_k_rows(self.masked_scores(query, allowed), k)


@dataclass(frozen=True)
class PassageHits:
    papers: np.ndarray
    """Paper rows, best first."""
    scores: np.ndarray
    """Best passage score per paper."""
    passage_ids: np.ndarray
    """Corpus passage id of the winning passage per paper."""
    passage_scores: np.ndarray
    """The query's score for every passage row (for evidence of papers found by other sides)."""
    paper_scores: np.ndarray
    """Best allowed passage score of every paper row (0: no passage of the paper matches)."""


@numba.njit(nogil=True)
def _best_per_paper(scores, paper_row, out):  # pragma: no cover - compiled
    """``out[p]``: the best positive score of paper ``p``'s passages (``out`` starts at 0). One pass
    over the passage scores with a max and no branch: a test per passage of whether it matched was
    mispredicted about as often as not and made the pass several times slower."""
    for i in range(scores.shape[0]):
        p = paper_row[i]
        v = scores[i]
        o = out[p]
        out[p] = v if v > o else o


@numba.njit(nogil=True)
def _first_best(scores, ptr, rows, passage_ids, out):  # pragma: no cover - compiled
    """``out[j]``: the id of the first passage of paper ``rows[j]`` with its best score."""
    for j in range(rows.shape[0]):
        lo, hi = ptr[rows[j]], ptr[rows[j] + 1]
        best = lo
        for i in range(lo + 1, hi):
            if scores[i] > scores[best]:
                best = i
        out[j] = passage_ids[best]


class PassageIndex:
    """BM25 over passages; rows sorted by owning paper row, so each paper's passages are contiguous."""

    def __init__(self, sparse: SparseIndex, paper_row: np.ndarray, passage_ids: np.ndarray, n_papers: int):
        if paper_row.size and np.any(np.diff(paper_row) < 0):
            raise ValueError("passages must be ordered by paper row")
        self.sparse = sparse
        self.paper_row = paper_row
        self.passage_ids = passage_ids
        self.n_papers = n_papers
        self.ptr = np.searchsorted(paper_row, np.arange(n_papers + 1)).astype(np.int64)
        """Passage rows of paper p: ``ptr[p]:ptr[p+1]``."""

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        paper_row: np.ndarray,
        passage_ids: np.ndarray,
        n_papers: int,
        **kw: object,
    ) -> PassageIndex:
        sparse = SparseIndex.build(texts, **kw)  # type: ignore[arg-type]
        return cls(sparse, np.asarray(paper_row, np.int32), np.asarray(passage_ids, np.int64), n_papers)

    def save(self, directory: Path) -> None:
        self.sparse.save(directory)
        np.save(directory / "passage_paper_row.npy", self.paper_row)
        np.save(directory / "passage_ids.npy", self.passage_ids)
        (directory / "passages.json").write_text(json.dumps({"n_papers": self.n_papers}), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path, *, mmap: bool = True) -> PassageIndex:
        mode: Literal["r"] | None = "r" if mmap else None
        meta = json.loads((directory / "passages.json").read_text(encoding="utf-8"))
        return cls(
            SparseIndex.load(directory, mmap=mmap),
            np.load(directory / "passage_paper_row.npy", mmap_mode=mode),
            np.load(directory / "passage_ids.npy", mmap_mode=mode),
            int(meta["n_papers"]),
        )

    @property
    def n_passages(self) -> int:
        return int(self.paper_row.size)

    def has_passages(self, paper_rows: np.ndarray) -> np.ndarray:
        return self.ptr[paper_rows + 1] > self.ptr[paper_rows]

    def search(self, query: str, k: int, allowed_papers: np.ndarray | None = None) -> PassageHits:
        """Top ``k`` papers by their best passage, among ``allowed_papers`` (mask over paper rows)."""
        full = self.sparse.scores(self.sparse.query_tokens(query))
        paper_scores = np.zeros(self.n_papers, dtype=np.float32)
        _best_per_paper(full, self.paper_row, paper_scores)
        if allowed_papers is not None:  # 0 outside the filter: a pass, not a branch per paper
            np.multiply(paper_scores, np.asarray(allowed_papers, dtype=np.bool_), out=paper_scores)
        rows, scores = top_k_rows(paper_scores, k)
        rows = rows.astype(np.int64)
        winners = np.empty(rows.size, dtype=np.int64)
        _first_best(full, self.ptr, rows, self.passage_ids, winners)
        return PassageHits(rows, scores, winners, full, paper_scores)

    def best_passage(self, paper_row: int, passage_scores: np.ndarray) -> int | None:
        """The paper's passage scoring highest for the query (first on ties); ``None`` when the paper
        has no passage holding a query term, so a passage is never shown as evidence by position."""
        lo, hi = int(self.ptr[paper_row]), int(self.ptr[paper_row + 1])
        if hi <= lo:
            return None
        best = lo + int(np.argmax(passage_scores[lo:hi]))
        if passage_scores[best] <= 0:
            return None
        return int(self.passage_ids[best])
