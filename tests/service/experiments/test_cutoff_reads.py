"""Per-question cutoffs on the reads beside search (HTTP, in process): title match, the author view and
the Semantic Scholar API's paper, batch, citation and recommendation reads hold a tagged question's
date ceiling as search does, and count what they held back as the call's leaks.

The snapshot: the 60 astro listing papers of 2025 and 100 plain texts of 2000 that ``bm25_snapshot``
holds, plus the plain text hep-ph/9808261 (1998), which hep-ph/0003058 (March 2000) cites. The
question ``old`` has the ceiling 2000-02-15: the 2025 papers and hep-ph/0003058 lie after it, T. Lu's
astro-ph/0002178 (February 2000) and hep-ph/9808261 before it."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from openxiv.corpus.ledger.records import LedgerRecord
from openxiv.corpus.ledger.store import LedgerReader
from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.service.http.app import create_app

CEILING = "2000-02-15"
LATER = "2504.11531"  # Pengjun Lu et al., 2025: "Oxyster: A Circumgalactic Low-ionization Oxygen Nebula ..."
CITED = "hep-ph/9808261"  # 1998, cited by CITING
CITING = "hep-ph/0003058"  # March 2000: after the ceiling
EARLY_LU = "astro-ph/0002178"  # T. Lu, February 2000: before it
S2 = "/graph/v1"


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The index root of a BM25-only build of the papers above (a few seconds)."""
    from openxiv.indexer.building.job import build_index

    shared = SharedData.default()
    if not shared.available:
        pytest.skip(shared.missing_message())
    tmp = tmp_path_factory.mktemp("cutoff_reads")
    texts = tmp / "plaintext.jsonl"
    with gzip.open(shared.plaintext, "rt") as rows, texts.open("w") as out:
        for i, line in enumerate(rows):
            if i < 100 or json.loads(line)["id"] == CITED:
                out.write(line)
    items = itertools.chain(
        itertools.islice(read_path(shared.listing("astro")), 60), read_path(texts, "plaintext")
    )
    with Store(tmp / "corpus.sqlite") as store:
        store.ingest(items)
    build_index(tmp / "corpus.sqlite", tmp / "index", Settings(data_dir=tmp, embed="none"), progress=False)
    return tmp / "index"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return tmp_path / "ledger"


@pytest.fixture
def client(snapshot: Path, tmp_path: Path, ledger: Path) -> Iterator[TestClient]:
    cutoffs = tmp_path / "cutoffs.json"
    cutoffs.write_text(json.dumps({"old": CEILING}))
    settings = Settings(data_dir=tmp_path, embed="none", ledger=ledger, cutoffs=cutoffs)
    with TestClient(create_app(settings, snapshot)) as c:
        yield c


def last(ledger: Path, run: str) -> LedgerRecord:
    return list(LedgerReader(ledger).records(run=run))[-1]


def test_title_match_does_not_find_a_later_paper(client: TestClient, ledger: Path) -> None:
    title = client.get(f"/v1/papers/{LATER}").json()["title"]
    free = client.get("/runs/m/q/none/v1/match", params={"title": title}).json()
    assert free["match"]["arxiv_id"] == LATER and free["confidence"] == 1.0
    for run, path, params in (
        ("m1", "/v1/match", {"title": title}),
        ("m2", "/arxiv/", {"type": "match", "query": title}),
    ):
        held = client.get(f"/runs/{run}/q/old{path}", params=params).json()
        assert held["match"] is None, path
        assert held["candidates"] and all(c["date"] <= CEILING for c in held["candidates"])
        record = last(ledger, run)
        assert record.kind == "match" and record.cutoff == CEILING
        assert LATER in record.leaked and record.leaks == len(record.leaked)
        later = {c["arxiv_id"] for c in free["candidates"] if c["date"] > CEILING}
        assert set(record.leaked) == later  # the candidates the answer would have listed
    s2 = client.get(f"/runs/m3/q/old{S2}/paper/search/match", params={"query": title})
    assert s2.status_code == 404 and s2.json() == {"error": "Title match not found"}
    assert LATER in last(ledger, "m3").leaked
    found = client.get(f"/runs/m3/q/none{S2}/paper/search/match", params={"query": title})
    assert found.json()["data"][0]["paperId"] == LATER


def test_the_author_view_leaves_later_papers_and_their_names_out(client: TestClient, ledger: Path) -> None:
    free = client.get("/runs/a/q/none/v1/authors", params={"name": "Lu", "top_k": 3}).json()
    assert free["total_count"] == 5 and len(free["matched"]) == 5
    shown = [p["arxiv_id"] for p in free["result"]]
    assert LATER in shown and all(p["date"] > CEILING for p in free["result"])
    held = client.get("/runs/a1/q/old/v1/authors", params={"name": "Lu", "top_k": 3}).json()
    assert [p["arxiv_id"] for p in held["result"]] == [EARLY_LU] and held["total_count"] == 1
    assert held["matched"] == ["t lu"] and held["spellings"] == ["T. Lu"]
    record = last(ledger, "a1")
    assert record.kind == "author" and record.cutoff == CEILING and set(record.leaked) == set(shown)
    only_later = client.get("/runs/a2/q/old/arxiv/", params={"type": "author", "query": "Pengjun Lu"})
    assert only_later.status_code == 404 and "no author of this corpus matches" in only_later.json()["detail"]
    assert last(ledger, "a2").leaked == (LATER,)


