"""Every bad request gets a 4xx with a message naming the problem; nothing a client sends is a 500."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def _error(r: httpx.Response, status: int, *needles: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    assert body["status"] == "error" and isinstance(body["detail"], str)
    for needle in needles:
        assert needle.lower() in body["detail"].lower(), body["detail"]


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"query": ""}, "empty"),
        ({"query": "   "}, "empty"),
        ({"query": []}, "empty"),
        ({}, "query"),
        ({"top_k": 5}, "query: required"),
        ({"query": 42}, "query"),
        ({"query": None}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": ["", "  "]}, "query[0]"),
        ({"query": "x", "top_k": "many"}, "top_k"),
        ({"query": "x", "offset": -1}, "offset"),
        ({"query": "x", "offset": 10_001}, "offset"),
        ({"query": ["q"] * 51}, "at most 50"),
        ({"query": "x", "date_search_type": "during", "date_str": "2024"}, "date_search_type"),
        ({"query": "x", "date_search_type": "exact", "date_str": "2024-13"}, "date_str"),
        ({"query": "x", "date_search_type": "exact", "date_str": "last year"}, "date_str"),
        ({"query": "x", "date_search_type": "between", "date_str": "2024"}, "needs 2"),
        ({"query": "x", "date_search_type": "exact"}, "date_str"),
        ({"query": "x", "date_from": "2025-05", "date_to": "2025-01"}, "empty"),
        ({"query": "x", "categories": ["../../etc/passwd"]}, "categories"),
        ({"query": "x", "categories": "cs.CL' OR 1=1 --"}, "categories"),
        ({"query": "x", "mode": "magic"}, "mode"),
        ({"query": "x", "return_contents": "perhaps"}, "return_contents"),
    ],
)
def test_bad_search_bodies(client: httpx.Client, body: dict[str, Any], needle: str) -> None:
    _error(client.post("/search", json=body), 400, needle)


def test_what_deepxiv_accepts_is_not_a_hidden_400(client: httpx.Client) -> None:
    """The AutoResearchBench client turns every 4xx into an empty list (issue 36, item 8): where
    deepxiv-sdk 1.2.2 sends a value, it is served: ``top_k: null`` is the default 10, a query over
    the 2,000-character limit (the SDK sends any length) is cut to it and said in ``warnings``.
    ``top_k: 0`` stays a 400 (above), as the SDK refuses it too."""
    words = "batch normalization internal covariate shift "
    long = (words * 60).strip()
    assert len(long) > 2500
    body = client.post("/search", json={"query": long, "top_k": None})
    assert body.status_code == 200, body.text
    got = body.json()
    assert (
        f"query: {len(long)} characters, cut to the first 2000 (OPENXIV_MAX_QUERY_CHARS)" in got["warnings"]
    )
    cut = client.post("/search", json={"query": long[:2000].rstrip(), "top_k": 10}).json()
    assert [h["arxiv_id"] for h in got["result"]] == [h["arxiv_id"] for h in cut["result"]]
    assert len(got["result"]) == 10
    batch = client.post("/search", json={"query": ["dropout", long]}).json()
    assert any(w.startswith("query[1]: ") for w in batch["warnings"]), batch
    sdk = client.get("/arxiv/", params={"type": "retrieve", "query": long, "top_k": 5}).json()
    assert [h["arxiv_id"] for h in sdk["result"]] == [h["arxiv_id"] for h in got["result"][:5]]
    assert any("cut to the first 2000" in w for w in sdk["warnings"])
    agent = client.post("/arxiv/agent/search", json={"query": words, "top_k": None})
    assert agent.status_code == 200 and len(agent.json()["sources"]) == 10, agent.text
    for refused in ({"query": words, "top_k": 0}, {"query": "x" * 2001}):  # the SDK refuses these too
        _error(client.post("/arxiv/agent/search", json=refused), 400)


def test_body_that_is_not_json_or_not_an_object(client: httpx.Client) -> None:
    headers = {"content-type": "application/json"}
    _error(client.post("/search", content=b"{not json", headers=headers), 400, "json")
    _error(client.post("/search", content=b"[1, 2]", headers=headers), 400)
    _error(client.post("/search", content=b"\xff\xfe\x00", headers=headers), 400)
    r = client.post(
        "/search", content=b"query=x", headers={"content-type": "application/x-www-form-urlencoded"}
    )
    assert 400 <= r.status_code < 500


def test_oversized_body(client: httpx.Client) -> None:
    big = {"query": "x", "pad": "y" * 1_100_000}
    _error(client.post("/search", json=big), 413, "limit")

    def chunks() -> Any:  # no Content-Length: counted while streaming
        yield b'{"query": "x", "pad": "'
        for _ in range(120):
            yield b"y" * 10_000
        yield b'"}'

    _error(
        client.post("/search", content=chunks(), headers={"content-type": "application/json"}), 413, "limit"
    )


@pytest.mark.parametrize(
    ("params", "status", "needle"),
    [
        ({"type": "teleport", "arxiv_id": "1502.03167"}, 400, "type"),
        ({}, 400, "type"),
        ({"type": "head"}, 400, "arxiv_id"),
        ({"type": "head", "arxiv_id": "not-an-id"}, 400, "not an arxiv id"),
        ({"type": "head", "arxiv_id": "../../../etc/passwd"}, 400, "arxiv_id"),
        ({"type": "head", "arxiv_id": "2501.99999"}, 404, "2501.99999"),
        ({"type": "raw", "arxiv_id": "hep-th/9901001"}, 404, "hep-th/9901001"),
        ({"type": "section", "arxiv_id": "1502.03167"}, 400, "section"),
        ({"type": "section", "arxiv_id": "1502.03167", "section": "Appendix Z"}, 404, "Introduction"),
        ({"type": "section", "arxiv_id": "2503.18016", "section": "Introduction"}, 404, "no full text"),
        ({"type": "preview", "arxiv_id": "1502.03167", "characters": 0}, 400, "characters"),
        ({"type": "retrieve"}, 400, "query"),
        ({"type": "retrieve", "query": ""}, 400, "empty"),
        ({"type": "retrieve", "query": "x", "top_k": 0}, 400, "top_k"),
        ({"type": "retrieve", "query": "x", "size": 500}, 400, "top_k"),
        ({"type": "retrieve", "query": "x", "top_k": "ten"}, 400, "top_k"),
        ({"type": "retrieve", "query": "x", "offset": 20_000}, 400, "offset"),
        ({"type": "retrieve", "query": "x", "source": "arxiv-mirror"}, 400, "source"),
        ({"type": "retrieve", "query": "x", "search_mode": "psychic"}, 400, "search_mode"),
        (
            {"type": "retrieve", "query": "x", "date_search_type": "between", "date_str": "2024"},
            400,
            "date_str",
        ),
        (
            {"type": "retrieve", "query": "x", "date_search_type": "after", "date_str": "2024-02-30"},
            400,
            "date_str",
        ),
        ({"type": "retrieve", "query": "x", "date_str": "2024"}, 400, "date_search_type"),
        ({"type": "retrieve", "query": "x", "use_fine_rerank": "maybe"}, 400, "use_fine_rerank"),
    ],
)
def test_bad_arxiv_requests(client: httpx.Client, params: dict[str, Any], status: int, needle: str) -> None:
    _error(client.get("/arxiv/", params=params), status, needle)


def test_unknown_paths_and_methods(client: httpx.Client) -> None:
    _error(client.get("/no/such/thing"), 404, "no such endpoint")
    _error(client.get("/search"), 405)
    _error(client.get("/v1/papers/2501.99999"), 404, "2501.99999")
    _error(client.get("/v1/papers/garbage"), 400, "not an arxiv id")
    _error(client.post("/v1/search", json={"query": "x", "unknown": 1}), 400, "unknown")
    _error(client.get("/v1/search", params={"q": "x", "top_k": 1000}), 400, "top_k")
    _error(client.get("/v1/search"), 400, "q")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.one_of(
        st.text(max_size=300), st.lists(st.text(max_size=40), max_size=4), st.integers(), st.none()
    ),
    top_k=st.one_of(st.integers(-5, 150), st.text(max_size=5), st.none()),
    extra=st.dictionaries(
        st.sampled_from(["categories", "authors", "date_str", "date_search_type", "mode"]),
        st.text(max_size=30),
        max_size=3,
    ),
)
def test_fuzzed_bodies_never_500(client: httpx.Client, query: Any, top_k: Any, extra: dict[str, str]) -> None:
    body: dict[str, Any] = {"query": query, **extra}
    if top_k is not None:
        body["top_k"] = top_k
    r = client.post("/search", json=body)
    assert r.status_code < 500, (body, r.text)
    assert r.headers["content-type"] == "application/json"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from(["head", "brief", "section", "raw", "preview", "json", "retrieve", "x"]),
    value=st.text(max_size=60),
)
def test_fuzzed_arxiv_params_never_500(client: httpx.Client, kind: str, value: str) -> None:
    params = {
        "type": kind,
        "arxiv_id": value,
        "query": value or "q",
        "section": value or "Intro",
        "date_str": value,
    }
    r = client.get("/arxiv/", params=params)
    assert r.status_code < 500, (params, r.text)
    r = client.get("/v1/papers/" + quote(value, safe=""))
    assert r.status_code < 500, (value, r.text)


# ----------------------------------------------------------------- issue 8 item 4: no 500, no dropped connection
def _port(r: httpx.Response) -> int:
    """The client-side port of the connection that carried ``r`` (same port = same connection)."""
    return int(r.extensions["network_stream"].get_extra_info("socket").getsockname()[1])


@pytest.fixture
def one_connection(server: Any) -> Any:
    with httpx.Client(base_url=server.url, timeout=60, limits=httpx.Limits(max_connections=1)) as c:
        yield c


LONE_SURROGATE = b'"attention \\ud800 is all"'
JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    ("path", "body", "needle"),
    [
        ("/search", b'{"query": ' + LONE_SURROGATE + b"}", "query"),
        ("/search", b'{"query": ["fine", ' + LONE_SURROGATE + b"]}", "query[1]"),
        ("/search", b'{"query": "x", "authors": [' + LONE_SURROGATE + b"]}", "authors[0]"),
        ("/arxiv/retrieve", b'{"query": "x", "date_str": "\\udfff"}', "date_str"),
        ("/v1/search", b'{"query": ' + LONE_SURROGATE + b"}", "query"),
        ("/v1/search", b'{"query": "x", "categories": ["cs.CL", "\\ud83d"]}', "categories[1]"),
    ],
)
def test_lone_surrogates_are_400_and_keep_the_connection(
    one_connection: httpx.Client, path: str, body: bytes, needle: str
) -> None:
    bad = one_connection.post(path, content=body, headers=JSON)
    _error(bad, 400, needle, "surrogate")
    good = one_connection.post("/search", json={"query": "attention is all you need", "top_k": 2})
    assert good.status_code == 200 and len(good.json()["result"]) == 2
    assert _port(good) == _port(bad)


def test_a_valid_surrogate_pair_is_fine(one_connection: httpx.Client) -> None:
    r = one_connection.post("/search", content=b'{"query": "emoji \\ud83d\\ude00 search"}', headers=JSON)
    assert r.status_code == 200, r.text


def test_broken_utf8_in_a_query_string_is_400_naming_the_parameter(one_connection: httpx.Client) -> None:
    bad = one_connection.get("/arxiv/?type=retrieve&query=attention%ED%A0%80is")
    _error(bad, 400, "query", "utf-8")
    bad = one_connection.get("/v1/search?q=x&author=%FF")
    _error(bad, 400, "author", "utf-8")
    good = one_connection.get("/v1/search", params={"q": "attention", "top_k": 1})
    assert good.status_code == 200 and _port(good) == _port(bad)


@pytest.mark.parametrize(
    "params",
    [
        {"date_search_type": "before", "date_str": "0001"},
        {"date_search_type": "before", "date_str": "0001-01-01"},
        {"date_search_type": "before", "date_str": "0001-01"},
    ],
)
def test_a_date_before_year_one_is_400_and_keeps_the_connection(
    one_connection: httpx.Client, params: dict[str, str]
) -> None:
    bad = one_connection.get("/arxiv/", params={"type": "retrieve", "query": "x", **params})
    _error(bad, 400, "date_str", "0001")
    posted = one_connection.post("/search", json={"query": "x", **params})
    _error(posted, 400, "date_str")
    good = one_connection.get("/arxiv/", params={"type": "retrieve", "query": "attention", "top_k": 1})
    assert good.status_code == 200 and _port(good) == _port(bad) == _port(posted)
