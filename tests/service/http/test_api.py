"""Paging, batches, determinism, the v1 API, probes and docs on a live server."""

from __future__ import annotations

from typing import Any

import httpx

QUERY = "large language model reasoning with reinforcement learning"


def ids(body: dict[str, Any]) -> list[str]:
    return [h["arxiv_id"] for h in body["result"]]


def test_offset_and_top_k_are_slices_of_one_list(client: httpx.Client) -> None:
    """Pages asked by offset, top_k and size are slices of one list, on every route.

    On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the default suite checks Milvus pages
    in test_milvus_parity.py::test_milvus_deep_pages_are_slices_of_one_ranking."""
    whole = client.post("/search", json={"query": QUERY, "top_k": 30}).json()
    pages = [
        client.post("/search", json={"query": QUERY, "top_k": 10, "offset": off}).json()
        for off in (0, 10, 20)
    ]
    assert ids(whole) == [i for p in pages for i in ids(p)]
    assert {p["total_count"] for p in pages} == {whole["total_count"]}
    sdk = client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 10, "offset": 10}).json()
    assert ids(sdk) == ids(pages[1])
    size = client.get("/arxiv/", params={"type": "retrieve", "query": QUERY, "size": 7}).json()
    assert ids(size) == ids(whole)[:7]


def test_offset_past_the_end_is_an_empty_page(client: httpx.Client) -> None:
    body = client.post("/search", json={"query": QUERY, "top_k": 10, "offset": 10_000}).json()
    assert body["result"] == [] and body["total_count"] > 0


def test_filtered_query_still_returns_top_k(client: httpx.Client) -> None:
    body = client.post(
        "/search", json={"query": QUERY, "top_k": 20, "categories": ["astro-ph.GA", "astro-ph.CO"]}
    ).json()
    assert len(body["result"]) == 20
    assert all({"astro-ph.GA", "astro-ph.CO"} & set(h["categories"]) for h in body["result"])
    comma = client.get(
        "/arxiv/",
        params={"type": "retrieve", "query": QUERY, "top_k": 20, "categories": "astro-ph.GA,astro-ph.CO"},
    ).json()
    assert ids(comma) == ids(body)


def test_same_query_twice_gives_identical_bytes(client: httpx.Client) -> None:
    """On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the default suite's
    test_milvus_parity.py::test_milvus_deep_pages_are_slices_of_one_ranking asks Milvus one ranking
    twice and gets the same list."""
    # one server, one CPU, one set of libraries: the same bytes (another CPU may differ in a score's
    # last digits, docs/indexing.md «Dense scores across CPUs»; no test compares across machines)
    body = {"query": "diffusion transformers for video generation", "top_k": 25, "return_contents": True}
    first, second = client.post("/search", json=body), client.post("/search", json=body)
    assert first.content == second.content


def test_batch_answers_each_query_in_order(client: httpx.Client) -> None:
    queries = ["graph neural networks", "exoplanet atmospheres", "speech recognition"]
    body = client.post("/search", json={"query": queries, "top_k": 5}).json()
    assert body["status"] == "success"
    assert [r["query"] for r in body["results"]] == queries
    singles = [client.post("/search", json={"query": q, "top_k": 5}).json() for q in queries]
    for per_query, single in zip(body["results"], singles, strict=True):
        assert per_query["result"] == single["result"]
        assert per_query["total_count"] == single["total_count"]
    # `result`: round-robin merge (q1 #1, q2 #1, q3 #1, q1 #2, ...), de-duplicated, cut to top_k
    expected: list[str] = []
    for rank in range(5):
        for single in singles:
            aid = ids(single)[rank]
            if aid not in expected:
                expected.append(aid)
    assert ids(body) == expected[:5]
    assert body["total_count"] == len(expected)


def test_single_query_has_no_batch_keys(client: httpx.Client) -> None:
    body = client.post("/search", json={"query": "graph neural networks"}).json()
    # on Milvus the fusion lists are 100 deep (issue 42), so past them the count is a lower bound said
    # in `warnings` (docs/scale.md, "Fusion on Milvus"); never a batch key
    assert {"status", "total_count", "result"} <= set(body) <= {"status", "total_count", "result", "warnings"}


def test_mode_override(client: httpx.Client) -> None:
    """Every engine mode answers on ``/search``; a side the index lacks is a 400 naming it.

    On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the default suite's
    test_milvus_parity.py runs Milvus in the default, ``bm25`` and ``dense_papers`` modes."""
    for mode in ("bm25", "dense", "rrf", "weighted", "zscore", "bm25_papers", "dense_papers"):
        r = client.post("/search", json={"query": QUERY, "top_k": 5, "mode": mode})
        assert r.status_code == 200 and len(r.json()["result"]) == 5, mode
    # the test index embeds papers only: a passage-vector side is the client's mistake, named
    r = client.post("/search", json={"query": QUERY, "mode": "dense_passages"})
    assert r.status_code == 400 and "dense_passages" in r.json()["detail"]