def test_semantic_scholar_reads_hold_the_ceiling(client: TestClient, ledger: Path) -> None:
    one = client.get(f"/runs/s1/q/old{S2}/paper/{LATER}")
    assert one.status_code == 404 and one.json() == {"error": f"Paper with id {LATER} not found"}
    assert last(ledger, "s1").leaked == (LATER,) and last(ledger, "s1").cutoff == CEILING
    assert client.get(f"/runs/s1/q/none{S2}/paper/{LATER}").status_code == 200
    batch = client.post(f"/runs/s2/q/old{S2}/paper/batch", json={"ids": [LATER, CITED, f"arXiv:{CITING}"]})
    assert [p and p["paperId"] for p in batch.json()] == [None, CITED, None]
    assert set(last(ledger, "s2").leaked) == {LATER, CITING}
    fields = {"fields": "title,citationCount,citations"}
    free = client.get(f"/runs/s3/q/none{S2}/paper/{CITED}", params=fields).json()
    assert free["citationCount"] == 1 and [c["paperId"] for c in free["citations"]] == [CITING]
    held = client.get(f"/runs/s3/q/old{S2}/paper/{CITED}", params=fields).json()
    assert held["citationCount"] == 0 and held["citations"] == []
    assert last(ledger, "s3").leaked == (CITING,)
    edges = client.get(f"/runs/s4/q/none{S2}/paper/{CITED}/citations").json()["data"]
    assert [e["citingPaper"]["paperId"] for e in edges] == [CITING]
    assert client.get(f"/runs/s4/q/old{S2}/paper/{CITED}/citations").json()["data"] == []
    assert last(ledger, "s4").leaked == (CITING,)
    for tail in ("references", "citations"):
        r = client.get(f"/runs/s5/q/old{S2}/paper/{CITING}/{tail}")
        assert r.status_code == 404 and r.json() == {"error": f"Paper with id {CITING} not found"}
        assert last(ledger, "s5").leaked == (CITING,)


def test_a_later_paper_is_no_seed_of_recommendations_or_similar_papers(
    client: TestClient, ledger: Path
) -> None:
    # a BM25-only snapshot has no paper vectors: a seed it holds gets as far as the 409 that says so
    free = client.get(f"/runs/r/q/none/recommendations/v1/papers/forpaper/{LATER}")
    assert free.status_code == 409
    for run, method, path, kw in (
        ("r1", "GET", f"/recommendations/v1/papers/forpaper/{LATER}", {}),
        ("r2", "POST", "/recommendations/v1/papers", {"json": {"positivePaperIds": [LATER]}}),
        ("r3", "GET", "/arxiv/", {"params": {"type": "similar", "arxiv_id": LATER}}),
        ("r4", "GET", "/v1/similar", {"params": {"arxiv_id": LATER}}),
    ):
        r = client.request(method, f"/runs/{run}/q/old{path}", **kw)
        assert r.status_code == 404 and "not in this corpus" in r.text, path
        assert last(ledger, run).leaked == (LATER,)
    negative = {"positivePaperIds": [CITED], "negativePaperIds": [LATER]}
    r = client.post("/runs/r5/q/old/recommendations/v1/papers", json=negative)
    assert r.status_code == 404 and "negative_ids" in r.text


def test_citation_counts_count_only_the_citing_papers_before_the_ceiling(
    client: TestClient, ledger: Path
) -> None:
    query = {"query": "pattern of neutrino masses and mixing", "top_k": 10}
    for question, want in (("none", 1), ("old", 0)):
        brief = client.get(f"/runs/c/q/{question}/arxiv/", params={"type": "brief", "arxiv_id": CITED})
        assert brief.json()["citations"] == want == brief.json()["citation_count"], question
        hits = client.post(f"/runs/c/q/{question}/search", json=query).json()["result"]
        assert [h["citation_count"] for h in hits if h["arxiv_id"] == CITED] == [want], question
        s2 = client.get(f"/runs/c/q/{question}{S2}/paper/{CITED}", params={"fields": "citationCount"})
        assert s2.json()["citationCount"] == want, question
    brief_record = [r for r in LedgerReader(ledger).records(run="c", question="old") if r.kind == "brief"]
    assert [(r.cutoff, r.leaks) for r in brief_record] == [(CEILING, 0)]  # a count shows no paper
