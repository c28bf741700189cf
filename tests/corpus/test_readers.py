"""Every reader on real lines from ../shared, and bad input mixed with good."""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest

from openxiv.corpus.readers import FormatError, detect_format, read_path
from openxiv.corpus.readers.oai import parse_authors, parse_versions
from openxiv.corpus.readers.plaintext import is_heading, is_junk, read_plaintext, split_text
from openxiv.corpus.readers.unarxive import clean_markers
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.shared import SharedData

HeadFn = Callable[[Path, int], list[str]]


def records(items: object) -> list[PaperRecord]:
    return [r for r in items if isinstance(r, PaperRecord)]  # type: ignore[attr-defined]


def errors(items: object) -> list[ReadError]:
    return [r for r in items if isinstance(r, ReadError)]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def unarxive_lines(fulltext_dir: Path, head: HeadFn) -> list[str]:
    return head(fulltext_dir / "unarxive-2212-sample.jsonl.gz", 1000)


@pytest.fixture(scope="module")
def oai_file(unarxive_lines: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real OAI-snapshot objects carried in the unarXive sample, one per line (plain .jsonl)."""
    path = tmp_path_factory.mktemp("oai") / "arxiv-metadata-oai-snapshot.jsonl"
    path.write_text("".join(json.dumps(json.loads(line)["metadata"]) + "\n" for line in unarxive_lines))
    return path


# ---------------------------------------------------------------- listing
def test_listing_reader_on_real_lines(listing_files: list[Path]) -> None:
    items = list(itertools.islice(read_path(listing_files[0]), 500))
    assert not errors(items)
    first = items[0]
    assert isinstance(first, PaperRecord)
    assert first.arxiv_id == "2503.11731"
    assert first.title and first.title.startswith("Industrial-Grade Sensor Simulation via Gaussian Splatting")
    assert first.authors[:2] == ["Xianming Zeng", "Sicong Du"] and len(first.authors) == 16
    assert first.categories == ["cs.CV", "cs.RO"]
    assert first.first_seen == date(2025, 3, 18)
    assert first.comment is None and first.sections == [] and not first.has_fulltext
    assert first.source == "listing:listing-cs-2503-2606.jsonl.gz:1"
    assert all(r.title and r.abstract and r.categories for r in records(items))


def test_listing_versioned_ids_are_canonical_with_version(
    listing_files: list[Path], tmp_path: Path, head: HeadFn
) -> None:
    lines = [line for line in head(listing_files[1], 20000) if '"id": "2512.07042' in line]
    assert len(lines) == 2, "the astro listing carries 2512.07042 and 2512.07042v1"
    path = tmp_path / "two.jsonl"
    path.write_text("".join(lines))
    recs = records(read_path(path))
    assert [(r.arxiv_id, r.version) for r in recs] == [("2512.07042", None), ("2512.07042", 1)] or [
        (r.arxiv_id, r.version) for r in recs
    ] == [("2512.07042", 1), ("2512.07042", None)]


# ---------------------------------------------------------------- OAI snapshot
def test_oai_reader_on_real_metadata(oai_file: Path) -> None:
    assert detect_format(oai_file) == "oai"
    items = list(read_path(oai_file))
    assert len(items) == 49 and not errors(items)
    rec = records(items)[0]
    assert rec.arxiv_id == "2212.11867"
    assert (
        rec.title == "Zeros of a growing number of derivatives of random polynomials with independent roots"
    )
    assert rec.authors == ["Marcus Michelen", "Xuan-Truong Vu"]
    assert rec.categories == ["math.PR", "math.CA", "math.CV"]
    assert rec.version == 1 and rec.published == rec.updated == date(2022, 12, 22)
    assert rec.license == "http://creativecommons.org/licenses/by/4.0/"
    assert (
        rec.abstract
        and rec.abstract.startswith("Let $X_1,X_2,\\ldots$ be independent")
        and "\n" not in rec.abstract
    )
    two = [r for r in records(items) if r.version == 2]
    assert len(two) == 3
    assert all(r.updated and r.published and r.updated > r.published for r in two)


def test_oai_authors_and_versions_helpers() -> None:
    assert parse_authors("A. One, B. Two and C. Three", None) == ["A. One", "B. Two", "C. Three"]
    assert parse_authors("ignored", [["Doe", "Jane", "Jr."], ["Roe", "R.", ""]]) == ["Jane Doe Jr.", "R. Roe"]
    assert parse_versions(
        [
            {"version": "v2", "created": "Fri, 23 Dec 2022 07:44:58 GMT"},
            {"version": "v1", "created": "Thu, 22 Dec 2022 17:34:39 GMT"},
        ]
    ) == (2, date(2022, 12, 22), date(2022, 12, 23))
    assert parse_versions("junk") == (None, None, None)


# ---------------------------------------------------------------- unarXive
def test_unarxive_sample_sections(fulltext_dir: Path) -> None:
    path = fulltext_dir / "unarxive-2212-sample.jsonl.gz"
    assert detect_format(path) == "unarxive"
    items = list(read_path(path))
    recs = records(items)
    assert len(recs) == 49 and not errors(items)
    assert all(r.has_fulltext and r.title and r.abstract for r in recs)
    first = recs[0]
    assert first.arxiv_id == "2212.11867" and first.source == "unarxive:unarxive-2212-sample.jsonl.gz:1"
    assert first.sections[0].name == "Introduction" and first.sections[0].number == "1"
    assert "[formula]" in first.sections[0].text and "[cite]" in first.sections[0].text
    for r in recs:
        assert not any(re.search(r"\{\{(formula|cite|figure|table):", s.text + s.name) for s in r.sections)
        keys = [(s.number, s.name) for s in r.sections]
        assert all(a != b for a, b in itertools.pairwise(keys))  # consecutive paragraphs were grouped
    assert sum(len(r.sections) for r in recs) > 300


def test_unarxive_markers() -> None:
    assert (
        clean_markers("a {{formula:61df-c976}} b {{cite:6a5c}} {{figure:x}}")
        == "a [formula] b [cite] [figure]"
    )


# ---------------------------------------------------------------- plain text
def test_plaintext_reader_on_real_lines(fulltext_dir: Path) -> None:
    path = fulltext_dir / "plaintext-9108-1612.jsonl.gz"
    assert detect_format(path) == "plaintext"
    items = list(itertools.islice(read_path(path), 300))
    recs = records(items)
    assert len(recs) == 300 and not errors(items)
    by_id = {r.arxiv_id: r for r in recs}
    first = by_id["astro-ph/0001004"]  # starts with "=" and "1.25in .125in .25in" layout residue
    assert first.title == "Theory of the Interaction of Planetary Nebulae with the Interstellar Medium"
    assert first.sections[0].name == "Introduction"
    assert first.abstract is None and first.authors == [] and first.version is None
    binary = by_id["astro-ph/0001486"]
    assert binary.title == "Search for Binary Protostars"
    assert [s.name for s in binary.sections] == ["Introduction", "Observations"]
    # 15% open with a heading, names or an affiliation: no title rather than a wrong one (issue 9)
    assert sum(r.title is not None for r in recs) >= 0.84 * len(recs)
    assert sum(r.has_fulltext for r in recs) > 0.98 * len(recs)
    for r in recs:
        assert not any(s.name.lower() in {"references", "bibliography"} for s in r.sections)
        assert r.title is None or not is_junk(r.title)
        assert r.title is None or not any(
            w in r.title for w in ("@", "Department", "University", "Institute")
        )


def test_plaintext_structure_rules() -> None:
    text = "\n\n".join(
        [
            "=",
            "1.25in .125in .25in",
            "A Study of Things",
            "Abstract",
            "We study things. They matter.",
            "1 Introduction",
            "Things are everywhere. We look at them.",
            "Let us write",
            "[formula]",
            "where x is small.",
            "2.1 Results",
            "They are fine.",
            "References",
            "[1] A. Author, Things (1999).",
        ]
    )
    title, abstract, sections = split_text(text)
    assert title == "A Study of Things"
    assert abstract == "We study things. They matter."
    assert [(s.number, s.name) for s in sections] == [("1", "Introduction"), ("2.1", "Results")]
    assert "Let us write" in sections[0].text and "[formula]" in sections[0].text
    assert "Author" not in " ".join(s.text for s in sections)


@pytest.mark.parametrize(
    ("block", "junk"),
    [("=", True), ("1.25in .125in .25in", True), (".5pt", True), ("hyperref", True), ("Lemma Corollary", True),
     ("= cmr9", True), (", A. Author", True), ("Search for Binary Protostars", False), ("Introduction", False)],
)  # fmt: skip
def test_junk_blocks(block: str, junk: bool) -> None:
    assert is_junk(block) is junk


@pytest.mark.parametrize(
    ("block", "heading"),
    [("Introduction", True), ("2.1 Numerical results", True), ("Results and Discussion", True),
     ("The end.", False), ("where", False), ("Next let us denote by", False),
     ("http://www.pa.uky.edu/cloudy", False), ("[formula]", False)],
)  # fmt: skip
def test_heading_shapes(block: str, heading: bool) -> None:
    assert is_heading(block) is heading


def test_plaintext_without_title_or_text_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(
        json.dumps({"id": "astro-ph/0001004", "text": "=\n\n.5pt"})
        + "\n"
        + json.dumps({"id": "0705.2181", "text": ""})
        + "\n"
    )
    items = list(read_path(path, "plaintext"))
    assert [(e.location, e.reason) for e in errors(items)] == [
        ("line 1", "missing title and text"),
        ("line 2", "missing text"),
    ]
    assert list(read_plaintext(path)) == items  # the reader function is the same line loop


# ---------------------------------------------------------------- bad input, folders, formats
def test_malformed_lines_are_reported_and_the_rest_is_read(
    listing_files: list[Path], tmp_path: Path, head: HeadFn
) -> None:
    good = head(listing_files[0], 5)
    bad_id = json.loads(good[1])
    bad_id["id"] = "2301.0001"  # 4-digit number after 1501
    no_title = json.loads(good[2])
    no_title["title"] = "  "
    lines = [
        good[0],
        "{this is not json\n",
        json.dumps(bad_id) + "\n",
        "\n",
        json.dumps(no_title) + "\n",
        '["a", "list"]\n',
        json.dumps({"title": "no id"}) + "\n",
        good[3],
        good[4],
    ]
    path = tmp_path / "mixed.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(lines)
    items = list(read_path(path, "listing"))
    assert [r.arxiv_id for r in records(items)] == [json.loads(good[i])["id"] for i in (0, 3, 4)]
    errs = errors(items)
    assert [e.location for e in errs] == ["line 2", "line 3", "line 5", "line 6", "line 7"]
    assert all(e.source == "mixed.jsonl.gz" for e in errs)
    reasons = [e.reason for e in errs]
    assert reasons[0].startswith("invalid JSON")
    assert reasons[1].startswith("invalid id") and "1501" in reasons[1]
    assert reasons[2] == "missing title"
    assert reasons[3] == "expected a JSON object, got list"
    assert reasons[4] == "missing id"


def test_truncated_gzip_keeps_what_was_read(listing_files: list[Path], tmp_path: Path, head: HeadFn) -> None:
    data = gzip.compress("".join(head(listing_files[0], 2000)).encode())
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(data[: len(data) // 2])
    items = list(read_path(path, "listing"))
    assert len(records(items)) > 100
    [err] = errors(items)
    assert (
        err.source == "cut.jsonl.gz" and "cannot read file" in err.reason and err.location.startswith("line ")
    )


def test_unreadable_and_unknown_files_are_one_error_each(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    (tmp_path / "weird.jsonl").write_text(json.dumps({"foo": 1}) + "\n")
    (tmp_path / "binary.jsonl.gz").write_bytes(b"\x1f\x8bnot really gzip")
    items = list(read_path(tmp_path))
    errs = errors(items)
    assert [e.source for e in errs] == ["binary.jsonl.gz", "empty.jsonl", "weird.jsonl"]
    assert all(e.location == "file" for e in errs)
    assert "unknown JSON keys" in errs[2].reason
    missing = list(read_path(tmp_path / "nope.jsonl"))
    assert len(missing) == 1 and "no such file" in missing[0].reason


def test_folders_are_read_recursively_in_sorted_order(
    listing_files: list[Path], unarxive_lines: list[str], tmp_path: Path, head: HeadFn
) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "deep").mkdir(parents=True)
    (tmp_path / "b" / "listing.jsonl").write_text("".join(head(listing_files[0], 3)))
    (tmp_path / "a" / "deep" / "u.jsonl").write_text("".join(unarxive_lines[:2]))
    (tmp_path / "notes.md").write_text("not an input")
    (tmp_path / "MANIFEST.json").write_text('{\n  "files": []\n}\n')
    recs = records(read_path(tmp_path))
    assert [r.source.split(":")[0] for r in recs] == ["unarxive", "unarxive", "listing", "listing", "listing"]
    assert not errors(read_path(tmp_path))  # MANIFEST.json in a folder is not input...
    assert len(errors(read_path(tmp_path / "MANIFEST.json"))) == 1  # ...but named explicitly it is


def test_detect_format_and_forced_format(listing_files: list[Path], tmp_path: Path) -> None:
    assert detect_format(listing_files[0]) == "listing"
    assert detect_format(tmp_path / "paper.pdf") == "pdf"
    with pytest.raises(FormatError, match="no input files"):
        detect_format(tmp_path)
    assert detect_format(SharedData.default().pdfs / "broken") == "pdf"
    assert detect_format(listing_files[0].parent) == "listing"
    (tmp_path / "a.pdf").write_bytes(b"%PDF-1.4")
    (tmp_path / "b.jsonl").write_text('{"id": "2301.00001", "title": "t"}\n')
    with pytest.raises(FormatError, match="several formats"):
        detect_format(tmp_path)
    with pytest.raises(FormatError):
        list(read_path(listing_files[0], "csv"))


def test_pdfs_are_dispatched_to_the_pdf_reader(shared: Path) -> None:
    broken = sorted((shared / "data" / "pdfs" / "broken").glob("*.pdf"))
    assert broken
    items = list(read_path(broken[0]))
    assert len(items) == 1 and isinstance(items[0], ReadError)
    assert items[0].source == broken[0].name
