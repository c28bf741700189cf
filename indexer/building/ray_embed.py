"""Fill the embedding cache with Ray Data: encoder actors on this machine or on a Ray cluster.

Embedding is the slow stage of a build (BENCHMARKS.md, «Embedding speed»). This
path encodes the texts of a corpus that the cache (`openxiv.indexer.building.embcache`) lacks with a pool of
actors, each holding one encoder (``map_batches`` with a callable class on an ``ActorPoolStrategy``), and
writes their vectors into the same cache from the driver (one writer, so SQLite stays consistent).
The ordinary ``openxiv index build`` then finds every vector in the cache and encodes nothing.

``ray.init()`` starts a local Ray when ``Settings.ray_address`` is unset; ``auto`` or
``ray://host:10001`` joins a cluster, whose nodes need openxiv and the model installed (the same
encoder fingerprint is checked on every actor, so a node with other weights fails instead of
poisoning the cache). Vectors are the ones the local path would compute: an encoder row depends only
on its text (`OnnxEncoder` pads every batch to ``max_tokens``), which tests/indexer/building/test_ray_embed.py
checks bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.extras import missing_extra
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.building.embcache import CacheKey, EmbeddingCache, cache_keys
from openxiv.indexer.encoders.embed import Encoder

__all__ = ["RayEmbedReport", "corpus_texts", "missing_in_cache", "ray_fill_cache"]


@dataclass
class RayEmbedReport:
    texts: int
    """Distinct texts asked for."""
    cached: int
    """Of those, already in the cache."""
    encoded: int
    """Encoded by the actors and written to the cache."""
    actors: int
    startup_s: float
    """``ray.init`` until the first batch came back (cluster start, actors loading the model)."""
    seconds: float
    """The whole call, startup included."""

    @property
    def texts_per_s(self) -> float:
        """Encoded texts per second after startup (the steady rate of the pool)."""
        steady = self.seconds - self.startup_s
        return self.encoded / steady if steady > 0 else 0.0


def corpus_texts(db_path: Path, embed: str, lead: bool = False) -> list[str]:
    """The texts an ``openxiv index build`` with ``embed`` (and `Settings.paper_lead` = ``lead``)
    would embed, in build order."""
    from openxiv.indexer.building.corpusrows import paper_texts, passage_texts
    from openxiv.indexer.building.stages import READ_CHUNK
    from openxiv.indexer.encoders.embed import paper_text

    texts: list[str] = []
    if embed in ("papers", "both"):
        for chunk in paper_texts(db_path, READ_CHUNK, lead):
            texts.extend(paper_text(title, abstract) for title, abstract in chunk)
    if embed in ("passages", "both"):
        for part in passage_texts(db_path, READ_CHUNK):
            texts.extend(part)
    return texts


def missing_in_cache(
    encoder: Encoder, texts: Sequence[str], cache: EmbeddingCache
) -> tuple[list[CacheKey], list[str]]:
    """The distinct texts (and their keys) that ``cache`` has no vector for."""
    keys = cache_keys(encoder, texts)
    found = cache.get_many(keys)
    first: dict[CacheKey, str] = {}
    for k, t in zip(keys, texts, strict=True):
        if k not in found and k not in first:
            first[k] = t
    return list(first), list(first.values())


class EncodeActor:
    """One encoder per actor, loaded once; ``__call__`` encodes a batch of texts."""

    def __init__(self, settings: Settings, fingerprint: str, probe: list[float] | None = None) -> None:
        from openxiv.indexer.encoders.embed import load_encoder

        self.encoder = load_encoder(settings)
        self.batch_size = settings.embed_batch_size
        adopt = getattr(self.encoder, "adopt", None)
        if callable(adopt) and probe is not None:  # a model server: the key the driver bound
            adopt(fingerprint, np.asarray(probe, dtype=np.float32))
        if self.encoder.fingerprint != fingerprint:
            raise ConfigError(
                f"a Ray actor loaded encoder {self.encoder.fingerprint}, the driver {fingerprint}: "
                "install the same model on every node (OPENXIV_MODEL)"
            )

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        vecs = self.encoder.encode([str(t) for t in batch["text"]], batch_size=self.batch_size)
        return {"row": batch["row"], "vec": vecs}


def _import_ray() -> Any:
    try:
        import ray
        import ray.data  # needs pandas + pyarrow: the [ray] extra
    except ImportError as exc:
        raise missing_extra("ray", "openxiv index embed", exc) from exc
    return ray


def ray_fill_cache(
    texts: Sequence[str],
    cache_path: Path,
    settings: Settings,
    encoder: Encoder,
    *,
    actors: int | None = None,
    num_gpus: float = 0.0,
    batch_texts: int = 1024,
) -> RayEmbedReport:
    """Encode the ``texts`` that ``cache_path`` lacks on a pool of Ray actors and store their vectors.

    ``encoder`` (loaded by the driver from the same ``settings``) gives the cache keys; every actor
    checks it loaded the same fingerprint. ``actors`` defaults to ``settings.embed_actors``, and 0
    means one per CPU that Ray reports. Each actor asks for one CPU (or ``num_gpus`` GPUs)."""
    t0 = time.perf_counter()
    with EmbeddingCache(cache_path) as cache:
        bind = getattr(encoder, "bind_cache", None)
        if callable(bind):  # a model server: its key depends on the probes this cache has seen
            bind(cache)
        probe = getattr(encoder, "probe", None)
        keys, todo = missing_in_cache(encoder, texts, cache)
        distinct = len(set(cache_keys(encoder, texts)))
        report = RayEmbedReport(distinct, distinct - len(todo), 0, 0, 0.0, 0.0)
        if not todo:
            report.seconds = time.perf_counter() - t0
            return report
        from openxiv.corpus.parallel import ray_start

        ray = _import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            ray_start(ray, settings.ray_address)
        try:
            n = actors if actors is not None else settings.embed_actors
            if n <= 0:
                n = max(1, int(ray.cluster_resources().get("CPU", 1)))
            report.actors = n
            ctx = ray.data.DataContext.get_current()
            ctx.enable_progress_bars = False
            # longest first, as the local path does, so a batch wastes no padding on mixed lengths
            order = sorted(range(len(todo)), key=lambda i: (-len(todo[i]), i))
            ds = ray.data.from_items([{"row": i, "text": todo[i]} for i in order])
            out = ds.map_batches(
                EncodeActor,
                fn_constructor_kwargs={
                    "settings": settings,
                    "fingerprint": encoder.fingerprint,
                    "probe": None if probe is None else [float(x) for x in probe],
                },
                batch_size=batch_texts,
                batch_format="numpy",
                compute=ray.data.ActorPoolStrategy(size=n),
                num_cpus=0 if num_gpus else 1,
                num_gpus=num_gpus or None,
            )
            for batch in out.iter_batches(batch_size=None, batch_format="numpy"):
                if report.encoded == 0:
                    report.startup_s = time.perf_counter() - t0
                rows = [int(r) for r in batch["row"]]
                cache.put_many([keys[r] for r in rows], np.asarray(batch["vec"], dtype=np.float32))
                report.encoded += len(rows)
        finally:
            if started_here:
                ray.shutdown()
    report.seconds = time.perf_counter() - t0
    return report
