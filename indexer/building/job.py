"""`BuildJob`: corpus database -> a new index snapshot, switched in atomically, in named stages.

A job carries what its stages read once (`openxiv.indexer.building.stages.BuildSetup`: settings,
stage timer, progress, encoder, embedding cache; with the temporary snapshot directory, the
`BuildContext` every stage takes) and runs, each stage timed into the manifest's ``build.stages_s``:

1. ``copy``: a consistent copy of the corpus DB into the snapshot (``Store.copy_to``); everything
   below reads that copy, so an ingest running meanwhile cannot make the parts disagree;
2. ``read`` / ``tldr`` / ``sentences`` (`read_corpus`): papers -> metadata arrays and texts,
   passages, the stored per-row tldr and sentence tables;
3. the backend's stages, then ``references`` (`openxiv.indexer.building.references`: the papers'
   references and cited-by as arrays), which fill the typed `Manifest`: `openxiv.indexer.building.embedded`
   (``bm25_papers``, ``bm25_passages``, ``load_model``, ``embed_papers``, ``embed_passages``: bm25s
   matrices and FAISS indexes) or `openxiv.indexer.building.milvus` (the embed stages,
   ``milvus_analyse``, ``milvus_papers``, ``milvus_passages``: collections); neither imports the other;
4. ``switch``: the manifest written, `verify_snapshot` (every part opens and agrees with the
   manifest), ``.tmp-*`` renamed into place, ``CURRENT`` switched, old snapshots that no process
   holds pruned (and, for Milvus, the aliases moved and unused collections dropped).

The whole build runs under the index root's build lock (`openxiv.indexer.locks.BuildLock`): a
second build on the same root fails at once naming the first (or waits, ``wait=``). Any failure
removes the temporary directory and leaves ``CURRENT`` and the last good snapshot alone.

The build streams (issue 24, docs/scale.md «The streaming build»): the read stage keeps only the
metadata arrays and each passage's row and id (`CorpusRead`), and every later stage reads the
corpus copy again ``READ_CHUNK`` records at a time (`CorpusRead.paper_columns`,
`CorpusRead.passage_text_chunks`): bm25s matrices from spilled per-chunk postings
(`openxiv.indexer.building.bm25stream`), FAISS filled chunk by chunk from the embedding cache, the
tldr/sentence tables row by row. A filter on which papers a build takes belongs in those two
methods, so every stage sees the same rows; Milvus still takes every record at once
(``CorpusRead.docs`` / ``texts``).
"""

from __future__ import annotations

import contextlib
import platform
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer.building.references import write_references
from openxiv.indexer.building.stages import (
    EMBED_CHOICES,
    BuildContext,
    BuildError,
    BuildSetup,
    StageTimer,
    build_config,
    read_corpus,
)
from openxiv.indexer.locks import BuildLock, BuildLocked
from openxiv.indexer.manifest import BuildInfo, Manifest, ReferencesInfo
from openxiv.indexer.manifest import read as read_manifest
from openxiv.indexer.manifest import write as write_manifest
from openxiv.indexer.snapshot import (
    BadIndexError,
    cleanup_tmp,
    current_snapshot,
    prune_snapshots,
    switch_current,
    verify_snapshot,
)
from openxiv.indexer.tables import sentences, tldrs

__all__ = ["BuildError", "BuildJob", "BuildReport", "build_index", "build_index_report"]


