"""The streaming BM25 build (chunks of texts, postings spilled to disk) saves the same bytes as the
in-memory build (`SparseIndex.build`), on real listing abstracts, whatever the chunk size; and a
streamed `DenseIndex` (empty `create`, then `add` per chunk) is the same file as one `build`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from live_index import listing_texts

from openxiv.indexer.building.bm25stream import StreamingBM25
from openxiv.indexer.building.embedded import fill_trained
from openxiv.indexer.engine.dense import DenseIndex
from openxiv.indexer.engine.sparse import SparseIndex


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("chunk", [1, 37, 1000])
def test_streamed_bm25_is_the_same_bytes_as_the_in_memory_build(tmp_path: Path, chunk: int) -> None:
    texts = listing_texts(400)
    texts[5] = ""  # an empty text (a paper with neither title nor abstract): a row of length 0
    texts[6] = "the of and"  # only stop words
    SparseIndex.build(texts, k1=1.5, b=0.7).save(tmp_path / "memory")
    builder = StreamingBM25(tmp_path / "spill", k1=1.5, b=0.7)
    for start in range(0, len(texts), chunk):
        builder.add(texts[start : start + chunk])
    streamed = builder.finish()
    streamed.save(tmp_path / "streamed")
    assert not (tmp_path / "spill").exists()
    a, b = _files(tmp_path / "memory"), _files(tmp_path / "streamed")
    assert set(a) == set(b) and "data.csc.index.npy" in a
    assert [name for name in a if a[name] != b[name]] == []
    query = streamed.query_tokens("neural network training")
    assert query.size and streamed.scores(query).max() > 0


def test_streamed_bm25_of_nothing_is_an_empty_index(tmp_path: Path) -> None:
    index = StreamingBM25(tmp_path / "spill").finish()
    assert index.n_docs == 0 and index.scores(index.query_tokens("anything")).size == 0


def test_a_dense_index_filled_by_chunks_is_the_same_file_as_one_build(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((500, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    DenseIndex.build(vecs, 1000).save(tmp_path / "one")
    streamed = DenseIndex.create(len(vecs), 16, 1000)
    for start in range(0, len(vecs), 128):
        streamed.add(vecs[start : start + 128])
    streamed.save(tmp_path / "chunks")
    assert _files(tmp_path / "one") == _files(tmp_path / "chunks")
    assert DenseIndex.create(1001, 16, 1000).kind == "ivf"
    assert DenseIndex.create(1001, 16, 1000, ann="hnsw").kind == "hnsw"


def test_an_ivf_filled_by_chunks_through_its_spill_file_is_the_same_file_as_one_build(tmp_path: Path) -> None:
    """The streaming build's IVF: chunks spilled to float16 on disk, trained on the strided sample,
    then added. It is the file `DenseIndex.build` writes from the same (float16-rounded) vectors in
    memory, and the spill file is gone."""
    rng = np.random.default_rng(1)
    vecs = rng.standard_normal((4000, 16)).astype(np.float32)
    vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
    DenseIndex.build(vecs, 1000).save(tmp_path / "one")
    streamed = DenseIndex.create(len(vecs), 16, 1000)
    spill = tmp_path / ".dense.spill.npy"
    fill_trained(streamed, (vecs[s : s + 700] for s in range(0, len(vecs), 700)), len(vecs), spill)
    streamed.save(tmp_path / "chunks")
    assert streamed.kind == "ivf" and streamed.params["nlist"] == 100 and not spill.exists()
    assert _files(tmp_path / "one") == _files(tmp_path / "chunks")
    short = DenseIndex.create(len(vecs), 16, 1000)
    with pytest.raises(ValueError, match="3500 vectors for 4000 rows"):
        fill_trained(short, (vecs[s : s + 700] for s in range(0, 3500, 700)), len(vecs), spill)
    assert not spill.exists()
