"""Passages as results, facets, title match, author view and BibTeX (issue 41) against the live server
on the session's real index (real PDFs and plain texts, real listings): what each answers, that the
``/arxiv/`` types answer the same, and that bad input is a 4xx naming its parameter."""

from __future__ import annotations

import httpx
import pytest
from live_index import BuiltIndex

PAPER = "1706.03762"  # Attention Is All You Need, from its real PDF: "label smoothing" in Regularization
BN = "1502.03167"


# ------------------------------------------------------------------------------ passages
def test_passages_are_ranked_across_papers_with_section_offsets_and_marks(client: httpx.Client) -> None:
    r = client.get("/v1/passages", params={"q": "label smoothing", "top_k": 10})
    assert r.status_code == 200, r.text
    body = r.json()
    hits = body["result"]
    assert body["total_count"] >= len(hits) == 10 and [h["rank"] for h in hits] == list(range(1, 11))
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    top = hits[0]
    assert top["arxiv_id"] == PAPER and top["kind"] == "body" and top["section"] == "Regularization"
    assert "**Label** **Smoothing**" in top["highlight"] and set(top["matched"]) >= {"label", "smoothing"}
    assert top["char_end"] - top["char_start"] == len(top["text"]) and top["passage_id"] is not None
    # the offsets locate the passage in its section's text
    section = client.get(f"/v1/papers/{PAPER}/sections/idx:{top['section_idx']}").json()
    assert section["text"][top["char_start"] : top["char_end"]] == top["text"]
    kinds = {h["kind"] for h in body["result"]}
    assert "abstract" in kinds  # listing papers answer with their abstracts on the same scale


def test_passages_page_is_a_slice_of_one_ranking(client: httpx.Client) -> None:
    whole = client.get("/v1/passages", params={"q": "attention heads", "top_k": 12}).json()
    page = client.get("/v1/passages", params={"q": "attention heads", "top_k": 4, "offset": 8}).json()
    key = [(h["arxiv_id"], h["passage_id"]) for h in whole["result"]]
    assert [(h["arxiv_id"], h["passage_id"]) for h in page["result"]] == key[8:12]
    assert page["total_count"] == whole["total_count"] and page["result"][0]["rank"] == 9
    per_paper = [h["arxiv_id"] for h in whole["result"]]
    assert len(set(per_paper)) < len(per_paper)  # several passages of one paper: not one hit per paper


def test_passages_within_papers_and_filters(client: httpx.Client) -> None:
    inside = client.get(
        "/v1/passages", params={"q": "normalization", "paper_ids": f"{PAPER},{BN}", "top_k": 20}
    )
    assert inside.status_code == 200, inside.text
    hits = inside.json()["result"]
    assert len(hits) == 20 and {h["arxiv_id"] for h in hits} <= {PAPER, BN}
    alone = [
        client.get("/v1/passages", params={"q": "normalization", "paper_ids": p}).json() for p in (PAPER, BN)
    ]
    assert all(
        a["result"] and {h["arxiv_id"] for h in a["result"]} == {p}
        for a, p in zip(alone, (PAPER, BN), strict=True)
    )
    assert inside.json()["total_count"] == sum(a["total_count"] for a in alone)
    astro = client.get("/v1/passages", params={"q": "galaxy formation", "category": "astro-ph", "top_k": 10})
    for h in astro.json()["result"]:
        head = client.get("/arxiv/", params={"type": "head", "arxiv_id": h["arxiv_id"]}).json()
        assert any(c.startswith("astro-ph") for c in head["categories"])
    same = client.get(
        "/arxiv/",
        params={"type": "passages", "query": "normalization", "paper_ids": [PAPER, BN], "top_k": 20},
    ).json()
    assert same["result"] == inside.json()["result"]


