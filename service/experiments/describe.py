"""A call as the ledger keeps it: its kind, its parameters, the papers it returned and read.

Everything is read from the request (method, route, query string, body) and the response body the
client got, so no route has to report anything: a new route is recorded as ``other`` until a line
here names it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

from openxiv.corpus.ledger.records import Read, Returned

__all__ = ["Described", "describe", "request_key"]

SEARCH_POSTS = {"/search", "/arxiv/retrieve", "/"}
READ_KINDS = {
    "head", "brief", "section", "raw", "preview", "json", "find", "references", "cited_by", "paper", "bibtex"
}  # fmt: skip
SIMPLE = {
    "/v1/similar": "similar",
    "/v1/find": "find",
    "/v1/index": "index",
    "/v1/passages": "passages",
    "/v1/facets": "facets",
    "/v1/match": "match",
    "/v1/authors": "author",
    "/v1/bibtex": "bibtex",
}
"""Routes whose kind is fixed (``/arxiv/`` takes its kind from ``type``)."""


@dataclass(frozen=True)
class Described:
    kind: str
    params: dict[str, Any]
    returned: tuple[Returned, ...]
    read: tuple[Read, ...]


def request_key(method: str, route: str, query: bytes, body: bytes) -> str:
    """What replay matches a call on: method, route, the query string's pairs in order, the body."""
    pairs = sorted(parse_qsl(query.decode("latin-1"), keep_blank_values=True))
    head = json.dumps([method.upper(), route, pairs], separators=(",", ":")).encode()
    return hashlib.sha256(head + b"\x00" + body).hexdigest()


def _params(query: bytes, body: bytes) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for key, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if key == "token":
            continue  # a credential, never recorded
        if key in params:
            have = params[key]
            params[key] = [*have, value] if isinstance(have, list) else [have, value]
        else:
            params[key] = value
    if body:
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            params.update(parsed)
        elif parsed is not None:
            params["body"] = parsed
    return params


def _kind(method: str, route: str, params: dict[str, Any]) -> str:
    if (method == "POST" and route in SEARCH_POSTS) or route == "/v1/search":
        return "search"
    if route in ("/arxiv/", "/arxiv"):
        kind = str(params.get("type") or ("retrieve" if "query" in params else "head")).strip().lower()
        return "search" if kind == "retrieve" else kind
    if route.startswith("/arxiv/agent/search"):
        return "agent_search"
    if route == "/retrieve":
        return "retrieve"
    if route.startswith("/v1/papers/"):
        rest = route[len("/v1/papers/") :]
        if "/sections/" in rest:
            return "section"
        for kind in ("references", "cited_by", "bibtex"):
            if rest.endswith("/" + kind):
                return kind
        return "paper"
    if route in SIMPLE:
        return SIMPLE[route]
    if route.startswith(("/graph/v1/", "/recommendations/v1/")):  # Semantic Scholar's shapes
        rest = route.split("/", 3)[3]
        return "s2:" + ("search" if rest == "paper/search" else rest.split("/", 1)[0])
    if route.startswith("/mcp"):
        return f"mcp:{params.get('tool') or params.get('method') or 'message'}"
    return "other"


def _path_read(route: str, kind: str) -> Read | None:
    """A /v1/papers/{id}[/sections/{name} | /references | /cited_by] read."""
    rest = unquote(route[len("/v1/papers/") :])
    if kind == "section":
        aid, _, name = rest.partition("/sections/")
        return Read(aid, "section", section=name)
    if kind in ("references", "cited_by", "bibtex"):
        return Read(rest[: -len(kind) - 1], kind)
    return Read(rest, "paper")


def _reads(route: str, kind: str, params: dict[str, Any]) -> tuple[Read, ...]:
    if kind not in READ_KINDS:
        return ()
    if route.startswith("/v1/papers/"):
        return (_path_read(route, kind),)  # type: ignore[return-value]
    aid = params.get("arxiv_id")
    if isinstance(aid, list):
        aid = aid[0] if aid else None
    if not aid:
        return ()
    section = params.get("section") if kind == "section" else None
    query = params.get("query") if kind == "find" else None
    return (
        Read(str(aid), kind, section=str(section) if section else None, query=str(query) if query else None),
    )


def _hits(value: Any, offset: int) -> list[Returned]:
    """Papers of a response: ``result`` (DeepXiv; a list of lists per query for /retrieve), ``hits``
    (/v1), ``sources`` (agent search), ``structuredContent`` (an MCP tool's result)."""
    if not isinstance(value, dict):
        return []
    for key in ("structuredContent", "result"):
        inner = value.get(key)
        if key == "structuredContent" and isinstance(inner, dict):
            return _hits(inner, offset)
    out: list[Returned] = []
    result = value.get("result", value.get("hits", value.get("sources")))
    if isinstance(result, list) and result and all(isinstance(r, list) for r in result):  # /retrieve
        for q, docs in enumerate(result):
            for i, doc in enumerate(docs):
                doc = doc.get("document", doc) if isinstance(doc, dict) else doc
                if isinstance(doc, dict) and doc.get("id"):
                    out.append(Returned(str(doc["id"]), i + 1, query=q))
        return out
    if isinstance(result, list):
        for i, hit in enumerate(result):
            if isinstance(hit, dict) and hit.get("arxiv_id"):
                out.append(Returned(str(hit["arxiv_id"]), offset + i + 1))
    return out


def _offset(params: dict[str, Any]) -> int:
    try:
        return max(0, int(params.get("offset") or 0))
    except (TypeError, ValueError):
        return 0


def _json_values(body: bytes, content_type: str) -> list[Any]:
    """The JSON values of a body: one, or one per line (NDJSON), or per ``data:`` line (SSE)."""
    if "json" not in content_type and "event-stream" not in content_type:
        return []
    try:
        return [json.loads(body)]
    except ValueError:
        pass
    out = []
    for line in body.splitlines():
        line = line.removeprefix(b"data:").strip()
        if line.startswith(b"{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


def _mcp(params: dict[str, Any]) -> dict[str, Any]:
    """An MCP JSON-RPC message as parameters: a tool call's name (``tool``) and its arguments (an
    argument of its own called ``name``, as ``author_papers`` has, kept as given)."""
    if params.get("method") == "tools/call" and isinstance(params.get("params"), dict):
        call = params["params"]
        return {"tool": call.get("name"), **(call.get("arguments") or {})}
    return {"method": params.get("method")}


def describe(
    method: str, route: str, query: bytes, body: bytes, response: bytes, content_type: str
) -> Described:
    """What the ledger says about one call."""
    params = _params(query, body)
    if route.startswith("/mcp"):
        params = _mcp(params)
    kind = _kind(method.upper(), route, params)
    returned: list[Returned] = []
    if kind in (
        "search",
        "similar",
        "agent_search",
        "retrieve",
        "passages",
        "match",
        "author",
    ) or kind.startswith("mcp:"):
        for value in _json_values(response, content_type):
            found = _hits(value.get("result", value) if kind.startswith("mcp:") else value, _offset(params))
            returned.extend(r for r in found if r not in returned)
    return Described(kind=kind, params=params, returned=tuple(returned), read=_reads(route, kind, params))
