"""The real ``deepxiv-sdk`` ``Reader`` (from PyPI) against a live openxiv server."""

from __future__ import annotations

from datetime import date

import pytest
from live_index import LiveServer

deepxiv_sdk = pytest.importorskip("deepxiv_sdk")
from deepxiv_sdk import Reader  # noqa: E402
from deepxiv_sdk.exceptions import BadRequestError, NotFoundError  # noqa: E402

PDF_ID = "1502.03167"  # Batch Normalization, ingested from the real PDF


@pytest.fixture(scope="module")
def reader(server: LiveServer) -> Reader:
    return Reader(base_url=server.url, token="x", timeout=60, max_retries=0)


def test_search_shape(reader: Reader) -> None:
    res = reader.search("vision language models hallucination", size=5)
    assert res["status"] == "success" and res["total_count"] >= 5
    assert len(res["result"]) == 5
    hit = res["result"][0]
    for key in (
        "arxiv_id",
        "title",
        "score",
        "abstract",
        "tldr",
        "authors",
        "url",
        "date",
        "citation_count",
        "categories",
    ):
        assert key in hit
    assert all(isinstance(a, dict) and "name" in a for a in hit["authors"])


def test_search_with_categories_filter(reader: Reader) -> None:
    res = reader.search("star formation in galaxies", size=10, categories=["astro-ph.GA"])
    assert len(res["result"]) == 10
    assert all("astro-ph.GA" in h["categories"] for h in res["result"])
    archive = reader.search("neural network", size=10, categories=["astro-ph"])
    assert len(archive["result"]) == 10  # filtered before the cut: still top_k
    assert all(any(c.startswith("astro-ph") for c in h["categories"]) for h in archive["result"])


def test_search_with_author_filter(reader: Reader) -> None:
    """On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the default suite's
    Milvus runs of test_arb_contract.py::test_agent_author_filter_with_non_ascii_names and
    test_milvus_parity.py::test_filters_mean_the_same[author] filter Milvus by author."""
    first = reader.search("retrieval augmented generation survey", size=1)["result"][0]
    author = first["authors"][0]["name"]
    res = reader.search("generation", size=5, authors=[author])
    assert res["result"]
    assert all(author in [a["name"] for a in h["authors"]] for h in res["result"])


@pytest.mark.parametrize(
    ("kind", "value", "lo", "hi"),
    [
        ("exact", "2025-04", date(2025, 4, 1), date(2025, 4, 30)),
        ("between", ["2025-04-15", "2025-05"], date(2025, 4, 15), date(2025, 5, 31)),
        ("after", "2025-05", date(2025, 5, 1), date.max),
        ("before", "2025-04", date.min, date(2025, 3, 31)),
    ],
)
def test_search_with_date_filters(reader: Reader, kind: str, value: object, lo: date, hi: date) -> None:
    res = reader.search("dark matter halo", size=10, date_search_type=kind, date_str=value)
    assert len(res["result"]) == 10
    for h in res["result"]:
        assert lo <= date.fromisoformat(h["date"]) <= hi


def test_legacy_date_from_to(reader: Reader) -> None:
    res = reader.search("exoplanet atmospheres", size=5, date_from="2025-05-01", date_to="2025-05-31")
    assert res["result"]
    assert all(h["date"].startswith("2025-05") for h in res["result"])


def test_head(reader: Reader) -> None:
    head = reader.head(PDF_ID)
    assert head["title"].startswith("Batch Normalization")
    assert head["abstract"] and head["categories"] is not None
    assert isinstance(head["token_count"], int) and head["token_count"] > 1000
    sections = head["sections"]
    assert isinstance(sections, list) and len(sections) >= 3
    abstract, *own = sections  # the abstract is listed first, as a section (idx -1)
    assert (abstract["name"], abstract["idx"]) == ("Abstract", -1)
    for i, s in enumerate(own):
        assert set(s) >= {"name", "idx", "tldr", "token_count"} and s["idx"] == i
    assert any(s["name"].lower() == "introduction" for s in sections)
    assert head["title_source"] == "text"  # the PDF's title block


def test_brief(reader: Reader) -> None:
    brief = reader.brief(PDF_ID)
    assert brief["arxiv_id"] == PDF_ID
    assert brief["tldr"] and brief["src_url"] == f"https://arxiv.org/pdf/{PDF_ID}"
    assert isinstance(brief["citations"], int)  # in-corpus citations (issue 41)
    assert brief["github_url"] is None and brief["keywords"] is None
    assert "publish_at" in brief


def test_section_by_sdk_name_matching(reader: Reader) -> None:
    intro = reader.section(PDF_ID, "introduction")
    assert isinstance(intro, str) and len(intro) > 200
    with pytest.raises(ValueError):  # the SDK resolves names through head() first
        reader.section(PDF_ID, "no such section anywhere")


def test_the_sdk_reads_the_abstract_as_a_section(reader: Reader) -> None:
    """``Reader.section(id, "abstract")`` matches names through ``head`` and raised (issue 21)."""
    assert reader.section(PDF_ID, "abstract") == reader.head(PDF_ID)["abstract"]


