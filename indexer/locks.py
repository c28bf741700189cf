"""OS file locks that let builds and readers share one index root safely.

Two kinds, both ``flock(2)`` locks, which the kernel releases when the holding file descriptor is
closed, including when its process dies (``kill -9``, OOM, power loss of the process): a lock can
never be left behind by a dead process, so no lock needs a timeout or a manual cleanup.

* **The build lock** (`BuildLock`, ``INDEX_DIR/build.lock``), exclusive: held by a build for its whole
  run. Builds on one root are serialised by it, and every change to ``snapshots/`` other than a
  reader's lease (creating ``.tmp-*`` directories, publishing, pruning, removing leftovers) happens
  while holding it. The file holds the holder's pid, host and start time, so a second build can say
  who it is waiting for.
* **Snapshot leases** (`SnapshotLease`, ``<snapshot>/lease.lock``), shared: every process that opens a
  snapshot (`openxiv.indexer.snapshot.open_index`, hence every server and worker) holds one until it
  closes the snapshot. Pruning deletes a snapshot only after taking the same lock *exclusively* and
  without waiting, so a snapshot some live process reads is skipped (see `try_exclusive_lease`).

``flock`` locks work between processes on one machine and on local file systems; an index root on a
network file system shared by several hosts is not protected by them (docs/indexing.md).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import platform
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openxiv.indexer import layout

__all__ = ["BuildLock", "BuildLocked", "LeaseLost", "SnapshotLease", "try_exclusive_lease"]

POLL_S = 0.2
"""How often a waiting build retries the lock."""


class BuildLocked(RuntimeError):
    """Another build holds the index root's build lock; the message names it (pid, host, start)."""


class LeaseLost(RuntimeError):
    """The snapshot was pruned between finding it and locking it (the caller may look again)."""


def _describe(holder: dict[str, Any]) -> str:
    if not holder.get("pid"):
        return "another build (holder unknown: it is just starting)"
    return f"pid {holder['pid']} on {holder.get('host', '?')}, started {holder.get('started', '?')}"


class BuildLock:
    """The exclusive lock of one index root: ``with BuildLock(root, wait=...)``.

    ``wait=0`` fails at once with `BuildLocked` when another build holds it, ``wait=None`` waits as
    long as it takes, ``wait=S`` waits up to S seconds. ``on_wait`` is called once with a sentence
    naming the holder when this build has to wait.
    """

    def __init__(self, index_root: Path, wait: float | None = 0.0, on_wait: Any = None) -> None:
        self.root = Path(index_root)
        self.path = self.root / layout.BUILD_LOCK
        self.wait = wait
        self.on_wait = on_wait
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def holder(self) -> dict[str, Any]:
        """What the lock file says about its holder (empty while a holder is writing it)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8") or "{}")
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = None if self.wait is None else time.monotonic() + max(0.0, self.wait)
        told = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    who = _describe(self.holder())
                    if deadline is not None and time.monotonic() >= deadline:
                        waited = f" after waiting {self.wait:g} s" if self.wait else ""
                        raise BuildLocked(
                            f"another build is running on {self.root}{waited}: {who} (lock {self.path}); "
                            "let it finish, or pass --wait [SECONDS] to queue behind it"
                        ) from None
                    if not told and self.on_wait is not None:
                        self.on_wait(f"waiting for the build that holds {self.path}: {who}")
                        told = True
                    time.sleep(POLL_S)
        except BaseException:
            os.close(fd)
            raise
        info = {
            "pid": os.getpid(),
            "host": platform.node(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.ftruncate(fd, 0)  # the next reader of the file sees no stale holder
            os.close(fd)  # closing the descriptor releases the flock

    def __enter__(self) -> BuildLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


class SnapshotLease:
    """A shared lock on ``<snapshot>/lease.lock`` held while a process reads the snapshot.

    Protocol (the reader's half of the proof in `try_exclusive_lease`): open the lease file, take
    ``LOCK_SH`` (waiting while a pruner holds ``LOCK_EX``), then check that the path still names the
    file that was locked. A pruner renames the snapshot away before it releases its exclusive lock,
    so a reader that got its shared lock after a prune finds the path gone (`LeaseLost`) and never
    uses a deleted snapshot. Old snapshots without a lease file get one (when the file system is
    writable by this process; otherwise it is read without a lease, `held` is False, and only a
    rebuild, which writes the lease file into every new snapshot, makes it safe from pruning).
    """

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = Path(snapshot)
        self.path = self.snapshot / layout.LEASE
        self._fd: int | None = _open_lease(self.path, os.O_RDONLY)
        if self._fd is None:
            return
        try:
            fcntl.flock(self._fd, fcntl.LOCK_SH)
            if not _same_file(self._fd, self.path):
                raise LeaseLost(f"snapshot {self.snapshot.name} was pruned while it was being opened")
        except BaseException:
            self.release()
            raise

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)


def try_exclusive_lease(snapshot: Path) -> int | None:
    """An fd holding ``LOCK_EX`` on the snapshot's lease file, or ``None`` when a reader holds it.

    Why pruning with it never deletes a snapshot a live process reads: a reader holds ``LOCK_SH``
    from before it opens any file of the snapshot until after it closed them all, and the kernel keeps
    that lock exactly as long as the reader's process lives. ``LOCK_EX | LOCK_NB`` succeeds only when
    no shared lock is held, and while it is held no reader can get one. The pruner then renames the
    snapshot directory away (so its path no longer leads to it) before deleting it and closing the fd;
    a reader that queued on the lock finds the path gone when it gets the lock (`SnapshotLease`) and
    gives up. So at no time is a snapshot deleted while a process holds it open.
    """
    fd = _open_lease(snapshot / layout.LEASE, os.O_RDONLY)
    if fd is None:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    if not _same_file(fd, snapshot / layout.LEASE):
        os.close(fd)
        return None
    return fd


def _open_lease(path: Path, mode: int) -> int | None:
    """Open a lease file, creating it in snapshots built before leases existed; ``None`` when it is
    missing and cannot be created here (read-only file system, another user's directory)."""
    try:
        return os.open(path, mode)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise LeaseLost(f"snapshot {path.parent.name} no longer exists") from None
    try:
        return os.open(path, mode | os.O_CREAT, 0o644)
    except FileNotFoundError:
        raise LeaseLost(f"snapshot {path.parent.name} no longer exists") from None
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return None
        raise


def _same_file(fd: int, path: Path) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)