@pytest.mark.parametrize(
    ("path", "params", "status", "named"),
    [
        ("/v1/passages", {"q": " "}, 400, "query"),
        ("/v1/passages", {"q": "x", "top_k": 0}, 400, "top_k"),
        ("/v1/passages", {"q": "x", "paper_ids": "not-an-id"}, 400, "paper_ids"),
        ("/v1/passages", {"q": "x", "paper_ids": "2501.99999"}, 404, "paper_ids"),
        ("/v1/passages", {"q": "x", "date_from": "2025-13"}, 400, "date_from"),
        ("/arxiv/", {"type": "retrieve", "query": "x", "paper_ids": PAPER}, 400, "paper_ids"),
        ("/v1/facets", {"q": "x", "top_authors": 101}, 400, "top_authors"),
        ("/v1/facets", {"category": "no such!"}, 400, "categor"),
        ("/v1/match", {"title": "  "}, 400, "title"),
        ("/v1/match", {"title": "?!"}, 400, "title"),
        ("/v1/authors", {"name": " "}, 400, "name"),
        ("/v1/authors", {"name": "Qwzxv Ploughjk"}, 404, "name"),
        ("/v1/bibtex", {"arxiv_id": "nope"}, 400, "arxiv_id"),
        ("/v1/bibtex", {"arxiv_id": PAPER, "format": "ris"}, 400, "format"),
        ("/v1/bibtex", {"arxiv_id": "2501.99999"}, 404, "2501.99999"),
        ("/arxiv/", {"type": "match"}, 400, "query"),
        ("/arxiv/", {"type": "bibtex"}, 400, "arxiv_id"),
    ],
)
def test_bad_input_is_a_4xx_naming_the_parameter(
    client: httpx.Client, path: str, params: dict, status: int, named: str
) -> None:
    r = client.get(path, params=params)
    assert r.status_code == status, r.text
    assert named in r.json()["detail"]


# ------------------------------------------------------------------------------ facets
def test_facets_count_the_papers_a_search_counts(client: httpx.Client) -> None:
    q = "diffusion language models"
    body = client.get("/v1/facets", params={"q": q, "top_authors": 5}).json()
    searched = client.get("/v1/search", params={"q": q, "top_k": 1}).json()
    assert body["total_count"] == searched["total_count"] > 0
    assert sum(c["count"] for c in body["years"]) + body["undated"] == body["total_count"]
    assert sum(c["count"] for c in body["months"]) + body["undated"] == body["total_count"]
    assert {c["value"][:4] for c in body["months"]} == {c["value"] for c in body["years"]}
    cats = [c["count"] for c in body["categories"]]
    assert cats == sorted(cats, reverse=True) and sum(cats) >= body["total_count"]
    assert len(body["authors"]) == 5 and "within this corpus" in body["note"]
    top = body["authors"][0]
    filtered = client.get("/v1/search", params={"q": q, "author": top["name"], "top_k": 1}).json()
    assert filtered["total_count"] >= top["count"]
    narrowed = client.get("/v1/facets", params={"q": q, "category": "cs.CL"}).json()
    cl = next(c["count"] for c in body["categories"] if c["value"] == "cs.CL")
    assert narrowed["total_count"] == cl
    dated = client.get("/v1/facets", params={"q": q, "date_from": "2025-04", "date_to": "2025-04"}).json()
    april = next(c["count"] for c in body["months"] if c["value"] == "2025-04")
    assert dated["total_count"] == april and [c["value"] for c in dated["months"]] == ["2025-04"]


def test_facets_without_a_query_count_what_the_filters_keep(client: httpx.Client) -> None:
    every = client.get("/v1/facets", params={"top_authors": 0}).json()
    papers = client.get("/v1/index").json()["stats"]["papers"]
    assert every["total_count"] == papers and every["authors"] == [] and every["query"] == ""
    same = client.get("/arxiv/", params={"type": "facets", "categories": "astro-ph"}).json()
    assert 0 < same["total_count"] < papers


# ------------------------------------------------------------------------------ title match
def test_title_match_finds_the_paper_with_a_confidence(client: httpx.Client) -> None:
    exact = client.get("/v1/match", params={"title": "attention is all you need"}).json()
    assert exact["match"]["arxiv_id"] == PAPER and exact["confidence"] == 1.0
    # a pasted title with its last word cut off and different case still matches, with less confidence
    cut = "Batch normalization: accelerating deep network training by reducing internal covariate"
    near = client.get("/v1/match", params={"title": cut}).json()
    assert near["match"]["arxiv_id"] == BN and 0.8 <= near["confidence"] < 1.0
    assert [c["confidence"] for c in near["candidates"]] == sorted(
        (c["confidence"] for c in near["candidates"]), reverse=True
    )
    none = client.get("/v1/match", params={"title": "A survey of quantum gravity for bakers"}).json()
    assert none["match"] is None and none["confidence"] < 0.8
    same = client.get("/arxiv/", params={"type": "match", "query": "attention is all you need"}).json()
    assert same == exact