def test_a_between_range_with_equal_ends_is_that_period(reader: Reader, server: LiveServer) -> None:
    """``date_from=X, date_to=X`` (the SDK sends ``between`` with ``date_str=[X, X]``) was a 400
    "needs 2 date value(s), got 1" (issue 21); it is the period X, on the SDK and ``POST /search``."""
    import httpx

    ids = [
        h["arxiv_id"]
        for h in reader.search("dark matter halo", size=10, date_from="2025-04", date_to="2025-04")["result"]
    ]
    exact = reader.search("dark matter halo", size=10, date_search_type="exact", date_str="2025-04")["result"]
    assert len(ids) == 10 and ids == [h["arxiv_id"] for h in exact]
    body = {
        "query": "dark matter halo",
        "top_k": 10,
        "date_search_type": "between",
        "date_str": ["2025-04", "2025-04"],
    }
    posted = httpx.post(f"{server.url}/search", json=body, timeout=60).json()
    assert [h["arxiv_id"] for h in posted["result"]] == ids
    day = {**body, "date_str": "2025-04-17,2025-04-17"}
    assert all(
        h["date"] == "2025-04-17"
        for h in httpx.post(f"{server.url}/search", json=day, timeout=60).json()["result"]
    )


def test_raw_and_preview(reader: Reader) -> None:
    raw = reader.raw(PDF_ID)
    assert raw.startswith("# Batch Normalization") and "Introduction\n" in raw and "## Abstract" in raw
    preview = reader.preview(PDF_ID)
    assert preview["total_characters"] == len(raw)
    assert preview["content"] == raw[:10_000] and preview["is_truncated"] is (len(raw) > 10_000)


def test_json(reader: Reader) -> None:
    paper = reader.json(PDF_ID)
    assert paper["arxiv_id"] == PDF_ID and paper["sections"] and "text" in paper["sections"][0]


def test_id_spellings_resolve(reader: Reader) -> None:
    assert reader.head(f"arXiv:{PDF_ID}v3")["arxiv_id"] == PDF_ID
    assert reader.head(f"https://arxiv.org/abs/{PDF_ID}")["arxiv_id"] == PDF_ID


def test_errors_map_to_sdk_exceptions(reader: Reader) -> None:
    with pytest.raises(NotFoundError):
        reader.head("2501.99999")
    with pytest.raises(BadRequestError):
        reader.head("not-an-id")


@pytest.mark.parametrize("author", ["Sławomir Tadeja", "Slawomir Tadeja"])
def test_search_with_non_ascii_author(reader: Reader, author: str) -> None:
    res = reader.search("gaussian splatting", size=5, authors=[author])
    assert [h["arxiv_id"] for h in res["result"]] == ["2503.12284"]
    assert "Sławomir Tadeja" in [a["name"] for a in res["result"][0]["authors"]]


def test_search_with_venue_filters(reader: Reader) -> None:
    res = reader.search("meson decays", size=5, venue="Chinese Physics C", venue_year=2022)
    assert [h["arxiv_id"] for h in res["result"]] == ["2212.11861"]
    assert "warnings" not in res
    assert reader.search("meson decays", size=5, venue="NeurIPS")["result"] == []


# ------------------------------------------------------------------ issue 9: complete and true papers
def test_sdk_finds_a_title_less_full_text_by_its_recovered_title(reader: Reader) -> None:
    """On Milvus an extended test (`make test-all`; tests/conftest.py, MILVUS_EXTENDED): the default suite's
    Milvus run of test_arb_contract.py::test_title_less_full_text_has_its_recovered_title_date_and_category
    finds the same paper by the same title."""
    res = reader.search("Vortex configurations in the large N limit", size=5)
    hit = next(h for h in res["result"] if h["arxiv_id"] == "hep-lat/0004002")
    assert hit["title"] == "Vortex configurations in the large N limit"
    head = reader.head("hep-lat/0004002")
    assert head["title"] == hit["title"] and head["categories"] == ["hep-lat"]


def test_sdk_old_style_id_date_and_category_from_the_id(reader: Reader) -> None:
    brief = reader.brief("astro-ph/0001004")
    assert brief["title"] == "Theory of the Interaction of Planetary Nebulae with the Interstellar Medium"
    assert str(brief["publish_at"]).startswith("2000-01")
    res = reader.search("planetary nebulae interstellar medium", size=10, categories=["astro-ph"],
                        date_search_type="before", date_str="2001")  # fmt: skip
    assert "astro-ph/0001004" in [h["arxiv_id"] for h in res["result"]]


def test_sdk_date_filter_keeps_a_2017_pdf_paper(reader: Reader) -> None:
    res = reader.search("attention is all you need", size=10, date_search_type="before", date_str="2018")
    ids = [h["arxiv_id"] for h in res["result"]]
    assert "1706.03762" in ids
    res = reader.search("attention is all you need", size=10, date_search_type="after", date_str="2018")
    assert "1706.03762" not in [h["arxiv_id"] for h in res["result"]]
    by_author = reader.search("attention", size=5, authors=["Ashish Vaswani"])
    assert [h["arxiv_id"] for h in by_author["result"]] == ["1706.03762"]
