"""The replay cache of model-server answers at query time (query embeddings, reranks).

A run against a GPU server records every answer it used (``OPENXIV_REMOTE_REPLAY=record``); the same
run replays from the file alone (``replay``) with the server gone, and gives the same bodies bit for
bit, because the cache holds the server's raw JSON answer and the same code turns it into vectors
and scores. One JSON line per answer, appended and flushed as it arrives::

    {"key": "<sha256>", "kind": "embed", "model": "http://gpu:8000/v1#Qwen/Qwen3-Embedding-8B",
     "request": {...}, "answer": {...}}

``key`` is the SHA-256 of the compact, key-sorted JSON of ``[kind, fingerprint, request]``: the
request exactly as sent (model name, input with its prefix, dimensions; or query and documents), and
the fingerprint of what answers (the snapshot's encoder, the reranker). The server's URL is not in
the key, so a recording made against one host replays with another. When a key occurs twice the last
line wins; a line that is not JSON (a run killed mid-write) is skipped and counted. Failures are
never written.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import IO, Any

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.remote_http import RemoteUnavailable

__all__ = ["ReplayCache", "replay_cache", "replay_key"]


def replay_key(kind: str, fingerprint: str, request: dict[str, Any]) -> str:
    blob = json.dumps([kind, fingerprint, request], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ReplayCache:
    """In-memory view of a replay file. ``mode``: ``record`` (look up, else ask and append) or
    ``replay`` (look up only: a miss is `RemoteUnavailable`)."""

    def __init__(self, path: Path, mode: str) -> None:
        self.path, self.mode = Path(path), mode
        self.entries: dict[str, Any] = {}
        self.bad_lines = 0
        self.hits = 0
        self._lock = threading.Lock()
        self._out: IO[str] | None = None
        if self.path.exists():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                        self.entries[str(obj["key"])] = obj["answer"]
                    except (ValueError, KeyError, TypeError):
                        self.bad_lines += 1

    def get(self, kind: str, fingerprint: str, request: dict[str, Any]) -> Any | None:
        """The recorded answer; in ``replay`` mode a miss raises `RemoteUnavailable`."""
        answer = self.entries.get(replay_key(kind, fingerprint, request))
        if answer is not None:
            with self._lock:
                self.hits += 1
            return answer
        if self.mode == "replay":
            raise RemoteUnavailable(
                f"OPENXIV_REMOTE_REPLAY=replay: this {kind} request was not recorded in {self.path}"
            )
        return None

    def put(self, kind: str, fingerprint: str, model: str, request: dict[str, Any], answer: Any) -> None:
        key = replay_key(kind, fingerprint, request)
        line = {"key": key, "kind": kind, "model": model, "request": request, "answer": answer}
        with self._lock:
            self.entries[key] = answer
            if self._out is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._out = self.path.open("a", encoding="utf-8")
            self._out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
            self._out.flush()

    def close(self) -> None:
        with self._lock:
            if self._out is not None:
                self._out.close()
                self._out = None


_OPEN: dict[tuple[Path, str], ReplayCache] = {}
_OPEN_LOCK = threading.Lock()


def replay_cache(settings: Settings) -> ReplayCache | None:
    """The process's replay cache for ``settings`` (one per file and mode, shared by every encoder
    and reranker), or None when ``remote_replay`` is ``off``."""
    if settings.remote_replay == "off":
        return None
    path = settings.remote_replay_file or Path(settings.data_dir) / "remote-replay.jsonl"
    key = (Path(path).resolve(), settings.remote_replay)
    with _OPEN_LOCK:
        if key not in _OPEN:
            _OPEN[key] = ReplayCache(key[0], settings.remote_replay)
        return _OPEN[key]
