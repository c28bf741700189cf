"""Index snapshots on disk: the ``CURRENT`` pointer, opening a snapshot read-only, housekeeping.

A snapshot is written completely under ``snapshots/.tmp-*`` by `openxiv.indexer.building.job`, checked
complete (`verify_snapshot`), renamed into place, and only then made live by rewriting ``CURRENT``
through a temporary file and ``os.replace`` (atomic on POSIX). Readers resolve ``CURRENT`` once and
never see a half-written snapshot; a build that dies leaves ``CURRENT`` and the snapshot it names
untouched.

Builds on one root are serialised by the build lock, and readers hold a lease on the snapshot they
read (`openxiv.indexer.locks`): `cleanup_tmp` and `prune_snapshots` run only under the build lock,
and pruning skips every leased snapshot.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer import manifest as manifest_file
from openxiv.indexer.locks import BuildLock, LeaseLost, SnapshotLease, try_exclusive_lease
from openxiv.indexer.manifest import BadIndexError, Manifest
from openxiv.indexer.tables.sentences import SENT_PTR_FILE, SentenceTable
from openxiv.indexer.tables.tldrs import OFFSETS_FILE as TLDR_OFFSETS
from openxiv.indexer.tables.tldrs import TldrTable

__all__ = [
    "BadIndexError",
    "OpenIndex",
    "cleanup_tmp",
    "current_snapshot",
    "list_snapshots",
    "missing_parts",
    "open_index",
    "prune_snapshots",
    "required_parts",
    "resolve_snapshot",
    "switch_current",
    "verify_snapshot",
]

OPEN_RETRIES = 3
"""Times `open_index` re-reads ``CURRENT`` when the snapshot it named was pruned under it."""


def current_snapshot(index_root: Path) -> Path | None:
    """The live snapshot named by ``CURRENT``, or ``None`` when nothing was built yet."""
    pointer = index_root / layout.CURRENT
    if not pointer.is_file():
        return None
    name = pointer.read_text(encoding="utf-8").strip()
    if not name or "/" in name or "\x00" in name or name.startswith("."):
        return None  # empty, or not a plain snapshot name (never follow it out of snapshots/)
    return index_root / layout.SNAPSHOTS / name


def resolve_snapshot(index_dir: Path) -> Path:
    """``index_dir`` may be an index root (follow ``CURRENT``) or a snapshot directory itself."""
    index_dir = Path(index_dir)
    if not index_dir.exists():
        raise BadIndexError(f"index directory not found: {index_dir} (build one with `openxiv index build`)")
    if not index_dir.is_dir():
        raise BadIndexError(f"{index_dir} is a file, expected an index directory")
    if (index_dir / layout.MANIFEST).is_file():
        return index_dir
    snap = current_snapshot(index_dir)
    if snap is None:
        raise BadIndexError(
            f"{index_dir} holds no index: no {layout.CURRENT} file and no {layout.MANIFEST} "
            "(build one with `openxiv index build --db DB --index DIR`)"
        )
    if not snap.is_dir():
        raise BadIndexError(f"{index_dir}/{layout.CURRENT} names {snap.name}, which does not exist; rebuild")
    return snap


def switch_current(index_root: Path, snapshot_name: str) -> None:
    """Point ``CURRENT`` at ``snapshot_name`` atomically (temp file + fsync + os.replace)."""
    tmp = index_root / f"{layout.CURRENT}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(snapshot_name + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, index_root / layout.CURRENT)
    _fsync_dir(index_root)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def list_snapshots(index_root: Path) -> list[Path]:
    """Complete snapshots, oldest first (names start with their UTC build time)."""
    root = index_root / layout.SNAPSHOTS
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith(layout.TMP_PREFIX) and (p / layout.MANIFEST).is_file()
    )


def _require_lock(index_root: Path, lock: BuildLock) -> None:
    if not lock.held or lock.root.resolve() != Path(index_root).resolve():
        raise RuntimeError(f"this needs the build lock of {index_root} (openxiv.indexer.locks.BuildLock)")


def cleanup_tmp(index_root: Path, lock: BuildLock) -> list[str]:
    """Remove ``.tmp-*`` directories (and ``CURRENT.*.tmp`` files) that dead builds left behind.

    Why everything removed here is provably dead: a ``.tmp-*`` directory is created, filled, renamed
    and removed only by a build (or a prune, which runs inside a build) while it holds the root's
    exclusive build lock, and that lock is held by one process at a time and released by the kernel
    when its holder exits or dies. The caller must hold the lock (checked), so no other build is
    running on this root: any ``.tmp-*`` still here belongs to a build that has ended without cleaning
    up (killed, crashed, power cut). A running build's directory can therefore never be removed.
    """
    _require_lock(index_root, lock)
    root = index_root / layout.SNAPSHOTS
    removed = []
    if root.is_dir():
        for p in root.iterdir():
            if p.name.startswith(layout.TMP_PREFIX):
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p.name)
    for p in index_root.glob(f"{layout.CURRENT}.*.tmp"):
        p.unlink(missing_ok=True)
    return removed


def prune_snapshots(index_root: Path, keep: int, lock: BuildLock) -> list[str]:
    """Delete the oldest snapshots beyond ``keep``: never the one ``CURRENT`` names, never one that a
    live process holds open (its lease, see `openxiv.indexer.locks.try_exclusive_lease`), which is
    skipped and pruned by a later build once nobody reads it. Runs under the build lock (checked),
    so ``CURRENT`` cannot move meanwhile by another build. A snapshot is first renamed to
    ``.tmp-pruned-*`` while its lease is held exclusively, so no reader can find it any more, then
    deleted; a crash midway leaves a ``.tmp-*`` directory that the next build removes."""
    _require_lock(index_root, lock)
    live = current_snapshot(index_root)
    snaps = list_snapshots(index_root)
    removed = []
    for p in snaps[: max(0, len(snaps) - max(keep, 1))]:
        if live is not None and p.resolve() == live.resolve():
            continue
        try:
            fd = try_exclusive_lease(p)
        except LeaseLost:
            continue
        if fd is None:
            continue  # a live reader holds it
        try:
            trash = p.with_name(layout.PRUNE_PREFIX + p.name)
            p.rename(trash)
            shutil.rmtree(trash, ignore_errors=True)
        finally:
            os.close(fd)
        removed.append(p.name)
    return removed


def required_parts(manifest: Manifest) -> set[str]:
    """The files and folders a snapshot with this manifest must hold: every part the manifest
    declares (``sizes_bytes``) and every part its counts imply."""
    counts = manifest.counts
    # the lease file is not data: readers create it when missing, and a read-only copy has none
    parts = {k for k in manifest.sizes_bytes if k not in ("total", layout.LEASE)}
    parts |= {layout.MANIFEST, layout.CORPUS, layout.META}
    if manifest.is_milvus:
        return parts  # the text and vector indexes live in Milvus collections
    parts.add(layout.BM25_PAPERS)
    if counts.passages:
        parts.add(layout.BM25_PASSAGES)
    if counts.paper_vectors:
        parts.add(layout.DENSE_PAPERS)
    if counts.passage_vectors:
        parts.add(layout.DENSE_PASSAGES)
    return parts


def missing_parts(snapshot: Path, manifest: Manifest) -> list[str]:
    """Parts of `required_parts` that are not on disk (a few ``stat`` calls: cheap enough for probes)."""
    return sorted(part for part in required_parts(manifest) if not (Path(snapshot) / part).exists())


def _check_row_tables(
    snapshot: Path, manifest: Manifest, needed: set[str], bad: Callable[[str], BadIndexError]
) -> None:
    """The stored tldr and sentence tables (optional parts) hold the manifest's papers."""
    papers = manifest.counts.papers
    tldr = manifest.tldr
    if tldr is not None:
        if layout.TLDR not in needed:
            raise bad(f"the manifest has tldrs but {layout.TLDR} is not among its parts")
        offsets = np.load(snapshot / layout.TLDR / TLDR_OFFSETS, mmap_mode="r")
        if offsets.size - 1 != tldr.papers:
            raise bad(f"{layout.TLDR} holds {offsets.size - 1} papers, the manifest counts {tldr.papers}")
        if tldr.papers != papers:
            raise bad(f"{layout.TLDR} holds {tldr.papers} papers, the manifest counts {papers} papers")
    if manifest.sentences is not None:
        if layout.SENTENCES not in needed:
            raise bad(f"the manifest has sentences but {layout.SENTENCES} is not among its parts")
        ptr = np.load(snapshot / layout.SENTENCES / SENT_PTR_FILE, mmap_mode="r")
        if ptr.size - 1 != papers:
            raise bad(f"{layout.SENTENCES} holds {ptr.size - 1} papers, the manifest counts {papers} papers")


