"""The judge cache: a JSON-lines file of raw answers keyed by (prompt version, model, messages).

One line per answered request, appended (and flushed) as each live answer arrives, so an
interrupted run keeps what it paid for::

    {"key": "<sha256>", "prompt_version": "finder-checklist@1a2b3c4d5e6f", "model": "qwen2.5-7b",
     "item": "task 17 / item 3", "text": "Yes", "reasoning": null}

``key`` is `openxiv.evaluator.judge.protocol.cache_key`: the SHA-256 of the compact, key-sorted JSON
of ``[prompt_version, model, messages]`` with ``messages`` the exact chat messages sent
(``[{"role", "content"}, ...]``). ``item`` is informational. ``text`` is the message content as the
model wrote it, ``reasoning`` the reasoning text of a model that left the content empty (else
null). Failures are never written. When a key occurs twice, the last line wins. A line that is not
JSON (a run killed mid-write) is skipped and counted (`JudgeCache.bad_lines`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

__all__ = ["JudgeCache"]


class JudgeCache:
    """In-memory view of a cache file; `put` appends to the file."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        self.bad_lines = 0
        self._out: IO[str] | None = None
        if path is not None and path.exists():
            with path.open(encoding="utf-8") as fh:
                for line in fh:
                    if not line.strip():
                        continue
                    try:
                        obj = json.loads(line)
                        self.entries[str(obj["key"])] = obj
                    except (ValueError, KeyError, TypeError):
                        self.bad_lines += 1

    def get(self, key: str) -> dict[str, Any] | None:
        return self.entries.get(key)

    def put(self, key: str, prompt_version: str, model: str, item: str, text: str | None,
            reasoning: str | None) -> None:  # fmt: skip
        entry = {"key": key, "prompt_version": prompt_version, "model": model, "item": item,
                 "text": text, "reasoning": reasoning}  # fmt: skip
        self.entries[key] = entry
        if self.path is None:
            return
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = self.path.open("a", encoding="utf-8")
        self._out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None
