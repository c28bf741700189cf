"""DeepXiv's agent search (``POST /arxiv/agent/search`` and ``.../stream``) over the hybrid search.

deepxiv-sdk 1.2's ``Reader.agent_search``/``agent_search_stream`` send ``{query, effort, verbose,
stream_answer, max_answer_tokens, top_k, language?}`` (`AgentSearchRequest`). openxiv runs the rounds
``effort`` buys (`openxiv.service.agent_rounds`: 1 at ``default``, whose sources are the hybrid
search's top ``top_k`` papers as before; 3 at ``high`` and 5 at ``xhigh``: searches, reformulations
from the best papers' titles and hops over the citation graph, fused by reciprocal rank; the stream
reports each with a ``round`` event; with an answer LLM a reformulation searches the queries it
proposes, `openxiv.service.agent_llm`, whose completions the replay cache records), and the answer is

- without an LLM (``OPENXIV_ANSWER_BASE_URL`` unset): a readable list of the sources, each with the
  passage that matched (`openxiv.service.agent_answer.source_list`), cut to ``max_answer_tokens``;
- with one: a short answer from the OpenAI-compatible endpoint, citing the sources by arXiv id
  (`openxiv.service.llm`); when the search found nothing, no LLM is asked and the answer says so.

The search takes a compute slot (a worker thread, `serve_concurrency`); the LLM call is awaited in the
event loop outside it, one of at most ``answer_concurrency`` at once (``slots``), so agent searches
waiting on a slow LLM never delay `POST /search`, and cancelling the caller (a client that
disconnected) cancels the call.

`events` yields the stream's events in order (``start``, ``tool_call``/``tool_result`` when
``verbose``, a ``round`` after each round when there are several, ``sources``, ``answer_start``,
``answer_delta``s or one ``answer``, ``done``; a ``warning`` for what openxiv does not do; a failure after the stream has started
is an ``error`` event with its ``stage`` and ``message``, the last event); `answer` collects them into
the blocking response ``{status, answer, sources, stats, quota, trace?, warnings?}``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from typing import Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.replay import replay_cache
from openxiv.service.agent_answer import EXTRACTIVE, llm_messages, source_list
from openxiv.service.agent_llm import (
    ANSWER_VERSION,
    PROMPT_VERSION,
    QUERIES_TOKENS,
    cached_complete,
    next_queries_messages,
    parse_queries,
)
from openxiv.service.agent_rounds import SEED_PAPERS, Round, fuse, hop_hits, plan, reformulation
from openxiv.service.errors import ApiError
from openxiv.service.holder import IndexHolder
from openxiv.service.llm import AnswerLLMError, ChatEndpoint, Completion
from openxiv.service.models import Hit
from openxiv.service.params import DEFAULT_TOP_K, check_queries
from openxiv.service.search_async import deepxiv_search_async
from openxiv.service.spec import SearchSpec

__all__ = ["AgentSearchRequest", "answer", "check", "events"]

Event = dict[str, Any]
TOP_K_MAX = 30


class AgentSearchRequest(BaseModel):
    """Body of ``POST /arxiv/agent/search`` (and ``/stream``), as deepxiv-sdk 1.2 sends it."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={"examples": [{"query": "how do agents manage long-term memory", "top_k": 5}]},
    )

    query: str = Field(description="The question, 1-2000 characters.")
    effort: Literal["default", "high", "xhigh"] = Field(
        "default",
        description="Search rounds: default 1, high 3, xhigh 5 (search, reformulation, citation hop; "
        "no LLM needed).",
    )
    verbose: bool = Field(
        False, description="Add the search call (stream: tool_call/tool_result; blocking: trace)."
    )
    stream_answer: bool = Field(
        True, description="Stream only: the answer as answer_delta events (false: one answer event)."
    )
    max_answer_tokens: int = Field(4096, ge=256, le=16384, description="Cap on the answer's length.")
    top_k: int | None = Field(
        DEFAULT_TOP_K,
        ge=1,
        le=TOP_K_MAX,
        description=f"Sources to retrieve, 1-{TOP_K_MAX} (null: {DEFAULT_TOP_K}).",
    )
    language: str | None = Field(default=None, max_length=40, description="Answer language (LLM only).")
    use_fine_rerank: bool | None = Field(
        default=None,
        description="Reorder the first papers with the cross-encoder before picking the sources.",
    )


def _k(req: AgentSearchRequest) -> int:
    """The request's ``top_k`` (``null`` is the default, as `check` sets it)."""
    return req.top_k if req.top_k is not None else DEFAULT_TOP_K