def verify_snapshot(snapshot: Path) -> Manifest:
    """Open every part of ``snapshot`` and check it against the manifest; the manifest, or
    `BadIndexError` naming what is missing or disagrees.

    Checked: the manifest reads; every part it declares (``sizes_bytes``) and every part its counts
    imply (corpus, paper metadata, BM25 over papers; BM25 over passages when there are passages;
    dense indexes when there are vectors) exists and loads; the corpus copy, the metadata, the BM25
    matrices and the FAISS indexes hold exactly the papers, passages and vectors the manifest counts.
    The query encoder is not loaded (the build that calls this has just used it).
    """
    from openxiv.corpus.store import Store
    from openxiv.indexer.engine.meta import PaperMeta
    from openxiv.indexer.engine.sparse import PassageIndex, SparseIndex

    snapshot = Path(snapshot)
    manifest = manifest_file.read(snapshot)
    counts = manifest.counts

    def bad(what: str) -> BadIndexError:
        return BadIndexError(f"snapshot {snapshot.name} is incomplete: {what}; rebuild the index")

    needed = required_parts(manifest)
    missing = missing_parts(snapshot, manifest)
    if missing:
        raise bad(f"{', '.join(missing)} missing")

    def agree(part: str, what: str, found: int, counted: int | None, key: str) -> None:
        if found != counted:
            raise bad(f"{part} holds {found} {what}, the manifest counts {counted} {key}")

    try:
        with Store.open_readonly(snapshot / layout.CORPUS) as store:
            stats = store.stats()
        agree(layout.CORPUS, "papers", stats["papers"], counts.papers, "papers")
        agree(layout.CORPUS, "passages", stats["passages"], counts.passages, "passages")
        agree(layout.META, "papers", PaperMeta.load(snapshot / layout.META).n, counts.papers, "papers")
        _check_row_tables(snapshot, manifest, needed, bad)
        if manifest.milvus is not None:
            from openxiv.indexer.engine.milvus_backend import collection_counts

            found_in = collection_counts(manifest.milvus)
            agree("Milvus collection papers", "entities", found_in["papers"], counts.papers, "papers")
            if "passages" in found_in:
                agree(
                    "Milvus collection passages",
                    "entities",
                    found_in["passages"],
                    counts.passages,
                    "passages",
                )
            return manifest
        papers = SparseIndex.load(snapshot / layout.BM25_PAPERS).n_docs
        agree(layout.BM25_PAPERS, "papers", papers, counts.papers, "papers")
        if layout.BM25_PASSAGES in needed:
            passages = PassageIndex.load(snapshot / layout.BM25_PASSAGES)
            agree(layout.BM25_PASSAGES, "passages", passages.n_passages, counts.passages, "passages")
        for part, counted, key in (
            (layout.DENSE_PAPERS, counts.paper_vectors, "paper_vectors"),
            (layout.DENSE_PASSAGES, counts.passage_vectors, "passage_vectors"),
        ):
            if part in needed:
                from openxiv.indexer.engine.dense import DenseIndex

                agree(part, "vectors", DenseIndex.load(snapshot / part).ntotal, counted, key)
    except BadIndexError:
        raise
    except Exception as exc:  # a part that exists but does not load
        raise bad(f"a part does not load ({type(exc).__name__}: {exc})") from exc
    return manifest


