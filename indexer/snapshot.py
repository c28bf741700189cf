"""Index snapshots on disk: the ``CURRENT`` pointer, opening a snapshot read-only, housekeeping.

A snapshot is written completely under ``snapshots/.tmp-*`` by `openxiv.indexer.build`, renamed into
place, and only then made live by rewriting ``CURRENT`` through a temporary file and ``os.replace``
(atomic on POSIX). Readers resolve ``CURRENT`` once and never see a half-written snapshot; a build
that dies leaves ``CURRENT`` and the snapshot it names untouched.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openxiv.corpus.config import Settings
from openxiv.indexer import layout

__all__ = [
    "BadIndexError",
    "OpenIndex",
    "cleanup_tmp",
    "current_snapshot",
    "list_snapshots",
    "open_index",
    "prune_snapshots",
    "read_manifest",
    "resolve_snapshot",
    "switch_current",
]


class BadIndexError(RuntimeError):
    """An index directory that cannot be used; the message says what is wrong and what to do."""


def read_manifest(snapshot: Path) -> dict[str, Any]:
    """The snapshot's manifest, checked for the format this code reads."""
    path = snapshot / layout.MANIFEST
    if not path.is_file():
        raise BadIndexError(f"{snapshot} is not an index snapshot: {layout.MANIFEST} is missing")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BadIndexError(f"{path} is unreadable ({exc}); rebuild with `openxiv index build`") from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != layout.FORMAT_VERSION:
        raise BadIndexError(
            f"{path} has format version {version!r}, this openxiv reads version {layout.FORMAT_VERSION}: "
            "rebuild the index with `openxiv index build`"
        )
    return manifest


def current_snapshot(index_root: Path) -> Path | None:
    """The live snapshot named by ``CURRENT``, or ``None`` when nothing was built yet."""
    pointer = index_root / layout.CURRENT
    if not pointer.is_file():
        return None
    name = pointer.read_text(encoding="utf-8").strip()
    return index_root / layout.SNAPSHOTS / name if name else None


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
            "(build one with `openxiv index build --db DB --out DIR`)"
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


def cleanup_tmp(index_root: Path, max_age_s: float = 0.0) -> list[str]:
    """Remove ``.tmp-*`` build directories left by interrupted builds (older than ``max_age_s``)."""
    root = index_root / layout.SNAPSHOTS
    removed = []
    if root.is_dir():
        now = time.time()
        for p in root.iterdir():
            if p.name.startswith(layout.TMP_PREFIX) and now - p.stat().st_mtime >= max_age_s:
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p.name)
    for p in index_root.glob(f"{layout.CURRENT}.*.tmp"):
        p.unlink(missing_ok=True)
    return removed


def prune_snapshots(index_root: Path, keep: int = 2) -> list[str]:
    """Delete the oldest snapshots beyond ``keep``, never the one ``CURRENT`` names."""
    live = current_snapshot(index_root)
    snaps = list_snapshots(index_root)
    removed = []
    for p in snaps[: max(0, len(snaps) - max(keep, 1))]:
        if live is not None and p.resolve() == live.resolve():
            continue
        shutil.rmtree(p, ignore_errors=True)
        removed.append(p.name)
    return removed


@dataclass
class OpenIndex:
    """A snapshot opened read-only: what the service holds for its lifetime (or until a swap)."""

    path: Path
    manifest: dict[str, Any]
    backend: Any
    """`openxiv.indexer.hybrid.HybridBackend` (a `SearchBackend`)."""
    store: Any
    """Read-only `openxiv.corpus.store.Store` on the snapshot's corpus.sqlite."""
    _closed: bool = field(default=False, repr=False)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self.backend.close()
            self.store.close()

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
    """
    from openxiv.corpus.store import Store
    from openxiv.indexer.hybrid import HybridBackend

    settings = settings or Settings.from_env()
    snap = resolve_snapshot(Path(index_root))
    manifest = read_manifest(snap)
    for part in (layout.CORPUS, layout.META, layout.BM25_PAPERS):
        if not (snap / part).exists():
            raise BadIndexError(f"snapshot {snap} is incomplete: {part} is missing; rebuild the index")
    store = Store.open_readonly(snap / layout.CORPUS)
    try:
        backend = HybridBackend(snap, settings, manifest, encoder=encoder)
    except BaseException:
        store.close()
        raise
    return OpenIndex(path=snap, manifest=manifest, backend=backend, store=store)