def _source(hit: Hit) -> dict[str, Any]:
    """A source as DeepXiv lists it (``arxiv_id, title, url``) plus its date, score and evidence."""
    ev = hit.contents[0] if hit.contents else None
    return {
        "arxiv_id": hit.arxiv_id,
        "title": hit.title,
        "url": hit.url,
        "date": hit.date,
        "score": hit.score,
        "evidence": {"section": ev.section_title, "text": ev.section_contents[0]} if ev else None,
    }


def _warnings(req: AgentSearchRequest, endpoint: ChatEndpoint | None) -> list[str]:
    out = []
    if req.language and endpoint is None:
        out.append("language: no answer LLM is configured; the answer lists the sources as they are")
    return out


async def _answer_events(
    req: AgentSearchRequest,
    hits: list[Hit],
    total: int,
    endpoint: ChatEndpoint | None,
    settings: Settings,
    slots: anyio.Semaphore,
    stream: bool,
) -> AsyncIterator[Event | Completion]:
    """The answer as pieces (``answer_delta`` events), then its `Completion`; the LLM is asked only
    when there are sources, within one of ``slots``, and to stream only when the client streams."""
    if endpoint is None or not hits:
        pieces, truncated = source_list(req.query, hits, total, req.max_answer_tokens)
        for p in pieces:
            yield {"event": "answer_delta", "text": p}
        yield Completion("".join(pieces), truncated)
        return
    messages = llm_messages(req.query, hits, req.language)
    async with slots:
        if not stream or replay_cache(settings) is not None:  # a recorded answer is one piece
            done = await cached_complete(endpoint, settings, ANSWER_VERSION, messages, req.max_answer_tokens)
            if stream:
                yield {"event": "answer_delta", "text": done.text}
            yield done
            return
        async for item in endpoint.stream(messages, req.max_answer_tokens):
            yield item if isinstance(item, Completion) else {"event": "answer_delta", "text": item}


async def events(
    holder: IndexHolder,
    settings: Settings,
    req: AgentSearchRequest,
    slots: anyio.Semaphore,
    *,
    stream_answer: bool,
) -> AsyncIterator[Event]:
    """The agent search as DeepXiv's NDJSON events. ``req`` is checked by the caller (`check`);
    ``slots`` bounds the answer-LLM calls in flight; whatever fails after the first event is an
    ``error`` event, the last one."""
    t0 = time.perf_counter()
    endpoint = ChatEndpoint.from_settings(settings)
    stage = "search"
    yield {
        "event": "start",
        "run_id": uuid.uuid4().hex,
        "model": endpoint.model if endpoint else EXTRACTIVE,
        "effort": req.effort,
        "max_rounds": len(plan(req.effort)),
        "top_k": _k(req),
    }
    for w in _warnings(req, endpoint):
        yield {"event": "warning", "stage": "plan", "message": w}
    try:
        kinds = plan(req.effort)
        rounds: list[Round] = []
        total = 0
        for number, kind in enumerate(kinds, start=1):
            r = Round(number, kind)
            if kind == "hop":
                r.seeds = _seeds(rounds, _k(req))
                with holder.acquire() as index:
                    r.hits = await anyio.to_thread.run_sync(hop_hits, index, r.seeds)
            else:
                queries, warning = [req.query], None
                if kind == "reformulate":
                    queries, warning = await _next_queries(
                        req, endpoint, settings, fuse(rounds, _k(req)), slots
                    )
                    if warning:
                        yield {"event": "warning", "stage": f"round {number}", "message": warning}
                    if endpoint is not None and warning is None:
                        r.queries = queries
                r.query = queries[0] if queries else None
                parts = [Round(number, kind, query=q) for q in queries]
                for part in parts:
                    async for ev in _search_round(holder, settings, req, part):
                        yield ev
                if parts:
                    r.hits, r.total = fuse(parts, _k(req)), parts[0].total
                    total = r.total if number == 1 else total
            seen = {h.arxiv_id for past in rounds for h in past.hits}
            r.new = sum(1 for h in r.hits if h.arxiv_id not in seen)
            rounds.append(r)
            if len(kinds) > 1:
                yield r.event()
        hits = fuse(rounds, _k(req))
        yield {"event": "sources", "papers": [_source(h) for h in hits]}
        stage = "answer"
        yield {"event": "answer_start"}
        done: Completion | None = None
        async for item in _answer_events(req, hits, total, endpoint, settings, slots, stream_answer):
            if isinstance(item, Completion):
                done = item
            elif stream_answer:
                yield item
        assert done is not None
        if not stream_answer:
            yield {"event": "answer", "text": done.text}
    except ApiError as exc:
        yield {"event": "error", "stage": stage, "message": exc.detail, "status": exc.status_code}
        return
    yield {
        "event": "done",
        "answer_truncated": done.truncated,
        "elapsed_ms": round((time.perf_counter() - t0) * 1000, 1),
        "sources": len(hits),
        "total_count": total,
    }


