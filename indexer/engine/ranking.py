"""The ranking rules every backend shares (`Ranking`: mode -> sides, families -> fused list, feedback
and the category prior), the per-side result, and the query encoder a snapshot's vectors need.

`openxiv.indexer.engine.hybrid.HybridBackend` (embedded) and `openxiv.indexer.engine.milvus_backend.MilvusBackend`
rank by these rules; split from ``hybrid`` so neither module carries the other's size.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.modes import FAMILIES, FUSION_METHODS, ModeUnavailable, parse_mode
from openxiv.indexer import layout
from openxiv.indexer.engine.fusion import Side, fuse, fuse_with_extra, merge_max
from openxiv.indexer.engine.passage_calibration import PassageCalibration
from openxiv.indexer.engine.prf import FeedbackConfig, keep_head
from openxiv.indexer.engine.prior import CategoryPrior, PriorConfig
from openxiv.indexer.manifest import Manifest

__all__ = [
    "BM25_PASSAGE_SCALE",
    "PASSAGE_OVERFETCH",
    "Ranking",
    "SideResult",
    "encoder_for",
    "ms_since",
    "ranks_of",
]

BM25_PASSAGE_SCALE = 0.8
"""BM25 passage scores are multiplied by this before the max with paper-text scores: passages of a
separate full-text collection have their own IDFs and can outscore abstracts on topic queries.
0.8 is the lowest value that keeps both known-item targets on the dev sets (the sweep:
docs/indexing.md, «Ranking»)."""
PASSAGE_OVERFETCH = 4
"""Dense passage hits fetched per wanted paper (several passages of one paper collapse to one)."""


@dataclass
class SideResult:
    rows: np.ndarray
    scores: np.ndarray
    passages: dict[int, int] = field(default_factory=dict)
    """Winning passage id per paper row (passage sides only)."""


class Ranking:
    """How modes map to sides and how sides fuse, shared by every backend that ranks by the same
    rules (`HybridBackend`, `openxiv.indexer.engine.milvus_backend.MilvusBackend`): the subclass sets
    ``settings``, ``sides``, ``side_weights`` and ``passage_scale``."""

    settings: Settings
    sides: tuple[str, ...]
    side_weights: dict[str, float]
    passage_scale: float
    category_prior: CategoryPrior
    """The snapshot's category prior (`openxiv.indexer.engine.prior`), shared by every `tuned` view."""
    titles: Callable[[str], Sequence[str]] | None = None
    """Ids of the papers whose normalised title equals a query's (the snapshot store's
    ``find_by_title``, set when the snapshot is opened): the fusion modes pin them first
    (`openxiv.indexer.engine.tiling.pin`)."""

    def ranking_info(self) -> dict[str, Any]:
        """The ranking settings in force (``/v1/index``)."""
        return {
            "fusion": self.settings.fusion,
            "rrf_k": self.settings.rrf_k,
            "weight_bm25": self.settings.weight_bm25,
            "weight_dense": self.settings.weight_dense,
            "candidates": self.settings.candidates,
            "bm25_passage_scale": self.passage_scale,
            "passage_norm": self.calibration.method if self.calibrates_passages else "fixed",
            "passage_norm_scale": self.settings.passage_norm_scale,
            **({"feedback": dataclasses.asdict(self.feedback)} if self.supports_feedback else {}),
            "prior": dataclasses.asdict(PriorConfig.of(self.settings)),
        }

    supports_feedback = False
    calibrates_passages = False
    """Whether this backend scales passage scores per query (`calibration`); else by ``passage_scale``."""
    """Whether this backend runs pseudo-relevance feedback (`openxiv.indexer.engine.prf`)."""

    @property
    def feedback(self) -> FeedbackConfig:
        """Pseudo-relevance feedback of this view (`openxiv.indexer.engine.prf`, ``OPENXIV_PRF_*``)."""
        return FeedbackConfig.of(self.settings)

    def _with_prior(
        self, rows: np.ndarray, scores: np.ndarray, mode: str | None, keep_head: bool = True
    ) -> tuple[np.ndarray, np.ndarray]:
        """The fused ranking reordered by the category prior below its head (`openxiv.indexer.engine.prior`,
        ``OPENXIV_PRIOR_*``; no head for a topic query, ``keep_head`` False); the fusion modes only,
        like feedback."""
        if not self._fuses(mode):
            return rows, scores
        config = PriorConfig.of(self.settings)
        config = config if keep_head else dataclasses.replace(config, head=0)
        return self.category_prior.apply(rows, scores, config)

    def _fuses(self, mode: str | None) -> bool:
        """``mode`` (``None``: the configured default) fuses the families (``weighted``, ``zscore``,
        ``rrf``): feedback and the category prior apply to those modes only."""
        return (parse_mode(mode) or self.settings.fusion) in FUSION_METHODS

    def _plan(self, mode: str | None) -> tuple[tuple[str, ...], str]:
        """Sides to run and the fusion method for ``mode`` (any spelling `parse_mode` accepts; ``None``
        is the configured default). The vocabulary is the engine's (`openxiv.indexer.backend`); the
        one check left here is the snapshot's: a mode needing a side this index lacks."""
        mode = parse_mode(mode) or self.settings.fusion  # Settings.fusion is validated by parse_mode
        # a family or side as the configured default still fuses within it by the built-in method
        default = (
            self.settings.fusion
            if self.settings.fusion in FUSION_METHODS
            else Settings.model_fields["fusion"].default
        )
        if mode in FUSION_METHODS:
            return self.sides, mode
        wanted = tuple(s for s in FAMILIES.get(mode, (mode,)) if s in self.sides)
        if not wanted:
            raise ModeUnavailable(
                f"mode {mode!r} needs a side this index does not have (it has: {', '.join(self.sides)}); "
                f"rebuild with --embed to add dense vectors"
            )
        return wanted, default

    @property
    def calibration(self) -> PassageCalibration:
        """How this view scales passage scores per query (`openxiv.indexer.engine.passage_calibration`;
        ``fixed`` uses ``passage_scale``)."""
        s = self.settings
        return PassageCalibration(s.passage_norm, s.passage_norm_scale, self.passage_scale)

    def _families(
        self, results: dict[str, SideResult], sides: tuple[str, ...], passage_factor: float | None = None
    ) -> list[Side]:
        """One fused input per family: a family's sides share a score scale and merge by max, passage
        scores multiplied by ``passage_factor`` (the query's calibration; ``passage_scale`` if None)."""
        factor = self.passage_scale if passage_factor is None else passage_factor
        out = []
        for family, members in FAMILIES.items():
            present = [
                Side(
                    n,
                    results[n].rows,
                    results[n].scores * (factor if n == "bm25_passages" else 1.0),
                )
                for n in members
                if n in results and n in sides
            ]
            if present:
                weight = self.side_weights.get(family, self._weight(members[0]))
                out.append(merge_max(family, present, weight))
        if "bm25_feedback" in results:
            fb = results["bm25_feedback"]
            out.append(Side("bm25_feedback", fb.rows, fb.scores, self.feedback.weight))
        return out

    def _fuse(
        self, sides: dict[str, SideResult], wanted: tuple[str, ...], method: str, head: int, factor: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """The families of ``sides`` the mode runs (``wanted``) fused by ``method``, passage scores
        times the query's ``factor`` (`openxiv.indexer.engine.passage_calibration`); a confident first
        pass keeps its ``head`` places above feedback."""
        families = self._families(sides, wanted, factor)
        if head:  # the feedback side is the last family; the kept head comes from the others
            fed, plain_head = fuse_with_extra(families[:-1], families[-1], method, self.settings.rrf_k, head)
            return keep_head(plain_head, fed, head)
        return fuse(families, method, self.settings.rrf_k)

    def _weight(self, side: str) -> float:
        return self.settings.weight_dense if side.startswith("dense") else self.settings.weight_bm25


def encoder_for(manifest: Manifest, settings: Settings, snapshot: Path) -> Any:
    """The encoder that made the snapshot's vectors: the one stored in ``<snapshot>/encoder/`` (ONNX:
    onnxruntime + tokenizers, nothing written), else the manifest's model loaded from the settings
    (torch / model2vec builds, and snapshots made before encoders were stored)."""
    from openxiv.indexer.encoders.embed import load_encoder, load_snapshot_encoder
    from openxiv.indexer.encoders.remote import load_remote_snapshot_encoder

    emb = manifest.embedding
    remote = load_remote_snapshot_encoder(snapshot / layout.ENCODER, settings)
    if remote is not None:  # built through a model server: its model, width and prefixes
        return remote
    encoder = load_snapshot_encoder(snapshot / layout.ENCODER, settings.embed_batch_size)
    if encoder is None:
        encoder = load_encoder(
            settings,
            model=emb.model or settings.model,
            embed_max_tokens=emb.max_tokens or settings.embed_max_tokens,
        )
    want = emb.fingerprint
    if want and getattr(encoder, "fingerprint", want) != want:
        raise ValueError(
            f"the index was embedded with {emb.model!r} (fingerprint {want}) but the model found "
            f"here has fingerprint {encoder.fingerprint}: rebuild the index or install the same model"
        )
    return encoder


def ranks_of(rows: np.ndarray, page: np.ndarray) -> dict[int, int]:
    """1-based rank in ``rows`` of each of ``page``'s rows found there (its first place), in one pass."""
    pos = np.flatnonzero(np.isin(rows, page))
    return dict(zip(rows[pos][::-1].tolist(), (pos[::-1] + 1).tolist(), strict=True))


def ms_since(t: float) -> float:
    return round((time.perf_counter() - t) * 1000, 3)