@dataclass
class BuildReport:
    path: Path
    manifest: Manifest
    stages: dict[str, float] = field(default_factory=dict)
    reused: bool = False
    """True when the live snapshot already matched the corpus and settings (nothing was built)."""
    pruned: list[str] = field(default_factory=list)
    """Snapshots this build deleted (beyond ``keep``)."""


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@dataclass
class BuildJob:
    """One build of ``db_path`` into ``root``; `run` checks, locks and runs the stages."""

    db_path: Path
    root: Path
    setup: BuildSetup
    keep: int = 2
    force: bool = True

    @property
    def settings(self) -> Settings:
        return self.setup.settings

    @property
    def timer(self) -> StageTimer:
        return self.setup.timer

    def check(self) -> None:
        """`BuildError` for a setting or input the build cannot use; nothing is touched yet."""
        from openxiv.indexer.engine.dense import STORAGES

        s = self.settings
        if s.embed not in EMBED_CHOICES:
            raise BuildError(f"embed={s.embed!r}: expected one of {', '.join(EMBED_CHOICES)}")
        if s.dense_storage not in STORAGES:
            raise BuildError(
                f"OPENXIV_DENSE_STORAGE={s.dense_storage!r}: expected one of {', '.join(STORAGES)}"
            )
        if not self.db_path.is_file():
            raise BuildError(
                f"corpus database not found: {self.db_path} (create it with `openxiv ingest --db ...`)"
            )

    def run(self, wait: float | None = 0.0, on_wait: Callable[[str], None] | None = None) -> BuildReport:
        self.check()
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / layout.SNAPSHOTS).mkdir(exist_ok=True)
        lock = BuildLock(self.root, wait=wait, on_wait=on_wait)
        try:
            lock.acquire()
        except BuildLocked as exc:
            raise BuildError(str(exc)) from exc
        try:
            cleanup_tmp(self.root, lock)
            return self._locked(lock)
        finally:
            lock.release()

    def _locked(self, lock: BuildLock) -> BuildReport:
        t_start = time.perf_counter()
        copied = self._copy()
        if isinstance(copied, BuildReport):
            return copied
        ctx, fingerprint = copied
        try:
            manifest = self._stages(ctx)
            manifest.snapshot = ctx.tmp.name.removeprefix(layout.TMP_PREFIX)
            manifest.created_at = datetime.now(UTC).isoformat(timespec="seconds")
            manifest.source_db = str(self.db_path.resolve())
            manifest.corpus.fingerprint = fingerprint
            with self.timer("switch"):
                final, pruned = self._publish(ctx, manifest, lock, t_start)
        except BaseException:
            shutil.rmtree(ctx.tmp, ignore_errors=True)
            raise
        return BuildReport(final, manifest, self.timer.times, pruned=pruned)

    def _copy(self) -> tuple[BuildContext, str] | BuildReport:
        """The ``copy`` stage into a new temporary snapshot; the live snapshot's report instead when
        ``force`` is off and it was built from the same corpus with the same settings, and its stored
        tldr and sentence tables were made by this code's rules (`_tables_current`)."""
        from openxiv.corpus.store import Store

        source = Store.open_readonly(self.db_path)
        try:
            fingerprint = source.fingerprint()
            if source.stats()["papers"] == 0:
                raise BuildError(f"{self.db_path} holds no papers: ingest something first (`openxiv ingest`)")
            live = current_snapshot(self.root)
            if not self.force and live is not None and live.is_dir():
                with contextlib.suppress(Exception):
                    m = read_manifest(live)
                    if (
                        m.corpus.fingerprint == fingerprint
                        and m.build_config == build_config(self.settings)
                        and _tables_current(m)
                    ):
                        return BuildReport(live, m, reused=True)
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
            tmp = self.root / layout.SNAPSHOTS / f"{layout.TMP_PREFIX}{stamp}-{fingerprint[:10]}"
            tmp.mkdir()
            (tmp / layout.LEASE).touch()  # readers' leases (openxiv.indexer.locks.SnapshotLease)
            try:
                with self.timer("copy"):
                    source.copy_to(tmp / layout.CORPUS)
            except BaseException:
                shutil.rmtree(tmp, ignore_errors=True)
                raise
        finally:
            source.close()
        return BuildContext.of(self.setup, tmp), fingerprint

    def _stages(self, ctx: BuildContext) -> Manifest:
        """The read stages, then the backend's stages, then ``references``; the manifest they filled."""
        corpus = read_corpus(ctx)
        if self.settings.backend == "milvus":
            from openxiv.indexer.building.milvus import write_milvus

            manifest = write_milvus(ctx, corpus)
        else:
            from openxiv.indexer.building.embedded import write_embedded

            manifest = write_embedded(ctx, corpus)
        with self.timer("references"):
            manifest.references = ReferencesInfo(
                **write_references(
                    ctx.tmp / layout.CORPUS, ctx.tmp / layout.REFERENCES, corpus.meta.arxiv_ids
                )
            )
        return manifest

    def _publish(
        self, ctx: BuildContext, manifest: Manifest, lock: BuildLock, t_start: float
    ) -> tuple[Path, list[str]]:
        """Write the manifest, verify, rename into place, switch ``CURRENT``, prune; the snapshot's
        path and the snapshots pruned."""
        tmp = ctx.tmp
        manifest.build = BuildInfo(
            seconds=round(time.perf_counter() - t_start, 3),
            stages_s=dict(self.timer.times),
            host=platform.node(),
        )
        sizes = {p.name: (_dir_bytes(p) if p.is_dir() else p.stat().st_size) for p in sorted(tmp.iterdir())}
        manifest.sizes_bytes = {**sizes, "total": _dir_bytes(tmp)}
        write_manifest(tmp, manifest)
        try:
            verify_snapshot(tmp)
        except BadIndexError as exc:
            raise BuildError(f"{exc} (nothing was published; {layout.CURRENT} is unchanged)") from exc
        name = str(manifest.snapshot)
        final = self.root / layout.SNAPSHOTS / name
        tmp.rename(final)
        switch_current(self.root, name)
        pruned = prune_snapshots(self.root, self.keep, lock)
        if manifest.milvus is not None:
            from openxiv.indexer.building.milvus import drop_unused, switch_aliases

            switch_aliases(self.settings, manifest.milvus)
            drop_unused(self.settings, self.root)
        return final, pruned


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


def _tables_current(m: Manifest) -> bool:
    """The snapshot's stored tldr and sentence tables were made under this code's rules. A table made
    under other rules (an older openxiv) is not used: the service computes per hit, the same answers
    more slowly. A reuse check (``--if-changed``) that ignored it would keep that snapshot forever."""
    return (
        m.tldr is not None
        and m.tldr.rules == tldrs.rules()
        and m.sentences is not None
        and m.sentences.rules == sentences.rules()
        and m.references is not None  # built before references: their requests would be a 409
        # built before citation counts (issue 41): no resolver ran, min_citation would be a 400
        and m.references.index_bytes > 0
    )


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
    cache = Path(cache_path) if cache_path is not None else Path(settings.data_dir) / "embcache.sqlite"
    setup = BuildSetup(settings, StageTimer(progress), progress, encoder, cache)
    job = BuildJob(Path(db_path), Path(index_root), setup, keep, force)
    return job.run(wait, on_wait)