@dataclass
class OpenIndex:
    """A snapshot opened read-only: what the service holds for its lifetime (or until a swap)."""

    path: Path
    manifest: Manifest
    backend: Any
    """A `SearchBackend`: `openxiv.indexer.engine.hybrid.HybridBackend`, or
    `openxiv.indexer.engine.milvus_backend.MilvusBackend` when the manifest says ``"backend": "milvus"``."""
    store: Any
    """Read-only `openxiv.corpus.store.Store` on the snapshot's corpus.sqlite."""
    tldrs: TldrTable | None = None
    """The papers' tldrs stored at build (``None``: built before them, or under other tldr rules:
    each hit's tldr is computed)."""
    sentences: SentenceTable | None = None
    """The abstracts' sentences and analysed terms stored at build (``None``: built before them, or
    under other rules: a hit's abstract is split and analysed for its evidence)."""
    lease: SnapshotLease | None = field(default=None, repr=False)
    """This process's shared lock on the snapshot: no build prunes it until `close`."""
    _closed: bool = field(default=False, repr=False)

    @property
    def has_citations(self) -> bool:
        """The snapshot stores in-corpus citation counts (built after issue 41)."""
        meta = getattr(self.backend, "meta", None)
        return meta is not None and meta.citations is not None

    def citation_count(self, arxiv_id: str) -> int | None:
        """The paper's in-corpus citation count (papers of this snapshot citing it); ``None`` when the
        snapshot was built before counts were stored or holds no such paper."""
        meta = getattr(self.backend, "meta", None)
        return meta.citation_count(arxiv_id) if meta is not None else None

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self.backend.close()
                self.store.close()
            finally:
                if self.lease is not None:
                    self.lease.release()  # only after every file of the snapshot is closed

    def __enter__(self) -> OpenIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_index(
    index_root: str | Path, settings: Settings | None = None, encoder: Any | None = None
) -> OpenIndex:
    """Open the live snapshot of ``index_root`` (or a snapshot directory given directly), read-only.

    Raises `BadIndexError` with a message that says what is wrong with a missing or bad directory.
    ``encoder`` lets a caller share one already loaded query encoder between snapshots.
    The process holds a lease on the snapshot until `OpenIndex.close` (or its exit), so no build
    prunes it meanwhile.
    """
    settings = settings or Settings.from_env()
    for attempt in range(OPEN_RETRIES):
        snap = resolve_snapshot(Path(index_root))
        try:
            lease = SnapshotLease(snap)
        except LeaseLost as exc:
            # pruned between reading CURRENT and locking it: CURRENT names a newer one by now
            if snap == Path(index_root) or attempt == OPEN_RETRIES - 1:
                raise BadIndexError(f"{exc}; open the index again") from exc
            continue
        try:
            return _open_leased(snap, settings, encoder, lease)
        except BaseException:
            lease.release()
            raise
    raise AssertionError("unreachable")  # pragma: no cover


