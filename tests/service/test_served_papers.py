"""What every front serves of a paper (issue 21, items 2, 5 and 6), on the small BM25-only snapshot of
real ../shared papers (``bm25_snapshot``), read through `Library` (the MCP server's and ``openxiv search``'s use cases):

- a title on every answer, never null, with ``title_source`` beside it, also from a snapshot built
  before the field existed (its untitled papers get derived titles);
- sections addressed by their printed numbers and names first, the abstract as a section;
- MSC/ACM codes in ``subject_classes``, not ``categories``; TeX residue out of tldrs and evidence;
- full-width digit ids normalised.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.service.errors import BadRequest, NotFound
from openxiv.service.library import Library
from openxiv.service.params import FilterParams
from openxiv.service.readable import head_text, search_text, section_text

UNTITLED = "gr-qc/0001027"  # a plain text that opens with no title: its title is derived
TEXT_TITLED = "hep-ph/0004165"  # its title is recovered from the text's opening
LISTED = "2504.13996"  # astro listing: categories end with "85A05, 85-08, 85A40, 70F10, 85A15"
NUMBERED = "quant-ph/0004044"  # sections printed 1-4, 5.1-5.4, 6 after an unnumbered "Body"
ROMAN = "astro-ph/0002387"  # sections printed I, II, III, ...
CITED = "hep-ph/0004165"  # passages hold [\cite=...] markers


def _library(root: Path) -> Iterator[Library]:
    library = Library(root, Settings(data_dir=root.parent, embed="none", fusion="bm25"))
    library.load()
    try:
        yield library
    finally:
        library.close()


@pytest.fixture(scope="module")
def library(bm25_snapshot: Path) -> Iterator[Library]:
    yield from _library(bm25_snapshot)


@pytest.fixture(scope="module")
def old_library(bm25_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """The same snapshot as a build made before ``title_source`` existed: no such column, and no
    title for the papers whose title is now derived."""
    root = tmp_path_factory.mktemp("old") / "index"
    shutil.copytree(bm25_snapshot, root)
    (db,) = root.glob("snapshots/*/corpus.sqlite")
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE papers SET title = NULL, title_norm = NULL WHERE title_source = 'derived'")
        conn.execute("ALTER TABLE papers DROP COLUMN title_source")
    yield from _library(root)


def _search(library: Library, query: str, **filters: Any) -> Any:
    return library.search(query, top_k=20, filters=FilterParams(**filters), mode="bm25")


@pytest.mark.parametrize("which", ["new", "old"])
def test_every_answer_serves_a_title_and_where_it_comes_from(
    which: str, library: Library, old_library: Library
) -> None:
    lib = library if which == "new" else old_library
    want = {UNTITLED: "derived", TEXT_TITLED: "text", LISTED: "metadata"}
    derived = library.paper("head", UNTITLED).title
    assert derived and derived.startswith("Recently, physics dealing with higher dimensions")
    for arxiv_id, source in want.items():
        for kind in ("head", "brief", "json"):
            answer = lib.paper(kind, arxiv_id)
            assert answer.title and answer.title_source == source, (which, kind, arxiv_id)
        assert lib.paper("head", arxiv_id).title == library.paper("head", arxiv_id).title
    head = lib.paper("head", UNTITLED)
    assert head.title == derived and "[derived title]" in head_text(head)
    for query in ("gravitational waves", "energy", "magnetic field"):
        response = _search(lib, query)
        assert response.result and all(h.title and h.title_source for h in response.result), query
    hit = next(h for h in _search(lib, derived).result if h.arxiv_id == UNTITLED)
    assert (hit.title, hit.title_source) == (derived, "derived")
    assert "[derived title]" in search_text(_search(lib, derived), derived)


def test_subject_classes_are_not_categories(library: Library) -> None:
    head = library.paper("head", LISTED)
    assert head.categories == ["astro-ph.GA", "astro-ph.CO", "hep-ph", "hep-th"]
    assert head.subject_classes == ["85A05", "85-08", "85A40", "70F10", "85A15"]
    assert library.paper("json", LISTED).subject_classes == head.subject_classes
    hit = next(h for h in _search(library, head.title).result if h.arxiv_id == LISTED)
    assert hit.categories == head.categories and hit.subject_classes == head.subject_classes
    with pytest.raises(BadRequest, match="categories: '85A05' is not an arXiv category"):
        _search(library, "galaxy", categories="85A05")


def test_sections_are_found_by_printed_number_and_name_first(library: Library) -> None:
    head = library.paper("head", NUMBERED)
    printed = {s.number: s for s in head.sections if s.number}
    six = library.paper("section", NUMBERED, "6")  # printed "6 CONCLUSION", idx 9
    assert (six.name, six.idx) == (printed["6"].name, printed["6"].idx) == ("CONCLUSION", 9)
    for number in ("5.2", "5.2."):
        assert library.paper("section", NUMBERED, number).idx == printed["5.2"].idx
    named = library.paper("section", NUMBERED, printed["4"].name.upper())
    assert named.idx == printed["4"].idx
    roman = {s.number: s for s in library.paper("head", ROMAN).sections if s.number}
    assert library.paper("section", ROMAN, "ii").idx == roman["II"].idx
    assert library.paper("section", ROMAN, "idx:0").idx == 0  # a position asked as one


def test_a_number_with_sub_sections_serves_them_and_never_falls_back(library: Library) -> None:
    """``5`` where the paper prints 5.1-5.4 but no "5" serves them together; a number it does not
    print is a 404 listing the printed ones, not the section at that 0-based position (issue 36)."""
    head = library.paper("head", NUMBERED)
    printed = {s.number: s for s in head.sections if s.number}
    assert "5" not in printed and {"5.1", "5.4"} <= set(printed)
    five = library.paper("section", NUMBERED, "5")
    parts = [library.paper("section", NUMBERED, n) for n in ("5.1", "5.2", "5.3", "5.4")]
    assert (five.number, five.idx) == ("5", parts[0].idx)
    assert five.name == "; ".join(p.name for p in parts)
    assert all(
        f"5.{i} {p.name}" in five.content and p.content.strip() in five.content
        for i, p in enumerate(parts, 1)
    )
    assert section_text(five).startswith(f"=== 5 {five.name} (Paper: {NUMBERED}, section 5) ===")
    assert section_text(parts[1]).startswith(f"=== 5.2 {parts[1].name} (Paper: {NUMBERED}, section 5.2) ===")
    with pytest.raises(
        NotFound, match=r"prints no section numbered '8'; its printed numbers are: 1, 2, 3, 4, 5\.1"
    ):
        library.paper("section", NUMBERED, "8")
    assert library.paper("section", NUMBERED, "#8").idx == 8


def test_the_abstract_is_a_section(library: Library) -> None:
    for arxiv_id in (LISTED, ROMAN):  # metadata only; a full text with an abstract
        head = library.paper("head", arxiv_id)
        assert head.sections[0].name == "Abstract" and head.sections[0].idx == -1
        for name in ("Abstract", "abstract", "ABSTRACT", "-1"):
            section = library.paper("section", arxiv_id, name)
            assert (section.name, section.idx, section.content) == ("Abstract", -1, head.abstract)
    with pytest.raises(NotFound, match="only its abstract"):
        library.paper("section", LISTED, "Introduction")


def test_tex_residue_is_out_of_tldrs_and_evidence(library: Library) -> None:
    response = _search(library, "Schwinger-Dyson equations magnetic field mass")
    shown = [h.tldr or "" for h in response.result] + [
        c for h in response.result for content in h.contents or [] for c in content.section_contents
    ]
    assert any(h.arxiv_id == CITED for h in response.result)
    assert shown and not any("[\\" in t or "[formula]" in t for t in shown), shown
    for s in library.paper("head", CITED).sections:
        assert not s.tldr or ("[\\" not in s.tldr and "[formula]" not in s.tldr), s.tldr


def _residue(text: str | None) -> bool:
    return bool(text) and bool(re.search(r"\[\\[A-Za-z]+\*?=|\[(?:formula|cite|figure|table)\]", text or ""))


def test_tex_residue_is_out_of_every_served_text(library: Library, bm25_snapshot: Path) -> None:
    """One rule for every text served (issue 36, item 5): hit abstracts, find passages, section,
    raw, preview and json text show TeX residue as ``…`` like tldrs and evidence already did."""
    (db,) = bm25_snapshot.glob("snapshots/*/corpus.sqlite")
    with sqlite3.connect(db) as conn:
        stored = dict(
            conn.execute("SELECT arxiv_id, abstract FROM papers WHERE abstract IS NOT NULL").fetchall()
        )
        query = "SELECT s.text FROM sections s JOIN papers p ON p.id = s.paper_id WHERE p.arxiv_id = ?"
        texts = [t for (t,) in conn.execute(query, (CITED,))]
    marked = sorted(aid for aid, abstract in stored.items() if _residue(abstract))
    assert marked and any(_residue(t) for t in texts)  # what is stored still holds the markers
    for aid in marked[:5]:
        head = library.paper("head", aid)
        assert not _residue(head.abstract) and "…" in (head.abstract or ""), head.abstract
        hits = _search(library, head.title or aid).result
        hit = next(h for h in hits if h.arxiv_id == aid)
        assert hit.abstract == head.abstract == library.paper("brief", aid).abstract
        assert library.paper("json", aid).abstract == head.abstract
    served = [
        library.paper("section", CITED, f"idx:{s.idx}").content for s in library.paper("head", CITED).sections
    ]
    served += [library.paper("raw", CITED).raw, library.paper("preview", CITED).content]
    served += [s["text"] for s in library.paper("json", CITED).sections]
    found = library.find(CITED, "magnetic field mass")
    served += [f.text for f in found.result]
    assert found.result and served and not any(_residue(t) for t in served)
    assert any("…" in t for t in served)


def test_full_width_digit_ids_are_normalised(library: Library) -> None:
    assert library.paper("brief", "２５０４.１３９９６").arxiv_id == LISTED
    assert library.paper("brief", "ａｒＸｉｖ:２５０４.１３９９６ｖ１").arxiv_id == LISTED
    with pytest.raises(BadRequest, match=r"arxiv_id: .* is not an arXiv id"):
        library.paper("brief", "٢٥٠٤.١٣٩٩٦")  # Arabic-Indic digits: NFKC keeps them


def test_the_last_hits_of_a_narrowly_filtered_search_keep_their_scores(library: Library) -> None:
    """When feedback keeps every candidate (a search filtered to a few papers), the kept rows were
    shifted to end at 1e-06, so the one hit of a narrow search read "Score: 0.0000" (issue 21)."""
    for author, n in (("T. Lu", 1), ("J.Alexandre", 4)):
        filters = FilterParams(authors=author)
        fused = library.search("galaxy", top_k=5, filters=filters, mode="weighted").result
        lexical = library.search("galaxy", top_k=5, filters=filters, mode="bm25").result
        assert len(fused) == n and min(h.score for h in fused) > 0.1, [h.score for h in fused]
        assert [h.arxiv_id for h in fused] == [h.arxiv_id for h in lexical]


def test_the_http_fronts_and_the_page_serve_the_same(bm25_snapshot: Path) -> None:
    """``/arxiv/``, ``/v1`` and the web page (in process) on the old-style ids of this snapshot."""
    from fastapi.testclient import TestClient

    from openxiv.service.http.app import create_app

    settings = Settings(data_dir=bm25_snapshot.parent, embed="none", api_token=None)
    with TestClient(create_app(settings, bm25_snapshot)) as http:
        head = http.get("/arxiv/", params={"type": "head", "arxiv_id": UNTITLED}).json()
        assert head["title"] and head["title_source"] == "derived"
        v1 = http.get(f"/v1/papers/{UNTITLED}").json()
        assert (v1["title"], v1["title_source"]) == (head["title"], "derived")
        hits = http.post("/v1/search", json={"query": head["title"], "top_k": 5}).json()["hits"]
        assert any(h["arxiv_id"] == UNTITLED and h["title_source"] == "derived" for h in hits)
        listed = http.get(f"/v1/papers/{LISTED}").json()
        assert listed["subject_classes"] and listed["categories"] == [
            "astro-ph.GA",
            "astro-ph.CO",
            "hep-ph",
            "hep-th",
        ]
        section = http.get(f"/v1/papers/{NUMBERED}/sections/6").json()
        assert (section["name"], section["number"]) == ("CONCLUSION", "6")
        wide = http.get("/arxiv/", params={"type": "brief", "arxiv_id": "２５０４.１３９９６"}).json()
        assert wide["arxiv_id"] == LISTED
        page = http.get(f"/ui/paper/{UNTITLED}").text
        assert 'class="derived"' in page and "derived title" in page
        assert 'class="derived"' not in http.get(f"/ui/paper/{LISTED}").text
        assert "85A05" not in http.get(f"/ui/paper/{LISTED}").text.split("<section")[0]
