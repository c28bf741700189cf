"""`build_index`: corpus database -> a new index snapshot, switched in atomically.

Stages (each timed and recorded in the manifest):

1. ``copy``: a consistent copy of the corpus DB into the snapshot (``Store.copy_to``); everything
   below reads that copy, so an ingest running meanwhile cannot make the parts disagree;
2. ``read``: papers (``iter_papers``) -> metadata arrays and texts; passages (``iter_passages``);
3. ``bm25_papers`` / ``bm25_passages``: bm25s matrices;
4. ``embed_papers`` / ``embed_passages``: vectors through the shared embedding cache
   (``encode_cached``), so unchanged texts are never re-encoded, then FAISS indexes;
5. ``manifest`` + `verify_snapshot` (every part opens and agrees with the manifest) + rename
   ``.tmp-*`` into place + switch ``CURRENT`` + prune old snapshots that no process holds.

The whole build runs under the index root's build lock (`openxiv.indexer.locks.BuildLock`): a
second build on the same root fails at once naming the first (or waits, ``wait=``). Any failure
removes the temporary directory and leaves ``CURRENT`` and the last good snapshot alone.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.config import Settings
from openxiv.indexer import layout
from openxiv.indexer.locks import BuildLock, BuildLocked
from openxiv.indexer.manifest import Manifest
from openxiv.indexer.manifest import read as read_manifest
from openxiv.indexer.manifest import write as write_manifest
from openxiv.indexer.meta import PaperMeta
from openxiv.indexer.milvus_common import redact_uri
from openxiv.indexer.sentences import write_sentences
from openxiv.indexer.snapshot import (
    BadIndexError,
    cleanup_tmp,
    current_snapshot,
    list_snapshots,
    prune_snapshots,
    switch_current,
    verify_snapshot,
)
from openxiv.indexer.sparse import STOPWORDS, PassageIndex, SparseIndex
from openxiv.indexer.tldrs import build_tldrs, write_tldrs

__all__ = [
    "EMBED_CHOICES",
    "BuildError",
    "BuildReport",
    "CorpusRead",
    "build_index",
    "embed_vectors",
    "paper_bm25_text",
    "read_corpus",
]

log = logging.getLogger("openxiv.indexer")
"""Stage lines (start, end and seconds) at INFO: `openxiv index build` shows them on stderr when that
is not a terminal (container logs), where the progress bars stay off."""

EMBED_CHOICES = ("papers", "passages", "both", "none")
TOKEN_PATTERN = r"(?u)\b\w\w+\b"


class BuildError(RuntimeError):
    """The build cannot run (missing DB, empty corpus, bad setting); nothing was changed."""


def paper_bm25_text(title: str | None, abstract: str | None) -> str:
    """What BM25 indexes per paper. Repeating the title (x2, x3) measured no better on the topic
    dev queries (docs/indexing.md, «Ranking»), so the title appears once."""
    return f"{title or ''}\n{abstract or ''}"


@dataclass
class BuildReport:
    path: Path
    stages: dict[str, float] = field(default_factory=dict)
    manifest: dict[str, Any] = field(default_factory=dict)
    reused: bool = False
    """True when the live snapshot already matched the corpus and settings (nothing was built)."""


def _versions(*extra: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in (
        "openxiv",
        "bm25s",
        "faiss-cpu",
        "sentence-transformers",
        "torch",
        "numpy",
        "PyStemmer",
        *extra,
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


class _Stages:
    def __init__(self, progress: bool) -> None:
        self.times: dict[str, float] = {}
        self.progress = progress

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        if self.progress:
            print(f"[index] {name} ...", flush=True)
        log.info("%s ...", name)
        t = time.perf_counter()
        yield
        self.times[name] = round(time.perf_counter() - t, 3)
        log.info("%s done in %.1f s", name, self.times[name])


def _bar(iterable: Any, total: int, desc: str, progress: bool) -> Any:
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="row", smoothing=0.05)


def fusion_manifest(settings: Settings) -> dict[str, Any]:
    """The manifest's ``fusion`` part: the ranking settings the snapshot was built with."""
    return {
        "fusion": settings.fusion,
        "rrf_k": settings.rrf_k,
        "weight_bm25": settings.weight_bm25,
        "weight_dense": settings.weight_dense,
        "candidates": settings.candidates,
    }