def _open_leased(snap: Path, settings: Settings, encoder: Any | None, lease: SnapshotLease) -> OpenIndex:
    from openxiv.corpus.store import Store
    from openxiv.indexer.engine.evidence import stemmer_of
    from openxiv.indexer.engine.hybrid import HybridBackend

    manifest = manifest_file.read(snap)
    milvus = manifest.is_milvus
    for part in (layout.CORPUS, layout.META) if milvus else (layout.CORPUS, layout.META, layout.BM25_PAPERS):
        if not (snap / part).exists():
            raise BadIndexError(f"snapshot {snap} is incomplete: {part} is missing; rebuild the index")
    store = Store.open_readonly(snap / layout.CORPUS)
    try:
        if milvus:
            from openxiv.indexer.engine.milvus_backend import MilvusBackend

            backend: Any = MilvusBackend(snap, settings, manifest, encoder=encoder)
        else:
            backend = HybridBackend(snap, settings, manifest, encoder=encoder)
    except BaseException:
        store.close()
        raise
    backend.titles = store.find_by_title  # exact-title queries pin their paper first (engine.tiling)
    meta = backend.meta
    table = TldrTable.load(snap / layout.TLDR, meta.n, meta.row_of)
    sentences = SentenceTable.load(snap / layout.SENTENCES, meta.n, meta.row_of, stemmer_of(manifest))
    return OpenIndex(
        path=snap,
        manifest=manifest,
        backend=backend,
        store=store,
        tldrs=table,
        sentences=sentences,
        lease=lease,
    )
