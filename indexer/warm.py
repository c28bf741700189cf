"""Bringing a snapshot's search files into memory before the requests that need them.

A server that opens a snapshot maps its arrays (BM25 matrices, feedback's rows, metadata, vectors)
and reads each page the first time a query touches it: right after a start or a reload every query
waits on the disk (at 2.7M papers a cold p95 was ten times the warm one: BENCHMARKS.md «Scale
(streaming build)», the `cold` rows). `Warmer` reads the snapshot's hot files once, in the order a search
touches them (the paper side, feedback's rows, the metadata, the passage side, the vectors, then
the tldr, sentence and reference tables a page shows), after asking the kernel to read them ahead
(``posix_fadvise(WILLNEED)``). The pages land in the page cache, which every worker process maps,
so one warm-up serves them all. The corpus copy (``corpus.sqlite``, tens of GB at millions of
papers, read a page of hits at a time) is left to the cache as requests read it.

Reading stops between chunks when `Warmer.stop` is called (a reload, a shutdown). Progress is the
`WarmState` the server shows in ``/readyz``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from openxiv.indexer import layout

__all__ = ["HOT_PARTS", "WarmState", "Warmer", "hot_files"]

log = logging.getLogger("openxiv.indexer")

HOT_PARTS = (
    layout.BM25_PAPERS,
    layout.META,
    layout.BM25_PASSAGES,
    layout.DENSE_PAPERS,
    layout.DENSE_PASSAGES,
    layout.TLDR,
    layout.SENTENCES,
    layout.REFERENCES,
)
"""The snapshot's folders a search reads, in the order it reads them."""
_CHUNK = 8 << 20


def hot_files(snapshot: Path) -> list[Path]:
    """The files of `HOT_PARTS` in ``snapshot``, part by part (sorted by name within a part)."""
    out: list[Path] = []
    for part in HOT_PARTS:
        folder = snapshot / part
        if folder.is_dir():
            out += sorted(p for p in folder.rglob("*") if p.is_file())
    return out


@dataclass(frozen=True)
class WarmState:
    """How far a snapshot's warm-up has come."""

    state: str
    """``off`` (not asked), ``warming``, ``warm``, ``stopped`` or ``failed``."""
    files: int
    bytes_total: int
    bytes_done: int
    seconds: float

    def describe(self) -> str:
        if self.state == "off":
            return "off"
        if self.state == "warming":
            return f"warming: {_size_text(self.bytes_done)} of {_size_text(self.bytes_total)} in {self.seconds:.1f} s"
        return f"{self.state}: {_size_text(self.bytes_done)} of {self.files} files in {self.seconds:.1f} s"


def _size_text(n: int) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


class Warmer:
    """Reads ``snapshot``'s hot files on a daemon thread (`start`), or in the caller (`run`)."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = Path(snapshot)
        self.files = hot_files(self.snapshot)
        self.total = sum(_size(p) for p in self.files)
        self._done = 0
        self._state = "warming"
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self._stop = threading.Event()
        self._finished = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Warmer:
        self._thread = threading.Thread(target=self.run, name="openxiv-warm", daemon=True)
        self._thread.start()
        return self

    def run(self) -> WarmState:
        log.info(
            "warming snapshot %s: %d files, %.1f MiB", self.snapshot.name, len(self.files), self.total / 2**20
        )
        try:
            buf = bytearray(_CHUNK)
            for path in self.files:
                if self._stop.is_set():
                    break
                self._read(path, buf)
            self._state = "stopped" if self._stop.is_set() else "warm"
        except OSError as exc:  # a file gone under a reload: the searches will say so themselves
            self._state = "failed"
            log.warning("warming snapshot %s stopped: %s", self.snapshot.name, exc)
        finally:
            self._t1 = time.monotonic()
            self._finished.set()
        log.info("snapshot %s %s", self.snapshot.name, self.state().describe())
        return self.state()

    def _read(self, path: Path, buf: bytearray) -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            if hasattr(os, "posix_fadvise"):
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            view = memoryview(buf)
            while not self._stop.is_set():
                n = os.readv(fd, [view])
                if n <= 0:
                    break
                self._done += n
        finally:
            os.close(fd)

    def stop(self) -> None:
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    def state(self) -> WarmState:
        end = self._t1 if self._t1 is not None else time.monotonic()
        state = self._state if self._finished.is_set() else "warming"
        return WarmState(state, len(self.files), self.total, self._done, round(end - self._t0, 3))


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