# ------------------------------------------------------------------------------ author view
def test_author_view_folds_spellings(client: httpx.Client) -> None:
    # the listings print this author both as "Jiří Matas" and as "Jiri Matas"
    for asked in ("Jiri Matas", "jiří matas", "Matas, Jiri"):
        body = client.get("/v1/authors", params={"name": asked}).json()
        assert body["matched"] == ["jiri matas"] and set(body["spellings"]) == {"Jiri Matas", "Jiří Matas"}
        assert body["total_count"] == len(body["result"]) >= 2
    dates = [p["date"] for p in body["result"]]
    assert dates == sorted(dates, reverse=True)
    # initials alone of a full name do not match another author ("A. V. Titova" for Ashish Vaswani)
    one = client.get("/v1/authors", params={"name": "Ashish Vaswani"}).json()
    assert one["matched"] == ["ashish vaswani"] and [p["arxiv_id"] for p in one["result"]] == [PAPER]
    paged = client.get(
        "/arxiv/", params={"type": "author", "query": "Jiri Matas", "top_k": 1, "offset": 1}
    ).json()
    assert paged["result"] == body["result"][1:2]


# ------------------------------------------------------------------------------ BibTeX
def test_bibtex_for_any_paper(client: httpx.Client) -> None:
    text = client.get(f"/v1/papers/{PAPER}/bibtex")
    assert text.status_code == 200 and text.headers["content-type"].startswith("application/x-bibtex")
    entry = text.text
    assert (
        entry.startswith("@misc{vaswani2017attention,\n")
        and "  title = {{Attention Is All You Need}},\n" in entry
    )
    assert "Ashish Vaswani and Noam Shazeer" in entry and "eprint = {1706.03762}" in entry
    assert "primaryClass = {cs.CL}" in entry and entry.count("{") == entry.count("}")
    both = client.get("/v1/bibtex", params={"arxiv_id": f"arXiv:{BN}v3,{PAPER}"}).json()
    assert [e["arxiv_id"] for e in both["result"]] == [BN, PAPER] and both["result"][1][
        "bibtex"
    ] + "\n" == entry
    assert both["result"][0]["key"] == "ioffe2015batch"
    same = client.get("/arxiv/", params={"type": "bibtex", "arxiv_id": f"{BN},{PAPER}"}).json()
    assert same == both
    # a listing paper has a BibTeX entry too, TeX's special characters escaped
    listing = client.get("/v1/passages", params={"q": "benchmark", "top_k": 1}).json()["result"][0][
        "arxiv_id"
    ]
    one = client.get(f"/v1/papers/{listing}/bibtex").text
    assert one.startswith("@") and f"eprint = {{{listing}}}" in one and "& " not in one.replace("\\& ", "")


def test_past_the_time_budget_is_a_503_on_every_front_of_the_engine(test_index: BuiltIndex) -> None:
    from fastapi.testclient import TestClient

    from openxiv.service.http.app import create_app

    settings = test_index.settings.replace(request_budget_s=1e-6)
    with TestClient(create_app(settings, test_index.root)) as c:
        for path, params in (
            ("/v1/passages", {"q": "attention heads"}),
            ("/v1/facets", {"q": "attention heads"}),
            ("/v1/match", {"title": "attention is all you need"}),
        ):
            r = c.get(path, params=params)
            assert r.status_code == 503 and "OPENXIV_REQUEST_BUDGET_S" in r.json()["detail"], path
        s2 = c.get("/graph/v1/snippet/search", params={"query": "attention heads"})
        assert s2.status_code == 503 and "OPENXIV_REQUEST_BUDGET_S" in s2.json()["error"]
        assert c.get("/healthz").status_code == 200
