"""The embedding cache: hits skip the encoder, vectors survive reopening and interrupted builds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from openxiv.indexer.building.embcache import CacheKey, EmbeddingCache, cache_keys, encode_cached, text_sha256
from openxiv.indexer.encoders.embed import Encoder


class CountingEncoder:
    """The real encoder, counting what it is asked to encode (and able to fail after N calls)."""

    def __init__(self, inner: Encoder, fail_after_calls: int | None = None) -> None:
        self.inner = inner
        self.name, self.fingerprint = inner.name, inner.fingerprint
        self.dim, self.max_tokens = inner.dim, inner.max_tokens
        self.calls = 0
        self.texts_encoded = 0
        self.fail_after_calls = fail_after_calls
        self.returned: dict[str, np.ndarray] = {}
        """Each text's vector as this encoder returned it (the cache must give back these bits)."""

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        if self.fail_after_calls is not None and self.calls >= self.fail_after_calls:
            raise KeyboardInterrupt("simulated interruption")
        self.calls += 1
        self.texts_encoded += len(texts)
        out = self.inner.encode(texts, batch_size=batch_size)
        self.returned.update(zip(texts, out.copy(), strict=True))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        return self.inner.encode_query(text)


def test_cache_hits_skip_the_encoder_and_return_identical_vectors(
    minilm: Encoder, dense_texts: list[str], tmp_path: Path
):
    texts = dense_texts[:40]
    enc = CountingEncoder(minilm)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        first = encode_cached(enc, texts, cache, progress=False)
        assert enc.texts_encoded == 40
        again = encode_cached(enc, texts, cache, progress=False)
        assert enc.texts_encoded == 40  # nothing re-encoded
        np.testing.assert_array_equal(first, again)
        # the cached vectors are the encoder's own, to the bit (stored as float32 bytes). Compared
        # with what the encoder returned, not with a second torch run: MKL's float32 GEMM may round
        # differently for another memory alignment, so two runs need not agree to the bit
        np.testing.assert_array_equal(first, np.stack([enc.returned[t] for t in texts]))
        # a new text among old ones: only it is encoded
        mixed = [*texts[:5], "A completely new sentence about galaxy rotation curves.", *texts[5:10]]
        out = encode_cached(enc, mixed, cache, progress=False)
        assert enc.texts_encoded == 41
        np.testing.assert_array_equal(out[:5], first[:5])
        np.testing.assert_array_equal(out[6:], first[5:10])


def test_cache_survives_reopening(minilm: Encoder, dense_texts: list[str], tmp_path: Path):
    path = tmp_path / "c.sqlite"
    texts = dense_texts[40:60]
    with EmbeddingCache(path) as cache:
        first = encode_cached(minilm, texts, cache, progress=False)
    enc = CountingEncoder(minilm)
    with EmbeddingCache(path) as cache:
        assert cache.count() == 20
        assert cache.models() == [(minilm.fingerprint, minilm.max_tokens, 20)]
        again = encode_cached(enc, texts, cache, progress=False)
    assert enc.calls == 0
    np.testing.assert_array_equal(first, again)


def test_duplicates_are_encoded_once(minilm: Encoder, dense_texts: list[str], tmp_path: Path):
    enc = CountingEncoder(minilm)
    texts = [dense_texts[0], dense_texts[1], dense_texts[0]]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        out = encode_cached(enc, texts, cache, progress=False)
    assert enc.texts_encoded == 2
    np.testing.assert_array_equal(out[0], out[2])


def test_interrupted_encode_keeps_what_it_wrote(minilm: Encoder, dense_texts: list[str], tmp_path: Path):
    path = tmp_path / "c.sqlite"
    texts = dense_texts[60:100]
    failing = CountingEncoder(minilm, fail_after_calls=2)
    with EmbeddingCache(path) as cache, pytest.raises(KeyboardInterrupt):
        encode_cached(failing, texts, cache, progress=False, chunk_size=10)
    assert failing.texts_encoded == 20
    enc = CountingEncoder(minilm)
    with EmbeddingCache(path) as cache:
        assert cache.count() == 20
        out = encode_cached(enc, texts, cache, progress=False, chunk_size=10)
    assert enc.texts_encoded == 20  # only the 20 that were lost
    # the 20 kept from the interrupted run and the 20 encoded now, each as its encoder returned it
    returned = failing.returned | enc.returned
    np.testing.assert_array_equal(out, np.stack([returned[t] for t in texts]))


def test_keys_separate_models_and_lengths(tmp_path: Path):
    v = np.eye(3, dtype=np.float32)
    keys = [
        CacheKey("m1", 64, text_sha256("a")),
        CacheKey("m1", 128, text_sha256("a")),
        CacheKey("m2", 64, text_sha256("a")),
    ]
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        cache.put_many(keys, v)
        got = cache.get_many([*keys, CacheKey("m3", 64, text_sha256("a"))])
        assert len(got) == 3
        for i, k in enumerate(keys):
            np.testing.assert_array_equal(got[k], v[i])
        with pytest.raises(ValueError, match="keys"):
            cache.put_many(keys[:2], v)


def test_cache_keys_use_fingerprint_length_and_sha(minilm: Encoder):
    (k,) = cache_keys(minilm, ["hello"])
    assert k == CacheKey(minilm.fingerprint, 64, text_sha256("hello"))
    assert len(k.text_sha256) == 64


def test_cached_vectors_are_read_into_the_result_without_a_second_copy(
    minilm: Encoder, dense_texts: list[str], dense_vectors: np.ndarray, tmp_path: Path
):
    """A build over an all-cached corpus holds the result array once, not also a dict of per-vector
    copies: at 250k papers the copies added ~0.5 GiB to the build's peak (BENCHMARKS.md, "Scale"),
    ~5 GiB at 2.7M."""
    import tracemalloc

    enc = CountingEncoder(minilm)
    texts = [f"{t} (copy {i})" for i in range(8) for t in dense_texts]  # 2,880 distinct texts
    vecs = np.concatenate([dense_vectors] * 8)
    with EmbeddingCache(tmp_path / "c.sqlite") as cache:
        cache.put_many(cache_keys(enc, texts), vecs)
        tracemalloc.start()
        try:
            out = encode_cached(enc, texts, cache, progress=False)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert enc.texts_encoded == 0
    np.testing.assert_array_equal(out, vecs)
    assert peak < 1.6 * out.nbytes, f"peak {peak / out.nbytes:.2f} x the result"