def test_server_timing_header(client: httpx.Client) -> None:
    r = client.post("/search", json={"query": QUERY})
    timing = r.headers["server-timing"]
    for part in ("bm25;dur=", "encode;dur=", "dense;dur=", "hydrate;dur="):
        assert part in timing
    if "feedback" in client.get("/v1/index").json()["backend"]["ranking"]:  # the embedded backend's
        # the feedback's BM25 pass is timed apart from the query's own (bench_service counts them apart)
        assert "feedback;dur=" in timing
        bm25 = client.post("/search", json={"query": QUERY, "mode": "bm25"}).headers["server-timing"]
        assert "bm25;dur=" in bm25 and "feedback;dur=" not in bm25


def test_v1_search(client: httpx.Client) -> None:
    post = client.post("/v1/search", json={"query": QUERY, "top_k": 5, "categories": ["cs.CL"]}).json()
    assert post["query"] == QUERY and post["top_k"] == 5 and len(post["hits"]) == 5
    assert [h["rank"] for h in post["hits"]] == [1, 2, 3, 4, 5]
    assert all("cs.CL" in h["categories"] for h in post["hits"])
    hit = post["hits"][0]
    assert isinstance(hit["authors"][0], str) and hit["evidence"]["text"] and hit["evidence"]["source"]
    assert "bm25_papers_rank" in hit["signals"] and post["snapshot"]
    get = client.get("/v1/search", params={"q": QUERY, "top_k": 5, "category": "cs.CL"}).json()
    assert [h["arxiv_id"] for h in get["hits"]] == [h["arxiv_id"] for h in post["hits"]]
    page2 = client.get("/v1/search", params={"q": QUERY, "top_k": 5, "offset": 5}).json()
    assert page2["hits"][0]["rank"] == 6


def test_v1_paper_and_sections(client: httpx.Client) -> None:
    paper = client.get("/v1/papers/arXiv:1502.03167v3").json()
    assert paper["arxiv_id"] == "1502.03167" and paper["has_fulltext"]
    assert paper["pdf_url"] == "https://arxiv.org/pdf/1502.03167"
    names = [s["name"] for s in paper["sections"]]
    intro = client.get("/v1/papers/1502.03167/sections/INTRODUCTION").json()
    assert intro["name"] == "Introduction" and intro["text"] and intro["token_count"] > 0
    printed = client.get("/v1/papers/1502.03167/sections/1").json()  # printed "1 ...", not idx 1
    assert printed["name"] == next(s["name"] for s in paper["sections"] if s["number"] == "1")
    unprinted = next(i for i in range(len(names)) if str(i) not in {s["number"] for s in paper["sections"]})
    by_index = client.get(f"/v1/papers/1502.03167/sections/idx:{unprinted}").json()  # asked as an index
    assert by_index["name"] == names[unprinted]
    missing = client.get("/v1/papers/1502.03167/sections/Appendix Z")
    assert missing.status_code == 404
    assert "Introduction" in missing.json()["detail"]  # lists what exists


def test_a_printed_number_is_never_an_index(client: httpx.Client) -> None:
    """1502.03167 prints 3, 3.1, 3.2, 4.1, 4.2, 4.2.1, ... but no "4" (issue 36, item 4): ``4`` serves
    4.1 and 4.2 (with 4.2.x) together instead of falling back to idx 4 (which is 3.2); a number it
    does not print is a 404 listing the printed ones; a 0-based position is asked as ``idx:N``."""
    sections = client.get("/v1/papers/1502.03167").json()["sections"]
    printed = {s["number"]: s for s in sections if s["number"]}
    assert "4" not in printed and {"4.1", "4.2", "4.2.1"} <= set(printed)
    four = client.get("/arxiv/", params={"type": "section", "arxiv_id": "1502.03167", "section": "4"}).json()
    assert four["number"] == "4" and four["idx"] == printed["4.1"]["idx"]
    assert four["name"] == f"{printed['4.1']['name']}; {printed['4.2']['name']}"
    v1 = {s: client.get(f"/v1/papers/1502.03167/sections/{s}").json() for s in ("4.1", "4.2.1", "3.2")}
    for part in ("4.1", "4.2.1"):
        assert (
            f"{part} {printed[part]['name']}" in four["content"] and v1[part]["text"][:200] in four["content"]
        )
    assert v1["3.2"]["text"][:200] not in four["content"]
    missing = client.get("/v1/papers/1502.03167/sections/7")
    assert missing.status_code == 404
    detail = missing.json()["detail"]
    assert "prints no section numbered '7'" in detail and "1, 2, 3, 3.1" in detail and "idx:7" in detail
    assert client.get("/v1/papers/1502.03167/sections/idx:4").json()["number"] == "3.2"
    assert client.get("/v1/papers/1502.03167/sections/%234").json()["number"] == "3.2"


