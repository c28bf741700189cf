"""The agent search's LLM calls, and their replay cache (issue 41, item 5).

When an answer LLM is configured (``OPENXIV_ANSWER_*``), a reformulation round asks it for the next
queries (`next_queries`): the versioned prompt ``prompts/next_queries.txt`` (`PROMPT_VERSION`: its
name and the SHA-256 of its text) filled with the question and the best papers so far; the answer
is read defensively (`parse_queries`: a JSON list of strings, or ``{"queries": [...]}``, fenced or
not; at most `QUERIES_MAX`, each a new non-empty query) and anything else is ``None``, which the
caller answers with the title reformulation and a warning.

Both that call and the answer itself go through `cached_complete`: with ``OPENXIV_REMOTE_REPLAY``
``record`` every completion is appended to the model-server replay cache
(`openxiv.indexer.encoders.replay`), keyed by the model, the prompt version and the messages;
``replay`` answers only from it, so a replay with the LLM gone gives the same rounds and answer.
Every call is awaited in the event loop, never in a compute slot.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources

import orjson

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.remote_http import RemoteUnavailable
from openxiv.indexer.encoders.replay import replay_cache
from openxiv.service.agent_answer import SYSTEM
from openxiv.service.llm import AnswerLLMError, ChatEndpoint, Completion, Message
from openxiv.service.models import Hit

__all__ = [
    "ANSWER_VERSION",
    "PROMPT_VERSION",
    "QUERIES_MAX",
    "cached_complete",
    "next_queries_messages",
    "parse_queries",
]

NEXT_QUERIES_PROMPT = (
    resources.files("openxiv.service").joinpath("prompts", "next_queries.txt").read_text(encoding="utf-8")
).rstrip("\n")
PROMPT_VERSION = "next-queries@" + hashlib.sha256(NEXT_QUERIES_PROMPT.encode("utf-8")).hexdigest()[:12]
"""Part of the replay key: an edited prompt never replays an answer to the old one."""
ANSWER_VERSION = "agent-answer@" + hashlib.sha256(SYSTEM.encode("utf-8")).hexdigest()[:12]
QUERIES_MAX = 3
QUERY_CHARS = 300
QUERIES_TOKENS = 200
"""``max_tokens`` of the next-queries call."""
_FIELD = re.compile(r"\{(query|papers|n)\}")
_JSON = re.compile(r"(\[.*\]|\{.*\})", re.DOTALL)


def next_queries_messages(query: str, best: list[Hit]) -> list[Message]:
    """The chat asking for the next queries: the question and the best papers' titles and tldrs."""
    lines = []
    for i, h in enumerate(best, start=1):
        tldr = " ".join((h.tldr or "").split())[:300]
        lines.append(f"[{i}] {h.title or '(untitled)'}" + (f" | {tldr}" if tldr else ""))
    fill = {"query": query, "papers": "\n".join(lines) or "(none)", "n": str(QUERIES_MAX)}
    return [{"role": "user", "content": _FIELD.sub(lambda m: fill[m.group(1)], NEXT_QUERIES_PROMPT)}]


def parse_queries(text: str, question: str) -> list[str] | None:
    """The queries an answer proposes (see the module doc), or ``None`` when it proposes none."""
    found = _JSON.search(text)
    if found is None:
        return None
    try:
        obj = orjson.loads(found.group(1))
    except orjson.JSONDecodeError:
        return None
    if isinstance(obj, dict):
        obj = obj.get("queries")
    if not isinstance(obj, list):
        return None
    out: list[str] = []
    for q in obj:
        if not isinstance(q, str):
            continue
        q = " ".join(q.split())
        if q and len(q) <= QUERY_CHARS and q.lower() != question.lower() and q not in out:
            out.append(q)
    return out[:QUERIES_MAX] or None


async def cached_complete(
    endpoint: ChatEndpoint, settings: Settings, version: str, messages: list[Message], max_tokens: int
) -> Completion:
    """``endpoint.complete`` through the replay cache (``OPENXIV_REMOTE_REPLAY``); a replay miss is an
    `AnswerLLMError` like a failed call."""
    cache = replay_cache(settings)
    if cache is None:
        return await endpoint.complete(messages, max_tokens)
    fingerprint = f"chat:{endpoint.model}:{version}"
    request = {"messages": messages, "max_tokens": max_tokens}
    try:
        got = cache.get("chat", fingerprint, request)
    except RemoteUnavailable as exc:
        raise AnswerLLMError(str(exc)) from None
    if got is not None:
        return Completion(str(got["text"]), bool(got["truncated"]))
    done = await endpoint.complete(messages, max_tokens)
    cache.put("chat", fingerprint, fingerprint, request, {"text": done.text, "truncated": done.truncated})
    return done
