"""Merge rules for records of the same paper (pure functions, no database)."""

from __future__ import annotations

from datetime import date

from openxiv.corpus.merge import merge_record, source_name, state_from_record
from openxiv.corpus.records import PaperRecord, SectionRecord


def rec(**kw: object) -> PaperRecord:
    base: dict[str, object] = {"arxiv_id": "2301.00001", "source": "oai:meta.jsonl:1"}
    base.update(kw)
    return PaperRecord(**base)


def test_source_name_drops_the_line_number() -> None:
    assert source_name("listing:listing-cs.jsonl.gz:17") == "listing:listing-cs.jsonl.gz"
    assert source_name("pdf:2301.00001v2.pdf") == "pdf:2301.00001v2.pdf"


def test_newer_version_wins_in_either_order() -> None:
    v1 = rec(
        version=1, title="Old title", abstract="old", updated=date(2023, 1, 1), published=date(2023, 1, 1)
    )
    v2 = rec(
        version=2, title="New title", abstract=None, updated=date(2023, 3, 1), published=date(2023, 1, 1)
    )
    for first, second in ((v1, v2), (v2, v1)):
        merged = merge_record(state_from_record(first), second)
        assert merged.version == 2
        assert merged.title == "New title"
        assert merged.abstract == "old"  # the newer record had none: kept, not erased
        assert merged.published == date(2023, 1, 1) and merged.updated == date(2023, 3, 1)


def test_dates_decide_when_versions_are_unknown() -> None:
    early = rec(title="Early", first_seen=date(2025, 4, 1), source="listing:a.jsonl:1")
    late = rec(title="Late", first_seen=date(2025, 5, 1), source="listing:b.jsonl:9")
    merged = merge_record(state_from_record(early), late)
    assert merged.title == "Late"
    assert merged.first_seen == date(2025, 4, 1)  # first seen is the earliest day
    assert merged.sources == ("listing:a.jsonl", "listing:b.jsonl")


def test_ties_keep_the_stored_values_and_fill_gaps() -> None:
    a = rec(title="A", authors=["X"], categories=[])
    b = rec(title="B", authors=["Y"], categories=["cs.CL", "cs.AI"], comment="5 pages")
    merged = merge_record(state_from_record(a), b)
    assert (merged.title, merged.authors, merged.categories, merged.comment) == (
        "A",
        ("X",),
        ("cs.CL", "cs.AI"),
        "5 pages",
    )


def test_metadata_never_erases_full_text_and_full_text_never_erases_metadata() -> None:
    text = rec(
        source="plaintext:p.jsonl:3", title="Guessed title", sections=[SectionRecord("Intro", "Body text.")]
    )
    meta = rec(version=3, title="Real title", abstract="Abstract.", authors=["A B"], updated=date(2024, 1, 1))
    for first, second in ((text, meta), (meta, text)):
        merged = merge_record(state_from_record(first), second)
        assert merged.sections_hash is not None
        assert merged.title == "Real title"  # a dated metadata record beats an undated text
        assert merged.abstract == "Abstract." and merged.authors == ("A B",) and merged.version == 3


def test_same_record_twice_changes_nothing() -> None:
    r = rec(version=2, title="T", sections=[SectionRecord("S", "x y z")], updated=date(2024, 1, 1))
    first = state_from_record(r)
    assert merge_record(first, r).same_stored(first)


def test_newer_full_text_replaces_older_but_older_does_not() -> None:
    old = rec(version=1, updated=date(2023, 1, 1), sections=[SectionRecord("S", "old text")])
    new = rec(version=2, updated=date(2023, 2, 1), sections=[SectionRecord("S", "new text")])
    a = merge_record(state_from_record(old), new)
    b = merge_record(state_from_record(new), old)
    assert a.sections_hash == b.sections_hash == state_from_record(new).sections_hash
