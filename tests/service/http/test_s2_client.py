"""The Semantic Scholar-compatible API (issue 41, item 4) driven by the unmodified ``semanticscholar``
client library from PyPI, its base URL pointed at a live ``openxiv serve`` on the session's real index
(and on the unArXive references index for references and citations): its paper, search, batch,
references, citations, recommendations and snippet calls answer what openxiv's own routes answer,
and S2's error shapes reach the client as its own exceptions."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest
from live_index import BuiltIndex, LiveServer
from semanticscholar import SemanticScholar
from semanticscholar.SemanticScholarException import BadQueryParametersException, ObjectNotFoundException

PAPER = "1706.03762"
BN = "1502.03167"


@pytest.fixture(scope="module")
def s2(server: LiveServer) -> SemanticScholar:
    return SemanticScholar(api_url=server.url, retry=False, timeout=60)


@pytest.fixture(scope="module")
def refs_s2(refs_index: BuiltIndex) -> Iterator[SemanticScholar]:
    live = LiveServer(refs_index.root)
    try:
        yield SemanticScholar(api_url=live.url, retry=False, timeout=60)
    finally:
        live.stop()


def test_paper_with_the_clients_default_fields(s2: SemanticScholar) -> None:
    paper = s2.get_paper(f"ARXIV:{PAPER}")  # the client asks every field it knows, nested ones too
    assert paper.paperId == PAPER and paper.title == "Attention Is All You Need"
    assert paper.externalIds == {"ArXiv": PAPER} and paper.year == 2017 and paper.corpusId == 170603762
    assert [a.name for a in paper.authors][:2] == ["Ashish Vaswani", "Noam Shazeer"]
    assert paper.citationStyles["bibtex"].startswith("@misc{vaswani2017attention,")
    assert paper.tldr is not None and paper.tldr.text and paper.isOpenAccess
    assert paper.openAccessPdf["url"] == f"https://arxiv.org/pdf/{PAPER}"
    assert paper.fieldsOfStudy == ["Computer Science"] and paper.publicationDate is not None
    for spelling in (PAPER, f"URL:https://arxiv.org/abs/{PAPER}v7", "CorpusId:170603762"):
        assert s2.get_paper(spelling, fields=["title"]).paperId == PAPER


def test_search_pages_the_same_ranking_as_v1_search(s2: SemanticScholar, client: httpx.Client) -> None:
    q = "diffusion language models"
    results = s2.search_paper(q, limit=5)
    want = client.get("/v1/search", params={"q": q, "top_k": 15}).json()
    assert results.total == want["total_count"]
    ids = [p.paperId for p, _ in zip(results, range(15), strict=False)]  # the client fetches 3 pages
    assert ids == [h["arxiv_id"] for h in want["hits"]]
    filtered = s2.search_paper(
        q, year="2025", fields_of_study=["Computer Science"], limit=20, fields=["year", "fieldsOfStudy"]
    )
    assert filtered.total < results.total and all(p.year == 2025 for p in filtered.items)
    assert all("Computer Science" in p.fieldsOfStudy for p in filtered.items)
    found = s2.search_paper("Attention is all you need", match_title=True)
    assert found.paperId == PAPER and found.raw_data["matchScore"] == 1.0


def test_batch_leaves_unknown_ids_out(s2: SemanticScholar) -> None:
    papers, missing = s2.get_papers(
        [f"ARXIV:{PAPER}", BN, "ARXIV:2501.99999", "DOI:10.1000/none"], return_not_found=True
    )
    assert [p.paperId for p in papers] == [PAPER, BN] and missing == ["ARXIV:2501.99999", "DOI:10.1000/none"]


def test_references_and_citations_from_the_bibliographies(refs_s2: SemanticScholar) -> None:
    citing = "2212.11790"  # its unArXive bibliography cites ResNet, which the references index holds
    refs = list(refs_s2.get_paper_references(f"ARXIV:{citing}", limit=10))  # pages of 10
    assert len(refs) == 40
    resnet = [r.paper for r in refs if r.paper.paperId == "1512.03385"]
    assert resnet and resnet[0].title == "Deep Residual Learning for Image Recognition"
    outside = [r.paper for r in refs if r.paper.paperId is None]
    assert outside and all(p.title for p in outside)  # not in the corpus: the printed entry
    cited = refs_s2.get_paper_citations("ARXIV:1512.03385")
    assert {c.paper.paperId for c in cited} >= {"2212.11772", citing}
    assert refs_s2.get_paper(citing, fields=["referenceCount"]).referenceCount == 40
    counted = refs_s2.get_paper("1512.03385", fields=["citationCount"]).citationCount
    assert counted == len(list(cited))  # within this corpus


def test_recommendations_are_the_similar_papers(s2: SemanticScholar, client: httpx.Client) -> None:
    one = s2.get_recommended_papers(f"ARXIV:{PAPER}", limit=5)
    want = client.get("/v1/similar", params={"arxiv_id": PAPER, "top_k": 5}).json()
    assert [p.paperId for p in one] == [h["arxiv_id"] for h in want["hits"]]
    steered = s2.get_recommended_papers_from_lists([f"ARXIV:{PAPER}"], [f"ARXIV:{BN}"], limit=150)
    want = client.get("/v1/similar", params={"arxiv_id": PAPER, "negative_ids": BN, "top_k": 100}).json()
    ids = [p.paperId for p in steered]
    assert len(ids) == 150 == len(set(ids)) and ids[:100] == [h["arxiv_id"] for h in want["hits"]]
    assert PAPER not in ids and BN not in ids


def test_snippet_search_is_passages(s2: SemanticScholar, client: httpx.Client) -> None:
    snippets = s2.search_snippet("label smoothing", limit=3)
    want = client.get("/v1/passages", params={"q": "label smoothing", "top_k": 3}).json()["result"]
    assert [s.snippet.text for s in snippets] == [p["text"] for p in want]
    top = snippets[0]
    assert top.paper.title == "Attention Is All You Need" and top.snippet.section == "Regularization"
    assert top.snippet.snippet_offset == {"start": want[0]["char_start"], "end": want[0]["char_end"]}
    inside = s2.search_snippet("normalization", paper_ids=[f"ARXIV:{BN}"], limit=5)
    assert inside and {s.paper.raw_data["paperId"] for s in inside} == {BN}


def test_errors_reach_the_client_as_its_exceptions(s2: SemanticScholar, client: httpx.Client) -> None:
    with pytest.raises(ObjectNotFoundException, match=re.escape("Paper with id ARXIV:2501.99999 not found")):
        s2.get_paper("ARXIV:2501.99999")
    with pytest.raises(BadQueryParametersException, match="fields"):
        s2.get_paper(f"ARXIV:{PAPER}", fields=["title", "bogus"])
    with pytest.raises(ObjectNotFoundException, match="Title match not found"):
        s2.search_paper("A survey of quantum gravity for bakers", match_title=True)
    for method, path, params, named in (
        ("GET", "/graph/v1/paper/search", {"query": "x", "limit": "abc"}, "limit"),
        ("GET", "/graph/v1/paper/search", {"limit": "3"}, "query"),
        ("GET", "/graph/v1/paper/search", {"query": "x", "year": "20x5"}, "year"),
        ("GET", "/graph/v1/paper/search", {"query": "x", "fieldsOfStudy": "Alchemy"}, "fieldsOfStudy"),
        ("GET", "/graph/v1/snippet/search", {"query": "x", "limit": "1001"}, "limit"),
        ("GET", f"/graph/v1/paper/{PAPER}/references", {"offset": "-1"}, "offset"),
        ("GET", f"/recommendations/v1/papers/forpaper/{PAPER}", {"from": "everything"}, "from"),
        ("POST", "/graph/v1/paper/batch", {}, "ids"),
        ("POST", "/recommendations/v1/papers/", {}, "positivePaperIds"),
    ):
        r = client.request(method, path, params=params, json={} if method == "POST" else None)
        assert r.status_code == 400 and named in r.json()["error"], (path, r.text)


def test_a_token_server_takes_the_clients_api_key(test_index: BuiltIndex) -> None:
    live = LiveServer(test_index.root, token="s2-key")
    try:
        keyed = SemanticScholar(api_url=live.url, api_key="s2-key", retry=False, timeout=60)
        assert keyed.get_paper(f"ARXIV:{PAPER}", fields=["title"]).title == "Attention Is All You Need"
        wrong = httpx.get(f"{live.url}/graph/v1/paper/{PAPER}", headers={"x-api-key": "other"})
        assert wrong.status_code == 401
    finally:
        live.stop()
