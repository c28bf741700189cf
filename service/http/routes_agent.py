"""Agent-facing tool shapes of other projects: DeepXiv's agent search and Search-R1's ``/retrieve``.

- ``POST /arxiv/agent/search``: DeepXiv's blocking agent search (`openxiv.service.agent_search`);
- ``POST /arxiv/agent/search/stream``: the same as NDJSON events, one JSON object per line;
- ``POST /retrieve``: Search-R1's retriever server (`openxiv.service.retrieve`).

Bad bodies are a 400 naming the field before anything is streamed; what fails once a stream has
started is its last event, ``{"event": "error", "stage", "message", "status"}``.
"""

from __future__ import annotations

from collections.abc import Iterator

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
def agent_search_post(body: agent_search.AgentSearchRequest, request: Request) -> Response:
    """One search round: the hybrid search's best `top_k` papers are the `sources`; the `answer`
    lists them with the passages that matched, or, with `OPENXIV_ANSWER_BASE_URL` set, is a short
    answer from that OpenAI-compatible LLM citing them as `[arXiv:ID]`.

    Response: `{status, answer, sources: [{arxiv_id, title, url, date, score, evidence}], stats:
    {answer_truncated, rounds, model, total_count, elapsed_ms}, quota, trace? (verbose), warnings?}`."""
    settings = settings_of(request)
    req = agent_search.check(settings, body)
    out = agent_search.answer(holder_of(request), settings, req)
    return json_response(orjson.dumps(out).decode())


def _ndjson(events: Iterator[dict[str, object]]) -> Iterator[bytes]:
    for ev in events:
        yield orjson.dumps(ev) + b"\n"


@router.post(
    "/arxiv/agent/search/stream",
    responses=ERRORS
    | {200: {"description": "NDJSON events, one per line", "content": {"application/x-ndjson": {}}}},
    response_class=StreamingResponse,
    tags=["DeepXiv-compatible"],
    summary="Agent search (DeepXiv shape) as NDJSON events",
)
def agent_search_stream(body: agent_search.AgentSearchRequest, request: Request) -> StreamingResponse:
    """Events, one JSON object per line: `start`, `tool_call`/`tool_result` (verbose), `sources`
    (`papers`), `answer_start`, `answer_delta` (`text`; one `answer` event with
    `stream_answer=false`), `done` (`answer_truncated`); `warning` for what openxiv does not do;
    `error` (`stage`, `message`) ends a stream that failed after it started."""
    settings = settings_of(request)
    req = agent_search.check(settings, body)
    events = agent_search.events(holder_of(request), settings, req, stream_answer=req.stream_answer)
    return StreamingResponse(_ndjson(events), media_type="application/x-ndjson")


@router.post(
    "/retrieve", responses=ERRORS, tags=["Search-R1-compatible"], summary="Retrieve (Search-R1 shape)"
)
def retrieve_post(body: retrieve.RetrieveRequest, request: Request) -> Response:
    """Body: `{"queries": [str], "topk": 3, "return_scores": false}` (Search-R1), or `{"query": str,
    "topk": 3}`. Response: `{"result": [[doc, ...] per query]}`, each doc `{id, docid, title, text,
    contents}` with `contents` = `"title"\\ntext` (the wiki-18 layout Search-R1 agents read), or
    `{document: doc, score}` with `return_scores`. `text` is the passage that matched when it is
    from the full text, else the abstract."""
    out, timings = retrieve.retrieve(holder_of(request), settings_of(request), body)
    return json_response(orjson.dumps(out).decode(), timings)
