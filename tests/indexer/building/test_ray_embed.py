"""The Ray Data path fills the embedding cache with the vectors the local path computes, bit for bit.

Real parts: a small corpus ingested from the shared listing and plain-text files, the real int8 ONNX
MiniLM, a local Ray instance (``ray.init()``) with two encoder actors, the real SQLite cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from small_index import make_db, records

from openxiv.corpus.parallel import RAY_PORT_WAIT_ENV, RAY_PORT_WAIT_S
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.building.embcache import EmbeddingCache, cache_keys, encode_cached
from openxiv.indexer.building.ray_embed import corpus_texts, missing_in_cache
from openxiv.indexer.encoders.embed import load_encoder

pytest.importorskip("ray.data", reason="the [ray] extra is not installed")


def test_ray_fills_the_cache_with_the_local_vectors(shared: Path, tmp_path: Path):
    from openxiv.service.cli import cli

    preset = os.environ.get(RAY_PORT_WAIT_ENV)
    data_dir = tmp_path / "data"
    db = make_db(tmp_path / "corpus.sqlite", records(shared, cs=120, astro=20, full=3))
    settings = Settings(data_dir=data_dir, embed="both")
    encoder = load_encoder(settings)  # exports the ONNX encoder into data_dir once; the actors reuse it
    texts = corpus_texts(db, "both")
    assert len(texts) > 140 + 3  # papers and the full texts' passages

    ray_cache = tmp_path / "ray.sqlite"
    env = {"OPENXIV_DATA_DIR": str(data_dir), "OPENXIV_EMBED": "both"}
    args = ["index", "embed", "--db", str(db), "--cache", str(ray_cache), "--actors", "2", "--json"]
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    # a local node gets longer than Ray's 30 s to start (it ran out on the busy 2-core machine)
    assert os.environ.get(RAY_PORT_WAIT_ENV) == (preset or RAY_PORT_WAIT_S)
    report = json.loads(result.output[result.output.index("{") :])
    distinct = len(set(texts))
    assert report["actors"] == 2
    assert report["texts"] == distinct and report["encoded"] == distinct and report["cached"] == 0

    local_cache = tmp_path / "local.sqlite"
    with EmbeddingCache(local_cache) as cache:
        local = encode_cached(encoder, texts, cache, progress=False)
    keys = cache_keys(encoder, texts)
    with EmbeddingCache(ray_cache) as cache:
        got = cache.get_many(keys)
        assert missing_in_cache(encoder, texts, cache) == ([], [])
    ray_vecs = np.stack([got[k] for k in keys])
    assert ray_vecs.dtype == local.dtype and ray_vecs.shape == local.shape
    assert ray_vecs.tobytes() == local.tobytes()  # bit for bit, not merely close

    # a second run finds everything cached and does not start Ray
    again = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    second = json.loads(again.output[again.output.index("{") :])
    assert second["encoded"] == 0 and second["cached"] == distinct and second["actors"] == 0


def test_ray_keys_a_model_servers_vectors_by_the_probe_class_the_build_uses(tmp_path: Path) -> None:
    """``openxiv index embed`` with ``OPENXIV_MODEL=http://...#model``: the driver binds the probe
    class as the build does, each actor adopts it after checking its own probe, and a cache that has
    seen another model under the same name keeps that model's key clean."""
    from model_server import ModelServer, hashed_embed

    from openxiv.indexer.building.ray_embed import ray_fill_cache
    from openxiv.indexer.encoders.remote import connect_remote_encoder

    texts = [f"paper {i}: dense retrieval of arXiv papers, variant {i}" for i in range(40)]
    cache_path = tmp_path / "embcache.sqlite"
    with ModelServer(lambda t: hashed_embed([s + "!" for s in t])) as other:  # another model, same name
        first = connect_remote_encoder(Settings(data_dir=tmp_path, model=other.spec))
        with EmbeddingCache(cache_path) as cache:
            first.bind_cache(cache)
    assert first.fingerprint.endswith("~0")
    with ModelServer(hashed_embed) as server:
        settings = Settings(data_dir=tmp_path, model=server.spec, embed_batch_size=8)
        encoder = connect_remote_encoder(settings)
        report = ray_fill_cache(texts, cache_path, settings, encoder, actors=1)
    assert encoder.fingerprint == first.family + "~1" and report.encoded == len(texts)
    with EmbeddingCache(cache_path) as cache:
        got = cache.get_many(cache_keys(encoder, texts))
        assert not cache.get_many(cache_keys(first, texts))  # nothing written under the other's key
    vecs = np.stack([got[k] for k in cache_keys(encoder, texts)])
    np.testing.assert_allclose(vecs, hashed_embed(texts), atol=1e-6)