async def _next_queries(
    req: AgentSearchRequest,
    endpoint: ChatEndpoint | None,
    settings: Settings,
    best: list[Hit],
    slots: anyio.Semaphore,
) -> tuple[list[str], str | None]:
    """A reformulation round's queries: the LLM's when one is configured (awaited in the event loop,
    within one of the answer ``slots``, never a compute slot), else the title reformulation; a failed
    or malformed LLM answer falls back to it with a warning."""
    titles = reformulation(req.query, best)
    fallback = [titles] if titles else []
    if endpoint is None:
        return fallback, None
    messages = next_queries_messages(req.query, best[:SEED_PAPERS])
    try:
        async with slots:
            done = await cached_complete(endpoint, settings, PROMPT_VERSION, messages, QUERIES_TOKENS)
    except AnswerLLMError as exc:
        return fallback, f"next queries: {exc.detail}; searched the title reformulation instead"
    queries = parse_queries(done.text, req.query)
    if queries is None:
        return fallback, (
            f"next queries: the answer LLM proposed no query list ({done.text[:80]!r}); "
            "searched the title reformulation instead"
        )
    return queries, None


def _seeds(rounds: list[Round], top_k: int) -> list[str]:
    """The best papers so far that no earlier hop started from (`SEED_PAPERS` of them)."""
    used = {s for r in rounds for s in r.seeds}
    return [h.arxiv_id for h in fuse(rounds, top_k + SEED_PAPERS) if h.arxiv_id not in used][:SEED_PAPERS]


async def _search_round(
    holder: IndexHolder, settings: Settings, req: AgentSearchRequest, r: Round
) -> AsyncIterator[Event]:
    """One search round of ``r.query`` (its hits and match count into ``r``), with its
    ``tool_call``/``tool_result`` events when ``verbose``."""
    assert r.query is not None
    if req.verbose:
        arguments = {"query": r.query, "top_k": _k(req)}
        yield {"event": "tool_call", "round": r.number, "name": "search", "arguments": arguments}
    t_search = time.perf_counter()
    spec = SearchSpec(queries=(r.query,), top_k=_k(req), fine_rerank=bool(req.use_fine_rerank))
    # a compute slot for the search's compute only; a model server is awaited outside it
    response, _ = await deepxiv_search_async(holder, spec, settings=settings)
    r.hits, r.total = response.result, response.total_count
    if req.verbose:
        yield {
            "event": "tool_result", "round": r.number, "name": "search", "ok": True,
            "elapsed_ms": round((time.perf_counter() - t_search) * 1000, 1),
            "summary": f"{r.total} papers match; the best {len(r.hits)} are the sources",
        }  # fmt: skip


def check(settings: Settings, req: AgentSearchRequest) -> AgentSearchRequest:
    """The request with its query checked like every search's (400 naming ``query``), and the answer
    LLM's settings checked, before a stream starts."""
    query = check_queries(req.query, settings.max_query_chars)[0]
    ChatEndpoint.from_settings(settings)
    top_k = req.top_k if req.top_k is not None else DEFAULT_TOP_K  # null is deepxiv-sdk's default
    return req.model_copy(update={"query": query, "top_k": top_k})


async def answer(
    holder: IndexHolder, settings: Settings, req: AgentSearchRequest, slots: anyio.Semaphore
) -> dict[str, Any]:
    """The blocking response: the stream's events collected; an ``error`` event is raised again as
    the `ApiError` it was (a search's 400/503, the answer LLM's 502)."""
    out: dict[str, Any] = {"status": "success", "answer": "", "sources": []}
    trace: list[Event] = []
    warnings: list[str] = []
    model = EXTRACTIVE
    rounds = 1
    async for ev in events(holder, settings, req, slots, stream_answer=False):
        kind = ev["event"]
        if kind == "error":
            error = ApiError(f"{ev['stage']}: {ev['message']}")
            error.status_code = ev["status"]
            raise error
        if kind == "sources":
            out["sources"] = ev["papers"]
        elif kind == "answer":
            out["answer"] = ev["text"]
        elif kind in ("tool_call", "tool_result"):
            trace.append(ev)
        elif kind == "warning":
            warnings.append(ev["message"])
        elif kind == "start":
            model, rounds = ev["model"], ev["max_rounds"]
        elif kind == "done":
            out["stats"] = {
                "answer_truncated": ev["answer_truncated"], "rounds": rounds, "model": model,
                "total_count": ev["total_count"], "elapsed_ms": ev["elapsed_ms"],
            }  # fmt: skip
    out["quota"] = {"tier": "local", "used": 0, "remaining": None}
    if req.verbose:
        out["trace"] = trace
    if warnings:
        out["warnings"] = warnings
    return out