def _build_config(settings: Settings, embed: str) -> dict[str, Any]:
    """The settings a snapshot depends on: equal config + equal corpus fingerprint = same snapshot."""
    return {
        "embed": embed,
        "model": settings.model if embed != "none" else None,
        "embed_max_tokens": settings.embed_max_tokens if embed != "none" else None,
        "ann_threshold": settings.ann_threshold,
        "dense_storage": settings.dense_storage if embed != "none" else None,
        "bm25_k1": settings.bm25_k1,
        "bm25_b": settings.bm25_b,
        "bm25_stemmer": settings.bm25_stemmer,
        "format_version": layout.FORMAT_VERSION,
        **(
            {"backend": "milvus", "milvus_uri": redact_uri(settings.milvus_uri or "")}
            if settings.backend == "milvus"
            else {}
        ),
    }


def build_index(
    db_path: str | Path,
    index_root: str | Path,
    settings: Settings | None = None,
    progress: bool = True,
    **kw: Any,
) -> Path:
    """Build a snapshot of ``db_path`` under ``index_root`` and make it live; returns its path.

    The keyword arguments are `build_index_report`'s (encoder, cache_path, keep, force, wait, on_wait)."""
    return build_index_report(db_path, index_root, settings, progress, **kw).path


def build_index_report(
    db_path: str | Path,
    index_root: str | Path,
    settings: Settings | None = None,
    progress: bool = True,
    *,
    encoder: Any | None = None,
    cache_path: str | Path | None = None,
    keep: int = 2,
    force: bool = True,
    wait: float | None = 0.0,
    on_wait: Callable[[str], None] | None = None,
) -> BuildReport:
    """`build_index` with the per-stage report (used by the CLI summary and the benchmarks).

    ``force=False`` skips the build when the live snapshot was built from the same corpus
    fingerprint with the same index settings. When another build holds the root's lock, ``wait=0``
    raises `BuildError` at once naming it, ``wait=None`` waits for it, ``wait=S`` up to S seconds
    (``on_wait`` hears once who it waits for)."""
    settings = settings or Settings.from_env()
    db_path, root = Path(db_path), Path(index_root)
    embed = settings.embed
    if embed not in EMBED_CHOICES:
        raise BuildError(f"embed={embed!r}: expected one of {', '.join(EMBED_CHOICES)}")
    from openxiv.indexer.dense import STORAGES

    if settings.dense_storage not in STORAGES:
        raise BuildError(
            f"OPENXIV_DENSE_STORAGE={settings.dense_storage!r}: expected one of {', '.join(STORAGES)}"
        )
    if not db_path.is_file():
        raise BuildError(f"corpus database not found: {db_path} (create it with `openxiv ingest --db ...`)")
    root.mkdir(parents=True, exist_ok=True)
    (root / layout.SNAPSHOTS).mkdir(exist_ok=True)
    lock = BuildLock(root, wait=wait, on_wait=on_wait)
    try:
        lock.acquire()
    except BuildLocked as exc:
        raise BuildError(str(exc)) from exc
    try:
        cleanup_tmp(root, lock)
        return _build_locked(db_path, root, settings, progress, encoder, cache_path, keep, force, lock)
    finally:
        lock.release()


