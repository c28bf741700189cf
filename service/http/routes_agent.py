"""Agent-facing tool shapes of other projects: DeepXiv's agent search and Search-R1's ``/retrieve``.

- ``POST /arxiv/agent/search``: DeepXiv's blocking agent search (`openxiv.service.agent_search`);
- ``POST /arxiv/agent/search/stream``: the same as NDJSON events, one JSON object per line;
- ``POST /retrieve``: Search-R1's retriever server (`openxiv.service.retrieve`).

Bad bodies are a 400 naming the field before anything is streamed; what fails once a stream has
started is its last event, ``{"event": "error", "stage", "message", "status"}``.

The agent routes are async: the search runs in a worker thread (a compute slot), the answer LLM is
awaited in the event loop within the app's ``answer_slots`` (``answer_concurrency``), and a client
that disconnects cancels the call (the stream by Starlette's own disconnect listener, the blocking
route by `_unless_disconnected`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from typing import Any

import anyio
import orjson
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from openxiv.service import agent_search, retrieve
from openxiv.service.http.helpers import ERRORS, holder_of, json_response, settings_of
from openxiv.service.models import ErrorResponse

__all__ = ["router"]

router = APIRouter()

AGENT_ERRORS = ERRORS | {
    502: {"model": ErrorResponse, "description": "The configured answer LLM failed (blocking only)"}
}


@router.post(
    "/arxiv/agent/search",
    responses=AGENT_ERRORS,
    tags=["DeepXiv-compatible"],
    summary="Agent search (DeepXiv shape): sources and an answer",
)
async def agent_search_post(body: agent_search.AgentSearchRequest, request: Request) -> Response:
    """The rounds `effort` buys (default 1: the hybrid search's best `top_k` papers are the
    `sources`; high 3, xhigh 5: reformulations and citation hops, fused by reciprocal rank); the `answer`
    lists them with the passages that matched, or, with `OPENXIV_ANSWER_BASE_URL` set, is a short
    answer from that OpenAI-compatible LLM citing them as `[arXiv:ID]`.

    Response: `{status, answer, sources: [{arxiv_id, title, url, date, score, evidence}], stats:
    {answer_truncated, rounds, model, total_count, elapsed_ms}, quota, trace? (verbose), warnings?}`."""
    settings = settings_of(request)
    req = agent_search.check(settings, body)
    work = agent_search.answer(holder_of(request), settings, req, _answer_slots(request))
    out = await _unless_disconnected(request, work)
    if out is None:  # nobody is listening any more; the status is for the access log
        return Response(status_code=499)
    return json_response(orjson.dumps(out).decode())


def _answer_slots(request: Request) -> anyio.Semaphore:
    slots: anyio.Semaphore = request.app.state.answer_slots
    return slots


async def _unless_disconnected(request: Request, work: Awaitable[dict[str, Any]]) -> dict[str, Any] | None:
    """``work``'s result, or ``None`` once the client has disconnected (``work`` is then cancelled,
    and with it an LLM call in flight). The body has been read, so the next message is the
    disconnect."""
    result: list[dict[str, Any]] = []
    failed: list[Exception] = []
    async with anyio.create_task_group() as tg:

        async def run() -> None:
            try:
                result.append(await work)
            except Exception as exc:  # raised below as itself, not inside an exception group
                failed.append(exc)
            tg.cancel_scope.cancel()

        async def watch() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(run)
        tg.start_soon(watch)
    if failed:
        raise failed[0]
    return result[0] if result else None


async def _ndjson(events: AsyncIterator[dict[str, object]]) -> AsyncIterator[bytes]:
    async for ev in events:
        yield orjson.dumps(ev) + b"\n"


@router.post(
    "/arxiv/agent/search/stream",
    responses=ERRORS
    | {200: {"description": "NDJSON events, one per line", "content": {"application/x-ndjson": {}}}},
    response_class=StreamingResponse,
    tags=["DeepXiv-compatible"],
    summary="Agent search (DeepXiv shape) as NDJSON events",
)
async def agent_search_stream(body: agent_search.AgentSearchRequest, request: Request) -> StreamingResponse:
    """Events, one JSON object per line: `start`, `tool_call`/`tool_result` (verbose), `sources`
    (`papers`), `answer_start`, `answer_delta` (`text`; one `answer` event with
    `stream_answer=false`), `done` (`answer_truncated`); `warning` for what openxiv does not do;
    `error` (`stage`, `message`) ends a stream that failed after it started."""
    settings = settings_of(request)
    req = agent_search.check(settings, body)
    slots = _answer_slots(request)
    events = agent_search.events(holder_of(request), settings, req, slots, stream_answer=req.stream_answer)
    return StreamingResponse(_ndjson(events), media_type="application/x-ndjson")


@router.post(
    "/retrieve", responses=ERRORS, tags=["Search-R1-compatible"], summary="Retrieve (Search-R1 shape)"
)
async def retrieve_post(body: retrieve.RetrieveRequest, request: Request) -> Response:
    """Body: `{"queries": [str], "topk": 3, "return_scores": false}` (Search-R1), or `{"query": str,
    "topk": 3}`. Response: `{"result": [[doc, ...] per query]}`, each doc `{id, docid, title, text,
    contents}` with `contents` = `"title"\\ntext` (the wiki-18 layout Search-R1 agents read), or
    `{document: doc, score}` with `return_scores`. `text` is the passage that matched when it is
    from the full text, else the abstract. An empty query gets an empty list; `[]` is answered `[]`;
    a large batch is searched in chunks (docs/service.md, "Search-R1's /retrieve")."""
    out, timings = await retrieve.retrieve(holder_of(request), settings_of(request), body)
    return json_response(orjson.dumps(out).decode(), timings)
