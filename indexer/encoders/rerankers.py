"""The contract of a second-stage reranker: what the fine-rerank stage calls, whoever computes it.

A reranker scores (query, text) pairs jointly, as a cross-encoder does; the engine's fine-rerank
stage (`openxiv.indexer.engine.rerank`) orders the first stage's top N by these scores. Two kinds
satisfy it: the cross-encoder that ships inside the package (run in process with onnxruntime) and a
model server reached over HTTP (a ``/rerank`` endpoint or a chat model). The stage never knows which.

``fingerprint`` names the exact scorer (weights, or remote model plus a probe of its answers), so a
replay cache or a benchmark row can say what produced an order; two rerankers with one fingerprint
give the same scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Reranker", "RerankerUnavailable"]


class RerankerUnavailable(RuntimeError):
    """The reranker cannot answer now (a server down or past its deadline): the stage keeps the first
    stage's order and says so in the response's ``warnings``; never a 500."""


@runtime_checkable
class Reranker(Protocol):
    """Scores texts against one query; higher is more relevant."""

    name: str
    """Short name for ``timings_ms``, warnings and the manifest (e.g. ``shipped-ce`` or a model id)."""

    fingerprint: str
    """Identifies the scorer exactly (hash of the weights, or model + probe answers)."""

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One float32 score per text, in the order given. May raise `RerankerUnavailable`."""
        ...
