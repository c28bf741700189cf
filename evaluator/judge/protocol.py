"""The judge protocol: requests in, raw answers out, with the counts every judged number carries.

A `JudgeRequest` is one chat call (messages, temperature, token limit) under a `Prompt` (name and
version = a hash of the prompt's text). A back end (`openxiv.evaluator.judge.openai`, ``replay``,
``none``) turns a list of requests into one `Answer` each: the raw text the model wrote (and its
reasoning text, when the content was empty), or the reason it could not be judged. Parsing the
text into a verdict is the metric's business (`openxiv.evaluator.judge.parse`), so the cache holds
raw answers and a strict or an upstream parser can re-read the same cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

__all__ = ["Answer", "Judge", "JudgeRequest", "JudgeStats", "Prompt", "cache_key"]


@dataclass(frozen=True)
class Prompt:
    """A prompt template and its version: the first 12 hex digits of the SHA-256 of its text."""

    name: str
    text: str
    source: str  # where it was read from (repo-relative or "../shared/..." path)

    @property
    def version(self) -> str:
        return f"{self.name}@{hashlib.sha256(self.text.encode('utf-8')).hexdigest()[:12]}"


@dataclass(frozen=True)
class JudgeRequest:
    """One chat call; ``item`` names what it judges (task, checklist item) for the report."""

    item: str
    prompt_version: str
    messages: tuple[tuple[str, str], ...]  # (role, content)
    temperature: float
    max_tokens: int

    def payload_messages(self) -> list[dict[str, str]]:
        return [{"role": r, "content": c} for r, c in self.messages]


def cache_key(prompt_version: str, model: str, messages: list[dict[str, str]]) -> str:
    """SHA-256 of the canonical JSON of (prompt version, model, messages): the cache file's key."""
    text = json.dumps(
        [prompt_version, model, messages], ensure_ascii=False, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class Answer:
    """The model's raw answer to one request, or ``error`` (then ``text`` is None: not judged)."""

    text: str | None
    reasoning: str | None = None
    error: str | None = None
    cached: bool = False
    attempts: int = 0


@dataclass
class JudgeStats:
    """What a report prints beside every judged number."""

    backend: str
    model: str | None
    prompt_version: str
    requests: int = 0
    cache_hits: int = 0
    live_calls: int = 0
    retries: int = 0
    unjudged: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    reason: str | None = None  # why nothing was judged (backend none, no cache, ...)

    def add(self, answers: list[Answer]) -> None:
        for a in answers:
            self.requests += 1
            self.cache_hits += a.cached
            self.live_calls += (not a.cached) and a.attempts > 0
            self.retries += max(0, a.attempts - 1)
            if a.text is None:
                self.unjudged += 1
                kind = (a.error or "error").split(":", 1)[0]
                self.failures[kind] = self.failures.get(kind, 0) + 1

    @property
    def coverage(self) -> float:
        return (self.requests - self.unjudged) / self.requests if self.requests else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "judged": self.requests - self.unjudged, "coverage": self.coverage}

    def line(self) -> str:
        """One line for the Markdown/HTML/terminal conventions table."""
        if self.reason:
            return f"not computed: {self.reason} (backend {self.backend})"
        return (
            f"judge {self.backend}:{self.model}, prompt {self.prompt_version}; {self.requests} judgements, "
            f"{self.cache_hits} from cache, {self.unjudged} not judged (coverage {self.coverage:.1%})"
        )


class Judge(Protocol):
    """A back end: ``answer`` returns one `Answer` per request, in order, and never raises for one item."""

    @property
    def backend(self) -> str: ...
    @property
    def model(self) -> str | None: ...
    @property
    def unavailable(self) -> str | None: ...  # set: nothing can be judged, and why

    def answer(self, requests: list[JudgeRequest]) -> list[Answer]: ...
