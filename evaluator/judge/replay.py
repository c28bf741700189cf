"""The ``replay`` and ``none`` back ends: answers only from the cache file, or no answers at all."""

from __future__ import annotations

from openxiv.evaluator.judge.cache import JudgeCache
from openxiv.evaluator.judge.protocol import Answer, JudgeRequest, cache_key

__all__ = ["NoJudge", "ReplayJudge"]


class ReplayJudge:
    """Answers from `JudgeCache`; a request not in it is not judged (``not_in_cache``), never guessed."""

    backend = "replay"

    def __init__(self, model: str, cache: JudgeCache) -> None:
        self.model = model
        self.cache = cache
        self.unavailable: str | None = None
        if cache.path is not None and not cache.path.exists():
            self.unavailable = f"the replay cache {cache.path} does not exist (OPENXIV_JUDGE_CACHE)"

    def answer(self, requests: list[JudgeRequest]) -> list[Answer]:
        out = []
        for r in requests:
            hit = self.cache.get(cache_key(r.prompt_version, self.model, r.payload_messages()))
            out.append(
                Answer(hit.get("text"), hit.get("reasoning"), cached=True)
                if hit is not None
                else Answer(None, error="not_in_cache")
            )
        return out


class NoJudge:
    """No judge configured: every judged metric is reported as not computed, with this reason."""

    backend = "none"
    model: str | None = None

    def __init__(self, reason: str = "no judge configured (OPENXIV_JUDGE_BACKEND=none)") -> None:
        self.unavailable: str | None = reason

    def answer(self, requests: list[JudgeRequest]) -> list[Answer]:
        return [Answer(None, error="no_judge") for _ in requests]
