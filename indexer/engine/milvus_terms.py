"""The BM25 collection statistics of a Milvus snapshot's texts: what the ranking stages that read
words need and Milvus does not hand out.

Milvus scores BM25 inside its own index (document frequencies, lengths); a search returns scores,
not the statistics behind them. Three stages of the embedded ranking read those statistics:
pseudo-relevance feedback weighs the feedback papers' words by their BM25 weights
(`openxiv.indexer.engine.prf`), the passage calibration compares the query terms' idf in paper texts
and in passages (`openxiv.indexer.engine.passage_calibration`), and the query-kind rule counts the
query words the passage vocabulary holds (`openxiv.indexer.engine.query_kind`). The Milvus build
counts them while it analyses the texts it inserts (`count_terms`: document frequency per term, the
number of texts, their mean length in terms) and writes them into the snapshot (`MILVUS_TERMS`,
`write_terms`); serving loads them once (`load_terms`). A snapshot built before them has none, and
its fusion modes rank without those three stages, as before (issue 42).

`TermStats` answers to the same attributes as the embedded `SparseIndex` that
`openxiv.indexer.engine.passage_calibration.passage_factor` reads (``vocab``, ``indptr`` whose
differences are the document frequencies, ``n_docs``, ``stemmer_name``), so the calibration runs the
one implementation on either backend.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["MILVUS_TERMS", "PassageTerms", "TermStats", "count_terms", "load_terms", "write_terms"]

MILVUS_TERMS = "milvus_terms.json"
"""The snapshot file holding the statistics of the ``papers`` and ``passages`` collections' texts."""


@dataclass
class TermStats:
    """Document frequencies of one collection's analysed texts, by term id (ids: first seen order)."""

    terms: list[str]
    indptr: np.ndarray
    """``indptr[t + 1] - indptr[t]``: the number of texts holding term ``t`` (as `SparseIndex.indptr`)."""
    n_docs: int
    avgdl: float
    """Mean number of terms per text (BM25's ``avgdl``)."""
    stemmer_name: str

    def __post_init__(self) -> None:
        self.vocab: dict[str, int] = {t: i for i, t in enumerate(self.terms)}

    def df(self, ids: np.ndarray) -> np.ndarray:
        return (self.indptr[ids + 1] - self.indptr[ids]).astype(np.int64)

    def bm25_weights(self, ids: np.ndarray, tf: np.ndarray, length: int, k1: float, b: float) -> np.ndarray:
        """The BM25 weight of terms ``ids`` (counts ``tf``) in a text of ``length`` terms, as the
        embedded index's matrix holds it (`openxiv.indexer.engine.sparse`, Lucene's variant, float32):
        ``idf · tf / (tf + k1 (1 − b + b·|d|/avgdl))``, ``idf = ln(1 + (N − df + ½) / (df + ½))``."""
        df = self.df(ids)
        idf = np.log(1 + (self.n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        tf32 = tf.astype(np.float32)
        tfc = tf32 / (k1 * ((1 - b) + b * length / self.avgdl) + tf32)
        return (idf * tfc).astype(np.float32)

    def as_json(self) -> dict[str, object]:
        return {
            "n_docs": self.n_docs,
            "avgdl": self.avgdl,
            "stemmer": self.stemmer_name,
            "terms": self.terms,
            "df": np.diff(self.indptr).tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TermStats:
        df = np.asarray(data["df"], dtype=np.int64)
        indptr = np.zeros(df.size + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(
            list(data["terms"]), indptr, int(data["n_docs"]), float(data["avgdl"]), str(data["stemmer"])
        )


@dataclass
class PassageTerms:
    """The passage collection's statistics where a `PassageIndex` is read (``.sparse``)."""

    sparse: TermStats


def count_terms(texts: Iterable[str], stemmer: str) -> TermStats:
    """`TermStats` of analysed texts (terms separated by spaces, as inserted into Milvus)."""
    df: Counter[str] = Counter()
    n = total = 0
    for text in texts:
        words = text.split()
        n += 1
        total += len(words)
        df.update(set(words))
    terms = sorted(df)
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.asarray([df[t] for t in terms], dtype=np.int64), out=indptr[1:])
    return TermStats(terms, indptr, n, total / n if n else 0.0, stemmer)


def write_terms(snapshot: Path, papers: TermStats, passages: TermStats | None) -> None:
    out = {"papers": papers.as_json(), **({"passages": passages.as_json()} if passages else {})}
    (Path(snapshot) / MILVUS_TERMS).write_text(json.dumps(out, separators=(",", ":")), encoding="utf-8")


def load_terms(snapshot: Path) -> tuple[TermStats | None, TermStats | None]:
    """The papers' and passages' statistics of a snapshot; ``None`` where it has none."""
    path = Path(snapshot) / MILVUS_TERMS
    if not path.is_file():
        return None, None
    data = json.loads(path.read_text(encoding="utf-8"))
    passages = data.get("passages")
    return TermStats.from_json(data["papers"]), (TermStats.from_json(passages) if passages else None)
