"""How records about the same paper combine into one stored paper (pure functions, no database).

Rules, applied field by field when a record meets the paper already stored:

- the record is *newer* when its version number is higher; with equal or unknown versions, when its
  date (updated, else published, else first seen) is later; otherwise it is a tie or older;
- a newer record's non-empty values replace the stored ones; a tie or an older record only fills
  what is still empty (so the first source wins ties and re-ingesting changes nothing);
- ``version`` and ``updated`` keep the maximum, ``published`` and ``first_seen`` the minimum;
- the paper's date is `best_date`: v1 date, else first listing day, else the id's month; so any
  source with a real date wins over the month the id encodes, and a later version's date never
  dates the paper;
- categories a record gives replace the stored ones by the rules above, except that a record whose
  categories are a subset of the stored list (a PDF stamp's ``[cs.CL]``) does not shorten it;
  with no categories from any source, an old-style id's archive (``chao-dyn``) is used, and it
  yields to the first real list that arrives;
- full text (sections) from a newer record replaces the stored one; otherwise it is only used when
  the paper has none. A metadata-only record never erases full text, and vice versa;
- sources accumulate;
- every paper has a title: a record without one gets a *derived* title (`openxiv.corpus.titles`);
  a title from a better source (metadata, then text, then derived: ``title_source``) replaces one
  from a worse source whatever the dates, and between titles of the same source the rules above
  decide.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from datetime import date
from typing import Any

from openxiv.corpus.ids import id_archive
from openxiv.corpus.records import (
    TITLE_SOURCES,
    Paper,
    PaperFields,
    PaperRecord,
    SectionRecord,
    best_date,
    field_values,
)
from openxiv.corpus.titles import derive_title

__all__ = ["PaperState", "content_hash", "is_older", "merge_record", "sections_hash", "source_name"]

_SCALARS = ("title", "abstract", "comment", "license", "journal_ref", "doi")
_TITLE_RANK = {name: len(TITLE_SOURCES) - i for i, name in enumerate(TITLE_SOURCES)}
"""``metadata`` 3, ``text`` 2, ``derived`` 1: a higher rank's title replaces a lower one's."""


@dataclass(frozen=True)
class PaperState(PaperFields):
    """A paper as the store keeps it: its metadata, its sources and its full text's hash (with the
    sections themselves only when they were read in this batch)."""

    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    sections_hash: str | None = None
    """``None`` when the paper has no full text."""
    sections: tuple[SectionRecord, ...] | None = None
    """New full text to write; ``None`` means "keep what is stored"."""

    @classmethod
    def stored(cls, paper: Paper, sections_hash: str | None) -> PaperState:
        """The state of a paper read from the store (its sections stay where they are)."""
        return cls(**field_values(paper), sources=paper.sources, sections_hash=sections_hash)

    def same_stored(self, other: PaperState) -> bool:
        """True when writing ``self`` over ``other`` would change nothing: every field but the
        ``sections`` to write is equal (field by field: two `dataclasses.replace` copies per
        record were a sixth of a re-ingest's CPU)."""
        return all(getattr(self, name) == getattr(other, name) for name in _STORED_FIELDS)


_STORED_FIELDS = tuple(f.name for f in fields(PaperState) if f.name != "sections")
"""What `PaperState.same_stored` compares."""


def source_name(source: str) -> str:
    """``listing:file.jsonl.gz:17`` -> ``listing:file.jsonl.gz`` (the input, not the line)."""
    head, sep, tail = source.rpartition(":")
    return head if sep and tail.isdigit() else source


def sections_hash(sections: list[SectionRecord] | tuple[SectionRecord, ...]) -> str | None:
    if not any(s.text.strip() for s in sections):
        return None
    h = hashlib.sha256()
    for s in sections:
        for part in (s.number or "", s.name, s.text):
            h.update(part.encode("utf-8", "surrogatepass"))
            h.update(b"\x1f")
        h.update(b"\x1e")
    return h.hexdigest()


def content_hash(state: PaperFields, passages_hash: str) -> str:
    """Hash of everything the indexer uses: title, abstract, categories, authors, date, passages."""
    when, precision = best_date(state.arxiv_id, state.published, state.first_seen)  # once, not per property
    parts = [
        state.arxiv_id,
        state.title or "",
        state.abstract or "",
        "\x1d".join(state.categories),
        "\x1d".join(state.authors),
        when.isoformat() if when else "",
        precision or "",
        passages_hash,
    ]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


def _compare(cur: PaperState, rec: PaperRecord) -> int:
    """1 if ``rec`` is newer than ``cur``, 0 for a tie, -1 if older.

    Versions decide first; then dates (updated, else published, else first seen); a record with
    a date beats one without (metadata sources carry dates, text-only sources do not).
    """
    if rec.version is not None and cur.version is not None and rec.version != cur.version:
        return 1 if rec.version > cur.version else -1
    rd = rec.updated or rec.published or rec.first_seen
    cd = cur.updated or cur.published or cur.first_seen
    if rd == cd:
        return 0
    if rd is None or cd is None:
        return 1 if cd is None else -1
    return 1 if rd > cd else -1


def is_older(cur: PaperState | None, rec: PaperRecord) -> bool:
    """``rec`` is older than the stored ``cur`` by the rules above (nothing is older than nothing)."""
    return cur is not None and _compare(cur, rec) < 0


def _min(a: date | None, b: date | None) -> date | None:
    return b if a is None else a if b is None else min(a, b)


def _max(a: date | None, b: date | None) -> date | None:
    return b if a is None else a if b is None else max(a, b)


def _max_int(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


def id_categories(arxiv_id: str) -> tuple[str, ...]:
    """What the id says of the subject: an old-style id's archive, else nothing."""
    archive = id_archive(arxiv_id)
    return (archive,) if archive else ()


def _categories(cur: PaperState, rec: PaperRecord, newer: bool) -> tuple[str, ...]:
    derived = id_categories(cur.arxiv_id)
    stored = () if cur.categories == derived else cur.categories
    incoming = tuple(dict.fromkeys(rec.categories))
    if incoming and stored and set(incoming) <= set(stored):
        chosen = stored
    elif newer:
        chosen = incoming or stored
    else:
        chosen = stored or incoming
    return chosen or derived


def state_from_record(rec: PaperRecord) -> PaperState:
    """The state of a paper known from ``rec`` alone (what a first ingest stores for it)."""
    sections = tuple(s for s in rec.sections if s.text.strip()) if rec.sections else ()
    values = rec.__dict__.copy()  # every field of the record (a dataclass without slots), by name
    del values["source"]  # the record's own fields: `source` becomes `sources`, `sections` is set below
    del values["references"]  # stored beside the paper (`openxiv.corpus.references`), not in its state
    for name in _SCALARS:
        values[name] = values[name] or None  # "" is unknown
    values["authors"] = tuple(rec.authors)
    values["categories"] = tuple(dict.fromkeys(rec.categories)) or id_categories(rec.arxiv_id)
    values["sources"] = (source_name(rec.source),)
    values["sections_hash"] = sections_hash(sections) if sections else None
    values["sections"] = sections or None
    if values["title"] is None:
        values["title"] = derive_title(rec.arxiv_id, values["abstract"], (s.text for s in sections))
        values["title_source"] = "derived"
    elif values["title_source"] is None:
        values["title_source"] = "metadata"
    return _state(values)


def _state(values: dict[str, Any]) -> PaperState:
    """``PaperState(**values)`` for ``values`` holding every field, made by one dictionary update
    instead of the generated frozen ``__init__``, which sets each of the 16 fields through
    ``object.__setattr__`` (the state of every record of a first ingest is made here: a third of
    `state_from_record`'s CPU). ``tests/corpus/test_records.py`` checks both give equal states."""
    state: PaperState = object.__new__(PaperState)
    state.__dict__.update(values)
    return state


def merge_record(cur: PaperState | None, rec: PaperRecord) -> PaperState:
    """The paper after ``rec`` is applied to ``cur`` (``None``: not stored yet)."""
    new = state_from_record(rec)
    if cur is None:
        return new
    newer = _compare(cur, rec) > 0

    def pick(a: Any, b: Any) -> Any:
        # a: stored value, b: record value
        if newer:
            return b if b else a
        return a if a else b

    values = {name: pick(getattr(cur, name), getattr(new, name)) for name in _SCALARS}
    rank_cur = _TITLE_RANK.get(cur.title_source or "metadata", 0) if cur.title else 0
    rank_new = _TITLE_RANK.get(new.title_source or "metadata", 0)
    if rank_new != rank_cur:
        values["title"] = new.title if rank_new > rank_cur else cur.title
    values["title_source"] = new.title_source if values["title"] is new.title else cur.title_source
    text_hash: str | None
    if new.sections_hash is not None and (cur.sections_hash is None or newer):
        text_hash, sections = new.sections_hash, new.sections
    else:
        text_hash, sections = cur.sections_hash, cur.sections
    if text_hash == cur.sections_hash:
        sections = cur.sections
    return PaperState(
        arxiv_id=cur.arxiv_id,
        version=_max_int(cur.version, new.version),
        authors=pick(cur.authors, new.authors),
        categories=_categories(cur, rec, newer),
        published=_min(cur.published, new.published),
        updated=_max(cur.updated, new.updated),
        first_seen=_min(cur.first_seen, new.first_seen),
        sources=tuple(sorted(set(cur.sources) | set(new.sources))),
        sections_hash=text_hash,
        sections=sections,
        **values,
    )
