"""Bad lines cost only themselves (issue 8, item 5): format detection over many lines, per-line type,
UTF-8 and size checks, and an exit status that says something was skipped.

Every bad file is built from real lines of ../shared with one defect put in.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openxiv.corpus.cli import EXIT_FAILED, EXIT_OK, EXIT_SKIPPED, ingest
from openxiv.corpus.readers import FormatError, detect_format, read_path
from openxiv.corpus.readers.limits import MAX_ABSTRACT_CHARS, MAX_AUTHOR_CHARS, MAX_TITLE_CHARS
from openxiv.corpus.readers.listing import read_listing
from openxiv.corpus.readers.oai import read_oai
from openxiv.corpus.readers.unarxive import read_unarxive
from openxiv.corpus.records import PaperRecord, ReadError

HeadFn = Callable[[Path, int], list[str]]
GOOD = 100


def records(items: object) -> list[PaperRecord]:
    return [r for r in items if isinstance(r, PaperRecord)]  # type: ignore[attr-defined]


def errors(items: object) -> list[ReadError]:
    return [r for r in items if isinstance(r, ReadError)]  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def listing_lines(listing_files: list[Path], head: HeadFn) -> list[str]:
    """The first 101 real lines of the cs listing."""
    return head(listing_files[0], GOOD + 1)


@pytest.fixture(scope="module")
def unarxive_lines(fulltext_dir: Path, head: HeadFn) -> list[str]:
    return head(fulltext_dir / "unarxive-2212-sample.jsonl.gz", 10)


def with_first(lines: list[str], change: Callable[[dict[str, Any]], None]) -> list[str]:
    first = json.loads(lines[0])
    change(first)
    return [json.dumps(first) + "\n", *lines[1:]]


def write(path: Path, lines: list[str] | bytes) -> Path:
    path.write_bytes(lines if isinstance(lines, bytes) else "".join(lines).encode())
    return path


def db_count(db: Path, sql: str) -> int:
    con = sqlite3.connect(db)
    try:
        return int(con.execute(sql).fetchone()[0])
    finally:
        con.close()


# ---------------------------------------------------------------- format detection
def test_first_line_without_id_loses_only_that_line(listing_lines: list[str], tmp_path: Path) -> None:
    path = write(tmp_path / "no-id-first.jsonl", with_first(listing_lines, lambda o: o.pop("id")))
    assert detect_format(path) == "listing"
    items = list(read_path(path))
    assert len(records(items)) == GOOD
    assert [(e.location, e.reason) for e in errors(items)] == [("line 1", "missing id")]


def test_first_line_with_an_oai_key_does_not_switch_the_reader(
    listing_lines: list[str], tmp_path: Path
) -> None:
    lines = with_first(listing_lines, lambda o: o.update(update_date="2025-03-18"))
    path = write(tmp_path / "update-date-first.jsonl", lines)
    assert detect_format(path) == "listing"
    recs = records(read_path(path))
    assert len(recs) == GOOD + 1
    real = [json.loads(line) for line in listing_lines]
    assert [r.authors for r in recs] == [o["authors"] for o in real]  # read as lists, not OAI strings
    assert all(r.first_seen is not None for r in recs)


def test_detection_says_when_lines_disagree_or_nothing_is_known(
    listing_lines: list[str], unarxive_lines: list[str], tmp_path: Path
) -> None:
    mixed = write(tmp_path / "mixed.jsonl", [*listing_lines[:5], *unarxive_lines[:5]])
    with pytest.raises(FormatError, match=r"disagree.*listing 5.*unarxive 5.*--format"):
        detect_format(mixed)
    [err] = errors(read_path(mixed))
    assert err.location == "file" and "disagree" in err.reason
    # forced, the file is read line by line: listing lines land, the unarXive ones are reported
    forced = list(read_path(mixed, "listing"))
    assert len(records(forced)) == 5 and [e.location for e in errors(forced)] == [
        f"line {i}" for i in range(6, 11)
    ]
    junk = write(tmp_path / "junk.jsonl", ["not json\n", "\n", '{"foo": 1}\n', '{"bar": 2}\n'])
    with pytest.raises(FormatError, match="unknown JSON keys"):
        detect_format(junk)


def test_a_file_cut_short_is_detected_from_the_lines_before_the_cut(
    listing_files: list[Path], tmp_path: Path, head: HeadFn
) -> None:
    data = gzip.compress("".join(head(listing_files[0], 30)).encode())
    path = write(tmp_path / "cut.jsonl.gz", data[: len(data) * 2 // 3])
    assert detect_format(path) == "listing"
    items = list(read_path(path))
    assert len(records(items)) >= 10
    [err] = errors(items)
    assert err.location.startswith("line ") and "cannot read file" in err.reason


# ---------------------------------------------------------------- wrong types
def test_wrong_types_are_reported_per_line_not_stored_as_reprs(
    listing_lines: list[str], tmp_path: Path
) -> None:
    good = [json.loads(line) for line in listing_lines[:8]]
    defects: list[tuple[str, Any, str]] = [
        ("title", ["A", "list"], "title: expected a string, got an array"),
        ("title", {"text": "x"}, "title: expected a string, got an object"),
        ("abstract", 42, "abstract: expected a string, got a number"),
        ("authors", "Jane Doe, John Roe", "authors: expected an array of strings, got a string"),
        (
            "authors",
            ["Jane Doe", {"name": "x"}],
            "authors: expected an array of strings, got an object in it",
        ),
        ("categories", {"cs": 1}, "categories: expected an array of strings, got an object"),
        ("comment", ["x"], "comment: expected a string, got an array"),
    ]
    for obj, (key, value, _) in zip(good[1:], defects, strict=True):
        obj[key] = value
    path = write(tmp_path / "types.jsonl", [json.dumps(o) + "\n" for o in good])
    items = list(read_listing(path))
    assert [r.arxiv_id for r in records(items)] == [good[0]["id"]]
    assert [(e.location, e.reason) for e in errors(items)] == [
        (f"line {i}", reason) for i, (_, _, reason) in enumerate(defects, 2)
    ]


def test_wrong_types_in_oai_and_unarxive(unarxive_lines: list[str], tmp_path: Path) -> None:
    metas = [json.loads(line)["metadata"] for line in unarxive_lines[:4]]
    metas[1]["title"] = ["not", "a", "title"]
    metas[2]["authors_parsed"] = "Doe, Jane"
    metas[2]["authors"] = ["Jane Doe"]
    metas[3]["abstract"] = {"text": "nested"}
    oai = write(tmp_path / "oai.jsonl", [json.dumps(m) + "\n" for m in metas])
    items = list(read_oai(oai))
    assert len(records(items)) == 1
    assert [(e.location, e.reason.split(":")[0]) for e in errors(items)] == [
        ("line 2", "title"),
        ("line 3", "authors_parsed"),
        ("line 4", "abstract"),
    ]
    papers = [json.loads(line) for line in unarxive_lines[:3]]
    papers[1]["metadata"]["title"] = 3.14
    papers[2]["body_text"][0]["section"] = ["Intro"]
    un = write(tmp_path / "un.jsonl", [json.dumps(p) + "\n" for p in papers])
    items = list(read_unarxive(un))
    assert len(records(items)) == 1
    assert [(e.location, e.reason) for e in errors(items)] == [
        ("line 2", "title: expected a string, got a number"),
        ("line 3", "body_text[0].section: expected a string, got an array"),
    ]


# ---------------------------------------------------------------- invalid UTF-8, sizes
def test_invalid_utf8_is_reported_per_line(listing_lines: list[str], tmp_path: Path) -> None:
    data = bytearray("".join(listing_lines[:5]).encode())
    bad_line = listing_lines[0].encode() + listing_lines[1].encode()
    at = len(bad_line) + 15  # inside the id value of line 3, 0-based byte 15
    data[at : at + 1] = b"\xff\xfe"
    lone = json.loads(listing_lines[3])
    lone["title"] = "attention \ud800 is all"
    lines = bytes(data).splitlines(keepends=True)
    lines[3] = (json.dumps(lone) + "\n").encode()
    path = write(tmp_path / "utf8.jsonl", b"".join(lines))
    items = list(read_path(path))
    assert [r.arxiv_id for r in records(items)] == [json.loads(listing_lines[i])["id"] for i in (0, 1, 4)]
    errs = errors(items)
    assert [e.location for e in errs] == ["line 3", "line 4"]
    assert errs[0].reason.startswith("invalid UTF-8") and "column 16" in errs[0].reason
    assert "lone surrogate" in errs[1].reason and "title" in errs[1].reason


def test_over_long_fields_are_reported_and_the_record_skipped(
    listing_lines: list[str], tmp_path: Path
) -> None:
    objs = [json.loads(line) for line in listing_lines[:5]]
    objs[1]["title"] = (objs[1]["title"] + " ") * (MAX_TITLE_CHARS // len(objs[1]["title"]) + 2)
    objs[2]["abstract"] = (objs[2]["abstract"] + " ") * (MAX_ABSTRACT_CHARS // len(objs[2]["abstract"]) + 2)
    objs[3]["authors"] = [*objs[3]["authors"], "X" * (MAX_AUTHOR_CHARS + 1)]
    path = write(tmp_path / "long.jsonl", [json.dumps(o) + "\n" for o in objs])
    items = list(read_path(path))
    assert [r.arxiv_id for r in records(items)] == [objs[0]["id"], objs[4]["id"]]
    reasons = [e.reason for e in errors(items)]
    assert [r.split(":")[0] for r in reasons] == [
        "title",
        "abstract",
        f"authors[{len(objs[3]['authors']) - 1}]",
    ]
    assert all("over the limit" in r for r in reasons)


# ---------------------------------------------------------------- the CLI: counts, report, database, exit status
def test_cli_lands_the_good_lines_and_exits_with_skipped_status(
    listing_lines: list[str], tmp_path: Path
) -> None:
    bad = write(tmp_path / "no-id-first.jsonl", with_first(listing_lines, lambda o: o.pop("id")))
    other = write(tmp_path / "other.jsonl", listing_lines[:3])  # a second, clean input
    db, report = tmp_path / "c.sqlite", tmp_path / "report.jsonl"
    result = CliRunner().invoke(
        ingest, ["--db", str(db), str(other), str(bad), "--report", str(report), "--no-progress"]
    )
    assert result.exit_code == EXIT_SKIPPED == 3, result.output
    # lines 2-3 of the bad file are papers of the clean one: updated (a new source), not added
    assert "read 103, added 101, updated 2, unchanged 0, skipped 1" in result.output
    assert "no-id-first.jsonl, line 1: missing id" in result.output
    assert "finished with 1 skipped input" in result.output
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows[0]["read"] == 103 and rows[0]["skipped"] == 1 and rows[0]["status"] == "finished"
    assert rows[1:] == [
        {"type": "skipped", "source": "no-id-first.jsonl", "location": "line 1", "reason": "missing id"}
    ]
    assert db_count(db, "SELECT count(*) FROM papers") == GOOD + 1
    assert db_count(db, "SELECT count(*) FROM ingest_errors WHERE location = 'line 1'") == 1

    clean = CliRunner().invoke(ingest, ["--db", str(db), str(other), "--no-progress"])
    assert clean.exit_code == EXIT_OK == 0, clean.output
    nothing = CliRunner().invoke(
        ingest, ["--db", str(db), str(write(tmp_path / "x.jsonl", ["{x\n"])), "--no-progress"]
    )
    assert nothing.exit_code == EXIT_FAILED == 1
