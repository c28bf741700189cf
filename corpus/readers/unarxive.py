"""Reader for unarXive JSON lines (one paper per line).

Keys used: ``paper_id``, ``metadata`` (the OAI snapshot schema, read as in `readers.oai`),
``abstract`` (``{"section", "text", ...}`` or a string), ``body_text`` (paragraphs with
``section`` and ``sec_number``), ``bib_entries`` (the bibliography: `references`). Consecutive paragraphs with the same ``(sec_number, section)``
form one section; ``{{formula:…}}``, ``{{cite:…}}``, ``{{figure:…}}`` and ``{{table:…}}`` markers
become ``[formula]``, ``[cite]``, ``[figure]``, ``[table]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.normalize import normalize_whitespace
from openxiv.corpus.readers.fields import FieldError, json_type, opt_str, str_value
from openxiv.corpus.readers.jsonl import parse_id, read_json_records
from openxiv.corpus.readers.oai import parse_oai
from openxiv.corpus.records import REFERENCE_CHARS, PaperRecord, ReadError, Reference, SectionRecord

__all__ = ["FORMAT", "UNTITLED", "clean_markers", "parse_unarxive", "read_unarxive", "references"]

FORMAT = "unarxive"
UNTITLED = "Body"
"""Name given to text that stands under no heading."""

_ARXIV_IN_TEXT = re.compile(
    r"\barxiv\s*(?:preprint\s*)?(?:e-prints?\s*)?[:,]?\s*(?:abs/)?"
    r"(\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z.-]*(?:\.[a-z]{2})?/\d{7}(?:v\d+)?)",
    re.IGNORECASE,
)
"""An arXiv id written after ``arXiv`` in a reference's text (``arXiv:1411.2539``, ``arXiv preprint
hep-th/9901001``)."""
_MARKER = re.compile(r"\{\{(formula|cite|figure|table|ref)(?::[^}]*)?\}\}")


def clean_markers(text: str) -> str:
    """``{{formula:uuid}}`` -> ``[formula]`` (same for cite, figure, table)."""
    return _MARKER.sub(lambda m: f"[{m.group(1)}]", text)


def _abstract(obj: dict[str, Any], meta: PaperRecord) -> str | None:
    raw = obj.get("abstract")
    if isinstance(raw, dict):
        text = str_value(raw.get("text"), "abstract.text")
    else:
        text = str_value(raw, "abstract")
    return normalize_whitespace(clean_markers(text)) if text else meta.abstract


def _sec_number(value: object, label: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return str_value(value, label) or ""


def _sections(body: object) -> list[SectionRecord]:
    if body is None:
        return []
    if not isinstance(body, list):
        raise FieldError(f"body_text: expected an array, got {json_type(body)}")
    sections: list[SectionRecord] = []
    key: tuple[str, str] | None = None
    paragraphs: list[str] = []

    def close() -> None:
        if key is not None and paragraphs:
            number, name = key
            sections.append(
                SectionRecord(name=name or UNTITLED, text="\n\n".join(paragraphs), number=number or None)
            )

    for i, para in enumerate(body):
        if not isinstance(para, dict):
            raise FieldError(f"body_text[{i}]: expected an object, got {json_type(para)}")
        text = str_value(para.get("text"), f"body_text[{i}].text")
        if not text:
            continue
        section = str_value(para.get("section"), f"body_text[{i}].section") or ""
        name = normalize_whitespace(clean_markers(section)) or ""
        number = _sec_number(para.get("sec_number"), f"body_text[{i}].sec_number")
        if (number, name) != key:
            close()
            key, paragraphs = (number, name), []
        paragraphs.append(" ".join(clean_markers(text).split()))
    close()
    return sections


def _cited_id(entry: dict[str, Any]) -> str | None:
    """The arXiv id a bibliography entry resolves to: ``ids.arxiv_id`` (unarXive's match through
    OpenAlex), else the first arXiv id unarXive found in the entry (``contained_arXiv_ids``), else one
    the entry's text names after ``arXiv`` (``arXiv preprint arXiv:1411.2539``, which unarXive leaves
    unmatched); canonical,
    version stripped (``math/0510508v1`` -> ``math/0510508``); ``None`` when neither is an arXiv id."""
    ids = entry.get("ids")
    if isinstance(ids, dict) and (found := try_canonical_id(ids.get("arxiv_id"))):
        return found
    contained = entry.get("contained_arXiv_ids")
    for item in contained if isinstance(contained, list) else ():
        value = item.get("id") if isinstance(item, dict) else item
        if found := try_canonical_id(value):
            return found
    raw = entry.get("bib_entry_raw")
    for match in _ARXIV_IN_TEXT.finditer(raw if isinstance(raw, str) else ""):
        if found := try_canonical_id(match.group(1)):
            return found
    return None


def references(bib: object) -> list[Reference]:
    """``bib_entries`` (an object keyed by entry hash, in the paper's order, or an array) as
    references: each entry's resolved arXiv id (`_cited_id`) and its ``bib_entry_raw`` text, whitespace
    folded and cut to `REFERENCE_CHARS`. An entry with neither is dropped; a paper cited twice is
    kept once (its first entry)."""
    if bib is None:
        return []
    if isinstance(bib, dict):
        entries = list(bib.values())
    elif isinstance(bib, list):
        entries = bib
    else:
        raise FieldError(f"bib_entries: expected an object or an array, got {json_type(bib)}")
    out: list[Reference] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise FieldError(f"bib_entries[{i}]: expected an object, got {json_type(entry)}")
        raw = entry.get("bib_entry_raw")
        text = (normalize_whitespace(raw) or "")[:REFERENCE_CHARS] or None if isinstance(raw, str) else None
        cited = _cited_id(entry)
        if cited is not None:
            if cited in seen:
                continue
            seen.add(cited)
        if cited is not None or text:
            out.append(Reference(cited, text))
    return out


def parse_unarxive(obj: dict[str, Any], source: str) -> PaperRecord:
    meta_obj = obj.get("metadata")
    if meta_obj is None:
        meta_obj = {}
    if not isinstance(meta_obj, dict):
        raise FieldError(f"metadata: expected an object, got {json_type(meta_obj)}")
    meta_obj = dict(meta_obj)
    if not meta_obj.get("id"):
        meta_obj["id"] = obj.get("paper_id")
    parse_id(meta_obj.get("id"))  # a bad id is reported before anything else
    title_missing = not opt_str(meta_obj, "title")
    sections = _sections(obj.get("body_text"))
    if title_missing:
        if not sections:
            raise ValueError("missing title and text")
        meta_obj["title"] = "untitled"
    rec = parse_oai(meta_obj, source)
    title = None if title_missing else rec.title
    refs = references(obj.get("bib_entries"))
    return replace(rec, title=title, abstract=_abstract(obj, rec), sections=sections, references=refs)


def read_unarxive(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    return read_json_records(path, FORMAT, parse_unarxive)
