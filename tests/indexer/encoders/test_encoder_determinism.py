"""A vector depends only on its text and the model (issue 8, item 6).

The default encoder (ONNX, int8) once quantised activations with one scale per batch, so a cached
vector depended on its batch-mates and two builds of one corpus with different cache histories gave
different rankings. These tests encode the same real abstracts in different orders, batch sizes and
cache states and compare the vectors bit for bit, and rebuild a small real index with a shuffled,
half-warm cache and compare the dense files byte for byte.

The promise is for one machine and one onnxruntime: every comparison here is between encodings made
in this process. Why it holds on any CPU: the quantised MatMuls are integer GEMMs (exact), and every
float kernel computes a row from that row alone, in an order that depends on the kernel (MLAS picks
AVX2, AVX-512 or VNNI code per CPU), not on the batch; pad positions are masked to an exact 0 in
attention and pooling. Another CPU gives other bits (a vector's last float32 digits), so the export
itself, calibrated by onnxruntime on the building machine, and its fingerprint may differ between
machines: their embedding caches are then not shared, never mixed. `scripts/check_float_paths.py`
runs these tests with other thread counts, graph optimisation levels and unfused QDQ kernels.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import layout
from openxiv.indexer.building.embcache import EmbeddingCache, encode_cached
from openxiv.indexer.building.job import build_index
from openxiv.indexer.encoders.embed import Encoder, paper_text

N = 96


def test_vector_does_not_depend_on_batch_mates(minilm_onnx: Encoder, dense_texts: list[str]):
    texts = dense_texts[:N]
    reference = minilm_onnx.encode(texts, batch_size=32)
    perm = np.random.default_rng(1).permutation(N)
    for batch_size in (7, 50, 1):
        shuffled = minilm_onnx.encode([texts[i] for i in perm], batch_size=batch_size)
        back = np.empty_like(shuffled)
        back[perm] = shuffled
        np.testing.assert_array_equal(back, reference, err_msg=f"batch_size={batch_size}")
    # a query is the same text alone: the same bits as its row in a batch
    np.testing.assert_array_equal(minilm_onnx.encode_query(texts[5]), reference[5])


def test_unpadded_query_encoding_gives_the_padded_bits(minilm_onnx: Encoder):
    """`encode_query` skips the padding to ``max_tokens`` (issue 13: a third less CPU per query); the
    index holds padded-batch vectors, so on real dev queries it must give exactly the same bits."""
    gold = SharedData.default().gold("topic_queries_dev.jsonl")
    queries = [json.loads(line)["query"] for line in gold.read_text(encoding="utf-8").splitlines() if line]
    unpadded = [len(minilm_onnx.query_tokenizer.encode(q).ids) for q in queries]  # type: ignore[attr-defined]
    assert sum(n < minilm_onnx.max_tokens for n in unpadded) > len(queries) // 2  # the short path is taken
    padded = minilm_onnx.encode(queries, batch_size=16)
    alone = np.stack([minilm_onnx.encode_query(q) for q in queries])
    np.testing.assert_array_equal(alone, padded)


def test_half_warm_cache_in_shuffled_order_gives_the_same_bits(
    minilm_onnx: Encoder, dense_texts: list[str], tmp_path: Path
):
    texts = dense_texts[:N]
    with EmbeddingCache(tmp_path / "cold.sqlite") as cold:
        reference = encode_cached(minilm_onnx, texts, cold, progress=False, batch_size=32)
    rng = np.random.default_rng(2)
    with EmbeddingCache(tmp_path / "warm.sqlite") as warm:
        # an earlier build saw every other text, among other papers (the astro tail of the sample)
        earlier = [*texts[::2], *dense_texts[-30:]]
        encode_cached(minilm_onnx, [earlier[i] for i in rng.permutation(len(earlier))], warm, progress=False)
        perm = rng.permutation(N)
        out = encode_cached(minilm_onnx, [texts[i] for i in perm], warm, progress=False, batch_size=16)
    back = np.empty_like(out)
    back[perm] = out
    np.testing.assert_array_equal(back, reference)


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing} (set OPENXIV_SHARED)")
    db = tmp_path_factory.mktemp("det-db") / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(itertools.islice(read_path(listing), 1000, 1120))
    return db


def test_rebuild_with_shuffled_half_warm_cache_is_bit_identical(
    minilm_onnx: Encoder, small_db: Path, tmp_path: Path
):
    settings = Settings(data_dir=tmp_path, embed="papers", embed_max_tokens=minilm_onnx.max_tokens)
    first = build_index(
        small_db,
        tmp_path / "a",
        settings,
        progress=False,
        encoder=minilm_onnx,
        cache_path=tmp_path / "a.sqlite",
    )
    with Store.open_readonly(small_db) as store:
        texts = [paper_text(d.title, d.abstract) for d in store.iter_papers()]
    rng = np.random.default_rng(3)
    half = [texts[i] for i in rng.permutation(len(texts))[: len(texts) // 2]]
    with EmbeddingCache(tmp_path / "b.sqlite") as cache:
        encode_cached(minilm_onnx, half, cache, progress=False, batch_size=5)
    second = build_index(
        small_db,
        tmp_path / "b",
        settings,
        progress=False,
        encoder=minilm_onnx,
        cache_path=tmp_path / "b.sqlite",
    )
    files = sorted(p.relative_to(first).as_posix() for p in (first / layout.DENSE_PAPERS).rglob("*"))
    assert files, "the first build wrote no dense files"
    for rel in files:
        assert (first / rel).read_bytes() == (second / rel).read_bytes(), rel