def test_v1_old_style_id(client: httpx.Client) -> None:
    hit = client.post("/search", json={"query": "planetary nebulae interstellar medium", "top_k": 50}).json()
    old = next(h["arxiv_id"] for h in hit["result"] if "/" in h["arxiv_id"])
    paper = client.get(f"/v1/papers/{old}").json()
    assert paper["arxiv_id"] == old and paper["sections"]
    first = paper["sections"][0]["name"]
    assert client.get(f"/v1/papers/{old}/sections/0").json()["name"] == first
    head = client.get("/arxiv/", params={"type": "head", "arxiv_id": old}).json()
    assert head["arxiv_id"] == old and next(s for s in head["sections"] if s["idx"] >= 0)["name"] == first


def test_v1_index_and_probes(client: httpx.Client) -> None:
    info = client.get("/v1/index").json()
    assert info["snapshot"] and info["stats"]["papers"] > 2000 and info["manifest"]["format_version"]
    assert info["backend"]["sides"]
    assert client.get("/healthz").json()["status"] == "ok"
    ready = client.get("/readyz").json()
    # the warm-up's progress rides along (OPENXIV_SERVE_WARM): its wording, not its numbers
    assert {k: v for k, v in ready.items() if k != "warm"} == {
        "status": "ready",
        "snapshot": info["snapshot"],
    }
    assert ready["warm"] == "off" or ready["warm"].startswith(("warm: ", "warming: "))


def test_openapi_docs(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    for path in ("/search", "/arxiv/", "/v1/search", "/v1/papers/{arxiv_id}", "/v1/index", "/healthz"):
        assert path in spec["paths"]
    assert client.get("/docs").status_code == 200


V1_INDEX_KEYS = {"snapshot", "path", "loaded_at", "reloads", "manifest", "stats", "backend"}
BACKEND_KEYS = {"path", "sides", "papers", "passages", "ranking"}
RANKING_KEYS = {
    "fusion",
    "rrf_k",
    "weight_bm25",
    "weight_dense",
    "candidates",
    "bm25_passage_scale",
    "passage_norm",
    "passage_norm_scale",
    "prior",
}


def test_v1_index_keys_are_golden_and_show_the_manifest_once(client: httpx.Client) -> None:
    """`/v1/index` shape: the manifest under ``manifest`` only; ``backend`` holds live facts alone."""
    info = client.get("/v1/index").json()
    assert set(info) == V1_INDEX_KEYS
    assert {"format_version", "corpus", "counts", "bm25", "embedding", "fusion", "build"} <= set(
        info["manifest"]
    )
    assert set(info["backend"]) == BACKEND_KEYS, sorted(set(info["backend"]) - BACKEND_KEYS)
    ranking = info["backend"]["ranking"]
    # pseudo-relevance feedback settings are reported by the backends that run it: both since issue
    # 42 (Milvus with the BM25 statistics its build writes); the category prior runs on both backends
    assert set(ranking) == RANKING_KEYS | {"feedback"}
    assert info["backend"]["papers"] == info["manifest"]["counts"]["papers"]


def test_mode_vocabulary_is_the_engines_on_every_route(client: httpx.Client) -> None:
    """Every `mode` description names every engine mode, and the legacy `search_mode` takes them all.

    On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the OpenAPI text is the
    same on both backends, and the default suite's Milvus run of test_filtered_query_still_returns_top_k
    answers the same routes."""
    from openxiv.corpus.settings.modes import MODES

    spec = client.get("/openapi.json").json()
    params = [
        *spec["paths"]["/v1/search"]["get"]["parameters"],
        *spec["paths"]["/arxiv/"]["get"]["parameters"],
    ]
    described = [p["description"] for p in params if p["name"] == "mode"]
    described += [
        spec["components"]["schemas"][m]["properties"]["mode"]["description"]
        for m in ("SearchRequest", "V1SearchRequest")
    ]
    assert len(described) == 4
    for text in described:
        assert [m for m in MODES if m not in text] == [], text
    base = {"type": "retrieve", "query": QUERY, "top_k": 5}
    legacy = client.get("/arxiv/", params={**base, "search_mode": "bm25_papers"})
    assert legacy.status_code == 200, legacy.text
    assert ids(legacy.json()) == ids(client.get("/arxiv/", params={**base, "mode": "bm25_papers"}).json())
    vector = client.post("/v1/search", json={"query": QUERY, "top_k": 5, "mode": "vector"}).json()
    dense = client.post("/v1/search", json={"query": QUERY, "top_k": 5, "mode": "dense"}).json()
    assert [h["arxiv_id"] for h in vector["hits"]] == [h["arxiv_id"] for h in dense["hits"]]
