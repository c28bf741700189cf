"""Feedback's copy of the BM25 matrix by rows (`openxiv.indexer.engine.doc_terms`): written block by
block it is the same arrays as the in-memory transpose, a build writes it into the snapshot, and
serving memory-maps it instead of transposing at open."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from openxiv.indexer import layout
from openxiv.indexer.engine.doc_terms import FILES, DocTerms, write_doc_terms


def _same(got: DocTerms, want: DocTerms) -> None:
    for name in ("ptr", "terms", "weights"):
        a, b = np.asarray(getattr(got, name)), np.asarray(getattr(want, name))
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name


@pytest.mark.parametrize("block", [1, 37, 5_000, 1 << 24])
def test_written_by_blocks_it_equals_the_in_memory_transpose(
    sparse_index: Any, tmp_path: Path, block: int
) -> None:
    """Blocks of one row, of a few rows, and all rows at once; the papers' matrix and the passages'
    (more rows than columns' worth of postings per row)."""
    backend = sparse_index.backend
    for name, sparse in (("papers", backend.bm25_papers), ("passages", backend.passages.sparse)):
        directory = tmp_path / name
        directory.mkdir()
        written = write_doc_terms(sparse, directory, block_entries=block)
        assert written == sum((directory / f).stat().st_size for f in FILES.values())
        loaded = DocTerms.load(sparse, directory)
        assert loaded is not None and isinstance(loaded.terms, np.memmap)
        _same(loaded, DocTerms(sparse))


def test_a_build_writes_it_and_serving_maps_it(sparse_index: Any) -> None:
    backend = sparse_index.backend
    stored = sparse_index.path / layout.BM25_PAPERS
    assert all((stored / f).is_file() for f in FILES.values())
    terms = backend._paper_terms()  # made when the index opened: the snapshot's copy
    assert isinstance(terms.terms, np.memmap) and isinstance(terms.weights, np.memmap)
    _same(terms, DocTerms(backend.bm25_papers))


def test_a_copy_of_another_matrix_is_not_used(sparse_index: Any, tmp_path: Path) -> None:
    backend = sparse_index.backend
    write_doc_terms(backend.passages.sparse, tmp_path)  # the passages' rows, not the papers'
    assert DocTerms.load(backend.bm25_papers, tmp_path) is None
    assert DocTerms.load(backend.bm25_papers, tmp_path / "missing") is None