def _build_locked(
    db_path: Path,
    root: Path,
    settings: Settings,
    progress: bool,
    encoder: Any | None,
    cache_path: str | Path | None,
    keep: int,
    force: bool,
    lock: BuildLock,
) -> BuildReport:
    from openxiv.corpus.store import Store

    t_start = time.perf_counter()
    embed = settings.embed
    config = _build_config(settings, embed)

    source = Store.open_readonly(db_path)
    try:
        fingerprint = source.fingerprint()
        if source.stats()["papers"] == 0:
            raise BuildError(f"{db_path} holds no papers: ingest something first (`openxiv ingest`)")
        live = current_snapshot(root)
        if not force and live is not None and live.is_dir():
            with contextlib.suppress(Exception):
                m = read_manifest(live)
                if Manifest.of(m).corpus.fingerprint == fingerprint and m.get("build_config") == config:
                    return BuildReport(live, {}, m, reused=True)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        name = f"{stamp}-{fingerprint[:10]}"
        tmp = root / layout.SNAPSHOTS / f"{layout.TMP_PREFIX}{name}"
        tmp.mkdir()
        (tmp / layout.LEASE).touch()  # readers' leases (openxiv.indexer.locks.SnapshotLease)
        stages = _Stages(progress)
        try:
            with stages("copy"):
                source.copy_to(tmp / layout.CORPUS)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
    finally:
        source.close()

    try:
        manifest = _build_into(tmp, settings, config, stages, progress, encoder, cache_path, embed)
        manifest.update(
            snapshot=name,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            source_db=str(db_path.resolve()),
        )
        manifest["corpus"]["fingerprint"] = fingerprint
        final = root / layout.SNAPSHOTS / name
        with stages("switch"):
            _write_manifest(tmp, manifest, stages, t_start)
            try:
                verify_snapshot(tmp)
            except BadIndexError as exc:
                raise BuildError(f"{exc} (nothing was published; {layout.CURRENT} is unchanged)") from exc
            tmp.rename(final)
            switch_current(root, name)
            pruned = prune_snapshots(root, keep, lock)
            if manifest.get("backend") == "milvus":
                from openxiv.indexer.milvus_build import drop_unused, switch_aliases

                switch_aliases(settings, manifest)
                drop_unused(settings, root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest["build"]["pruned"] = pruned
    return BuildReport(final, stages.times, manifest)


@dataclass
class CorpusRead:
    """What a build reads from the snapshot's corpus copy (papers in row order, passages in id order)."""

    docs: list[Any]
    meta: PaperMeta
    stats: dict[str, Any]
    texts: list[str]
    """Passage texts."""
    rows: list[int]
    """Paper row of each passage."""
    ids: list[int]
    """Corpus passage id of each passage."""
    tldr: dict[str, Any] = field(default_factory=dict)
    """What `openxiv.indexer.tldrs.write_tldrs` wrote (the manifest's ``tldr``)."""
    sentences: dict[str, Any] = field(default_factory=dict)
    """What `openxiv.indexer.sentences.write_sentences` wrote (the manifest's ``sentences``)."""


def read_corpus(tmp: Path, stages: _Stages, progress: bool, stemmer: str) -> CorpusRead:
    """Read papers and passages from ``tmp``'s corpus copy; save the paper metadata arrays, the
    papers' tldrs (`openxiv.indexer.tldrs`) and their abstracts' sentences analysed with
    ``stemmer`` (`openxiv.indexer.sentences`)."""
    from openxiv.corpus.store import Store

    store = Store.open_readonly(tmp / layout.CORPUS)
    try:
        stats = store.stats()
        with stages("read"):
            docs = list(_bar(store.iter_papers(), stats["papers"], "read papers", progress))
            meta = PaperMeta.from_docs(docs)
            meta.save(tmp / layout.META)
            row_of = {d.arxiv_id: i for i, d in enumerate(docs)}
            out = CorpusRead(docs, meta, stats, [], [], [])
            for pv in _bar(store.iter_passages(), stats["passages"], "read passages", progress):
                out.texts.append(pv.text)
                out.rows.append(row_of[pv.arxiv_id])
                out.ids.append(pv.passage_id)
        with stages("tldr"):
            out.tldr = write_tldrs(tmp / layout.TLDR, build_tldrs(docs, store.lead_sections))
        with stages("sentences"):
            out.sentences = write_sentences(tmp / layout.SENTENCES, docs, stemmer)
    finally:
        store.close()
    return out


def _build_into(
    tmp: Path,
    settings: Settings,
    config: dict[str, Any],
    stages: _Stages,
    progress: bool,
    encoder: Any | None,
    cache_path: str | Path | None,
    embed: str,
) -> dict[str, Any]:
    corpus = read_corpus(tmp, stages, progress, settings.bm25_stemmer)
    docs, stats, p_texts, p_rows, p_ids = corpus.docs, corpus.stats, corpus.texts, corpus.rows, corpus.ids
    if settings.backend == "milvus":
        from openxiv.indexer.milvus_build import build_into_milvus

        manifest = build_into_milvus(tmp, settings, config, stages, progress, encoder, cache_path, corpus)
        return {**manifest, "tldr": corpus.tldr, "sentences": corpus.sentences}
    bm25_kw: dict[str, Any] = {"k1": settings.bm25_k1, "b": settings.bm25_b, "stemmer": settings.bm25_stemmer}
    with stages("bm25_papers"):
        sp = SparseIndex.build(
            [paper_bm25_text(d.title, d.abstract) for d in docs], progress=progress, **bm25_kw
        )
        sp.save(tmp / layout.BM25_PAPERS)
    passages: PassageIndex | None = None
    if p_texts:
        with stages("bm25_passages"):
            passages = PassageIndex.build(
                p_texts, np.asarray(p_rows), np.asarray(p_ids), len(docs), progress=progress, **bm25_kw
            )
            passages.save(tmp / layout.BM25_PASSAGES)

    embedding: dict[str, Any] = {"embedded": embed}
    counts = {"papers": len(docs), "passages": len(p_texts), "paper_vectors": 0, "passage_vectors": 0}
    if embed != "none":
        embedding.update(
            _embed(tmp, settings, stages, progress, encoder, cache_path, embed, docs, p_texts, counts)
        )
    return {
        "format_version": layout.FORMAT_VERSION,
        "build_config": config,
        "corpus": {
            "papers": len(docs),
            "passages": len(p_texts),
            "papers_with_fulltext": stats.get("papers_with_fulltext"),
            "sections": stats.get("sections"),
        },
        "counts": counts,
        "embedding": embedding,
        "bm25": {
            "library": "bm25s",
            "method": sp.model.method,
            "k1": settings.bm25_k1,
            "b": settings.bm25_b,
            "tokenizer": {
                "pattern": TOKEN_PATTERN,
                "lower": True,
                "stopwords": STOPWORDS,
                "stemmer": settings.bm25_stemmer,
            },
            "paper_text": "title + newline + abstract",
            "papers": sp.params,
            "passages": passages.sparse.params if passages is not None else None,
        },
        "fusion": fusion_manifest(settings),
        "tldr": corpus.tldr,
        "sentences": corpus.sentences,
        "versions": _versions(),
        "settings": settings.as_dict(),
    }


def _embed(
    tmp: Path,
    settings: Settings,
    stages: _Stages,
    progress: bool,
    encoder: Any | None,
    cache_path: str | Path | None,
    embed: str,
    docs: list[Any],
    p_texts: list[str],
    counts: dict[str, int],
) -> dict[str, Any]:
    from openxiv.indexer.dense import DenseIndex, use_all_cores

    use_all_cores()  # explicit: importing dense no longer sizes FAISS's thread pool
    info: dict[str, Any] = {}
    for sub, vectors, count_key in embed_vectors(
        tmp, settings, stages, progress, encoder, cache_path, embed, docs, p_texts, info
    ):
        index = DenseIndex.build(vectors, settings.ann_threshold, storage=settings.dense_storage)
        index.save(tmp / sub)
        info[sub] = index.info()
        counts[count_key] = int(index.ntotal)
    return info


def embed_vectors(
    tmp: Path,
    settings: Settings,
    stages: _Stages,
    progress: bool,
    encoder: Any | None,
    cache_path: str | Path | None,
    embed: str,
    docs: list[Any],
    p_texts: list[str],
    info: dict[str, Any],
) -> Iterator[tuple[str, np.ndarray, str]]:
    """Vectors of the papers and/or passages ``embed`` names, through the shared embedding cache:
    yields ``(layout part, vectors, count key)`` inside the part's stage timer, and fills ``info``
    (the manifest's ``embedding`` part). The snapshot keeps the encoder for query encoding."""
    from openxiv.indexer.embcache import EmbeddingCache, encode_cached
    from openxiv.indexer.embed import load_encoder, paper_text, save_snapshot_encoder

    with stages("load_model"):
        enc = encoder if encoder is not None else load_encoder(settings)
        # the snapshot carries its encoder: serving loads it from there (no export, no torch)
        save_snapshot_encoder(enc, tmp / layout.ENCODER)
    cache_file = Path(cache_path) if cache_path is not None else Path(settings.data_dir) / "embcache.sqlite"
    info.update(
        {
            "model": settings.model,
            "encoder": enc.name,
            "fingerprint": enc.fingerprint,
            "dim": int(enc.dim),
            "max_tokens": int(enc.max_tokens),
            "paper_text": "title + '. ' + abstract",
            "cache": str(cache_file.resolve()),
            "encoded": 0,
            "reused_from_cache": 0,
        }
    )
    jobs = []
    if embed in ("papers", "both"):
        jobs.append(
            (
                "embed_papers",
                layout.DENSE_PAPERS,
                [paper_text(d.title, d.abstract) for d in docs],
                "paper_vectors",
            )
        )
    if embed in ("passages", "both") and p_texts:
        jobs.append(("embed_passages", layout.DENSE_PASSAGES, p_texts, "passage_vectors"))
    with EmbeddingCache(cache_file) as cache:
        for stage, sub, texts, count_key in jobs:
            with stages(stage):
                before = cache.count(enc.fingerprint)
                vectors = encode_cached(
                    enc, texts, cache, progress=progress, batch_size=settings.embed_batch_size
                )
                encoded = cache.count(enc.fingerprint) - before
                yield sub, vectors, count_key
            info["encoded"] += encoded
            info["reused_from_cache"] += len(set(texts)) - encoded


def _write_manifest(tmp: Path, manifest: dict[str, Any], stages: _Stages, t_start: float) -> None:
    manifest["build"] = {
        "seconds": round(time.perf_counter() - t_start, 3),
        "stages_s": dict(stages.times),
        "host": platform.node(),
    }
    manifest["sizes_bytes"] = {
        p.name: (_dir_bytes(p) if p.is_dir() else p.stat().st_size) for p in sorted(tmp.iterdir())
    }
    manifest["sizes_bytes"]["total"] = _dir_bytes(tmp)
    write_manifest(tmp, manifest)


def snapshots(index_root: str | Path) -> list[Path]:
    """Complete snapshots under ``index_root``, oldest first."""
    return list_snapshots(Path(index_root))
